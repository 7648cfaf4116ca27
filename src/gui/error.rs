//! A request the page's API refused: an HTTP status and a message for
//! people, which the server sends as JSON. The session, the levels, the
//! tree and the server all refuse requests, so the error has a module of
//! its own below them all.

/// A refused request: an HTTP status and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

impl ApiError {
    /// 400: the request itself is wrong (bad value, illegal move).
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 400,
            message: message.into(),
        }
    }

    /// 409: the request is well-formed but not possible now.
    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 409,
            message: message.into(),
        }
    }

    /// 503: the engine is needed and not running.
    pub fn no_engine(message: &str) -> ApiError {
        ApiError {
            status: 503,
            message: format!("the engine is not running ({message}): restart it first"),
        }
    }
}

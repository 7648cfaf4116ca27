//! The HTTP side: routes, request checks and JSON replies.
//!
//! | method and path | body | does |
//! |---|---|---|
//! | `GET /` (and `/app.js`, `/app.css`) | | the page |
//! | `GET /api/state` | | the [`State`](super::session::State) as JSON |
//! | `POST /api/new` | `{"size", "rules", "engine", "movetime"}`, all optional | a new game from the start position |
//! | `POST /api/position` | `{"position", "rules"?}` | a new game from a position string |
//! | `POST /api/move` | `{"move": "a3b3"}` | a person's move |
//! | `POST /api/undo` | empty or `{}` | takes back to the last move of a person |
//! | `POST /api/config` | `{"engine"?, "movetime"?}` | who the engine plays, its time per move |
//! | `POST /api/restart` | empty or `{}` | a fresh engine process |
//!
//! Every `POST` answers with the new state. Errors are JSON too,
//! `{"error": "<message>"}`, with a 4xx status: 400 bad value or illegal
//! move, 403 a foreign `Host`, 404 unknown path, 405 wrong method, 409 not
//! possible now (game over, the engine's turn, nothing to undo), 413 body
//! too large, 415 a `POST` body that is not `application/json`.
//!
//! Requests must name this server in `Host` (`127.0.0.1:<port>` or
//! `localhost:<port>`), which shuts out DNS-rebinding pages, and a `POST`
//! must be `application/json`, which a cross-site form cannot send.

use std::io::{Cursor, Read};
use std::panic::{self, AssertUnwindSafe};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use tiny_http::{Header, Method, Request, Response};

use super::session::{ApiError, Config, NewGame, SharedSession};

/// The largest request body accepted.
const MAX_BODY: usize = 16 * 1024;

const PAGE_HTML: &str = include_str!("page.html");
const PAGE_JS: &str = include_str!("page.js");
const PAGE_CSS: &str = include_str!("page.css");

/// `POST /api/move`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    #[serde(rename = "move")]
    mv: String,
}

/// `POST /api/position`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PositionRequest {
    position: String,
    rules: Option<String>,
}

type Reply = Response<Cursor<Vec<u8>>>;

/// Answers one request. Never panics: a bug in a handler becomes a 500.
pub fn handle(session: &SharedSession, port: u16, mut request: Request) {
    let method = request.method().clone();
    let url = request.url().to_string();
    let reply = panic::catch_unwind(AssertUnwindSafe(|| {
        route(session, port, &mut request).unwrap_or_else(error_reply)
    }))
    .unwrap_or_else(|_| {
        log::error!("handler panicked on {method} {url}");
        error_reply(ApiError {
            status: 500,
            message: "internal error".into(),
        })
    });
    log::debug!("{method} {url} -> {}", reply.status_code().0);
    // Answering drops the request, and tiny_http then skips the unread
    // body with a buffer of the announced length: a huge Content-Length
    // panics there. That must not end this worker.
    match panic::catch_unwind(AssertUnwindSafe(move || request.respond(reply))) {
        Ok(Ok(())) => {}
        Ok(Err(error)) => log::info!("cannot answer {method} {url}: {error}"),
        Err(_) => log::error!("answering {method} {url} panicked (its unread body)"),
    }
}

fn route(session: &SharedSession, port: u16, request: &mut Request) -> Result<Reply, ApiError> {
    check_framing(request)?;
    check_host(request, port)?;
    let path = request
        .url()
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .to_string();
    let method = request.method().clone();
    let get = method == Method::Get || method == Method::Head;
    let post = method == Method::Post;
    match path.as_str() {
        "/" | "/index.html" if get => Ok(asset(PAGE_HTML, "text/html; charset=utf-8")),
        "/app.js" if get => Ok(asset(PAGE_JS, "text/javascript; charset=utf-8")),
        "/app.css" if get => Ok(asset(PAGE_CSS, "text/css; charset=utf-8")),
        "/api/state" if get => Ok(state_reply(session)),
        "/api/new" if post => {
            let body: NewGame = read_json(request)?;
            session.lock().new_game(body)?;
            Ok(state_reply(session))
        }
        "/api/position" if post => {
            let body: PositionRequest = read_json(request)?;
            session
                .lock()
                .set_position(&body.position, body.rules.as_deref())?;
            Ok(state_reply(session))
        }
        "/api/move" if post => {
            let body: MoveRequest = read_json(request)?;
            session.lock().play(&body.mv)?;
            Ok(state_reply(session))
        }
        "/api/undo" if post => {
            read_empty(request)?;
            session.lock().undo()?;
            Ok(state_reply(session))
        }
        "/api/config" if post => {
            let body: Config = read_json(request)?;
            session.lock().configure(body)?;
            Ok(state_reply(session))
        }
        "/api/restart" if post => {
            read_empty(request)?;
            session.lock().restart()?;
            Ok(state_reply(session))
        }
        "/" | "/index.html" | "/app.js" | "/app.css" | "/api/state" => Err(ApiError {
            status: 405,
            message: format!("{method} is not allowed on {path}; use GET"),
        }),
        "/api/new" | "/api/position" | "/api/move" | "/api/undo" | "/api/config"
        | "/api/restart" => Err(ApiError {
            status: 405,
            message: format!("{method} is not allowed on {path}; use POST"),
        }),
        _ => Err(ApiError {
            status: 404,
            message: format!("no such page or endpoint: {path}"),
        }),
    }
}

fn header<'a>(request: &'a Request, name: &'static str) -> Option<&'a str> {
    request
        .headers()
        .iter()
        .find(|h| h.field.equiv(name))
        .map(|h| h.value.as_str())
}

/// Every value of header `name`.
fn headers<'a>(request: &'a Request, name: &'static str) -> Vec<&'a str> {
    request
        .headers()
        .iter()
        .filter(|h| h.field.equiv(name))
        .map(|h| h.value.as_str())
        .collect()
}

/// Refuses a request whose headers can be read two ways: more than one
/// `Host`, a `Content-Length` that is not one plain decimal number (or
/// several that differ), or a `Content-Length` beside a
/// `Transfer-Encoding` (RFC 9112, section 6.3).
fn check_framing(request: &Request) -> Result<(), ApiError> {
    if headers(request, "Host").len() > 1 {
        return Err(ApiError::bad_request("more than one Host header"));
    }
    let lengths = headers(request, "Content-Length");
    let Some(first) = lengths.first() else {
        return Ok(());
    };
    let plain = |value: &str| {
        !value.is_empty()
            && value.bytes().all(|b| b.is_ascii_digit())
            && value.parse::<u64>().is_ok()
    };
    if let Some(bad) = lengths.iter().find(|value| !plain(value)) {
        return Err(ApiError::bad_request(format!(
            "bad Content-Length {}",
            crate::protocol::quote(bad)
        )));
    }
    let value = |text: &str| text.parse::<u64>().ok();
    if lengths.iter().any(|other| value(other) != value(first)) {
        return Err(ApiError::bad_request(
            "Content-Length headers that disagree",
        ));
    }
    if !headers(request, "Transfer-Encoding").is_empty() {
        return Err(ApiError::bad_request(
            "both Content-Length and Transfer-Encoding",
        ));
    }
    Ok(())
}

/// Refuses requests addressed to another host name (DNS rebinding).
fn check_host(request: &Request, port: u16) -> Result<(), ApiError> {
    let host = header(request, "Host").unwrap_or("");
    let allowed = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(host)) {
        Ok(())
    } else {
        Err(ApiError {
            status: 403,
            message: format!("Host '{host}' is not this server (use http://127.0.0.1:{port}/)"),
        })
    }
}

/// Reads a JSON body of type `T` (an empty body reads as `{}`).
fn read_json<T: DeserializeOwned>(request: &mut Request) -> Result<T, ApiError> {
    let content_type = header(request, "Content-Type").unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Err(ApiError {
            status: 415,
            message: format!(
                "a POST body must be application/json (got '{}')",
                content_type.escape_debug()
            ),
        });
    }
    let too_large = || ApiError {
        status: 413,
        message: format!("the request body is over {MAX_BODY} bytes"),
    };
    if request
        .body_length()
        .is_some_and(|length| length > MAX_BODY)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    request
        .as_reader()
        .take(MAX_BODY as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|error| ApiError::bad_request(format!("cannot read the request body: {error}")))?;
    if body.len() > MAX_BODY {
        return Err(too_large());
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        body = b"{}".to_vec();
    }
    serde_json::from_slice(&body)
        .map_err(|error| ApiError::bad_request(format!("bad JSON body: {error}")))
}

/// Reads a body that must be empty or `{}`.
fn read_empty(request: &mut Request) -> Result<(), ApiError> {
    let object: serde_json::Map<String, serde_json::Value> = read_json(request)?;
    match object.keys().next() {
        None => Ok(()),
        Some(key) => Err(ApiError::bad_request(format!(
            "unknown field `{key}`: this request takes no fields"
        ))),
    }
}

fn content_type(value: &str) -> Header {
    Header::from_bytes("Content-Type", value).expect("a valid header")
}

fn with_common_headers(reply: Reply, kind: &str) -> Reply {
    // Every body's length is known: send it with Content-Length, never
    // chunked, which keeps simple clients simple.
    reply
        .with_chunked_threshold(usize::MAX)
        .with_header(content_type(kind))
        .with_header(Header::from_bytes("Cache-Control", "no-store").expect("a valid header"))
        .with_header(
            Header::from_bytes("X-Content-Type-Options", "nosniff").expect("a valid header"),
        )
}

fn asset(text: &str, kind: &str) -> Reply {
    let csp = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
               frame-ancestors 'none'";
    with_common_headers(Response::from_string(text), kind)
        .with_header(Header::from_bytes("Content-Security-Policy", csp).expect("a valid header"))
}

fn state_reply(session: &SharedSession) -> Reply {
    let state = session.lock().state();
    json_reply(200, &state)
}

fn json_reply(status: u16, value: &impl serde::Serialize) -> Reply {
    let body = serde_json::to_vec(value).unwrap_or_else(|error| {
        log::error!("cannot serialise a reply: {error}");
        b"{\"error\":\"internal error\"}".to_vec()
    });
    with_common_headers(Response::from_data(body), "application/json").with_status_code(status)
}

fn error_reply(error: ApiError) -> Reply {
    log::info!("refused ({}): {}", error.status, error.message);
    json_reply(error.status, &serde_json::json!({ "error": error.message }))
}

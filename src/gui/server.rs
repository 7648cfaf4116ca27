//! The HTTP side: routes, request checks and JSON replies.
//!
//! | method and path | body | does |
//! |---|---|---|
//! | `GET /` (and `/app.js`, `/app.css`) | | the page |
//! | `GET /api/state` | | the [`State`](super::view::State) as JSON |
//! | `GET /api/export` | | the game as a record (text, the format of `dodgem match --pgn`) |
//! | `GET /api/tree?depth=D&ply=P` | | the game tree after `P` moves (default: the position on show) to depth `D` (1 to 3, 4 where it fits; default 2), minimax and alpha-beta |
//! | `POST /api/new` | `{"size", "rules", "engine", "movetime", "level"}`, all optional | a new game from the start position |
//! | `POST /api/position` | `{"position", "rules"?}` | a new game from a position string |
//! | `POST /api/import` | `{"record"}` | a new game from a game record |
//! | `POST /api/move` | `{"move": "a3b3"}` | a person's move |
//! | `POST /api/undo` | empty or `{}` | takes back to the last move of a person |
//! | `POST /api/review` | `{"ply": n}`, or `{"ply": null}` or `{}` | shows the position after `n` moves (`null`: the live game) |
//! | `POST /api/playon` | empty or `{}` | the game goes on from the position under review |
//! | `POST /api/best` | empty or `{}` | asks the engine for its best move in the position on show |
//! | `POST /api/config` | `{"engine"?, "movetime"?, "level"?, "hints"?}` | who the engine plays, its time per move and level, whether move values are shown |
//! | `POST /api/restart` | empty or `{}` | a fresh engine process |
//!
//! Every `POST` answers with the new state. Errors are JSON too,
//! `{"error": "<message>"}`, with a 4xx status: 400 bad value, illegal
//! move, unreadable record or ambiguous framing (see [`super::http`]), 403
//! a foreign `Host`, 404 unknown path, 405 wrong method, 409 not possible
//! now (game over, the engine's turn, nothing to undo, nothing under
//! review, a level the engine lacks), 411 a chunked body, 413 body too
//! large, 415 a `POST` body that is not `application/json`, 431 headers
//! too large; 503 when the engine is needed and not running.
//!
//! Requests must name this server in `Host` (`127.0.0.1:<port>` or
//! `localhost:<port>`), which shuts out DNS-rebinding pages, and a `POST`
//! must be `application/json`, which a cross-site form cannot send.

use std::net::TcpStream;
use std::panic::{self, AssertUnwindSafe};

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::http::{self, ReadError, Request, Response};
use super::session::{Config, NewGame, SharedSession};
use super::{tree, view};

/// The largest request body accepted (a game record fits many times).
const MAX_BODY: usize = 64 * 1024;

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

/// `POST /api/import`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportRequest {
    record: String,
}

/// `POST /api/review`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewRequest {
    ply: Option<usize>,
}

type Reply = Response;

/// Reads one request from `stream`, answers it, and closes the connection.
pub fn serve(session: &SharedSession, port: u16, mut stream: TcpStream) {
    let (reply, head) = match http::read_request(&mut stream, MAX_BODY) {
        Ok(request) => (handle(session, port, &request), request.method == "HEAD"),
        Err(ReadError::Refuse(status, message)) => {
            (error_reply(ApiError { status, message }), false)
        }
        Err(ReadError::Gone) => return,
    };
    if let Err(error) = http::write_response(&mut stream, &reply, head) {
        log::info!("cannot answer a request: {error}");
    }
}

/// Answers one request. Never panics: a bug in a handler becomes a 500.
pub fn handle(session: &SharedSession, port: u16, request: &Request) -> Reply {
    let reply = panic::catch_unwind(AssertUnwindSafe(|| {
        route(session, port, request).unwrap_or_else(error_reply)
    }))
    .unwrap_or_else(|_| {
        log::error!("handler panicked on {} {}", request.method, request.target);
        error_reply(ApiError {
            status: 500,
            message: "internal error".into(),
        })
    });
    log::debug!("{} {} -> {}", request.method, request.target, reply.status);
    reply
}

fn route(session: &SharedSession, port: u16, request: &Request) -> Result<Reply, ApiError> {
    check_host(request, port)?;
    let target = request.target.split('#').next().unwrap_or("");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let path = path.to_string();
    let method = request.method.as_str();
    let get = method == "GET" || method == "HEAD";
    let post = method == "POST";
    match path.as_str() {
        "/" | "/index.html" if get => Ok(asset(PAGE_HTML, "text/html; charset=utf-8")),
        "/app.js" if get => Ok(asset(PAGE_JS, "text/javascript; charset=utf-8")),
        "/app.css" if get => Ok(asset(PAGE_CSS, "text/css; charset=utf-8")),
        "/api/state" if get => Ok(state_reply(session)),
        "/api/export" if get => {
            let text = view::record(&session.lock());
            Ok(Response {
                status: 200,
                headers: common_headers("text/plain; charset=utf-8"),
                body: text.into_bytes(),
            })
        }
        "/api/tree" if get => {
            let (depth, ply) = tree::parse_query(query)?;
            let (position, rules, ply) = session.lock().position_at(ply)?;
            // Computed outside the lock: the engine's replies never wait.
            let reply = tree::tree(&position, rules, ply, depth)?;
            Ok(json_reply(200, &reply))
        }
        "/api/import" if post => {
            let body: ImportRequest = read_json(request)?;
            session.lock().import(&body.record)?;
            Ok(state_reply(session))
        }
        "/api/review" if post => {
            let body: ReviewRequest = read_json(request)?;
            session.lock().set_review(body.ply)?;
            Ok(state_reply(session))
        }
        "/api/playon" if post => {
            read_empty(request)?;
            session.lock().play_on()?;
            Ok(state_reply(session))
        }
        "/api/best" if post => {
            read_empty(request)?;
            session.lock().ask_best()?;
            Ok(state_reply(session))
        }
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
        "/" | "/index.html" | "/app.js" | "/app.css" | "/api/state" | "/api/export"
        | "/api/tree" => Err(ApiError {
            status: 405,
            message: format!("{method} is not allowed on {path}; use GET"),
        }),
        "/api/new" | "/api/position" | "/api/import" | "/api/move" | "/api/undo"
        | "/api/review" | "/api/playon" | "/api/best" | "/api/config" | "/api/restart" => {
            Err(ApiError {
                status: 405,
                message: format!("{method} is not allowed on {path}; use POST"),
            })
        }
        _ => Err(ApiError {
            status: 404,
            message: format!("no such page or endpoint: {path}"),
        }),
    }
}

/// Refuses requests addressed to another host name (DNS rebinding).
fn check_host(request: &Request, port: u16) -> Result<(), ApiError> {
    let host = request.header("Host").unwrap_or("");
    let allowed = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(host)) {
        Ok(())
    } else {
        Err(ApiError {
            status: 403,
            message: format!(
                "Host {} is not this server (use http://127.0.0.1:{port}/)",
                crate::protocol::quote(host)
            ),
        })
    }
}

/// Reads a JSON body of type `T` (an empty body reads as `{}`).
fn read_json<T: DeserializeOwned>(request: &Request) -> Result<T, ApiError> {
    let content_type = request.header("Content-Type").unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Err(ApiError {
            status: 415,
            message: format!(
                "a POST body must be application/json (got {})",
                crate::protocol::quote(content_type)
            ),
        });
    }
    let body: &[u8] = if request.body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &request.body
    };
    serde_json::from_slice(body)
        .map_err(|error| ApiError::bad_request(format!("bad JSON body: {error}")))
}

/// Reads a body that must be empty or `{}`.
fn read_empty(request: &Request) -> Result<(), ApiError> {
    let object: serde_json::Map<String, serde_json::Value> = read_json(request)?;
    match object.keys().next() {
        None => Ok(()),
        Some(key) => Err(ApiError::bad_request(format!(
            "unknown field `{key}`: this request takes no fields"
        ))),
    }
}

/// The headers every reply carries, with its body's type.
fn common_headers(kind: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", kind.to_string()),
        ("Cache-Control", "no-store".into()),
        ("X-Content-Type-Options", "nosniff".into()),
    ]
}

fn asset(text: &str, kind: &str) -> Reply {
    let csp = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
               frame-ancestors 'none'";
    let mut headers = common_headers(kind);
    headers.push(("Content-Security-Policy", csp.into()));
    Response {
        status: 200,
        headers,
        body: text.as_bytes().to_vec(),
    }
}

fn state_reply(session: &SharedSession) -> Reply {
    let state = view::state(&session.lock());
    json_reply(200, &state)
}

fn json_reply(status: u16, value: &impl serde::Serialize) -> Reply {
    let body = serde_json::to_vec(value).unwrap_or_else(|error| {
        log::error!("cannot serialise a reply: {error}");
        b"{\"error\":\"internal error\"}".to_vec()
    });
    Response {
        status,
        headers: common_headers("application/json"),
        body,
    }
}

fn error_reply(error: ApiError) -> Reply {
    log::info!("refused ({}): {}", error.status, error.message);
    json_reply(error.status, &serde_json::json!({ "error": error.message }))
}

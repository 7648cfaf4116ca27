//! `dodgem gui`: a local web page to play against any protocol.md engine.
//!
//! The server listens on `127.0.0.1` only and serves one page embedded in
//! the binary (`page.html`, `page.js`, `page.css`: plain HTML, CSS and
//! JavaScript). It runs the engine as a child process and talks to it only
//! through protocol.md over pipes, so it is also a reference client of the
//! protocol. The engine command is fixed when the server starts: nothing
//! the page sends can run another program.
//!
//! - [`session`]: the controller tying the game ([`crate::game::Game`])
//!   to the engine, which runs as a [`crate::client::EngineProcess`], and
//!   asking it the page's questions.
//! - [`knowledge`]: what the engine said about the game's positions.
//! - [`strength`]: the engine's weaker levels.
//! - [`view`]: the state the page shows (hints, graph) and the game
//!   record for export.
//! - [`tree`]: the textbook algorithms' game tree for the page.
//! - [`server`]: the HTTP routes.
//! - [`http`]: reading requests and writing responses, every resource
//!   bounded.
//! - [`error`]: a refused request's status and message.

pub(crate) mod error;
pub(crate) mod http;
pub(crate) mod knowledge;
pub(crate) mod server;
pub(crate) mod session;
pub(crate) mod strength;
pub(crate) mod tree;
pub(crate) mod view;

use std::io::{self, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::client::{self, EngineCommand, EngineProcess, Stderr, setoption_line};
use crate::referee::handshake;
use session::Session;

/// HTTP worker threads, each serving one connection at a time: the page
/// polls while someone else may post, and a slow client holds one for at
/// most [`http::READ_DEADLINE`]. Further connections wait to be accepted;
/// no thread is started per connection.
const WORKERS: usize = 8;
/// How often engine timeouts are checked.
const TICK: Duration = Duration::from_millis(100);
/// The pause after a failed accept before the next.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// What `dodgem gui` was asked for (its command line).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct GuiOptions {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// The engine's command line (split like a shell's, run without one);
    /// the default is this program's own engine.
    #[arg(long)]
    pub engine: Option<String>,
    /// An engine option, `Name=Value` (`Name` for a button), e.g.
    /// `TablebasePath=5x5-textbook` (a directory `dodgem solve --out`
    /// wrote); repeatable.
    #[arg(long = "option", value_name = "NAME=VALUE")]
    // Sent after each `uciok` once checked against the engine's options.
    pub options: Vec<String>,
}

impl GuiOptions {
    /// Runs the server (see [`run`]).
    ///
    /// # Errors
    /// As [`run`].
    pub fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        run(self)
    }
}

/// Runs the server until the process is stopped. Prints the page's address
/// (one line, `http://127.0.0.1:<port>/`) to stdout once it is listening.
///
/// # Errors
/// When the engine command is unusable or cannot be started, an `--option`
/// does not fit the engine, or the port cannot be bound.
pub fn run(options: GuiOptions) -> Result<(), Box<dyn std::error::Error>> {
    let command = match &options.engine {
        Some(line) => EngineCommand::parse(line).map_err(|error| format!("--engine: {error}"))?,
        None => EngineCommand::builtin()?,
    };
    let settings: Vec<(String, Option<String>)> = options
        .options
        .iter()
        .map(|setting| {
            let (name, value) = client::split_setting(setting);
            (name.trim().to_string(), value.map(str::to_string))
        })
        .collect();
    if !settings.is_empty() {
        check_settings(&command, &options.options)?;
    }
    let session = Session::start(command.clone(), settings)
        .map_err(|error| format!("cannot start the engine `{command}`: {error}"))?;
    let listener = TcpListener::bind(("127.0.0.1", options.port)).map_err(|error| {
        let hint = if error.kind() == io::ErrorKind::AddrInUse {
            " (another program, perhaps another `dodgem gui`, has it): use --port 0 for any free port, or choose another with --port"
        } else {
            ""
        };
        format!("cannot listen on 127.0.0.1:{}: {error}{hint}", options.port)
    })?;
    let port = listener.local_addr()?.port();

    let ticker = Arc::downgrade(&session);
    thread::Builder::new()
        .name("gui ticker".into())
        .spawn(move || {
            while let Some(session) = ticker.upgrade() {
                session.lock().tick(Instant::now());
                drop(session);
                thread::sleep(TICK);
            }
        })?;

    let mut out = io::stdout().lock();
    writeln!(out, "http://127.0.0.1:{port}/")?;
    out.flush()?;
    drop(out);
    log::info!("engine: {command}");

    let mut workers = Vec::new();
    for i in 0..WORKERS {
        let listener = listener.try_clone()?;
        let session = Arc::clone(&session);
        workers.push(
            thread::Builder::new()
                .name(format!("http {i}"))
                .spawn(move || {
                    loop {
                        match listener.accept() {
                            Ok((stream, _)) => server::serve(&session, port, stream),
                            // An accept error (out of file descriptors,
                            // say) concerns one connection, not the server.
                            Err(error) => {
                                log::warn!("cannot accept a connection: {error}");
                                thread::sleep(ACCEPT_RETRY);
                            }
                        }
                    }
                })?,
        );
    }
    for worker in workers {
        if worker.join().is_err() {
            log::error!("an HTTP worker panicked");
        }
    }
    Ok(())
}

/// Starts the engine once and checks the `--option` settings against the
/// options it advertises, as `dodgem match` does: a setting the engine
/// cannot take stops the server before it serves, rather than failing
/// every start of the engine.
fn check_settings(command: &EngineCommand, settings: &[String]) -> Result<(), String> {
    let mut process = EngineProcess::spawn(command, Stderr::Discard)
        .map_err(|error| format!("cannot start the engine `{command}`: {error}"))?;
    let handshake = handshake::handshake(&mut process, session::HANDSHAKE_TIMEOUT);
    process.shutdown(handshake::QUIT_GRACE);
    let info = handshake.map_err(|fault| format!("--option: the engine `{command}` {fault}"))?;
    for setting in settings {
        let (name, value) = client::split_setting(setting);
        setoption_line(&info.options, name, value)
            .map_err(|error| format!("--option {setting}: {error}"))?;
    }
    Ok(())
}

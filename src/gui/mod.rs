//! `dodgem gui`: a local web page to play against any protocol.md engine.
//!
//! The server listens on `127.0.0.1` only and serves one page embedded in
//! the binary (`page.html`, `page.js`, `page.css`: plain HTML, CSS and
//! JavaScript). It runs the engine as a child process and talks to it only
//! through protocol.md over pipes, so it is also a reference client of the
//! protocol. The engine command is fixed when the server starts: nothing
//! the page sends can run another program.
//!
//! - [`game`]: the game, judged by the library's rules.
//! - [`session`]: the controller tying the game to the engine, which runs
//!   as a [`crate::client::EngineProcess`].
//! - [`server`]: the HTTP routes.

pub mod game;
pub mod server;
pub mod session;

use std::io::{self, Write};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::client::{self, EngineCommand};
use session::Session;

/// HTTP worker threads: the page polls while someone else may post.
const WORKERS: usize = 4;
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
    /// `TablebasePath=5x5-textbook.dtb`; repeatable.
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
/// When the engine command is unusable or cannot be started, or the port
/// cannot be bound.
pub fn run(options: GuiOptions) -> Result<(), Box<dyn std::error::Error>> {
    let command = match &options.engine {
        Some(line) => EngineCommand::parse(line).map_err(|error| format!("--engine: {error}"))?,
        None => EngineCommand::builtin()?,
    };
    let settings = options
        .options
        .iter()
        .map(|setting| {
            let (name, value) = client::split_setting(setting);
            (name.trim().to_string(), value.map(str::to_string))
        })
        .collect();
    let session = Session::start(command.clone(), settings)
        .map_err(|error| format!("cannot start the engine `{command}`: {error}"))?;
    let http = tiny_http::Server::http(("127.0.0.1", options.port))
        .map_err(|error| format!("cannot listen on 127.0.0.1:{}: {error}", options.port))?;
    let port = http
        .server_addr()
        .to_ip()
        .map(|addr| addr.port())
        .ok_or("the server is not listening on an IP address")?;
    let http = Arc::new(http);

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

    let workers: Vec<_> = (0..WORKERS)
        .map(|i| {
            let http = Arc::clone(&http);
            let session = Arc::clone(&session);
            thread::Builder::new()
                .name(format!("http {i}"))
                .spawn(move || {
                    loop {
                        match http.recv() {
                            Ok(request) => server::handle(&session, port, request),
                            // An accept error (out of file descriptors,
                            // say) concerns one connection, not the server.
                            Err(error) => {
                                log::warn!("cannot accept a connection: {error}");
                                thread::sleep(ACCEPT_RETRY);
                            }
                        }
                    }
                })
        })
        .collect::<Result<_, _>>()?;
    for worker in workers {
        if worker.join().is_err() {
            log::error!("an HTTP worker panicked");
        }
    }
    Ok(())
}

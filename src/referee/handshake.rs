//! Bringing an engine up the referee's way (`uci` / `uciok`, `isready` /
//! `readyok`, each under a deadline) and ending it, and the faults that
//! cost an engine the game.

use std::fmt;
use std::time::{Duration, Instant};

use crate::client::{EngineProcess, OptionSpec, Recv, Reply, parse_reply};

/// How long an engine gets to exit after `quit` before it is killed. The
/// referee waits for that before the next game, so that engines left over
/// from one game do not take CPU time from the next.
pub const QUIT_GRACE: Duration = Duration::from_millis(300);

/// What an engine said in its handshake.
#[derive(Clone, Debug, Default)]
pub struct EngineInfo {
    /// From `id name`.
    pub name: Option<String>,
    pub options: Vec<OptionSpec>,
}

/// A fault of an engine: the game (or, in the probe before the match, the
/// match) cannot go on with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Did not answer in time (and not because of its clock).
    Stalled(String),
    /// Closed its output or could not be started.
    Exited(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Stalled(what) | Fault::Exited(what) => f.write_str(what),
        }
    }
}

/// Sends `uci` and reads `id name` and `option` lines up to `uciok`.
///
/// # Errors
/// A [`Fault`] if `uciok` does not come within `timeout` or the engine
/// exits.
pub fn handshake(engine: &mut EngineProcess, timeout: Duration) -> Result<EngineInfo, Fault> {
    engine.send("uci");
    let deadline = super::deadline::later(Instant::now(), timeout);
    let mut info = EngineInfo::default();
    loop {
        match engine.recv_until(deadline) {
            Recv::Line(line, _) => match parse_reply(&line) {
                Some(Reply::UciOk) => return Ok(info),
                Some(Reply::IdName(name)) => info.name = Some(name),
                Some(Reply::Option(option)) => info.options.push(option),
                _ => {}
            },
            Recv::Timeout => {
                return Err(Fault::Stalled(format!(
                    "sent no uciok within {} s of uci",
                    timeout.as_secs_f64()
                )));
            }
            Recv::Eof => {
                let how = engine.exit_description();
                return Err(Fault::Exited(format!("exited before uciok ({how})")));
            }
        }
    }
}

/// Sends `isready` and waits for `readyok`.
///
/// # Errors
/// A [`Fault`] if `readyok` does not come within `timeout` or the engine
/// exits.
pub fn ready(engine: &mut EngineProcess, timeout: Duration) -> Result<(), Fault> {
    engine.send("isready");
    let deadline = super::deadline::later(Instant::now(), timeout);
    loop {
        match engine.recv_until(deadline) {
            Recv::Line(line, _) if parse_reply(&line) == Some(Reply::ReadyOk) => return Ok(()),
            Recv::Line(..) => {}
            Recv::Timeout => {
                return Err(Fault::Stalled(format!(
                    "sent no readyok within {} s of isready",
                    timeout.as_secs_f64()
                )));
            }
            Recv::Eof => {
                let how = engine.exit_description();
                return Err(Fault::Exited(format!("exited before readyok ({how})")));
            }
        }
    }
}

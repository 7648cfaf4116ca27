//! Putting the positions to the engine under test over protocol.md, with
//! the referee's own way of starting engines and waiting for moves: one
//! process per worker, a fresh game (`ucinewgame`) for every position.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::board::Position;
use crate::client::{EngineProcess, Score};
use crate::notation::format_position;
use crate::referee::game::{self, Player, Settings};
use crate::referee::handshake::{self, Fault, QUIT_GRACE};

/// What the engine answered in one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The `bestmove`, as sent; `None` after a fault.
    pub bestmove: Option<String>,
    /// The last score and depth of the principal line before it.
    pub score: Option<Score>,
    pub depth: Option<u32>,
    /// What went wrong, if the engine faulted.
    pub fault: Option<String>,
}

/// Asks the engine of `player` for a move in each of `positions`, on
/// `workers` processes at once; answers in the order of `positions`.
/// `done` is called after each answer.
pub fn run(
    player: &Player,
    settings: &Settings,
    positions: &[Position],
    workers: usize,
    done: &(dyn Fn(usize, &Answer) + Sync),
) -> Vec<Answer> {
    let next = AtomicUsize::new(0);
    let answers = Mutex::new(vec![None; positions.len()]);
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, positions.len().max(1)) {
            scope.spawn(|| {
                let mut engine: Option<EngineProcess> = None;
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(position) = positions.get(index) else {
                        break;
                    };
                    let answer = ask(player, settings, &mut engine, position);
                    if answer.fault.is_some()
                        && let Some(broken) = engine.take()
                    {
                        broken.shutdown(QUIT_GRACE);
                    }
                    done(index, &answer);
                    answers.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(answer);
                }
                if let Some(engine) = engine {
                    engine.shutdown(QUIT_GRACE);
                }
            });
        }
    });
    answers
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|answer| answer.expect("every position was asked"))
        .collect()
}

/// One position: (re)starts the engine if needed, then `ucinewgame`,
/// `isready`, `position fen`, `go`, and waits for `bestmove`.
fn ask(
    player: &Player,
    settings: &Settings,
    engine: &mut Option<EngineProcess>,
    position: &Position,
) -> Answer {
    let faulted = |fault: Fault| Answer {
        bestmove: None,
        score: None,
        depth: None,
        fault: Some(fault.to_string()),
    };
    let process = match engine {
        Some(process) => {
            process.send("ucinewgame");
            if let Err(fault) = handshake::ready(process, settings.stall_timeout) {
                return faulted(fault);
            }
            process
        }
        None => match game::start_engine(player, settings) {
            Ok(process) => engine.insert(process),
            Err(fault) => return faulted(fault),
        },
    };
    process.send(&format!("position fen {}", format_position(position)));
    let go = process.send_timed(&settings.limits.go_command(None));
    let deadline = settings.limits.move_deadline(None, settings.time_margin);
    match game::wait_for_bestmove(process, &go, deadline, settings.stall_timeout) {
        Ok(reply) => Answer {
            bestmove: Some(reply.bestmove),
            score: reply.score,
            depth: reply.depth,
            fault: None,
        },
        Err(fault) => faulted(fault),
    }
}

/// How long the engine may be late with a move under `--movetime`
/// before it is told to stop (it is not lost on time here).
pub const MOVETIME_MARGIN: Duration = Duration::from_millis(200);

//! Putting the positions to the engine under test over protocol.md, with
//! the referee's own way of starting engines and waiting for moves: one
//! process per worker, a fresh game (`ucinewgame`) for every position
//! (one move, or a lost position played out against the tables).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::board::{Move, Position};
use crate::client::{EngineProcess, Score};
use crate::game::Game;
use crate::notation::{format_move, format_position, parse_move};
use crate::referee::game::{self, Player, Settings};
use crate::referee::handshake::{self, Fault, QUIT_GRACE};

/// What the engine is asked in one sample.
pub enum Task<'a> {
    /// One move in this position.
    Move(Position),
    /// Every move of the side to move of a lost position until the game
    /// ends, `winner` answering each (the tables' quickest win); at most
    /// `longest` plies, the most the tables allow.
    PlayOut {
        start: Position,
        winner: &'a (dyn Fn(&Position) -> Option<Move> + Sync),
        longest: u32,
    },
}

/// What the engine answered in one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The `bestmove`, as sent (a play-out's first); `None` after a fault.
    pub bestmove: Option<String>,
    /// The last score and depth of the principal line before it.
    pub score: Option<Score>,
    pub depth: Option<u32>,
    /// What went wrong, if the engine faulted.
    pub fault: Option<String>,
    /// A play-out's plies to the end of the game, and its moves.
    pub survived: Option<u32>,
    pub line: Vec<String>,
}

impl Answer {
    fn empty() -> Answer {
        Answer {
            bestmove: None,
            score: None,
            depth: None,
            fault: None,
            survived: None,
            line: Vec::new(),
        }
    }

    fn faulted(fault: impl ToString) -> Answer {
        Answer {
            fault: Some(fault.to_string()),
            ..Answer::empty()
        }
    }
}

/// Puts each of `tasks` to the engine of `player`, on `workers` processes
/// at once; answers in the order of `tasks`. `done` is called after each
/// answer.
pub fn run(
    player: &Player,
    settings: &Settings,
    tasks: &[Task],
    workers: usize,
    done: &(dyn Fn(usize, &Answer) + Sync),
) -> Vec<Answer> {
    let next = AtomicUsize::new(0);
    let answers = Mutex::new(vec![None; tasks.len()]);
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, tasks.len().max(1)) {
            scope.spawn(|| {
                let mut engine: Option<EngineProcess> = None;
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(task) = tasks.get(index) else {
                        break;
                    };
                    let answer = match *task {
                        Task::Move(position) => ask(player, settings, &mut engine, &position),
                        Task::PlayOut {
                            start,
                            winner,
                            longest,
                        } => play_out(player, settings, &mut engine, &start, winner, longest),
                    };
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

/// A fresh game in the worker's engine: (re)started if needed, then
/// `ucinewgame` and `isready`.
fn fresh<'e>(
    player: &Player,
    settings: &Settings,
    engine: &'e mut Option<EngineProcess>,
) -> Result<&'e mut EngineProcess, Fault> {
    match engine {
        Some(process) => {
            process.send("ucinewgame");
            handshake::ready(process, settings.stall_timeout)?;
            Ok(process)
        }
        None => Ok(engine.insert(game::start_engine(player, settings)?)),
    }
}

/// Sends `position` (a `position ...` command) and `go`, and waits for
/// `bestmove`.
fn best_move(
    process: &mut EngineProcess,
    settings: &Settings,
    position: &str,
) -> Result<game::Reply, Fault> {
    process.send(position);
    let go = process.send_timed(&settings.limits.go_command(None));
    let deadline = settings.limits.move_deadline(None, settings.time_margin);
    game::wait_for_bestmove(process, &go, deadline, settings.stall_timeout)
}

/// One position: a fresh game, `position fen`, `go`, and its `bestmove`.
fn ask(
    player: &Player,
    settings: &Settings,
    engine: &mut Option<EngineProcess>,
    position: &Position,
) -> Answer {
    let reply = fresh(player, settings, engine).and_then(|process| {
        best_move(
            process,
            settings,
            &format!("position fen {}", format_position(position)),
        )
    });
    match reply {
        Ok(reply) => Answer {
            bestmove: Some(reply.bestmove),
            score: reply.score,
            depth: reply.depth,
            ..Answer::empty()
        },
        Err(fault) => Answer::faulted(fault),
    }
}

/// A lost position played to the end: the engine moves for the side to
/// move (told the whole game each time, `position fen START moves ...`),
/// `winner` for the other side. The answer holds the engine's first move
/// and score, and the plies the game lasted.
fn play_out(
    player: &Player,
    settings: &Settings,
    engine: &mut Option<EngineProcess>,
    start: &Position,
    winner: &(dyn Fn(&Position) -> Option<Move> + Sync),
    longest: u32,
) -> Answer {
    let process = match fresh(player, settings, engine) {
        Ok(process) => process,
        Err(fault) => return Answer::faulted(fault),
    };
    let mut answer = Answer::empty();
    let loser = start.side_to_move();
    let mut game = Game::new(*start);
    while game.outcome(settings.rules).is_none() {
        if game.moves().len() >= longest as usize {
            answer.fault = Some(format!(
                "the game outlasted the tables' distance to the end ({longest} plies): are they damaged?"
            ));
            break;
        }
        let position = *game.position();
        let mv = if position.side_to_move() == loser {
            let reply = match best_move(process, settings, &game.position_command()) {
                Ok(reply) => reply,
                Err(fault) => return Answer::faulted(fault),
            };
            if answer.bestmove.is_none() {
                answer.bestmove = Some(reply.bestmove.clone());
                answer.score = reply.score;
                answer.depth = reply.depth;
            }
            match parse_move(&reply.bestmove, &position) {
                Ok(mv) => mv,
                Err(error) => {
                    answer.fault = Some(format!("bestmove {}: {error}", reply.bestmove));
                    break;
                }
            }
        } else {
            let Some(mv) = winner(&position) else {
                answer.fault = Some(format!(
                    "the tables have no winning move in {}",
                    format_position(&position)
                ));
                break;
            };
            mv
        };
        game.play(mv);
    }
    answer.line = game
        .moves()
        .iter()
        .map(|&mv| format_move(Some(mv)))
        .collect();
    if answer.fault.is_none() {
        answer.survived = Some(game.moves().len() as u32);
    }
    answer
}

/// How long the engine may be late with a move under `--movetime`
/// before it is told to stop (it is not lost on time here).
pub const MOVETIME_MARGIN: Duration = Duration::from_millis(200);

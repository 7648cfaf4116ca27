//! One game between two engine processes, refereed move by move.
//!
//! The referee owns the rules: it detects the end of the game itself
//! (with the library's [`Game`]), checks every
//! move, runs the clocks, and turns every fault of an engine (a stall, an
//! exit, an illegal or unreadable move, a fallen flag) into a loss for it.

use std::time::{Duration, Instant};

use crate::board::{Color, Position, Rules};
use crate::client::{
    self, EngineCommand, EngineProcess, Recv, Score, Stderr, Written, parse_reply,
};
use crate::game::Game;
use crate::notation::parse_move;

use super::adjudication::Adjudicator;
use super::clock::{Flag, Limits};
use super::deadline::later;
use super::handshake::{self, Fault, QUIT_GRACE};
use super::record::{GameRecord, GameResult, MoveRecord, Termination};

/// An engine of the match: what to run and how to set it up.
#[derive(Clone, Debug)]
pub struct Player {
    pub name: String,
    pub command: EngineCommand,
    /// `setoption` lines, checked against the engine's options.
    pub setup: Vec<String>,
}

/// The rules of play shared by every game of a match.
#[derive(Clone, Debug)]
pub struct Settings {
    pub rules: Rules,
    pub limits: Limits,
    /// How far below zero a clock may go before the flag falls.
    pub time_margin: Duration,
    /// The longest wait for `uciok`, `readyok`, a `bestmove` after `stop`,
    /// and for the `bestmove` of a search that time does not limit.
    pub stall_timeout: Duration,
    /// Draw after this many plies.
    pub max_plies: Option<u32>,
    /// Ends games at forced wins (`--adjudicate`).
    pub adjudicator: Option<Adjudicator>,
}

/// What the engine to move answered to `go`.
pub(crate) struct Reply {
    pub bestmove: String,
    pub at: Instant,
    pub score: Option<Score>,
    pub depth: Option<u32>,
}

/// An ending: the result, why, and a sentence.
type Ending = (GameResult, Termination, String);

/// Plays one game from `start`; `players` are indexed by colour
/// ([`Color::index`]), and `engine1` is the first engine's colour.
pub fn play(
    settings: &Settings,
    players: [&Player; 2],
    round: u32,
    start: Position,
    engine1: Color,
) -> GameRecord {
    let mut moves = Vec::new();
    let mut engines = Vec::with_capacity(2);
    let (result, termination, detail) = run(settings, players, start, &mut engines, &mut moves);
    // Before the next game starts, so that it gets the CPU to itself.
    for engine in engines {
        engine.shutdown(QUIT_GRACE);
    }
    GameRecord {
        round,
        black: players[Color::Black.index()].name.clone(),
        white: players[Color::White.index()].name.clone(),
        engine1,
        start,
        rules: settings.rules,
        moves,
        result,
        termination,
        detail,
    }
}

/// Starts an engine and brings it to a new game: `uci`, its options,
/// `ucinewgame`, `isready`. An engine at fault is ended before returning.
pub(crate) fn start_engine(player: &Player, settings: &Settings) -> Result<EngineProcess, Fault> {
    let mut engine = EngineProcess::spawn(&player.command, Stderr::Discard)
        .map_err(|error| Fault::Exited(format!("could not be started: {error}")))?;
    let started = handshake::handshake(&mut engine, settings.stall_timeout).and_then(|_| {
        for line in &player.setup {
            engine.send(line);
        }
        engine.send("ucinewgame");
        handshake::ready(&mut engine, settings.stall_timeout)
    });
    match started {
        Ok(()) => Ok(engine),
        Err(fault) => {
            engine.shutdown(QUIT_GRACE);
            Err(fault)
        }
    }
}

/// A loss for `color` because of `fault`.
fn forfeit(players: [&Player; 2], color: Color, termination: Termination, what: &str) -> Ending {
    let name = &players[color.index()].name;
    (
        GameResult::Win(color.other()),
        termination,
        format!("{} ({name}) {what}", color.name()),
    )
}

fn fault_ending(players: [&Player; 2], color: Color, fault: Fault) -> Ending {
    let termination = match fault {
        Fault::Stalled(_) => Termination::Stalled,
        Fault::Exited(_) => Termination::EngineExited,
    };
    forfeit(players, color, termination, &fault.to_string())
}

/// Plays the game; the engines it starts are left in `engines` (indexed
/// by colour) for the caller to end.
fn run(
    settings: &Settings,
    players: [&Player; 2],
    start: Position,
    engines: &mut Vec<EngineProcess>,
    moves: &mut Vec<MoveRecord>,
) -> Ending {
    for color in [Color::Black, Color::White] {
        match start_engine(players[color.index()], settings) {
            Ok(engine) => engines.push(engine),
            Err(fault) => return fault_ending(players, color, fault),
        }
    }
    let mut game = Game::new(start);
    let mut clock = settings.limits.clock();
    if let Some(clock) = &mut clock {
        clock.set_side(start.side_to_move());
    }
    loop {
        if let Some(ending) = game_over(settings, &game) {
            return ending;
        }
        let side = game.position().side_to_move();
        let engine = &mut engines[side.index()];
        if !engine.drain() {
            let how = engine.exit_description();
            return forfeit(
                players,
                side,
                Termination::EngineExited,
                &format!("exited between moves ({how})"),
            );
        }
        engine.send(&game.position_command());
        let deadline = settings
            .limits
            .move_deadline(clock.as_ref(), settings.time_margin);
        let go = engine.send_timed(&settings.limits.go_command(clock.as_ref()));
        let reply = match wait_for_bestmove(engine, &go, deadline, settings.stall_timeout) {
            Ok(reply) => reply,
            Err(fault) => return fault_ending(players, side, fault),
        };
        let used = reply.at.saturating_duration_since(go.instant());
        if let Some(clock) = &mut clock
            && let Err(Flag { had, used }) = clock.charge(side, used, settings.time_margin)
        {
            let what = format!(
                "lost on time: its move took {:.3} s with {:.3} s on its clock",
                used.as_secs_f64(),
                had.as_secs_f64()
            );
            return forfeit(players, side, Termination::TimeForfeit, &what);
        }
        if let Some(movetime) = settings.limits.movetime
            && used > movetime + settings.time_margin
        {
            let what = format!(
                "lost on time: its move took {:.3} s of a move time of {:.3} s",
                used.as_secs_f64(),
                movetime.as_secs_f64()
            );
            return forfeit(players, side, Termination::TimeForfeit, &what);
        }
        if reply.bestmove == "(none)" {
            let what = "answered bestmove (none) in a position with legal moves";
            return forfeit(players, side, Termination::IllegalMove, what);
        }
        let mv = match parse_move(&reply.bestmove, game.position()) {
            Ok(mv) => mv,
            Err(error) => {
                let what = format!("played an illegal move: {error}");
                return forfeit(players, side, Termination::IllegalMove, &what);
            }
        };
        moves.push(MoveRecord {
            mv: reply.bestmove,
            time: used,
            score: reply.score,
            depth: reply.depth,
        });
        game.play(mv);
    }
}

/// The end of the game by the rules, the ply limit or adjudication.
fn game_over(settings: &Settings, game: &Game) -> Option<Ending> {
    if let Some(outcome) = game.outcome(settings.rules) {
        return Some((
            GameResult::of(outcome),
            Termination::of(outcome),
            outcome.to_string(),
        ));
    }
    if let Some(max) = settings.max_plies
        && game.moves().len() >= max as usize
    {
        return Some((
            GameResult::Draw,
            Termination::MaxPlies,
            format!("draw: the ply limit of {max} was reached"),
        ));
    }
    if let Some(adjudicator) = &settings.adjudicator
        && let Some((result, detail)) = adjudicator.adjudicate(game.position())
    {
        return Some((result, Termination::Adjudication, detail));
    }
    None
}

/// Reads the engine's lines after `go` until `bestmove`.
///
/// With a `deadline` (the clock or move time plus the margin, counted from
/// writing `go`), the referee sends `stop` once it passes and then waits
/// `stall` for the `bestmove` (the move will lose on time, but an engine
/// that answers is not stalled). Without one (a depth or node limit only),
/// the whole search must end within `stall`.
pub(crate) fn wait_for_bestmove(
    engine: &mut EngineProcess,
    go: &Written,
    deadline: Option<Duration>,
    stall: Duration,
) -> Result<Reply, Fault> {
    let mut score = None;
    let mut depth = None;
    let mut wait_until = later(go.instant(), deadline.unwrap_or(stall));
    let mut stopped = false;
    loop {
        match engine.recv_until(wait_until) {
            Recv::Line(line, at) => match parse_reply(&line) {
                Some(client::Reply::BestMove { mv, .. }) => {
                    return Ok(Reply {
                        bestmove: mv,
                        at,
                        score,
                        depth,
                    });
                }
                Some(client::Reply::Info(info)) => {
                    if let Some((line_score, line_depth)) = score_and_depth(&info) {
                        score = line_score.or(score);
                        depth = line_depth.or(depth);
                    }
                }
                _ => {}
            },
            Recv::Timeout if stopped || deadline.is_none() => {
                let what = if stopped {
                    format!(
                        "sent no bestmove within {} s of stop (sent when its time was up)",
                        stall.as_secs_f64()
                    )
                } else {
                    format!(
                        "sent no bestmove within {} s of go (a search without a time limit)",
                        stall.as_secs_f64()
                    )
                };
                return Err(Fault::Stalled(what));
            }
            Recv::Timeout => {
                engine.send("stop");
                stopped = true;
                wait_until = later(Instant::now(), stall);
            }
            Recv::Eof => {
                let how = engine.exit_description();
                return Err(Fault::Exited(format!("exited while thinking ({how})")));
            }
        }
    }
}

/// The score and depth of an `info` line about the principal variation
/// (`multipv 1` or no `multipv`); `None` for other lines, and for lines
/// with neither.
fn score_and_depth(info: &client::Info) -> Option<(Option<Score>, Option<u32>)> {
    (info.is_principal() && (info.score.is_some() || info.depth.is_some()))
        .then_some((info.score, info.depth))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score_and_depth(line: &str) -> Option<(Option<Score>, Option<u32>)> {
        match parse_reply(line)? {
            client::Reply::Info(info) => super::score_and_depth(&info),
            _ => None,
        }
    }

    #[test]
    fn reads_scores_from_info_lines() {
        let line = "info depth 19 seldepth 19 multipv 1 score mate 10 nodes 13298 nps 1 hashfull 1 time 1 pv a3b3";
        assert_eq!(
            score_and_depth(line),
            Some((Some(Score::Mate(10)), Some(19)))
        );
        assert_eq!(
            score_and_depth("info depth 3 score cp -38 pv a2b2"),
            Some((Some(Score::Cp(-38)), Some(3)))
        );
        assert_eq!(score_and_depth("info depth 3 multipv 2 score cp 5"), None);
        assert_eq!(score_and_depth("info string depth 3 score cp 5"), None);
        assert_eq!(score_and_depth("info nodes 5"), None);
        assert_eq!(score_and_depth("info depth x score cp y"), None);
    }
}

//! The record of a finished game: its moves, result and how it ended, as
//! the PGN and JSON results files and the summary report them.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

use crate::board::{Color, Outcome, Position, Rules, WinReason};
use crate::client::Score;

/// How the result of a game was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Termination {
    /// A side drove all its cars off.
    AllCarsOff,
    /// The side to move had no legal move (it loses or wins per the rules).
    Blocked,
    /// The same position for the third time.
    Repetition,
    /// The ply limit (`--maxplies`) was reached.
    MaxPlies,
    /// The solved table has a forced win (`--adjudicate`).
    Adjudication,
    /// A clock fell below minus the time margin.
    TimeForfeit,
    /// An illegal move, an unreadable `bestmove`, or `bestmove (none)` in a
    /// game that is not over.
    IllegalMove,
    /// No reply within the stall timeout (handshake, `isready`, or a
    /// search that neither ends nor answers `stop`).
    Stalled,
    /// The engine closed its output (exited or crashed), or could not be
    /// started.
    EngineExited,
}

impl Termination {
    pub const ALL: [Termination; 9] = [
        Termination::AllCarsOff,
        Termination::Blocked,
        Termination::Repetition,
        Termination::MaxPlies,
        Termination::Adjudication,
        Termination::TimeForfeit,
        Termination::IllegalMove,
        Termination::Stalled,
        Termination::EngineExited,
    ];

    /// The name in game records, results files and summaries.
    pub fn name(self) -> &'static str {
        match self {
            Termination::AllCarsOff => "all cars off",
            Termination::Blocked => "blocked",
            Termination::Repetition => "threefold repetition",
            Termination::MaxPlies => "max plies",
            Termination::Adjudication => "adjudication",
            Termination::TimeForfeit => "time forfeit",
            Termination::IllegalMove => "illegal move",
            Termination::Stalled => "stalled",
            Termination::EngineExited => "engine exited",
        }
    }

    /// How a game the rules ended (`outcome`) was ended.
    pub fn of(outcome: Outcome) -> Termination {
        match outcome {
            Outcome::Win(_, WinReason::AllCarsOff) => Termination::AllCarsOff,
            Outcome::Win(_, WinReason::Blocked(_)) => Termination::Blocked,
            Outcome::DrawByRepetition => Termination::Repetition,
        }
    }

    /// Whether an engine's fault ended the game (rather than the rules or
    /// the referee's adjudication).
    pub fn is_fault(self) -> bool {
        matches!(
            self,
            Termination::TimeForfeit
                | Termination::IllegalMove
                | Termination::Stalled
                | Termination::EngineExited
        )
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameResult {
    Win(Color),
    Draw,
}

impl GameResult {
    /// The result of a game the rules ended.
    pub fn of(outcome: Outcome) -> GameResult {
        match outcome.winner() {
            Some(color) => GameResult::Win(color),
            None => GameResult::Draw,
        }
    }

    /// `1-0` (White won), `0-1` (Black won), `1/2-1/2`.
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::Win(Color::White) => "1-0",
            GameResult::Win(Color::Black) => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }
}

/// One move of a game record.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveRecord {
    /// In protocol notation.
    pub mv: String,
    /// From sending `go` to reading `bestmove`.
    pub time: Duration,
    /// The last `score` and `depth` of the principal line the engine
    /// reported before its `bestmove`.
    pub score: Option<Score>,
    pub depth: Option<u32>,
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// 1-based game number.
    pub round: u32,
    pub black: String,
    pub white: String,
    /// The colour the first engine played.
    pub engine1: Color,
    pub start: Position,
    pub rules: Rules,
    pub moves: Vec<MoveRecord>,
    pub result: GameResult,
    pub termination: Termination,
    /// A sentence saying how the game ended.
    pub detail: String,
}

impl GameRecord {
    /// The first engine's points: 1, 0.5 or 0.
    pub fn engine1_points(&self) -> f64 {
        match self.result {
            GameResult::Win(color) if color == self.engine1 => 1.0,
            GameResult::Win(_) => 0.0,
            GameResult::Draw => 0.5,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_results() {
        assert_eq!(GameResult::Win(Color::White).pgn(), "1-0");
        assert_eq!(GameResult::Win(Color::Black).pgn(), "0-1");
        assert_eq!(GameResult::Draw.pgn(), "1/2-1/2");
        assert!(Termination::Stalled.is_fault());
        assert!(!Termination::Repetition.is_fault());
        let names: std::collections::HashSet<&str> =
            Termination::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names.len(), Termination::ALL.len());
    }
}

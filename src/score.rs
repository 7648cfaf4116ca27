//! Scores: the internal integer scale with its mate range, and the
//! `cp`/`mate` form the protocol reports. Shared by the search and the
//! transposition table.

use std::fmt;

/// Longest line from the root the search can follow (plies): a mate
/// score is never further away.
pub const MAX_PLY: usize = 128;

/// Score of a win at the root itself; a win `p` plies away is `MATE - p`.
pub const MATE: i32 = 31_000;
/// Scores at least this large (in absolute value) are forced wins/losses.
pub const MATE_BOUND: i32 = MATE - 2 * MAX_PLY as i32;
/// Scores at least this large in absolute value (and below
/// [`MATE_BOUND`]) are wins and losses known from solved tables: `cp 30000
/// - d` at a root the tables decide, `cp 28000 - p` for a covered position
/// `p` plies into the search. No evaluation comes near.
pub const TABLE_WIN_BOUND: i32 = 27_000;
/// Larger than any score.
pub const INFINITY: i32 = 32_000;
/// Score of a draw (repetition).
pub const DRAW: i32 = 0;

/// A score as the protocol reports it: `cp` or `mate` in moves of the
/// side to move (positive: it wins after that many of its own moves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    Cp(i32),
    Mate(i32),
}

impl Score {
    /// Converts an internal score (side to move's point of view).
    pub fn from_internal(score: i32) -> Score {
        if score >= MATE_BOUND {
            Score::Mate((MATE - score + 1) / 2)
        } else if score <= -MATE_BOUND {
            Score::Mate(-((MATE + score + 1) / 2))
        } else {
            Score::Cp(score)
        }
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Mate(moves) => write!(f, "mate {moves}"),
        }
    }
}

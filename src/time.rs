//! Time management: how long one search may take.
//!
//! A search gets two limits. The **soft** limit is checked between
//! iterations: no new iteration starts after it. The **hard** limit ends
//! the search at once: the protocol thread sets `stop` when it passes (and
//! the search reads the clock every thousand nodes or so too). Neither
//! ever exceeds the side's remaining time less `Move Overhead`, and a
//! clock is never planned to its end: the last [`params::RESERVE`] of it
//! is kept for delays nobody controls (a loaded machine may not run the
//! engine for tens of milliseconds). A clock that falls to the reserve
//! gets moves of a first iteration only, so an increment fills it again.

use std::time::Duration;

/// How a `go` command limits time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeLimit {
    /// No time limit (`go infinite`, or only depth/nodes/mate limits).
    None,
    /// `go movetime <ms>`.
    MoveTime(Duration),
    /// The side to move's clock (`wtime`/`btime`, `winc`/`binc`, `movestogo`);
    /// a clock the `go` command left out counts as zero.
    Clock {
        remaining: Duration,
        increment: Duration,
        moves_to_go: Option<u32>,
    },
}

/// Tunables of the clock allocation.
pub mod params {
    use std::time::Duration;

    /// The end of the clock no search plans to use (beyond `Move
    /// Overhead`).
    pub const RESERVE: Duration = Duration::from_millis(50);
    /// Moves assumed left when `movestogo` is absent: a little more than the
    /// side still needs to drive its cars off, within these bounds.
    pub const MIN_MOVES_LEFT: u32 = 10;
    pub const MAX_MOVES_LEFT: u32 = 40;
    pub const EXTRA_MOVES_LEFT: u32 = 6;
    /// Share of the increment spent on this move, in percent.
    pub const INCREMENT_SHARE: u32 = 75;
    /// The soft limit never exceeds this share of the usable time, percent.
    pub const MAX_SOFT_SHARE: u32 = 40;
    /// The hard limit is this multiple of the soft limit...
    pub const HARD_FACTOR: u32 = 3;
    /// ...and at most this share of the usable time, percent.
    pub const MAX_HARD_SHARE: u32 = 80;
    /// A search whose built-in table (3 x 3, 4 x 4) is still being built
    /// when its `go` comes may wait for it up to this share of the usable
    /// time, percent (beyond its hard limit): from the table it answers
    /// at once, and perfectly.
    pub const TABLE_WAIT_SHARE: u32 = 50;
}

/// The soft and hard limits of one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub soft: Duration,
    pub hard: Duration,
}

/// Works out the budget for a search; `None` when time does not limit it.
///
/// `moves_needed` is how many moves the side to move still needs to drive
/// its cars off (a guess at how many moves the game has left for it).
pub fn budget(limit: TimeLimit, overhead: Duration, moves_needed: u32) -> Option<Budget> {
    match limit {
        TimeLimit::None => None,
        TimeLimit::MoveTime(time) => {
            let usable = time.saturating_sub(overhead);
            Some(Budget {
                soft: usable,
                hard: usable,
            })
        }
        TimeLimit::Clock {
            remaining,
            increment,
            moves_to_go,
        } => {
            use params::*;
            let usable = remaining.saturating_sub(overhead).saturating_sub(RESERVE);
            let moves_left = moves_to_go.unwrap_or_else(|| {
                (moves_needed + EXTRA_MOVES_LEFT).clamp(MIN_MOVES_LEFT, MAX_MOVES_LEFT)
            });
            let hard_cap = if moves_left <= 1 {
                usable
            } else {
                usable * MAX_HARD_SHARE / 100
            };
            let soft = (usable / moves_left.max(1) + increment * INCREMENT_SHARE / 100)
                .min(usable * MAX_SOFT_SHARE / 100)
                .min(hard_cap);
            let hard = (soft * HARD_FACTOR).min(hard_cap);
            Some(Budget { soft, hard })
        }
    }
}

/// How long a search may wait for a built-in table still being built,
/// counted from its `go`: [`params::TABLE_WAIT_SHARE`] of the usable
/// clock, the whole of a `movetime` less `overhead`, and `None` (no bound)
/// without a time limit.
pub fn table_wait(limit: TimeLimit, overhead: Duration) -> Option<Duration> {
    match limit {
        TimeLimit::None => None,
        TimeLimit::MoveTime(time) => Some(time.saturating_sub(overhead)),
        TimeLimit::Clock { remaining, .. } => {
            let usable = remaining
                .saturating_sub(overhead)
                .saturating_sub(params::RESERVE);
            Some(usable * params::TABLE_WAIT_SHARE / 100)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// The wait for a table stays inside the clock, and keeps back as much
    /// as the hard limit of the search after it could want.
    #[test]
    fn a_table_wait_keeps_half_the_usable_clock() {
        let clock = |remaining| TimeLimit::Clock {
            remaining: ms(remaining),
            increment: ms(10),
            moves_to_go: None,
        };
        assert_eq!(table_wait(clock(1000), ms(10)), Some(ms(470)));
        assert_eq!(table_wait(clock(50), ms(10)), Some(ms(0)));
        assert_eq!(
            table_wait(TimeLimit::MoveTime(ms(300)), ms(10)),
            Some(ms(290))
        );
        assert_eq!(table_wait(TimeLimit::None, ms(10)), None);
    }

    #[test]
    fn movetime_less_overhead() {
        let b = budget(TimeLimit::MoveTime(ms(300)), ms(10), 6).unwrap();
        assert_eq!((b.soft, b.hard), (ms(290), ms(290)));
        let b = budget(TimeLimit::MoveTime(ms(5)), ms(10), 6).unwrap();
        assert_eq!(b.hard, ms(0));
    }

    #[test]
    fn clock_with_moves_to_go() {
        let clock = TimeLimit::Clock {
            remaining: ms(10_060),
            increment: ms(0),
            moves_to_go: Some(20),
        };
        let b = budget(clock, ms(10), 6).unwrap();
        assert_eq!(b.soft, ms(500));
        assert_eq!(b.hard, ms(1500));
    }

    #[test]
    fn clock_keeps_overhead_and_reserve() {
        for remaining in [0, 5, 11, 50, 59, 60, 61, 100, 1000, 60_000] {
            for moves_to_go in [None, Some(1), Some(2), Some(30)] {
                for increment in [0, 20, 2000] {
                    let clock = TimeLimit::Clock {
                        remaining: ms(remaining),
                        increment: ms(increment),
                        moves_to_go,
                    };
                    let b = budget(clock, ms(10), 20).unwrap();
                    let usable = ms(remaining).saturating_sub(ms(10) + params::RESERVE);
                    assert!(b.hard <= usable, "{remaining} {moves_to_go:?}: {b:?}");
                    assert!(b.soft <= b.hard);
                }
            }
        }
    }

    /// A game at 0.3 s + 0.02 s in which every move takes its whole hard
    /// limit: the clock drains, but never below the reserve.
    #[test]
    fn a_draining_clock_keeps_its_reserve() {
        let (overhead, increment) = (ms(10), ms(20));
        let mut remaining = ms(300);
        let mut lowest = remaining;
        for _ in 0..200 {
            let clock = TimeLimit::Clock {
                remaining,
                increment,
                moves_to_go: None,
            };
            let spent = budget(clock, overhead, 30).unwrap().hard;
            lowest = lowest.min(remaining - spent);
            remaining = remaining - spent + increment;
        }
        assert!(lowest >= overhead + params::RESERVE, "{lowest:?}");
        // It settles above the reserve, spending about the increment.
        assert!(remaining < ms(300), "{remaining:?}");
    }

    #[test]
    fn missing_clock_counts_as_zero() {
        let clock = TimeLimit::Clock {
            remaining: ms(0),
            increment: ms(0),
            moves_to_go: None,
        };
        assert_eq!(budget(clock, ms(10), 6).unwrap().hard, ms(0));
    }

    #[test]
    fn guesses_moves_left_from_the_race() {
        let clock = |moves_needed| {
            let limit = TimeLimit::Clock {
                remaining: ms(60_000) + params::RESERVE,
                increment: ms(0),
                moves_to_go: None,
            };
            budget(limit, ms(0), moves_needed).unwrap().soft
        };
        assert_eq!(clock(4), ms(6000)); // at least 10 moves assumed
        assert_eq!(clock(24), ms(2000)); // 24 + 6
        assert_eq!(clock(100), ms(1500)); // at most 40
    }
}

//! Time controls, search limits and the referee's clocks.
//!
//! A clock is charged the time from sending `go` to reading `bestmove`. A
//! side whose clock then stands below minus the time margin has lost on
//! time; otherwise it gets its increment, and with `moves/base+inc` a new
//! period's base time after every `moves` of its own moves.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::board::Color;

/// A clock time control: `base+inc` seconds, or `moves/base+inc` (a fresh
/// `base` after every `moves` moves of a side).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeControl {
    pub moves: Option<u32>,
    pub base: Duration,
    pub increment: Duration,
}

/// Why a time control did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeControlError(String);

impl fmt::Display for TimeControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (expected BASE+INC or MOVES/BASE+INC in seconds, like 10+0.1 or 40/60+0)",
            self.0
        )
    }
}

impl std::error::Error for TimeControlError {}

fn seconds(text: &str, what: &str) -> Result<Duration, TimeControlError> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| TimeControlError(format!("{what} '{text}' is not a number of seconds")))?;
    if !value.is_finite() || !(0.0..=1e7).contains(&value) {
        return Err(TimeControlError(format!("{what} '{text}' is out of range")));
    }
    Ok(Duration::from_secs_f64(value))
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    fn from_str(text: &str) -> Result<TimeControl, TimeControlError> {
        let (moves, rest) = match text.split_once('/') {
            Some((moves, rest)) => {
                let moves: u32 = moves.trim().parse().map_err(|_| {
                    TimeControlError(format!("moves per period '{moves}' is not a number"))
                })?;
                if moves == 0 {
                    return Err(TimeControlError(
                        "moves per period must be at least 1".into(),
                    ));
                }
                (Some(moves), rest)
            }
            None => (None, text),
        };
        let (base, increment) = match rest.split_once('+') {
            Some((base, inc)) => (seconds(base, "base time")?, seconds(inc, "increment")?),
            None => (seconds(rest, "base time")?, Duration::ZERO),
        };
        if base.is_zero() {
            return Err(TimeControlError("the base time must be above zero".into()));
        }
        Ok(TimeControl {
            moves,
            base,
            increment,
        })
    }
}

impl fmt::Display for TimeControl {
    /// The PGN form: `40/60+0`, `2+0.02` (seconds).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(moves) = self.moves {
            write!(f, "{moves}/")?;
        }
        write!(
            f,
            "{}+{}",
            self.base.as_secs_f64(),
            self.increment.as_secs_f64()
        )
    }
}

/// What every `go` of a game carries.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    pub tc: Option<TimeControl>,
    pub movetime: Option<Duration>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
}

impl Limits {
    /// Whether any limit is set (a `go` without one may never end).
    pub fn is_limited(&self) -> bool {
        self.tc.is_some() || self.movetime.is_some() || self.depth.is_some() || self.nodes.is_some()
    }

    /// A fresh clock for a game, when the time control has one.
    pub fn clock(&self) -> Option<Clock> {
        self.tc.map(Clock::new)
    }

    /// The `go` command for the next move (`clock` is the game's clock).
    pub fn go_command(&self, clock: Option<&Clock>) -> String {
        let mut go = String::from("go");
        if let Some(clock) = clock {
            go.push_str(&format!(
                " wtime {} btime {} winc {} binc {}",
                clock.remaining_ms(Color::White),
                clock.remaining_ms(Color::Black),
                clock.tc.increment.as_millis(),
                clock.tc.increment.as_millis()
            ));
            if let Some(moves) = clock.moves_to_go(clock.side) {
                go.push_str(&format!(" movestogo {moves}"));
            }
        }
        if let Some(movetime) = self.movetime {
            go.push_str(&format!(" movetime {}", movetime.as_millis()));
        }
        if let Some(depth) = self.depth {
            go.push_str(&format!(" depth {depth}"));
        }
        if let Some(nodes) = self.nodes {
            go.push_str(&format!(" nodes {nodes}"));
        }
        go
    }

    /// The longest a move may take before it loses on time: the side's
    /// clock or the move time, plus the margin. `None`: time does not limit
    /// the move.
    pub fn move_deadline(&self, clock: Option<&Clock>, margin: Duration) -> Option<Duration> {
        if let Some(clock) = clock {
            let micros = clock.remaining_us(clock.side) + margin.as_micros() as i64;
            return Some(Duration::from_micros(micros.max(0) as u64));
        }
        self.movetime.map(|movetime| movetime + margin)
    }

    /// The `TimeControl` tag of a game record: the clock, `movetime=<ms>`,
    /// `depth=<d>`, `nodes=<n>`, joined by `,`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(tc) = self.tc {
            parts.push(tc.to_string());
        }
        if let Some(movetime) = self.movetime {
            parts.push(format!("movetime={}ms", movetime.as_millis()));
        }
        if let Some(depth) = self.depth {
            parts.push(format!("depth={depth}"));
        }
        if let Some(nodes) = self.nodes {
            parts.push(format!("nodes={nodes}"));
        }
        parts.join(",")
    }
}

/// Both sides' clocks in one game.
#[derive(Clone, Debug)]
pub struct Clock {
    tc: TimeControl,
    /// Remaining time per side (indexed by [`Color::index`]), microseconds;
    /// may be a little negative, within the margin.
    remaining: [i64; 2],
    /// Moves made per side.
    moves_made: [u32; 2],
    /// The side whose move is next (for `movestogo`).
    side: Color,
}

/// A side's clock fell below minus the margin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flag {
    /// The clock before the move.
    pub had: Duration,
    /// The time the move took.
    pub used: Duration,
}

impl Clock {
    pub fn new(tc: TimeControl) -> Clock {
        let base = tc.base.as_micros() as i64;
        Clock {
            tc,
            remaining: [base, base],
            moves_made: [0, 0],
            side: Color::Black,
        }
    }

    /// Remaining time, microseconds (negative within the margin).
    pub fn remaining_us(&self, color: Color) -> i64 {
        self.remaining[color.index()]
    }

    /// Remaining time in whole milliseconds as `go` sends it (0 if negative).
    pub fn remaining_ms(&self, color: Color) -> u64 {
        (self.remaining_us(color).max(0) / 1000) as u64
    }

    /// `color`'s moves until its next time control, with `moves/base+inc`.
    pub fn moves_to_go(&self, color: Color) -> Option<u32> {
        self.tc
            .moves
            .map(|moves| moves - self.moves_made[color.index()] % moves)
    }

    /// Tells the clock whose move is next (the first move of a game from a
    /// position with White to move).
    pub fn set_side(&mut self, color: Color) {
        self.side = color;
    }

    /// Charges `color` for a move that took `used`.
    ///
    /// # Errors
    /// [`Flag`] when the clock is then below `-margin`: a loss on time.
    pub fn charge(&mut self, color: Color, used: Duration, margin: Duration) -> Result<(), Flag> {
        let index = color.index();
        let had = self.remaining[index];
        let left = had - used.as_micros() as i64;
        if left < -(margin.as_micros() as i64) {
            return Err(Flag {
                had: Duration::from_micros(had.max(0) as u64),
                used,
            });
        }
        self.moves_made[index] += 1;
        let mut left = left + self.tc.increment.as_micros() as i64;
        if let Some(moves) = self.tc.moves
            && self.moves_made[index].is_multiple_of(moves)
        {
            left += self.tc.base.as_micros() as i64;
        }
        self.remaining[index] = left;
        self.side = color.other();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn parses_time_controls() {
        let tc: TimeControl = "10+0.1".parse().unwrap();
        assert_eq!(
            (tc.moves, tc.base, tc.increment),
            (None, ms(10_000), ms(100))
        );
        let tc: TimeControl = "40/60+0".parse().unwrap();
        assert_eq!(
            (tc.moves, tc.base, tc.increment),
            (Some(40), ms(60_000), ms(0))
        );
        let tc: TimeControl = "2.5".parse().unwrap();
        assert_eq!((tc.moves, tc.base, tc.increment), (None, ms(2500), ms(0)));
        assert_eq!(
            "2+0.02".parse::<TimeControl>().unwrap().to_string(),
            "2+0.02"
        );
        assert_eq!(
            "40/60+0".parse::<TimeControl>().unwrap().to_string(),
            "40/60+0"
        );
        for bad in [
            "", "abc", "0+1", "-1+0", "10+x", "0/10+0", "x/10+0", "10+-1", "inf+0",
        ] {
            assert!(bad.parse::<TimeControl>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn charges_increment_after_each_move() {
        // 2 s + 0.02 s: a 150 ms move leaves 2000 - 150 + 20 = 1870 ms.
        let mut clock = Clock::new("2+0.02".parse().unwrap());
        clock.charge(Color::Black, ms(150), ms(5)).unwrap();
        assert_eq!(clock.remaining_ms(Color::Black), 1870);
        assert_eq!(clock.remaining_ms(Color::White), 2000);
        // 1,869.5 ms after another move of 20.5 ms (and the 20 ms increment).
        clock
            .charge(Color::Black, Duration::from_micros(20_500), ms(5))
            .unwrap();
        assert_eq!(clock.remaining_us(Color::Black), 1_869_500);
        assert_eq!(clock.remaining_ms(Color::Black), 1869);
    }

    #[test]
    fn flags_only_below_minus_the_margin() {
        // 1 s clock, 5 ms margin: a move of 1,005 ms survives at -5 ms, one
        // of 1,005.001 ms loses.
        let tc: TimeControl = "1+0".parse().unwrap();
        let mut clock = Clock::new(tc);
        assert!(clock.charge(Color::White, ms(1005), ms(5)).is_ok());
        assert_eq!(clock.remaining_us(Color::White), -5000);
        assert_eq!(clock.remaining_ms(Color::White), 0);
        let mut clock = Clock::new(tc);
        let used = Duration::from_micros(1_005_001);
        assert_eq!(
            clock.charge(Color::White, used, ms(5)),
            Err(Flag {
                had: ms(1000),
                used
            })
        );
    }

    #[test]
    fn moves_per_period_adds_the_base_and_counts_down() {
        // 2 moves per 10 s: after 2 moves of 1 s each, 10 - 2 + 10 = 18 s.
        let mut clock = Clock::new("2/10+0".parse().unwrap());
        assert_eq!(clock.moves_to_go(Color::Black), Some(2));
        clock.charge(Color::Black, ms(1000), ms(0)).unwrap();
        assert_eq!(clock.moves_to_go(Color::Black), Some(1));
        assert_eq!(clock.remaining_ms(Color::Black), 9000);
        clock.charge(Color::Black, ms(1000), ms(0)).unwrap();
        assert_eq!(clock.moves_to_go(Color::Black), Some(2));
        assert_eq!(clock.remaining_ms(Color::Black), 18_000);
        assert_eq!(clock.moves_to_go(Color::White), Some(2));
    }

    #[test]
    fn go_command_carries_clocks_and_limits() {
        let limits = Limits {
            tc: Some("40/60+0.5".parse().unwrap()),
            depth: Some(7),
            ..Limits::default()
        };
        let mut clock = limits.clock().unwrap();
        assert_eq!(
            limits.go_command(Some(&clock)),
            "go wtime 60000 btime 60000 winc 500 binc 500 movestogo 40 depth 7"
        );
        clock.charge(Color::Black, ms(1500), ms(5)).unwrap();
        assert_eq!(
            limits.go_command(Some(&clock)),
            "go wtime 60000 btime 59000 winc 500 binc 500 movestogo 40 depth 7"
        );
        assert_eq!(limits.describe(), "40/60+0.5,depth=7");
        let limits = Limits {
            movetime: Some(ms(100)),
            nodes: Some(5000),
            ..Limits::default()
        };
        assert_eq!(limits.go_command(None), "go movetime 100 nodes 5000");
        assert_eq!(limits.move_deadline(None, ms(5)), Some(ms(105)));
        assert_eq!(limits.describe(), "movetime=100ms,nodes=5000");
        assert!(!Limits::default().is_limited());
    }

    #[test]
    fn deadline_is_the_clock_plus_the_margin() {
        let limits = Limits {
            tc: Some("1+0".parse().unwrap()),
            ..Limits::default()
        };
        let mut clock = limits.clock().unwrap();
        assert_eq!(limits.move_deadline(Some(&clock), ms(5)), Some(ms(1005)));
        clock.charge(Color::Black, ms(400), ms(5)).unwrap();
        // White's move is next, with its full second.
        assert_eq!(limits.move_deadline(Some(&clock), ms(5)), Some(ms(1005)));
        clock.charge(Color::White, ms(1003), ms(5)).unwrap();
        assert_eq!(limits.move_deadline(Some(&clock), ms(5)), Some(ms(605)));
        clock.charge(Color::Black, ms(100), ms(5)).unwrap();
        // White stands at -3 ms: 2 ms left before it loses.
        assert_eq!(limits.move_deadline(Some(&clock), ms(5)), Some(ms(2)));
    }
}

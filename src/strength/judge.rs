//! Judging a played move against the tables: did it keep the result, and
//! how much further from progress did a kept win leave the winner.

use crate::board::{Move, Position};
use crate::solver::Dtz;

/// Which positions a sample was drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Set {
    /// Uniformly from every position reachable from the start.
    Reachable,
    /// From the positions of self-play games.
    Games,
}

impl Set {
    pub const ALL: [Set; 2] = [Set::Reachable, Set::Games];

    pub fn name(self) -> &'static str {
        match self {
            Set::Reachable => "reachable",
            Set::Games => "games",
        }
    }
}

/// The value of a sampled position for its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Won,
    Drawn,
}

impl Class {
    pub const ALL: [Class; 2] = [Class::Won, Class::Drawn];

    pub fn name(self) -> &'static str {
        match self {
            Class::Won => "won",
            Class::Drawn => "drawn",
        }
    }

    /// The class of a stored value (lost positions are not sampled).
    pub fn of(value: Dtz) -> Option<Class> {
        match value {
            Dtz::Win(_) => Some(Class::Won),
            Dtz::Draw => Some(Class::Drawn),
            Dtz::Loss(_) => None,
        }
    }
}

/// A position to put to the engine, with what the tables say of it.
#[derive(Clone, Debug)]
pub struct Sample {
    pub set: Set,
    pub class: Class,
    pub position: Position,
    pub value: Dtz,
    /// Every legal move with the value it gives the side to move, best
    /// first (as [`crate::tablebase::Layered::rank_moves`] ranks them).
    pub moves: Vec<(Move, Dtz)>,
}

impl Sample {
    /// Whether some legal move gives the result away: only then can the
    /// engine go wrong.
    pub fn is_critical(&self) -> bool {
        self.moves
            .iter()
            .any(|&(_, value)| Class::of(value) != Some(self.class))
    }
}

/// What became of one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The move keeps the result; for a win, `excess` is how many plies
    /// later than the table's best move it reaches the next progress move.
    Kept { excess: u32 },
    /// The move gives the result away (a win drawn or lost, a draw lost).
    Spoilt,
    /// The engine gave no legal move (it stalled, exited or played an
    /// illegal or unreadable move).
    NoMove,
}

/// Judges `mv` (None: the engine gave no legal move) in `sample`.
pub fn judge(sample: &Sample, mv: Option<Move>) -> Verdict {
    let Some(value) = mv.and_then(|mv| sample.moves.iter().find(|(m, _)| *m == mv)) else {
        return Verdict::NoMove;
    };
    match (sample.class, value.1, sample.value) {
        (Class::Won, Dtz::Win(played), Dtz::Win(best)) => Verdict::Kept {
            excess: played.saturating_sub(best),
        },
        (Class::Drawn, Dtz::Draw, _) => Verdict::Kept { excess: 0 },
        _ => Verdict::Spoilt,
    }
}

/// The results for one set and class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub positions: u64,
    pub kept: u64,
    /// Positions where some move gives the result away, and how many of
    /// those were kept.
    pub critical: u64,
    pub critical_kept: u64,
    /// Engine faults (no legal move), counted as not kept.
    pub no_move: u64,
    /// Kept wins whose move was as near to progress as the table's best.
    pub fastest: u64,
    /// Sum of the plies by which kept wins were further from progress.
    pub excess: u64,
    pub max_excess: u32,
}

impl Tally {
    pub fn add(&mut self, sample: &Sample, verdict: Verdict) {
        self.positions += 1;
        let critical = sample.is_critical();
        self.critical += u64::from(critical);
        match verdict {
            Verdict::Kept { excess } => {
                self.kept += 1;
                self.critical_kept += u64::from(critical);
                if sample.class == Class::Won {
                    self.fastest += u64::from(excess == 0);
                    self.excess += u64::from(excess);
                    self.max_excess = self.max_excess.max(excess);
                }
            }
            Verdict::Spoilt => {}
            Verdict::NoMove => self.no_move += 1,
        }
    }

    /// Kept positions as a fraction.
    pub fn share(&self) -> Option<f64> {
        (self.positions > 0).then(|| self.kept as f64 / self.positions as f64)
    }

    /// Kept critical positions as a fraction.
    pub fn critical_share(&self) -> Option<f64> {
        (self.critical > 0).then(|| self.critical_kept as f64 / self.critical as f64)
    }

    /// The 95% Wilson score interval of the kept share.
    pub fn interval(&self) -> Option<(f64, f64)> {
        wilson(self.kept, self.positions)
    }

    /// Mean plies by which kept wins were further from progress.
    pub fn mean_excess(&self) -> Option<f64> {
        (self.kept > 0).then(|| self.excess as f64 / self.kept as f64)
    }
}

/// The 95% Wilson score interval of `successes` out of `trials`.
pub fn wilson(successes: u64, trials: u64) -> Option<(f64, f64)> {
    if trials == 0 {
        return None;
    }
    const Z: f64 = 1.959_963_984_540_054;
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = Z * Z;
    let centre = p + z2 / (2.0 * n);
    let spread = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let scale = 1.0 + z2 / n;
    Some((
        ((centre - spread) / scale).max(0.0),
        ((centre + spread) / scale).min(1.0),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::{parse_move, parse_position};

    fn sample(class: Class, value: Dtz, moves: &[(&str, Dtz)]) -> Sample {
        let position = parse_position("B2/B2/1WW b").unwrap();
        Sample {
            set: Set::Reachable,
            class,
            position,
            value,
            moves: moves
                .iter()
                .map(|&(text, value)| (parse_move(text, &position).unwrap(), value))
                .collect(),
        }
    }

    #[test]
    fn moves_are_judged_by_their_table_values() {
        let position = parse_position("B2/B2/1WW b").unwrap();
        let mv = |text| Some(parse_move(text, &position).unwrap());
        let won = sample(
            Class::Won,
            Dtz::Win(3),
            &[
                ("a3b3", Dtz::Win(3)),
                ("a2b2", Dtz::Win(7)),
                ("a2a1", Dtz::Loss(2)),
            ],
        );
        assert!(won.is_critical());
        assert_eq!(judge(&won, mv("a3b3")), Verdict::Kept { excess: 0 });
        assert_eq!(judge(&won, mv("a2b2")), Verdict::Kept { excess: 4 });
        assert_eq!(judge(&won, mv("a2a1")), Verdict::Spoilt);
        assert_eq!(judge(&won, None), Verdict::NoMove);
        let drawn = sample(
            Class::Drawn,
            Dtz::Draw,
            &[("a3b3", Dtz::Draw), ("a2b2", Dtz::Draw)],
        );
        assert!(!drawn.is_critical());
        assert_eq!(judge(&drawn, mv("a2b2")), Verdict::Kept { excess: 0 });
        // A legal move the ranking does not know is no move at all.
        assert_eq!(judge(&drawn, mv("a2a1")), Verdict::NoMove);

        let mut tally = Tally::default();
        for verdict in [
            judge(&won, mv("a3b3")),
            judge(&won, mv("a2b2")),
            judge(&won, mv("a2a1")),
            judge(&won, None),
        ] {
            tally.add(&won, verdict);
        }
        assert_eq!(
            (
                tally.positions,
                tally.kept,
                tally.critical,
                tally.critical_kept
            ),
            (4, 2, 4, 2)
        );
        assert_eq!((tally.fastest, tally.excess, tally.max_excess), (1, 4, 4));
        assert_eq!(tally.no_move, 1);
        assert_eq!(tally.share(), Some(0.5));
        assert_eq!(tally.mean_excess(), Some(2.0));
    }

    #[test]
    fn wilson_interval_matches_hand_values() {
        // 90 of 100: the interval is about [0.826, 0.945].
        let (low, high) = wilson(90, 100).unwrap();
        assert!((low - 0.8256).abs() < 1e-3, "{low}");
        assert!((high - 0.9448).abs() < 1e-3, "{high}");
        let (low, high) = wilson(10, 10).unwrap();
        assert!(low > 0.69 && low < 0.73 && (high - 1.0).abs() < 1e-9);
        assert_eq!(wilson(0, 0), None);
    }
}

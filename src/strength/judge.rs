//! Judging a played move against the tables: did it keep the result, and
//! how much further from progress did a kept win leave the winner; and a
//! lost position's play-out: how long the engine held out against perfect
//! play, against the longest the tables allow.

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
    /// Played out against perfect play: the engine's moves against the
    /// tables' quickest win ([`Verdict::Delayed`]).
    Lost,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::Won, Class::Drawn, Class::Lost];

    pub fn name(self) -> &'static str {
        match self {
            Class::Won => "won",
            Class::Drawn => "drawn",
            Class::Lost => "lost",
        }
    }

    /// The class of a stored value.
    pub fn of(value: Dtz) -> Class {
        match value {
            Dtz::Win(_) => Class::Won,
            Dtz::Draw => Class::Drawn,
            Dtz::Loss(_) => Class::Lost,
        }
    }
}

/// A position to put to the engine, with what the tables say of it.
#[derive(Clone, Debug)]
pub struct Sample {
    pub set: Set,
    pub class: Class,
    pub position: Position,
    /// Its stored value: the distance to the next progress move for won
    /// and drawn positions, to the end of the game for lost ones.
    pub value: Dtz,
    /// Every legal move with the value it gives the side to move, best
    /// first (as [`crate::tablebase::Layered::rank_moves`] ranks them;
    /// [`crate::tablebase::Layered::rank_ends`] for lost positions).
    pub moves: Vec<(Move, Dtz)>,
}

impl Sample {
    /// Whether a move of this value keeps the result (for a lost
    /// position: holds out as long as the best move).
    pub fn keeps(&self, value: Dtz) -> bool {
        match self.class {
            Class::Lost => Some(value) == self.best(),
            class => Class::of(value) == class,
        }
    }

    /// Whether some legal move gives the result away (for a lost
    /// position: ends the game sooner than the best): only then can the
    /// engine go wrong.
    pub fn is_critical(&self) -> bool {
        self.moves.iter().any(|&(_, value)| !self.keeps(value))
    }

    /// The value of the best move.
    pub fn best(&self) -> Option<Dtz> {
        self.moves.first().map(|&(_, value)| value)
    }

    /// The plies to the end of the game of a lost position under best
    /// play (the loser delaying): the longest the engine can hold out.
    pub fn longest_delay(&self) -> Option<u32> {
        match (self.class, self.value) {
            (Class::Lost, Dtz::Loss(plies)) => Some(plies),
            _ => None,
        }
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
    /// A lost position played out against the tables' quickest win: the
    /// game ended `survived` plies after it, where the loser's best play
    /// holds out `longest` (the table's distance to the end).
    Delayed { survived: u32, longest: u32 },
    /// The engine gave no legal move (it stalled, exited or played an
    /// illegal or unreadable move).
    NoMove,
}

impl Verdict {
    /// Whether the result was kept (for a lost position: held out as
    /// long as perfect play does).
    pub fn is_kept(self) -> bool {
        match self {
            Verdict::Kept { .. } => true,
            Verdict::Delayed { survived, longest } => survived >= longest,
            Verdict::Spoilt | Verdict::NoMove => false,
        }
    }
}

/// Judges `mv` (None: the engine gave no legal move) in `sample`; a lost
/// sample by the plies its play-out `survived` (None: the engine faulted
/// on the way).
pub fn judge(sample: &Sample, mv: Option<Move>, survived: Option<u32>) -> Verdict {
    if let Some(longest) = sample.longest_delay() {
        return match survived {
            Some(survived) => Verdict::Delayed { survived, longest },
            None => Verdict::NoMove,
        };
    }
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
    /// Lost positions: the plies held out, and the most the tables allow.
    pub survived: u64,
    pub longest: u64,
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
            Verdict::Delayed { survived, longest } => {
                let held = verdict.is_kept();
                self.kept += u64::from(held);
                self.critical_kept += u64::from(critical && held);
                self.survived += u64::from(survived);
                self.longest += u64::from(longest);
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

    /// Of lost positions, the plies held out as a share of the most the
    /// tables allow (summed over the positions).
    pub fn delay_share(&self) -> Option<f64> {
        (self.longest > 0).then(|| self.survived as f64 / self.longest as f64)
    }

    /// Of lost positions played out, the mean plies by which the game
    /// ended sooner than the tables allow.
    pub fn mean_shortfall(&self) -> Option<f64> {
        let played = self.positions - self.no_move;
        (played > 0).then(|| (self.longest - self.survived) as f64 / played as f64)
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
        assert_eq!(judge(&won, mv("a3b3"), None), Verdict::Kept { excess: 0 });
        assert_eq!(judge(&won, mv("a2b2"), None), Verdict::Kept { excess: 4 });
        assert_eq!(judge(&won, mv("a2a1"), None), Verdict::Spoilt);
        assert_eq!(judge(&won, None, None), Verdict::NoMove);
        let drawn = sample(
            Class::Drawn,
            Dtz::Draw,
            &[("a3b3", Dtz::Draw), ("a2b2", Dtz::Draw)],
        );
        assert!(!drawn.is_critical());
        assert_eq!(judge(&drawn, mv("a2b2"), None), Verdict::Kept { excess: 0 });
        // A legal move the ranking does not know is no move at all.
        assert_eq!(judge(&drawn, mv("a2a1"), None), Verdict::NoMove);

        let mut tally = Tally::default();
        for verdict in [
            judge(&won, mv("a3b3"), None),
            judge(&won, mv("a2b2"), None),
            judge(&won, mv("a2a1"), None),
            judge(&won, None, None),
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
    fn lost_positions_are_judged_by_how_long_they_held_out() {
        let lost = sample(
            Class::Lost,
            Dtz::Loss(9),
            &[("a3b3", Dtz::Loss(9)), ("a2b2", Dtz::Loss(5))],
        );
        assert!(lost.is_critical());
        assert_eq!(lost.longest_delay(), Some(9));
        // The move alone says nothing: the play-out does.
        assert_eq!(
            judge(&lost, mv_of(&lost, "a2b2"), Some(9)),
            Verdict::Delayed {
                survived: 9,
                longest: 9
            }
        );
        assert_eq!(judge(&lost, mv_of(&lost, "a3b3"), None), Verdict::NoMove);
        let mut tally = Tally::default();
        tally.add(
            &lost,
            Verdict::Delayed {
                survived: 9,
                longest: 9,
            },
        );
        tally.add(
            &lost,
            Verdict::Delayed {
                survived: 5,
                longest: 9,
            },
        );
        tally.add(&lost, Verdict::NoMove);
        assert_eq!(
            (tally.positions, tally.kept, tally.critical_kept),
            (3, 1, 1)
        );
        assert_eq!((tally.survived, tally.longest), (14, 18));
        assert_eq!(tally.no_move, 1);
        assert!((tally.delay_share().unwrap() - 14.0 / 18.0).abs() < 1e-12);
        assert_eq!(tally.mean_shortfall(), Some(2.0));
        // A won sample is never judged by a play-out.
        let won = sample(Class::Won, Dtz::Win(1), &[("a3b3", Dtz::Win(1))]);
        assert_eq!(won.longest_delay(), None);
        assert_eq!(Tally::default().delay_share(), None);
    }

    fn mv_of(sample: &Sample, text: &str) -> Option<crate::board::Move> {
        Some(parse_move(text, &sample.position).unwrap())
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

//! Win/draw/loss chances (`UCI_ShowWDL`): the `wdl <win> <draw> <loss>`
//! of an `info` line, in permille from the side to move's point of view,
//! always summing to 1000.
//!
//! A position a solved table decides, or a forced result the search has
//! proved (a `mate` score, a layered-table win or loss), is exact: 1000, 0,
//! 0 and so on. Any other score is mapped to chances by a logistic curve
//! for each outcome,
//!
//! ```text
//! win  = 1 / (1 + exp((a - s) / b))
//! loss = 1 / (1 + exp((a + s) / b))
//! draw = 1 - win - loss
//! ```
//!
//! where `s` is the score in evaluation units, `a` (>= 0) is how far ahead
//! a side must be before a win is as likely as not, and `b` how quickly the
//! chances change with the score. `a` grows with the cars both sides
//! still have, `b` with how far the race has to go ([`Curve::at`]); their
//! constants were fitted for each evaluation's scores ([`Curve::of`]), by
//! maximum likelihood, to the true results of positions whose values
//! solved tables know (4 x 4 to 6 x 6 for `net`, each board on its own;
//! 4 x 4 and 5 x 5 for `learned`), against the score a search gives them.
//! `examples/fitwdl.rs` does the fitting and prints the constants below;
//! docs/wdl.md says how well the curve predicts positions it was not
//! fitted on.
//!
//! ```
//! use dodgem::Position;
//! use dodgem::wdl::{Curve, Wdl};
//! let start = Position::start(5);
//! let even = Wdl::from_score(0, &start, Curve::net(5));
//! assert_eq!(even.win + even.draw + even.loss, 1000);
//! assert_eq!(even.win, even.loss);
//! assert_eq!(Wdl::from_score(dodgem::search::MATE - 9, &start, Curve::net(5)), Wdl::WIN);
//! ```

use std::fmt;

use crate::board::{Color, Position};
use crate::eval::{Evaluation, moves_to_go};
use crate::score::TABLE_WIN_BOUND;

/// Chances in permille for the side to move; they sum to 1000.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wdl {
    pub win: u32,
    pub draw: u32,
    pub loss: u32,
}

/// The curve's constants for one evaluation's scores: `a = A * w`, where
/// `w` measures how many cars both sides still have on the board
/// ([`Width`]), and `b = B * sqrt(race)`, where `race` is the number of
/// moves both sides still need to drive their cars off (on an empty
/// road). Draws come from cars holding each other up, which takes cars of
/// both sides: with many of them a lead must be large to win, with few a
/// small one decides, and a long race is less certain than a short one.
/// 3 x 3 has no drawn position, so there `a` is 0. `A` (`a_scale`) and
/// `B` (`b_scale`, per square root of a move) are in evaluation units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Curve {
    pub width: Width,
    pub a_scale: f64,
    pub b_scale: f64,
}

/// How the curve's `a` grows with the cars on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// The product of the two sides' cars on the board.
    CarPairs,
    /// The share of all `2 (n - 1)` cars still on the board, squared: the
    /// same on every board for the same share, which the product is not.
    CarShare,
}

impl Curve {
    /// Fitted to `net`'s scores on each board from 4 x 4 to 6 x 6 alone
    /// (see the module docs); 3 x 3 (where `a` is 0) takes 4 x 4's `B`,
    /// 7 x 7 and 8 x 8 (no tables to fit on) 6 x 6's.
    pub fn net(size: usize) -> Curve {
        let (a_scale, b_scale) = match size {
            0..=4 => (310.279, 19.934),
            5 => (417.480, 18.501),
            _ => (373.056, 13.318),
        };
        Curve {
            width: Width::CarShare,
            a_scale,
            b_scale,
        }
    }

    /// Fitted to `learned`'s scores on 4 x 4 and 5 x 5, the same way, when
    /// it was the default (its weights have not changed since).
    pub const LEARNED: Curve = Curve {
        width: Width::CarPairs,
        a_scale: 15.98,
        b_scale: 14.31,
    };

    /// The curve for the scores a search with `evaluation` gives on a
    /// board of `size` (`auto` as [`Evaluation::resolved`] resolves it).
    /// `race` and `textbook` have no fit of their own and take `net`'s.
    pub fn of(evaluation: Evaluation, size: usize) -> Curve {
        match evaluation.resolved() {
            Evaluation::Learned => Curve::LEARNED,
            _ => Curve::net(size),
        }
    }

    /// The curve's `(a, b)` for `position`.
    pub fn at(self, position: &Position) -> (f64, f64) {
        let race = moves_to_go(position, Color::Black) + moves_to_go(position, Color::White);
        // At least one move each: the game is not over.
        let race = f64::from(race.max(2));
        let cars = |color| f64::from(position.cars(color).count_ones());
        let width = match self.width {
            _ if position.size() == 3 => 0.0,
            Width::CarPairs => cars(Color::Black) * cars(Color::White),
            Width::CarShare => {
                let all = 2.0 * (position.size() as f64 - 1.0);
                ((cars(Color::Black) + cars(Color::White)) / all).powi(2)
            }
        };
        (self.a_scale * width, self.b_scale * race.sqrt())
    }
}

impl Wdl {
    pub const WIN: Wdl = Wdl {
        win: 1000,
        draw: 0,
        loss: 0,
    };
    pub const DRAW: Wdl = Wdl {
        win: 0,
        draw: 1000,
        loss: 0,
    };
    pub const LOSS: Wdl = Wdl {
        win: 0,
        draw: 0,
        loss: 1000,
    };

    /// The chances of a search score for `position` (internal units, side
    /// to move's view): exact for a proven result, else from `curve`.
    pub fn from_score(score: i32, position: &Position, curve: Curve) -> Wdl {
        Wdl::proven(score).unwrap_or_else(|| {
            let (a, b) = curve.at(position);
            Wdl::from_chances(chances(f64::from(score), a, b))
        })
    }

    /// The exact chances of a proven result (a mate score, or a win or loss
    /// the tables know); `None` for any other score.
    pub fn proven(score: i32) -> Option<Wdl> {
        if score >= TABLE_WIN_BOUND {
            Some(Wdl::WIN)
        } else if score <= -TABLE_WIN_BOUND {
            Some(Wdl::LOSS)
        } else {
            None
        }
    }

    /// Rounds win and loss chances (each in 0..=1, summing to at most 1)
    /// to permille; the draw takes the rest, so the three sum to 1000.
    pub fn from_chances((win, loss): (f64, f64)) -> Wdl {
        let permille = |p: f64| (p.clamp(0.0, 1.0) * 1000.0).round() as u32;
        let win = permille(win);
        let loss = permille(loss).min(1000 - win);
        Wdl {
            win,
            draw: 1000 - win - loss,
            loss,
        }
    }
}

/// As on an `info` line: `wdl 412 301 287`.
impl fmt::Display for Wdl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wdl {} {} {}", self.win, self.draw, self.loss)
    }
}

/// The curve: win and loss chances of score `s` with constants `a`, `b`.
pub fn chances(s: f64, a: f64, b: f64) -> (f64, f64) {
    let logistic = |x: f64| 1.0 / (1.0 + (-x).exp());
    (logistic((s - a) / b), logistic((-s - a) / b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::MATE;

    #[test]
    fn chances_sum_to_1000_and_grow_with_the_score() {
        let positions = [
            "2B/3/1W1 w",
            "B2/B2/1WW b",
            "B4/B4/B4/B4/1WWWW b",
            "7B/8/8/8/8/8/8/W7 b",
        ];
        for position in positions.map(|p| crate::notation::parse_position(p).unwrap()) {
            for curve in [Curve::net(5), Curve::LEARNED] {
                let mut last_win = 0;
                for score in (-3000..=3000).step_by(7) {
                    let wdl = Wdl::from_score(score, &position, curve);
                    assert_eq!(wdl.win + wdl.draw + wdl.loss, 1000, "{score} {wdl:?}");
                    assert!(wdl.win >= last_win, "{score}");
                    last_win = wdl.win;
                    let mirrored = Wdl::from_score(-score, &position, curve);
                    assert_eq!((wdl.win, wdl.loss), (mirrored.loss, mirrored.win));
                }
            }
        }
    }

    #[test]
    fn proven_results_are_exact() {
        let start = Position::start(6);
        let curve = Curve::net(5);
        assert_eq!(Wdl::from_score(MATE - 1, &start, curve), Wdl::WIN);
        assert_eq!(Wdl::from_score(-(MATE - 40), &start, curve), Wdl::LOSS);
        assert_eq!(Wdl::from_score(30_000 - 17, &start, curve), Wdl::WIN);
        assert_eq!(Wdl::from_score(-(30_000 - 999), &start, curve), Wdl::LOSS);
        assert_eq!(Wdl::proven(250), None);
    }

    #[test]
    fn each_evaluation_reads_its_scores_on_its_own_curve() {
        use Evaluation::*;
        assert_eq!(Curve::of(Auto, 6), Curve::net(6));
        assert_eq!(Curve::of(Auto, 8), Curve::net(8));
        assert_eq!(Curve::of(Learned, 5), Curve::LEARNED);
        assert_eq!(Curve::of(Learned, 7), Curve::LEARNED);
        assert_eq!(Curve::of(Net, 8), Curve::net(8));
        assert_eq!(Curve::of(Race, 5), Curve::net(5));
        // The same score means other chances on the two evaluations' scales.
        let position = Position::start(7);
        let net = Wdl::from_score(300, &position, Curve::of(Net, 7));
        let learned = Wdl::from_score(300, &position, Curve::of(Learned, 7));
        assert_ne!(learned, net);
    }

    #[test]
    fn rounding_never_breaks_the_sum() {
        for (win, loss) in [(0.9996, 0.0004), (0.4995, 0.5005), (1.0, 0.0), (0.0, 0.0)] {
            let wdl = Wdl::from_chances((win, loss));
            assert_eq!(wdl.win + wdl.draw + wdl.loss, 1000, "{wdl:?}");
        }
        assert_eq!(Wdl::WIN.to_string(), "wdl 1000 0 0");
    }
}

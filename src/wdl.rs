//! Win/draw/loss chances (`UCI_ShowWDL`): the `wdl <win> <draw> <loss>`
//! of an `info` line, in permille from the side to move's point of view,
//! always summing to 1000.
//!
//! A position a solved table decides, or a forced result the search has
//! proved (a `mate` score, a layered-table win or loss), is exact: 1000, 0,
//! 0 and so on. Any other score `s` (evaluation units) is mapped to
//! chances by a [`Curve`] fitted for the evaluation's scores on the board
//! ([`Curve::of`]):
//!
//! - `net` (the default) on 4 x 4 to 8 x 8: a table of the win chance at
//!   17 scores from -1000 to 1000, linear between them ([`Knots`]); the
//!   loss chance at `s` is the win chance at `-s`, or, where that
//!   predicted held-out positions better (4 x 4, 5 x 5 `classic`, 6 x 6
//!   `textbook` and 7 x 7), read off a loss table of its own. On 4 x 4 to
//!   6 x 6 the tables are fitted to the true values of positions solved
//!   tables know, one for each rule (under `classic` a blocked side wins,
//!   so the same score means more wins and fewer draws there; and on 5 x 5
//!   `textbook` and on 6 x 6 a network of that board and rule alone gives
//!   the scores); on 7 x 7 and 8 x 8, where no table reaches the middle
//!   game, to the outcomes of the engine's games against itself at
//!   1+0.01, so there they say how such a game ends, not what perfect
//!   play would give
//!   (and games at another speed end otherwise: at 30,000 nodes a move
//!   7 x 7 games draw about 70% where 1+0.01 games draw 63%).
//! - `learned`, and 3 x 3: a logistic curve for each outcome ([`Logistic`]),
//!
//!   ```text
//!   win  = 1 / (1 + exp((a - s) / b))
//!   loss = 1 / (1 + exp((a + s) / b))
//!   draw = 1 - win - loss
//!   ```
//!
//!   where `a` (>= 0) is how far ahead a side must be before a win is as
//!   likely as not (it grows with the cars both sides still have) and `b`
//!   how quickly the chances change with the score (it grows with how far
//!   the race has to go), fitted by maximum likelihood.
//!
//! `examples/fitwdl.rs` does the fitting and prints the tables and
//! constants below; docs/wdl.md shows, board by board, the predicted
//! chances against the observed results of positions it was not fitted
//! on.
//!
//! ```
//! use dodgem::{Position, Rules};
//! use dodgem::wdl::{Curve, Wdl};
//! let start = Position::start(6);
//! let even = Wdl::from_score(0, &start, Curve::net(6, Rules::Textbook));
//! assert_eq!(even.win + even.draw + even.loss, 1000);
//! assert!(even.draw >= 990, "an even 6 x 6 score is nearly always a draw: {even:?}");
//! assert_eq!(Wdl::from_score(dodgem::search::MATE - 9, &start, Curve::net(5, Rules::Classic)), Wdl::WIN);
//! ```

use std::fmt;

use crate::board::{Color, Position, Rules};
use crate::eval::{Evaluation, moves_to_go};
use crate::score::TABLE_WIN_BOUND;

/// Chances in permille for the side to move; they sum to 1000.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wdl {
    pub win: u32,
    pub draw: u32,
    pub loss: u32,
}

/// How a score becomes win and loss chances for one evaluation's scores
/// on one board.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Curve {
    /// A logistic curve whose width follows the position ([`Logistic`]):
    /// fitted to the true values of positions solved tables know.
    Logistic(Logistic),
    /// Chances read off a table of scores ([`Knots`]): fitted to the
    /// outcomes of games, on boards no table reaches.
    Knots(&'static Knots<'static>),
}

/// The logistic curve's constants: `a = A * w`, where `w` measures how
/// many cars both sides still have on the board ([`Width`]), and `b = B *
/// sqrt(race)`, where `race` is the number of moves both sides still need
/// to drive their cars off (on an empty road). Draws come from cars
/// holding each other up, which takes cars of both sides: with many of
/// them a lead must be large to win, with few a small one decides, and a
/// long race is less certain than a short one. 3 x 3 has no drawn
/// position, so there `a` is 0. `A` (`a_scale`) and `B` (`b_scale`, per
/// square root of a move) are in evaluation units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Logistic {
    pub width: Width,
    pub a_scale: f64,
    pub b_scale: f64,
}

/// The win chance at a few scores, rising, linear between them and flat
/// beyond the first and the last; the loss chance at `s` is the win
/// chance at `-s` (the side to move's score means the same for either
/// colour), or, where a rule breaks that mirror, read off a table of its
/// own. Where the outcome of a game hardly follows the score over a
/// wide middle and then suddenly does (a race the evaluation sees won),
/// no logistic curve fits both; a table does.
#[derive(Debug, PartialEq)]
pub struct Knots<'a> {
    /// `(score, win chance)`, scores rising and symmetric about 0.
    pub points: &'a [(i32, f64)],
    /// `(score, loss chance at minus the score)`, read as `points` are:
    /// the loss chance's own table, where the loss chance at `s` is not
    /// the win chance at `-s`. Under `classic` a blocked side wins, so a
    /// position good for the side to move is not the mirror of one bad
    /// for it (4 x 4: at +75 to +150 the side to move wins 17 to 22%, at
    /// -150 to -75 it loses 11 to 13%).
    pub loss: Option<&'a [(i32, f64)]>,
}

impl Knots<'_> {
    /// The win chance at score `s`.
    pub fn win(&self, s: f64) -> f64 {
        read(self.points, s)
    }

    /// The loss chance at score `s`.
    pub fn loss(&self, s: f64) -> f64 {
        read(self.loss.unwrap_or(self.points), -s)
    }

    /// The win and loss chances at score `s` (summing to at most 1).
    pub fn chances(&self, s: f64) -> (f64, f64) {
        let (mut win, mut loss) = (self.win(s), self.loss(s));
        // A loss table of its own is fitted apart from the win table, and
        // their floors may cross near an even score: the side ahead is at
        // least as likely to win as to lose, whatever the tables say.
        if s < 0.0 {
            win = win.min(loss);
        } else if s > 0.0 {
            loss = loss.min(win);
        }
        (win, loss.min(1.0 - win))
    }
}

/// A knot table's chance at `s`: linear between its points, flat beyond
/// the first and the last.
fn read(points: &[(i32, f64)], s: f64) -> f64 {
    let (first, last) = (points[0], points[points.len() - 1]);
    if s <= f64::from(first.0) {
        return first.1;
    }
    if s >= f64::from(last.0) {
        return last.1;
    }
    let right = points.partition_point(|&(score, _)| f64::from(score) <= s);
    let ((x0, y0), (x1, y1)) = (points[right - 1], points[right]);
    let t = (s - f64::from(x0)) / f64::from(x1 - x0);
    y0 + t * (y1 - y0)
}

/// How the logistic curve's `a` grows with the cars on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// The product of the two sides' cars on the board.
    CarPairs,
    /// The share of all `2 (n - 1)` cars still on the board, squared: the
    /// same on every board for the same share, which the product is not.
    CarShare,
}

// `net`'s knots (`examples/fitwdl.rs --knots-only` prints them): 4 x 4
// and 5 x 5 from positions of games between random levels, each rule
// alone (`--seed 3`, 1,200 games a board and rule), with a loss table
// where it predicted held-out positions better, each labelled by the
// solved tables; 5 x 5 `textbook` and 6 x 6 under each rule fitted again
// for their networks of one board (`--tables t5-textbook --check DIR
// --games 0 --check-games 1200 --seed 3 --knots-only --fit-checks`, DIR
// their tables, 28 and 29 November);
// 7 x 7 from 1,200 games of the engine against itself at 1+0.01 on an
// otherwise idle 2-core machine (`--seed 51` and `--seed 52`; a loss
// table of its own predicted held-out games a little better) and 8 x 8
// from 800 at
// 1+0.01, labelled by how they ended (docs/wdl.md). A score of exactly 0,
// mostly a draw the search found, has a knot of its own.
static NET_4_TEXTBOOK: Knots<'static> = Knots {
    points: &[
        (-1000, 0.0000),
        (-600, 0.0000),
        (-400, 0.0080),
        (-300, 0.0080),
        (-200, 0.0080),
        (-150, 0.0080),
        (-100, 0.0080),
        (-50, 0.0080),
        (-1, 0.0080),
        (0, 0.0316),
        (1, 0.0362),
        (50, 0.0362),
        (100, 0.0362),
        (150, 0.0792),
        (200, 0.1703),
        (300, 0.2939),
        (400, 0.6966),
        (600, 0.9321),
        (1000, 1.0000),
    ],
    loss: Some(&[
        (-1000, 0.0000),
        (-600, 0.0099),
        (-400, 0.0099),
        (-300, 0.0099),
        (-200, 0.0099),
        (-150, 0.0099),
        (-100, 0.0103),
        (-50, 0.0120),
        (-1, 0.0120),
        (0, 0.0120),
        (1, 0.0120),
        (50, 0.0120),
        (100, 0.0120),
        (150, 0.0640),
        (200, 0.1024),
        (300, 0.2054),
        (400, 0.6421),
        (600, 0.9373),
        (1000, 1.0000),
    ]),
};
static NET_4_CLASSIC: Knots<'static> = Knots {
    points: &[
        (-1000, 0.0000),
        (-600, 0.0000),
        (-400, 0.0000),
        (-300, 0.0000),
        (-200, 0.0000),
        (-150, 0.0039),
        (-100, 0.0105),
        (-50, 0.0395),
        (-1, 0.0395),
        (0, 0.0395),
        (1, 0.1774),
        (50, 0.1774),
        (100, 0.1774),
        (150, 0.3593),
        (200, 0.4313),
        (300, 0.5205),
        (400, 0.9431),
        (600, 1.0000),
        (1000, 1.0000),
    ],
    loss: Some(&[
        (-1000, 0.0000),
        (-600, 0.0000),
        (-400, 0.0000),
        (-300, 0.0000),
        (-200, 0.0000),
        (-150, 0.0000),
        (-100, 0.0043),
        (-50, 0.0358),
        (-1, 0.0358),
        (0, 0.0358),
        (1, 0.1803),
        (50, 0.1803),
        (100, 0.1803),
        (150, 0.2147),
        (200, 0.3226),
        (300, 0.5432),
        (400, 0.9018),
        (600, 0.9998),
        (1000, 1.0000),
    ]),
};
static NET_5_TEXTBOOK: Knots<'static> = Knots {
    points: &[
        (-1000, 0.0000),
        (-600, 0.0000),
        (-400, 0.0000),
        (-300, 0.0000),
        (-200, 0.0000),
        (-150, 0.0000),
        (-100, 0.0000),
        (-50, 0.0001),
        (-1, 0.0001),
        (0, 0.0045),
        (1, 0.0045),
        (50, 0.0045),
        (100, 0.0108),
        (150, 0.0265),
        (200, 0.0692),
        (300, 0.1714),
        (400, 0.4056),
        (600, 0.7740),
        (1000, 0.9839),
    ],
    loss: None,
};
static NET_5_CLASSIC: Knots<'static> = Knots {
    points: &[
        (-1000, 0.0000),
        (-600, 0.0000),
        (-400, 0.0000),
        (-300, 0.0000),
        (-200, 0.0005),
        (-150, 0.0036),
        (-100, 0.0036),
        (-50, 0.0036),
        (-1, 0.0036),
        (0, 0.0060),
        (1, 0.0060),
        (50, 0.0157),
        (100, 0.0429),
        (150, 0.0712),
        (200, 0.1050),
        (300, 0.2648),
        (400, 0.6957),
        (600, 0.9479),
        (1000, 1.0000),
    ],
    loss: Some(&[
        (-1000, 0.0000),
        (-600, 0.0000),
        (-400, 0.0000),
        (-300, 0.0009),
        (-200, 0.0013),
        (-150, 0.0020),
        (-100, 0.0020),
        (-50, 0.0020),
        (-1, 0.0020),
        (0, 0.0022),
        (1, 0.0056),
        (50, 0.0112),
        (100, 0.0210),
        (150, 0.0384),
        (200, 0.0839),
        (300, 0.2190),
        (400, 0.6396),
        (600, 0.9270),
        (1000, 1.0000),
    ]),
};
static NET_6_TEXTBOOK: Knots<'static> = Knots {
    points: &[
        (-1000, 0.0000),
        (-600, 0.0029),
        (-400, 0.0029),
        (-300, 0.0029),
        (-200, 0.0029),
        (-150, 0.0029),
        (-100, 0.0029),
        (-50, 0.0029),
        (-1, 0.0029),
        (0, 0.0029),
        (1, 0.0029),
        (50, 0.0076),
        (100, 0.0172),
        (150, 0.0377),
        (200, 0.1074),
        (300, 0.2549),
        (400, 0.5256),
        (600, 0.7498),
        (1000, 0.9614),
    ],
    loss: Some(&[
        (-1000, 0.0000),
        (-600, 0.0001),
        (-400, 0.0014),
        (-300, 0.0014),
        (-200, 0.0014),
        (-150, 0.0014),
        (-100, 0.0014),
        (-50, 0.0014),
        (-1, 0.0014),
        (0, 0.0019),
        (1, 0.0019),
        (50, 0.0065),
        (100, 0.0145),
        (150, 0.0231),
        (200, 0.0687),
        (300, 0.1984),
        (400, 0.4500),
        (600, 0.7003),
        (1000, 0.9574),
    ]),
};
static NET_6_CLASSIC: Knots<'static> = Knots {
    points: &[
        (-1000, 0.0011),
        (-600, 0.0011),
        (-400, 0.0013),
        (-300, 0.0025),
        (-200, 0.0025),
        (-150, 0.0025),
        (-100, 0.0025),
        (-50, 0.0025),
        (-1, 0.0025),
        (0, 0.0048),
        (1, 0.0048),
        (50, 0.0072),
        (100, 0.0201),
        (150, 0.0477),
        (200, 0.1006),
        (300, 0.2251),
        (400, 0.3825),
        (600, 0.5825),
        (1000, 0.8812),
    ],
    loss: None,
};

static NET_7: Knots<'static> = Knots {
    points: &[
        (-1000, 0.0000),
        (-600, 0.0003),
        (-400, 0.0036),
        (-300, 0.0134),
        (-200, 0.0298),
        (-150, 0.0774),
        (-100, 0.1365),
        (-50, 0.1455),
        (-1, 0.1455),
        (0, 0.1455),
        (1, 0.1760),
        (50, 0.1760),
        (100, 0.1805),
        (150, 0.1805),
        (200, 0.1919),
        (300, 0.2708),
        (400, 0.5461),
        (600, 0.9508),
        (1000, 0.9999),
    ],
    loss: Some(&[
        (-1000, 0.0000),
        (-600, 0.0001),
        (-400, 0.0052),
        (-300, 0.0186),
        (-200, 0.0369),
        (-150, 0.1104),
        (-100, 0.1507),
        (-50, 0.1507),
        (-1, 0.1507),
        (0, 0.1507),
        (1, 0.1790),
        (50, 0.1790),
        (100, 0.1790),
        (150, 0.1790),
        (200, 0.1908),
        (300, 0.2820),
        (400, 0.5843),
        (600, 0.9601),
        (1000, 0.9999),
    ]),
};
static NET_8: Knots<'static> = Knots {
    points: &[
        (-1000, 0.0000),
        (-600, 0.0011),
        (-400, 0.0247),
        (-300, 0.1219),
        (-200, 0.1795),
        (-150, 0.2092),
        (-100, 0.2103),
        (-50, 0.2103),
        (-1, 0.2103),
        (0, 0.2103),
        (1, 0.2302),
        (50, 0.2385),
        (100, 0.2500),
        (150, 0.2500),
        (200, 0.2864),
        (300, 0.4005),
        (400, 0.6761),
        (600, 0.9456),
        (1000, 0.9980),
    ],
    loss: None,
};

impl Curve {
    /// `net`'s curve on a board of `size` under `rules`: knots fitted on
    /// each board from 4 x 4 up alone, on 4 x 4 and 5 x 5 on each rule
    /// alone (see the module docs); on 3 x 3, which has no draw, a
    /// logistic curve (`a` is 0 there).
    pub fn net(size: usize, rules: Rules) -> Curve {
        match (size, rules) {
            (0..=3, _) => Curve::Logistic(Logistic {
                width: Width::CarShare,
                a_scale: 0.0,
                b_scale: 19.934,
            }),
            (4, Rules::Textbook) => Curve::Knots(&NET_4_TEXTBOOK),
            (4, Rules::Classic) => Curve::Knots(&NET_4_CLASSIC),
            (5, Rules::Textbook) => Curve::Knots(&NET_5_TEXTBOOK),
            (5, Rules::Classic) => Curve::Knots(&NET_5_CLASSIC),
            (6, Rules::Textbook) => Curve::Knots(&NET_6_TEXTBOOK),
            (6, Rules::Classic) => Curve::Knots(&NET_6_CLASSIC),
            (7, _) => Curve::Knots(&NET_7),
            _ => Curve::Knots(&NET_8),
        }
    }

    /// Fitted to `learned`'s scores on 4 x 4 and 5 x 5, the same way, when
    /// it was the default (its weights have not changed since).
    pub const LEARNED: Curve = Curve::Logistic(Logistic {
        width: Width::CarPairs,
        a_scale: 15.98,
        b_scale: 14.31,
    });

    /// The curve for the scores a search with `evaluation` gives on a
    /// board of `size` under `rules` (`auto` as [`Evaluation::resolved`]
    /// resolves it). `race` and `textbook` have no fit of their own and
    /// take `net`'s.
    pub fn of(evaluation: Evaluation, size: usize, rules: Rules) -> Curve {
        match evaluation.resolved() {
            Evaluation::Learned => Curve::LEARNED,
            _ => Curve::net(size, rules),
        }
    }

    /// The win and loss chances (each in 0..=1, summing to at most 1) of
    /// score `s` in `position`.
    pub fn chances(self, s: f64, position: &Position) -> (f64, f64) {
        match self {
            Curve::Logistic(logistic) => {
                let (a, b) = logistic.at(position);
                chances(s, a, b)
            }
            Curve::Knots(knots) => knots.chances(s),
        }
    }
}

impl Logistic {
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
        Wdl::proven(score)
            .unwrap_or_else(|| Wdl::from_chances(curve.chances(f64::from(score), position)))
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

/// The logistic curve: win and loss chances of score `s` with constants
/// `a`, `b`.
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
            let curves = [
                Curve::net(4, Rules::Classic),
                Curve::net(5, Rules::Textbook),
                Curve::net(5, Rules::Classic),
                Curve::net(7, Rules::Textbook),
                Curve::net(8, Rules::Textbook),
                Curve::LEARNED,
            ];
            for curve in curves {
                // A curve with a loss table of its own is not its mirror.
                let mirror = !matches!(curve, Curve::Knots(Knots { loss: Some(_), .. }));
                let (mut last_win, mut last_loss) = (0, 1000);
                for score in (-3000..=3000).step_by(7) {
                    let wdl = Wdl::from_score(score, &position, curve);
                    assert_eq!(wdl.win + wdl.draw + wdl.loss, 1000, "{score} {wdl:?}");
                    assert!(wdl.win >= last_win && wdl.loss <= last_loss, "{score}");
                    (last_win, last_loss) = (wdl.win, wdl.loss);
                    let mirrored = Wdl::from_score(-score, &position, curve);
                    if mirror {
                        assert_eq!((wdl.win, wdl.loss), (mirrored.loss, mirrored.win));
                    }
                }
            }
        }
    }

    #[test]
    fn proven_results_are_exact() {
        let start = Position::start(6);
        let curve = Curve::net(5, Rules::Textbook);
        assert_eq!(Wdl::from_score(MATE - 1, &start, curve), Wdl::WIN);
        assert_eq!(Wdl::from_score(-(MATE - 40), &start, curve), Wdl::LOSS);
        assert_eq!(Wdl::from_score(30_000 - 17, &start, curve), Wdl::WIN);
        assert_eq!(Wdl::from_score(-(30_000 - 999), &start, curve), Wdl::LOSS);
        assert_eq!(Wdl::proven(250), None);
    }

    #[test]
    fn each_evaluation_reads_its_scores_on_its_own_curve() {
        use Evaluation::*;
        use Rules::{Classic, Textbook};
        assert_eq!(Curve::of(Auto, 6, Textbook), Curve::net(6, Textbook));
        assert_eq!(Curve::of(Auto, 8, Classic), Curve::net(8, Classic));
        assert_eq!(Curve::of(Auto, 5, Classic), Curve::net(5, Classic));
        assert_eq!(Curve::of(Learned, 5, Textbook), Curve::LEARNED);
        assert_eq!(Curve::of(Learned, 7, Classic), Curve::LEARNED);
        assert_eq!(Curve::of(Net, 8, Textbook), Curve::net(8, Textbook));
        assert_eq!(Curve::of(Race, 5, Textbook), Curve::net(5, Textbook));
        // Under `classic` a blocked side wins: the same lead wins more often.
        let five = Position::start(5);
        let textbook = Wdl::from_score(300, &five, Curve::of(Auto, 5, Textbook));
        let classic = Wdl::from_score(300, &five, Curve::of(Auto, 5, Classic));
        assert!(classic.win > textbook.win, "{classic:?} {textbook:?}");
        assert_ne!(Curve::net(4, Classic), Curve::net(4, Textbook));
        // Each rule has a 6 x 6 network of its own, and so its own curve.
        assert_ne!(Curve::net(6, Classic), Curve::net(6, Textbook));
        // The same score means other chances on the two evaluations' scales.
        let position = Position::start(7);
        let net = Wdl::from_score(300, &position, Curve::of(Net, 7, Textbook));
        let learned = Wdl::from_score(300, &position, Curve::of(Learned, 7, Textbook));
        assert_ne!(learned, net);
    }

    #[test]
    fn the_side_ahead_is_never_likelier_to_lose_than_to_win() {
        for size in crate::board::MIN_SIZE..=crate::board::MAX_SIZE {
            let position = Position::start(size);
            for rules in Rules::ALL {
                for score in (-1500..=1500).step_by(7) {
                    let wdl = Wdl::from_score(score, &position, Curve::net(size, rules));
                    match score.signum() {
                        1 => assert!(wdl.win >= wdl.loss, "{size} {rules:?} {score}: {wdl}"),
                        -1 => assert!(wdl.win <= wdl.loss, "{size} {rules:?} {score}: {wdl}"),
                        _ => {}
                    }
                }
            }
        }
    }

    #[test]
    fn crossing_tables_never_favour_the_side_behind() {
        let knots = Knots {
            points: &[(-100, 0.006), (0, 0.006), (100, 0.3)],
            loss: Some(&[(-100, 0.0), (0, 0.002), (50, 0.003), (100, 0.3)]),
        };
        // Behind by 20: the tables alone say 0.6% to win and 0.24% to lose.
        assert!(knots.win(-20.0) > knots.loss(-20.0));
        let (win, loss) = knots.chances(-20.0);
        assert!(win <= loss, "{win} {loss}");
        let (win, loss) = knots.chances(20.0);
        assert!(win >= loss, "{win} {loss}");
    }

    #[test]
    fn knots_are_read_linearly_between_and_flat_beyond() {
        let knots = Knots {
            points: &[(-100, 0.0), (0, 0.2), (100, 0.6)],
            loss: None,
        };
        assert_eq!(knots.win(-500.0), 0.0);
        assert_eq!(knots.win(0.0), 0.2);
        assert!((knots.win(50.0) - 0.4).abs() < 1e-12);
        assert!((knots.win(-25.0) - 0.15).abs() < 1e-12);
        assert_eq!(knots.win(700.0), 0.6);
        // The loss at 50 is the win at -50; the two never exceed 1.
        let (win, loss) = knots.chances(50.0);
        assert!((win - 0.4).abs() < 1e-12 && (loss - 0.1).abs() < 1e-12);
        let greedy = Knots {
            points: &[(-10, 0.7), (10, 0.7)],
            loss: None,
        };
        let (win, loss) = greedy.chances(0.0);
        assert!(win == 0.7 && (loss - 0.3).abs() < 1e-12);
        // A loss table of its own is read at minus the score.
        let lopsided = Knots {
            points: &[(-100, 0.0), (0, 0.2), (100, 0.6)],
            loss: Some(&[(-100, 0.0), (0, 0.1), (100, 0.3)]),
        };
        let (win, loss) = lopsided.chances(-50.0);
        assert!((win - 0.1).abs() < 1e-12 && (loss - 0.2).abs() < 1e-12);
        assert!((lopsided.loss(100.0) - 0.0).abs() < 1e-12);
        assert!((knots.loss(100.0) - knots.win(-100.0)).abs() < 1e-12);
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

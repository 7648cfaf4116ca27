//! The network evaluation: the learned evaluation's model (linear
//! features and car patterns, [`learned`]) with a small neural network
//! over the same features added to it, all fitted together to solved
//! results by the tuner (`cargo run --release --example tune -- --hidden
//! N`, see docs/strength.md).
//!
//! The network is one hidden layer of [`net_weights::HIDDEN`] rectified
//! linear units over the scaled features ([`Network::inputs`]); their
//! weighted sum is added to the linear model's score. It sees the same
//! size-independent features as the linear model; what it adds is
//! their interplay (a race lead is worth more with free lanes, a blocked
//! car less when the blocker must leave first...), which a weighted sum
//! cannot express. It is computed in `f32`, the units in the inner loop
//! so that the compiler can add several at once.
//!
//! Two fits, chosen by the board ([`Network::for_board`]): [`SMALL`],
//! fitted on 4 x 4 to 6 x 6, and [`LARGE`] for 7 x 7 and 8 x 8, fitted
//! on the same positions and on 7 x 7 and 8 x 8 endgame positions, its
//! race lead bounded (a network knows only the leads it was fitted on).
//! One fit for every board lost to [`SMALL`] on 6 x 6, where [`SMALL`]
//! saw more of the board (docs/strength.md).

use crate::board::Position;

use super::learned::{self, FEATURES, MAX_EVAL, Weights};
use super::net_large_weights;
use super::net_weights::{self, HIDDEN};

/// One fitted network evaluation: the linear part's weights (checked by
/// the types of [`Weights`], as the learned evaluation's are), the hidden
/// units' and the output's, and the bound of the race lead it was fitted
/// with.
pub struct Network {
    pub linear: Weights,
    hidden_weights: &'static [[f32; HIDDEN]; FEATURES],
    hidden_biases: &'static [f32; HIDDEN],
    output_weights: &'static [f32; HIDDEN],
    /// The race lead, in moves, is bounded to this either way, in the
    /// linear part and the hidden units alike (`i32::MAX`: not bounded).
    pub lead_bound: i32,
}

/// The network fitted on 4 x 4 to 6 x 6 positions.
pub static SMALL: Network = Network {
    linear: Weights {
        bias: net_weights::BIAS,
        features: &net_weights::WEIGHTS,
        ours: &net_weights::OUR_PATTERNS,
        theirs: &net_weights::THEIR_PATTERNS,
    },
    hidden_weights: &net_weights::HIDDEN_WEIGHTS,
    hidden_biases: &net_weights::HIDDEN_BIASES,
    output_weights: &net_weights::OUTPUT_WEIGHTS,
    lead_bound: i32::MAX,
};

/// The network for 7 x 7 and 8 x 8, fitted with endgame positions of
/// those boards too, its lead bounded by [`LEAD_BOUND`].
pub static LARGE: Network = Network {
    linear: Weights {
        bias: net_large_weights::BIAS,
        features: &net_large_weights::WEIGHTS,
        ours: &net_large_weights::OUR_PATTERNS,
        theirs: &net_large_weights::THEIR_PATTERNS,
    },
    hidden_weights: &net_large_weights::HIDDEN_WEIGHTS,
    hidden_biases: &net_large_weights::HIDDEN_BIASES,
    output_weights: &net_large_weights::OUTPUT_WEIGHTS,
    lead_bound: LEAD_BOUND,
};

// The weights files give their number of rows as numbers too, and
// `network` zips the rows with the features: a row too many would be
// ignored and one too few would leave a feature out, without a word.
const _: () = assert!(net_weights::HIDDEN_WEIGHTS.len() == FEATURES);
const _: () = assert!(net_large_weights::HIDDEN_WEIGHTS.len() == FEATURES);
const _: () = assert!(net_large_weights::HIDDEN == HIDDEN);

/// The race lead [`LARGE`] sees is bounded to this many moves either
/// way: a lead of more is decisive on every board.
pub const LEAD_BOUND: i32 = 6;

/// The smallest board [`LARGE`] plays.
pub const LARGE_MIN_SIZE: usize = 7;

/// Index of the race lead among the features.
const LEAD: usize = 2 * learned::SIDE_FEATURES.len() + 3;

/// The network evaluation from the side to move's point of view.
pub fn evaluate(position: &Position) -> i32 {
    Network::for_board(position.size()).evaluate(position)
}

/// The linear part's contributions ([`learned::contributions`]) and the
/// network's: they add up to [`evaluate`] (short of its bound).
pub fn contributions(position: &Position) -> Vec<(String, i32)> {
    let network = Network::for_board(position.size());
    let (f, patterns) = learned::analyse(position);
    let f = network.bounded(f);
    let mut out = learned::contributions_of(&network.linear, &f, &patterns);
    out.push(("network".into(), network.network(&f, position.size())));
    out
}

/// How a feature is scaled for the network, so that its inputs span the
/// same range on every board (a weighted sum extrapolates to larger
/// boards gracefully, a network does not): counts of cars (cars blocked,
/// mobility...) per car a side starts with, moves to go per move a side
/// needs at the start, counts of pairs of cars per pair; the race lead
/// and its bands as they are (a tempo is a tempo on every board).
const fn scale_class(i: usize) -> u8 {
    let n = learned::SIDE_FEATURES.len();
    match i {
        0 => 2,
        i if i < n => 1,
        i if i == n => 2,
        i if i < 2 * n => 1,
        i if i < 2 * n + 3 => 3,
        _ => 0,
    }
}

impl Network {
    /// The fit for a board of `size`.
    pub fn for_board(size: usize) -> &'static Network {
        if size >= LARGE_MIN_SIZE {
            &LARGE
        } else {
            &SMALL
        }
    }

    /// The evaluation from the side to move's point of view.
    pub fn evaluate(&self, position: &Position) -> i32 {
        let (f, patterns) = learned::analyse(position);
        let f = self.bounded(f);
        let net = self.network(&f, position.size());
        (learned::linear(&self.linear, &f, &patterns) + net).clamp(-MAX_EVAL, MAX_EVAL)
    }

    /// The features as this network reads them, in its linear part and
    /// its hidden units alike: the race lead bounded by its `lead_bound`.
    pub fn bounded(&self, mut features: [i32; FEATURES]) -> [i32; FEATURES] {
        features[LEAD] = features[LEAD].clamp(-self.lead_bound, self.lead_bound);
        features
    }

    /// The hidden units' inputs for the features of a position on a
    /// board of `size` (see [`scale_class`]; bounded first).
    pub fn inputs(&self, features: &[i32; FEATURES], size: usize) -> [f32; FEATURES] {
        let cars = (size - 1) as f32;
        let per = [
            1.0,
            1.0 / cars,
            1.0 / (cars * size as f32),
            1.0 / (cars * cars),
        ];
        let features = self.bounded(*features);
        std::array::from_fn(|i| features[i] as f32 * per[usize::from(scale_class(i))])
    }

    /// What the hidden units add to the linear score, in evaluation
    /// units, for the features of a position on a board of `size`.
    pub fn network(&self, features: &[i32; FEATURES], size: usize) -> i32 {
        let mut units = *self.hidden_biases;
        for (row, &x) in self.hidden_weights.iter().zip(&self.inputs(features, size)) {
            if x != 0.0 {
                for (unit, &w) in units.iter_mut().zip(row) {
                    *unit += w * x;
                }
            }
        }
        let mut out = 0.0f32;
        for (unit, &w) in units.iter().zip(self.output_weights) {
            out += w * unit.max(0.0);
        }
        // Well inside i32: the bound keeps a wild input from overflowing.
        out.clamp(-(MAX_EVAL as f32), MAX_EVAL as f32).round() as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Color;
    use crate::notation::parse_position;

    /// The network by the textbook formula, one unit at a time in `f64`.
    fn network_by_units(net: &Network, features: &[i32; FEATURES], size: usize) -> f64 {
        let x = net.inputs(features, size);
        (0..HIDDEN)
            .map(|j| {
                let a = f64::from(net.hidden_biases[j])
                    + (0..FEATURES)
                        .map(|i| f64::from(net.hidden_weights[i][j]) * f64::from(x[i]))
                        .sum::<f64>();
                f64::from(net.output_weights[j]) * a.max(0.0)
            })
            .sum()
    }

    #[test]
    fn the_network_is_the_sum_of_its_units() {
        for text in [
            "B4/1B3/2BW1/B1W2/1W1W1 b",
            "BW3/2B2/2W1B/B4/3W1 b",
            "2W2/3BB/4W/B3B/3WW b",
            "6/B2W2/1B4/2B1W1/B2W2/1W3B w",
            "B2/B2/1WW b",
            "7/1B1W3/BWB4/4B2/7/2B4/2B4 b",
            "8/8/8/8/8/8/7B/1WWWWWWW b",
        ] {
            let position = parse_position(text).unwrap();
            let f = learned::features(&position);
            for net in [&SMALL, &LARGE] {
                let fast = f64::from(net.network(&f, position.size()));
                let slow = network_by_units(net, &f, position.size());
                assert!((fast - slow).abs() <= 1.0, "{text}: {fast} against {slow}");
            }
        }
    }

    #[test]
    fn each_board_has_its_fit() {
        for size in crate::board::MIN_SIZE..=crate::board::MAX_SIZE {
            let expected = if size >= LARGE_MIN_SIZE {
                &LARGE
            } else {
                &SMALL
            };
            assert!(std::ptr::eq(Network::for_board(size), expected), "{size}");
            let start = Position::start(size);
            assert_eq!(evaluate(&start), expected.evaluate(&start));
        }
    }

    #[test]
    fn colours_are_symmetric_and_every_size_is_bounded() {
        // The mirror image (diagonal, colours swapped) has the same value.
        let position = parse_position("B3/1WB1/B3/1WW1 b").unwrap();
        let mirror = parse_position("4/B1W1/B1B1/1W1W w").unwrap();
        assert_eq!(evaluate(&position), evaluate(&mirror));
        for size in crate::board::MIN_SIZE..=crate::board::MAX_SIZE {
            let start = Position::start(size);
            assert_eq!(
                evaluate(&start),
                evaluate(&start.with_side_to_move(Color::White))
            );
            assert!(evaluate(&start).abs() < MAX_EVAL);
        }
    }

    #[test]
    fn inputs_span_the_same_range_on_every_board() {
        // At the start each side needs n moves for each of its n - 1
        // cars: scaled, one move per move needed and one car per car.
        let n = learned::SIDE_FEATURES.len();
        for size in crate::board::MIN_SIZE..=crate::board::MAX_SIZE {
            let start = Position::start(size);
            let x = Network::for_board(size).inputs(&learned::features(&start), size);
            for side in [0, n] {
                assert_eq!(x[side], 1.0, "moves to go, {size} x {size}");
                assert_eq!(x[side + 1], 1.0, "cars, {size} x {size}");
            }
            // The race lead is not scaled: a tempo is a tempo.
            assert_eq!(x[2 * n + 3], 0.0);
        }
    }

    #[test]
    fn the_large_fit_bounds_the_race_lead_and_the_small_one_does_not() {
        // 8 x 8: Black's one car one move from its exit, White's seven at
        // the start: a lead of 55 moves, read by `LARGE` as LEAD_BOUND.
        let far = parse_position("8/8/8/8/8/8/7B/1WWWWWWW b").unwrap();
        let f = learned::features(&far);
        assert!(f[LEAD] > LEAD_BOUND, "{}", f[LEAD]);
        let b = LARGE.bounded(f);
        assert_eq!(b[LEAD], LEAD_BOUND);
        assert_eq!(LARGE.inputs(&f, 8), LARGE.inputs(&b, 8));
        assert_ne!(SMALL.inputs(&f, 8), SMALL.inputs(&b, 8));
        assert_eq!(SMALL.bounded(f), f);
        let mut flipped = f;
        flipped[LEAD] = -f[LEAD];
        assert_eq!(LARGE.bounded(flipped)[LEAD], -LEAD_BOUND);
        // Every other feature as it was.
        for i in (0..FEATURES).filter(|&i| i != LEAD) {
            assert_eq!(b[i], f[i], "{}", learned::feature_name(i));
        }
        // The evaluation reads the bounded features.
        let total: i32 = contributions(&far).iter().map(|(_, v)| v).sum();
        assert_eq!(total.clamp(-MAX_EVAL, MAX_EVAL), evaluate(&far));
    }

    #[test]
    fn contributions_add_up() {
        for text in ["BW3/2B2/2W1B/B4/3W1 b", "1W3/2BBB/4W/2WWB/5 w"] {
            let position = parse_position(text).unwrap();
            let total: i32 = contributions(&position).iter().map(|(_, v)| v).sum();
            assert_eq!(total, evaluate(&position), "{text}");
        }
    }
}

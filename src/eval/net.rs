//! The network evaluation: the learned evaluation's model (linear
//! features and car patterns, [`learned`]) with a small neural network
//! over the same features added to it, all fitted together to solved
//! results by the tuner (`cargo run --release --example tune -- --hidden
//! N`, see docs/strength.md).
//!
//! The network is one hidden layer of [`net_weights::HIDDEN`] rectified
//! linear units over the scaled features ([`inputs`]); their weighted sum
//! is added to the linear model's score. It sees the same
//! size-independent features as the linear model, so it means the same on
//! every board; what it adds is
//! their interplay (a race lead is worth more with free lanes, a blocked
//! car less when the blocker must leave first...), which a weighted sum
//! cannot express. It is computed in `f32`, the units in the inner loop
//! so that the compiler can add several at once.

use crate::board::Position;

use super::learned::{self, FEATURES, MAX_EVAL, Weights};
use super::net_weights::{self, HIDDEN_BIASES, HIDDEN_WEIGHTS, OUTPUT_WEIGHTS};

/// The network evaluation's linear part. Like the learned evaluation's
/// (see [`learned::LEARNED`]), the types of [`Weights`] check the lengths
/// the weights file gives as numbers when the crate compiles.
pub const LINEAR: Weights = Weights {
    bias: net_weights::BIAS,
    features: &net_weights::WEIGHTS,
    ours: &net_weights::OUR_PATTERNS,
    theirs: &net_weights::THEIR_PATTERNS,
};

// The weights file gives its number of rows as a number too, and
// `network` zips the rows with the features: a row too many would be
// ignored and one too few would leave a feature out, without a word.
const _: () = assert!(HIDDEN_WEIGHTS.len() == FEATURES);

/// The network evaluation from the side to move's point of view.
pub fn evaluate(position: &Position) -> i32 {
    let (f, patterns) = learned::analyse(position);
    let net = network(&f, position.size());
    (learned::linear(&LINEAR, &f, &patterns) + net).clamp(-MAX_EVAL, MAX_EVAL)
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

/// The network's inputs for the features of a position on a board of
/// `size` (see [`scale_class`]).
pub fn inputs(features: &[i32; FEATURES], size: usize) -> [f32; FEATURES] {
    let cars = (size - 1) as f32;
    let per = [
        1.0,
        1.0 / cars,
        1.0 / (cars * size as f32),
        1.0 / (cars * cars),
    ];
    std::array::from_fn(|i| features[i] as f32 * per[usize::from(scale_class(i))])
}

/// What the hidden units add to the linear score, in evaluation units,
/// for the features of a position on a board of `size`.
pub fn network(features: &[i32; FEATURES], size: usize) -> i32 {
    let mut units = HIDDEN_BIASES;
    for (row, &x) in HIDDEN_WEIGHTS.iter().zip(&inputs(features, size)) {
        if x != 0.0 {
            for (unit, &w) in units.iter_mut().zip(row) {
                *unit += w * x;
            }
        }
    }
    let mut out = 0.0f32;
    for (unit, &w) in units.iter().zip(&OUTPUT_WEIGHTS) {
        out += w * unit.max(0.0);
    }
    // Well inside i32: the bound keeps a wild input from overflowing.
    out.clamp(-(MAX_EVAL as f32), MAX_EVAL as f32).round() as i32
}

/// The linear part's contributions ([`learned::contributions`]) and the
/// network's: they add up to [`evaluate`] (short of its bound).
pub fn contributions(position: &Position) -> Vec<(String, i32)> {
    let mut out = learned::contributions(&LINEAR, position);
    let net = network(&learned::features(position), position.size());
    out.push(("network".into(), net));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Color;
    use crate::eval::net_weights::HIDDEN;
    use crate::notation::parse_position;

    /// The network by the textbook formula, one unit at a time in `f64`.
    fn network_by_units(features: &[i32; FEATURES], size: usize) -> f64 {
        let x = inputs(features, size);
        (0..HIDDEN)
            .map(|j| {
                let a = f64::from(HIDDEN_BIASES[j])
                    + (0..FEATURES)
                        .map(|i| f64::from(HIDDEN_WEIGHTS[i][j]) * f64::from(x[i]))
                        .sum::<f64>();
                f64::from(OUTPUT_WEIGHTS[j]) * a.max(0.0)
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
        ] {
            let position = parse_position(text).unwrap();
            let f = learned::features(&position);
            let fast = f64::from(network(&f, position.size()));
            let slow = network_by_units(&f, position.size());
            assert!((fast - slow).abs() <= 1.0, "{text}: {fast} against {slow}");
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
            let x = inputs(&learned::features(&start), size);
            for side in [0, n] {
                assert_eq!(x[side], 1.0, "moves to go, {size} x {size}");
                assert_eq!(x[side + 1], 1.0, "cars, {size} x {size}");
            }
            // The race lead is not scaled: a tempo is a tempo.
            assert_eq!(x[2 * n + 3], 0.0);
        }
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

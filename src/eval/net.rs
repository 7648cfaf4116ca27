//! The network evaluation: the learned evaluation's model (linear
//! features and car patterns, [`learned`]) with a small neural network
//! over the same features added to it, all fitted together to solved
//! results by the tuner (`cargo run --release --example tune -- --hidden
//! N`, see docs/journal/2026-11-strength.md).
//!
//! The network is one hidden layer of rectified linear units (32 in
//! [`SMALL`] and [`LARGE`], 128 in the networks of one board) over the
//! scaled features ([`Network::inputs`]); their
//! weighted sum is added to the linear model's score. It sees the same
//! size-independent features as the linear model; what it adds is
//! their interplay (a race lead is worth more with free lanes, a blocked
//! car less when the blocker must leave first...), which a weighted sum
//! cannot express. It is computed in `f32`, the units in the inner loop
//! so that the compiler can add several at once.
//!
//! Five fits, chosen by the board and the rule ([`Network::for_board`]):
//! [`SMALL`], fitted on 4 x 4 to 6 x 6 (it plays 4 x 4 and 5 x 5
//! `classic`), and [`LARGE`] for 7 x 7 and 8 x 8, fitted on the same
//! positions and on 7 x 7 and 8 x 8 endgame positions, its race lead
//! bounded (a network knows only the leads it was fitted on); and where
//! a board's solved tables give exact values for millions of positions,
//! a network of that board and rule alone ([`FIVE_TEXTBOOK`],
//! [`SIX_CLASSIC`], [`SIX_TEXTBOOK`]) whose hidden units read the
//! squares of the cars too ([`learned::car_squares`], in the side to
//! move's frame): the features cannot tell apart two blockades with the
//! same counts, the squares can. It may read every two cars' squares
//! too, an input for each pair ([`learned::car_inputs`]): a blockade is
//! where two cars stand together, which a sum over single squares sees
//! only through its units. Such a network is fitted on one rule's
//! values, and a blocked side wins under one rule and loses under the
//! other: played under the other rule it loses badly, so each is used
//! under its own rule alone (docs/strength.md).

use crate::board::{Position, Rules};

use super::learned::{self, FEATURES, MAX_EVAL, Weights};
use super::net_large_weights;
use super::net_weights;
use super::{net5_weights, net6_weights, net6t_weights};

/// One fitted network evaluation: the linear part's weights (checked by
/// the types of [`Weights`], as the learned evaluation's are), the hidden
/// units' and the output's, and the bound of the race lead it was fitted
/// with.
pub struct Network {
    pub linear: Weights,
    /// The hidden units' weights on the scaled features: a row of
    /// `units()` a feature.
    hidden_weights: &'static [f32],
    hidden_biases: &'static [f32],
    output_weights: &'static [f32],
    /// The race lead, in moves, is bounded to this either way, in the
    /// linear part and the hidden units alike (`i32::MAX`: not bounded).
    pub lead_bound: i32,
    /// The hidden units' weights on the cars' squares, for a network
    /// fitted on one board alone (`None`: the features are all it reads).
    squares: Option<SquareWeights>,
}

/// The hidden units' weights on the cars of one board size, in the side
/// to move's frame ([`learned::car_inputs`]): a row a square, ours first
/// (`size * size` rows), then theirs, and with `pairs` a row for every two
/// squares after them.
pub struct SquareWeights {
    pub size: usize,
    pub pairs: bool,
    rows: &'static [f32],
}

/// Hidden units summed together in [`Network::network`]: as many as the
/// registers of a core hold with room to spare.
const BLOCK: usize = 32;

/// A [`Network`] from the items of its weights file (`$weights`, as the
/// tuner writes it), its race lead bounded by `$bound`, and for a network
/// of one board that board's size (the file's `SQUARE_WEIGHTS` then), and
/// `pairs` if it reads every two cars' squares too.
/// Checks when it compiles that the file's rows are the features' and the
/// board's squares: `network` zips the rows with them, so a row too many
/// would be ignored and one too few would leave an input out, without a
/// word.
macro_rules! network {
    ($weights:ident, $bound:expr) => {{
        const _: () = assert!($weights::HIDDEN_WEIGHTS.len() == FEATURES);
        network!(@ $weights, $bound, None)
    }};
    ($weights:ident, $bound:expr, board $size:expr) => {
        network!($weights, $bound, board $size, pairs false)
    };
    ($weights:ident, $bound:expr, board $size:expr, pairs) => {
        network!($weights, $bound, board $size, pairs true)
    };
    ($weights:ident, $bound:expr, board $size:expr, pairs $pairs:expr) => {{
        const _: () = assert!($weights::HIDDEN_WEIGHTS.len() == FEATURES);
        const _: () =
            assert!($weights::SQUARE_WEIGHTS.len() == learned::car_input_count($size, $pairs));
        let squares = SquareWeights {
            size: $size,
            pairs: $pairs,
            rows: $weights::SQUARE_WEIGHTS.as_flattened(),
        };
        network!(@ $weights, $bound, Some(squares))
    }};
    (@ $weights:ident, $bound:expr, $squares:expr) => {
        Network {
            linear: Weights {
                bias: $weights::BIAS,
                features: &$weights::WEIGHTS,
                ours: &$weights::OUR_PATTERNS,
                theirs: &$weights::THEIR_PATTERNS,
            },
            hidden_weights: $weights::HIDDEN_WEIGHTS.as_flattened(),
            hidden_biases: &$weights::HIDDEN_BIASES,
            output_weights: &$weights::OUTPUT_WEIGHTS,
            lead_bound: $bound,
            squares: $squares,
        }
    };
}

/// The network fitted on 4 x 4 to 6 x 6 positions; it plays 4 x 4 and
/// 5 x 5 `classic`.
pub static SMALL: Network = network!(net_weights, i32::MAX);

/// The network of 5 x 5 under `textbook` alone, fitted on its positions
/// with the squares of the cars and every two of them as inputs too.
pub static FIVE_TEXTBOOK: Network = network!(net5_weights, i32::MAX, board 5, pairs);

/// The network of 6 x 6 under `classic` alone, fitted on its positions
/// with the squares of the cars as inputs too.
pub static SIX_CLASSIC: Network = network!(net6_weights, i32::MAX, board 6);

/// The network of 6 x 6 under `textbook` alone, likewise.
pub static SIX_TEXTBOOK: Network = network!(net6t_weights, i32::MAX, board 6);

/// The network for 7 x 7 and 8 x 8, fitted with endgame positions of
/// those boards too, its lead bounded by [`LEAD_BOUND`].
pub static LARGE: Network = network!(net_large_weights, LEAD_BOUND);

/// The race lead [`LARGE`] sees is bounded to this many moves either
/// way: a lead of more is decisive on every board.
pub const LEAD_BOUND: i32 = 6;

/// The smallest board [`LARGE`] plays.
pub const LARGE_MIN_SIZE: usize = 7;

/// Index of the race lead among the features.
const LEAD: usize = 2 * learned::SIDE_FEATURES.len() + 3;

/// The network evaluation from the side to move's point of view, for a
/// game under `rules`.
pub fn evaluate(position: &Position, rules: Rules) -> i32 {
    Network::for_board(position.size(), rules).evaluate(position)
}

/// The linear part's contributions ([`learned::contributions`]) and the
/// network's: they add up to [`evaluate`] (short of its bound).
pub fn contributions(position: &Position, rules: Rules) -> Vec<(String, i32)> {
    let network = Network::for_board(position.size(), rules);
    let (f, patterns) = learned::analyse(position);
    let f = network.bounded(f);
    let mut out = learned::contributions_of(&network.linear, &f, &patterns);
    out.push(("network".into(), network.network(&f, position)));
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

/// What a position gives the hidden units in [`Network::network`]: the
/// offsets of its nonzero features' rows with their values, and its cars'
/// rows.
struct Rows<'a> {
    width: usize,
    scaled: &'a [(usize, f32)],
    cars: &'a [u16],
    car_rows: &'a [f32],
}

impl Network {
    /// The fit for a board of `size` under `rules`: a network of that
    /// board and rule alone where there is one (a blocked side wins under
    /// one rule and loses under the other, and a network fitted on one
    /// board's exact values learns which), else the one of its range of
    /// boards.
    pub fn for_board(size: usize, rules: Rules) -> &'static Network {
        match (size, rules) {
            (5, Rules::Textbook) => &FIVE_TEXTBOOK,
            (6, Rules::Classic) => &SIX_CLASSIC,
            (6, Rules::Textbook) => &SIX_TEXTBOOK,
            (size, _) if size >= LARGE_MIN_SIZE => &LARGE,
            _ => &SMALL,
        }
    }

    /// How many hidden units it has.
    pub fn units(&self) -> usize {
        self.hidden_biases.len()
    }

    /// The evaluation from the side to move's point of view.
    pub fn evaluate(&self, position: &Position) -> i32 {
        let (f, patterns) = learned::analyse(position);
        let f = self.bounded(f);
        let net = self.network(&f, position);
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
    /// units, for `position` whose features are `features`.
    ///
    /// A block of [`BLOCK`] units at a time: the block's sums stay in
    /// registers while every input adds its row's slice to them, where a
    /// whole row at a time would load and store every unit's sum once an
    /// input (that traffic, not the arithmetic, was most of the time).
    pub fn network(&self, features: &[i32; FEATURES], position: &Position) -> i32 {
        let width = self.units();
        let inputs = self.inputs(features, position.size());
        let mut scaled = [(0usize, 0.0f32); FEATURES];
        let mut nonzero = 0;
        for (row, &x) in inputs.iter().enumerate() {
            if x != 0.0 {
                scaled[nonzero] = (row * width, x);
                nonzero += 1;
            }
        }
        let scaled = &scaled[..nonzero];
        let (cars, count) = match &self.squares {
            Some(squares) => {
                debug_assert_eq!(squares.size, position.size());
                learned::car_inputs(position, squares.pairs)
            }
            None => ([0; learned::MAX_CAR_INPUTS], 0),
        };
        let car_rows = self
            .squares
            .as_ref()
            .map_or(&[][..], |squares| squares.rows);
        let rows = Rows {
            width,
            scaled,
            cars: &cars[..count],
            car_rows,
        };
        let mut out = [0.0f32; BLOCK];
        let mut start = 0;
        while start + BLOCK <= width {
            let sums: [f32; BLOCK] = self.block_sums(&rows, start);
            let weights = &self.output_weights[start..][..BLOCK];
            for ((out, &sum), &w) in out.iter_mut().zip(&sums).zip(weights) {
                *out += w * sum.max(0.0);
            }
            start += BLOCK;
        }
        for unit in start..width {
            let [sum] = self.block_sums(&rows, unit);
            out[0] += self.output_weights[unit] * sum.max(0.0);
        }
        let out: f32 = out.iter().sum();
        // Well inside i32: the bound keeps a wild input from overflowing.
        out.clamp(-(MAX_EVAL as f32), MAX_EVAL as f32).round() as i32
    }

    /// The sums of the `N` hidden units from `start`: their biases, the
    /// features' weighted rows and the cars' rows (in registers: `N` is
    /// known when it compiles).
    #[inline(always)]
    fn block_sums<const N: usize>(&self, rows: &Rows, start: usize) -> [f32; N] {
        let mut sums = [0.0f32; N];
        sums.copy_from_slice(&self.hidden_biases[start..][..N]);
        for &(row, x) in rows.scaled {
            let weights = &self.hidden_weights[row + start..][..N];
            for (sum, &w) in sums.iter_mut().zip(weights) {
                *sum += w * x;
            }
        }
        for &car in rows.cars {
            let weights = &rows.car_rows[usize::from(car) * rows.width + start..][..N];
            for (sum, &w) in sums.iter_mut().zip(weights) {
                *sum += w;
            }
        }
        sums
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Color, file_of, rank_of, square};
    use crate::notation::{parse_move, parse_position};
    use crate::zobrist;

    /// The network by the textbook formula, one unit at a time in `f64`.
    fn network_by_units(net: &Network, features: &[i32; FEATURES], position: &Position) -> f64 {
        let x = net.inputs(features, position.size());
        let width = net.units();
        (0..width)
            .map(|j| {
                let on_squares: f64 = net.squares.as_ref().map_or(0.0, |weights| {
                    let (inputs, count) = learned::car_inputs(position, weights.pairs);
                    inputs[..count]
                        .iter()
                        .map(|&q| f64::from(weights.rows[usize::from(q) * width + j]))
                        .sum()
                });
                let a = f64::from(net.hidden_biases[j])
                    + on_squares
                    + (0..FEATURES)
                        .map(|i| f64::from(net.hidden_weights[i * width + j]) * f64::from(x[i]))
                        .sum::<f64>();
                f64::from(net.output_weights[j]) * a.max(0.0)
            })
            .sum()
    }

    /// Positions of every board for the tests of the network's sum.
    const SUM_POSITIONS: [&str; 7] = [
        "B4/1B3/2BW1/B1W2/1W1W1 b",
        "BW3/2B2/2W1B/B4/3W1 b",
        "2W2/3BB/4W/B3B/3WW b",
        "6/B2W2/1B4/2B1W1/B2W2/1W3B w",
        "B2/B2/1WW b",
        "7/1B1W3/BWB4/4B2/7/2B4/2B4 b",
        "8/8/8/8/8/8/7B/1WWWWWWW b",
    ];

    /// `net`'s first `width` hidden units alone, as a network of its own.
    fn first_units(net: &Network, width: usize) -> Network {
        let leak = |rows: &[f32]| -> &'static [f32] {
            let all = net.units();
            let kept: Vec<f32> = rows
                .chunks_exact(all)
                .flat_map(|r| &r[..width])
                .copied()
                .collect();
            Vec::leak(kept)
        };
        Network {
            linear: Weights { ..net.linear },
            hidden_weights: leak(net.hidden_weights),
            hidden_biases: &net.hidden_biases[..width],
            output_weights: &net.output_weights[..width],
            lead_bound: net.lead_bound,
            squares: net.squares.as_ref().map(|squares| SquareWeights {
                size: squares.size,
                pairs: squares.pairs,
                rows: leak(squares.rows),
            }),
        }
    }

    #[test]
    fn the_network_is_the_sum_of_its_units() {
        // Every fitted network whole, and its first units alone: the
        // fitted ones are whole blocks of units, and a fit of any other
        // width adds its last units one at a time.
        for text in SUM_POSITIONS {
            let position = parse_position(text).unwrap();
            let f = learned::features(&position);
            let of_board = Rules::ALL.map(|rules| Network::for_board(position.size(), rules));
            for net in [&SMALL, &LARGE].into_iter().chain(of_board) {
                for width in [1, 7, BLOCK - 1, BLOCK + 8, net.units() - 1, net.units()] {
                    let width = width.min(net.units());
                    let part = first_units(net, width);
                    let net = if width == net.units() { net } else { &part };
                    let fast = f64::from(net.network(&f, &position));
                    let slow = network_by_units(net, &f, &position);
                    assert!(
                        (fast - slow).abs() <= 1.0,
                        "{text} {width}: {fast} against {slow}"
                    );
                }
            }
        }
    }

    #[test]
    fn each_board_and_rule_has_its_fit() {
        for size in crate::board::MIN_SIZE..=crate::board::MAX_SIZE {
            for rules in Rules::ALL {
                let expected = match (size, rules) {
                    (5, Rules::Textbook) => &FIVE_TEXTBOOK,
                    (6, Rules::Classic) => &SIX_CLASSIC,
                    (6, Rules::Textbook) => &SIX_TEXTBOOK,
                    (size, _) if size >= LARGE_MIN_SIZE => &LARGE,
                    _ => &SMALL,
                };
                let network = Network::for_board(size, rules);
                assert!(std::ptr::eq(network, expected), "{size} {rules:?}");
                // A network of one board reads that board's squares.
                let squares = network.squares.as_ref().map(|s| s.size);
                assert!(squares.is_none_or(|n| n == size), "{size} {rules:?}");
                let start = Position::start(size);
                assert_eq!(evaluate(&start, rules), expected.evaluate(&start));
            }
        }
    }

    /// `position` turned over its diagonal (file <-> rank), colours
    /// swapped: the same game for the other side.
    fn mirrored(position: &Position) -> Position {
        let flip = |mut cars: u64| {
            let mut out = 0u64;
            while cars != 0 {
                let sq = cars.trailing_zeros() as u8;
                cars &= cars - 1;
                out |= 1 << square(rank_of(sq), file_of(sq));
            }
            out
        };
        Position::from_parts(
            position.size(),
            flip(position.cars(Color::White)),
            flip(position.cars(Color::Black)),
            position.side_to_move().other(),
        )
    }

    #[test]
    fn the_squares_of_a_position_and_its_mirror_image_are_the_same() {
        // Along a game on each board, a position and its mirror image give
        // the same squares and pairs of squares, distinct and on the
        // board's rows, and the same evaluation, whichever network reads
        // them.
        for size in crate::board::MIN_SIZE..=crate::board::MAX_SIZE {
            let mut position = Position::start(size);
            for ply in 0..60 {
                let mirror = mirrored(&position);
                let sorted = |p: &Position| {
                    let (list, count) = learned::car_inputs(p, true);
                    let mut list = list[..count].to_vec();
                    list.sort_unstable();
                    list
                };
                let inputs = sorted(&position);
                assert_eq!(inputs, sorted(&mirror), "{size} x {size}, ply {ply}");
                assert!(inputs.windows(2).all(|w| w[0] < w[1]));
                let cars = [Color::Black, Color::White]
                    .map(|color| position.cars(color).count_ones() as usize)
                    .iter()
                    .sum::<usize>();
                let count = learned::car_input_count(size, true);
                assert_eq!(inputs.len(), cars + cars * (cars - 1) / 2, "ply {ply}");
                assert!(inputs.iter().all(|&q| usize::from(q) < count));
                for rules in Rules::ALL {
                    let value = evaluate(&position, rules);
                    assert_eq!(
                        value,
                        evaluate(&mirror, rules),
                        "{size} {rules:?}, ply {ply}"
                    );
                }
                let moves = position.legal_moves();
                if moves.is_empty() {
                    break;
                }
                position = position.play(moves.as_slice()[(ply * 7 + 3) % moves.len()]);
            }
        }
    }

    #[test]
    fn colours_are_symmetric_and_every_size_is_bounded() {
        // The mirror image (diagonal, colours swapped) has the same value.
        let position = parse_position("B3/1WB1/B3/1WW1 b").unwrap();
        let mirror = parse_position("4/B1W1/B1B1/1W1W w").unwrap();
        assert_eq!(
            evaluate(&position, Rules::Textbook),
            evaluate(&mirror, Rules::Textbook)
        );
        for size in crate::board::MIN_SIZE..=crate::board::MAX_SIZE {
            let start = Position::start(size);
            for rules in Rules::ALL {
                let white = start.with_side_to_move(Color::White);
                assert_eq!(evaluate(&start, rules), evaluate(&white, rules));
                assert!(evaluate(&start, rules).abs() < MAX_EVAL);
            }
        }
    }

    #[test]
    fn inputs_span_the_same_range_on_every_board() {
        // At the start each side needs n moves for each of its n - 1
        // cars: scaled, one move per move needed and one car per car.
        let n = learned::SIDE_FEATURES.len();
        for size in crate::board::MIN_SIZE..=crate::board::MAX_SIZE {
            let start = Position::start(size);
            let x =
                Network::for_board(size, Rules::Textbook).inputs(&learned::features(&start), size);
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
        let total: i32 = contributions(&far, Rules::Textbook)
            .iter()
            .map(|(_, v)| v)
            .sum();
        assert_eq!(
            total.clamp(-MAX_EVAL, MAX_EVAL),
            evaluate(&far, Rules::Textbook)
        );
    }

    /// FNV-1a over every number of a network, in the order of its fields.
    fn checksum(net: &Network) -> u64 {
        let mut hash = zobrist::FNV_OFFSET;
        let mut add = |bits: u32| hash = zobrist::fnv1a(hash, &bits.to_le_bytes());
        add(net.linear.bias as u32);
        net.linear.features.iter().for_each(|&w| add(w as u32));
        let patterns = net.linear.ours.iter().chain(net.linear.theirs);
        patterns.for_each(|&v| add(i32::from(v) as u32));
        let floats = [net.hidden_weights, net.hidden_biases, net.output_weights];
        floats
            .iter()
            .flat_map(|part| part.iter())
            .for_each(|w| add(w.to_bits()));
        if let Some(squares) = &net.squares {
            add(squares.size as u32);
            if squares.pairs {
                add(1);
            }
            squares.rows.iter().for_each(|w| add(w.to_bits()));
        }
        add(net.lead_bound as u32);
        hash
    }

    #[test]
    fn the_fitted_networks_are_the_documented_ones() {
        // docs/journal/2026-11-strength.md gives each fit's command, data and checksum: a
        // new fit changes these on purpose, and the docs with them.
        for (name, net, expected) in [
            ("SMALL", &SMALL, 0x5ef5_3cfd_4fe0_8d3f_u64),
            ("FIVE_TEXTBOOK", &FIVE_TEXTBOOK, 0xbf4d_57fd_5ec5_dc95),
            ("SIX_CLASSIC", &SIX_CLASSIC, 0x0528_3739_b849_dc3e),
            ("SIX_TEXTBOOK", &SIX_TEXTBOOK, 0x8744_1854_3b0d_f84c),
            ("LARGE", &LARGE, 0x195b_8694_0b77_268c),
        ] {
            let found = checksum(net);
            assert_eq!(found, expected, "{name}: {found:#018x}");
        }
    }

    #[test]
    fn won_positions_and_the_losses_they_leave_keep_their_signs() {
        // Positions the solved tables call won for the side to move (from
        // the strength benchmark's samples, searched to a large plus), and
        // what the winning move leaves: lost for the other side. A refit
        // that flips one of these signs has lost sight of a race or a
        // blockade every fit so far has seen.
        for (text, win, rules) in [
            ("B4/WW3/W1B2/2W2/2B1B b", "a5b5", Rules::Textbook),
            ("3W1/BBW2/B2W1/4W/B4 w", "d3d4", Rules::Textbook),
            ("W3B/5/2W2/B2B1/1W1W1 b", "a2b2", Rules::Textbook),
            ("1B2W/1B1W1/5/1WB2/2W2 w", "d4c4", Rules::Textbook),
            ("4B1/4WB/1WB2W/6/3B2/6 b", "c4d4", Rules::Classic),
            ("6/6/6/1B1B2/W2W2/4B1 w", "a2a3", Rules::Classic),
            ("6/W4B/1BW3/1B2WW/6/5B w", "e3e4", Rules::Classic),
            ("4B1/4BB/2W3/1B2WW/1B2W1/6 b", "f5f4", Rules::Textbook),
            ("1W1B1W/4B1/3WW1/2B3/6/6 w", "d4d5", Rules::Textbook),
            ("4W1/6/B1BW2/2W3/2B3/1W4 w", "b1b2", Rules::Textbook),
        ] {
            let position = parse_position(text).unwrap();
            let won = evaluate(&position, rules);
            assert!(won > 0, "{text} {rules:?}: {won}");
            let after = position.play(parse_move(win, &position).unwrap());
            let lost = evaluate(&after, rules);
            assert!(lost < 0, "{text} {win} {rules:?}: {lost}");
        }
    }

    #[test]
    fn contributions_add_up() {
        for text in ["BW3/2B2/2W1B/B4/3W1 b", "1W3/2BBB/4W/2WWB/5 w"] {
            let position = parse_position(text).unwrap();
            let total: i32 = contributions(&position, Rules::Textbook)
                .iter()
                .map(|(_, v)| v)
                .sum();
            assert_eq!(total, evaluate(&position, Rules::Textbook), "{text}");
        }
    }
}

//! The learned evaluation: features that mean the same on every board
//! size, weighted by a fit to the solved results of 4 x 4 and 5 x 5
//! positions (`cargo run --release --example tune`, see docs/journal/2026-11-strength.md).
//!
//! Features are taken from the point of view of the side to move ("us")
//! against the other side ("them"): for each side the same list of counts
//! (moves still to make, cars, cars blocked, lanes, mobility...), then
//! terms of the two together (the race between them, cars whose paths
//! still cross). On top of these linear terms, each car adds the learned
//! value of its neighbourhood pattern ([`pattern`]): what stands on the
//! six squares ahead of it and beside it, and how far it is from its exit,
//! all in the car's own frame, so a pattern means the same on every board
//! and for either colour. The fitted function predicts the result for the
//! side to move; its value, in evaluation units, is what the search uses.

use crate::board::{Color, Masks, Position, RANK_STRIDE, file_of, rank_of};

use super::weights;

/// Features of one side.
pub const SIDE_FEATURES: [&str; 10] = [
    "moves to go",
    "cars on the board",
    "blocked, adjacent",
    "blocked, two away",
    "opponents in the lanes",
    "own car in front",
    "cars on the exit line",
    "mobility",
    "forward moves",
    "free lanes",
];

/// Features of the two sides together.
pub const JOINT_FEATURES: [&str; 9] = [
    "crossings we reach first",
    "crossings they reach first",
    "crossings reached together",
    "race lead",
    "race lead <= -2",
    "race lead -1",
    "race lead 0",
    "race lead 1",
    "race lead >= 2",
];

/// Number of features: ours, theirs, then the joint ones.
pub const FEATURES: usize = 2 * SIDE_FEATURES.len() + JOINT_FEATURES.len();

/// Squares of a car's neighbourhood pattern, in its own frame
/// (steps ahead, steps across): ahead, two ahead, beside on either side,
/// and diagonally ahead on either side.
const PATTERN_SQUARES: [(i32, i32); 6] = [(1, 0), (2, 0), (0, 1), (0, -1), (1, 1), (1, -1)];
/// States of a pattern square: empty (or past the exit), own car,
/// opponent's car, off the board beside the lanes.
const SQUARE_STATES: usize = 4;
/// Distances to the exit a pattern tells apart: 1, 2, 3, 4 or more.
const DISTANCES: usize = 4;
/// Patterns of one car: every state of every square, at every distance.
pub const PATTERNS: usize = DISTANCES * SQUARE_STATES.pow(PATTERN_SQUARES.len() as u32);
/// Most cars a side has.
const MAX_CARS: usize = 8;

/// The name of feature `i` ("us: moves to go", "race lead"...).
pub fn feature_name(i: usize) -> String {
    let n = SIDE_FEATURES.len();
    match i {
        i if i < n => format!("us: {}", SIDE_FEATURES[i]),
        i if i < 2 * n => format!("them: {}", SIDE_FEATURES[i - n]),
        i => JOINT_FEATURES[i - 2 * n].to_string(),
    }
}

/// A car in its side's own frame: how far it has come (files for Black,
/// ranks for White) and its lane (rank for Black, file for White).
#[derive(Clone, Copy, Debug)]
struct Car {
    progress: i32,
    lane: i32,
}

/// Cars of one side in its own frame, and an occupancy grid for lookups.
struct Side {
    cars: [Car; MAX_CARS],
    count: usize,
}

impl Side {
    fn new(position: &Position, color: Color) -> Side {
        let mut side = Side {
            cars: [Car {
                progress: 0,
                lane: 0,
            }; MAX_CARS],
            count: 0,
        };
        let mut bits = position.cars(color);
        while bits != 0 {
            let sq = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            let (file, rank) = (file_of(sq) as i32, rank_of(sq) as i32);
            side.cars[side.count] = match color {
                Color::Black => Car {
                    progress: file,
                    lane: rank,
                },
                Color::White => Car {
                    progress: rank,
                    lane: file,
                },
            };
            side.count += 1;
        }
        side
    }

    fn cars(&self) -> &[Car] {
        &self.cars[..self.count]
    }
}

/// The board as bitboards, for both colours.
struct Board {
    size: i32,
    masks: Masks,
    black: u64,
    white: u64,
}

impl Board {
    /// `color`'s cars and the other side's.
    fn cars(&self, color: Color) -> (u64, u64) {
        match color {
            Color::Black => (self.black, self.white),
            Color::White => (self.white, self.black),
        }
    }

    /// The square `ahead` steps ahead of `car` of `color` and `across`
    /// lanes to the side (positive north for Black, east for White), if it
    /// is on the board.
    fn square(&self, color: Color, car: Car, ahead: i32, across: i32) -> Option<u32> {
        let (progress, lane) = (car.progress + ahead, car.lane + across);
        let n = self.size;
        if !(0..n).contains(&progress) || !(0..n).contains(&lane) {
            return None;
        }
        let (file, rank) = match color {
            Color::Black => (progress, lane),
            Color::White => (lane, progress),
        };
        Some((rank * RANK_STRIDE as i32 + file) as u32)
    }
}

/// The neighbourhood pattern of `car` of `color` (see the module docs): a
/// number below [`PATTERNS`].
fn pattern(board: &Board, color: Color, car: Car) -> usize {
    let n = board.size;
    let (own, other) = board.cars(color);
    let mut index = 0;
    for (ahead, across) in PATTERN_SQUARES {
        let lane = car.lane + across;
        let state = if !(0..n).contains(&lane) {
            3
        } else {
            // Past the exit counts as empty.
            match board.square(color, car, ahead, across) {
                Some(sq) if own >> sq & 1 != 0 => 1,
                Some(sq) if other >> sq & 1 != 0 => 2,
                _ => 0,
            }
        };
        index = index * SQUARE_STATES + state;
    }
    let distance = ((n - car.progress) as usize).min(DISTANCES) - 1;
    distance * SQUARE_STATES.pow(PATTERN_SQUARES.len() as u32) + index
}

/// The patterns of the cars of both sides: ours, then theirs.
#[derive(Clone, Copy, Debug)]
pub struct Patterns {
    pub us: [u16; MAX_CARS],
    pub us_count: usize,
    pub them: [u16; MAX_CARS],
    pub them_count: usize,
}

impl Patterns {
    pub fn ours(&self) -> &[u16] {
        &self.us[..self.us_count]
    }

    pub fn theirs(&self) -> &[u16] {
        &self.them[..self.them_count]
    }
}

/// Squares of file a (the lowest bit of every rank).
const FIRST_FILE: u64 = 0x0101_0101_0101_0101;

/// The features of `color`'s side, against the other side, into `out`.
fn side_features(board: &Board, color: Color, out: &mut [i32]) {
    let n = board.size;
    let masks = board.masks;
    let (own, other) = board.cars(color);
    let occupied = own | other;
    let empty = masks.board & !occupied;
    // A step ahead, the exit line, and the squares one step from it, in
    // `color`'s own frame; then the sideways moves (north and south for
    // Black, east and west for White).
    let (step, exit, sideways) = match color {
        Color::Black => (
            1,
            masks.last_file,
            (own & (empty >> RANK_STRIDE)).count_ones()
                + (own & (empty << RANK_STRIDE)).count_ones(),
        ),
        Color::White => (
            RANK_STRIDE,
            masks.last_rank,
            (own & !masks.last_file & (empty >> 1)).count_ones()
                + (own & !masks.first_file & (empty << 1)).count_ones(),
        ),
    };
    let near_exit = exit | exit >> step;
    // Cars not on the exit line have their square ahead on the board.
    let inside = own & !exit;
    let mut f = [0i32; SIDE_FEATURES.len()];
    f[1] = own.count_ones() as i32;
    f[2] = (inside & (other >> step)).count_ones() as i32;
    f[3] = (own & !near_exit & (other >> (2 * step))).count_ones() as i32;
    f[5] = (inside & (own >> step)).count_ones() as i32;
    f[6] = (own & exit).count_ones() as i32;
    f[8] = f[6] + (inside & (empty >> step)).count_ones() as i32;
    f[7] = f[8] + sideways as i32;
    let mut bits = own;
    while bits != 0 {
        let sq = bits.trailing_zeros();
        bits &= bits - 1;
        let (file, rank) = (file_of(sq as u8) as i32, rank_of(sq as u8) as i32);
        // The car's lane ahead of it, to the edge of the board.
        let (progress, lane) = match color {
            Color::Black => (file, 0xFF << (rank * RANK_STRIDE as i32)),
            Color::White => (rank, FIRST_FILE << file),
        };
        let ahead = lane & (u64::MAX << sq << 1);
        f[0] += n - progress;
        // The other side's cars standing in our lane ahead of us.
        f[4] += (other & ahead).count_ones() as i32;
        f[9] += i32::from(occupied & ahead == 0);
    }
    out.copy_from_slice(&f);
}

/// Every feature of `position`, from the side to move's point of view.
pub fn features(position: &Position) -> [i32; FEATURES] {
    analyse(position).0
}

/// Every feature of `position` and the patterns of its cars, from the side
/// to move's point of view.
pub fn analyse(position: &Position) -> ([i32; FEATURES], Patterns) {
    let board = Board {
        size: position.size() as i32,
        masks: position.masks(),
        black: position.cars(Color::Black),
        white: position.cars(Color::White),
    };
    let mover = position.side_to_move();
    let us = Side::new(position, mover);
    let them = Side::new(position, mover.other());
    let mut out = [0i32; FEATURES];
    let n = SIDE_FEATURES.len();
    side_features(&board, mover, &mut out[..n]);
    side_features(&board, mover.other(), &mut out[n..2 * n]);
    let joint = &mut out[2 * n..];
    // A car of ours at (progress p, lane l) and one of theirs at (P, L) in
    // their frame: in ours, theirs stands at progress L, lane P and drives
    // across our lanes. Their paths cross at our progress L, lane l if
    // L > p (ahead of us) and l > P (ahead of them).
    for a in us.cars() {
        for b in them.cars() {
            if b.lane > a.progress && a.lane > b.progress {
                let ours = b.lane - a.progress;
                let theirs = a.lane - b.progress;
                match ours.cmp(&theirs) {
                    std::cmp::Ordering::Less => joint[0] += 1,
                    std::cmp::Ordering::Greater => joint[1] += 1,
                    std::cmp::Ordering::Equal => joint[2] += 1,
                }
            }
        }
    }
    // Positive: we need fewer moves than they do.
    let lead = out[n] - out[0];
    let joint = &mut out[2 * n..];
    joint[3] = lead;
    joint[4] = i32::from(lead <= -2);
    joint[5] = i32::from(lead == -1);
    joint[6] = i32::from(lead == 0);
    joint[7] = i32::from(lead == 1);
    joint[8] = i32::from(lead >= 2);
    let mut patterns = Patterns {
        us: [0; MAX_CARS],
        us_count: us.count,
        them: [0; MAX_CARS],
        them_count: them.count,
    };
    for (slot, &car) in patterns.us.iter_mut().zip(us.cars()) {
        *slot = pattern(&board, mover, car) as u16;
    }
    for (slot, &car) in patterns.them.iter_mut().zip(them.cars()) {
        *slot = pattern(&board, mover.other(), car) as u16;
    }
    (out, patterns)
}

/// The most cars on a board, both sides together: the most
/// [`car_squares`] gives.
pub const MAX_BOTH_SIDES: usize = 2 * MAX_CARS;

/// The squares of both sides' cars in the side to move's frame, for a
/// network fitted on one board size ([`super::net`]): each of our cars at
/// `progress + n * lane` (its way ahead and its lane across), each of
/// theirs at `n * n + progress + n * lane` of where it stands in our frame
/// (its lane is our progress, its progress our lane). A position and its
/// mirror image (the board turned over its diagonal, colours swapped)
/// give the same squares. Returns the squares and how many there are.
pub fn car_squares(position: &Position) -> ([u16; MAX_BOTH_SIDES], usize) {
    let n = position.size() as i32;
    let mover = position.side_to_move();
    let mut out = [0u16; MAX_BOTH_SIDES];
    let mut count = 0;
    for car in Side::new(position, mover).cars() {
        out[count] = (car.progress + n * car.lane) as u16;
        count += 1;
    }
    for car in Side::new(position, mover.other()).cars() {
        out[count] = (n * n + car.lane + n * car.progress) as u16;
        count += 1;
    }
    (out, count)
}

/// The most inputs [`car_inputs`] gives: a square for every car and a
/// pair for every two of them.
pub const MAX_CAR_INPUTS: usize = MAX_BOTH_SIDES + MAX_BOTH_SIDES * (MAX_BOTH_SIDES - 1) / 2;

/// How many inputs on the cars a network of one board of `size` reads
/// ([`car_inputs`]): a square for each square a car of either side can
/// stand on, and with `pairs` one for every two such squares.
pub const fn car_input_count(size: usize, pairs: bool) -> usize {
    let squares = 2 * size * size;
    if pairs {
        squares + squares * (squares - 1) / 2
    } else {
        squares
    }
}

/// The inputs on the cars of a network of one board: the squares of
/// [`car_squares`], then with `pairs` one input for every two of them
/// (which cars stand where together: a blockade, a crossing one side
/// reaches first), numbered after the squares, the pair of squares `a <
/// b` of `s` at `s + a * (2 * s - a - 1) / 2 + (b - a - 1)`. A position
/// and its mirror image give the same inputs. Returns the inputs and how
/// many there are.
pub fn car_inputs(position: &Position, pairs: bool) -> ([u16; MAX_CAR_INPUTS], usize) {
    let (squares, count) = car_squares(position);
    let mut out = [0u16; MAX_CAR_INPUTS];
    out[..count].copy_from_slice(&squares[..count]);
    if !pairs {
        return (out, count);
    }
    let mut sorted = squares;
    sorted[..count].sort_unstable();
    let s = 2 * position.size() * position.size();
    let mut at = count;
    for (i, &a) in sorted[..count].iter().enumerate() {
        let a = usize::from(a);
        let first = s + a * (2 * s - a - 1) / 2 - a - 1;
        for &b in &sorted[i + 1..count] {
            out[at] = (first + usize::from(b)) as u16;
            at += 1;
        }
    }
    (out, at)
}

/// The largest evaluation the learned function gives (well below the
/// scores of forced wins).
pub const MAX_EVAL: i32 = 20_000;

/// The weights of a fit of the linear model: the side to move's bonus,
/// a weight per feature and a value per pattern of our cars and of theirs
/// (the learned evaluation's, and the linear part of the network's).
pub struct Weights {
    pub bias: i32,
    pub features: &'static [i32; FEATURES],
    pub ours: &'static [i16; PATTERNS],
    pub theirs: &'static [i16; PATTERNS],
}

/// The learned evaluation's weights. The weights file gives the lengths
/// of its arrays as numbers, so that it names nothing of this module; the
/// types of [`Weights`] check them against [`FEATURES`] and [`PATTERNS`]
/// when the crate compiles.
pub const LEARNED: Weights = Weights {
    bias: weights::BIAS,
    features: &weights::WEIGHTS,
    ours: &weights::OUR_PATTERNS,
    theirs: &weights::THEIR_PATTERNS,
};

/// The learned evaluation from the side to move's point of view.
pub fn evaluate(position: &Position) -> i32 {
    let (f, patterns) = analyse(position);
    linear(&LEARNED, &f, &patterns).clamp(-MAX_EVAL, MAX_EVAL)
}

/// The linear model's score (unbounded) with `weights`.
pub fn linear(weights: &Weights, f: &[i32; FEATURES], patterns: &Patterns) -> i32 {
    let mut sum = weights.bias;
    for (w, x) in weights.features.iter().zip(f) {
        sum += w * x;
    }
    sum + pattern_sum(weights, patterns)
}

/// What the cars' patterns add, ours and theirs.
fn pattern_sum(weights: &Weights, patterns: &Patterns) -> i32 {
    let ours: i32 = patterns
        .ours()
        .iter()
        .map(|&p| i32::from(weights.ours[usize::from(p)]))
        .sum();
    let theirs: i32 = patterns
        .theirs()
        .iter()
        .map(|&p| i32::from(weights.theirs[usize::from(p)]))
        .sum();
    ours + theirs
}

/// Each feature's contribution with `weights`, in evaluation units, from
/// the side to move's point of view, then the cars' patterns and the side
/// to move's bonus: they add up to the linear model's score.
pub fn contributions(weights: &Weights, position: &Position) -> Vec<(String, i32)> {
    let (f, patterns) = analyse(position);
    contributions_of(weights, &f, &patterns)
}

/// [`contributions`] of these features and patterns.
pub fn contributions_of(
    weights: &Weights,
    f: &[i32; FEATURES],
    patterns: &Patterns,
) -> Vec<(String, i32)> {
    let mut out: Vec<(String, i32)> = (0..FEATURES)
        .map(|i| (feature_name(i), weights.features[i] * f[i]))
        .collect();
    out.push(("car patterns".into(), pattern_sum(weights, patterns)));
    out.push(("side to move".into(), weights.bias));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::parse_position;

    #[test]
    fn features_of_a_small_position() {
        // 3 x 3, Black to move: Black a2, b3; White b2 (in front of a2),
        // c1.
        let position = parse_position("1B1/BW1/2W b").unwrap();
        let f = features(&position);
        let n = SIDE_FEATURES.len();
        // Black: a2 needs 3 moves, b3 needs 2.
        assert_eq!(f[0], 5);
        assert_eq!(f[1], 2);
        assert_eq!(f[2], 1, "a2 is blocked by b2");
        assert_eq!(f[4], 1, "one white car in a black lane");
        assert_eq!(f[6], 0);
        // Black's moves: a2a1, a2a3, b3c3 (b3 cannot go north: last rank).
        assert_eq!(f[7], position.count_moves() as i32);
        assert_eq!(f[8], 1);
        assert_eq!(f[9], 1, "b3 has a free lane");
        // White: b2 needs 2 moves, c1 needs 3.
        assert_eq!(f[n], 5);
        assert_eq!(f[n + 2], 1, "b2 is blocked by b3");
        // White's moves: b2c2, c1c2, c1b1 (b2 north and west are taken).
        assert_eq!(f[n + 7], 3);
        // Crossings: a2 and c1 cross at c2, which White reaches first (1
        // move against 2); b3 and c1 at c3, which Black reaches first.
        assert_eq!(f[2 * n..2 * n + 3], [1, 1, 0]);
        assert_eq!(f[2 * n + 3], 0, "the race is level");
        assert_eq!(f[2 * n + 6], 1);
    }

    #[test]
    fn features_do_not_depend_on_the_colour_to_move() {
        // The mirror image (diagonal, colours swapped) has the same
        // features.
        let position = parse_position("B3/1WB1/B3/1WW1 b").unwrap();
        let mirror = parse_position("4/B1W1/B1B1/1W1W w").unwrap();
        let (a, b) = (analyse(&position), analyse(&mirror));
        assert_eq!(a.0, b.0);
        let sorted = |cars: &[u16]| {
            let mut cars = cars.to_vec();
            cars.sort_unstable();
            cars
        };
        assert_eq!(sorted(a.1.ours()), sorted(b.1.ours()));
        assert_eq!(sorted(a.1.theirs()), sorted(b.1.theirs()));
    }

    #[test]
    fn patterns_read_the_squares_around_a_car() {
        // 4 x 4, White to move, White on b2 and d2, Black on a3 and b3.
        let position = parse_position("4/BB2/1W1W/4 w").unwrap();
        let (_, patterns) = analyse(&position);
        let pattern = |states: [usize; 6]| {
            // Both white cars are 3 moves from the exit (distance bucket 2).
            let index = states.iter().fold(0, |index, &s| index * SQUARE_STATES + s);
            (2 * SQUARE_STATES.pow(6) + index) as u16
        };
        // b2: ahead b3 (Black), two ahead b4, east c2, west a2, ahead-east
        // c3 (all empty), ahead-west a3 (Black).
        assert!(patterns.ours().contains(&pattern([2, 0, 0, 0, 0, 2])));
        // d2: east of it and ahead-east are off the board.
        assert!(patterns.ours().contains(&pattern([0, 0, 3, 0, 3, 0])));
        assert_eq!(patterns.theirs().len(), 2);
    }
}

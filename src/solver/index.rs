//! A dense numbering of every Dodgem position of one board size in which
//! both sides still have a car on the board, for one side to move.
//!
//! Squares are numbered densely, `rank * size + file`, so a side's cars fit
//! in a `u32` mask. Positions are grouped into classes by how many cars each
//! side has on the board, `(k, m)` with `1 <= k, m < size`. Inside a class
//! the black set is ranked in colexicographic order (the order of the masks
//! as integers) and the white set is ranked the same way after the squares
//! Black occupies are squeezed out, so every index in `0..len` is a real,
//! distinct position: no gaps, no hashing.

use crate::board::{self, Color, Position};

/// Largest board size the solver handles: the 6 x 6 index would hold
/// about 10^11 positions.
pub const MAX_SOLVABLE_SIZE: usize = 5;

const MAX_SQUARES: usize = MAX_SOLVABLE_SIZE * MAX_SOLVABLE_SIZE;

/// The dense numbering for one board size.
#[derive(Clone, Debug)]
pub struct Indexer {
    size: usize,
    squares: usize,
    /// `binomial[n][r]`: n choose r.
    binomial: [[u64; MAX_SOLVABLE_SIZE]; MAX_SQUARES + 1],
    /// Classes in index order.
    classes: Vec<Class>,
    len: u64,
}

/// The positions with `black` black and `white` white cars on the board.
#[derive(Clone, Copy, Debug)]
pub struct Class {
    pub black: u32,
    pub white: u32,
    /// Index of the class's first position.
    pub offset: u64,
    /// Number of white sets for each black set.
    pub white_sets: u64,
    /// Number of black sets.
    pub black_sets: u64,
}

impl Class {
    /// Number of positions in the class.
    pub fn positions(&self) -> u64 {
        self.black_sets * self.white_sets
    }
}

impl Indexer {
    /// The numbering for `size` x `size` boards; `None` above
    /// [`MAX_SOLVABLE_SIZE`] or below the smallest board.
    pub fn new(size: usize) -> Option<Indexer> {
        if !(board::MIN_SIZE..=MAX_SOLVABLE_SIZE).contains(&size) {
            return None;
        }
        let squares = size * size;
        let mut binomial = [[0u64; MAX_SOLVABLE_SIZE]; MAX_SQUARES + 1];
        for n in 0..=MAX_SQUARES {
            binomial[n][0] = 1;
            for r in 1..MAX_SOLVABLE_SIZE {
                binomial[n][r] = if n == 0 {
                    0
                } else {
                    binomial[n - 1][r - 1] + binomial[n - 1][r]
                };
            }
        }
        let mut classes = Vec::new();
        let mut offset = 0;
        for black in 1..size as u32 {
            for white in 1..size as u32 {
                let class = Class {
                    black,
                    white,
                    offset,
                    black_sets: binomial[squares][black as usize],
                    white_sets: binomial[squares - black as usize][white as usize],
                };
                offset += class.positions();
                classes.push(class);
            }
        }
        Some(Indexer {
            size,
            squares,
            binomial,
            classes,
            len: offset,
        })
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Number of squares on the board.
    pub fn squares(&self) -> usize {
        self.squares
    }

    /// Number of positions for one side to move.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false: every board has positions.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn classes(&self) -> &[Class] {
        &self.classes
    }

    fn class(&self, black: u32, white: u32) -> &Class {
        let cars = self.size as u32 - 1;
        &self.classes[((black - 1) * cars + (white - 1)) as usize]
    }

    /// Colex rank of a set of squares.
    fn rank(&self, mut set: u32) -> u64 {
        let mut rank = 0;
        let mut i = 1;
        while set != 0 {
            rank += self.binomial[set.trailing_zeros() as usize][i];
            set &= set - 1;
            i += 1;
        }
        rank
    }

    /// The set of `count` squares with colex rank `rank`.
    pub fn unrank(&self, mut rank: u64, count: u32) -> u32 {
        let mut set = 0;
        let mut top = self.squares;
        for i in (1..=count as usize).rev() {
            top -= 1;
            while self.binomial[top][i] > rank {
                top -= 1;
            }
            rank -= self.binomial[top][i];
            set |= 1 << top;
        }
        set
    }

    /// Index of the position with these (dense) car masks; both must be
    /// non-empty, disjoint and hold fewer than `size` cars.
    pub fn index(&self, black: u32, white: u32) -> u64 {
        let class = self.class(black.count_ones(), white.count_ones());
        class.offset + self.rank(black) * class.white_sets + self.rank(squeeze(white, black))
    }

    /// Position of a position in a table that holds both sides to move,
    /// all of Black's first.
    pub fn slot(&self, black: u32, white: u32, side: Color) -> u64 {
        side.index() as u64 * self.len + self.index(black, white)
    }

    /// Slot of the first position of a class's row: `side` to move, the
    /// black set of rank `black_rank`, the first white set.
    pub fn row_start(&self, side: Color, class: &Class, black_rank: u64) -> u64 {
        side.index() as u64 * self.len + class.offset + black_rank * class.white_sets
    }

    /// The car masks `(black, white)` of the position with this index.
    pub fn position(&self, index: u64) -> (u32, u32) {
        let class = self
            .classes
            .iter()
            .rev()
            .find(|class| class.offset <= index)
            .expect("index 0 is in the first class");
        let within = index - class.offset;
        let black = self.unrank(within / class.white_sets, class.black);
        let white = spread(self.unrank(within % class.white_sets, class.white), black);
        (black, white)
    }

    /// Dense masks `(black, white)` of a board position; `None` when the
    /// board size differs or a side has no car left on the board.
    pub fn masks(&self, position: &Position) -> Option<(u32, u32)> {
        if position.size() != self.size {
            return None;
        }
        let black = self.dense(position.cars(Color::Black));
        let white = self.dense(position.cars(Color::White));
        (black != 0 && white != 0).then_some((black, white))
    }

    fn dense(&self, mut bits: u64) -> u32 {
        let mut mask = 0;
        while bits != 0 {
            let sq = bits.trailing_zeros() as board::Square;
            mask |= 1 << (board::rank_of(sq) * self.size + board::file_of(sq));
            bits &= bits - 1;
        }
        mask
    }

    /// The board position with these dense masks and side to move.
    pub fn to_position(&self, black: u32, white: u32, side: Color) -> Position {
        let sparse = |mut mask: u32| {
            let mut bits = 0u64;
            while mask != 0 {
                let d = mask.trailing_zeros() as usize;
                bits |= 1 << board::square(d % self.size, d / self.size);
                mask &= mask - 1;
            }
            bits
        };
        Position::from_parts(self.size, sparse(black), sparse(white), side)
    }
}

/// The positions of one row of a class (one black set), visited in
/// increasing rank order: turns each rank into the white cars' mask,
/// stepping to a near rank with Gosper's successor and unranking a far one.
pub struct Row<'a> {
    indexer: &'a Indexer,
    black: u32,
    white_cars: u32,
    at: u64,
    squeezed: u32,
}

impl<'a> Row<'a> {
    /// Row `black_rank` of `class`.
    pub fn new(indexer: &'a Indexer, class: &Class, black_rank: u64) -> Row<'a> {
        Row {
            indexer,
            black: indexer.unrank(black_rank, class.black),
            white_cars: class.white,
            at: 0,
            squeezed: (1 << class.white) - 1,
        }
    }

    /// The black cars, the same for the whole row.
    pub fn black(&self) -> u32 {
        self.black
    }

    /// The white cars of the position of rank `rank` in the row; ranks
    /// must come in increasing order.
    pub fn white(&mut self, rank: u64) -> u32 {
        debug_assert!(rank >= self.at, "row ranks must increase");
        if rank - self.at < 16 {
            while self.at < rank {
                self.squeezed = next_colex(self.squeezed);
                self.at += 1;
            }
        } else {
            self.squeezed = self.indexer.unrank(rank, self.white_cars);
            self.at = rank;
        }
        spread(self.squeezed, self.black)
    }
}

/// The next set of the same size in colex order (Gosper's hack).
fn next_colex(set: u32) -> u32 {
    let lowest = set & set.wrapping_neg();
    let ripple = set.wrapping_add(lowest);
    (((ripple ^ set) >> 2) / lowest) | ripple
}

/// Removes the squares in `holes` from `set`, shifting the squares above
/// each hole down by one (a software PEXT with the complement of `holes`).
pub fn squeeze(mut set: u32, holes: u32) -> u32 {
    let mut holes = holes;
    // Remove the highest hole first so lower hole positions stay valid.
    while holes != 0 {
        let hole = 31 - holes.leading_zeros();
        let below = (1u32 << hole) - 1;
        set = (set & below) | ((set >> 1) & !below);
        holes &= !(1 << hole);
    }
    set
}

/// Inverse of [`squeeze`]: opens a gap at each square in `holes`.
pub fn spread(mut set: u32, holes: u32) -> u32 {
    let mut holes = holes;
    while holes != 0 {
        let hole = holes.trailing_zeros();
        let below = (1u32 << hole) - 1;
        set = (set & below) | ((set & !below) << 1);
        holes &= holes - 1;
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_sizes_add_up() {
        // Sum over k, m in 1..n of C(n^2, k) * C(n^2 - k, m).
        assert_eq!(Indexer::new(3).unwrap().len(), 1_332);
        assert_eq!(Indexer::new(4).unwrap().len(), 276_600);
        assert_eq!(Indexer::new(5).unwrap().len(), 119_999_650);
        assert!(Indexer::new(6).is_none());
    }

    #[test]
    fn squeeze_and_spread_are_inverse() {
        let holes = 0b1010_0110;
        for set in [0b0101_1001u32, 0b1_0000_0001, 0b1] {
            assert_eq!(spread(squeeze(set, holes), holes), set);
        }
        assert_eq!(squeeze(0b1000, 0b0010), 0b0100);
        assert_eq!(spread(0b0100, 0b0010), 0b1000);
    }

    #[test]
    fn every_index_round_trips_on_4x4() {
        let indexer = Indexer::new(4).unwrap();
        for index in 0..indexer.len() {
            let (black, white) = indexer.position(index);
            assert_eq!(black & white, 0);
            assert_eq!(indexer.index(black, white), index);
        }
    }
}

//! The index of the layered solver: Black-to-move positions grouped into
//! progress layers, and Black's moves between them.
//!
//! Squares are numbered `rank * size + file` in a `u64`. Black's progress
//! is the sum of its cars' files plus `size` for each car already off;
//! White's is the sum of its cars' ranks plus `size` per car off. Layer
//! `(a, b)` holds the Black-to-move positions with Black's progress `a` and
//! White's `b`, in blocks by car counts `(k, m)`: every black set with `k`
//! cars and the right file sum, times every white set with `m` cars and
//! the right rank sum. A black and a white set that overlap give a slot
//! that is no position (about half the slots on 6 x 6); it is skipped.
//!
//! Only Black to move is stored. Reflecting the board in its diagonal and
//! swapping the colours turns the White-to-move position `(B, W)` into the
//! Black-to-move position `(T(W), T(B))` with the same value, so a move of
//! Black from `(B, W)` in layer `(a, b)` leads to the Black-to-move
//! position `(T(W), T(B'))`: in layer `(b, a)` after a sideways move, in
//! `(b, a + 1)` after a forward move or an exit. The white sets of a
//! block are listed as the transposes of the black sets with the same
//! count and sum, so the child's black index is the parent's white index
//! and its white index is the rank of `B'`: no transposing while solving.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::board::{self, Color, Position};

/// Most cars a side can have on the board (an 8 x 8 board starts with 7).
pub const MAX_CARS: u32 = 7;

/// The sets, rankings and layers of one board size with at most
/// `max_cars` cars a side on the board.
#[derive(Clone, Debug)]
pub struct Shape {
    size: u32,
    max_cars: u32,
    full: u64,
    last_file: u64,
    last_rank: u64,
    /// `binomial[n][r]`: n choose r.
    binomial: Vec<[u64; MAX_CARS as usize + 2]>,
    /// `sets[k][s]`: the sets of `k` squares with file sum `s`, colex order.
    sets: Vec<Vec<Vec<u64>>>,
    /// `transposed[k][s][i]`: `sets[k][s][i]` reflected in the diagonal.
    transposed: Vec<Vec<Vec<u64>>>,
    /// `place[k][colex rank]`: the set's index in its `sets[k][s]` list.
    place: Vec<Vec<u32>>,
    /// `sideways[k][s][2 * (i * k + j) + d]`: the index of set `i` of
    /// `sets[k][s]` with its `j`-th car (lowest first) moved north (`d` 0)
    /// or south (1), [`OFF`] off the board (whether the square is free is
    /// the caller's to check).
    sideways: Vec<Vec<Vec<u32>>>,
    /// `forward[k][s][i * k + j]`: the index of set `i` with its `j`-th car
    /// moved east, in `sets[k][s + 1]`, or taken off the last file, in
    /// `sets[k - 1][s - (size - 1)]` ([`OFF`] for a last car).
    forward: Vec<Vec<Vec<u32>>>,
}

/// No such set.
const OFF: u32 = u32::MAX;

/// The positions of one layer with `black` black and `white` white cars on
/// the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub black_cars: u32,
    pub white_cars: u32,
    pub black_sum: u32,
    pub white_sum: u32,
    /// Slot of the block's first position in its layer.
    pub offset: u64,
    pub black_sets: u64,
    pub white_sets: u64,
}

impl Block {
    pub fn slots(&self) -> u64 {
        self.black_sets * self.white_sets
    }

    /// Slot of the position with black set `black` and white set `white`
    /// (indices in the block's lists).
    pub fn slot(&self, black: u64, white: u64) -> u64 {
        self.offset + black * self.white_sets + white
    }
}

/// Black-to-move positions with Black's progress `black` and White's
/// progress `white`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    pub black: u32,
    pub white: u32,
    pub blocks: Vec<Block>,
    pub slots: u64,
    /// Block number by car counts, `NONE` where there is no such block.
    by_cars: [[u8; MAX_CARS as usize + 1]; MAX_CARS as usize + 1],
}

const NONE: u8 = u8::MAX;

impl Layer {
    /// The block with these car counts.
    pub fn block(&self, black_cars: u32, white_cars: u32) -> Option<&Block> {
        self.block_index(black_cars, white_cars)
            .map(|i| &self.blocks[i])
    }

    /// The number in [`Layer::blocks`] of the block with these car counts.
    pub fn block_index(&self, black_cars: u32, white_cars: u32) -> Option<usize> {
        match self.by_cars[black_cars as usize][white_cars as usize] {
            NONE => None,
            i => Some(usize::from(i)),
        }
    }

    /// The layer's name in file names and messages: `012-017`.
    pub fn name(&self) -> String {
        layer_name(self.black, self.white)
    }
}

/// The name of layer `(black, white)` (Black's and White's progress) in
/// file names and messages: `012-017`.
pub fn layer_name(black: u32, white: u32) -> String {
    format!("{black:03}-{white:03}")
}

/// Where one of Black's moves leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Child {
    /// A sideways move: this slot of the partner layer `(b, a)`.
    Sideways(u64),
    /// A forward move or an exit: this slot of the layer `(b, a + 1)`.
    Forward(u64),
    /// Black takes its last car off and wins.
    Finish,
}

impl Shape {
    /// The index for `size` x `size` boards with at most `max_cars` cars a
    /// side on the board; `None` for a size outside the board's range or a
    /// car limit outside `1..size`.
    pub fn new(size: usize, max_cars: u32) -> Option<Shape> {
        if !(board::MIN_SIZE..=board::MAX_SIZE).contains(&size)
            || max_cars == 0
            || max_cars as usize >= size
        {
            return None;
        }
        let n = size as u32;
        let squares = (n * n) as usize;
        let kmax = max_cars as usize;
        let mut binomial = vec![[0u64; MAX_CARS as usize + 2]; squares + 1];
        for m in 0..=squares {
            binomial[m][0] = 1;
            for r in 1..binomial[m].len() {
                binomial[m][r] = if m == 0 {
                    0
                } else {
                    binomial[m - 1][r - 1] + binomial[m - 1][r]
                };
            }
        }
        let mut sets = vec![Vec::new(); kmax + 1];
        let mut transposed = vec![Vec::new(); kmax + 1];
        let mut place = vec![Vec::new(); kmax + 1];
        for k in 1..=kmax {
            let sums = k * (size - 1) + 1;
            let mut lists = vec![Vec::new(); sums];
            let count = binomial[squares][k];
            let mut set: u64 = (1 << k) - 1;
            let mut places = Vec::with_capacity(count as usize);
            for i in 0..count {
                let sum = file_sum(set, n) as usize;
                places.push(lists[sum].len() as u32);
                lists[sum].push(set);
                if i + 1 < count {
                    set = next_colex(set);
                }
            }
            transposed[k] = lists
                .iter()
                .map(|list| list.iter().map(|&s| transpose(s, n)).collect())
                .collect();
            sets[k] = lists;
            place[k] = places;
        }
        let mut last_file = 0;
        for rank in 0..n {
            last_file |= 1 << (rank * n + n - 1);
        }
        let mut shape = Shape {
            size: n,
            max_cars,
            full: if squares == 64 {
                u64::MAX
            } else {
                (1 << squares) - 1
            },
            last_file,
            last_rank: ((1 << n) - 1) << (n * (n - 1)),
            binomial,
            sets,
            transposed,
            place,
            sideways: Vec::new(),
            forward: Vec::new(),
        };
        shape.sideways = shape.neighbours(|shape, set, car| {
            let north = if car & shape.last_rank == 0 {
                car << n
            } else {
                0
            };
            [north, car >> n]
                .into_iter()
                .map(|to| {
                    if to == 0 || to & set != 0 {
                        OFF
                    } else {
                        shape.rank(set & !car | to) as u32
                    }
                })
                .collect()
        });
        shape.forward = shape.neighbours(|shape, set, car| {
            let moved = if car & shape.last_file != 0 {
                set & !car
            } else {
                set & !car | car << 1
            };
            let ok = moved != 0
                && moved.count_ones() + u32::from(car & shape.last_file != 0) == set.count_ones();
            vec![if ok { shape.rank(moved) as u32 } else { OFF }]
        });
        Some(shape)
    }

    /// For every set of every list, `step(set, car)` for each of its cars
    /// (lowest first), flattened per list.
    fn neighbours(&self, step: impl Fn(&Shape, u64, u64) -> Vec<u32>) -> Vec<Vec<Vec<u32>>> {
        self.sets
            .iter()
            .map(|lists| {
                lists
                    .iter()
                    .map(|list| {
                        let mut out = Vec::new();
                        for &set in list {
                            let mut rest = set;
                            while rest != 0 {
                                let car = rest & rest.wrapping_neg();
                                rest &= rest - 1;
                                out.extend(step(self, set, car));
                            }
                        }
                        out
                    })
                    .collect()
            })
            .collect()
    }

    /// The index of [`Shape::new`], built once a process and shared (for
    /// readers of table files, which need a board's sets).
    pub fn shared(size: usize, max_cars: u32) -> Option<Arc<Shape>> {
        static SHAPES: Mutex<Vec<Arc<Shape>>> = Mutex::new(Vec::new());
        let mut shapes = SHAPES.lock();
        if let Some(shape) = shapes
            .iter()
            .find(|s| (s.size(), s.max_cars) == (size, max_cars))
        {
            return Some(Arc::clone(shape));
        }
        let shape = Arc::new(Shape::new(size, max_cars)?);
        shapes.push(Arc::clone(&shape));
        Some(shape)
    }

    pub fn size(&self) -> usize {
        self.size as usize
    }

    pub fn max_cars(&self) -> u32 {
        self.max_cars
    }

    /// Smallest progress a side can have (all its cars allowed on the board
    /// on its first file or rank).
    pub fn min_progress(&self) -> u32 {
        self.size * (self.size - 1 - self.max_cars)
    }

    /// Largest progress a side with a car on the board can have (one car
    /// left, on its last file or rank).
    pub fn max_progress(&self) -> u32 {
        self.size * (self.size - 1) - 1
    }

    /// Progress of a side with these cars on the board (files for Black).
    fn progress(&self, set: u64) -> u32 {
        file_sum(set, self.size) + self.size * (self.size - 1 - set.count_ones())
    }

    /// The layer `(black, white)`.
    pub fn layer(&self, black: u32, white: u32) -> Layer {
        let mut layer = Layer {
            black,
            white,
            blocks: Vec::new(),
            slots: 0,
            by_cars: [[NONE; MAX_CARS as usize + 1]; MAX_CARS as usize + 1],
        };
        for k in 1..=self.max_cars {
            let Some(black_sum) = self.sum_for(black, k) else {
                continue;
            };
            for m in 1..=self.max_cars {
                let Some(white_sum) = self.sum_for(white, m) else {
                    continue;
                };
                let block = Block {
                    black_cars: k,
                    white_cars: m,
                    black_sum,
                    white_sum,
                    offset: layer.slots,
                    black_sets: self.sets[k as usize][black_sum as usize].len() as u64,
                    white_sets: self.sets[m as usize][white_sum as usize].len() as u64,
                };
                layer.slots += block.slots();
                layer.by_cars[k as usize][m as usize] = layer.blocks.len() as u8;
                layer.blocks.push(block);
            }
        }
        layer
    }

    /// The file (or rank) sum of `cars` cars with this progress, if any.
    fn sum_for(&self, progress: u32, cars: u32) -> Option<u32> {
        let sum = progress.checked_sub(self.size * (self.size - 1 - cars))?;
        let list = self.sets[cars as usize].get(sum as usize)?;
        (!list.is_empty()).then_some(sum)
    }

    /// Every layer pair in solving order: total progress falling, and
    /// within a total the pair `(a, b)`, `(b, a)` with `a <= b`.
    pub fn pairs(&self) -> Vec<(u32, u32)> {
        let (low, high) = (self.min_progress(), self.max_progress());
        let mut pairs = Vec::new();
        for total in (2 * low..=2 * high).rev() {
            for a in low.max(total.saturating_sub(high))..=total / 2 {
                pairs.push((a, total - a));
            }
        }
        pairs
    }

    /// Every layer once, in solving order: the layers of each pair of
    /// [`Shape::pairs`] together.
    pub fn layers(&self) -> Vec<Layer> {
        self.pairs()
            .into_iter()
            .flat_map(|(a, b)| {
                [(a, b), (b, a)]
                    .into_iter()
                    .take(if a == b { 1 } else { 2 })
            })
            .map(|(a, b)| self.layer(a, b))
            .collect()
    }

    /// Black set `index` of `block`.
    pub fn black_set(&self, block: &Block, index: u64) -> u64 {
        self.sets[block.black_cars as usize][block.black_sum as usize][index as usize]
    }

    /// White set `index` of `block`.
    pub fn white_set(&self, block: &Block, index: u64) -> u64 {
        self.transposed[block.white_cars as usize][block.white_sum as usize][index as usize]
    }

    /// The black sets of `block`.
    pub fn black_sets(&self, block: &Block) -> &[u64] {
        &self.sets[block.black_cars as usize][block.black_sum as usize]
    }

    /// The white sets of `block`.
    pub fn white_sets(&self, block: &Block) -> &[u64] {
        &self.transposed[block.white_cars as usize][block.white_sum as usize]
    }

    /// White set `index` of `block` reflected in the diagonal: the black
    /// cars of the mirrored position.
    pub fn white_set_mirrored(&self, block: &Block, index: u64) -> u64 {
        self.sets[block.white_cars as usize][block.white_sum as usize][index as usize]
    }

    /// Index of a set in its list (the lists of its count and file sum).
    pub fn rank(&self, set: u64) -> u64 {
        let mut colex = 0;
        let mut rest = set;
        let mut i = 1;
        while rest != 0 {
            colex += self.binomial[rest.trailing_zeros() as usize][i];
            rest &= rest - 1;
            i += 1;
        }
        u64::from(self.place[set.count_ones() as usize][colex as usize])
    }

    /// Calls `visit` with where each of Black's moves leads from the
    /// position with black set `black_index` and white set `white_index`
    /// of `block` (masks `black`, `white`). `partner` is the layer
    /// `(b, a)`, `ahead` the layer `(b, a + 1)` (absent when Black cannot
    /// advance). Returns the number of moves.
    #[allow(clippy::too_many_arguments)]
    pub fn children(
        &self,
        block: &Block,
        black_index: u64,
        black: u64,
        white: u64,
        white_index: u64,
        partner: &Layer,
        ahead: Option<&Layer>,
        mut visit: impl FnMut(Child),
    ) -> u32 {
        let n = self.size;
        let (k, sum) = (block.black_cars as usize, block.black_sum as usize);
        let first = black_index as usize * k;
        let sideways = &self.sideways[k][sum][2 * first..2 * (first + k)];
        let forward = &self.forward[k][sum][first..first + k];
        let empty = self.full & !(black | white);
        let mut moves = 0;
        let mut rest = black;
        let mut j = 0;
        while rest != 0 {
            let car = rest & rest.wrapping_neg();
            rest &= rest - 1;
            let north = if car & self.last_rank == 0 {
                car << n
            } else {
                0
            };
            for (d, to) in [north, car >> n].into_iter().enumerate() {
                if to & empty != 0 {
                    moves += 1;
                    let block = partner
                        .block(block.white_cars, block.black_cars)
                        .expect("a sideways move stays in the partner layer");
                    visit(Child::Sideways(
                        block.slot(white_index, u64::from(sideways[2 * j + d])),
                    ));
                }
            }
            let exits = car & self.last_file != 0;
            if exits || (car << 1) & empty != 0 {
                moves += 1;
                if exits && k == 1 {
                    visit(Child::Finish);
                } else {
                    let cars = block.black_cars - u32::from(exits);
                    let ahead = ahead
                        .and_then(|layer| layer.block(block.white_cars, cars))
                        .expect("a forward move reaches the layer ahead");
                    visit(Child::Forward(
                        ahead.slot(white_index, u64::from(forward[j])),
                    ));
                }
            }
            j += 1;
        }
        moves
    }

    /// The [`Mover`] for the positions of `block`, whose partner layer is
    /// `partner` and whose layer ahead is `ahead`.
    pub fn mover<'a>(&'a self, block: &Block, ahead: Option<&'a Layer>) -> Mover<'a> {
        let (k, sum) = (block.black_cars as usize, block.black_sum as usize);
        let ahead_of = |cars: u32| ahead.and_then(|layer| layer.block(block.white_cars, cars));
        Mover {
            size: self.size,
            full: self.full,
            last_file: self.last_file,
            last_rank: self.last_rank,
            cars: k,
            forward: &self.forward[k][sum],
            ahead: ahead_of(block.black_cars),
            ahead_exit: ahead_of(block.black_cars - 1),
        }
    }

    /// The [`Parents`] of the positions of `block`, in `partner`.
    pub fn parents<'a>(&'a self, block: &Block, partner: &'a Layer) -> Parents<'a> {
        let (k, sum) = (block.white_cars as usize, block.white_sum as usize);
        Parents {
            size: self.size,
            full: self.full,
            last_rank: self.last_rank,
            cars: k,
            moved: &self.sets[k][sum],
            neighbours: &self.sideways[k][sum],
            parent_whites: &self.transposed[block.black_cars as usize][block.black_sum as usize],
            parent_block: partner
                .block(block.white_cars, block.black_cars)
                .expect("the partner layer has the mirrored block"),
        }
    }

    /// The [`Successors`] of the positions of `block`: their sideways
    /// moves, into `partner`.
    pub fn successors<'a>(&'a self, block: &Block, partner: &'a Layer) -> Successors<'a> {
        let (k, sum) = (block.black_cars as usize, block.black_sum as usize);
        Successors {
            size: self.size,
            full: self.full,
            last_rank: self.last_rank,
            cars: k,
            sideways: &self.sideways[k][sum],
            child_block: partner
                .block(block.white_cars, block.black_cars)
                .expect("a sideways move stays in the partner layer"),
        }
    }

    /// Dense square masks of a board position.
    fn masks(&self, position: &Position) -> (u64, u64) {
        let dense = |mut bits: u64| {
            let mut mask = 0;
            while bits != 0 {
                let sq = bits.trailing_zeros() as board::Square;
                mask |= 1 << (board::rank_of(sq) as u32 * self.size + board::file_of(sq) as u32);
                bits &= bits - 1;
            }
            mask
        };
        (
            dense(position.cars(Color::Black)),
            dense(position.cars(Color::White)),
        )
    }

    /// The layer and slot holding `position`: itself if Black is to move,
    /// its mirror image if White is. `None` when the position has no slot:
    /// another board size, a side without a car on the board (the game is
    /// over), or more cars than the tables cover.
    pub fn locate(&self, position: &Position) -> Option<(u32, u32, u64)> {
        if position.size() != self.size() {
            return None;
        }
        let (black, white) = self.masks(position);
        let (black, white) = match position.side_to_move() {
            Color::Black => (black, white),
            Color::White => (transpose(white, self.size), transpose(black, self.size)),
        };
        self.locate_masks(black, white)
    }

    /// [`Shape::locate`] for the Black-to-move position with these masks.
    pub fn locate_masks(&self, black: u64, white: u64) -> Option<(u32, u32, u64)> {
        let (k, m) = (black.count_ones(), white.count_ones());
        if k == 0 || m == 0 || k > self.max_cars || m > self.max_cars || black & white != 0 {
            return None;
        }
        let (a, b) = (
            self.progress(black),
            self.progress(transpose(white, self.size)),
        );
        let layer = self.layer(a, b);
        let block = layer.block(k, m)?;
        let slot = block.slot(self.rank(black), self.rank(transpose(white, self.size)));
        Some((a, b, slot))
    }
}

/// Black's moves from the positions of one block, with the lists and the
/// blocks they lead to looked up once: the solver's inner loops.
pub struct Mover<'a> {
    size: u32,
    full: u64,
    last_file: u64,
    last_rank: u64,
    cars: usize,
    /// `forward` entries of the block's black list.
    forward: &'a [u32],
    /// Where a forward move and an exit (of a car not the last) lead.
    ahead: Option<&'a Block>,
    ahead_exit: Option<&'a Block>,
}

impl Mover<'_> {
    /// The cells one step north, south and east of Black's cars, on the
    /// board (none north of the last rank, none east of the last file:
    /// from there a car leaves).
    #[inline]
    fn steps(&self, black: u64) -> (u64, u64, u64) {
        let north = (black & !self.last_rank) << self.size;
        let south = black >> self.size;
        let east = (black & !self.last_file) << 1;
        (north, south, east)
    }

    /// Number of sideways moves from `(black, white)`.
    pub fn sideways(&self, black: u64, white: u64) -> u32 {
        let empty = self.full & !(black | white);
        let (north, south, _) = self.steps(black);
        (north & empty).count_ones() + (south & empty).count_ones()
    }

    /// The cells that, all White's, leave `black` without a move: every
    /// empty cell a car of it could move to (none if a car is on the last
    /// file, where it can always leave).
    pub fn blocked_by(&self, black: u64) -> Option<u64> {
        if black & self.last_file != 0 {
            return None;
        }
        let (north, south, east) = self.steps(black);
        Some((north | south | east) & !black)
    }

    /// Whether Black takes its last car off from `black`: a lone car on
    /// the last file.
    pub fn finishes(&self, black: u64) -> bool {
        self.cars == 1 && black & self.last_file != 0
    }

    /// Number of forward moves and exits from `(black, white)`.
    pub fn forward_count(&self, black: u64, white: u64) -> u32 {
        let empty = self.full & !(black | white);
        let east = self.steps(black).2 & empty;
        ((black & self.last_file) | east >> 1).count_ones()
    }

    /// Calls `visit` with the slot in the layer ahead of each forward move
    /// or exit from the position with black set `black_index` (mask
    /// `black`) and white set `white_index` (mask `white`); returns the
    /// number of such moves, and whether one takes Black's last car off.
    pub fn forward(
        &self,
        black_index: u64,
        black: u64,
        white: u64,
        white_index: u64,
        mut visit: impl FnMut(u64),
    ) -> (u32, bool) {
        let empty = self.full & !(black | white);
        let exits = black & self.last_file;
        let east = self.steps(black).2 & empty;
        if self.cars == 1 && exits != 0 {
            return (1, true);
        }
        let moving = exits | east >> 1;
        let forward = &self.forward[black_index as usize * self.cars..];
        let mut rest = black;
        let mut j = 0;
        let mut moves = 0;
        while rest != 0 {
            let car = rest & rest.wrapping_neg();
            rest &= rest - 1;
            if car & moving != 0 {
                moves += 1;
                let block = if car & exits != 0 {
                    self.ahead_exit
                } else {
                    self.ahead
                }
                .expect("a forward move reaches the layer ahead");
                visit(block.slot(white_index, u64::from(forward[j])));
            }
            j += 1;
        }
        (moves, false)
    }
}

/// The sideways children of the positions of one block, with the lists
/// and the partner block looked up once: what a pass checks a position
/// against before it calls it lost.
pub struct Successors<'a> {
    size: u32,
    full: u64,
    last_rank: u64,
    cars: usize,
    /// `sideways` entries of the block's black list.
    sideways: &'a [u32],
    child_block: &'a Block,
}

impl Successors<'_> {
    /// Calls `visit` with the slot, in the partner layer, of each sideways
    /// move of Black from the position with black set `black_index` (mask
    /// `black`) and white set `white_index` (mask `white`), until `visit`
    /// returns false; returns whether it never did.
    pub fn all(
        &self,
        black_index: u64,
        black: u64,
        white: u64,
        white_index: u64,
        mut visit: impl FnMut(u64) -> bool,
    ) -> bool {
        let empty = self.full & !(black | white);
        let first = 2 * black_index as usize * self.cars;
        let sideways = &self.sideways[first..first + 2 * self.cars];
        let mut rest = black;
        let mut j = 0;
        while rest != 0 {
            let car = rest & rest.wrapping_neg();
            rest &= rest - 1;
            let north = if car & self.last_rank == 0 {
                car << self.size
            } else {
                0
            };
            for (d, to) in [north, car >> self.size].into_iter().enumerate() {
                if to & empty != 0
                    && !visit(
                        self.child_block
                            .slot(white_index, u64::from(sideways[2 * j + d])),
                    )
                {
                    return false;
                }
            }
            j += 1;
        }
        true
    }
}

/// The sideways parents of the positions of one block, with the lists and
/// the partner block looked up once: the retreat's inner loop.
pub struct Parents<'a> {
    size: u32,
    full: u64,
    last_rank: u64,
    cars: usize,
    /// The block's white list mirrored: the parents' moved black sets.
    moved: &'a [u64],
    /// `sideways` entries of that list.
    neighbours: &'a [u32],
    /// The block's black list mirrored: the parents' white sets.
    parent_whites: &'a [u64],
    parent_block: &'a Block,
}

impl Parents<'_> {
    /// Calls `visit` with the slot, in the partner layer, of every
    /// position from which a sideways move of Black leads to the position
    /// with black set `black_index` and white set `white_index`, and with
    /// that parent's black set (its white set is `black_index`).
    pub fn visit(&self, black_index: u64, white_index: u64, mut visit: impl FnMut(u64, u64)) {
        let moved = self.moved[white_index as usize];
        let empty = self.full & !(moved | self.parent_whites[black_index as usize]);
        let neighbours = &self.neighbours[2 * self.cars * white_index as usize..];
        let mut rest = moved;
        let mut j = 0;
        while rest != 0 {
            let car = rest & rest.wrapping_neg();
            rest &= rest - 1;
            // The parent's set is the moved set with this car one step
            // north (it drove south) or south (it drove north).
            let north = ((car & !self.last_rank) << self.size) & empty;
            for (d, open) in [(0, north != 0), (1, (car >> self.size) & empty != 0)] {
                if open {
                    let parent = u64::from(neighbours[2 * j + d]);
                    visit(self.parent_block.slot(parent, black_index), parent);
                }
            }
            j += 1;
        }
    }
}

/// Sum of the files of a set of squares on a board of side `n`.
fn file_sum(mut set: u64, n: u32) -> u32 {
    let mut sum = 0;
    while set != 0 {
        sum += set.trailing_zeros() % n;
        set &= set - 1;
    }
    sum
}

/// A set of squares reflected in the diagonal (file <-> rank).
pub fn transpose(mut set: u64, n: u32) -> u64 {
    let mut out = 0;
    while set != 0 {
        let sq = set.trailing_zeros();
        out |= 1 << ((sq % n) * n + sq / n);
        set &= set - 1;
    }
    out
}

/// The next set of the same size in colex order (Gosper's hack); the
/// caller stops before the last set, whose successor would overflow.
fn next_colex(set: u64) -> u64 {
    let lowest = set & set.wrapping_neg();
    let ripple = set.wrapping_add(lowest);
    (((ripple ^ set) >> 2) / lowest) | ripple
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layer_is_listed_once_with_its_partner_in_solving_order() {
        let shape = Shape::new(5, 4).unwrap();
        let layers = shape.layers();
        let span = (shape.max_progress() - shape.min_progress() + 1) as usize;
        assert_eq!(layers.len(), span * span);
        let mut seen = std::collections::HashSet::new();
        for layer in &layers {
            assert!(seen.insert((layer.black, layer.white)), "{}", layer.name());
        }
        let order: Vec<(u32, u32)> = layers.iter().map(|l| (l.black, l.white)).collect();
        let mut at = 0;
        for (a, b) in shape.pairs() {
            assert_eq!(order[at], (a, b));
            at += 1;
            if a != b {
                assert_eq!(order[at], (b, a));
                at += 1;
            }
        }
    }

    #[test]
    fn every_slot_round_trips_on_4x4() {
        let shape = Shape::new(4, 3).unwrap();
        let mut positions = 0;
        for (a, b) in shape.pairs() {
            for (x, y) in [(a, b), (b, a)] {
                let layer = shape.layer(x, y);
                for block in &layer.blocks {
                    for bi in 0..block.black_sets {
                        for wi in 0..block.white_sets {
                            let black = shape.black_set(block, bi);
                            let white = shape.white_set(block, wi);
                            if black & white != 0 {
                                continue;
                            }
                            positions += u64::from(a != b || x == a);
                            assert_eq!(
                                shape.locate_masks(black, white),
                                Some((x, y, block.slot(bi, wi)))
                            );
                        }
                    }
                }
            }
        }
        // Every position with both sides on the board, counted once per
        // layer (a pair of equal layers once).
        assert!(positions > 0);
        let all: u64 = shape
            .pairs()
            .iter()
            .flat_map(|&(a, b)| {
                if a == b {
                    vec![(a, b)]
                } else {
                    vec![(a, b), (b, a)]
                }
            })
            .map(|(a, b)| shape.layer(a, b))
            .map(|layer| {
                layer
                    .blocks
                    .iter()
                    .map(|block| {
                        let mut legal = 0;
                        for &black in shape.black_sets(block) {
                            for &white in shape.white_sets(block) {
                                legal += u64::from(black & white == 0);
                            }
                        }
                        legal
                    })
                    .sum::<u64>()
            })
            .sum();
        assert_eq!(all, 276_600);
    }

    /// `blocked_by` names exactly the positions without a move, on every
    /// position of 4 x 4 and of 5 x 5 with 2 cars a side.
    #[test]
    fn the_cells_that_block_a_side_are_those_that_leave_it_no_move() {
        for (size, cars) in [(4, 3), (5, 2)] {
            let shape = Shape::new(size, cars).unwrap();
            let mut blocked = 0;
            for layer in shape.layers() {
                for block in &layer.blocks {
                    let mover = shape.mover(block, None);
                    for &black in shape.black_sets(block) {
                        for &white in shape.white_sets(block) {
                            if black & white != 0 {
                                continue;
                            }
                            let stuck = mover.sideways(black, white) == 0
                                && mover.forward_count(black, white) == 0;
                            let by = mover
                                .blocked_by(black)
                                .is_some_and(|cells| white & cells == cells);
                            assert_eq!(by, stuck, "{size}x{size} {black:#x} {white:#x}");
                            blocked += u32::from(stuck);
                        }
                    }
                }
            }
            assert!(blocked > 0, "{size}x{size} has blocked positions");
        }
    }

    #[test]
    fn six_by_six_has_900_layers() {
        let shape = Shape::new(6, 5).unwrap();
        assert_eq!((shape.min_progress(), shape.max_progress()), (0, 29));
        assert_eq!(shape.pairs().len(), 30 * 31 / 2);
        assert!((0..30).all(|a| (0..30).all(|b| shape.layer(a, b).slots > 0)));
    }
}

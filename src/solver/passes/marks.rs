//! Where a level's positions are, for the passes that take a pair's
//! positions level by level ([`super::dte`], [`super::pass`]): for each
//! level, a bit for each tile of slots holding a position of that level,
//! so that a level scans only the tiles marked for it.
//! Memory: at most [`MAX_LEVEL_MARKS`] bits a level with marks still to
//! scan, and no lists of positions.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::solver::index::layers::Layer;

/// Most bits the marks of one level take (2 MiB): the tiles are as small
/// as that allows, from 8 x 8 slots (a 6 x 6 pair's are up to 16 x 16).
pub(super) const MAX_LEVEL_MARKS: u64 = 1 << 24;
const SMALLEST_TILE: u32 = 3;

/// A square of slots of one block: up to `1 << tile_bits` black sets by as
/// many white sets. The parents a tile's positions tell lie in the
/// tile's columns of a few rows of the partner block (a child's parents
/// keep its black set as their white set), few enough cache lines to stay
/// in the cache while the tile is scanned, in whatever order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Tile {
    pub side: usize,
    pub block: usize,
    pub blacks: std::ops::Range<u64>,
    pub whites: std::ops::Range<u64>,
}

/// Where a block's tiles are among all the pair's.
#[derive(Clone, Copy)]
struct Tiling {
    first: u64,
    side: usize,
    block: usize,
    /// Tiles across (white sets), and the block's sets.
    across: u64,
    offset: u64,
    black_sets: u64,
    white_sets: u64,
}

/// For each level, a bit for each tile of the pair: some position of the
/// tile was known at that level (or put off to it) at some time. A tile
/// is scanned at a level only if it is marked there. A level's bits exist
/// from its first mark until it has been scanned.
pub(super) struct Marks {
    /// Each level's bits, `words` words.
    levels: Vec<OnceLock<Box<[AtomicU64]>>>,
    words: usize,
    /// A tile's side is `1 << tile_bits` sets.
    pub tile_bits: u32,
    /// Every block of both sides, in order.
    tilings: Vec<Tiling>,
    /// Each side's first entry in `tilings`.
    first_tiling: Vec<usize>,
}

impl Marks {
    /// No marks yet, for levels `0..levels` of the pair of `layers`.
    pub fn new(layers: &[&Layer], levels: u16) -> Marks {
        let tile_bits = tile_bits(layers);
        let mut tilings = Vec::new();
        let mut first_tiling = Vec::new();
        let mut tiles = 0;
        for (side, layer) in layers.iter().enumerate() {
            first_tiling.push(tilings.len());
            for (block, b) in layer.blocks.iter().enumerate() {
                let across = b.white_sets.div_ceil(1 << tile_bits);
                tilings.push(Tiling {
                    first: tiles,
                    side,
                    block,
                    across,
                    offset: b.offset,
                    black_sets: b.black_sets,
                    white_sets: b.white_sets,
                });
                tiles += across * b.black_sets.div_ceil(1 << tile_bits);
            }
        }
        Marks {
            levels: (0..levels).map(|_| OnceLock::new()).collect(),
            words: tiles.div_ceil(64) as usize,
            tile_bits,
            tilings,
            first_tiling,
        }
    }

    /// Marks the tile of `slot` (of block `block` of side `i`) for `level`.
    pub fn mark(&self, level: u16, i: usize, block: usize, slot: u64) {
        let tiling = &self.tilings[self.first_tiling[i] + block];
        let within = slot - tiling.offset;
        self.mark_sets(
            level,
            i,
            block,
            within / tiling.white_sets,
            within % tiling.white_sets,
        );
    }

    /// [`Marks::mark`] of the slot with black set `black` and white set
    /// `white` of the block: no division.
    pub fn mark_sets(&self, level: u16, i: usize, block: usize, black: u64, white: u64) {
        self.of_block(level, i, block).mark(black, white);
    }

    /// The marks of `level` in block `block` of side `i`, looked up once
    /// for a run of [`BlockMarks::mark`].
    pub fn of_block(&self, level: u16, i: usize, block: usize) -> BlockMarks<'_> {
        let tiling = &self.tilings[self.first_tiling[i] + block];
        BlockMarks {
            bits: self.levels[level as usize]
                .get_or_init(|| (0..self.words).map(|_| AtomicU64::new(0)).collect()),
            first: tiling.first,
            across: tiling.across,
            tile_bits: self.tile_bits,
        }
    }

    /// The first level from `level` on with a mark.
    pub fn next_from(&self, level: u16) -> Option<u16> {
        (level..self.levels.len() as u16).find(|&l| {
            self.level(l)
                .iter()
                .any(|word| word.load(Ordering::Relaxed) != 0)
        })
    }

    /// Drops the marks of `level` once it has been scanned: nothing is
    /// put off to a level already passed.
    pub fn scanned(&mut self, level: u16) {
        self.levels[level as usize].take();
    }

    /// The tiles marked for `level`, in order, with their rows and slots.
    pub fn tiles(&self, level: u16) -> Listed<'_> {
        let mut listed = Listed {
            marks: self,
            numbers: Vec::new(),
            rows: Vec::new(),
            slots: 0,
        };
        // The tiles come in order, so a cursor finds each one's block; a
        // row is the run of tiles of one block with the same black sets.
        let (mut at, mut last_row) = (0, None);
        for (w, word) in self.level(level).iter().enumerate() {
            let mut bits = word.load(Ordering::Relaxed);
            while bits != 0 {
                // A level's tiles number at most MAX_LEVEL_MARKS.
                let number = w as u32 * 64 + bits.trailing_zeros();
                bits &= bits - 1;
                while self
                    .tilings
                    .get(at + 1)
                    .is_some_and(|next| next.first <= u64::from(number))
                {
                    at += 1;
                }
                let tile = self.tile_in(&self.tilings[at], number);
                listed.slots += tile_slots(&tile);
                let t = listed.numbers.len();
                let row = Some((at, tile.blacks.start));
                match listed.rows.last_mut() {
                    Some(range) if row == last_row => range.end = t + 1,
                    _ => listed.rows.push(t..t + 1),
                }
                last_row = row;
                listed.numbers.push(number);
            }
        }
        listed
    }

    /// Tile number `tile`.
    fn tile(&self, tile: u32) -> Tile {
        let at = u64::from(tile);
        let tiling = &self.tilings[self.tilings.partition_point(|tiling| tiling.first <= at) - 1];
        self.tile_in(tiling, tile)
    }

    /// Tile number `tile`, of `tiling`.
    fn tile_in(&self, tiling: &Tiling, tile: u32) -> Tile {
        let within = u64::from(tile) - tiling.first;
        let sets = |index: u64, count: u64| {
            index << self.tile_bits..((index + 1) << self.tile_bits).min(count)
        };
        Tile {
            side: tiling.side,
            block: tiling.block,
            blacks: sets(within / tiling.across, tiling.black_sets),
            whites: sets(within % tiling.across, tiling.white_sets),
        }
    }

    fn level(&self, level: u16) -> &[AtomicU64] {
        self.levels[level as usize].get().map_or(&[], |bits| bits)
    }
}

/// One level's marks in one block ([`Marks::of_block`]).
pub(super) struct BlockMarks<'a> {
    bits: &'a [AtomicU64],
    first: u64,
    across: u64,
    tile_bits: u32,
}

impl BlockMarks<'_> {
    /// Marks the tile of the slot with black set `black` and white set
    /// `white`: no division.
    pub fn mark(&self, black: u64, white: u64) {
        let tile = self.first + (black >> self.tile_bits) * self.across + (white >> self.tile_bits);
        let word = &self.bits[(tile / 64) as usize];
        let bit = 1 << (tile % 64);
        if word.load(Ordering::Relaxed) & bit == 0 {
            word.fetch_or(bit, Ordering::Relaxed);
        }
    }
}

/// The tiles marked for one level ([`Marks::tiles`]), in order, by their
/// numbers: 4 bytes a tile, where a [`Tile`] takes 48 (a level of a large
/// pair lists millions).
pub(super) struct Listed<'a> {
    marks: &'a Marks,
    numbers: Vec<u32>,
    /// The runs of tiles of one block with the same black sets.
    rows: Vec<std::ops::Range<usize>>,
    slots: u64,
}

impl Listed<'_> {
    pub fn len(&self) -> usize {
        self.numbers.len()
    }

    /// The `i`-th tile.
    pub fn tile(&self, i: usize) -> Tile {
        self.marks.tile(self.numbers[i])
    }

    /// The slots of the tiles.
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// The rows of the tiles: the runs of tiles of one block with the same
    /// black sets.
    pub fn rows(&self) -> &[std::ops::Range<usize>] {
        &self.rows
    }
}

/// The slots of `tile`.
fn tile_slots(tile: &Tile) -> u64 {
    (tile.blacks.end - tile.blacks.start) * (tile.whites.end - tile.whites.start)
}

/// The smallest tiles (as a power of two a side) whose marks of one level
/// for the blocks of `layers` fit in [`MAX_LEVEL_MARKS`] bits.
fn tile_bits(layers: &[&Layer]) -> u32 {
    let tiles = |bits: u32| -> u64 {
        layers
            .iter()
            .flat_map(|layer| &layer.blocks)
            .map(|b| b.black_sets.div_ceil(1 << bits) * b.white_sets.div_ceil(1 << bits))
            .sum()
    };
    (SMALLEST_TILE..32)
        .find(|&bits| tiles(bits) <= MAX_LEVEL_MARKS)
        .unwrap_or(31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::index::layers::Shape;

    #[test]
    fn tiles_grow_to_keep_the_marks_of_a_large_pair_small() {
        // The largest 6 x 6 pair: tiles of 16 x 16 slots.
        let shape = Shape::new(6, 5).unwrap();
        let (a, b) = (shape.layer(15, 15), shape.layer(15, 15));
        assert_eq!(tile_bits(&[&a, &b]), 4);
        // A 5 x 5 pair, and anything smaller: the smallest tiles.
        let shape = Shape::new(5, 4).unwrap();
        let (a, b) = (shape.layer(8, 9), shape.layer(9, 8));
        assert_eq!(tile_bits(&[&a, &b]), SMALLEST_TILE);
        assert_eq!(tile_bits(&[]), SMALLEST_TILE);
    }

    #[test]
    fn marks_name_the_tiles_of_both_sides_at_their_level() {
        let shape = Shape::new(5, 4).unwrap();
        let (a, b) = (shape.layer(8, 9), shape.layer(9, 8));
        let mut marks = Marks::new(&[&a, &b], 16);
        assert_eq!(marks.tile_bits, SMALLEST_TILE);
        assert_eq!(marks.next_from(0), None);
        // The largest block of each side, and a slot of it in the second
        // row and the third column of tiles.
        let largest = |layer: &Layer| {
            (0..layer.blocks.len())
                .max_by_key(|&i| layer.blocks[i].slots())
                .unwrap()
        };
        let (ba, bb) = (largest(&a), largest(&b));
        let block = &a.blocks[ba];
        assert!(block.black_sets > 8 && block.white_sets > 24);
        marks.mark(7, 0, ba, block.slot(9, 17));
        marks.mark(7, 0, ba, block.slot(15, 23));
        marks.mark(7, 1, bb, b.blocks[bb].offset);
        marks.mark(9, 1, bb, b.blocks[bb].offset);
        assert_eq!(marks.next_from(0), Some(7));
        assert_eq!(marks.next_from(8), Some(9));
        assert_eq!(marks.next_from(10), None);
        let first = |sets: u64| 0..8.min(sets);
        let listed = |marks: &Marks, level| {
            let tiles = marks.tiles(level);
            (0..tiles.len()).map(|i| tiles.tile(i)).collect::<Vec<_>>()
        };
        assert_eq!(
            listed(&marks, 7),
            vec![
                Tile {
                    side: 0,
                    block: ba,
                    blacks: 8..16.min(block.black_sets),
                    whites: 16..24,
                },
                Tile {
                    side: 1,
                    block: bb,
                    blacks: first(b.blocks[bb].black_sets),
                    whites: first(b.blocks[bb].white_sets),
                }
            ]
        );
        // A level scanned is gone, its memory with it.
        marks.scanned(7);
        assert_eq!(marks.next_from(0), Some(9));
        assert!(listed(&marks, 7).is_empty() && marks.levels[7].get().is_none());
    }

    #[test]
    fn a_row_of_tiles_is_one_unit() {
        let shape = Shape::new(5, 4).unwrap();
        let (a, b) = (shape.layer(8, 9), shape.layer(9, 8));
        let marks = Marks::new(&[&a, &b], 4);
        assert!(marks.tiles(1).rows().is_empty());
        // Two blocks of side 0 wide and tall enough for two rows and two
        // columns of tiles, and a block of side 1.
        let wide: Vec<usize> = (0..a.blocks.len())
            .filter(|&i| a.blocks[i].black_sets > 8 && a.blocks[i].white_sets > 8)
            .take(2)
            .collect();
        assert_eq!(wide.len(), 2);
        let (x, y) = (&a.blocks[wide[0]], &a.blocks[wide[1]]);
        marks.mark(1, 0, wide[0], x.slot(0, 0));
        marks.mark(1, 0, wide[0], x.slot(1, 9));
        marks.mark(1, 0, wide[0], x.slot(9, 0));
        marks.mark(1, 0, wide[1], y.slot(9, 9));
        marks.mark(1, 1, 0, b.blocks[0].offset);
        let tiles = marks.tiles(1);
        assert_eq!(tiles.len(), 5);
        assert_eq!(tiles.rows(), [0..2, 2..3, 3..4, 4..5]);
        assert_eq!(tiles.slots(), 5 * 64);
    }
}

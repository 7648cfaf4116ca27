//! The tile code of win/draw/loss files (block code 1): a layer's slots
//! cut into tiles of rows, each position coded by a binary range coder
//! whose odds depend on the values of its neighbours in the tile.
//!
//! A layer's index is a list of matrices, one for each car-count block:
//! a row is one black set, a column one white set. Neighbouring rows and
//! columns hold positions that differ by a car, and their values agree
//! far more often than the runs of one row show (measured in
//! docs/tables.md: the value above adds as much as the value before). So
//! a block of the file is a tile of up to `width` columns and as many rows
//! as fit the tile's slots, and a position's odds depend on the values
//! left of it and above it in its tile (its context). Each context starts
//! a tile at the layer's odds (stored in the file) and follows the values
//! as the tile goes, so local runs of one value cost little.
//!
//! A position is coded as one or two binary decisions: drawn or not, then
//! won or lost. Slots that are no position are not coded; they take the
//! value before them in their row (above them at a row's start) for their
//! neighbours' contexts.
//!
//! Nothing here reads or writes files: the geometry of a layer's tiles
//! ([`Tiling`]), the layer's odds ([`Model`]) and a tile's values in and
//! bytes out, and back.

use super::codec::BadBlock;
use crate::solver::index::layers::{Block, Layer};

/// The neighbours a position's context may take, in the order a file
/// takes them (a file uses the first few): rows up and columns left, a
/// negative column to the right.
pub const NEIGHBOURS: [(usize, isize); 8] = [
    (0, 1),
    (1, 0),
    (0, 2),
    (1, 1),
    (1, -1),
    (2, 0),
    (0, 3),
    (1, 2),
];
/// Rows above, columns left and right a context may look: the margins of
/// a tile's grid, so that no neighbour leaves it.
const TOP: usize = 2;
const LEFT: usize = 3;
const RIGHT: usize = 1;

/// A neighbour outside the tile.
const OUTSIDE: u8 = 3;
/// A stored value: 0 draw, 1 win, 2 loss (as `.wdl` files store them).
const DRAW: u8 = 0;
const WIN: u8 = 1;
const LOSS: u8 = 2;

/// Bits of a probability: the odds of a decision being 0 are `p / ONE`.
const PROB_BITS: u32 = 12;
const ONE: u16 = 1 << PROB_BITS;
/// How fast the odds follow the values: a sixteenth of the way each time.
const ADAPT_SHIFT: u32 = 4;
/// The range coder's renormalisation threshold.
const TOP_RANGE: u32 = 1 << 24;

/// The geometry of a layer's tiles: each car-count block of the layer cut
/// into bands of `height` rows, each band into tiles of `width` columns,
/// numbered block by block, band by band, left to right.
#[derive(Clone, Debug)]
pub struct Tiling {
    parts: Vec<Part>,
    tiles: u64,
}

/// The tiles of one car-count block.
#[derive(Clone, Copy, Debug)]
struct Part {
    block: Block,
    width: u64,
    height: u64,
    /// Tiles in a band.
    across: u64,
    /// Number of the part's first tile.
    first: u64,
}

/// One tile: which block, its first row and column there, and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    pub block: Block,
    pub row: u64,
    pub column: u64,
    pub rows: usize,
    pub columns: usize,
}

impl Tile {
    pub fn slots(&self) -> usize {
        self.rows * self.columns
    }

    /// The layer's slot of the tile's row `r` and column `c`.
    pub fn slot(&self, r: usize, c: usize) -> u64 {
        self.block.slot(self.row + r as u64, self.column + c as u64)
    }
}

impl Tiling {
    /// Tiles of at most `tile_slots` slots and `width` columns (`width` at
    /// most `tile_slots`).
    pub fn new(layer: &Layer, tile_slots: u64, width: u64) -> Tiling {
        debug_assert!(width <= tile_slots && width > 0);
        let mut parts = Vec::with_capacity(layer.blocks.len());
        let mut tiles = 0;
        for block in &layer.blocks {
            if block.slots() == 0 {
                continue;
            }
            let width = block.white_sets.min(width);
            let height = (tile_slots / width).clamp(1, block.black_sets);
            let across = block.white_sets.div_ceil(width);
            parts.push(Part {
                block: *block,
                width,
                height,
                across,
                first: tiles,
            });
            tiles += across * block.black_sets.div_ceil(height);
        }
        Tiling { parts, tiles }
    }

    pub fn tiles(&self) -> u64 {
        self.tiles
    }

    /// The tile holding `slot` and the slot's place in it (row by row).
    pub fn locate(&self, slot: u64) -> (u64, usize) {
        let i = self
            .parts
            .partition_point(|p| p.block.offset <= slot)
            .saturating_sub(1);
        let part = &self.parts[i];
        let within = slot - part.block.offset;
        let (row, column) = (
            within / part.block.white_sets,
            within % part.block.white_sets,
        );
        let (band, across) = (row / part.height, column / part.width);
        let tile = part.first + band * part.across + across;
        let columns = part.width.min(part.block.white_sets - across * part.width);
        let place = (row % part.height) * columns + column % part.width;
        (tile, place as usize)
    }

    /// Tile number `tile` (below [`Tiling::tiles`]).
    pub fn tile(&self, tile: u64) -> Tile {
        let i = self.parts.partition_point(|p| p.first <= tile) - 1;
        let part = &self.parts[i];
        let (band, across) = (
            (tile - part.first) / part.across,
            (tile - part.first) % part.across,
        );
        let (row, column) = (band * part.height, across * part.width);
        Tile {
            block: part.block,
            row,
            column,
            rows: part.height.min(part.block.black_sets - row) as usize,
            columns: part.width.min(part.block.white_sets - column) as usize,
        }
    }

    /// The tiles of the band holding `slot`'s row: its first tile and how
    /// many tiles the band has.
    pub fn band_of(&self, slot: u64) -> (u64, u64) {
        let (tile, _) = self.locate(slot);
        let i = self.parts.partition_point(|p| p.first <= tile) - 1;
        let part = &self.parts[i];
        let band = (tile - part.first) / part.across;
        (part.first + band * part.across, part.across)
    }
}

/// The odds a layer's tiles start from: for each context, of a position
/// being drawn, and of a won-or-lost one being won.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    neighbours: usize,
    odds: Vec<[u16; 2]>,
}

/// Counts of draws, wins and losses by context, to fit a [`Model`].
pub type Counts = Vec<[u64; 3]>;

/// Contexts of `neighbours` neighbours.
pub fn contexts(neighbours: usize) -> usize {
    1 << (2 * neighbours)
}

impl Model {
    /// The model of these counts (a context never seen starts even).
    pub fn fit(neighbours: usize, counts: &[[u64; 3]]) -> Model {
        assert_eq!(counts.len(), contexts(neighbours));
        let odds = counts
            .iter()
            .map(|&[draws, wins, losses]| {
                [probability(draws, wins + losses), probability(wins, losses)]
            })
            .collect();
        Model { neighbours, odds }
    }

    /// Bytes a file holds for a model of `neighbours` neighbours.
    pub fn stored_len(neighbours: usize) -> usize {
        contexts(neighbours) * 4
    }

    /// The model as a file holds it: each context's two odds, 16 bits each.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.odds
            .iter()
            .flat_map(|pair| pair.iter().flat_map(|p| p.to_le_bytes()))
            .collect()
    }

    /// The model a file holds.
    ///
    /// # Errors
    /// A length other than [`Model::stored_len`], or odds of 0 or 1.
    pub fn from_bytes(neighbours: usize, bytes: &[u8]) -> Result<Model, BadBlock> {
        if !(1..=NEIGHBOURS.len()).contains(&neighbours) {
            return Err(BadBlock(format!("a tile code of {neighbours} neighbours")));
        }
        if bytes.len() != Model::stored_len(neighbours) {
            return Err(BadBlock("odds of the wrong length".into()));
        }
        let odds: Vec<[u16; 2]> = bytes
            .chunks_exact(4)
            .map(|b| {
                [
                    u16::from_le_bytes([b[0], b[1]]),
                    u16::from_le_bytes([b[2], b[3]]),
                ]
            })
            .collect();
        if odds.iter().flatten().any(|&p| p == 0 || p >= ONE) {
            return Err(BadBlock("odds out of range".into()));
        }
        Ok(Model { neighbours, odds })
    }

    /// Counts one tile's positions by context (`value(r, c)`: `None` for a
    /// slot that is no position).
    pub fn count(
        neighbours: usize,
        rows: usize,
        columns: usize,
        value: impl Fn(usize, usize) -> Option<u8>,
        counts: &mut [[u64; 3]],
    ) {
        walk(
            neighbours,
            rows,
            columns,
            &mut |r: usize, c: usize, context: usize| {
                let v = value(r, c)?;
                counts[context][usize::from(v)] += 1;
                Some(v)
            },
        );
    }

    /// Ideal bits of `counts` coded with static odds: an estimate of what
    /// this code costs (its adaptation usually does a little better).
    pub fn estimate_bits(counts: &[[u64; 3]]) -> f64 {
        let entropy = |n: &[u64]| {
            let total: u64 = n.iter().sum();
            n.iter()
                .filter(|&&k| k > 0)
                .map(|&k| -(k as f64) * (k as f64 / total as f64).log2())
                .sum::<f64>()
        };
        counts.iter().map(|n| entropy(n)).sum()
    }

    /// Appends the code of one tile's values to `out`.
    pub fn encode(
        &self,
        rows: usize,
        columns: usize,
        value: impl Fn(usize, usize) -> Option<u8>,
        out: &mut Vec<u8>,
    ) {
        let mut encoder = TileEncoder {
            odds: self.odds.clone(),
            coder: Encoder::new(out),
            value,
        };
        walk(self.neighbours, rows, columns, &mut encoder);
        encoder.coder.finish();
    }

    /// Decodes one tile into `values` (row by row; a slot that is no
    /// position holds whatever its neighbours' contexts took).
    /// `is_position(r, c)` must be what the encoder's values said. Never
    /// fails: damaged bytes decode to wrong values, which the block's
    /// checksum is there to catch.
    pub fn decode(
        &self,
        rows: usize,
        columns: usize,
        is_position: impl Fn(usize, usize) -> bool,
        bytes: &[u8],
        values: &mut Vec<u8>,
    ) {
        let grid = walk(
            self.neighbours,
            rows,
            columns,
            &mut TileDecoder {
                odds: self.odds.clone(),
                coder: Decoder::new(bytes),
                is_position,
            },
        );
        values.clear();
        let stride = LEFT + columns + RIGHT;
        for r in 0..rows {
            let start = (TOP + r) * stride + LEFT;
            values.extend_from_slice(&grid[start..start + columns]);
        }
    }
}

/// What [`walk`] does at each slot: `at(r, c, context)` gives the slot's
/// value, or `None` for a slot that is no position.
trait Visit {
    fn at(&mut self, r: usize, c: usize, context: usize) -> Option<u8>;
}

impl<F: FnMut(usize, usize, usize) -> Option<u8>> Visit for F {
    fn at(&mut self, r: usize, c: usize, context: usize) -> Option<u8> {
        self(r, c, context)
    }
}

/// The encoder's visit: a struct, as the decoder's ([`TileDecoder`]).
struct TileEncoder<'a, V> {
    odds: Vec<[u16; 2]>,
    coder: Encoder<'a>,
    value: V,
}

impl<V: Fn(usize, usize) -> Option<u8>> Visit for TileEncoder<'_, V> {
    #[inline(always)]
    fn at(&mut self, r: usize, c: usize, context: usize) -> Option<u8> {
        let v = (self.value)(r, c)?;
        let pair = &mut self.odds[context];
        self.coder.bit(&mut pair[0], v != DRAW);
        if v != DRAW {
            self.coder.bit(&mut pair[1], v == LOSS);
        }
        Some(v)
    }
}

/// The decoder's visit: a struct rather than a closure, so that it is
/// inlined into the walk's loop (a closure there was not, which cost
/// about a third of the decoding time in loads and stores of the coder).
struct TileDecoder<'a, P> {
    odds: Vec<[u16; 2]>,
    coder: Decoder<'a>,
    is_position: P,
}

impl<P: Fn(usize, usize) -> bool> Visit for TileDecoder<'_, P> {
    #[inline(always)]
    fn at(&mut self, r: usize, c: usize, context: usize) -> Option<u8> {
        if !(self.is_position)(r, c) {
            return None;
        }
        let pair = &mut self.odds[context];
        Some(if !self.coder.bit(&mut pair[0]) {
            DRAW
        } else if self.coder.bit(&mut pair[1]) {
            LOSS
        } else {
            WIN
        })
    }
}

/// The stored odds of `zeros` against `ones`, kept off 0 and 1.
fn probability(zeros: u64, ones: u64) -> u16 {
    let p = (zeros as f64 + 0.5) / ((zeros + ones) as f64 + 1.0);
    ((p * f64::from(ONE)) as u16).clamp(31, ONE - 31)
}

/// Visits a tile's slots row by row with each slot's context (see
/// [`Visit`]); a slot that is no position takes the value before it, or
/// above it at a row's start. Returns the tile's grid with its margins.
fn walk(neighbours: usize, rows: usize, columns: usize, at: &mut impl Visit) -> Vec<u8> {
    // One loop for each number of neighbours, its contexts unrolled.
    match neighbours {
        1 => walk_with::<1>(rows, columns, at),
        2 => walk_with::<2>(rows, columns, at),
        3 => walk_with::<3>(rows, columns, at),
        4 => walk_with::<4>(rows, columns, at),
        5 => walk_with::<5>(rows, columns, at),
        6 => walk_with::<6>(rows, columns, at),
        7 => walk_with::<7>(rows, columns, at),
        8 => walk_with::<8>(rows, columns, at),
        _ => unreachable!("{neighbours} neighbours"),
    }
}

fn walk_with<const N: usize>(rows: usize, columns: usize, at: &mut impl Visit) -> Vec<u8> {
    const { assert!(N <= NEIGHBOURS.len()) };
    let stride = LEFT + columns + RIGHT;
    let mut grid = vec![OUTSIDE; (TOP + rows) * stride];
    let offsets: [usize; N] = std::array::from_fn(|i| {
        let (up, left) = NEIGHBOURS[i];
        ((up * stride) as isize + left) as usize
    });
    for r in 0..rows {
        let row = (TOP + r) * stride + LEFT;
        for c in 0..columns {
            let i = row + c;
            let context = offsets.iter().fold(0, |context, &back| {
                context << 2 | usize::from(grid[i - back])
            });
            grid[i] = match at.at(r, c, context) {
                Some(v) => v,
                None if c > 0 => grid[i - 1],
                None if r > 0 => grid[i - stride],
                None => DRAW,
            };
        }
    }
    grid
}

/// A binary range coder (the carry-less form of LZMA's, with a byte of
/// carry held back): decisions in, bytes out.
struct Encoder<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    low: u64,
    range: u32,
    /// The last byte not yet written (a carry may still change it), and how
    /// many 0xFF bytes follow it.
    held: u8,
    pending: u64,
    /// The coder's first byte is always 0 and is not written.
    first: bool,
}

impl<'a> Encoder<'a> {
    fn new(out: &'a mut Vec<u8>) -> Encoder<'a> {
        let start = out.len();
        Encoder {
            out,
            start,
            low: 0,
            range: u32::MAX,
            held: 0,
            pending: 1,
            first: true,
        }
    }

    fn bit(&mut self, p: &mut u16, bit: bool) {
        let bound = (self.range >> PROB_BITS) * u32::from(*p);
        if bit {
            self.low += u64::from(bound);
            self.range -= bound;
            *p -= *p >> ADAPT_SHIFT;
        } else {
            self.range = bound;
            *p += (ONE - *p) >> ADAPT_SHIFT;
        }
        while self.range < TOP_RANGE {
            self.range <<= 8;
            self.shift();
        }
    }

    fn shift(&mut self) {
        if self.low < 0xFF00_0000 || self.low > u64::from(u32::MAX) {
            let carry = (self.low >> 32) as u8;
            let mut byte = self.held;
            loop {
                let out = byte.wrapping_add(carry);
                if self.first {
                    debug_assert_eq!(out, 0);
                    self.first = false;
                } else {
                    self.out.push(out);
                }
                byte = 0xFF;
                self.pending -= 1;
                if self.pending == 0 {
                    break;
                }
            }
            self.held = (self.low >> 24) as u8;
        }
        self.pending += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }

    /// Writes what is held; trailing zero bytes are left out (the decoder
    /// reads zeros past the end).
    fn finish(mut self) {
        for _ in 0..5 {
            self.shift();
        }
        while self.out.len() > self.start && self.out.last() == Some(&0) {
            self.out.pop();
        }
    }
}

struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
    range: u32,
    code: u32,
}

impl<'a> Decoder<'a> {
    fn new(bytes: &'a [u8]) -> Decoder<'a> {
        let mut decoder = Decoder {
            bytes,
            at: 0,
            range: u32::MAX,
            code: 0,
        };
        for _ in 0..4 {
            decoder.code = decoder.code << 8 | u32::from(decoder.next());
        }
        decoder
    }

    fn next(&mut self) -> u8 {
        let byte = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }

    #[inline(always)]
    fn bit(&mut self, p: &mut u16) -> bool {
        let bound = (self.range >> PROB_BITS) * u32::from(*p);
        let bit = if self.code < bound {
            self.range = bound;
            *p += (ONE - *p) >> ADAPT_SHIFT;
            false
        } else {
            self.code -= bound;
            self.range -= bound;
            *p -= *p >> ADAPT_SHIFT;
            true
        };
        while self.range < TOP_RANGE {
            self.range <<= 8;
            self.code = self.code << 8 | u32::from(self.next());
        }
        bit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::index::layers::Shape;

    /// A tile's values from a small generator: mostly runs, some noise,
    /// some slots that are no position (`None`).
    fn sample(rows: usize, columns: usize, seed: u64) -> Vec<Option<u8>> {
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut values = Vec::with_capacity(rows * columns);
        let mut current = 0u8;
        for _ in 0..rows * columns {
            let roll = next() % 100;
            if roll < 8 {
                current = (next() % 3) as u8;
            }
            values.push(if roll >= 80 { None } else { Some(current) });
        }
        values
    }

    fn round_trip(neighbours: usize, rows: usize, columns: usize, values: &[Option<u8>]) -> usize {
        let mut counts = vec![[0u64; 3]; contexts(neighbours)];
        let at = |r: usize, c: usize| values[r * columns + c];
        Model::count(neighbours, rows, columns, at, &mut counts);
        let model = Model::fit(neighbours, &counts);
        let stored = Model::from_bytes(neighbours, &model.to_bytes()).unwrap();
        assert_eq!(stored, model);
        let mut bytes = vec![7u8];
        model.encode(rows, columns, at, &mut bytes);
        let mut decoded = Vec::new();
        model.decode(
            rows,
            columns,
            |r, c| at(r, c).is_some(),
            &bytes[1..],
            &mut decoded,
        );
        assert_eq!(decoded.len(), rows * columns);
        for (i, value) in values.iter().enumerate() {
            if let Some(v) = value {
                assert_eq!(decoded[i], *v, "slot {i} of a {rows} x {columns} tile");
            }
        }
        bytes.len() - 1
    }

    #[test]
    fn tiles_decode_to_their_values() {
        for neighbours in [1, 5, NEIGHBOURS.len()] {
            for (rows, columns) in [(1, 1), (1, 40), (40, 1), (7, 300), (64, 256)] {
                for seed in 1..4 {
                    round_trip(neighbours, rows, columns, &sample(rows, columns, seed));
                }
            }
        }
        // Every slot no position, and every slot one value.
        assert_eq!(round_trip(5, 3, 9, &[None; 27]), 0);
        assert!(round_trip(5, 64, 256, &vec![Some(2); 64 * 256]) < 40);
    }

    #[test]
    fn runs_of_one_value_cost_little_and_noise_costs_more() {
        let quiet = round_trip(6, 64, 256, &sample(64, 256, 9));
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let noise: Vec<Option<u8>> = (0..64 * 256)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                Some(((state >> 33) % 3) as u8)
            })
            .collect();
        let loud = round_trip(6, 64, 256, &noise);
        assert!(quiet * 3 < loud, "{quiet} bytes against {loud}");
        // Three values uniformly: about log2(3) bits each, not much more.
        assert!((loud as f64) < 64.0 * 256.0 * 1.7 / 8.0, "{loud} bytes");
    }

    #[test]
    fn damaged_bytes_decode_without_panicking() {
        let model = Model::fit(6, &vec![[1, 1, 1]; contexts(6)]);
        let mut values = Vec::new();
        for bytes in [
            &[][..],
            &[0xFF; 3][..],
            &[0x80, 0, 0xFF, 0xFF, 0xFF, 0, 1][..],
        ] {
            model.decode(16, 64, |_, _| true, bytes, &mut values);
            assert_eq!(values.len(), 16 * 64);
            assert!(values.iter().all(|&v| v < 3));
        }
        assert!(Model::from_bytes(6, &[0; 3]).is_err());
        assert!(Model::from_bytes(6, &vec![0; Model::stored_len(6)]).is_err());
        assert!(Model::from_bytes(0, &[]).is_err());
        assert!(Model::from_bytes(NEIGHBOURS.len() + 1, &[]).is_err());
    }

    #[test]
    fn every_slot_is_in_one_tile_once() {
        let shape = Shape::new(5, 4).unwrap();
        for (black, white) in [(8, 8), (12, 3), (3, 14)] {
            let layer = shape.layer(black, white);
            for (tile_slots, width) in [(64, 8), (256, 256), (1 << 14, 1024), (16, 1)] {
                let tiling = Tiling::new(&layer, tile_slots, width);
                let mut seen = vec![false; layer.slots as usize];
                for t in 0..tiling.tiles() {
                    let tile = tiling.tile(t);
                    assert!(tile.slots() as u64 <= tile_slots && tile.slots() > 0);
                    for r in 0..tile.rows {
                        for c in 0..tile.columns {
                            let slot = tile.slot(r, c);
                            assert!(!seen[slot as usize], "slot {slot} twice");
                            seen[slot as usize] = true;
                            assert_eq!(tiling.locate(slot), (t, r * tile.columns + c));
                            let (band, across) = tiling.band_of(slot);
                            assert!((band..band + across).contains(&t));
                        }
                    }
                }
                assert!(seen.iter().all(|&s| s), "layer {}", layer.name());
            }
        }
    }
}

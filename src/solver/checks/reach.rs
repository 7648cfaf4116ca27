//! Which positions can arise from the start: a forward walk over the
//! layered index (the one the solved tables use), total progress by total
//! progress, with every reachable position visited exactly once, and its
//! census: the reachable positions by their stored value and side to move
//! (`dodgem solve --reach DIR`).
//!
//! Every move keeps a side's progress or raises it by one, so a position
//! reachable with total progress `t` is reached from positions of total
//! `t` or `t - 1`. The walk therefore closes total `t` completely (a
//! search over the sideways moves inside it, starting from what the moves
//! of total `t - 1` brought in), counts its positions and forgets them
//! before it moves on. Each layer `(a, b)` of total `t + 1` is fed by one
//! layer of total `t`, `(b - 1, a)`, so a pair of layers is closed by one
//! thread that owns its bitmaps and those of the two layers its forward
//! moves reach; a pair's bitmaps are freed as soon as it is counted. At
//! most about one total's bitmaps (two bits a slot) and one pair's
//! frontier (two more) are held: 3.6 GB plus 1 GB on 6 x 6.
//!
//! The index stores Black-to-move positions only. A White-to-move position
//! is kept as its mirror image (reflected in the diagonal, colours
//! swapped), which is a Black-to-move slot, so each layer carries two
//! bitmaps: "this slot is reachable with Black to move" and "the mirror of
//! this slot is reachable with White to move". Black's moves from either
//! lead, by [`Shape::children`], to a slot of the other bitmap.
//!
//! The closure of a pair walks its slots in tiles of rows, column by
//! column, as the solver does: the moves from one column all land in one
//! row of the layer they reach, which stays in cache.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::checkpoint;
pub use super::checkpoint::{Census, ReachCounts};
use crate::board::{self, Color, Position};
use crate::solver::files::format::{Kind, LayerError};
use crate::solver::files::store::Tables;
use crate::solver::index::layers::{Block, Child, Layer, Shape};
use crate::solver::index::value::{Dtz, Values};

/// Rows of a block a tile of the closure holds (with all its columns).
const TILE_ROWS: u64 = 256;

/// A bitmap over the slots of a layer, zeroed lazily by the system.
struct Bits(Vec<u64>);

impl Bits {
    fn new(slots: u64) -> Bits {
        Bits(bytemuck::zeroed_vec(slots.div_ceil(64) as usize))
    }

    /// Sets a bit; returns whether it was clear.
    fn set(&mut self, slot: u64) -> bool {
        let word = &mut self.0[(slot / 64) as usize];
        let bit = 1 << (slot % 64);
        let clear = *word & bit == 0;
        *word |= bit;
        clear
    }

    /// Word `i` with only its bits in `first..end`.
    fn word_in(&self, i: u64, first: u64, end: u64) -> u64 {
        let mut word = self.0[i as usize];
        if i == first / 64 {
            word &= u64::MAX << (first % 64);
        }
        if i == end / 64 {
            word &= (1 << (end % 64)) - 1;
        }
        word
    }

    /// The numbers of the words holding `first..end`.
    fn words(first: u64, end: u64) -> std::ops::Range<u64> {
        first / 64..end.div_ceil(64)
    }

    /// Whether a bit of `first..end` is set.
    fn any(&self, first: u64, end: u64) -> bool {
        Bits::words(first, end).any(|i| self.word_in(i, first, end) != 0)
    }

    /// The set bits of `first..end`, in order.
    fn ones(&self, first: u64, end: u64) -> impl Iterator<Item = u64> + '_ {
        Bits::words(first, end).flat_map(move |i| {
            let mut rest = self.word_in(i, first, end);
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let slot = i * 64 + u64::from(rest.trailing_zeros());
                    rest &= rest - 1;
                    slot
                })
            })
        })
    }

    /// Clears the bits of word `i` in `first..end`; returns those that
    /// were set (bit `j` is slot `64 * i + j`).
    fn take_word(&mut self, i: u64, first: u64, end: u64) -> u64 {
        let taken = self.word_in(i, first, end);
        self.0[i as usize] &= !taken;
        taken
    }
}

/// One layer's two bitmaps: index 0 Black to move, 1 White to move.
struct LayerBits {
    layer: Layer,
    reached: [Bits; 2],
}

impl LayerBits {
    fn new(layer: Layer) -> LayerBits {
        let reached = [Bits::new(layer.slots), Bits::new(layer.slots)];
        LayerBits { layer, reached }
    }
}

/// A reachable position the walk hands to its visitor.
#[derive(Clone, Copy, Debug)]
pub struct Reached {
    pub position: Position,
    /// Its stored value for the side to move.
    pub value: Dtz,
}

/// The board position of a slot: the slot's own position with Black to
/// move, or its mirror image with White to move. `black` and `white` are
/// the slot's masks (squares `rank * size + file`).
fn position_of(size: usize, black: u64, white: u64, side: Color) -> Position {
    let n = size as u64;
    // With White to move the real cars are the slot's reflected in the
    // diagonal, colours swapped.
    let spread = |mut mask: u64, mirrored: bool| {
        let mut bits = 0u64;
        while mask != 0 {
            let d = u64::from(mask.trailing_zeros());
            let (file, rank) = if mirrored {
                (d / n, d % n)
            } else {
                (d % n, d / n)
            };
            bits |= 1 << board::square(file as usize, rank as usize);
            mask &= mask - 1;
        }
        bits
    };
    match side {
        Color::Black => {
            Position::from_parts(size, spread(black, false), spread(white, false), side)
        }
        Color::White => Position::from_parts(size, spread(white, true), spread(black, true), side),
    }
}

/// Walks every position reachable from the start of the board of
/// `tables` (which must hold every car, not an endgame), calling `visit`
/// once for each in which both sides still have a car, from up to
/// `threads` threads. Returns the counts (both sides to move).
///
/// # Errors
/// A layer file that is missing or damaged.
pub fn walk(
    tables: &Tables,
    threads: usize,
    visit: &(dyn Fn(&Reached) + Sync),
    progress: &mut dyn FnMut(u32, u32),
) -> Result<ReachCounts, LayerError> {
    let walked = run(tables, threads, Some(visit), None, progress)?;
    Ok(walked
        .expect("a walk without a checkpoint runs to the end")
        .on_board())
}

/// Counts every position reachable from the start of the board of
/// `tables` (which must hold every car) by side to move and value, on up
/// to `threads` threads; `progress(done, all)` after each total progress.
///
/// # Errors
/// A layer file that is missing or damaged.
pub fn census(
    tables: &Tables,
    threads: usize,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<Census, LayerError> {
    let counted = run(tables, threads, None, None, progress)?;
    Ok(counted.expect("a walk without a checkpoint runs to the end"))
}

/// Where and how often a census saves its state, so that it can be
/// stopped at any moment and go on from its last save.
pub struct Checkpoint<'a> {
    pub path: &'a Path,
    /// Least time between two saves (the state can take gigabytes).
    pub every: Duration,
    /// Stop after closing this many totals (for tests of the resume).
    pub stop_after: Option<u32>,
}

/// [`census`], saving its state at `checkpoint` as it goes (a save after
/// the last total keeps the final counts) and starting from the state
/// saved there, if any. `Ok(None)` when stopped by
/// [`Checkpoint::stop_after`].
///
/// # Errors
/// A layer file that is missing or damaged; a checkpoint that cannot be
/// written, or is damaged or of other tables.
pub fn census_resumable(
    tables: &Tables,
    threads: usize,
    checkpoint: &Checkpoint,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<Option<Census>, LayerError> {
    run(tables, threads, None, Some(checkpoint), progress)
}

/// The visitor of [`walk`], if any.
type Visit<'a> = Option<&'a (dyn Fn(&Reached) + Sync)>;

/// A pair of layers of one total, `(a, b)` and `(b, a)` (one layer when
/// `a == b`), with what has reached them.
struct Job {
    layers: Vec<LayerBits>,
}

fn run(
    tables: &Tables,
    threads: usize,
    visit: Visit,
    checkpoint: Option<&Checkpoint>,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<Option<Census>, LayerError> {
    let shape = tables.shape();
    let start = Position::start(shape.size());
    let (a0, b0, slot0) = shape
        .locate(&start)
        .expect("tables of a whole board hold the start");
    let (low, high) = (shape.min_progress(), shape.max_progress());
    let last_total = 2 * high;
    let mut first = LayerBits::new(shape.layer(a0, b0));
    first.reached[Color::Black.index()].set(slot0);
    let mut current = HashMap::from([((a0, b0), first)]);
    let mut census = Census::default();
    let mut from = a0 + b0;
    if let Some(saved) = checkpoint
        .map(|c| checkpoint::load(c.path, tables.kind(), tables.fingerprint(), shape))
        .transpose()?
        .flatten()
    {
        from = saved.total;
        census = saved.census;
        current = saved
            .layers
            .into_iter()
            .map(|(a, b, [black, white])| {
                let bits = LayerBits {
                    layer: shape.layer(a, b),
                    reached: [Bits(black), Bits(white)],
                };
                ((a, b), bits)
            })
            .collect();
    }
    let mut saved_at = Instant::now();
    let mut closed = 0;
    for total in from..=last_total {
        progress(total - (a0 + b0), last_total + 1 - (a0 + b0));
        // The pairs of this total that anything reached, largest first.
        let mut jobs = Vec::new();
        for a in low..=high {
            let Some(b) = total.checked_sub(a).filter(|b| (a..=high).contains(b)) else {
                continue;
            };
            let mut layers = vec![current.remove(&(a, b))];
            if a != b {
                layers.push(current.remove(&(b, a)));
            }
            if layers.iter().all(Option::is_none) {
                continue;
            }
            let layers = layers
                .into_iter()
                .zip([(a, b), (b, a)])
                .map(|(bits, (x, y))| bits.unwrap_or_else(|| LayerBits::new(shape.layer(x, y))))
                .collect();
            jobs.push(Job { layers });
        }
        jobs.sort_by_key(|job| job.layers.iter().map(|l| l.layer.slots).sum::<u64>());
        let jobs = Mutex::new(jobs);
        let next = Mutex::new(HashMap::new());
        let results = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..threads.max(1) {
                scope.spawn(|| {
                    loop {
                        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).pop();
                        let Some(job) = job else {
                            break;
                        };
                        let result =
                            close_pair(shape, tables, job, visit).map(|(counts, ahead)| {
                                next.lock().unwrap_or_else(|e| e.into_inner()).extend(
                                    ahead
                                        .into_iter()
                                        .map(|l| ((l.layer.black, l.layer.white), l)),
                                );
                                counts
                            });
                        results
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(result);
                    }
                });
            }
        });
        for result in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
            census.add(&result?);
        }
        current = next.into_inner().unwrap_or_else(|e| e.into_inner());
        closed += 1;
        if let Some(checkpoint) = checkpoint {
            let stop = checkpoint.stop_after == Some(closed);
            if stop || total == last_total || saved_at.elapsed() >= checkpoint.every {
                let binding = (tables.kind(), tables.fingerprint());
                save(checkpoint.path, binding, total + 1, &census, &current)?;
                saved_at = Instant::now();
            }
            if stop && total < last_total {
                return Ok(None);
            }
        }
    }
    progress(last_total + 1 - (a0 + b0), last_total + 1 - (a0 + b0));
    Ok(Some(census))
}

/// Saves the walk's state before it closes `total`.
fn save(
    path: &Path,
    (kind, tables): (Kind, u64),
    total: u32,
    census: &Census,
    current: &HashMap<(u32, u32), LayerBits>,
) -> Result<(), LayerError> {
    let mut layers: Vec<_> = current
        .iter()
        .map(|(&(a, b), bits)| (a, b, [&bits.reached[0].0[..], &bits.reached[1].0[..]]))
        .collect();
    layers.sort_by_key(|&(a, b, _)| (a, b));
    let saved = checkpoint::Saved {
        total,
        census: *census,
        layers,
    };
    checkpoint::save(path, kind, tables, &saved).map_err(|e| LayerError::Io(path.to_path_buf(), e))
}

/// The tiles of a layer: rows `rows` of block `block`, up to
/// [`TILE_ROWS`] of them, every column.
struct Tiles {
    tiles: Vec<(usize, u64, u64)>,
    /// Per block: its first tile.
    first: Vec<usize>,
}

impl Tiles {
    fn new(layer: &Layer) -> Tiles {
        let mut tiles = Vec::new();
        let mut first = Vec::new();
        for (i, block) in layer.blocks.iter().enumerate() {
            first.push(tiles.len());
            let mut r0 = 0;
            while r0 < block.black_sets {
                let r1 = (r0 + TILE_ROWS).min(block.black_sets);
                tiles.push((i, r0, r1));
                r0 = r1;
            }
        }
        Tiles { tiles, first }
    }

    /// The tile holding row `row` of block `block`.
    fn of(&self, block: usize, row: u64) -> usize {
        self.first[block] + (row / TILE_ROWS) as usize
    }
}

/// Where the frontier keeps the slot at `row`, `column` of `block`: tile
/// by tile and, inside a tile, column by column, so that the slots of a
/// tile due in one column are one run of bits.
fn frontier_index(block: &Block, row: u64, column: u64) -> u64 {
    let r0 = row / TILE_ROWS * TILE_ROWS;
    let height = TILE_ROWS.min(block.black_sets - r0);
    block.offset + r0 * block.white_sets + column * height + (row - r0)
}

/// The number of the block of `layer` holding `slot`.
fn block_of(layer: &Layer, slot: u64) -> usize {
    layer.blocks.partition_point(|b| b.offset <= slot) - 1
}

/// Slots found reachable and not yet followed (laid out by
/// [`frontier_index`]), and which tiles hold any.
struct Frontier {
    bits: Bits,
    dirty: Vec<bool>,
}

impl Frontier {
    fn add(&mut self, tiles: &Tiles, block_index: usize, block: &Block, row: u64, column: u64) {
        self.bits.set(frontier_index(block, row, column));
        self.dirty[tiles.of(block_index, row)] = true;
    }
}

/// The closure of one pair: its layers, what reached them, what is left
/// to follow, and what their forward moves reach.
struct Closure<'a> {
    shape: &'a Shape,
    layers: Vec<Layer>,
    tiles: Vec<Tiles>,
    reached: Vec<[Bits; 2]>,
    frontier: Vec<[Frontier; 2]>,
    /// The layer ahead of each layer, `(b, a + 1)` for `(a, b)`, if any.
    ahead: Vec<Option<LayerBits>>,
    /// Finished games reached: (layer, side that moved, white cars, white
    /// set), each once.
    finished: HashSet<(usize, usize, u32, u64)>,
    blocked: [u64; 2],
}

impl Closure<'_> {
    /// Follows Black's moves from slot `(row, column)` of `block` of layer
    /// `which`, `side` to move. Its sideways moves all land in row
    /// `column` of the partner layer's block `mirrored`, its forward moves
    /// in row `column` of the layer ahead: a tile walked column by column
    /// keeps them in cache.
    fn expand(
        &mut self,
        which: usize,
        side: usize,
        (block, mirrored): (&Block, usize),
        row: u64,
        column: u64,
    ) {
        let partner = self.layers.len() - 1 - which;
        let other = 1 - side;
        let black = self.shape.black_set(block, row);
        let white = self.shape.white_set(block, column);
        let Closure {
            shape,
            layers,
            tiles,
            reached,
            frontier,
            ahead,
            finished,
            ..
        } = self;
        let (ahead_layer, mut ahead_bits) = match &mut ahead[which] {
            Some(bits) => (Some(&bits.layer), Some(&mut bits.reached[other])),
            None => (None, None),
        };
        let target = &layers[partner].blocks[mirrored];
        let moves = shape.children(
            block,
            row,
            black,
            white,
            column,
            &layers[partner],
            ahead_layer,
            |child| match child {
                Child::Sideways(to) => {
                    if reached[partner][other].set(to) {
                        let to_column = to - target.offset - column * target.white_sets;
                        frontier[partner][other].add(
                            &tiles[partner],
                            mirrored,
                            target,
                            column,
                            to_column,
                        );
                    }
                }
                Child::Forward(to) => {
                    ahead_bits
                        .as_mut()
                        .expect("a forward move has a layer ahead")
                        .set(to);
                }
                Child::Finish => {
                    finished.insert((which, side, block.white_cars, column));
                }
            },
        );
        if moves == 0 {
            self.blocked[side] += 1;
        }
    }

    /// Follows the frontier's slots of tile `tile` of layer `which`, `side`
    /// to move, column by column, taking them out of the frontier.
    fn sweep(&mut self, which: usize, side: usize, tile: usize) {
        let (i, r0, r1) = self.tiles[which].tiles[tile];
        let block = self.layers[which].blocks[i];
        let partner = self.layers.len() - 1 - which;
        let mirrored = self.layers[partner]
            .block_index(block.white_cars, block.black_cars)
            .expect("the partner layer has the mirrored block");
        let height = r1 - r0;
        let mut start = block.offset + r0 * block.white_sets;
        for column in 0..block.white_sets {
            let end = start + height;
            for i in Bits::words(start, end) {
                let mut due = self.frontier[which][side].bits.take_word(i, start, end);
                while due != 0 {
                    let slot = i * 64 + u64::from(due.trailing_zeros());
                    due &= due - 1;
                    self.expand(which, side, (&block, mirrored), r0 + (slot - start), column);
                }
            }
            start = end;
        }
    }

    /// Closes the pair under sideways moves: everything reached before
    /// the closure began is due, then whatever its moves reach, until
    /// nothing new turns up.
    fn close(&mut self) {
        for which in 0..self.layers.len() {
            for side in 0..2 {
                let Closure {
                    layers,
                    tiles,
                    reached,
                    frontier,
                    ..
                } = self;
                for (i, block) in layers[which].blocks.iter().enumerate() {
                    for row in 0..block.black_sets {
                        let first = block.slot(row, 0);
                        for slot in reached[which][side].ones(first, first + block.white_sets) {
                            frontier[which][side].add(&tiles[which], i, block, row, slot - first);
                        }
                    }
                }
            }
        }
        loop {
            let mut swept = false;
            for which in 0..self.layers.len() {
                for side in 0..2 {
                    for tile in 0..self.tiles[which].tiles.len() {
                        let dirty = &mut self.frontier[which][side].dirty[tile];
                        if std::mem::take(dirty) {
                            swept = true;
                            self.sweep(which, side, tile);
                        }
                    }
                }
            }
            if !swept {
                break;
            }
        }
    }
}

/// Closes the pair of `job` under sideways moves, marks where its forward
/// moves lead, and counts (and visits) its reachable positions. Returns
/// the counts and the layers ahead its forward moves reached.
fn close_pair(
    shape: &Shape,
    tables: &Tables,
    job: Job,
    visit: Visit,
) -> Result<(Census, Vec<LayerBits>), LayerError> {
    let high = shape.max_progress();
    let mut closure = Closure {
        shape,
        layers: Vec::new(),
        tiles: Vec::new(),
        reached: Vec::new(),
        frontier: Vec::new(),
        ahead: Vec::new(),
        finished: HashSet::new(),
        blocked: [0; 2],
    };
    for bits in job.layers {
        let (a, b) = (bits.layer.black, bits.layer.white);
        let slots = bits.layer.slots;
        let tiles = Tiles::new(&bits.layer);
        let frontier = || Frontier {
            bits: Bits::new(slots),
            dirty: vec![false; tiles.tiles.len()],
        };
        closure.frontier.push([frontier(), frontier()]);
        closure.tiles.push(tiles);
        closure.reached.push(bits.reached);
        closure.layers.push(bits.layer);
        let ahead = (a < high)
            .then(|| shape.layer(b, a + 1))
            .filter(|layer| layer.slots > 0);
        closure.ahead.push(ahead.map(LayerBits::new));
    }
    closure.close();
    let Closure {
        layers,
        reached,
        frontier,
        ahead,
        finished,
        blocked,
        ..
    } = closure;
    drop(frontier);
    let mut census = Census::default();
    for &(_, side, _, _) in &finished {
        // The side that took its last car off has won; the other is to
        // move.
        census.finished[1 - side] += 1;
    }
    for (side, &count) in blocked.iter().enumerate() {
        census.sides[side].blocked = count;
    }
    for (layer, bits) in layers.iter().zip(&reached) {
        if !bits.iter().any(|b| b.any(0, layer.slots)) {
            continue;
        }
        tables.stream_values(layer.black, layer.white, &mut |first, values: &Values| {
            let end = first + values.len() as u64;
            for (side, color) in [Color::Black, Color::White].into_iter().enumerate() {
                let counts = &mut census.sides[side];
                for slot in bits[side].ones(first, end) {
                    let value = values.get(slot - first);
                    match value {
                        Dtz::Win(_) => counts.wins += 1,
                        Dtz::Draw => counts.draws += 1,
                        Dtz::Loss(_) => counts.losses += 1,
                    }
                    if let Some(visit) = visit {
                        let block = &layer.blocks[block_of(layer, slot)];
                        let within = slot - block.offset;
                        let black = shape.black_set(block, within / block.white_sets);
                        let white = shape.white_set(block, within % block.white_sets);
                        let position = position_of(shape.size(), black, white, color);
                        visit(&Reached { position, value });
                    }
                }
            }
        })?;
    }
    Ok((census, ahead.into_iter().flatten().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_become_their_positions_and_mirrors() {
        // 3 x 3, squares rank * 3 + file: Black on 0 (a1) and 4 (b2),
        // White on 2 (c1).
        let position = position_of(3, 0b1_0001, 0b100, Color::Black);
        assert_eq!(crate::notation::format_position(&position), "3/1B1/B1W b");
        // Mirrored: Black's cars come from White's, reflected (c1 -> a3).
        let mirrored = position_of(3, 0b1_0001, 0b100, Color::White);
        assert_eq!(crate::notation::format_position(&mirrored), "B2/1W1/W2 w");
    }

    #[test]
    fn bitmaps_list_their_bits_in_a_range() {
        let mut bits = Bits::new(200);
        for slot in [0, 5, 63, 64, 130, 199] {
            assert!(bits.set(slot));
        }
        assert!(!bits.set(5));
        assert_eq!(
            bits.ones(0, 200).collect::<Vec<_>>(),
            [0, 5, 63, 64, 130, 199]
        );
        assert_eq!(bits.ones(64, 131).collect::<Vec<_>>(), [64, 130]);
        assert!(bits.any(100, 140) && !bits.any(65, 128));
        // Ranges need not start on a word.
        assert_eq!(bits.ones(4, 70).collect::<Vec<_>>(), [5, 63, 64]);
        assert_eq!(bits.take_word(2, 129, 200), 1 << 2);
        assert_eq!(bits.ones(0, 200).collect::<Vec<_>>(), [0, 5, 63, 64, 199]);
        assert_eq!(bits.take_word(0, 6, 64), 1 << 63);
        assert_eq!(bits.ones(0, 200).collect::<Vec<_>>(), [0, 5, 64, 199]);
    }

    #[test]
    fn the_frontier_lays_out_each_tile_column_by_column() {
        // A block of 600 rows (tiles of 256, 256 and 88 rows) and 3
        // columns from slot 1000: every slot has its own place.
        let block = Block {
            black_cars: 2,
            white_cars: 2,
            black_sum: 0,
            white_sum: 0,
            offset: 1000,
            black_sets: 600,
            white_sets: 3,
        };
        let mut seen = HashSet::new();
        for row in 0..600 {
            for column in 0..3 {
                let index = frontier_index(&block, row, column);
                assert!((1000..1000 + 1800).contains(&index));
                assert!(seen.insert(index));
            }
        }
        assert_eq!(frontier_index(&block, 1, 0), 1001);
        assert_eq!(frontier_index(&block, 0, 1), 1000 + 256);
        assert_eq!(frontier_index(&block, 512, 1), 1000 + 512 * 3 + 88);
    }
}

//! The retrograde pass of one pair of layers, `(a, b)` and `(b, a)`: the
//! win, draw or loss of every position and its distance to the end of the
//! game, together, in one pass over the pair at one byte a slot, given the
//! distances to the end of the layers the forward moves reach.
//!
//! The positions are decided level by level, a level being a distance to
//! the end, so the winner takes the quickest way and the loser the
//! slowest. A slot's byte says what is known of it:
//!
//! - **Seed.** A position's forward moves give its first word: one into a
//!   loss for the opponent at distance `e` (or Black's last exit, `e = 0`)
//!   makes it *won by level `e + 1`* at the latest; one into a draw means it
//!   can never be lost; if every forward move is into a win for the
//!   opponent, the longest at `e` means it is *not lost before level
//!   `e + 1`*. A position without a move ends the game at level 0, lost
//!   (`textbook`) or won (`classic`). Seeds from the layers ahead thus
//!   enter at their own level, as Syzygy's capture codes do.
//! - **Levels.** An undecided position that no forward move saves from
//!   losing holds the count of its sideways moves not yet known to reach
//!   a win for the opponent (at most 14, so the byte keeps room for the
//!   levels). At level `L`, first each loss a seed put off to `L` is
//!   checked once by generating its sideways moves: every one must lead
//!   to a position won before `L`, or the position is open again with its
//!   count. Then each position decided at `L - 1` tells its sideways
//!   parents: a lost child makes a parent not yet won won at `L`; a won
//!   child takes one off an open parent's count, and a parent left with
//!   none is lost at `L`. A win waiting for its level needs no work: its
//!   code reads as won once the level is reached.
//!
//! What is left undecided is a draw. The codes hold levels relative to
//! the pair's lowest seed; a pair whose levels pass what a byte holds
//! goes on from that level with a ninth bit beside each byte (the codes
//! read the same), and a side whose layer ahead's distances would seed
//! beyond it takes one before it is seeded (the other side's codes kept);
//! a pair whose levels pass nine bits is solved again in two bytes. A
//! level scans only the tiles of slots marked for it ([`Marks`]); a unit
//! of work is a row of tiles, whose children's parents no other unit
//! writes, so plain atomic loads and stores do and the result does not
//! depend on thread timing.
//!
//! Memory: the pair's byte a slot, one layer ahead's distances while its
//! side is seeded, and the marks.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU64, Ordering};

use super::marks::{Listed, Marks};
use super::retro::{Solved, units};
use crate::board::Rules;
use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::{Dtz, MAX_NARROW_DTZ, MAX_PACKED_DTZ, Tally, Values, encode};
use crate::solver::{SolveError, parallel};

/// Most sideways moves a position has: two for each car of the side to
/// move, on the largest board. An undecided position that a forward draw
/// does not save holds the number of its sideways moves not yet known to
/// reach a win for the opponent, `1..=MOST_OPEN`.
const MOST_OPEN: u16 = 2 * (crate::board::MAX_SIZE as u16 - 1);
/// Undecided, and a forward move draws: never lost.
const ESCAPE: u16 = MOST_OPEN + 1;
/// A slot that is no position (the sets overlap).
const NO_POSITION: u16 = MOST_OPEN + 2;
/// The first level code: `FIRST + 2x` won at (or waiting for) level
/// `base + x`, `FIRST + 2x + 1` lost at (or waiting for) it.
const FIRST: u16 = MOST_OPEN + 3;

/// Longest distance to the end a pass gives (the levels the marks
/// keep).
pub const MAX_LEVEL: u32 = 4095;

/// A side's codes, a code a slot: one byte, one byte and a ninth bit
/// beside (for a pair whose levels span more than one byte holds), or two
/// bytes (for one whose levels span more than that).
trait Cells: Send + Sync + Sized {
    /// Levels a pair's codes hold, from its base.
    const LEVELS: u32;
    /// The width these cells are.
    const WIDTH: Width;
    /// The cells a pair whose levels outgrow these goes on in.
    type Wider: Cells;
    /// These cells as [`Cells::Wider`] ones holding the same codes, where
    /// that costs little memory; `None` where the pair must be solved
    /// again in wider cells.
    fn widen(self) -> Option<Self::Wider>;
    fn zeroed(slots: usize) -> Self;
    fn len(&self) -> usize;
    fn get(&self, slot: usize) -> u16;
    fn set(&self, slot: usize, code: u16);
    /// Calls `hit(slot, code)` for each slot of `slots`, in order, whose
    /// code is at least `low` and under `low + span`.
    fn scan(
        &self,
        slots: std::ops::Range<usize>,
        low: u16,
        span: u16,
        mut hit: impl FnMut(usize, u16),
    ) {
        for slot in slots {
            let code = self.get(slot);
            if code.wrapping_sub(low) < span {
                hit(slot, code);
            }
        }
    }
    /// Adds each slot's code to `counts` (one entry a code).
    fn count(&self, counts: &mut [u64]) {
        for slot in 0..self.len() {
            counts[usize::from(self.get(slot))] += 1;
        }
    }
    /// Every slot's `file_code` of its code (called in slot order), as
    /// [`Values`] for distances up to `longest`: in place where the widths
    /// allow.
    fn into_values(self, longest: u32, file_code: impl FnMut(u16) -> u16) -> Values;
}

/// The codes of `slots` slots (`code(slot)`, in slot order) as new
/// [`Values`] for distances up to `longest`.
fn new_values(slots: usize, longest: u32, mut code: impl FnMut(usize) -> u16) -> Values {
    let mut values = Values::draws(slots, longest);
    for slot in 0..slots {
        values.set(slot as u64, code(slot));
    }
    values
}

impl Cells for Vec<AtomicU8> {
    const LEVELS: u32 = (256 - FIRST as u32) / 2;
    const WIDTH: Width = Width::Byte;
    type Wider = Ninth;
    /// A ninth bit a slot beside the bytes, all clear: every code reads
    /// as it did.
    fn widen(self) -> Option<Ninth> {
        let high = crate::memory::zeroed_vec(self.len().div_ceil(64));
        Some(Ninth { low: self, high })
    }
    fn zeroed(slots: usize) -> Self {
        crate::memory::zeroed_vec(slots)
    }
    fn len(&self) -> usize {
        self.as_slice().len()
    }
    fn get(&self, slot: usize) -> u16 {
        u16::from(self[slot].load(Ordering::Relaxed))
    }
    fn set(&self, slot: usize, code: u16) {
        self[slot].store(code as u8, Ordering::Relaxed);
    }
    fn scan(
        &self,
        slots: std::ops::Range<usize>,
        low: u16,
        span: u16,
        mut hit: impl FnMut(usize, u16),
    ) {
        // A slice's cells, without a bounds check each.
        let first = slots.start;
        for (k, cell) in self[slots].iter().enumerate() {
            let code = u16::from(cell.load(Ordering::Relaxed));
            if code.wrapping_sub(low) < span {
                hit(first + k, code);
            }
        }
    }
    fn count(&self, counts: &mut [u64]) {
        // Four tallies side by side, so that runs of one code do not wait
        // on one counter.
        let mut four = vec![[0u64; 4]; counts.len()];
        let cells = self.as_slice();
        let mut chunks = cells.chunks_exact(4);
        for chunk in &mut chunks {
            for (k, cell) in chunk.iter().enumerate() {
                four[usize::from(cell.load(Ordering::Relaxed))][k] += 1;
            }
        }
        for cell in chunks.remainder() {
            four[usize::from(cell.load(Ordering::Relaxed))][0] += 1;
        }
        for (count, n) in counts.iter_mut().zip(four) {
            *count += n.iter().sum::<u64>();
        }
    }
    fn into_values(self, longest: u32, mut file_code: impl FnMut(u16) -> u16) -> Values {
        let code = |cell: AtomicU8| u16::from(cell.into_inner());
        if longest <= MAX_NARROW_DTZ {
            Values::Narrow(
                self.into_iter()
                    .map(|cell| file_code(code(cell)) as u8)
                    .collect(),
            )
        } else if longest <= MAX_PACKED_DTZ {
            let mut ninth = crate::memory::zeroed_vec::<u64>(self.len().div_ceil(64));
            let low = self
                .into_iter()
                .enumerate()
                .map(|(slot, cell)| {
                    let code = file_code(code(cell));
                    ninth[slot / 64] |= u64::from(code >> 8 & 1) << (slot % 64);
                    code as u8
                })
                .collect();
            Values::Packed { low, ninth }
        } else {
            new_values(self.len(), longest, |slot| file_code(self.get(slot)))
        }
    }
}

/// One byte a slot and a ninth bit beside it.
struct Ninth {
    low: Vec<AtomicU8>,
    high: Vec<AtomicU64>,
}

impl Cells for Ninth {
    const LEVELS: u32 = (512 - FIRST as u32) / 2;
    const WIDTH: Width = Width::Ninth;
    type Wider = Vec<AtomicU16>;
    /// Two bytes a slot beside these would pass the memory a pair is
    /// given: the pair is solved again instead.
    fn widen(self) -> Option<Vec<AtomicU16>> {
        None
    }
    fn zeroed(slots: usize) -> Self {
        Ninth {
            low: crate::memory::zeroed_vec(slots),
            high: crate::memory::zeroed_vec(slots.div_ceil(64)),
        }
    }
    fn len(&self) -> usize {
        self.low.len()
    }
    fn get(&self, slot: usize) -> u16 {
        let high = self.high[slot / 64].load(Ordering::Relaxed) >> (slot % 64) & 1;
        u16::from(self.low[slot].load(Ordering::Relaxed)) | (high as u16) << 8
    }
    fn set(&self, slot: usize, code: u16) {
        self.low[slot].store(code as u8, Ordering::Relaxed);
        // Other threads set other bits of the word: read, then flip the
        // one bit if it differs. (A reader of this slot meanwhile sees
        // the old or the new high bit: both a loss or both not a win, for
        // the only codes set while the slot may be read.)
        let word = &self.high[slot / 64];
        let bit = 1u64 << (slot % 64);
        let high = code >> 8 & 1 == 1;
        if (word.load(Ordering::Relaxed) & bit != 0) != high {
            word.fetch_xor(bit, Ordering::Relaxed);
        }
    }
    fn into_values(self, longest: u32, mut file_code: impl FnMut(u16) -> u16) -> Values {
        let slots = self.len();
        let mut high: Vec<u64> = self.high.into_iter().map(AtomicU64::into_inner).collect();
        let code = |high: &[u64], slot: usize, low: u8| {
            u16::from(low) | ((high[slot / 64] >> (slot % 64) & 1) as u16) << 8
        };
        if longest <= MAX_NARROW_DTZ {
            Values::Narrow(
                self.low
                    .into_iter()
                    .enumerate()
                    .map(|(slot, cell)| file_code(code(&high, slot, cell.into_inner())) as u8)
                    .collect(),
            )
        } else if longest <= MAX_PACKED_DTZ {
            // The ninth bits are rewritten in place: each is read before
            // its own slot's file code replaces it.
            let low = self
                .low
                .into_iter()
                .enumerate()
                .map(|(slot, cell)| {
                    let new = file_code(code(&high, slot, cell.into_inner()));
                    let bit = 1u64 << (slot % 64);
                    if new >> 8 & 1 == 1 {
                        high[slot / 64] |= bit;
                    } else {
                        high[slot / 64] &= !bit;
                    }
                    new as u8
                })
                .collect();
            Values::Packed { low, ninth: high }
        } else {
            let low: Vec<u8> = self.low.into_iter().map(AtomicU8::into_inner).collect();
            new_values(slots, longest, |slot| {
                file_code(code(&high, slot, low[slot]))
            })
        }
    }
}

impl Cells for Vec<AtomicU16> {
    const LEVELS: u32 = MAX_LEVEL + 1;
    const WIDTH: Width = Width::Wide;
    type Wider = Self;
    fn widen(self) -> Option<Self> {
        None
    }
    fn zeroed(slots: usize) -> Self {
        crate::memory::zeroed_vec(slots)
    }
    fn len(&self) -> usize {
        self.as_slice().len()
    }
    fn get(&self, slot: usize) -> u16 {
        self[slot].load(Ordering::Relaxed)
    }
    fn set(&self, slot: usize, code: u16) {
        self[slot].store(code, Ordering::Relaxed);
    }
    fn into_values(self, longest: u32, mut file_code: impl FnMut(u16) -> u16) -> Values {
        if longest > MAX_PACKED_DTZ {
            Values::Wide(
                self.into_iter()
                    .map(|cell| file_code(cell.into_inner()))
                    .collect(),
            )
        } else {
            new_values(self.len(), longest, |slot| file_code(self.get(slot)))
        }
    }
}

/// The storage a pair's codes start in ([`solve_pair`]); a pair whose
/// levels outgrow one byte goes on with a ninth bit, and one whose levels
/// outgrow that is solved again in two bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// One byte a slot: 119 levels.
    Byte,
    /// A byte and a bit: 247 levels. (A solve starts here only in tests,
    /// or again after moving its base down for a side's seeds passed a
    /// byte.)
    Ninth,
    /// Two bytes: every level to [`MAX_LEVEL`].
    Wide,
}

impl Width {
    /// Where a solve starts: two bytes at once with `two_bytes` (which
    /// tests use to check that the widths agree), else one.
    pub fn starting(two_bytes: bool) -> Width {
        if two_bytes { Width::Wide } else { Width::Byte }
    }

    /// The next width up (two bytes is the widest).
    fn wider(self) -> Width {
        match self {
            Width::Byte => Width::Ninth,
            Width::Ninth | Width::Wide => Width::Wide,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Width::Byte => "one byte",
            Width::Ninth => "nine bits",
            Width::Wide => "two bytes",
        }
    }
}

/// One layer of the pair being solved, and the layer `(b, a + 1)` its
/// forward moves reach (`None` when Black's progress is the largest).
pub struct PassSide<'a> {
    pub layer: &'a Layer,
    pub ahead: Option<&'a Layer>,
}

impl<'a> PassSide<'a> {
    /// The sides of a pair: each of its `layers` with the layer of
    /// `ahead` beside it.
    pub fn of(layers: &'a [Layer], ahead: &'a [Option<Layer>]) -> Vec<PassSide<'a>> {
        layers
            .iter()
            .zip(ahead)
            .map(|(layer, ahead)| PassSide {
                layer,
                ahead: ahead.as_ref(),
            })
            .collect()
    }
}

/// Solves `sides` (one layer, or a layer and its partner) with one byte a
/// slot, going on with a ninth bit beside each byte once the levels pass
/// what a byte holds, and solving again with two bytes if they pass that
/// too (starting at `width`). `read_ahead` gives the distances to the end
/// of a layer ahead ([`Values`] whose distances count plies to the end);
/// each is read while its side is seeded and dropped after. The values
/// returned count plies to the end.
///
/// # Errors
/// What `read_ahead` returns; [`SolveError::TooDeep`] beyond
/// [`MAX_LEVEL`]; [`SolveError::Inconsistent`] if the layers ahead
/// contradict each other.
pub fn solve_pair<E: From<SolveError>>(
    shape: &Shape,
    rules: Rules,
    threads: usize,
    sides: &[PassSide],
    read_ahead: &(dyn Fn(&Layer) -> Result<Values, E> + Sync),
    width: Width,
) -> Result<Vec<Solved>, E> {
    let mut width = width;
    loop {
        let result = match width {
            Width::Byte => solve_with::<Vec<AtomicU8>, E>(shape, rules, threads, sides, read_ahead),
            Width::Ninth => solve_with::<Ninth, E>(shape, rules, threads, sides, read_ahead),
            Width::Wide => {
                solve_with::<Vec<AtomicU16>, E>(shape, rules, threads, sides, read_ahead)
            }
        };
        match result {
            Err(Failure::Overflow(full)) if full != Width::Wide => {
                width = full.wider();
                log::info!(
                    "levels beyond {}: solving the pair again in {}",
                    full.name(),
                    width.name()
                );
            }
            result => return result.map_err(Failure::into_error),
        }
    }
}

/// Why [`solve_with`] stopped.
enum Failure<E> {
    /// A level beyond what cells of this width hold, where the pair could
    /// not go on in wider ones.
    Overflow(Width),
    Solve(SolveError),
    Read(E),
}

impl<E: From<SolveError>> Failure<E> {
    fn into_error(self) -> E {
        match self {
            Failure::Overflow(_) => E::from(SolveError::TooDeep(MAX_LEVEL + 1)),
            Failure::Solve(error) => E::from(error),
            Failure::Read(error) => error,
        }
    }
}

/// The pair's codes: each side's cells, and the level their codes count
/// from.
struct Codes<C> {
    states: Vec<C>,
    base: u32,
}

impl<C: Cells> Codes<C> {
    /// The same codes in wider cells, where [`Cells::widen`] can (every
    /// code reads as it did), logged as what `outgrew` these; else the
    /// overflow of this width.
    fn widen<E>(self, outgrew: std::fmt::Arguments) -> Result<Codes<C::Wider>, Failure<E>> {
        let states = self
            .states
            .into_iter()
            .map(Cells::widen)
            .collect::<Option<Vec<_>>>()
            .ok_or(Failure::Overflow(C::WIDTH))?;
        log::info!(
            "{outgrew} beyond {}: going on in {}",
            C::WIDTH.name(),
            C::Wider::WIDTH.name()
        );
        Ok(Codes {
            states,
            base: self.base,
        })
    }

    /// The code of a win (`lost` false) or loss at `level`, if the cells
    /// hold it.
    fn at(&self, level: u32, lost: bool) -> Option<u16> {
        let x = level.checked_sub(self.base)?;
        (x < C::LEVELS).then(|| FIRST + 2 * x as u16 + u16::from(lost))
    }

    /// The level of a code, and whether it is a loss; `None` for an
    /// undecided slot or no position.
    fn level(&self, code: u16) -> Option<(u32, bool)> {
        let x = code.checked_sub(FIRST)?;
        Some((self.base + u32::from(x / 2), x % 2 == 1))
    }

    /// Whether `code` is a win decided before `level`.
    fn won_before(&self, code: u16, level: u32) -> bool {
        matches!(self.level(code), Some((l, false)) if l < level)
    }
}

/// The first error any thread meets.
struct FirstError(Mutex<Option<SolveError>>);

impl FirstError {
    fn note(&self, error: SolveError) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(error);
    }

    fn take(&self) -> Option<SolveError> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// Slots a level's marked tiles must hold before its work is shared among
/// threads.
const PARALLEL_SLOTS: u64 = 1 << 16;

fn solve_with<C: Cells, E>(
    shape: &Shape,
    rules: Rules,
    threads: usize,
    sides: &[PassSide],
    read_ahead: &(dyn Fn(&Layer) -> Result<Values, E> + Sync),
) -> Result<Vec<Solved>, Failure<E>> {
    let started = std::time::Instant::now();
    let layers: Vec<&Layer> = sides.iter().map(|side| side.layer).collect();
    let units = units(&layers);
    let mut codes = Codes::<C> {
        states: layers
            .iter()
            .map(|layer| C::zeroed(layer.slots as usize))
            .collect(),
        base: u32::MAX,
    };
    let marks = Marks::new(&layers, (MAX_LEVEL + 1) as u16);
    // Positions that end the game (level 0) or are won by Black's last
    // exit (level 1) put the base at 0; otherwise the lowest seed is one
    // more than the shortest distance ahead.
    if ends_or_exits(shape, &layers, &units, threads) {
        codes.base = 0;
    }
    let seeding = Seeding {
        shape,
        rules,
        threads,
        sides,
        layers: &layers,
        units: &units,
        started,
    };
    seeding.run(codes, marks, 0, None, read_ahead)
}

/// The seeds of a pair's pass, side by side, then its levels.
struct Seeding<'a> {
    shape: &'a Shape,
    rules: Rules,
    threads: usize,
    sides: &'a [PassSide<'a>],
    layers: &'a [&'a Layer],
    units: &'a [(usize, usize, std::ops::Range<u64>)],
    started: std::time::Instant,
}

impl Seeding<'_> {
    /// Seeds the sides from `from` on (`held`: the values ahead of side
    /// `from`, where already read), going on in wider cells where a layer
    /// ahead's longest seed would pass what `codes` holds; then runs the
    /// levels.
    fn run<C: Cells, E>(
        &self,
        mut codes: Codes<C>,
        marks: Marks,
        from: usize,
        mut held: Option<Values>,
        read_ahead: &(dyn Fn(&Layer) -> Result<Values, E> + Sync),
    ) -> Result<Vec<Solved>, Failure<E>> {
        let (shape, rules, threads, units) = (self.shape, self.rules, self.threads, self.units);
        let errors = FirstError(Mutex::new(None));
        for (i, side) in self.sides.iter().enumerate().skip(from) {
            let ahead = match (held.take(), side.ahead) {
                (Some(values), _) => Some(values),
                (None, Some(layer)) => Some(read_ahead(layer).map_err(Failure::Read)?),
                (None, None) => None,
            };
            if let Some(values) = &ahead {
                let lowest = shortest(values).map_or(u32::MAX, |e| e + 1);
                if lowest < codes.base {
                    rebase(&mut codes, lowest, threads)?;
                }
                // A side whose seeds would pass what the cells hold goes
                // into wider ones before it is seeded, not after.
                if let Some(highest) = longest(values).map(|e| e + 1)
                    && codes.at(highest, true).is_none()
                {
                    let wider =
                        codes.widen(format_args!("the seeds of side {i} (to {highest})"))?;
                    return self.run(wider, marks, i, ahead, read_ahead);
                }
            }
            let seeded = &codes;
            parallel(threads, units.len(), |unit, _: &mut Vec<()>| {
                let (s, block_index, ref rows) = units[unit];
                if s != i {
                    return;
                }
                let block = &side.layer.blocks[block_index];
                let whites = shape.white_sets(block);
                let blacks = shape.black_sets(block);
                let mover = shape.mover(block, side.ahead);
                let values = ahead.as_ref();
                // Column by column, so that the rows of the layer ahead that
                // the forward moves read stay in cache across the unit's rows.
                for (wi, &white) in whites.iter().enumerate() {
                    for bi in rows.clone() {
                        let black = blacks[bi as usize];
                        let slot = block.slot(bi, wi as u64);
                        let code = if black & white != 0 {
                            NO_POSITION
                        } else {
                            let seed = seed(rules, &mover, values, bi, black, white, wi as u64);
                            match seed {
                                Seed::Open(moves) => moves as u16,
                                Seed::Escape => ESCAPE,
                                Seed::At(level, lost) => match seeded.at(level, lost) {
                                    Some(code) => {
                                        marks.mark_sets(
                                            level as u16,
                                            i,
                                            block_index,
                                            bi,
                                            wi as u64,
                                        );
                                        code
                                    }
                                    None => {
                                        errors.note(SolveError::TooDeep(level));
                                        return;
                                    }
                                },
                            }
                        };
                        seeded.states[i].set(slot as usize, code);
                    }
                }
            });
            if let Some(error) = errors.take() {
                // The cells were made to hold the longest seed above.
                return Err(Failure::Solve(error));
            }
        }
        log::debug!("seed: {:.2} s", self.started.elapsed().as_secs_f64());
        let Some(level) = marks.next_from(0).map(u32::from) else {
            return Ok(finish(codes));
        };
        let levels = Levels {
            shape,
            layers: self.layers,
            threads,
            started: std::time::Instant::now(),
        };
        levels.run(codes, marks, level, 0)
    }
}

/// The levels of a pair's pass, after its seeds.
struct Levels<'a> {
    shape: &'a Shape,
    layers: &'a [&'a Layer],
    threads: usize,
    started: std::time::Instant,
}

impl Levels<'_> {
    /// Decides the positions level by level from `level` on (`scanned`
    /// slots scanned so far), going on in wider cells if the levels pass
    /// what `codes` holds.
    fn run<C: Cells, E>(
        &self,
        codes: Codes<C>,
        mut marks: Marks,
        mut level: u32,
        mut scanned: u64,
    ) -> Result<Vec<Solved>, Failure<E>> {
        let (shape, layers, threads) = (self.shape, self.layers, self.threads);
        loop {
            if codes.at(level, false).is_none() {
                if level > MAX_LEVEL {
                    return Err(Failure::Solve(SolveError::TooDeep(level)));
                }
                let wider = codes.widen(format_args!("level {level}"))?;
                return self.run(wider, marks, level, scanned);
            }
            // The losses a seed put off to this level are checked first: a
            // check needs only the wins before it, all known by now, and the
            // level's own losses, from the retreat, need no check.
            let waiting = marks.tiles(level as u16);
            scanned += check_waiting(shape, &codes, layers, &waiting, level, threads);
            if level > codes.base {
                let frontier = marks.tiles(level as u16 - 1);
                scanned += retreat(shape, &codes, layers, &marks, &frontier, level, threads);
                marks.scanned(level as u16 - 1);
            }
            let next = if marks.next_from(level as u16) == Some(level as u16) {
                Some(level + 1)
            } else {
                marks.next_from(level as u16 + 1).map(u32::from)
            };
            match next {
                Some(next) if next <= MAX_LEVEL => level = next,
                Some(next) => return Err(Failure::Solve(SolveError::TooDeep(next))),
                None => break,
            }
        }
        log::debug!(
            "levels: {:.2} s to level {level} from {}, {scanned} slots scanned of {}",
            self.started.elapsed().as_secs_f64(),
            codes.base,
            codes.states.iter().map(Cells::len).sum::<usize>()
        );
        Ok(finish(codes))
    }
}

/// What a position's forward moves say of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seed {
    /// Nothing: its sideways moves decide, this many of them.
    Open(u32),
    /// A forward move draws: it is never lost.
    Escape,
    /// Won (`false`) or lost at this level at the latest (a win) or at
    /// the earliest (a loss, if its sideways moves all lose by then).
    At(u32, bool),
}

/// The seed of the position `(black, white)`, black set `bi` and white set
/// `wi` of the block `mover` moves from; `ahead` holds the distances to
/// the end of the layer its forward moves reach.
fn seed(
    rules: Rules,
    mover: &crate::solver::index::layers::Mover,
    ahead: Option<&Values>,
    bi: u64,
    black: u64,
    white: u64,
    wi: u64,
) -> Seed {
    let sideways = mover.sideways(black, white);
    let mut win_at = u32::MAX;
    let mut lose_at = 0;
    let mut escape = false;
    let (forward, finishes) = mover.forward(bi, black, white, wi, |slot| {
        match ahead.expect("a forward move has a layer ahead").get(slot) {
            Dtz::Loss(e) => win_at = win_at.min(e + 1),
            Dtz::Win(e) => lose_at = lose_at.max(e + 1),
            Dtz::Draw => escape = true,
        }
    });
    if sideways == 0 && forward == 0 {
        Seed::At(0, rules == Rules::Textbook)
    } else if finishes {
        Seed::At(1, false)
    } else if win_at != u32::MAX {
        Seed::At(win_at, false)
    } else if escape {
        Seed::Escape
    } else if forward == 0 {
        Seed::Open(sideways)
    } else {
        Seed::At(lose_at, true)
    }
}

/// Whether some position of the pair ends the game or is won by Black's
/// last exit: levels 0 and 1, below any seed from a layer ahead.
fn ends_or_exits(
    shape: &Shape,
    layers: &[&Layer],
    units: &[(usize, usize, std::ops::Range<u64>)],
    threads: usize,
) -> bool {
    parallel(threads, units.len(), |unit, out| {
        let (i, block_index, ref rows) = units[unit];
        let block = &layers[i].blocks[block_index];
        let whites = shape.white_sets(block);
        let blacks = shape.black_sets(block);
        let mover = shape.mover(block, None);
        let found = rows.clone().any(|bi| {
            let black = blacks[bi as usize];
            let apart = |white: u64| black & white == 0;
            if mover.finishes(black) {
                whites.iter().any(|&white| apart(white))
            } else if let Some(cells) = mover.blocked_by(black) {
                whites
                    .iter()
                    .any(|&white| white & cells == cells && apart(white))
            } else {
                false
            }
        });
        out.push(found);
    })
    .into_iter()
    .any(|found| found)
}

/// The shortest distance of a won or lost position of `values`.
fn shortest(values: &Values) -> Option<u32> {
    // A draw's code, 0, taken as the largest (a wrapping step down), so
    // that a plain minimum, which the compiler vectorises, finds the rest.
    let best = match values {
        Values::Narrow(codes) => codes
            .iter()
            .map(|&c| c.wrapping_sub(1))
            .min()
            .filter(|&c| c != u8::MAX)
            .map(|c| u16::from(c) + 1),
        _ => (0..values.len() as u64)
            .map(|slot| values.code(slot))
            .filter(|&c| c != 0)
            .min(),
    };
    best.map(distance_of)
}

/// The longest distance of a won or lost position of `values`.
fn longest(values: &Values) -> Option<u32> {
    // Codes grow with the distance, and a draw's is 0.
    let best = match values {
        Values::Narrow(codes) => codes.iter().copied().max().map(u16::from),
        _ => (0..values.len() as u64).map(|slot| values.code(slot)).max(),
    };
    best.filter(|&code| code != 0).map(distance_of)
}

/// The distance of a won or lost value's code (codes grow with the
/// distance).
fn distance_of(code: u16) -> u32 {
    match crate::solver::index::value::decode(code) {
        Dtz::Win(d) | Dtz::Loss(d) => d,
        Dtz::Draw => 0,
    }
}

/// Moves the codes' base down to `base`.
fn rebase<C: Cells, E>(codes: &mut Codes<C>, base: u32, threads: usize) -> Result<(), Failure<E>> {
    if codes.base == u32::MAX {
        codes.base = base;
        return Ok(());
    }
    let shift = codes.base - base;
    if shift >= C::LEVELS {
        return Err(Failure::Overflow(C::WIDTH));
    }
    let limit = FIRST as u32 + 2 * C::LEVELS;
    let overflow = std::sync::atomic::AtomicBool::new(false);
    const CHUNK: usize = 1 << 20;
    for states in &codes.states {
        parallel(
            threads,
            states.len().div_ceil(CHUNK),
            |chunk, _: &mut Vec<()>| {
                for slot in chunk * CHUNK..((chunk + 1) * CHUNK).min(states.len()) {
                    let code = states.get(slot);
                    if code >= FIRST {
                        let moved = u32::from(code) + 2 * shift;
                        if moved >= limit {
                            overflow.store(true, Ordering::Relaxed);
                            return;
                        }
                        states.set(slot, moved as u16);
                    }
                }
            },
        );
    }
    codes.base = base;
    if overflow.load(Ordering::Relaxed) {
        return Err(Failure::Overflow(C::WIDTH));
    }
    Ok(())
}

/// Checks the positions a seed put off to be lost at `level` (in the
/// tiles `waiting`), before the level's retreat: one whose sideways moves
/// do not all lead to wins decided before `level` is undecided again,
/// with the count of those not won before `level - 1` (the retreat that
/// follows takes off the wins at `level - 1`). Returns the slots scanned.
fn check_waiting<C: Cells>(
    shape: &Shape,
    codes: &Codes<C>,
    layers: &[&Layer],
    waiting: &Listed,
    level: u32,
    threads: usize,
) -> u64 {
    let lost = codes.at(level, true).expect("the level's codes fit");
    let slots = waiting.slots();
    let threads = if slots < PARALLEL_SLOTS { 1 } else { threads };
    // A unit is a row of tiles: the tiles side by side share cache lines,
    // which the checks write, so no two threads take them at once.
    let rows = waiting.rows();
    parallel(threads, rows.len(), |unit, _: &mut Vec<()>| {
        let first = waiting.tile(rows[unit].start);
        let i = first.side;
        let block = &layers[i].blocks[first.block];
        let children = &codes.states[layers.len() - 1 - i];
        let successors = shape.successors(block, layers[layers.len() - 1 - i]);
        for tile in rows[unit].clone().map(|t| waiting.tile(t)) {
            let width = (tile.whites.end - tile.whites.start) as usize;
            for bi in tile.blacks.clone() {
                let first = block.slot(bi, tile.whites.start) as usize;
                let black = shape.black_set(block, bi);
                codes.states[i].scan(first..first + width, lost, 1, |slot, _| {
                    let wi = tile.whites.start + (slot - first) as u64;
                    let white = shape.white_set(block, wi);
                    let (mut open, mut open_before) = (0u16, 0u16);
                    successors.all(bi, black, white, wi, |child| {
                        let code = children.get(child as usize);
                        if !codes.won_before(code, level) {
                            open += 1;
                            open_before += 1;
                        } else if !codes.won_before(code, level.saturating_sub(1)) {
                            open_before += 1;
                        }
                        true
                    });
                    if open > 0 {
                        codes.states[i].set(slot, open_before);
                    }
                });
            }
        }
    });
    slots
}

/// Each position decided at `level - 1` (in the tiles `frontier`) tells
/// its sideways parents: a lost child makes a parent not yet won won at
/// `level`; a won child takes one off an open parent's count, and the
/// parent whose count reaches zero is lost at `level`. Returns the slots
/// scanned.
fn retreat<C: Cells>(
    shape: &Shape,
    codes: &Codes<C>,
    layers: &[&Layer],
    marks: &Marks,
    frontier: &Listed,
    level: u32,
    threads: usize,
) -> u64 {
    let won_child = codes.at(level - 1, false).expect("the level before fits");
    let lost_child = won_child + 1;
    let won = codes.at(level, false).expect("the level's codes fit");
    let lost = won + 1;
    let slots = frontier.slots();
    let threads = if slots < PARALLEL_SLOTS { 1 } else { threads };
    // A unit is a row of tiles: the parents its positions tell are in the
    // columns of their black sets, which no other row reaches.
    let rows = frontier.rows();
    parallel(threads, rows.len(), |unit, _: &mut Vec<()>| {
        let first = frontier.tile(rows[unit].start);
        let i = first.side;
        let p = layers.len() - 1 - i;
        let block = &layers[i].blocks[first.block];
        let parent_index = layers[p]
            .block_index(block.white_cars, block.black_cars)
            .expect("the partner layer has the mirrored block");
        let parents_of = shape.parents(block, layers[p]);
        let children = &codes.states[i];
        let parents = &codes.states[p];
        let marked = marks.of_block(level as u16, p, parent_index);
        for tile in rows[unit].clone().map(|t| frontier.tile(t)) {
            let width = (tile.whites.end - tile.whites.start) as usize;
            for bi in tile.blacks.clone() {
                let first = block.slot(bi, tile.whites.start) as usize;
                children.scan(first..first + width, won_child, 2, |slot, code| {
                    let wi = tile.whites.start + (slot - first) as u64;
                    parents_of.visit(bi, wi, |parent, parent_black| {
                        let state = parents.get(parent as usize);
                        let decided = if code == lost_child {
                            // Won now, unless won already or no position.
                            let won_now = match codes.level(state) {
                                None => state != NO_POSITION,
                                Some((l, false)) => l > level,
                                Some((l, true)) => l >= level,
                            };
                            won_now.then_some(won)
                        } else if (1..=MOST_OPEN).contains(&state) {
                            // One open move fewer; lost once none is left.
                            if state > 1 {
                                parents.set(parent as usize, state - 1);
                            }
                            (state == 1).then_some(lost)
                        } else {
                            None
                        };
                        if let Some(code) = decided {
                            parents.set(parent as usize, code);
                            marked.mark(parent_black, bi);
                        }
                    });
                });
            }
        }
    });
    slots
}

/// Each side's values with its tallies, in the narrowest form that holds
/// them (the cells are turned into values in place where they fit). A
/// slot that is no position repeats the value before it, so runs stay
/// unbroken and the file compresses better.
fn finish<C: Cells>(codes: Codes<C>) -> Vec<Solved> {
    let Codes { states, base } = codes;
    let value_of = |code: u16| match code {
        code if code < FIRST => Dtz::Draw,
        _ => {
            let x = u32::from(code - FIRST);
            let level = base + x / 2;
            if x % 2 == 1 {
                Dtz::Loss(level)
            } else {
                Dtz::Win(level)
            }
        }
    };
    states
        .into_iter()
        .map(|states| {
            // How many slots hold each code: the tallies come from the
            // counts, and each code's file code is looked up.
            let mut counts = vec![0u64; (FIRST as u32 + 2 * C::LEVELS) as usize];
            states.count(&mut counts);
            let mut tally = Tally::default();
            let (mut win, mut loss) = (0, 0);
            let mut file_codes = vec![encode(Dtz::Draw); counts.len()];
            for (code, &n) in counts.iter().enumerate() {
                if n > 0 && code != usize::from(NO_POSITION) {
                    let value = value_of(code as u16);
                    match value {
                        Dtz::Win(d) => win = win.max(d),
                        Dtz::Loss(d) => loss = loss.max(d),
                        Dtz::Draw => {}
                    }
                    tally.add_many(value, n);
                    file_codes[code] = encode(value);
                }
            }
            let mut positions = vec![0u64; states.len().div_ceil(64)];
            let mut slot = 0;
            let mut previous = encode(Dtz::Draw);
            let values = states.into_values(tally.longest, |code| {
                if code != NO_POSITION {
                    positions[slot / 64] |= 1 << (slot % 64);
                    previous = file_codes[usize::from(code)];
                }
                slot += 1;
                previous
            });
            Solved {
                values,
                tally,
                longest: (win, loss),
                positions: Some(positions),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::solver::files::format::Kind;
    use crate::solver::run::in_memory::{dte_in_memory, pass_in_memory, solve_in_memory};

    /// The one pass gives every position of `kind` the win/draw/loss and
    /// distance to the end that the value pass and then the distance pass
    /// give, with one byte a slot and (where `every_width`) with a ninth
    /// bit and with two bytes.
    fn agrees_with_the_two_passes(kind: Kind, every_width: bool) {
        let ends = two_passes(kind);
        let widths = [Width::Byte, Width::Ninth, Width::Wide];
        for width in widths.into_iter().take(if every_width { 3 } else { 1 }) {
            let passed = pass_in_memory(kind, 2, width).unwrap();
            same_values(kind, &ends, &passed, &format!("{width:?}"));
        }
    }

    /// Every layer's distances to the end by the value pass and then the
    /// distance pass.
    fn two_passes(kind: Kind) -> HashMap<(u32, u32), Values> {
        let values = solve_in_memory(kind, 2).unwrap();
        dte_in_memory(kind, 2, &values).unwrap()
    }

    /// Every position of `passed` has its value in `ends`.
    fn same_values(
        kind: Kind,
        ends: &HashMap<(u32, u32), Values>,
        passed: &HashMap<(u32, u32), Values>,
        what: &str,
    ) {
        let shape = crate::solver::run::plan::shape_of(kind).unwrap();
        assert_eq!(passed.len(), ends.len());
        for (layer, end) in ends {
            let new = &passed[layer];
            let positions =
                crate::solver::files::format::positions_of(&shape, &shape.layer(layer.0, layer.1));
            for slot in 0..end.len() as u64 {
                if crate::solver::files::format::is_set(&positions, slot) {
                    assert_eq!(
                        new.get(slot),
                        end.get(slot),
                        "{kind:?} layer {layer:?} slot {slot} ({what})"
                    );
                }
            }
        }
    }

    /// Pairs that went on in wider cells part-way ([`Few`]).
    static WIDENED: AtomicUsize = AtomicUsize::new(0);

    /// Cells of a byte that hold only `L` levels, so that the seeds and
    /// levels of a small board's pairs outgrow them part-way, as those of
    /// a 6 x 6 pair outgrow a byte's 119.
    struct Few<const L: u32>(Vec<AtomicU8>);

    impl<const L: u32> Cells for Few<L> {
        const LEVELS: u32 = L;
        const WIDTH: Width = Width::Byte;
        type Wider = Ninth;
        fn widen(self) -> Option<Ninth> {
            WIDENED.fetch_add(1, Ordering::Relaxed);
            self.0.widen()
        }
        fn zeroed(slots: usize) -> Self {
            Few(Cells::zeroed(slots))
        }
        fn len(&self) -> usize {
            Cells::len(&self.0)
        }
        fn get(&self, slot: usize) -> u16 {
            self.0.get(slot)
        }
        fn set(&self, slot: usize, code: u16) {
            self.0.set(slot, code)
        }
        fn into_values(self, longest: u32, file_code: impl FnMut(u16) -> u16) -> Values {
            self.0.into_values(longest, file_code)
        }
    }

    /// Every layer of `kind` solved by the one pass in cells `C`, or from
    /// the start with a ninth bit where moving the base down for a side's
    /// seeds passes them.
    fn pass_in<C: Cells>(kind: Kind) -> HashMap<(u32, u32), Values> {
        use crate::solver::run::plan::{ahead_of, pair_layers, shape_of};
        let shape = shape_of(kind).unwrap();
        let mut solved: HashMap<(u32, u32), Values> = HashMap::new();
        for layers in pair_layers(&shape) {
            let ahead: Vec<Option<Layer>> = layers.iter().map(|l| ahead_of(&shape, l)).collect();
            let sides = PassSide::of(&layers, &ahead);
            let read = |layer: &Layer| -> Result<Values, SolveError> {
                Ok(solved[&(layer.black, layer.white)].clone())
            };
            let pair = match solve_with::<C, SolveError>(&shape, kind.rules, 2, &sides, &read) {
                Err(Failure::Overflow(Width::Byte)) => {
                    solve_pair(&shape, kind.rules, 2, &sides, &read, Width::Ninth).unwrap()
                }
                Ok(pair) => pair,
                Err(_) => panic!("{kind:?}: the pair {layers:?} fails"),
            };
            for (layer, done) in layers.iter().zip(pair) {
                solved.insert((layer.black, layer.white), done.values);
            }
        }
        solved
    }

    #[test]
    fn a_pair_whose_levels_outgrow_its_cells_goes_on_in_wider_ones() {
        for rules in [Rules::Textbook, Rules::Classic] {
            let kind = Kind {
                size: 4,
                rules,
                max_cars: 3,
            };
            let ends = two_passes(kind);
            same_values(kind, &ends, &pass_in::<Few<8>>(kind), "8 levels");
            same_values(kind, &ends, &pass_in::<Few<20>>(kind), "20 levels");
            same_values(kind, &ends, &pass_in::<Few<40>>(kind), "40 levels");
        }
        assert!(
            WIDENED.load(Ordering::Relaxed) > 0,
            "no pair went on in wider cells"
        );
    }

    /// Every code a byte and a ninth bit hold reads back as set, beside
    /// neighbours set at once, and turns into the same values in place as
    /// into new ones, in every width of values.
    #[test]
    fn a_ninth_bit_holds_every_code_and_becomes_values_in_place() {
        let slots = 1000;
        let code_of = |slot: usize| ((slot * 37) % 512) as u16;
        let cells = Ninth::zeroed(slots);
        parallel(2, 10, |unit, _: &mut Vec<()>| {
            for slot in (unit..slots).step_by(10) {
                cells.set(slot, 511 - code_of(slot));
                cells.set(slot, code_of(slot));
            }
        });
        for slot in 0..slots {
            assert_eq!(cells.get(slot), code_of(slot), "slot {slot}");
        }
        // File codes that fit each width of values.
        for (longest, most) in [(MAX_NARROW_DTZ, 255), (MAX_PACKED_DTZ, 511), (400, 801)] {
            let file = |code: u16| code * 7 % most;
            let cells = Ninth::zeroed(slots);
            for slot in 0..slots {
                cells.set(slot, code_of(slot));
            }
            let values = cells.into_values(longest, file);
            let expected = new_values(slots, longest, |slot| file(code_of(slot)));
            for slot in 0..slots as u64 {
                assert_eq!(values.code(slot), expected.code(slot), "longest {longest}");
            }
        }
    }

    /// The shortest and longest distances of a won or lost value, in one
    /// byte a value and in two, draws aside, the largest code too.
    #[test]
    fn the_shortest_and_longest_distances_ahead_skip_the_draws() {
        let narrow =
            |values: &[Dtz]| Values::Narrow(values.iter().map(|&v| encode(v) as u8).collect());
        let wide = |values: &[Dtz]| Values::Wide(values.iter().map(|&v| encode(v)).collect());
        // Values, and their shortest and longest distances.
        type Case<'a> = (&'a [Dtz], Option<(u32, u32)>);
        let cases: [Case; 5] = [
            (
                &[Dtz::Draw, Dtz::Loss(7), Dtz::Win(3), Dtz::Draw],
                Some((3, 7)),
            ),
            (&[Dtz::Draw, Dtz::Draw], None),
            (
                &[Dtz::Win(MAX_NARROW_DTZ), Dtz::Draw],
                Some((MAX_NARROW_DTZ, MAX_NARROW_DTZ)),
            ),
            (&[Dtz::Loss(0), Dtz::Win(0)], Some((0, 0))),
            (&[Dtz::Loss(9), Dtz::Win(9), Dtz::Win(2)], Some((2, 9))),
        ];
        for (values, expected) in cases {
            for form in [narrow(values), wide(values)] {
                let found = shortest(&form).zip(longest(&form));
                assert_eq!(found, expected, "{values:?}");
                assert_eq!(shortest(&form).is_none(), longest(&form).is_none());
            }
        }
    }

    #[test]
    fn the_pass_agrees_with_the_two_passes_on_small_boards() {
        for rules in [Rules::Textbook, Rules::Classic] {
            for (size, max_cars) in [(3, 2), (4, 3), (5, 2), (6, 2)] {
                let kind = Kind {
                    size,
                    rules,
                    max_cars,
                };
                agrees_with_the_two_passes(kind, true);
            }
        }
    }

    #[test]
    fn the_pass_agrees_with_the_two_passes_on_the_whole_5x5_board() {
        for rules in [Rules::Textbook, Rules::Classic] {
            let kind = Kind {
                size: 5,
                rules,
                max_cars: 4,
            };
            agrees_with_the_two_passes(kind, false);
        }
    }

    /// 6 x 6 and 7 x 7 with 3 cars a side, both rules: minutes in a test
    /// build (`cargo test --release --lib -- --ignored pass::`).
    #[test]
    #[ignore]
    fn the_pass_agrees_with_the_two_passes_with_three_cars_on_6x6_and_7x7() {
        for rules in [Rules::Textbook, Rules::Classic] {
            for size in [6, 7] {
                let kind = Kind {
                    size,
                    rules,
                    max_cars: 3,
                };
                agrees_with_the_two_passes(kind, false);
            }
        }
    }
}

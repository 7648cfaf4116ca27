//! Solving one pair of layers, `(a, b)` and `(b, a)`, by retrograde
//! analysis over their sideways moves, given the win/draw/loss of the
//! layers their forward moves reach.
//!
//! Black's sideways moves from layer `(a, b)` lead into `(b, a)` and back,
//! so the two are solved together (a layer with `a == b` is its own
//! partner). What is found is a win, draw or loss plus the distance in
//! plies to the next progress move (a forward move, an exit, or the end of
//! the game) that keeps the result: the winner heads for the nearest one,
//! the loser puts it off as long as it can.
//!
//! 1. **Seed.** Each position looks at its forward moves in the layer ahead:
//!    one to a position lost for the opponent (or Black's last exit) wins
//!    in 1; one to a draw means the position can never be lost. A position
//!    without a move is decided in 0 by the rule; one whose moves all lead
//!    ahead to the opponent's wins is lost in 1. The rest keep their count
//!    of sideways moves.
//! 2. **Retreat.** Level by level (0, 1, 2, ...) each position decided at
//!    the level updates its sideways parents: a lost child makes a parent
//!    won one level later; a won child takes one off the parent's count,
//!    and a parent whose count reaches zero without a drawing escape is
//!    lost one level later. Levels go in order, so winners take the
//!    shortest route and losers the longest.
//!
//! What is left undecided is a draw. Slots are atomic bytes updated with
//! compare-and-swap, so the result does not depend on thread timing.

use std::ops::Range;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU64, Ordering};

use crate::board::Rules;
use crate::solver::index::layers::{Layer, Mover, Parents, Shape};
use crate::solver::index::value::{Dtz, Tally, Values, Wdl, WdlBits, encode};
use crate::solver::{SolveError, parallel};

/// An undecided slot holds its count of sideways moves not yet known to
/// lose (low four bits) and whether some move reaches a draw (this bit).
const ESCAPE: u16 = 0x10;
/// A slot that is no position (the sets overlap).
const NO_POSITION: u16 = 0x20;

/// A slot's storage while a pair is solved: one byte, or two bytes for
/// the rare pair whose distances do not fit in one. A decided slot holds
/// `WIN + d` for a win and `LOSS + d` for a loss at distance `d`.
/// A slot starts as zero: nothing known yet.
trait Cell: Send + Sync + Sized + bytemuck::Zeroable {
    /// One byte a slot.
    const NARROW: bool;
    const WIN: u16;
    const LOSS: u16;
    /// Longest distance the cell holds.
    const MAX_DTZ: u32;
    fn get(&self) -> u16;
    fn set(&self, state: u16);
    fn replace(&self, old: u16, new: u16) -> Result<u16, u16>;
    fn into_state(self) -> u16;
}

impl Cell for AtomicU8 {
    const NARROW: bool = true;
    const WIN: u16 = 0x21;
    const LOSS: u16 = 0x90;
    const MAX_DTZ: u32 = (Self::LOSS - Self::WIN - 1) as u32;
    fn get(&self) -> u16 {
        u16::from(self.load(Ordering::Relaxed))
    }
    fn set(&self, state: u16) {
        self.store(state as u8, Ordering::Relaxed);
    }
    fn replace(&self, old: u16, new: u16) -> Result<u16, u16> {
        self.compare_exchange_weak(old as u8, new as u8, Ordering::Relaxed, Ordering::Relaxed)
            .map(u16::from)
            .map_err(u16::from)
    }
    fn into_state(self) -> u16 {
        u16::from(self.into_inner())
    }
}

impl Cell for AtomicU16 {
    const NARROW: bool = false;
    const WIN: u16 = 0x100;
    const LOSS: u16 = 0x8000;
    const MAX_DTZ: u32 = (Self::LOSS - Self::WIN - 1) as u32;
    fn get(&self) -> u16 {
        self.load(Ordering::Relaxed)
    }
    fn set(&self, state: u16) {
        self.store(state, Ordering::Relaxed);
    }
    fn replace(&self, old: u16, new: u16) -> Result<u16, u16> {
        self.compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed)
    }
    fn into_state(self) -> u16 {
        self.into_inner()
    }
}

/// Slots per unit of work handed to a thread.
const UNIT: u64 = 1 << 16;

/// Fewest rows in a unit: units are walked column by column, and the
/// moves of a column's positions meet in one row of the layers they
/// reach, which stays in cache while the unit's rows go by.
const TILE_ROWS: u64 = 128;

/// A level is listed (8 bytes a position) rather than scanned for while
/// it holds at most one slot in this many.
const LIST_RATIO: u64 = 16;

/// Listed positions per unit of work.
const LIST_CHUNK: usize = 1 << 14;

/// What one unit of a level found: how many parents it decided, and
/// (while the level is small) which.
#[derive(Default)]
struct Found {
    count: u64,
    /// Whether this unit lists what it decides.
    listing: bool,
    list: Vec<u64>,
}

/// One layer of the pair being solved.
pub struct Side<'a> {
    pub layer: &'a Layer,
    /// The layer `(b, a + 1)` its forward moves reach, with its values;
    /// `None` when Black's progress is already the largest.
    pub ahead: Option<(&'a Layer, &'a WdlBits)>,
}

/// A solved layer: its values (see [`Values`]), its tallies, its
/// longest win and longest loss, and which of its slots are positions
/// where the pass had them at hand (a bit a slot, as
/// [`positions_of`](crate::solver::files::format::positions_of) gives).
pub struct Solved {
    pub values: Values,
    pub tally: Tally,
    pub longest: (u32, u32),
    pub positions: Option<Vec<u64>>,
}

/// Solves `sides` (one layer, or a layer and its partner): with one byte
/// a slot, or, if some distance does not fit, again with two (at once
/// with `two_bytes`, which tests use to check that both give the same).
///
/// # Errors
/// [`SolveError::TooDeep`] if a distance does not fit in two bytes either.
pub fn solve_pair(
    shape: &Shape,
    rules: Rules,
    threads: usize,
    sides: &[Side],
    two_bytes: bool,
) -> Result<Vec<Solved>, SolveError> {
    if two_bytes {
        return solve_with::<AtomicU16>(shape, rules, threads, sides);
    }
    match solve_with::<AtomicU8>(shape, rules, threads, sides) {
        Err(SolveError::TooDeep(_)) => {
            log::info!("distances beyond one byte: solving the pair again with two");
            solve_with::<AtomicU16>(shape, rules, threads, sides)
        }
        result => result,
    }
}

fn solve_with<C: Cell>(
    shape: &Shape,
    rules: Rules,
    threads: usize,
    sides: &[Side],
) -> Result<Vec<Solved>, SolveError> {
    let states: Vec<Vec<C>> = sides
        .iter()
        .map(|side| crate::memory::zeroed_vec(side.layer.slots as usize))
        .collect();
    let partner = |i: usize| sides.len() - 1 - i;
    let units = units(&sides.iter().map(|side| side.layer).collect::<Vec<_>>());
    let started = std::time::Instant::now();
    // Seed: each thread returns how many slots it decided in 1.
    let decided_in_one: u64 = parallel(threads, units.len(), |unit, out| {
        let (i, block, ref rows) = units[unit];
        let side = &sides[i];
        let block = &side.layer.blocks[block];
        let whites = shape.white_sets(block);
        let blacks = shape.black_sets(block);
        let mover = shape.mover(block, side.ahead.map(|(layer, _)| layer));
        let values = side.ahead.map(|(_, values)| values);
        let mut in_one = 0;
        // Column by column, so that the rows of the layer ahead that the
        // forward moves read stay in cache across the unit's rows.
        for (wi, &white) in whites.iter().enumerate() {
            for bi in rows.clone() {
                let black = blacks[bi as usize];
                let state = if black & white != 0 {
                    NO_POSITION
                } else {
                    seed::<C>(rules, &mover, values, bi, black, white, wi as u64)
                };
                in_one += u64::from(state == C::WIN + 1 || state == C::LOSS + 1);
                states[i][block.slot(bi, wi as u64) as usize].set(state);
            }
        }
        out.push(in_one);
    })
    .into_iter()
    .sum();
    // Levels 0 and 1 (much of them from the seed) are found by scanning
    // every slot; later levels by the list the level before made, unless
    // it grew past `cap` entries.
    log::debug!("seed: {:.1} s", started.elapsed().as_secs_f64());
    let cap = sides.iter().map(|s| s.layer.slots).sum::<u64>() / LIST_RATIO;
    let mut frontier: Option<Vec<Vec<u64>>> = None;
    let mut level = 0;
    loop {
        let level_started = std::time::Instant::now();
        let scanned = frontier.is_none();
        let listed = AtomicU64::new(0);
        // Each parent a child decides is pushed as `side << 63 | slot`,
        // until the level's lists hold `cap` entries.
        let exclusive = frontier.is_none();
        let decide =
            |i: usize, parents_of: &Parents, bi: u64, wi: u64, child_won: bool, out: &mut Found| {
                let parents = &states[partner(i)];
                let partner_bit = (partner(i) as u64) << 63;
                parents_of.visit(bi, wi, |parent, _| {
                    if settle::<C>(&parents[parent as usize], child_won, level, exclusive) {
                        out.count += 1;
                        if out.listing {
                            out.list.push(partner_bit | parent);
                        }
                    }
                });
            };
        let start_unit = |out: &mut Found| {
            out.listing = level >= 1 && listed.load(Ordering::Relaxed) <= cap;
        };
        let end_unit = |found: &mut Found| {
            let total = listed.fetch_add(found.list.len() as u64, Ordering::Relaxed);
            if !found.listing || total + found.list.len() as u64 > cap {
                listed.store(u64::MAX / 2, Ordering::Relaxed);
                found.list = Vec::new();
            }
        };
        let found: Vec<Found> = match &frontier {
            None => parallel(threads, units.len(), |unit, out| {
                let (i, block, ref rows) = units[unit];
                let block = &sides[i].layer.blocks[block];
                let parents_of = shape.parents(block, sides[partner(i)].layer);
                let mut found = Found::default();
                start_unit(&mut found);
                // Column by column: the parents of one column's positions
                // share their row in the partner layer.
                for wi in 0..block.white_sets {
                    for bi in rows.clone() {
                        let state = states[i][block.slot(bi, wi) as usize].get();
                        let child_won = state == C::WIN + level;
                        if child_won || state == C::LOSS + level {
                            decide(i, &parents_of, bi, wi, child_won, &mut found);
                        }
                    }
                }
                end_unit(&mut found);
                out.push(found);
            }),
            Some(lists) => {
                let chunks: Vec<&[u64]> = lists
                    .iter()
                    .flat_map(|list| list.chunks(LIST_CHUNK))
                    .collect();
                parallel(threads, chunks.len(), |unit, out| {
                    let mut found = Found::default();
                    start_unit(&mut found);
                    for &entry in chunks[unit] {
                        let i = (entry >> 63) as usize;
                        let slot = entry & !(1 << 63);
                        let blocks = &sides[i].layer.blocks;
                        let block = &blocks[blocks.partition_point(|b| b.offset <= slot) - 1];
                        let within = slot - block.offset;
                        let child_won = states[i][slot as usize].get() == C::WIN + level;
                        decide(
                            i,
                            &shape.parents(block, sides[partner(i)].layer),
                            within / block.white_sets,
                            within % block.white_sets,
                            child_won,
                            &mut found,
                        );
                    }
                    end_unit(&mut found);
                    out.push(found);
                })
            }
        };
        let count = found.iter().map(|f| f.count).sum::<u64>()
            + if level == 0 { decided_in_one } else { 0 };
        frontier = (level >= 1 && listed.load(Ordering::Relaxed) <= cap)
            .then(|| found.into_iter().map(|f| f.list).collect());
        log::debug!(
            "level {level} ({}): {count} decided in {:.2} s",
            if scanned { "scan" } else { "list" },
            level_started.elapsed().as_secs_f64()
        );
        if count == 0 {
            break;
        }
        level += 1;
        if u32::from(level) >= C::MAX_DTZ {
            return Err(SolveError::TooDeep(u32::from(level)));
        }
    }
    Ok(states.into_iter().map(finish::<C>).collect())
}

/// The starting state of the position `(black, white)`, black set `bi`
/// and white set `wi` of the block `mover` moves from; `ahead` holds the
/// values of the layer its forward moves reach.
fn seed<C: Cell>(
    rules: Rules,
    mover: &Mover,
    ahead: Option<&WdlBits>,
    bi: u64,
    black: u64,
    white: u64,
    wi: u64,
) -> u16 {
    let count = mover.sideways(black, white) as u16;
    let mut escape = false;
    let mut wins = false;
    let (forward, finishes) = mover.forward(bi, black, white, wi, |slot| {
        match ahead.expect("a forward move has a layer ahead").get(slot) {
            Wdl::Loss => wins = true,
            Wdl::Draw => escape = true,
            Wdl::Win => {}
        }
    });
    if count == 0 && forward == 0 {
        match rules {
            Rules::Textbook => C::LOSS,
            Rules::Classic => C::WIN,
        }
    } else if wins || finishes {
        C::WIN + 1
    } else if count == 0 && !escape {
        C::LOSS + 1
    } else {
        count | if escape { ESCAPE } else { 0 }
    }
}

/// The new state of an undecided parent (`state`) told that a child
/// decided at `level` is won (`child_won`) or lost for its side to move.
fn settled<C: Cell>(state: u16, child_won: bool, level: u16) -> u16 {
    if !child_won {
        C::WIN + level + 1
    } else if state == 1 {
        C::LOSS + level + 1
    } else {
        // Down to zero with an escape: the parent stays undecided (a
        // draw) unless a lost child turns up.
        state - 1
    }
}

/// Tells a parent about a child decided at `level`; returns whether that
/// decides the parent. `exclusive`: no other thread writes this slot
/// meanwhile, so a plain load and store do (a level found by scanning:
/// each unit owns the rows of its children, and the parents of a row are
/// one column of the partner block that no other row reaches); otherwise
/// compare-and-swap.
fn settle<C: Cell>(slot: &C, child_won: bool, level: u16, exclusive: bool) -> bool {
    let mut state = slot.get();
    loop {
        if state >= NO_POSITION {
            return false;
        }
        let new = settled::<C>(state, child_won, level);
        if exclusive {
            slot.set(new);
            return new > NO_POSITION;
        }
        match slot.replace(state, new) {
            Ok(_) => return new > NO_POSITION,
            Err(actual) => state = actual,
        }
    }
}

/// A layer's slots as file values, with its tallies: one byte a slot,
/// or two if some distance needs them. A slot that is no position
/// repeats the value before it, so runs stay unbroken and the file
/// compresses better.
fn finish<C: Cell>(states: Vec<C>) -> Solved {
    let mut tally = Tally::default();
    let mut previous = encode(Dtz::Draw);
    let mut value_of = |slot: C| {
        let state = slot.into_state();
        let value = match state {
            NO_POSITION => return previous,
            s if s < NO_POSITION => Dtz::Draw,
            s if s < C::LOSS => Dtz::Win(u32::from(s - C::WIN)),
            s => Dtz::Loss(u32::from(s - C::LOSS)),
        };
        tally.add(value);
        previous = encode(value);
        previous
    };
    // Converted in place (a cell and its value have the same size).
    let values = if C::NARROW {
        Values::Narrow(states.into_iter().map(|c| value_of(c) as u8).collect())
    } else {
        let wide: Vec<u16> = states.into_iter().map(value_of).collect();
        Values::from_codes(wide, tally.longest)
    };
    Solved {
        longest: values.longest_win_and_loss(),
        values,
        tally,
        positions: None,
    }
}

/// Units of work: runs of rows of one block of one layer of a pair.
pub(super) fn units(layers: &[&Layer]) -> Vec<(usize, usize, Range<u64>)> {
    let mut units = Vec::new();
    for (i, layer) in layers.iter().enumerate() {
        for (b, block) in layer.blocks.iter().enumerate() {
            let step = (UNIT / block.white_sets.max(1)).max(TILE_ROWS);
            let mut first = 0;
            while first < block.black_sets {
                let last = (first + step).min(block.black_sets);
                units.push((i, b, first..last));
                first = last;
            }
        }
    }
    units
}

//! The distance to the end of the game of one pair of layers, `(a, b)`
//! and `(b, a)`, derived from their win/draw/loss (the solved distances
//! to progress) and the distances to the end of the layers their forward
//! moves reach: the winner heads for the quickest end, the loser puts it
//! off as long as it can.
//!
//! Which positions are won and lost is known, so only the distances are
//! sought, in increasing order (a retrograde analysis with a bucket per
//! distance, since a forward move can start a position at any distance):
//!
//! 1. **Seed.** A won position's best forward move (into a loss for the
//!    opponent, or Black's last exit) gives it a first bound; a lost one
//!    takes the longest of its forward moves and waits for its sideways
//!    moves. A position without a move ends the game there (distance 0).
//!    Each position whose distance is known this way goes in the bucket
//!    of that distance.
//! 2. **Retreat.** Bucket by bucket, each position in the bucket is
//!    decided at that distance `d` and tells its sideways parents: a lost
//!    child bounds a won parent by `d + 1`; a won child takes one off a
//!    lost parent's count of sideways moves, and a parent whose count
//!    reaches zero is decided at the larger of `d + 1` and its forward
//!    bound (its bucket).
//!
//! The buckets go in order, so a won position is decided at its shortest
//! route to the end and a lost one at its longest.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use super::layers::{Layer, Shape};
use super::retro::{Solved, units};
use super::store::{Dtz, Tally, Values, Wdl, WdlBits};
use super::{SolveError, parallel};

/// A slot's state while a pair is solved: the distance (a bound until
/// [`DONE`]) in the low bits, a lost position's count of sideways moves
/// not yet decided above them, and what the slot is.
const DISTANCE: u32 = 0xFFFF;
const COUNT_SHIFT: u32 = 16;
const COUNT: u32 = 0x1F << COUNT_SHIFT;
const DONE: u32 = 1 << 21;
const WON: u32 = 1 << 22;
const LOST: u32 = 1 << 23;
/// A slot that is no position (the sets overlap).
const NO_POSITION: u32 = 1 << 24;
/// A won position with no known route to the end yet.
const UNBOUNDED: u32 = DISTANCE;
/// Longest distance to the end the encoded values hold.
pub const MAX_DTE: u32 = (u16::MAX as u32 - 2) / 2;

/// A bucket entry is `side << 63 | slot`; a parent decided at a level
/// travels with its distance in the bits from here (layers have fewer
/// than 2^40 slots).
const DISTANCE_SHIFT: u32 = 40;

/// Bucket entries of a level handed to a thread at a time.
const CHUNK: usize = 1 << 14;

/// One layer of the pair.
pub struct DteSide<'a> {
    pub layer: &'a Layer,
    /// Which of the layer's positions are won, drawn and lost.
    pub values: &'a WdlBits,
    /// The layer `(b, a + 1)` its forward moves reach, with its distances
    /// to the end; `None` when Black's progress is already the largest.
    pub ahead: Option<(&'a Layer, &'a Values)>,
}

/// The distances to the end of the positions of `sides` (one layer, or a
/// layer and its partner), as [`Dtz`] values whose distance counts plies
/// to the end of the game.
///
/// # Errors
/// [`SolveError::TooDeep`] beyond [`MAX_DTE`] plies;
/// [`SolveError::Inconsistent`] when the values contradict each other
/// (a lost position with a move into a loss for the opponent, a won one
/// with no way to the end).
pub fn solve_pair(
    shape: &Shape,
    threads: usize,
    sides: &[DteSide],
) -> Result<Vec<Solved>, SolveError> {
    let states: Vec<Vec<AtomicU32>> = sides
        .iter()
        .map(|side| (0..side.layer.slots).map(|_| AtomicU32::new(0)).collect())
        .collect();
    let partner = |i: usize| sides.len() - 1 - i;
    let layers: Vec<&Layer> = sides.iter().map(|side| side.layer).collect();
    let units = units(&layers);
    // Seed: each unit lists the slots whose distance it knows (or notes a
    // contradiction).
    let contradiction = Mutex::new(None);
    let seeded = parallel(threads, units.len(), |unit, out| {
        let (i, block, ref rows) = units[unit];
        let side = &sides[i];
        let block = &side.layer.blocks[block];
        let whites = shape.white_sets(block);
        let blacks = shape.black_sets(block);
        let mover = shape.mover(block, side.ahead.map(|(layer, _)| layer));
        let ahead = side.ahead.map(|(_, values)| values);
        let side_bit = (i as u64) << 63;
        for (wi, &white) in whites.iter().enumerate() {
            for bi in rows.clone() {
                let black = blacks[bi as usize];
                let slot = block.slot(bi, wi as u64);
                if black & white != 0 {
                    states[i][slot as usize].store(NO_POSITION, Ordering::Relaxed);
                    continue;
                }
                let sideways = mover.sideways(black, white);
                let mut shortest = UNBOUNDED;
                let mut longest = 0;
                let mut into_loss = false;
                let (forward, finishes) = mover.forward(bi, black, white, wi as u64, |child| {
                    match ahead.expect("a forward move has a layer ahead").get(child) {
                        Dtz::Loss(e) => {
                            into_loss = true;
                            shortest = shortest.min(e + 1);
                        }
                        Dtz::Win(e) => longest = longest.max(e + 1),
                        Dtz::Draw => {}
                    }
                });
                let state = match side.values.get(slot) {
                    Wdl::Draw => 0,
                    Wdl::Win => {
                        if sideways + forward == 0 {
                            shortest = 0;
                        } else if finishes {
                            shortest = 1;
                        }
                        WON | shortest.min(UNBOUNDED)
                    }
                    Wdl::Loss => {
                        if into_loss || finishes {
                            let why = format!(
                                "layer {} slot {slot} is lost but has a move into a loss",
                                side.layer.name()
                            );
                            *contradiction.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                            return;
                        }
                        LOST | sideways << COUNT_SHIFT | longest.min(UNBOUNDED)
                    }
                };
                states[i][slot as usize].store(state, Ordering::Relaxed);
                let known = (state & WON != 0 && state & DISTANCE != UNBOUNDED)
                    || (state & LOST != 0 && state & COUNT == 0);
                if known {
                    out.push(side_bit | slot);
                }
            }
        }
    });
    if let Some(why) = contradiction
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
    {
        return Err(SolveError::Inconsistent(why));
    }
    let mut buckets: Vec<Vec<u64>> = Vec::new();
    for entry in seeded {
        let state =
            states[(entry >> 63) as usize][(entry & !(1 << 63)) as usize].load(Ordering::Relaxed);
        push(&mut buckets, state & DISTANCE, entry)?;
    }
    let mut level = 0;
    while level < buckets.len() {
        let entries = std::mem::take(&mut buckets[level]);
        let chunks: Vec<&[u64]> = entries.chunks(CHUNK).collect();
        let distance = level as u32;
        let decided = parallel(threads, chunks.len(), |unit, out| {
            for &entry in chunks[unit] {
                let i = (entry >> 63) as usize;
                let slot = entry & !(1 << 63);
                if !decide(&states[i][slot as usize], distance) {
                    continue;
                }
                let child_won = states[i][slot as usize].load(Ordering::Relaxed) & WON != 0;
                let blocks = &sides[i].layer.blocks;
                let block = &blocks[blocks.partition_point(|b| b.offset <= slot) - 1];
                let within = slot - block.offset;
                let parents = &states[partner(i)];
                let partner_bit = (partner(i) as u64) << 63;
                shape.parents(block, sides[partner(i)].layer).visit(
                    within / block.white_sets,
                    within % block.white_sets,
                    |parent| {
                        if let Some(d) = tell(&parents[parent as usize], child_won, distance) {
                            // The distance rides in the entry's spare bits.
                            out.push(u64::from(d) << DISTANCE_SHIFT | partner_bit | parent);
                        }
                    },
                );
            }
        });
        for entry in decided {
            let d = (entry >> DISTANCE_SHIFT) as u32 & DISTANCE;
            push(
                &mut buckets,
                d,
                entry & !(u64::from(DISTANCE) << DISTANCE_SHIFT),
            )?;
        }
        level += 1;
    }
    states
        .into_iter()
        .zip(sides)
        .map(|(states, side)| finish(states, side.layer))
        .collect()
}

/// Puts `entry` in the bucket of distance `d`.
fn push(buckets: &mut Vec<Vec<u64>>, d: u32, entry: u64) -> Result<(), SolveError> {
    if d > MAX_DTE {
        return Err(SolveError::TooDeep(d));
    }
    if buckets.len() <= d as usize {
        buckets.resize_with(d as usize + 1, Vec::new);
    }
    buckets[d as usize].push(entry);
    Ok(())
}

/// Marks a slot found in the bucket of `distance` decided; `false` when
/// it was decided before (a won position bucketed again nearer) or its
/// distance is another.
fn decide(slot: &AtomicU32, distance: u32) -> bool {
    let mut state = slot.load(Ordering::Relaxed);
    loop {
        if state & DONE != 0 || state & DISTANCE != distance {
            return false;
        }
        match slot.compare_exchange_weak(state, state | DONE, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => return true,
            Err(actual) => state = actual,
        }
    }
}

/// Tells an undecided parent that a child is decided at `distance`, won
/// (`child_won`) or lost for its side to move; returns the parent's
/// distance when that puts it in a bucket.
fn tell(slot: &AtomicU32, child_won: bool, distance: u32) -> Option<u32> {
    let mut state = slot.load(Ordering::Relaxed);
    loop {
        if state & (DONE | NO_POSITION) != 0 {
            return None;
        }
        let (new, bucket) = if !child_won {
            // A move into a loss: a won parent's route one ply longer.
            if state & WON == 0 || state & DISTANCE <= distance + 1 {
                return None;
            }
            (state & !DISTANCE | (distance + 1), Some(distance + 1))
        } else {
            // A move into a win: one move fewer a lost parent waits for.
            if state & LOST == 0 || state & COUNT == 0 {
                return None;
            }
            let new = state - (1 << COUNT_SHIFT);
            if new & COUNT == 0 {
                let d = (new & DISTANCE).max(distance + 1);
                (new & !DISTANCE | d, Some(d))
            } else {
                (new, None)
            }
        };
        match slot.compare_exchange_weak(state, new, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return bucket,
            Err(actual) => state = actual,
        }
    }
}

/// A layer's slots as file values with its tallies (see
/// [`Values::from_codes`]); every won and lost position must be decided.
fn finish(states: Vec<AtomicU32>, layer: &Layer) -> Result<Solved, SolveError> {
    let mut tally = Tally::default();
    let mut codes = Vec::with_capacity(states.len());
    let mut previous = super::store::encode(Dtz::Draw);
    for (slot, state) in states.into_iter().enumerate() {
        let state = state.into_inner();
        let value = if state & NO_POSITION != 0 {
            codes.push(previous);
            continue;
        } else if state & (WON | LOST) == 0 {
            Dtz::Draw
        } else if state & DONE == 0 {
            return Err(SolveError::Inconsistent(format!(
                "layer {} slot {slot} is {} but never reaches the end",
                layer.name(),
                if state & WON != 0 { "won" } else { "lost" }
            )));
        } else if state & WON != 0 {
            Dtz::Win(state & DISTANCE)
        } else {
            Dtz::Loss(state & DISTANCE)
        };
        tally.add(value);
        previous = super::store::encode(value);
        codes.push(previous);
    }
    Ok(Solved {
        values: Values::from_codes(codes, tally.longest),
        tally,
    })
}

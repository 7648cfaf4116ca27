//! The distance to the end of the game of one pair of layers, `(a, b)`
//! and `(b, a)`, derived from their win/draw/loss (the solved distances
//! to progress) and the distances to the end of the layers their forward
//! moves reach: the winner heads for the quickest end, the loser puts it
//! off as long as it can.
//!
//! Which positions are won and lost is known, so only the distances are
//! sought, in increasing order (a retrograde analysis level by level,
//! where a forward move can start a position at any level):
//!
//! 1. **Seed.** A won position's best forward move (into a loss for the
//!    opponent, or Black's last exit) gives it a first bound; a lost one
//!    takes the longest of its forward moves and waits for its sideways
//!    moves. A position without a move ends the game there (distance 0).
//! 2. **Retreat.** Level by level, a scan finds the positions whose
//!    distance is known and equal to the level (only in the tiles of
//!    slots marked for that level, column by column): they are decided there,
//!    and each tells its sideways parents: a lost child bounds a won
//!    parent by `d + 1`; a won child takes one off a lost parent's count
//!    of sideways moves, and a parent whose count reaches zero is known
//!    at the larger of `d + 1` and its forward bound.
//!
//! A child decided at level `d` only ever gives its parents `d + 1` or
//! more, so the levels go in order: a won position is decided at its
//! shortest route to the end and a lost one at its longest. The result
//! does not depend on how the threads interleave.
//!
//! Memory: two bytes a slot of the pair and, for each level with marks
//! still to scan, a bit for each tile of slots (at most
//! `MAX_LEVEL_MARKS` (see [`super::marks`]) bits a level), besides the layers' win/draw/loss
//! and the distances of the layers ahead: no lists of positions.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU16, Ordering};

use super::marks::Marks;
use super::retro::{Solved, units};
use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::{Dtz, Tally, Values, Wdl, WdlBits};
use crate::solver::{SolveError, parallel};

/// A slot's state while a pair is solved, two bytes: the distance (a
/// bound until [`DONE`]) in the low bits, a lost position's count of
/// sideways moves not yet decided above them, and what the slot is.
const DISTANCE: u16 = 0x1FF;
const COUNT_SHIFT: u16 = 9;
const COUNT: u16 = 0xF << COUNT_SHIFT;
const DONE: u16 = 1 << 13;
const WON: u16 = 1 << 14;
const LOST: u16 = 1 << 15;
/// A slot that is no position (the sets overlap): both marks at once.
const NO_POSITION: u16 = WON | LOST;
/// A won position with no known route to the end yet.
const UNBOUNDED: u16 = DISTANCE;
/// Longest distance to the end the pass's states hold.
pub const MAX_DTE: u32 = UNBOUNDED as u32 - 1;
// Seven cars (8 x 8) with two sideways moves each fit the count.
const _: () = assert!(2 * 7 <= COUNT >> COUNT_SHIFT);

/// One layer of the pair, with what seeding it reads (and then drops).
pub struct DteSide<'a> {
    pub layer: &'a Layer,
    /// Which of the layer's positions are won, drawn and lost.
    pub values: WdlBits,
    /// The layer `(b, a + 1)` its forward moves reach, with its distances
    /// to the end; `None` when Black's progress is already the largest.
    pub ahead: Option<(&'a Layer, Values)>,
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
    sides: Vec<DteSide>,
) -> Result<Vec<Solved>, SolveError> {
    let started = std::time::Instant::now();
    let states: Vec<Vec<AtomicU16>> = sides
        .iter()
        .map(|side| crate::memory::zeroed_vec(side.layer.slots as usize))
        .collect();
    let layers: Vec<&Layer> = sides.iter().map(|side| side.layer).collect();
    let partner = |i: usize| layers.len() - 1 - i;
    let units = units(&layers);
    // Where positions are known at each level, so that a level scans only
    // those tiles of slots; the first error any thread meets.
    let mut marks = Marks::new(&layers, UNBOUNDED);
    let failure = Mutex::new(None);
    let fail = |error: SolveError| {
        failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(error);
    };
    let failed = || failure.lock().unwrap_or_else(|e| e.into_inner()).take();
    parallel(threads, units.len(), |unit, _: &mut Vec<()>| {
        let (i, block_index, ref rows) = units[unit];
        let side = &sides[i];
        let block = &side.layer.blocks[block_index];
        let whites = shape.white_sets(block);
        let blacks = shape.black_sets(block);
        let mover = shape.mover(block, side.ahead.as_ref().map(|&(layer, _)| layer));
        let ahead = side.ahead.as_ref().map(|(_, values)| values);
        for (wi, &white) in whites.iter().enumerate() {
            for bi in rows.clone() {
                let black = blacks[bi as usize];
                let slot = block.slot(bi, wi as u64);
                if black & white != 0 {
                    states[i][slot as usize].store(NO_POSITION, Ordering::Relaxed);
                    continue;
                }
                // A drawn position keeps its state 0: nothing to seed.
                let won = match side.values.get(slot) {
                    Wdl::Draw => continue,
                    value => value == Wdl::Win,
                };
                let sideways = mover.sideways(black, white);
                let mut shortest = u32::MAX;
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
                let state = if won {
                    if sideways + forward == 0 {
                        shortest = 0;
                    } else if finishes {
                        shortest = 1;
                    }
                    if shortest == u32::MAX {
                        WON | UNBOUNDED
                    } else if shortest > MAX_DTE {
                        fail(SolveError::TooDeep(shortest));
                        return;
                    } else {
                        WON | shortest as u16
                    }
                } else {
                    if into_loss || finishes {
                        fail(SolveError::Inconsistent(format!(
                            "layer {} slot {slot} is lost but has a move into a loss",
                            side.layer.name()
                        )));
                        return;
                    }
                    if longest > MAX_DTE {
                        fail(SolveError::TooDeep(longest));
                        return;
                    }
                    LOST | (sideways as u16) << COUNT_SHIFT | longest as u16
                };
                states[i][slot as usize].store(state, Ordering::Relaxed);
                if known(state) {
                    marks.mark(state & DISTANCE, i, block_index, slot);
                }
            }
        }
    });
    if let Some(error) = failed() {
        return Err(error);
    }
    // The rest needs only the states: the largest pairs want the memory.
    drop(sides);
    log::debug!("seed: {:.2} s", started.elapsed().as_secs_f64());
    let levels_started = std::time::Instant::now();
    let mut level = 0;
    let mut scanned = 0;
    while let Some(next) = marks.next_from(level) {
        level = next;
        let tiles = marks.tiles(level);
        // Threads cost more than they save on a level of a small pair.
        let slots = (tiles.len() as u64) << (2 * marks.tile_bits);
        scanned += slots;
        let threads = if slots < PARALLEL_SLOTS { 1 } else { threads };
        // A unit is a row of tiles: the parents its positions tell are
        // in the columns of their black sets, which no other row reaches,
        // so a plain load and store update them.
        let rows = tiles.rows();
        parallel(threads, rows.len(), |unit, _: &mut Vec<()>| {
            let first = tiles.tile(rows[unit].start);
            let i = first.side;
            let block = &layers[i].blocks[first.block];
            let partner_layer = layers[partner(i)];
            let parent_block = partner_layer
                .block_index(block.white_cars, block.black_cars)
                .expect("the partner layer has the mirrored block");
            let parents_of = shape.parents(block, partner_layer);
            let parents = &states[partner(i)];
            for tile in rows[unit].clone().map(|t| tiles.tile(t)) {
                for wi in tile.whites.clone() {
                    for bi in tile.blacks.clone() {
                        let slot = &states[i][block.slot(bi, wi) as usize];
                        let state = slot.load(Ordering::Relaxed);
                        if state & DONE != 0 || state & DISTANCE != level || !known(state) {
                            continue;
                        }
                        // Nothing else changes a known state at its own
                        // level (see `tell`), and no other unit holds it.
                        slot.store(state | DONE, Ordering::Relaxed);
                        let child_won = state & WON != 0;
                        parents_of.visit(bi, wi, |parent, _| {
                            match tell(&parents[parent as usize], child_won, level) {
                                Ok(Some(d)) => marks.mark(d, partner(i), parent_block, parent),
                                Ok(None) => {}
                                Err(error) => fail(error),
                            }
                        });
                    }
                }
            }
        });
        if let Some(error) = failed() {
            return Err(error);
        }
        marks.scanned(level);
        level += 1;
    }
    log::debug!(
        "levels: {:.2} s to level {level}, {scanned} slots scanned of {}",
        levels_started.elapsed().as_secs_f64(),
        states.iter().map(Vec::len).sum::<usize>()
    );
    states
        .into_iter()
        .zip(layers)
        .map(|(states, layer)| finish(states, layer))
        .collect()
}

/// Slots a level's marked tiles must hold before its scan is shared
/// among threads.
const PARALLEL_SLOTS: u64 = 1 << 16;

/// Whether a state's distance is final when its level comes: a won
/// position with a route to the end, a lost one with no sideways move
/// left undecided.
fn known(state: u16) -> bool {
    match state & NO_POSITION {
        WON => state & DISTANCE != UNBOUNDED,
        LOST => state & COUNT == 0,
        _ => false,
    }
}

/// Tells an undecided parent that a child is decided at `distance`, won
/// (`child_won`) or lost for its side to move; returns the parent's
/// distance when that makes it known. Only the caller updates the slot
/// meanwhile (a unit owns the columns its children's parents are in), so
/// a plain load and store do.
///
/// # Errors
/// [`SolveError::TooDeep`] when that distance is beyond [`MAX_DTE`].
fn tell(slot: &AtomicU16, child_won: bool, distance: u16) -> Result<Option<u16>, SolveError> {
    let through = distance + 1;
    let too_deep = || Err(SolveError::TooDeep(u32::from(through)));
    let state = slot.load(Ordering::Relaxed);
    if state & DONE != 0 || state & NO_POSITION == NO_POSITION {
        return Ok(None);
    }
    let (new, known) = if !child_won {
        // A move into a loss: a won parent's route one ply longer.
        let bound = state & DISTANCE;
        if state & WON == 0 || (bound != UNBOUNDED && bound <= through) {
            return Ok(None);
        }
        if u32::from(through) > MAX_DTE {
            return too_deep();
        }
        (state & !DISTANCE | through, through)
    } else {
        // A move into a win: one move fewer a lost parent waits for.
        if state & LOST == 0 || state & COUNT == 0 {
            return Ok(None);
        }
        let new = state - (1 << COUNT_SHIFT);
        if new & COUNT != 0 {
            (new, UNBOUNDED)
        } else if u32::from(through) > MAX_DTE {
            return too_deep();
        } else {
            let d = (new & DISTANCE).max(through);
            (new & !DISTANCE | d, d)
        }
    };
    slot.store(new, Ordering::Relaxed);
    Ok((known != UNBOUNDED).then_some(known))
}

/// A layer's slots as file values with its tallies (see
/// [`Values::from_codes`]); every won and lost position must be decided.
fn finish(states: Vec<AtomicU16>, layer: &Layer) -> Result<Solved, SolveError> {
    let mut tally = Tally::default();
    let mut codes = Vec::with_capacity(states.len());
    let mut previous = crate::solver::index::value::encode(Dtz::Draw);
    for (slot, state) in states.into_iter().enumerate() {
        let state = state.into_inner();
        let value = if state & NO_POSITION == NO_POSITION {
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
            Dtz::Win(u32::from(state & DISTANCE))
        } else {
            Dtz::Loss(u32::from(state & DISTANCE))
        };
        tally.add(value);
        previous = crate::solver::index::value::encode(value);
        codes.push(previous);
    }
    let values = Values::from_codes(codes, tally.longest);
    Ok(Solved {
        longest: values.longest_win_and_loss(),
        values,
        tally,
        positions: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_child_shortens_a_won_parent_and_a_won_child_counts_down_a_lost_one() {
        let won = AtomicU16::new(WON | 9);
        assert_eq!(tell(&won, false, 3), Ok(Some(4)));
        assert_eq!(won.load(Ordering::Relaxed), WON | 4);
        // A longer route changes nothing; a won child does not concern it.
        assert_eq!(tell(&won, false, 5), Ok(None));
        assert_eq!(tell(&won, true, 1), Ok(None));
        // Two sideways moves, a forward bound of 7.
        let lost = AtomicU16::new(LOST | 2 << COUNT_SHIFT | 7);
        assert!(!known(lost.load(Ordering::Relaxed)));
        assert_eq!(tell(&lost, true, 2), Ok(None));
        // The last one decides it, at the later of its bound and the child's.
        assert_eq!(tell(&lost, true, 10), Ok(Some(11)));
        assert!(known(lost.load(Ordering::Relaxed)));
        assert_eq!(lost.load(Ordering::Relaxed) & DISTANCE, 11);
        for state in [NO_POSITION, WON | DONE | 3, 0] {
            let slot = AtomicU16::new(state);
            assert_eq!(tell(&slot, false, 1), Ok(None));
            assert_eq!(tell(&slot, true, 1), Ok(None));
            assert_eq!(slot.load(Ordering::Relaxed), state);
        }
        assert!(!known(NO_POSITION) && !known(WON | UNBOUNDED) && !known(0));
    }

    #[test]
    fn a_distance_beyond_what_the_states_hold_is_refused() {
        let level = MAX_DTE as u16;
        let won = AtomicU16::new(WON | UNBOUNDED);
        assert_eq!(
            tell(&won, false, level),
            Err(SolveError::TooDeep(MAX_DTE + 1))
        );
        let lost = AtomicU16::new(LOST | 1 << COUNT_SHIFT);
        assert_eq!(
            tell(&lost, true, level),
            Err(SolveError::TooDeep(MAX_DTE + 1))
        );
        // Unchanged either way.
        assert_eq!(won.load(Ordering::Relaxed), WON | UNBOUNDED);
        assert_eq!(lost.load(Ordering::Relaxed), LOST | 1 << COUNT_SHIFT);
    }
}

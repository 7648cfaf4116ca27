//! Which positions can arise from the start position: a breadth-first walk
//! over the solver's index, one bit per position, on all threads.
//!
//! Like the retreat, a large level is walked in index order (by scanning a
//! bitmap of the level) rather than in the order it was found, so that the
//! successors of neighbouring positions are neighbours and stay in cache.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Cars, Entry, Geometry, Indexer, Row, SCAN_RATIO, parallel, row_units};
use crate::board::Color;

/// The positions reachable from a start position.
pub struct Reachable {
    /// One bit per slot of the solver's table (Black to move, then White).
    bits: Vec<AtomicU64>,
    /// Finished positions reached, which have no slot (the side that just
    /// took its last car off has none left): one bit per winner and set of
    /// the loser's cars.
    finished: Vec<AtomicU64>,
    len: u64,
}

impl Reachable {
    /// Whether the slot `slot` (as in [`super::Solution::values`]) can arise.
    pub fn contains(&self, slot: u64) -> bool {
        test(&self.bits, slot)
    }

    /// Reachable positions with a slot (both sides still have a car).
    pub fn unfinished(&self) -> u64 {
        count(&self.bits)
    }

    /// Finished positions reached (a side has driven its last car off).
    pub fn finished(&self) -> u64 {
        count(&self.finished)
    }

    /// Slots in the table this was made for.
    pub fn slots(&self) -> u64 {
        2 * self.len
    }
}

fn count(bits: &[AtomicU64]) -> u64 {
    bits.iter()
        .map(|word| u64::from(word.load(Ordering::Relaxed).count_ones()))
        .sum()
}

fn bitmap(bits: u64) -> Vec<AtomicU64> {
    (0..bits.div_ceil(64)).map(|_| AtomicU64::new(0)).collect()
}

fn test(bits: &[AtomicU64], slot: u64) -> bool {
    bits[(slot / 64) as usize].load(Ordering::Relaxed) & (1 << (slot % 64)) != 0
}

/// Sets a bit; returns whether it was clear.
fn set(bits: &[AtomicU64], slot: u64) -> bool {
    let bit = 1 << (slot % 64);
    bits[(slot / 64) as usize].fetch_or(bit, Ordering::Relaxed) & bit == 0
}

/// The set bits of `bits` in `range`, in order.
fn set_bits(bits: &[AtomicU64], range: std::ops::Range<u64>) -> impl Iterator<Item = u64> + '_ {
    let (start, end) = (range.start, range.end);
    (start / 64..end.div_ceil(64)).flat_map(move |word| {
        let mut value = bits[word as usize].load(Ordering::Relaxed);
        std::iter::from_fn(move || {
            while value != 0 {
                let slot = word * 64 + u64::from(value.trailing_zeros());
                value &= value - 1;
                if (start..end).contains(&slot) {
                    return Some(slot);
                }
            }
            None
        })
    })
}

/// Walks every position reachable from `start` with `side` to move.
pub fn reachable(indexer: &Indexer, start: Cars, side: Color, threads: usize) -> Reachable {
    let geometry = Geometry::new(indexer.size());
    let len = indexer.len();
    let slot_of = |cars: Cars, side: Color| indexer.slot(cars.black, cars.white, side);
    let reached = bitmap(2 * len);
    let mut level = bitmap(2 * len);
    let mut next_level = bitmap(2 * len);
    set(&reached, slot_of(start, side));
    let mut frontier = vec![Entry::new(start, side)];
    let squares = 1u64 << indexer.squares();
    let finished = bitmap(2 * squares);
    while !frontier.is_empty() {
        // Each successor not seen before joins the next level, in both its
        // list and its bitmap; the bigger levels are walked by bitmap.
        let expand = |cars: Cars, mover: Color, found: &mut Vec<Entry>| {
            let finishes = geometry.successors(cars, mover, |child| {
                let slot = slot_of(child, mover.other());
                if set(&reached, slot) {
                    set(&next_level, slot);
                    found.push(Entry::new(child, mover.other()));
                }
            });
            if finishes {
                set(
                    &finished,
                    mover.index() as u64 * squares + u64::from(cars.of(mover.other())),
                );
            }
        };
        let found = if frontier.len() as u64 * SCAN_RATIO > 2 * len {
            let units = row_units(indexer);
            parallel(threads, units.len(), |unit, out| {
                let mut found = Vec::new();
                let (side, class, ref black_ranks) = units[unit];
                for black_rank in black_ranks.clone() {
                    let row_start = indexer.row_start(side, &class, black_rank);
                    let mut row = Row::new(indexer, &class, black_rank);
                    for slot in set_bits(&level, row_start..row_start + class.white_sets) {
                        let (black, white) = (row.black(), row.white(slot - row_start));
                        expand(Cars { black, white }, side, &mut found);
                    }
                }
                out.push(found);
            })
        } else {
            const CHUNK: usize = 1 << 12;
            parallel(threads, frontier.len().div_ceil(CHUNK), |unit, out| {
                let mut found = Vec::new();
                let end = ((unit + 1) * CHUNK).min(frontier.len());
                for entry in &frontier[unit * CHUNK..end] {
                    expand(entry.cars(), entry.side(), &mut found);
                }
                out.push(found);
            })
        };
        frontier.clear();
        for entries in found {
            frontier.extend(entries);
        }
        std::mem::swap(&mut level, &mut next_level);
        for word in &next_level {
            word.store(0, Ordering::Relaxed);
        }
    }
    Reachable {
        bits: reached,
        finished,
        len,
    }
}

//! Which positions can arise from the start position: a breadth-first walk
//! over the solver's index, one bit per position, on all threads.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::{Cars, Entry, Geometry, Indexer};
use crate::board::Color;

/// The positions reachable from a start position.
pub struct Reachable {
    /// One bit per slot of the solver's table (Black to move, then White).
    bits: Vec<AtomicU64>,
    /// Finished positions reached: the side that just took its last car
    /// off has none left, so they have no slot; each is the winner and the
    /// loser's cars.
    pub finished: HashSet<(Color, u32)>,
    len: u64,
}

impl Reachable {
    /// Whether the slot `slot` (as in [`super::Solution::values`]) can arise.
    pub fn contains(&self, slot: u64) -> bool {
        self.bits[(slot / 64) as usize].load(Ordering::Relaxed) & (1 << (slot % 64)) != 0
    }

    /// Reachable positions with a slot (both sides still have a car).
    pub fn unfinished(&self) -> u64 {
        self.bits
            .iter()
            .map(|word| u64::from(word.load(Ordering::Relaxed).count_ones()))
            .sum()
    }

    /// Slots in the table this was made for.
    pub fn slots(&self) -> u64 {
        2 * self.len
    }
}

/// Walks every position reachable from `start` with `side` to move.
pub fn reachable(indexer: &Indexer, start: Cars, side: Color, threads: usize) -> Reachable {
    let geometry = Geometry::new(indexer.size());
    let len = indexer.len();
    let bits: Vec<AtomicU64> = (0..(2 * len).div_ceil(64))
        .map(|_| AtomicU64::new(0))
        .collect();
    let mark = |cars: Cars, side: Color| {
        let slot = side.index() as u64 * len + indexer.index(cars.black, cars.white);
        let bit = 1 << (slot % 64);
        bits[(slot / 64) as usize].fetch_or(bit, Ordering::Relaxed) & bit == 0
    };
    mark(start, side);
    let mut frontier = vec![Entry::new(start, side)];
    let mut finished = HashSet::new();
    while !frontier.is_empty() {
        const CHUNK: usize = 1 << 12;
        let next_chunk = AtomicUsize::new(0);
        let mut next = Vec::new();
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads.max(1))
                .map(|_| {
                    scope.spawn(|| {
                        let mut found = Vec::new();
                        let mut ended = HashSet::new();
                        loop {
                            let start = next_chunk.fetch_add(CHUNK, Ordering::Relaxed);
                            if start >= frontier.len() {
                                break (found, ended);
                            }
                            let end = (start + CHUNK).min(frontier.len());
                            for entry in &frontier[start..end] {
                                let (cars, mover) = (entry.cars(), entry.side());
                                let finishes = geometry.successors(cars, mover, |child| {
                                    if mark(child, mover.other()) {
                                        found.push(Entry::new(child, mover.other()));
                                    }
                                });
                                if finishes {
                                    ended.insert((mover, cars.of(mover.other())));
                                }
                            }
                        }
                    })
                })
                .collect();
            for worker in workers {
                let (found, ended) = worker.join().expect("reachability thread panicked");
                next.extend(found);
                finished.extend(ended);
            }
        });
        frontier = next;
    }
    Reachable {
        bits,
        finished,
        len,
    }
}

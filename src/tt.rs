//! The transposition table: search results keyed by Zobrist key.
//!
//! Entries live in clusters of four (one 64-byte cache line). A store
//! replaces the entry for the same key, else an empty entry, else the entry
//! least worth keeping: shallow entries from earlier searches go first.
//! Mate scores are stored relative to the node, not the root, through
//! [`score_to_tt`] and [`score_from_tt`].
//!
//! A slot is stored as two `u64` words, all zero when empty, so that a new
//! table is asked of the system as zeroed memory: it costs nothing until a
//! search touches it (a 4 GB table is ready at once), and a big table is
//! cleared by swapping in a fresh one and freeing the old on a thread of
//! its own. `stop` never waits for either.

use crate::board::Move;
use crate::score::MATE_BOUND;

/// Which side of the true score a stored score is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true score is at least this (a beta cutoff).
    Lower,
    /// The true score is at most this (no move raised alpha).
    Upper,
    /// The true score.
    Exact,
}

/// What a probe finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub best_move: Option<Move>,
    /// Score from the side to move's point of view, adjusted back to the
    /// probing node's ply.
    pub score: i32,
    pub depth: i32,
    pub bound: Bound,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Slot {
    key: u64,
    move_code: u16,
    score: i16,
    depth: u8,
    /// Bits 0-1: bound (0 = empty slot); bits 2-7: generation.
    flags: u8,
}

/// A slot as stored: the key, then move, score, depth and flags packed.
type Words = [u64; 2];

impl Slot {
    fn unpack(words: Words) -> Slot {
        let [key, rest] = words;
        Slot {
            key,
            move_code: rest as u16,
            score: (rest >> 16) as u16 as i16,
            depth: (rest >> 32) as u8,
            flags: (rest >> 40) as u8,
        }
    }

    fn pack(self) -> Words {
        [
            self.key,
            u64::from(self.move_code)
                | u64::from(self.score as u16) << 16
                | u64::from(self.depth) << 32
                | u64::from(self.flags) << 40,
        ]
    }

    fn is_empty(&self) -> bool {
        self.flags & 3 == 0
    }

    fn generation(&self) -> u8 {
        self.flags >> 2
    }
}

const CLUSTER: usize = 4;
const GENERATIONS: u8 = 64;
/// In replacement, each generation of age counts as this many plies less
/// depth.
const AGE_PLIES: i32 = 8;
type Cluster = [Words; CLUSTER];
const EMPTY_CLUSTER: Cluster = [[0; 2]; CLUSTER];
const BYTES_PER_CLUSTER: usize = std::mem::size_of::<Cluster>();
/// Tables up to this size are cleared in place; larger ones are replaced
/// (see the module documentation).
const CLEAR_IN_PLACE_BYTES: usize = 64 << 20;
/// How much memory a table being freed gives back at a time.
const FREE_SLICE_BYTES: usize = 16 << 20;

/// A fixed-size transposition table (size set in MiB by the `Hash` option).
pub struct TranspositionTable {
    clusters: Vec<Cluster>,
    generation: u8,
}

/// Zeroed clusters: `vec!` of an all-zero value asks the allocator for
/// zeroed memory, which the system provides lazily.
fn zeroed(count: usize) -> Vec<Cluster> {
    vec![EMPTY_CLUSTER; count]
}

/// Frees `clusters` on a thread of its own (freeing gigabytes takes a
/// while); inline if no thread can be had.
fn free_in_background(mut clusters: Vec<Cluster>) {
    if clusters.len() * BYTES_PER_CLUSTER <= CLEAR_IN_PLACE_BYTES {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("free hash".into())
        .spawn(move || {
            // From the end, a slice at a time: giving memory back holds the
            // process's memory-map lock, which a search touching fresh
            // pages of the new table waits for, so hold it briefly each
            // time. (Shrinking a large allocation unmaps its tail.)
            let slice = FREE_SLICE_BYTES / BYTES_PER_CLUSTER;
            while clusters.len() > slice {
                clusters.truncate(clusters.len() - slice);
                clusters.shrink_to_fit();
            }
        });
}

/// Converts a score relative to the root into one relative to the node
/// `ply` plies below it, as stored in the table: a mate found from the root
/// in 10 plies, at ply 4, is a mate in 6 from the node.
pub fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

/// Inverse of [`score_to_tt`]: a stored node-relative score as seen from a
/// root `ply` plies above.
pub fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

impl TranspositionTable {
    /// Smallest and largest sizes the `Hash` option accepts, in MiB.
    pub const MIN_MB: usize = 1;
    pub const MAX_MB: usize = 16384;
    pub const DEFAULT_MB: usize = 16;

    /// A table of `mb` MiB (clamped to the allowed range).
    ///
    /// # Panics
    /// If the memory cannot be had; see [`TranspositionTable::try_new`].
    pub fn new(mb: usize) -> TranspositionTable {
        Self::try_new(mb).expect("out of memory for the transposition table")
    }

    /// A table of `mb` MiB (clamped to the allowed range), or an error
    /// message when the memory cannot be had.
    pub fn try_new(mb: usize) -> Result<TranspositionTable, String> {
        let mb = mb.clamp(Self::MIN_MB, Self::MAX_MB);
        let count = mb * 1024 * 1024 / BYTES_PER_CLUSTER;
        // Ask first, fallibly (`vec!` would abort on failure); the memory
        // is only reserved, not touched, so this costs nothing.
        let mut trial: Vec<Cluster> = Vec::new();
        trial
            .try_reserve_exact(count)
            .map_err(|_| format!("cannot allocate {mb} MB for the hash table"))?;
        drop(trial);
        Ok(TranspositionTable {
            clusters: zeroed(count),
            generation: 0,
        })
    }

    /// Size in MiB.
    pub fn size_mb(&self) -> usize {
        self.clusters.len() * BYTES_PER_CLUSTER / (1024 * 1024)
    }

    /// Empties every entry, at once whatever the size.
    pub fn clear(&mut self) {
        if self.clusters.len() * BYTES_PER_CLUSTER <= CLEAR_IN_PLACE_BYTES {
            self.clusters.fill(EMPTY_CLUSTER);
        } else {
            let count = self.clusters.len();
            free_in_background(std::mem::take(&mut self.clusters));
            self.clusters = zeroed(count);
        }
        self.generation = 0;
    }

    /// Replaces this table with `other`, freeing this one's memory in the
    /// background.
    pub fn replace_with(&mut self, other: TranspositionTable) {
        let old = std::mem::replace(self, other);
        free_in_background(old.clusters);
    }

    /// Starts a new search: entries from older searches become cheaper to
    /// replace.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) % GENERATIONS;
    }

    fn cluster_index(&self, key: u64) -> usize {
        // Multiply-shift maps the key onto any table length without a modulo.
        ((key as u128 * self.clusters.len() as u128) >> 64) as usize
    }

    /// Looks `key` up; `ply` is the probing node's distance from the root.
    pub fn probe(&self, key: u64, ply: usize) -> Option<Entry> {
        let cluster = &self.clusters[self.cluster_index(key)];
        let slot = cluster
            .iter()
            .map(|&words| Slot::unpack(words))
            .find(|s| !s.is_empty() && s.key == key)?;
        let bound = match slot.flags & 3 {
            1 => Bound::Lower,
            2 => Bound::Upper,
            _ => Bound::Exact,
        };
        Some(Entry {
            best_move: Move::from_code(slot.move_code),
            score: score_from_tt(slot.score as i32, ply),
            depth: slot.depth as i32,
            bound,
        })
    }

    /// Stores a search result; `score` is relative to the root, `ply` the
    /// node's distance from it. A store without a move keeps the move
    /// already stored for the same key.
    pub fn store(
        &mut self,
        key: u64,
        ply: usize,
        best_move: Option<Move>,
        score: i32,
        depth: i32,
        bound: Bound,
    ) {
        let generation = self.generation;
        let index = self.cluster_index(key);
        let cluster = self.clusters[index].map(Slot::unpack);
        let slot_index = match cluster.iter().position(|s| s.key == key && !s.is_empty()) {
            Some(i) => i,
            None => cluster
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| {
                    if s.is_empty() {
                        i32::MIN
                    } else {
                        let age = (generation + GENERATIONS - s.generation()) % GENERATIONS;
                        s.depth as i32 - AGE_PLIES * age as i32
                    }
                })
                .map(|(i, _)| i)
                .unwrap_or(0),
        };
        let slot = &cluster[slot_index];
        let move_code = match best_move {
            Some(mv) => mv.code(),
            None if slot.key == key => slot.move_code,
            None => 0,
        };
        let bound_bits = match bound {
            Bound::Lower => 1,
            Bound::Upper => 2,
            Bound::Exact => 3,
        };
        self.clusters[index][slot_index] = Slot {
            key,
            move_code,
            score: score_to_tt(score, ply) as i16,
            depth: depth.clamp(0, u8::MAX as i32) as u8,
            flags: bound_bits | (generation << 2),
        }
        .pack();
    }

    /// Permille of sampled entries filled in the current search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let sample = self.clusters.iter().take(1000 / CLUSTER).flatten();
        let (mut used, mut seen) = (0u32, 0u32);
        for slot in sample.map(|&words| Slot::unpack(words)) {
            seen += 1;
            if !slot.is_empty() && slot.generation() == self.generation {
                used += 1;
            }
        }
        (used * 1000).checked_div(seen).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Direction;
    use crate::score::MATE;

    #[test]
    fn mate_scores_round_trip_through_the_table() {
        for ply in [0, 1, 7, 40] {
            for score in [MATE - 19, -(MATE - 19), MATE - ply as i32 - 3, 0, 75, -120] {
                assert_eq!(score_from_tt(score_to_tt(score, ply), ply), score);
            }
        }
        // A mate 10 plies from the root, stored at ply 4, is a mate in 6
        // from the node and reads as a mate 12 plies away from a node at ply 6.
        let stored = score_to_tt(MATE - 10, 4);
        assert_eq!(stored, MATE - 6);
        assert_eq!(score_from_tt(stored, 6), MATE - 12);
        assert_eq!(score_to_tt(-(MATE - 10), 4), -(MATE - 6));
    }

    #[test]
    fn stores_and_probes_with_mate_adjustment() {
        let mut tt = TranspositionTable::new(1);
        let mv = Move::new(16, Direction::East);
        tt.store(0xABCDEF, 3, Some(mv), MATE - 9, 5, Bound::Exact);
        let entry = tt.probe(0xABCDEF, 3).unwrap();
        assert_eq!(entry.best_move, Some(mv));
        assert_eq!(entry.score, MATE - 9);
        assert_eq!(entry.depth, 5);
        assert_eq!(entry.bound, Bound::Exact);
        assert_eq!(tt.probe(0xABCDEF, 5).unwrap().score, MATE - 11);
        assert!(tt.probe(0x123456, 3).is_none());
        // A store without a move keeps the old one.
        tt.store(0xABCDEF, 0, None, 10, 6, Bound::Lower);
        assert_eq!(tt.probe(0xABCDEF, 0).unwrap().best_move, Some(mv));
        tt.clear();
        assert!(tt.probe(0xABCDEF, 0).is_none());
    }

    #[test]
    fn hashfull_counts_current_generation() {
        let mut tt = TranspositionTable::new(1);
        assert_eq!(tt.hashfull(), 0);
        for key in 0..100_000u64 {
            tt.store(
                key.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                0,
                None,
                0,
                1,
                Bound::Exact,
            );
        }
        assert!(tt.hashfull() > 500);
        tt.new_search();
        assert_eq!(tt.hashfull(), 0);
        assert_eq!(tt.size_mb(), 1);
    }
}

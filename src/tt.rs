//! The transposition table: search results keyed by Zobrist key, shared
//! by every search thread without locks.
//!
//! Entries live in clusters of four (one 64-byte cache line). A store
//! replaces the entry for the same key, else an empty entry, else the entry
//! least worth keeping: shallow entries from earlier searches go first.
//! Mate scores are stored relative to the node, not the root, through
//! [`score_to_tt`] and [`score_from_tt`].
//!
//! A slot is two atomic `u64` words: the entry's data, and the key XORed
//! with the data. Threads read and write the words with relaxed atomic
//! operations, so a slot two threads write at once may end up with one
//! thread's key word and the other's data word: the XOR then no longer
//! gives the key, and the probe sees no entry (the same as a miss). No
//! lock, no undefined behaviour, and a torn entry is never believed.
//!
//! An empty slot is all zero bits, so that a new table is asked of the
//! system as zeroed memory: it costs nothing until a search touches it (a
//! 4 GB table is ready at once). Clearing touches no memory either: each
//! entry carries the table's clear count (its epoch) from when it was
//! stored, and [`TranspositionTable::clear`] counts one up, which empties
//! every entry of an earlier epoch at once. Only when the count wraps is
//! the memory itself cleared, by swapping in a fresh table. No memory is
//! given back or faulted in by a clear, so the search that follows
//! `ucinewgame` runs at full speed and `stop` never waits for a clear.
//!
//! The memory of a table replaced (by that swap, or by a new `Hash` size)
//! is not freed at once: giving back gigabytes of touched pages keeps a
//! processor busy for hundreds of milliseconds, and the process's memory
//! map locked in turns. The table keeps it, and the search thread
//! gives it back a slice at a time while it has nothing else to do
//! ([`TranspositionTable::give_back_slice`]), so that this never competes
//! with a search or a reply.

use std::sync::atomic::{AtomicU64, Ordering};

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

/// One entry's data (everything but the key), packed into a word.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Data {
    move_code: u16,
    score: i16,
    depth: u8,
    /// Bits 0-1: bound (0 = empty slot); bits 2-7: generation.
    flags: u8,
    /// The table's epoch when the entry was stored: an entry of another
    /// epoch is empty.
    epoch: u16,
}

impl Data {
    fn unpack(word: u64) -> Data {
        Data {
            move_code: word as u16,
            score: (word >> 16) as u16 as i16,
            depth: (word >> 32) as u8,
            flags: (word >> 40) as u8,
            epoch: (word >> 48) as u16,
        }
    }

    fn pack(self) -> u64 {
        u64::from(self.move_code)
            | u64::from(self.score as u16) << 16
            | u64::from(self.depth) << 32
            | u64::from(self.flags) << 40
            | u64::from(self.epoch) << 48
    }

    /// Whether the slot holds no entry of `epoch`.
    fn is_empty(&self, epoch: u16) -> bool {
        self.flags & 3 == 0 || self.epoch != epoch
    }

    fn generation(&self) -> u8 {
        self.flags >> 2
    }
}

/// Words per slot: the key XOR the data, then the data.
const WORDS: usize = 2;
const CLUSTER: usize = 4;
/// Words per cluster.
const CLUSTER_WORDS: usize = CLUSTER * WORDS;
const GENERATIONS: u8 = 64;
/// In replacement, each generation of age counts as this many plies less
/// depth.
const AGE_PLIES: i32 = 8;
const BYTES_PER_CLUSTER: usize = CLUSTER_WORDS * std::mem::size_of::<u64>();
/// How much memory of a replaced table is given back at a time: the
/// system takes well under a millisecond for 2 MiB of touched pages, so a
/// job that arrives meanwhile waits no longer than that.
const FREE_SLICE_BYTES: usize = 2 << 20;

/// A fixed-size transposition table (size set in MiB by the `Hash` option).
/// Probes and stores take `&self`: any number of threads may use it at once.
pub struct TranspositionTable {
    /// `clusters * CLUSTER_WORDS` words.
    words: Box<[AtomicU64]>,
    generation: u8,
    /// How many times the table was cleared since its memory was last
    /// zeroed: only entries stored in this epoch are in the table.
    epoch: u16,
    /// The memory of the table this one replaced, until it is given back.
    /// At most one is kept: when another is replaced, what is left of the
    /// one before is given back at once, so however fast tables are
    /// replaced, no more than two are in memory.
    retired: Option<Vec<AtomicU64>>,
}

/// `count` zeroed clusters (in huge pages where the system gives them),
/// or `None` when the memory cannot be had.
fn zeroed(count: usize) -> Option<Box<[AtomicU64]>> {
    crate::memory::try_zeroed_slice(count.checked_mul(CLUSTER_WORDS)?)
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
        let words =
            zeroed(count).ok_or_else(|| format!("cannot allocate {mb} MB for the hash table"))?;
        Ok(TranspositionTable {
            words,
            generation: 0,
            epoch: 0,
            retired: None,
        })
    }

    fn clusters(&self) -> usize {
        self.words.len() / CLUSTER_WORDS
    }

    /// Size in MiB.
    pub fn size_mb(&self) -> usize {
        self.clusters() * BYTES_PER_CLUSTER / (1024 * 1024)
    }

    /// Empties every entry, at once whatever the size: a new epoch begins,
    /// and the memory is left as it is (zeroed only when the epochs run
    /// out, once in 65536 clears).
    pub fn clear(&mut self) {
        match self.epoch.checked_add(1) {
            Some(epoch) => self.epoch = epoch,
            None => {
                self.zero();
                self.epoch = 0;
            }
        }
        self.generation = 0;
    }

    /// Sets every word to zero: swaps in fresh memory (retiring the old),
    /// or if none can be had, clears the words in place.
    fn zero(&mut self) {
        match zeroed(self.clusters()) {
            Some(words) => {
                let old = std::mem::replace(&mut self.words, words);
                self.retired = Some(old.into_vec());
            }
            None => {
                for word in self.words.iter_mut() {
                    *word.get_mut() = 0;
                }
            }
        }
    }

    /// Replaces this table with `other`, which keeps this one's memory
    /// until it is given back ([`TranspositionTable::give_back_slice`]).
    pub fn replace_with(&mut self, other: TranspositionTable) {
        let old = std::mem::replace(self, other);
        self.retired = Some(old.words.into_vec());
        // What `old` still kept is given back here, at once.
    }

    /// Gives back one slice of the memory of the table this one replaced,
    /// from the end (shrinking a large allocation unmaps its tail); whether
    /// any is left to give back.
    pub fn give_back_slice(&mut self) -> bool {
        let slice = FREE_SLICE_BYTES / std::mem::size_of::<u64>();
        match &mut self.retired {
            Some(words) if words.len() > slice => {
                words.truncate(words.len() - slice);
                words.shrink_to_fit();
                true
            }
            _ => {
                self.retired = None;
                false
            }
        }
    }

    /// Starts a new search: entries from older searches become cheaper to
    /// replace.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) % GENERATIONS;
    }

    /// The words of the cluster for `key`.
    fn cluster(&self, key: u64) -> &[AtomicU64] {
        // Multiply-shift maps the key onto any table length without a modulo.
        let index = ((key as u128 * self.clusters() as u128) >> 64) as usize;
        &self.words[index * CLUSTER_WORDS..(index + 1) * CLUSTER_WORDS]
    }

    /// Slot `slot` of `cluster`: its key (as the XOR decodes it) and data.
    fn read(cluster: &[AtomicU64], slot: usize) -> (u64, Data) {
        let check = cluster[slot * WORDS].load(Ordering::Relaxed);
        let data = cluster[slot * WORDS + 1].load(Ordering::Relaxed);
        (check ^ data, Data::unpack(data))
    }

    /// Looks `key` up; `ply` is the probing node's distance from the root.
    pub fn probe(&self, key: u64, ply: usize) -> Option<Entry> {
        let cluster = self.cluster(key);
        let data = (0..CLUSTER)
            .map(|slot| Self::read(cluster, slot))
            .find(|(stored, data)| *stored == key && !data.is_empty(self.epoch))?
            .1;
        let bound = match data.flags & 3 {
            1 => Bound::Lower,
            2 => Bound::Upper,
            _ => Bound::Exact,
        };
        Some(Entry {
            best_move: Move::from_code(data.move_code),
            score: score_from_tt(data.score as i32, ply),
            depth: data.depth as i32,
            bound,
        })
    }

    /// Stores a search result; `score` is relative to the root, `ply` the
    /// node's distance from it. A store without a move keeps the move
    /// already stored for the same key.
    pub fn store(
        &self,
        key: u64,
        ply: usize,
        best_move: Option<Move>,
        score: i32,
        depth: i32,
        bound: Bound,
    ) {
        let (generation, epoch) = (self.generation, self.epoch);
        let cluster = self.cluster(key);
        let slots: [(u64, Data); CLUSTER] = std::array::from_fn(|slot| Self::read(cluster, slot));
        let same_key = slots
            .iter()
            .position(|(stored, data)| *stored == key && !data.is_empty(epoch));
        let slot_index = same_key.unwrap_or_else(|| {
            slots
                .iter()
                .enumerate()
                .min_by_key(|(_, (_, data))| {
                    if data.is_empty(epoch) {
                        i32::MIN
                    } else {
                        let age = (generation + GENERATIONS - data.generation()) % GENERATIONS;
                        data.depth as i32 - AGE_PLIES * age as i32
                    }
                })
                .map_or(0, |(i, _)| i)
        });
        let move_code = match best_move {
            Some(mv) => mv.code(),
            None if same_key.is_some() => slots[slot_index].1.move_code,
            None => 0,
        };
        let bound_bits = match bound {
            Bound::Lower => 1,
            Bound::Upper => 2,
            Bound::Exact => 3,
        };
        let data = Data {
            move_code,
            score: score_to_tt(score, ply) as i16,
            depth: depth.clamp(0, u8::MAX as i32) as u8,
            flags: bound_bits | (generation << 2),
            epoch,
        }
        .pack();
        cluster[slot_index * WORDS].store(key ^ data, Ordering::Relaxed);
        cluster[slot_index * WORDS + 1].store(data, Ordering::Relaxed);
    }

    /// Permille of sampled entries filled in the current search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let sampled = (1000 / CLUSTER).min(self.clusters());
        let (mut used, mut seen) = (0u32, 0u32);
        for cluster in self.words[..sampled * CLUSTER_WORDS].chunks(CLUSTER_WORDS) {
            for slot in 0..CLUSTER {
                let (_, data) = Self::read(cluster, slot);
                seen += 1;
                if !data.is_empty(self.epoch) && data.generation() == self.generation {
                    used += 1;
                }
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

    /// A clear of a big table empties it without touching its memory: the
    /// same allocation stays (nothing to give back, nothing to fault in
    /// again), and entries stored before the clear are gone, deep ones
    /// too, as far as probes, replacement and `hashfull` can tell.
    #[test]
    fn a_clear_empties_a_big_table_in_place() {
        let mut tt = TranspositionTable::new(128);
        let memory = tt.words.as_ptr();
        let mv = Move::new(16, Direction::East);
        // Keys this small all fall in the first cluster.
        for key in 1..=4u64 {
            tt.store(key, 0, Some(mv), 10, 60, Bound::Exact);
        }
        assert_eq!(tt.probe(3, 0).map(|entry| entry.depth), Some(60));
        tt.clear();
        assert!(std::ptr::eq(memory, tt.words.as_ptr()));
        assert!((1..=4u64).all(|key| tt.probe(key, 0).is_none()));
        assert_eq!(tt.hashfull(), 0);
        // The four cleared slots are free for shallow entries...
        for key in 5..=8u64 {
            tt.store(key, 0, None, -20, 1, Bound::Upper);
        }
        assert!((5..=8u64).all(|key| tt.probe(key, 0).is_some()));
        // ...and a key stored again starts afresh (no move kept from
        // before the clear).
        tt.clear();
        tt.store(1, 0, None, 5, 2, Bound::Lower);
        let entry = tt.probe(1, 0).unwrap();
        assert_eq!((entry.best_move, entry.depth), (None, 2));
    }

    /// When the clear count wraps, the memory is zeroed, so an entry of
    /// the epoch that comes round again is not taken back.
    #[test]
    fn entries_never_return_when_the_clear_count_wraps() {
        let mut tt = TranspositionTable::new(1);
        let mv = Move::new(16, Direction::East);
        tt.store(0xABCDEF, 0, Some(mv), 10, 5, Bound::Exact);
        for clears in 1..=u32::from(u16::MAX) + 2 {
            tt.clear();
            if clears >= u32::from(u16::MAX) {
                assert!(tt.probe(0xABCDEF, 0).is_none(), "after {clears} clears");
            }
        }
        tt.store(0xABCDEF, 0, None, 10, 5, Bound::Exact);
        assert_eq!(tt.probe(0xABCDEF, 0).unwrap().best_move, None);
        // The zeroed memory was swapped in; the old waits to be given back.
        assert!(tt.retired.is_some());
        assert!(!tt.give_back_slice());
    }

    /// A table replaced by another is kept until given back, a slice at a
    /// time, while the new table works; a table replaced before that one
    /// is given back is given back at once.
    #[test]
    fn replaced_memory_is_given_back_a_slice_at_a_time() {
        let kept = |tt: &TranspositionTable| tt.retired.as_ref().map(|words| words.len() * 8);
        let mut tt = TranspositionTable::new(8);
        tt.replace_with(TranspositionTable::new(4));
        assert_eq!(kept(&tt), Some(8 << 20));
        tt.replace_with(TranspositionTable::new(1));
        assert_eq!((tt.size_mb(), kept(&tt)), (1, Some(4 << 20)));
        let mv = Move::new(16, Direction::East);
        tt.store(7, 0, Some(mv), 1, 1, Bound::Exact);
        assert!(tt.give_back_slice());
        assert_eq!(kept(&tt), Some(2 << 20));
        assert!(!tt.give_back_slice());
        assert_eq!(kept(&tt), None);
        assert!(!tt.give_back_slice());
        assert_eq!(tt.probe(7, 0).unwrap().best_move, Some(mv));
    }

    /// Threads storing and probing the same few clusters at once never
    /// read an entry that mixes two stores: every entry found has the
    /// score and depth written with its key.
    #[test]
    fn concurrent_stores_are_never_torn() {
        let tt = TranspositionTable::new(1);
        // Keys that share one cluster (the top bits pick the cluster).
        let key = |i: u64| (i % 8) | 0xAB00;
        let score_of = |key: u64| (key % 1000) as i32 - 500;
        std::thread::scope(|scope| {
            for thread in 0..4u64 {
                let tt = &tt;
                scope.spawn(move || {
                    for round in 0..200_000u64 {
                        let k = key(round * 7 + thread);
                        if round % 2 == 0 {
                            let depth = (k % 50) as i32;
                            tt.store(k, 0, None, score_of(k), depth, Bound::Exact);
                        } else if let Some(entry) = tt.probe(k, 0) {
                            assert_eq!(entry.score, score_of(k));
                            assert_eq!(entry.depth, (k % 50) as i32);
                        }
                    }
                });
            }
        });
    }
}

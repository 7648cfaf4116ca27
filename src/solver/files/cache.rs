//! Decoded blocks of win/draw/loss files, for probes inside the search:
//! two bits a slot, shared by every search thread in a table of entries
//! that each have their own lock ([`BlockCache`]), bounded in bytes by
//! `TablebaseCache` ([`set_wdl_budget`]); and each search thread's few
//! most recent blocks, looked up without a lock ([`WdlReader`]). A block
//! not in memory is read and decoded on the probing thread: one
//! positioned read of a few hundred bytes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};

use crate::solver::index::value::{Wdl, WdlBits};

/// Default MiB of decoded win/draw/loss blocks a table directory keeps.
pub const DEFAULT_WDL_MB: usize = 64;

static WDL_BUDGET: AtomicUsize = AtomicUsize::new(DEFAULT_WDL_MB << 20);

/// Sets the bytes of decoded win/draw/loss blocks each table directory may
/// keep (0: no probes inside the search). Tables opened later use it.
pub fn set_wdl_budget(bytes: usize) {
    WDL_BUDGET.store(bytes, Ordering::Relaxed);
}

pub fn wdl_budget() -> usize {
    WDL_BUDGET.load(Ordering::Relaxed)
}

/// Which block: the layer's number in its tables and the block's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    pub layer: u32,
    pub block: u64,
}

impl Tag {
    fn hash(self) -> u64 {
        (u64::from(self.layer) << 40 ^ self.block).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// A decoded block: its slots' win/draw/loss in the block's order.
type Decoded = WdlBits;

type Entry = Mutex<Option<(Tag, Arc<Decoded>)>>;

/// Decoded blocks of one table directory: a direct-mapped table, each
/// entry holding one block (a newer block that maps to the same entry
/// replaces it). The table starts small and doubles as blocks fill it, up
/// to the entries the budget allows: its memory follows the blocks used,
/// not the budget.
pub struct BlockCache {
    table: RwLock<Vec<Entry>>,
    /// Entries holding a block.
    held: AtomicUsize,
    /// The most entries: the budget in force at the first probe, over a
    /// block's bytes.
    most: OnceLock<usize>,
    /// Slots a block holds (the largest of the directory's files).
    block_slots: u64,
    /// Blocks decoded (misses), for the tests.
    decoded: AtomicUsize,
}

/// Entries a table starts with.
const FIRST_ENTRIES: usize = 64;

impl BlockCache {
    pub fn new(block_slots: u64) -> BlockCache {
        BlockCache {
            table: RwLock::new(Vec::new()),
            held: AtomicUsize::new(0),
            most: OnceLock::new(),
            block_slots,
            decoded: AtomicUsize::new(0),
        }
    }

    /// The most entries, fixed at the first probe by the budget then in
    /// force.
    fn most(&self) -> usize {
        *self.most.get_or_init(|| {
            let per_block = self.block_slots.div_ceil(4) as usize + 64;
            (wdl_budget() / per_block).max(1)
        })
    }

    /// The block `tag` from the cache, or from `decode` (then kept);
    /// `None` when `decode` fails.
    pub fn get(&self, tag: Tag, decode: impl FnOnce() -> Option<Decoded>) -> Option<Arc<Decoded>> {
        {
            let table = self.table.read();
            if !table.is_empty() {
                let entry = &table[(tag.hash() % table.len() as u64) as usize];
                if let Some((held, block)) = &*entry.lock()
                    && *held == tag
                {
                    return Some(Arc::clone(block));
                }
            }
        }
        // Decoded outside the locks: other threads go on.
        let block = Arc::new(decode()?);
        self.decoded.fetch_add(1, Ordering::Relaxed);
        self.keep(tag, Arc::clone(&block));
        Some(block)
    }

    /// Keeps `block` in its entry, growing the table first when it is
    /// three quarters full and may grow.
    fn keep(&self, tag: Tag, block: Arc<Decoded>) {
        let most = self.most();
        {
            let table = self.table.read();
            let len = table.len();
            let full = self.held.load(Ordering::Relaxed) * 4 >= len * 3;
            if len > 0 && !(full && len < most) {
                let mut entry = table[(tag.hash() % len as u64) as usize].lock();
                if entry.is_none() {
                    self.held.fetch_add(1, Ordering::Relaxed);
                }
                *entry = Some((tag, block));
                return;
            }
        }
        let mut table = self.table.write();
        let len = table.len();
        let grown = if len == 0 {
            FIRST_ENTRIES.min(most)
        } else {
            (len * 2).min(most)
        };
        if grown > len {
            let old = std::mem::take(&mut *table);
            *table = (0..grown).map(|_| Mutex::new(None)).collect();
            let mut held = 0;
            for kept in old.into_iter().filter_map(Mutex::into_inner) {
                let entry = table[(kept.0.hash() % grown as u64) as usize].get_mut();
                held += usize::from(entry.is_none());
                *entry = Some(kept);
            }
            self.held.store(held, Ordering::Relaxed);
        }
        let len = table.len() as u64;
        let entry = table[(tag.hash() % len) as usize].get_mut();
        if entry.is_none() {
            self.held.fetch_add(1, Ordering::Relaxed);
        }
        *entry = Some((tag, block));
    }

    /// Bytes of decoded blocks held, and how many.
    #[cfg(test)]
    fn resident(&self) -> (usize, usize) {
        let held = self.held.load(Ordering::Relaxed);
        (held * self.block_slots.div_ceil(4) as usize, held)
    }

    /// Entries the table has now.
    #[cfg(test)]
    fn entries(&self) -> usize {
        self.table.read().len()
    }

    /// Blocks decoded so far.
    #[cfg(test)]
    fn decoded(&self) -> usize {
        self.decoded.load(Ordering::Relaxed)
    }
}

/// Whether a probe may decode a block that is not in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Read and decode it (a positioned read and a tile's decoding, about
    /// a hundred times a node's work when the file is cold).
    Decode,
    /// Answer only from blocks already decoded: where a search would pay
    /// more for the value than it is worth (at its horizon).
    Cached,
}

/// Blocks a [`WdlReader`] keeps.
const RECENT: usize = 4;

/// One search thread's most recent blocks of one table directory, looked
/// up before the shared [`BlockCache`].
#[derive(Clone, Default)]
pub struct WdlReader {
    recent: [Option<(Tag, Arc<Decoded>)>; RECENT],
    next: usize,
}

impl WdlReader {
    /// The win/draw/loss of the slot at `place` in block `tag`, from this
    /// reader's recent blocks or from `cache` (which decodes it if need
    /// be).
    pub fn probe(
        &mut self,
        cache: &BlockCache,
        tag: Tag,
        place: u64,
        decode: impl FnOnce() -> Option<Decoded>,
    ) -> Option<Wdl> {
        let held = self.recent.iter().flatten().find(|(t, _)| *t == tag);
        if let Some((_, block)) = held {
            return Some(block.get(place));
        }
        let block = cache.get(tag, decode)?;
        let value = block.get(place);
        self.recent[self.next] = Some((tag, block));
        self.next = (self.next + 1) % RECENT;
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(value: Wdl) -> Option<Decoded> {
        let mut bits = WdlBits::draws(64);
        bits.set_run(0, 64, value);
        Some(bits)
    }

    #[test]
    fn blocks_are_decoded_once_and_replaced_in_their_entry() {
        let cache = BlockCache::new(64);
        let tag = Tag { layer: 1, block: 2 };
        let mut reader = WdlReader::default();
        assert_eq!(
            reader.probe(&cache, tag, 2, || block(Wdl::Win)),
            Some(Wdl::Win)
        );
        assert_eq!(cache.decoded(), 1);
        // The reader has it; then the cache has it.
        assert_eq!(
            reader.probe(&cache, tag, 3, || unreachable!()),
            Some(Wdl::Win)
        );
        let mut other = WdlReader::default();
        assert_eq!(
            other.probe(&cache, tag, 1, || unreachable!()),
            Some(Wdl::Win)
        );
        // A block that cannot be read is not kept.
        let bad = Tag { layer: 9, block: 0 };
        assert_eq!(other.probe(&cache, bad, 0, || None), None);
        assert_eq!(cache.decoded(), 1);
        let (bytes, held) = cache.resident();
        assert_eq!((bytes, held), (16, 1));
    }

    #[test]
    fn the_table_grows_with_the_blocks_kept_not_with_the_budget() {
        // A budget of 64 GiB allows about a billion entries of 64-slot
        // blocks; a few blocks take a few entries.
        let cache = BlockCache::new(64);
        cache.most.set((64usize << 30) / (16 + 64)).unwrap();
        let mut reader = WdlReader::default();
        for block in 0..10 {
            let tag = Tag { layer: 0, block };
            assert_eq!(
                reader.probe(&cache, tag, 0, || self::block(Wdl::Loss)),
                Some(Wdl::Loss)
            );
        }
        assert_eq!(cache.entries(), FIRST_ENTRIES);
        for block in 10..1000 {
            cache.get(Tag { layer: 1, block }, || self::block(Wdl::Win));
        }
        let (_, held) = cache.resident();
        assert!(held > 500, "{held} blocks held");
        assert!(cache.entries() <= 4096, "{} entries", cache.entries());
        // Every block still there is found.
        for block in 10..1000 {
            let tag = Tag { layer: 1, block };
            if let Some(found) = cache.get(tag, || None) {
                assert_eq!(found.get(0), Wdl::Win);
            }
        }
    }
}

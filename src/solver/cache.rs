//! Decoded blocks of win/draw/loss files, for probes inside the search:
//! two bits a slot, shared by every search thread in a table of entries
//! that each have their own lock ([`BlockCache`]), bounded in bytes by
//! `TablebaseCache` ([`set_wdl_budget`]); and each search thread's few
//! most recent blocks, looked up without a lock ([`WdlReader`]). A block
//! not in memory is read and decoded on the probing thread: one
//! positioned read of a few hundred bytes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::value::{Wdl, WdlBits};

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
/// replaces it).
pub struct BlockCache {
    entries: OnceLock<Vec<Entry>>,
    /// Slots a block holds (the largest of the directory's files).
    block_slots: u64,
    /// Blocks decoded (misses), for the tests.
    decoded: AtomicUsize,
}

impl BlockCache {
    pub fn new(block_slots: u64) -> BlockCache {
        BlockCache {
            entries: OnceLock::new(),
            block_slots,
            decoded: AtomicUsize::new(0),
        }
    }

    /// The entries, made at the first probe for the budget then in force.
    fn entries(&self) -> &[Entry] {
        self.entries.get_or_init(|| {
            let per_block = self.block_slots.div_ceil(4) as usize + 64;
            let count = (wdl_budget() / per_block).max(1);
            (0..count).map(|_| Mutex::new(None)).collect()
        })
    }

    /// The block `tag` from the cache, or from `decode` (then kept);
    /// `None` when `decode` fails.
    pub fn get(&self, tag: Tag, decode: impl FnOnce() -> Option<Decoded>) -> Option<Arc<Decoded>> {
        let entries = self.entries();
        let entry = &entries[(tag.hash() % entries.len() as u64) as usize];
        if let Some((held, block)) = &*entry.lock()
            && *held == tag
        {
            return Some(Arc::clone(block));
        }
        // Decoded outside the entry's lock: other threads go on.
        let block = Arc::new(decode()?);
        self.decoded.fetch_add(1, Ordering::Relaxed);
        *entry.lock() = Some((tag, Arc::clone(&block)));
        Some(block)
    }

    /// Bytes of decoded blocks held, and how many.
    #[cfg(test)]
    fn resident(&self) -> (usize, usize) {
        let Some(entries) = self.entries.get() else {
            return (0, 0);
        };
        let held = entries.iter().filter(|e| e.lock().is_some()).count();
        (held * self.block_slots.div_ceil(4) as usize, held)
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
}

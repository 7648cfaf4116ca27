//! What a table reader keeps in memory, both bounded in bytes:
//!
//! - decompressed layers (the exact values the root, `solve` and play-outs
//!   read), least recently used first out ([`Lru`]);
//! - the win/draw/loss of layers, two bits a slot, for probes inside the
//!   search ([`WdlCache`]). Search threads read it without taking a lock:
//!   each keeps its own [`WdlReader`] with the layers it has looked up, and
//!   the cache's generation counter tells it when to forget them (a layer
//!   was evicted or added). A layer not in memory is loaded on the calling
//!   thread when its file is small, else on a thread of its own while the
//!   search goes on without it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::store::{Wdl, WdlBits};

/// Decompressed layers kept however large they are: a position's moves
/// reach two layers, and their distances to the end two more, so fewer
/// would read the same files again and again.
pub const KEPT_LAYERS: usize = 4;

/// Entries of one kind, each with its size in bytes, evicted least
/// recently used first while the total is over a budget.
pub struct Lru<V> {
    entries: HashMap<u32, (Arc<V>, usize, u64)>,
    clock: u64,
    resident: usize,
}

impl<V> Default for Lru<V> {
    fn default() -> Self {
        Lru {
            entries: HashMap::new(),
            clock: 0,
            resident: 0,
        }
    }
}

impl<V> Lru<V> {
    /// The entry for `id`, now the most recently used.
    pub fn get(&mut self, id: u32) -> Option<Arc<V>> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(&id).map(|(value, _, used)| {
            *used = clock;
            Arc::clone(value)
        })
    }

    /// Adds `value` (`bytes` large) as the most recently used entry, then
    /// evicts the least recently used ones while more than `budget` bytes
    /// are held, keeping at least `kept` (1 or more: the new one stays).
    /// Returns whether any entry was evicted.
    pub fn insert(
        &mut self,
        id: u32,
        value: Arc<V>,
        bytes: usize,
        budget: usize,
        kept: usize,
    ) -> bool {
        self.clock += 1;
        if let Some((_, old, _)) = self.entries.insert(id, (value, bytes, self.clock)) {
            self.resident -= old;
        }
        self.resident += bytes;
        self.evict(budget, kept.max(1))
    }

    /// Makes room for an entry of `bytes` about to be added with
    /// [`Lru::insert`] (`budget` and `kept` as there), so that the memory
    /// held never goes over what the insert leaves: evicts least recently
    /// used entries while the new one would not fit, keeping at least
    /// `kept - 1`. Returns whether any entry was evicted.
    pub fn make_room(&mut self, bytes: usize, budget: usize, kept: usize) -> bool {
        self.evict(budget.saturating_sub(bytes), kept.saturating_sub(1))
    }

    /// Evicts least recently used entries while more than `budget` bytes
    /// and more than `kept` entries are held.
    fn evict(&mut self, budget: usize, kept: usize) -> bool {
        let mut evicted = false;
        while self.resident > budget && self.entries.len() > kept {
            let oldest = *self
                .entries
                .iter()
                .min_by_key(|(_, (_, _, used))| *used)
                .map(|(id, _)| id)
                .expect("more entries than kept");
            let (_, bytes, _) = self.entries.remove(&oldest).expect("present");
            self.resident -= bytes;
            evicted = true;
        }
        evicted
    }

    /// Bytes held.
    pub fn resident(&self) -> usize {
        self.resident
    }

    /// Entries held.
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Bytes of decompressed layers a reader keeps by default.
pub const VALUE_BUDGET: usize = 1 << 30;

/// Bytes of win/draw/loss layers each table directory keeps for probes
/// inside the search (the `TablebaseCache` option; process-wide).
static WDL_BUDGET: AtomicUsize = AtomicUsize::new(DEFAULT_WDL_MB << 20);

/// The default of [`WDL_BUDGET`], in MiB.
pub const DEFAULT_WDL_MB: usize = 512;

/// Sets the bytes of win/draw/loss layers each table directory may keep
/// (0: no probes inside the search); layers beyond it are evicted as
/// others are loaded.
pub fn set_wdl_budget(bytes: usize) {
    WDL_BUDGET.store(bytes, Ordering::Relaxed);
}

pub fn wdl_budget() -> usize {
    WDL_BUDGET.load(Ordering::Relaxed)
}

/// Bytes the win/draw/loss of a layer of `slots` slots takes.
pub fn wdl_bytes(slots: u64) -> usize {
    (slots.div_ceil(32) * 8) as usize
}

/// The win/draw/loss layers of one table directory, shared by every
/// search thread.
#[derive(Default)]
pub struct WdlCache {
    /// Changes whenever a layer is added or evicted: readers then forget
    /// what they looked up.
    generation: AtomicU64,
    state: Mutex<WdlState>,
}

#[derive(Default)]
struct WdlState {
    layers: Lru<WdlBits>,
    /// Layers being loaded on a thread of their own.
    loading: Vec<u32>,
    /// Layers whose files could not be used: never tried again.
    unusable: Vec<u32>,
}

/// What a reader knows of one layer.
#[derive(Clone, Default)]
enum Local {
    #[default]
    Unknown,
    /// Not in memory (yet): probes in it miss.
    Absent,
    Present(Arc<WdlBits>),
}

/// One search thread's view of a [`WdlCache`]: the layers it has looked
/// up since the cache last changed.
#[derive(Clone, Default)]
pub struct WdlReader {
    generation: u64,
    local: Vec<Local>,
}

/// Reads a layer's win/draw/loss (`None`: its file is unusable).
pub type Loader = Box<dyn FnOnce() -> Option<WdlBits> + Send>;

/// How a layer missing from the cache is to be had.
pub enum Miss {
    /// Not at all for now (being loaded, unusable, or larger than the
    /// budget).
    Skip,
    /// Loaded on the calling thread (a small file).
    Inline,
    /// Loaded on a thread of its own; this probe misses.
    Background,
}

impl WdlCache {
    fn state(&self) -> MutexGuard<'_, WdlState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The win/draw/loss of `slot` of layer `id` (one of `layers`), as
    /// `reader` knows it, or after asking the cache. For a layer not in
    /// memory, `miss(budget)` says how to load it and with what loader
    /// (run on the calling thread, or on one of its own for
    /// [`Miss::Background`]; `None` from it marks the layer unusable).
    pub fn probe(
        self: &Arc<Self>,
        reader: &mut WdlReader,
        layers: usize,
        id: u32,
        slot: u64,
        miss: impl FnOnce(usize) -> (Miss, Loader),
    ) -> Option<Wdl> {
        let generation = self.generation.load(Ordering::Acquire);
        if reader.generation != generation || reader.local.len() != layers {
            reader.generation = generation;
            reader.local.clear();
            reader.local.resize(layers, Local::Unknown);
        }
        let local = &mut reader.local[id as usize];
        if let Local::Unknown = local {
            *local = self.fetch(id, miss);
        }
        match local {
            Local::Present(bits) => Some(bits.get(slot)),
            _ => None,
        }
    }

    /// Looks layer `id` up, loading it if `miss` says so.
    fn fetch(self: &Arc<Self>, id: u32, miss: impl FnOnce(usize) -> (Miss, Loader)) -> Local {
        let mut state = self.state();
        if let Some(bits) = state.layers.get(id) {
            return Local::Present(bits);
        }
        if state.loading.contains(&id) || state.unusable.contains(&id) {
            return Local::Absent;
        }
        let (how, load) = miss(wdl_budget());
        // One layer loads in the background at a time: a large one holds
        // its decompressed values (a 6 x 6 layer 2 GB) while it is turned
        // into win/draw/loss, and a search touches dozens at once. The
        // others are asked for again when it is in.
        let busy = matches!(how, Miss::Background) && !state.loading.is_empty();
        if matches!(how, Miss::Skip) || busy {
            return Local::Absent;
        }
        state.loading.push(id);
        drop(state);
        if let Miss::Inline = how {
            return match self.finish_load(id, load()) {
                Some(bits) => Local::Present(bits),
                None => Local::Absent,
            };
        }
        let cache = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("table layer load".into())
            .spawn(move || {
                cache.finish_load(id, load());
            });
        if spawned.is_err() {
            self.finish_load(id, None);
        }
        Local::Absent
    }

    /// Puts a loaded layer in (or marks it unusable) and tells the
    /// readers.
    fn finish_load(&self, id: u32, bits: Option<WdlBits>) -> Option<Arc<WdlBits>> {
        let mut state = self.state();
        state.loading.retain(|&l| l != id);
        let loaded = match bits {
            Some(bits) => {
                let bits = Arc::new(bits);
                let bytes = bits.bytes();
                // No layer larger than the budget is loaded: it holds.
                state
                    .layers
                    .insert(id, Arc::clone(&bits), bytes, wdl_budget(), 1);
                Some(bits)
            }
            None => {
                state.unusable.push(id);
                None
            }
        };
        self.generation.fetch_add(1, Ordering::Release);
        loaded
    }

    /// Bytes of layers held, and how many.
    pub fn resident(&self) -> (usize, usize) {
        let state = self.state();
        (state.layers.resident(), state.layers.len())
    }

    /// Whether any layer is being loaded.
    pub fn is_loading(&self) -> bool {
        !self.state().loading.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries the tests keep whatever their size.
    const KEPT: usize = 3;

    #[test]
    fn one_layer_at_a_time_loads_in_the_background() {
        use std::sync::atomic::AtomicBool;
        let cache = Arc::new(WdlCache::default());
        let values = crate::solver::Values::Narrow(vec![1, 2, 0]);
        let (release, wait) = crossbeam_channel::bounded::<()>(0);
        let mut reader = WdlReader::default();
        let first = {
            let values = values.clone();
            move |_| -> (Miss, Loader) {
                let load = move || {
                    let _ = wait.recv();
                    Some(WdlBits::from_values(&values))
                };
                (Miss::Background, Box::new(load))
            }
        };
        assert_eq!(cache.probe(&mut reader, 4, 1, 0, first), None);
        assert!(cache.is_loading());
        // A second layer is not started while the first loads.
        let started = Arc::new(AtomicBool::new(false));
        let second = |started: Arc<AtomicBool>, values: crate::solver::Values| {
            move |_| -> (Miss, Loader) {
                let load = move || {
                    started.store(true, Ordering::Relaxed);
                    Some(WdlBits::from_values(&values))
                };
                (Miss::Background, Box::new(load))
            }
        };
        let mut other = WdlReader::default();
        let probe = second(Arc::clone(&started), values.clone());
        assert_eq!(cache.probe(&mut other, 4, 2, 0, probe), None);
        release.send(()).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while cache.is_loading() {
            assert!(std::time::Instant::now() < deadline);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(!started.load(Ordering::Relaxed));
        assert_eq!(cache.resident().1, 1);
        // Once it is in, the second is asked for again and loads.
        let probe = second(Arc::clone(&started), values);
        assert_eq!(cache.probe(&mut other, 4, 2, 1, probe), None);
        while cache.is_loading() {
            assert!(std::time::Instant::now() < deadline);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(started.load(Ordering::Relaxed));
        assert_eq!(cache.resident().1, 2);
        assert_eq!(
            cache.probe(&mut other, 4, 2, 1, |_| unreachable!()),
            Some(Wdl::Loss)
        );
    }

    #[test]
    fn the_least_recently_used_go_first_and_three_always_stay() {
        let mut lru: Lru<u8> = Lru::default();
        for id in 0..4 {
            lru.insert(id, Arc::new(0), 10, 35, KEPT);
        }
        // 40 bytes over a budget of 35: the oldest, 0, went.
        assert_eq!(lru.len(), 3);
        assert!(lru.get(0).is_none());
        // Touching 1 makes 2 the oldest.
        assert!(lru.get(1).is_some());
        lru.insert(4, Arc::new(0), 10, 35, KEPT);
        assert!(lru.get(2).is_none());
        assert!(lru.get(1).is_some() && lru.get(3).is_some() && lru.get(4).is_some());
        assert_eq!(lru.resident(), 30);
        // Huge entries: three stay whatever the budget.
        for id in 10..15 {
            lru.insert(id, Arc::new(0), 1000, 35, KEPT);
        }
        assert_eq!(lru.len(), 3);
        assert_eq!(lru.resident(), 3000);
        // Keeping one: only the newest stays.
        lru.insert(20, Arc::new(0), 10, 35, 1);
        assert_eq!(lru.len(), 1);
        assert!(lru.get(20).is_some());
    }

    #[test]
    fn room_is_made_before_a_large_entry_comes_in() {
        let mut lru: Lru<u8> = Lru::default();
        for id in 0..3 {
            lru.insert(id, Arc::new(0), 1000, 35, KEPT);
        }
        // Before a fourth huge entry is read, the oldest goes: never
        // four held at once.
        assert!(lru.make_room(1000, 35, KEPT));
        assert_eq!((lru.len(), lru.resident()), (2, 2000));
        assert!(lru.get(0).is_none());
        lru.insert(3, Arc::new(0), 1000, 35, KEPT);
        assert_eq!((lru.len(), lru.resident()), (3, 3000));
        // Small entries that fit beside the new one stay.
        let mut small: Lru<u8> = Lru::default();
        small.insert(0, Arc::new(0), 10, 35, KEPT);
        assert!(!small.make_room(10, 35, KEPT));
        assert_eq!(small.len(), 1);
    }
}

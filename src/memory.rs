//! Large zeroed buffers of words on huge pages.
//!
//! The solver's bitmaps and value layers are read and written at random
//! across hundreds of megabytes: with 4 KiB pages nearly every access
//! misses the TLB. Buffers of at least [`HUGE_BYTES`] are mapped
//! anonymously (zeroed lazily by the system) and advised to use
//! transparent huge pages, where the system offers them; smaller ones are
//! plain vectors.

use std::ops::{Deref, DerefMut};

use memmap2::{Advice, MmapMut};

/// Size from which a buffer is mapped on huge pages: one huge page.
const HUGE_BYTES: usize = 2 << 20;

/// A zeroed buffer of `u64` words.
pub enum Words {
    Small(Vec<u64>),
    Mapped(MmapMut),
}

impl Words {
    /// `len` zero words.
    ///
    /// # Panics
    /// When the system refuses the memory (as a vector's allocation
    /// would abort).
    pub fn zeroed(len: usize) -> Words {
        let bytes = len * size_of::<u64>();
        if bytes < HUGE_BYTES {
            return Words::Small(vec![0; len]);
        }
        let map = MmapMut::map_anon(bytes)
            .unwrap_or_else(|e| panic!("cannot map {bytes} bytes of memory: {e}"));
        // Only advice: without huge pages the buffer works as well, slower.
        #[cfg(target_os = "linux")]
        let _ = map.advise(Advice::HugePage);
        Words::Mapped(map)
    }
}

impl From<Vec<u64>> for Words {
    fn from(words: Vec<u64>) -> Words {
        Words::Small(words)
    }
}

impl Deref for Words {
    type Target = [u64];

    fn deref(&self) -> &[u64] {
        match self {
            Words::Small(words) => words,
            Words::Mapped(map) => bytemuck::cast_slice(map),
        }
    }
}

impl DerefMut for Words {
    fn deref_mut(&mut self) -> &mut [u64] {
        match self {
            Words::Small(words) => words,
            Words::Mapped(map) => bytemuck::cast_slice_mut(map),
        }
    }
}

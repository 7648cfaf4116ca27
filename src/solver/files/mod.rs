//! The table files: how a solved layer is stored on disk and read back.
//!
//! - [`format`](mod@format): a directory's manifest and lock, and the
//!   layer files (header, block index, writer and reader); its doc lists
//!   every byte;
//! - [`codec`]: the block code of runs (canonical Huffman);
//! - [`tiles`]: the tile code of win/draw/loss files (a range coder
//!   whose odds depend on a position's neighbours);
//! - [`store`]: [`Tables`](store::Tables), the reader that probes a
//!   position at a time, from files or from layers solved in memory;
//! - [`cache`]: decoded blocks of win/draw/loss files, for the search's
//!   probes;
//! - [`legacy`]: the old format (version 1), read only to convert it.

pub(super) mod cache;
pub(super) mod codec;
pub(super) mod format;
pub(super) mod legacy;
pub(super) mod store;
pub(super) mod tiles;

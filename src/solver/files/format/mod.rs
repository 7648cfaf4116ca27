//! Table files (directories of format 3, and 2 read as well; layer files
//! of format 4 in a directory of format 3, of format 3 or 2 in one of
//! format 2): a directory's manifest, and one file a layer for each of its
//! win/draw/loss (`.wdl`), distance to progress
//! (`.dtz`) and distance to the end (`.dte`), each probed in place a block
//! at a time ([`LayerFile`]) or written whole ([`write_file`]).
//!
//! # Manifest
//! `dodgem-tables.txt`: the lines `dodgem layered tables`, `format 3`,
//! `size N`, `rules R`, `max-cars K` and `set S`, where `S` is the table
//! set's identity, 16 hexadecimal digits drawn at random when the
//! directory is prepared ([`prepare_dir`]); every layer file of the
//! directory repeats it, and every check of the file is seeded with it.
//! A directory of format 2 has no `set` line.
//!
//! # Layer file
//! All integers little-endian.
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `DODGEMLT` |
//! | 8..12 | layer format version: 4 (3 and 2, read as well: 3 is 4 without bytes 80..96, its checks not seeded; 2 is 3 with bytes 76..80 zero and unchecked, the index of 12-byte entries and the odds not compressed) |
//! | 12 | board size |
//! | 13 | rules: 0 `textbook`, 1 `classic` |
//! | 14 | most cars a side on the board |
//! | 15 | what the file holds: 0 distances to progress, 1 distances to the end, 2 win/draw/loss |
//! | 16..18, 18..20 | the layer: Black's progress, White's progress |
//! | 20 | log2 of the slots a block holds (at most) |
//! | 21 | the block code: 0 runs with canonical Huffman codes ([`codec`](super::codec)); 1 tiles of rows with a range coder ([`tiles`](super::tiles), `.wdl` files only) |
//! | 22 | runs: the code's contexts, 4 in a `.wdl` file (a run's code depends on the value before it), 1 in the others; tiles: the neighbours a context takes |
//! | 23 | runs: zero; tiles: log2 of the columns a tile has at most |
//! | 24..32 | slots (positions and non-positions of the layer's index) |
//! | 32..40, 40..48, 48..56 | wins, draws, losses (Black to move) |
//! | 56..60 | longest distance (of the file's metric; the `.wdl` file repeats that of the layer's `.dtz` file, or of its `.dte` file in tables of the one pass) |
//! | 60..64 | values: 3 in a `.wdl` file, the longest distance + 1 in the others |
//! | 64..72 | bytes of block data |
//! | 72..76 | CRC-32 of bytes 8..72, of bytes 76..96 (76..80 in format 3) and of the code's table as stored |
//! | 76 | the block index: 0 entries of 12 bytes, 1 groups of 6-byte entries |
//! | 77..80 | bytes of the code's table as stored |
//! | 80..88 | format 4: the table set (the manifest's `set`) |
//! | 88..92 | format 4: CRC-32 of the block index, started from the file's identity (below) |
//! | 92..96 | format 4: zero |
//! | 96.. (80.. before format 4) | the code's table. Runs: code lengths, a byte for each symbol, contexts x values x classes of them (see [`codec`](super::codec)). Tiles: the odds each context starts from (see [`tiles::Model`](super::tiles::Model)), as one zstd frame (most contexts never occur, so the table shrinks about ninefold) |
//! | then | the block index, either for each block the end of its data (8 bytes, from the data's start) and its CRC-32 (4 bytes); or, for each group of 64 blocks, the start of the group's data (8 bytes, from the data's start) then for each of its blocks the length of its data (2 bytes) and its CRC-32 (4 bytes), where no block is longer than 65,535 bytes |
//! | then | the blocks' data |
//!
//! With runs, block `i` holds slots `i * block slots` onwards; with tiles,
//! block `i` is tile `i` of the layer's [`Tiling`](super::tiles::Tiling).
//!
//! # What is checked
//! In format 4 the checks form a chain from the header down: the header's
//! CRC covers the table set, the index's CRC and the code; the index's
//! CRC covers every block's length and CRC; and each CRC, of the index
//! and of block `i`, starts not from zero but from a value drawn from the
//! file's identity (table set, board, rule, car limit, what the file
//! holds, its layer, its format and, for a block, `i`). So a zeroed
//! index, a block of another file (or another place in this one) and a
//! same-named file of another table set all fail. A block of no bytes is
//! allowed only for a tile without positions (runs always take a byte;
//! the writer gives a tile with positions that codes in no bytes one zero
//! byte, which decodes the same).
//! At open the whole index is read: its CRC is checked (format 4), and in
//! every format its entries must follow one another without gaps to the
//! data's end; each block is checked again when it is read. Files of
//! formats 3 and 2 have unseeded block CRCs and no index CRC: a zeroed
//! index is still caught at open (the entries do not reach the data's
//! end; at probe time an empty block of runs is refused, an empty tile
//! cannot be, as their writer left tiles empty), but a same-named file
//! of another set written over one is not.
//!
//! A `.wdl` file stores 0 draw, 1 win, 2 loss; a distance file the
//! distance of each won or lost position, and anything for a draw. A
//! slot that is no position (a black and a white car on one square) holds
//! whatever codes shortest, in every file.

mod directory;
mod error;
mod header;
mod reader;
mod stored;
#[cfg(test)]
mod tests;
mod values;
mod writer;

pub use directory::{
    Content, DirLock, Kind, Manifest, Metric, layer_path, lock_dir, open_regular, prepare_dir,
    read_directory, read_kind, read_manifest, write_durably_with,
};
pub use error::{CONVERT_HINT, LayerError};
pub use header::{BlockCode, Header, Index};
pub use reader::LayerFile;
pub use stored::{code_of, wdl_value};
pub use values::{
    open_required, read_header, read_layer, read_values, read_values_header, read_values_on,
    read_wdl, write_layer, write_metric, write_values,
};
pub use writer::{is_set, positions_of, write_file};

pub(super) const MAGIC: &[u8; 8] = b"DODGEMLT";
/// The directory format written (its manifest and file names): its
/// manifest names its table set, and its layer files are of
/// [`LAYER_VERSION`].
pub const VERSION: u32 = 3;
/// The directory format before table sets, still read (its layer files
/// of format 3 or 2); converted with `--convert`.
pub const UNBOUND_VERSION: u32 = 2;
/// The layer file format written.
pub const LAYER_VERSION: u32 = 4;
/// The layer file formats read: 3 is 4 without the table set and the
/// seeded checks, 2 is 3 without the grouped index.
pub(super) const LAYER_VERSIONS: std::ops::RangeInclusive<u32> = 2..=LAYER_VERSION;
/// The format before blocks: one compressed frame a layer, read whole
/// (its directories and layer files both).
pub(super) const OLD_VERSION: u32 = 1;
/// Bytes of a layer file's header in formats 2 and 3.
pub(super) const HEADER_LEN: u64 = 80;
/// Bytes of a layer file's header in format 4: the table set, the
/// index's CRC and four zero bytes after the rest.
pub(super) const BOUND_HEADER_LEN: u64 = 96;
/// The lock file a writer holds in a directory ([`lock_dir`]).
pub const LOCK_FILE: &str = ".dodgem-lock";
/// The block codes: runs ([`codec`](super::codec)) and tiles ([`tiles`](super::tiles)).
pub(super) const RUNS_CODE: u8 = 0;
pub(super) const TILES_CODE: u8 = 1;
/// The manifest's name in a table directory.
pub const MANIFEST: &str = "dodgem-tables.txt";
/// Slots a block of distances holds, by default: the smallest total at a
/// probe cost of a few microseconds (measured in docs/tables.md).
pub const BLOCK_SLOTS: u64 = 1 << 14;
/// Slots a block (a tile) of win/draw/loss holds, by default: twice a
/// block of distances, for files 3% smaller at twice the decoding a probe
/// (measured in docs/tables.md).
pub const WDL_BLOCK_SLOTS: u64 = 1 << 15;
/// Block sizes a file may have.
pub(super) const BLOCK_BITS: std::ops::RangeInclusive<u8> = 6..=24;
/// Columns a tile has at most, by default (log2): wide enough for a run
/// to show, short enough for a tile to have rows above rows.
pub const TILE_WIDTH_BITS: u8 = 10;

//! An open layer file ([`LayerFile`]): its index checked at open, then
//! probed a block at a time with positioned reads, each block checked and
//! decoded (runs or tiles) when it is read.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::solver::files::codec::{BadBlock, Code};
use crate::solver::files::tiles::{Model, Tiling};
use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::WdlBits;

use super::directory::{Content, Kind, Manifest, open_regular, read_directory};
use super::error::LayerError;
use super::header::{
    BlockCode, FULL_ENTRY, GROUP_BLOCKS, GROUP_START, GROUPED_ENTRY, Header, INDEX_PART, Index,
    mix, unpack_table,
};
use super::stored::wdl_of;
use super::{BOUND_HEADER_LEN, LAYER_VERSION};

/// Where a block's bytes are and their CRC-32.
pub(super) struct Entry {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) crc: u32,
}

/// One layer file, open: probed a block at a time with positioned reads.
/// Once open, the file is read through this handle only, so what later
/// stands at its path (another file, a FIFO) does not matter.
pub struct LayerFile {
    path: PathBuf,
    file: File,
    header: Header,
    layout: Layout,
    /// The header's CRC, and a CRC-32 of the index's bytes (the seeded
    /// one the header records, in format 4): what [`LayerFile::fingerprint`]
    /// is made of.
    header_crc: u32,
    index_digest: u32,
}

/// How an open file's blocks decode.
enum Layout {
    Runs(Code),
    Tiles {
        tiling: Tiling,
        model: Model,
        /// The board's sets, for which slots of a tile are positions.
        shape: Arc<Shape>,
    },
}

impl LayerFile {
    /// Opens the `content` file of `layer` in `dir` and checks its header
    /// and code: `Ok(None)` when there is none.
    ///
    /// # Errors
    /// A file that is not a regular file, or is damaged, truncated or of
    /// another kind or layer.
    pub fn open(
        dir: &Path,
        kind: Kind,
        content: Content,
        layer: &Layer,
    ) -> Result<Option<LayerFile>, LayerError> {
        LayerFile::open_in(dir, &read_directory(dir)?, kind, content, layer)
    }

    /// [`LayerFile::open`] in a directory whose manifest says `manifest`:
    /// the file must be of the directory's format and, from format 3, of
    /// its table set. The whole block index is read: its CRC checked
    /// (format 4), its entries checked to follow one another to the end
    /// of the data.
    ///
    /// # Errors
    /// As [`LayerFile::open`].
    pub fn open_in(
        dir: &Path,
        manifest: &Manifest,
        kind: Kind,
        content: Content,
        layer: &Layer,
    ) -> Result<Option<LayerFile>, LayerError> {
        let path = content.path(dir, layer.black, layer.white);
        let Some(file) = open_regular(&path)? else {
            return Ok(None);
        };
        let io_error = |e| LayerError::Io(path.clone(), e);
        let length = file.metadata().map_err(io_error)?.len();
        let mut bytes = [0u8; BOUND_HEADER_LEN as usize];
        let read = read_at_most(&file, &mut bytes, 0).map_err(io_error)?;
        let (mut header, crc) = Header::parse(&path, &bytes[..read])?;
        let tiling = match header.code {
            BlockCode::Tiles { width_bits, .. } => {
                let tiling = Tiling::new(layer, header.block_slots, 1 << width_bits);
                header.blocks = tiling.tiles();
                Some(tiling)
            }
            BlockCode::Runs { .. } => None,
        };
        header.check(&path, kind, content, layer)?;
        let foreign = |why: String| Err(LayerError::Foreign(path.clone(), why));
        match manifest.set {
            Some(set) if !header.is_bound() => {
                return foreign(format!(
                    "is a layer file of format {}, in a directory of format {} (table set \
                     {set:016x}), whose files are of format {LAYER_VERSION}: a file of other tables",
                    header.version, manifest.version
                ));
            }
            Some(set) if header.set != set => {
                return foreign(format!(
                    "belongs to table set {:016x}, not to this directory's ({set:016x}): a \
                     file of other tables (a same-named file of another solve)",
                    header.set
                ));
            }
            None if header.is_bound() => {
                return foreign(format!(
                    "is a layer file of format {} (table set {:016x}) in a directory of format {}: \
                     a file of other tables",
                    header.version, header.set, manifest.version
                ));
            }
            _ => {}
        }
        if length != header.file_length() {
            return Err(LayerError::Truncated(path));
        }
        let mut table = vec![0u8; header.table as usize];
        file.read_exact_at(&mut table, header.header_len())
            .map_err(io_error)?;
        if header.checksum(&table) != crc {
            return Err(LayerError::Checksum(path));
        }
        let bad = |BadBlock(why)| LayerError::Corrupt(path.clone(), why);
        if header.packed_table() {
            table = unpack_table(&table, header.code_bytes()).map_err(bad)?;
        }
        let layout = match (header.code, tiling) {
            (BlockCode::Tiles { neighbours, .. }, Some(tiling)) => Layout::Tiles {
                tiling,
                model: Model::from_bytes(usize::from(neighbours), &table).map_err(bad)?,
                shape: Shape::shared(kind.size, kind.max_cars)
                    .ok_or_else(|| bad(BadBlock(format!("no tables of {kind:?}"))))?,
            },
            (BlockCode::Runs { contexts }, _) => {
                Layout::Runs(Code::from_lengths(table, header.classes(), contexts).map_err(bad)?)
            }
            (BlockCode::Tiles { .. }, None) => unreachable!("tiles have a tiling"),
        };
        let mut opened = LayerFile {
            path,
            file,
            header,
            layout,
            header_crc: crc,
            index_digest: 0,
        };
        opened.index_digest = opened.check_index()?;
        Ok(Some(opened))
    }

    /// Reads the whole block index: checks that its entries follow one
    /// another from the data's start to its end and, in format 4, its
    /// CRC. Returns a CRC-32 of its bytes (the seeded one in format 4).
    fn check_index(&self) -> Result<u32, LayerError> {
        const CHUNK_BYTES: u64 = 1 << 20;
        const CHUNK_BLOCKS: u64 = 1 << 16;
        let h = &self.header;
        let (at, length) = (h.index_at(), h.index.bytes(h.blocks()));
        let mut buffer = vec![0u8; length.min(CHUNK_BYTES) as usize];
        let mut read = 0;
        let mut hasher = crc32fast::Hasher::new_with_initial(h.seed(INDEX_PART));
        while read < length {
            let n = (length - read).min(CHUNK_BYTES) as usize;
            self.file
                .read_exact_at(&mut buffer[..n], at + read)
                .map_err(|e| LayerError::Io(self.path.clone(), e))?;
            hasher.update(&buffer[..n]);
            read += n as u64;
        }
        let digest = hasher.finalize();
        if h.is_bound() && digest != h.index_crc {
            return Err(self.corrupt(
                "its block index fails its checksum (the index is damaged, or not this file's)"
                    .into(),
            ));
        }
        let mut end = 0;
        for first in (0..h.blocks()).step_by(CHUNK_BLOCKS as usize) {
            let entries = self.entries(first, CHUNK_BLOCKS.min(h.blocks() - first))?;
            if entries[0].start != end {
                return Err(self.corrupt(format!(
                    "block {first}'s index entry points outside the file"
                )));
            }
            end = entries[entries.len() - 1].end;
        }
        if end != h.data {
            return Err(self.corrupt(format!(
                "its block index ends at byte {end} of the {} bytes of block data (the index is \
                 damaged)",
                h.data
            )));
        }
        Ok(digest)
    }

    /// What identifies the file as it was opened: its header's CRC, its
    /// index's and its length, mixed (for journals that record what they
    /// checked).
    pub fn fingerprint(&self) -> u64 {
        let h = &self.header;
        mix(
            mix(u64::from(self.header_crc) << 32 | u64::from(self.index_digest))
                ^ h.file_length()
                ^ u64::from(h.version) << 56,
        )
    }

    /// Reads every block of the file and checks it against the index
    /// (its CRC, its length): what a resumed run checks of a file it
    /// keeps.
    ///
    /// # Errors
    /// The first damaged block, or a read that fails.
    pub fn check_blocks(&self) -> Result<(), LayerError> {
        self.each_block(0, self.header.blocks(), |_, _| Ok(()))
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn corrupt(&self, why: String) -> LayerError {
        LayerError::Corrupt(self.path.clone(), why)
    }

    /// The index entries of blocks `first..first + count`, each checked
    /// to lie inside the data and to be no longer than its block can need.
    pub(super) fn entries(&self, first: u64, count: u64) -> Result<Vec<Entry>, LayerError> {
        let h = &self.header;
        if count == 0 {
            return Ok(Vec::new());
        }
        let read = |from: u64, length: u64| {
            let mut bytes = vec![0u8; length as usize];
            self.file
                .read_exact_at(&mut bytes, h.index_at() + from)
                .map(|()| bytes)
                .map_err(|e| LayerError::Io(self.path.clone(), e))
        };
        let u64_at =
            |bytes: &[u8], i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
        let u32_at =
            |bytes: &[u8], i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        // Each block of `first..first + count` as (start, end, crc), its
        // start and end as the index says.
        let mut found = Vec::with_capacity(count as usize);
        match h.index {
            Index::Full => {
                // The entry before `first` gives its start.
                let from = first.saturating_sub(1);
                let bytes = read(from * FULL_ENTRY, (first + count - from) * FULL_ENTRY)?;
                let entry = |i: u64| (i * FULL_ENTRY) as usize;
                let mut start = if first == 0 { 0 } else { u64_at(&bytes, 0) };
                for block in first..first + count {
                    let at = entry(block - from);
                    let end = u64_at(&bytes, at);
                    found.push((start, end, u32_at(&bytes, at + 8)));
                    start = end;
                }
            }
            Index::Grouped => {
                let group_bytes = GROUP_START + GROUP_BLOCKS * GROUPED_ENTRY;
                let (from, to) = (first / GROUP_BLOCKS, (first + count - 1) / GROUP_BLOCKS);
                let in_last = (h.blocks() - to * GROUP_BLOCKS).min(GROUP_BLOCKS);
                let last = to * group_bytes + GROUP_START + in_last * GROUPED_ENTRY;
                let bytes = read(from * group_bytes, last - from * group_bytes)?;
                let mut start = 0;
                for block in from * GROUP_BLOCKS..first + count {
                    let group = ((block / GROUP_BLOCKS - from) * group_bytes) as usize;
                    let within = block % GROUP_BLOCKS;
                    if within == 0 {
                        start = u64_at(&bytes, group);
                    }
                    let at = group + (GROUP_START + within * GROUPED_ENTRY) as usize;
                    let length = u64::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
                    let end = start.saturating_add(length);
                    if block >= first {
                        found.push((start, end, u32_at(&bytes, at + 2)));
                    }
                    start = end;
                }
            }
        }
        // Blocks follow each other without gaps: a grouped index's group
        // start must be where the group before ended.
        let mut previous = found.first().map_or(0, |&(start, _, _)| start);
        found
            .into_iter()
            .zip(first..)
            .map(|((start, end, crc), block)| {
                let most = h.block_bytes_bound(self.block_len(block));
                if start != previous || end < start || end > h.data || end - start > most {
                    return Err(self.corrupt(format!(
                        "block {block}'s index entry points outside the file"
                    )));
                }
                if end == start && self.holds_positions(block) {
                    return Err(self.corrupt(format!(
                        "{} has no bytes but holds positions (the index is damaged)",
                        self.describe(block)
                    )));
                }
                previous = end;
                Ok(Entry { start, end, crc })
            })
            .collect()
    }

    /// Whether block `block` may not be empty because it holds a
    /// position: a block of runs always codes at least one run, so it
    /// counts as holding one; a tile of a file before format 4 may have
    /// been coded in no bytes, so it never counts.
    fn holds_positions(&self, block: u64) -> bool {
        let Layout::Tiles { tiling, shape, .. } = &self.layout else {
            return true;
        };
        if !self.header.is_bound() {
            return false;
        }
        let tile = tiling.tile(block);
        let blacks = &shape.black_sets(&tile.block)[tile.row as usize..][..tile.rows];
        let whites = &shape.white_sets(&tile.block)[tile.column as usize..][..tile.columns];
        blacks.iter().any(|&b| whites.iter().any(|&w| b & w == 0))
    }

    /// Slots of block `block`.
    fn block_len(&self, block: u64) -> u64 {
        let h = &self.header;
        match &self.layout {
            Layout::Runs(_) => (h.slots - block * h.block_slots).min(h.block_slots),
            Layout::Tiles { tiling, .. } => tiling.tile(block).slots() as u64,
        }
    }

    /// Which slots block `block` holds, for messages.
    fn describe(&self, block: u64) -> String {
        match &self.layout {
            Layout::Runs(_) => {
                let first = block * self.header.block_slots;
                format!(
                    "block {block} (slots {first} to {})",
                    first + self.block_len(block) - 1
                )
            }
            Layout::Tiles { tiling, .. } => {
                let tile = tiling.tile(block);
                format!(
                    "block {block} (rows {} to {} and columns {} to {} of the positions \
                     with {} black and {} white cars, from slot {})",
                    tile.row,
                    tile.row + tile.rows as u64 - 1,
                    tile.column,
                    tile.column + tile.columns as u64 - 1,
                    tile.block.black_cars,
                    tile.block.white_cars,
                    tile.slot(0, 0)
                )
            }
        }
    }

    /// The bytes of block `block`, checked against their CRC.
    fn block(&self, block: u64, bytes: &mut Vec<u8>) -> Result<(), LayerError> {
        let entry = self.entries(block, 1)?.remove(0);
        bytes.resize((entry.end - entry.start) as usize, 0);
        self.file
            .read_exact_at(bytes, self.header.data_at() + entry.start)
            .map_err(|e| LayerError::Io(self.path.clone(), e))?;
        if self.header.block_crc(block, bytes) != entry.crc {
            return Err(self.corrupt(format!("{} fails its checksum", self.describe(block))));
        }
        Ok(())
    }

    /// The values of tile `block`, row by row, from its checked bytes.
    fn decode_tile(&self, block: u64, bytes: &[u8], values: &mut Vec<u8>) {
        let Layout::Tiles {
            tiling,
            model,
            shape,
        } = &self.layout
        else {
            unreachable!("a tile of a file of runs");
        };
        let tile = tiling.tile(block);
        let blacks = &shape.black_sets(&tile.block)[tile.row as usize..][..tile.rows];
        let whites = &shape.white_sets(&tile.block)[tile.column as usize..][..tile.columns];
        model.decode(
            tile.rows,
            tile.columns,
            |r, c| blacks[r] & whites[c] == 0,
            bytes,
            values,
        );
    }

    /// The block holding `slot`, and the slot's place in it.
    pub fn block_of(&self, slot: u64) -> (u64, u64) {
        match &self.layout {
            Layout::Runs(_) => (
                slot / self.header.block_slots,
                slot % self.header.block_slots,
            ),
            Layout::Tiles { tiling, .. } => {
                let (tile, place) = tiling.locate(slot);
                (tile, place as u64)
            }
        }
    }

    /// The stored value of `slot`: one block read and decoded.
    ///
    /// # Errors
    /// A damaged block, or a read that fails.
    pub fn value(&self, slot: u64) -> Result<u16, LayerError> {
        if slot >= self.header.slots {
            return Err(self.corrupt(format!("no slot {slot}")));
        }
        let (block, place) = self.block_of(slot);
        let mut bytes = Vec::new();
        self.block(block, &mut bytes)?;
        match &self.layout {
            Layout::Runs(code) => code
                .value_at(&bytes, self.block_len(block), place)
                .map_err(|BadBlock(why)| self.corrupt(format!("block {block}: {why}"))),
            Layout::Tiles { .. } => {
                let mut values = Vec::new();
                self.decode_tile(block, &bytes, &mut values);
                Ok(u16::from(values[place as usize]))
            }
        }
    }

    /// The win/draw/loss of every slot of block `block` in its order (a
    /// `.wdl` file's), for a reader that keeps blocks decoded.
    ///
    /// # Errors
    /// As [`LayerFile::value`].
    pub fn decode_wdl(&self, block: u64) -> Result<WdlBits, LayerError> {
        let mut bytes = Vec::new();
        self.block(block, &mut bytes)?;
        let slots = self.block_len(block);
        let mut bits = WdlBits::draws(slots);
        match &self.layout {
            Layout::Runs(code) => {
                let mut at = 0;
                code.decode_block(&bytes, slots, |value, length| {
                    bits.set_run(at, length, wdl_of(value));
                    at += length;
                })
                .map_err(|BadBlock(why)| self.corrupt(format!("block {block}: {why}")))?;
            }
            Layout::Tiles { .. } => {
                let mut values = Vec::new();
                self.decode_tile(block, &bytes, &mut values);
                for (place, &value) in values.iter().enumerate() {
                    if value != 0 {
                        bits.set_run(place as u64, 1, wdl_of(u16::from(value)));
                    }
                }
            }
        }
        Ok(bits)
    }

    /// Every run of slots `first..end` in slot order (`visit(first slot,
    /// value, length)`), decoded from the blocks that hold them, every
    /// block's checksum checked.
    ///
    /// # Errors
    /// The first damaged block, or a read that fails.
    pub fn runs_between(
        &self,
        first: u64,
        end: u64,
        mut visit: impl FnMut(u64, u16, u64),
    ) -> Result<(), LayerError> {
        let end = end.min(self.header.slots);
        if first >= end {
            return Ok(());
        }
        match &self.layout {
            Layout::Runs(code) => {
                let block_slots = self.header.block_slots;
                let (from, to) = (first / block_slots, (end - 1) / block_slots + 1);
                self.each_block(from, to, |block, bytes| {
                    let mut at = block * block_slots;
                    code.decode_block(bytes, self.block_len(block), |value, length| {
                        let (start, stop) = (at.max(first), (at + length).min(end));
                        if start < stop {
                            visit(start, value, stop - start);
                        }
                        at += length;
                    })
                    .map_err(|BadBlock(why)| self.corrupt(format!("block {block}: {why}")))
                })
            }
            Layout::Tiles { tiling, .. } => {
                // A band of tiles at a time: whole rows of one block.
                let mut at = first;
                let mut values = Vec::new();
                let mut band = Vec::new();
                while at < end {
                    let (from, across) = tiling.band_of(at);
                    let top = tiling.tile(from);
                    let width = top.block.white_sets as usize;
                    band.clear();
                    band.resize(top.rows * width, 0u8);
                    self.each_block(from, from + across, |block, bytes| {
                        let tile = tiling.tile(block);
                        self.decode_tile(block, bytes, &mut values);
                        for (r, row) in values.chunks_exact(tile.columns).enumerate() {
                            let start = r * width + tile.column as usize;
                            band[start..start + tile.columns].copy_from_slice(row);
                        }
                        Ok(())
                    })?;
                    let band_first = top.slot(0, 0) - top.column;
                    let band_end = band_first + band.len() as u64;
                    let (start, stop) = (at.max(band_first), band_end.min(end));
                    let mut slot = start;
                    for run in band[(start - band_first) as usize..(stop - band_first) as usize]
                        .chunk_by(|a, b| a == b)
                    {
                        visit(slot, u16::from(run[0]), run.len() as u64);
                        slot += run.len() as u64;
                    }
                    at = band_end;
                }
                Ok(())
            }
        }
    }

    /// Every run of the file in slot order (`visit(first slot, value,
    /// length)`); every block's checksum is checked.
    ///
    /// # Errors
    /// The first damaged block, or a read that fails.
    pub fn each_run(&self, visit: impl FnMut(u64, u16, u64)) -> Result<(), LayerError> {
        self.runs_between(0, self.header.slots, visit)
    }

    /// The checked bytes of blocks `from..to` in order (`visit(block,
    /// bytes)`), read a few megabytes at a time.
    fn each_block(
        &self,
        from: u64,
        to: u64,
        mut visit: impl FnMut(u64, &[u8]) -> Result<(), LayerError>,
    ) -> Result<(), LayerError> {
        const CHUNK_BLOCKS: u64 = 1 << 10;
        let mut bytes = Vec::new();
        for first in (from..to).step_by(CHUNK_BLOCKS as usize) {
            let count = CHUNK_BLOCKS.min(to - first);
            let entries = self.entries(first, count)?;
            let (start, end) = (entries[0].start, entries[entries.len() - 1].end);
            bytes.resize((end - start) as usize, 0);
            self.file
                .read_exact_at(&mut bytes, self.header.data_at() + start)
                .map_err(|e| LayerError::Io(self.path.clone(), e))?;
            for (i, entry) in entries.iter().enumerate() {
                let block = first + i as u64;
                let data = &bytes[(entry.start - start) as usize..(entry.end - start) as usize];
                if self.header.block_crc(block, data) != entry.crc {
                    return Err(
                        self.corrupt(format!("{} fails its checksum", self.describe(block)))
                    );
                }
                visit(block, data)?;
            }
        }
        Ok(())
    }
}

/// Reads up to `bytes.len()` bytes at `offset` (fewer at the end of the
/// file).
fn read_at_most(file: &File, bytes: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut read = 0;
    while read < bytes.len() {
        match file.read_at(&mut bytes[read..], offset + read as u64) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(read)
}

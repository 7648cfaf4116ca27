//! The header of a layer file ([`Header`]): its fields, its checks and
//! the seeds of its CRCs, where its parts lie; the block index's forms
//! ([`Index`]) and the block codes ([`BlockCode`]); and the code's table as
//! stored (compressed with zstd).

use std::path::Path;

use crate::board::Rules;
use crate::solver::files::codec::{self, BadBlock};
use crate::solver::files::tiles::{self, Model};
use crate::solver::index::layers::Layer;
use crate::solver::index::value::Tally;

use super::directory::{Content, Kind};
use super::error::LayerError;
use super::stored::contexts_of;
use super::{
    BLOCK_BITS, BOUND_HEADER_LEN, HEADER_LEN, LAYER_VERSIONS, MAGIC, OLD_VERSION, RUNS_CODE,
    TILES_CODE,
};

/// What the header of a layer file says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The layer format version: [`LAYER_VERSION`](super::LAYER_VERSION) in a file written.
    pub version: u32,
    pub kind: Kind,
    pub content: Content,
    pub black: u32,
    pub white: u32,
    pub slots: u64,
    pub block_slots: u64,
    pub tally: Tally,
    /// The values the code has: 3 for win/draw/loss, the longest
    /// distance + 1 for distances.
    pub values: u32,
    /// How the blocks are coded.
    pub code: BlockCode,
    /// Blocks: of `block_slots` slots each with runs; the layer's tiles
    /// with tiles (known once the layer is).
    pub blocks: u64,
    /// Bytes of block data.
    pub data: u64,
    /// How the block index is laid out.
    pub index: Index,
    /// Bytes of the code's table as the file stores it.
    pub table: u64,
    /// The table set the file belongs to (format 4; 0 before).
    pub set: u64,
    /// The CRC-32 of the block index, seeded with the file's identity
    /// (format 4; 0 before).
    pub index_crc: u32,
}

/// How a file's block index is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index {
    /// Each block's end (8 bytes, from the data's start) and CRC-32 (4
    /// bytes).
    Full,
    /// Groups of [`GROUP_BLOCKS`] blocks: the group's start (8 bytes), then
    /// each block's length (2 bytes, so a block of at most 65,535) and
    /// CRC-32 (4 bytes). Half the bytes of [`Index::Full`].
    Grouped,
}

/// Blocks a group of a grouped index holds.
pub(super) const GROUP_BLOCKS: u64 = 64;
/// Bytes of a block's entry in a grouped index, and of a group's start.
pub(super) const GROUPED_ENTRY: u64 = 6;
pub(super) const GROUP_START: u64 = 8;
/// Bytes of a block's entry in a full index.
pub(super) const FULL_ENTRY: u64 = 12;

impl Index {
    /// Bytes of the index of `blocks` blocks.
    pub fn bytes(self, blocks: u64) -> u64 {
        match self {
            Index::Full => blocks * FULL_ENTRY,
            Index::Grouped => blocks.div_ceil(GROUP_BLOCKS) * GROUP_START + blocks * GROUPED_ENTRY,
        }
    }

    /// The header's byte for it (format 3).
    pub(super) fn code(self) -> u8 {
        match self {
            Index::Full => 0,
            Index::Grouped => 1,
        }
    }

    /// The smaller index that blocks ending at `ends` (each from the
    /// data's start) can have.
    pub(super) fn for_ends(ends: &[u64]) -> Index {
        let mut start = 0;
        for &end in ends {
            if end - start > u64::from(u16::MAX) {
                return Index::Full;
            }
            start = end;
        }
        Index::Grouped
    }

    /// The index of blocks ending at `ends` (each from the data's start)
    /// with the CRC-32 `crcs` of their data.
    pub(super) fn write(self, ends: &[u64], crcs: &[u32]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes(ends.len() as u64) as usize);
        let mut start = 0u64;
        for (i, (&end, &crc)) in ends.iter().zip(crcs).enumerate() {
            match self {
                Index::Full => out.extend_from_slice(&end.to_le_bytes()),
                Index::Grouped => {
                    if (i as u64).is_multiple_of(GROUP_BLOCKS) {
                        out.extend_from_slice(&start.to_le_bytes());
                    }
                    let length = u16::try_from(end - start).expect("a block the index can hold");
                    out.extend_from_slice(&length.to_le_bytes());
                }
            }
            out.extend_from_slice(&crc.to_le_bytes());
            start = end;
        }
        out
    }
}

/// How a file's blocks are coded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockCode {
    /// Runs, each coded with the value before it in mind in one of
    /// `contexts` contexts (see [`contexts_of`]).
    Runs { contexts: u32 },
    /// Tiles of at most `2^width_bits` columns, each position in the
    /// context of its first `neighbours` neighbours.
    Tiles { neighbours: u8, width_bits: u8 },
}

impl Header {
    pub(super) fn fields(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        out[0..4].copy_from_slice(&self.version.to_le_bytes());
        out[4] = self.kind.size as u8;
        out[5] = self.kind.rules_code();
        out[6] = self.kind.max_cars as u8;
        out[7] = self.content.code();
        out[8..10].copy_from_slice(&(self.black as u16).to_le_bytes());
        out[10..12].copy_from_slice(&(self.white as u16).to_le_bytes());
        out[12] = self.block_slots.trailing_zeros() as u8;
        match self.code {
            BlockCode::Runs { contexts } => {
                out[13] = RUNS_CODE;
                out[14] = contexts as u8;
            }
            BlockCode::Tiles {
                neighbours,
                width_bits,
            } => {
                out[13] = TILES_CODE;
                out[14] = neighbours;
                out[15] = width_bits;
            }
        }
        out[16..24].copy_from_slice(&self.slots.to_le_bytes());
        out[24..32].copy_from_slice(&self.tally.wins.to_le_bytes());
        out[32..40].copy_from_slice(&self.tally.draws.to_le_bytes());
        out[40..48].copy_from_slice(&self.tally.losses.to_le_bytes());
        out[48..52].copy_from_slice(&self.tally.longest.to_le_bytes());
        out[52..56].copy_from_slice(&self.values.to_le_bytes());
        out[56..64].copy_from_slice(&self.data.to_le_bytes());
        out
    }

    /// The header in `bytes` (the file's first [`HEADER_LEN`]), checked
    /// for what it can say of itself, and the CRC it records.
    pub(super) fn parse(path: &Path, bytes: &[u8]) -> Result<(Header, u32), LayerError> {
        if bytes.len() < 12 || &bytes[0..8] != MAGIC {
            return Err(LayerError::NotALayerFile(path.to_path_buf()));
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let version = u32_at(8);
        if version == OLD_VERSION {
            return Err(LayerError::OldFormat(path.to_path_buf()));
        }
        if !LAYER_VERSIONS.contains(&version) {
            return Err(LayerError::Version(path.to_path_buf(), version));
        }
        if (bytes.len() as u64) < header_len(version) {
            return Err(LayerError::Truncated(path.to_path_buf()));
        }
        let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
        let corrupt = |why: String| LayerError::Corrupt(path.to_path_buf(), why);
        let rules = match bytes[13] {
            0 => Rules::Textbook,
            1 => Rules::Classic,
            other => return Err(corrupt(format!("unknown rules code {other}"))),
        };
        let content = Content::from_code(bytes[15])
            .ok_or_else(|| corrupt(format!("unknown content code {}", bytes[15])))?;
        if !BLOCK_BITS.contains(&bytes[20]) {
            return Err(corrupt(format!("blocks of 2^{} slots", bytes[20])));
        }
        let code = match bytes[21] {
            RUNS_CODE => BlockCode::Runs {
                contexts: u32::from(bytes[22]),
            },
            TILES_CODE => BlockCode::Tiles {
                neighbours: bytes[22],
                width_bits: bytes[23],
            },
            other => {
                return Err(corrupt(format!(
                    "block code {other}, which this program does not read"
                )));
            }
        };
        if let BlockCode::Tiles {
            neighbours,
            width_bits,
        } = code
        {
            if !(1..=tiles::NEIGHBOURS.len()).contains(&usize::from(neighbours)) {
                return Err(corrupt(format!("tiles of {neighbours} neighbours")));
            }
            if width_bits > bytes[20] {
                return Err(corrupt(format!(
                    "tiles of 2^{width_bits} columns in blocks of 2^{} slots",
                    bytes[20]
                )));
            }
        }
        // Format 2 has no index byte; a damaged one is caught by the CRC.
        let index = match (version, bytes[76]) {
            (2, _) | (_, 0) => Index::Full,
            (_, 1) => Index::Grouped,
            (_, other) => return Err(corrupt(format!("an index of layout {other}"))),
        };
        let slots = u64_at(24);
        let block_slots = 1u64 << bytes[20];
        let mut header = Header {
            version,
            kind: Kind {
                size: usize::from(bytes[12]),
                rules,
                max_cars: u32::from(bytes[14]),
            },
            content,
            black: u32::from(u16_at(16)),
            white: u32::from(u16_at(18)),
            block_slots,
            slots,
            tally: Tally {
                wins: u64_at(32),
                draws: u64_at(40),
                losses: u64_at(48),
                longest: u32_at(56),
            },
            values: u32_at(60),
            code,
            blocks: 0,
            data: u64_at(64),
            index,
            table: u64::from(u32_at(76) >> 8),
            set: 0,
            index_crc: 0,
        };
        if header.is_bound() {
            header.set = u64_at(80);
            header.index_crc = u32_at(88);
            if u32_at(92) != 0 {
                return Err(corrupt("nonzero bytes 92..96 of its header".into()));
            }
        }
        if let BlockCode::Runs { .. } = code {
            header.blocks = slots.div_ceil(block_slots);
        }
        if !header.has_trailer() {
            header.table = header.code_bytes();
        }
        Ok((header, u32_at(72)))
    }

    pub(super) fn classes(&self) -> u32 {
        codec::classes(self.block_slots)
    }

    /// Bytes of the code's table as it is used: code lengths, or odds.
    pub(super) fn code_bytes(&self) -> u64 {
        match self.code {
            BlockCode::Runs { contexts } => {
                u64::from(contexts) * u64::from(self.values) * u64::from(self.classes())
            }
            BlockCode::Tiles { neighbours, .. } => {
                Model::stored_len(usize::from(neighbours)) as u64
            }
        }
    }

    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// The most bytes a block of `slots` slots can honestly need: with
    /// runs, a code and its extra bits a slot; with tiles, two decisions
    /// a slot at odds no worse than 31 in 4,096 (under 3 bytes).
    pub(super) fn block_bytes_bound(&self, slots: u64) -> u64 {
        match self.code {
            BlockCode::Runs { .. } => slots * 8 + 8,
            BlockCode::Tiles { .. } => slots * 3 + 8,
        }
    }

    /// Bytes of the header (before the code's table).
    pub(super) fn header_len(&self) -> u64 {
        header_len(self.version)
    }

    pub(super) fn index_at(&self) -> u64 {
        self.header_len() + self.table
    }

    /// Whether the file is bound to its table set (format 4 on): its
    /// header names the set, its index has a CRC, and every check is
    /// seeded with its identity.
    pub fn is_bound(&self) -> bool {
        self.version >= 4
    }

    /// Bytes 80..96 of a format-4 header: the table set, the index's
    /// CRC and zero.
    pub(super) fn binding(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[0..8].copy_from_slice(&self.set.to_le_bytes());
        out[8..12].copy_from_slice(&self.index_crc.to_le_bytes());
        out
    }

    /// What a CRC of this file starts from: 0 before format 4; from
    /// format 4 a value drawn from the file's identity (its table set,
    /// board, rule, car limit, content, layer and format) and from `part`,
    /// the block's number ([`INDEX_PART`] for the index).
    pub(super) fn seed(&self, part: u64) -> u32 {
        if !self.is_bound() {
            return 0;
        }
        let identity = [
            self.set,
            self.kind.size as u64
                | u64::from(self.kind.rules_code()) << 8
                | u64::from(self.kind.max_cars) << 16
                | u64::from(self.content.code()) << 24
                | u64::from(self.version) << 32,
            u64::from(self.black) << 32 | u64::from(self.white),
            part,
        ];
        let mut state = 0x6a09_e667_f3bc_c908u64;
        for word in identity {
            state = mix(state ^ word);
        }
        (state >> 32) as u32 ^ state as u32
    }

    /// The CRC-32 of block `block`'s bytes, as the index records it.
    pub(super) fn block_crc(&self, block: u64, bytes: &[u8]) -> u32 {
        let mut hasher = crc32fast::Hasher::new_with_initial(self.seed(block));
        hasher.update(bytes);
        hasher.finalize()
    }

    /// A CRC-32 of the index's bytes, `index` (in pieces): the one a
    /// format-4 header records.
    pub(super) fn index_checksum<'a>(&self, index: impl IntoIterator<Item = &'a [u8]>) -> u32 {
        let mut hasher = crc32fast::Hasher::new_with_initial(self.seed(INDEX_PART));
        for piece in index {
            hasher.update(piece);
        }
        hasher.finalize()
    }

    pub(super) fn data_at(&self) -> u64 {
        self.index_at() + self.index.bytes(self.blocks())
    }

    /// The length the file must have.
    pub(super) fn file_length(&self) -> u64 {
        self.data_at() + self.data
    }

    /// Whether the header uses bytes 76..80 (format 3 on; zero and
    /// unchecked in format 2).
    fn has_trailer(&self) -> bool {
        self.version > 2
    }

    /// Bytes 76..80: in format 3, the index's layout and the table's
    /// length.
    pub(super) fn trailer(&self) -> [u8; 4] {
        if !self.has_trailer() {
            return [0; 4];
        }
        // At most 256 KiB of odds, or 51,200 code lengths.
        debug_assert!(self.table < 1 << 24, "a table of {} bytes", self.table);
        (u32::from(self.index.code()) | (self.table as u32) << 8).to_le_bytes()
    }

    /// Whether the code's table is stored compressed.
    pub(super) fn packed_table(&self) -> bool {
        self.has_trailer() && matches!(self.code, BlockCode::Tiles { .. })
    }

    pub(super) fn checksum(&self, table: &[u8]) -> u32 {
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&self.fields());
        if self.has_trailer() {
            hasher.update(&self.trailer());
        }
        if self.is_bound() {
            hasher.update(&self.binding());
        }
        hasher.update(table);
        hasher.finalize()
    }

    /// Checks that the header is the one `layer` of `kind` should have in
    /// a file of `content`, and that its counts can be true of it.
    pub(super) fn check(
        &self,
        path: &Path,
        kind: Kind,
        content: Content,
        layer: &Layer,
    ) -> Result<(), LayerError> {
        let foreign = |why: String| Err(LayerError::Foreign(path.to_path_buf(), why));
        if self.content != content {
            return foreign(format!(
                "holds {}, not {}",
                self.content.name(),
                content.name()
            ));
        }
        if self.kind != kind {
            let k = self.kind;
            return foreign(format!(
                "is from {n}x{n} {} tables with at most {} cars a side",
                k.rules.name(),
                k.max_cars,
                n = k.size
            ));
        }
        if (self.black, self.white, self.slots) != (layer.black, layer.white, layer.slots) {
            return foreign(format!(
                "holds layer {}-{} with {} slots, not layer {} with {}",
                self.black,
                self.white,
                self.slots,
                layer.name(),
                layer.slots
            ));
        }
        let corrupt = |why: String| Err(LayerError::Corrupt(path.to_path_buf(), why));
        let t = self.tally;
        let positions = t
            .wins
            .checked_add(t.draws)
            .and_then(|n| n.checked_add(t.losses));
        if positions.is_none_or(|n| n > self.slots) {
            return corrupt(format!(
                "its counts ({} wins, {} draws, {} losses) exceed its {} slots",
                t.wins, t.draws, t.losses, self.slots
            ));
        }
        let values = match content {
            Content::Wdl => 3,
            Content::Distance(_) => u64::from(t.longest) + 1,
        };
        match self.code {
            BlockCode::Runs { contexts } if contexts != contexts_of(content) => {
                return corrupt(format!("a code of {contexts} contexts"));
            }
            BlockCode::Tiles { .. } if content != Content::Wdl => {
                return corrupt("tiles in a distance file".into());
            }
            _ => {}
        }
        if u64::from(self.values) != values || self.values > codec::MAX_VALUES {
            return corrupt(format!(
                "a code of {} values for a longest distance of {}",
                self.values, t.longest
            ));
        }
        let raw = self.code_bytes();
        let table_fits = if self.packed_table() {
            (1..=packed_bound(raw)).contains(&self.table)
        } else {
            self.table == raw
        };
        if !table_fits {
            return corrupt(format!(
                "a code's table of {} bytes where it takes {raw}",
                self.table
            ));
        }
        let most = self.blocks() * self.block_bytes_bound(self.block_slots);
        if self.data > most {
            return corrupt(format!(
                "{} bytes of blocks, more than {most} could need",
                self.data
            ));
        }
        Ok(())
    }
}

/// Bytes of a layer file's header in format `version`.
fn header_len(version: u32) -> u64 {
    if version >= 4 {
        BOUND_HEADER_LEN
    } else {
        HEADER_LEN
    }
}

/// The part number that seeds an index's CRC ([`Header::seed`]): no
/// block's.
pub(super) const INDEX_PART: u64 = u64::MAX;

/// SplitMix64's finalizer: every bit of `x` moves every bit of the result.
pub(super) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Level of the zstd frame a table of odds is stored in: within 1% of
/// the smallest (level 19), at a few milliseconds a file.
pub(super) const TABLE_LEVEL: i32 = 9;
/// Level of the zstd frames that estimate what each number of neighbours'
/// table takes: 4% larger than [`TABLE_LEVEL`]'s, ten times as fast.
pub(super) const ESTIMATE_LEVEL: i32 = 1;

/// A code's table as a file stores it, compressed at `level`.
pub(super) fn pack_table(raw: &[u8], level: i32) -> Vec<u8> {
    zstd::bulk::compress(raw, level).expect("compressing in memory")
}

/// The most bytes a table of `raw` bytes takes compressed (zstd's own
/// bound, rounded up).
fn packed_bound(raw: u64) -> u64 {
    raw + raw / 128 + 512
}

/// The table of `raw` bytes that `stored` holds compressed: never more
/// than `raw` bytes are made, whatever `stored` holds.
pub(super) fn unpack_table(stored: &[u8], raw: u64) -> Result<Vec<u8>, BadBlock> {
    match zstd::bulk::decompress(stored, raw as usize) {
        Ok(table) if table.len() as u64 == raw => Ok(table),
        Ok(table) => Err(BadBlock(format!(
            "a code's table of {} bytes where it takes {raw}",
            table.len()
        ))),
        Err(error) => Err(BadBlock(format!(
            "a code's table that does not unpack: {error}"
        ))),
    }
}

//! Layer files: one per finished layer, compressed, checksummed and
//! written so that a crash never leaves a half-written file under the
//! final name; and [`Tables`], the reader that probes a directory of them.
//!
//! # Layer file (version 1)
//! All integers little-endian.
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `DODGEMLT` |
//! | 8..12 | format version, 1 |
//! | 12 | board size |
//! | 13 | rules: 0 `textbook`, 1 `classic` |
//! | 14 | most cars a side on the board |
//! | 15 | bytes a value takes, less one: 0 (one byte), or 1 (two, little-endian) |
//! | 16..18, 18..20 | the layer: Black's progress, White's progress |
//! | 20 | what the values measure: 0 the distance to progress (`.dtz` files), 1 the distance to the end (`.dte` files) |
//! | 21..24 | zero |
//! | 24..32 | slots (positions and non-positions of the layer's index) |
//! | 32..40, 40..48, 48..56 | wins, draws, losses (Black to move) |
//! | 56..60 | longest distance to a progress move |
//! | 60..64 | zero |
//! | 64..72 | payload length |
//! | 72..76 | CRC-32 of bytes 8..72 and of the payload |
//! | 76..80 | zero |
//! | 80.. | payload: one zstd frame of one value per slot ([`encode`]) |
//!
//! A directory of layer files starts with a manifest, `dodgem-tables.txt`,
//! naming the board size, rule and car limit. Each layer has a `.dtz`
//! file, win/draw/loss with the distance to the next progress move; a
//! directory may also have a `.dte` file per layer, the same values with
//! the distance to the end of the game instead ([`Metric`]). Where the
//! longest distance field says the longest distance to progress, a `.dte`
//! file's says the longest to the end.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::cache::{KEPT_LAYERS, Loader, Lru, Miss, VALUE_BUDGET, WdlCache, WdlReader, wdl_bytes};
use super::layers::{Layer, Shape};
use crate::board::{Position, Rules};

const MAGIC: &[u8; 8] = b"DODGEMLT";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 80;
/// The manifest's name in a table directory.
pub const MANIFEST: &str = "dodgem-tables.txt";
/// zstd level: fast, and the value runs compress well at any level.
const ZSTD_LEVEL: i32 = 3;

/// A stored value: win, draw or loss for the side to move, with the plies
/// to the next progress move (a forward move, an exit, or the end of the
/// game) under best play that keeps the result. The winner plays towards
/// the smallest distance, the loser towards the largest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtz {
    Win(u32),
    Draw,
    Loss(u32),
}

/// Win, draw or loss alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wdl {
    Win,
    Draw,
    Loss,
}

impl Dtz {
    /// The value a move gives the side that made it, from the value of the
    /// position it leads to (for the opponent): a progress move is itself
    /// the progress the distance counts to.
    pub fn through(self, progress: bool) -> Dtz {
        let plies = |d: u32| if progress { 1 } else { d + 1 };
        match self {
            Dtz::Win(d) => Dtz::Loss(plies(d)),
            Dtz::Loss(d) => Dtz::Win(plies(d)),
            Dtz::Draw => Dtz::Draw,
        }
    }

    /// Orders values from the side to move's view: larger is better
    /// (nearer wins, then draws, then farther losses).
    pub fn preference(self) -> i64 {
        match self {
            Dtz::Win(d) => i64::from(u32::MAX) - i64::from(d),
            Dtz::Draw => 0,
            Dtz::Loss(d) => i64::from(d) - i64::from(u32::MAX),
        }
    }

    pub fn wdl(self) -> Wdl {
        match self {
            Dtz::Win(_) => Wdl::Win,
            Dtz::Draw => Wdl::Draw,
            Dtz::Loss(_) => Wdl::Loss,
        }
    }
}

/// A slot's value in a file: 0 a draw (or no position), `2d + 1` a win
/// and `2d + 2` a loss with distance `d`; one byte a slot while every
/// distance of the layer is at most [`MAX_NARROW_DTZ`], two otherwise.
pub fn encode(value: Dtz) -> u16 {
    match value {
        Dtz::Draw => 0,
        Dtz::Win(d) => (2 * d + 1) as u16,
        Dtz::Loss(d) => (2 * d + 2) as u16,
    }
}

/// Inverse of [`encode`].
pub fn decode(code: u16) -> Dtz {
    match code {
        0 => Dtz::Draw,
        c if c % 2 == 1 => Dtz::Win(u32::from(c / 2)),
        c => Dtz::Loss(u32::from(c / 2 - 1)),
    }
}

/// Longest distance a one-byte value holds.
pub const MAX_NARROW_DTZ: u32 = 126;

/// Longest distance a [`Values::Packed`] value holds (codes below 512).
pub const MAX_PACKED_DTZ: u32 = 254;

/// A layer's values in index order ([`encode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Values {
    Narrow(Vec<u8>),
    /// Codes below 512, as read from a two-byte file whose distances
    /// reach at most [`MAX_PACKED_DTZ`]: each code's low byte, and a bit
    /// a slot for its ninth bit (9 bits a value in memory, not 16).
    Packed {
        low: Vec<u8>,
        ninth: Vec<u64>,
    },
    Wide(Vec<u16>),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::Narrow(v) => v.len(),
            Values::Packed { low, .. } => low.len(),
            Values::Wide(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The encoded value of `slot`.
    pub fn code(&self, slot: u64) -> u16 {
        match self {
            Values::Narrow(v) => u16::from(v[slot as usize]),
            Values::Packed { low, ninth } => {
                let high = (ninth[(slot / 64) as usize] >> (slot % 64)) & 1;
                u16::from(low[slot as usize]) | (high as u16) << 8
            }
            Values::Wide(v) => v[slot as usize],
        }
    }

    /// The value of `slot`.
    pub fn get(&self, slot: u64) -> Dtz {
        decode(self.code(slot))
    }

    /// Values from their codes ([`encode`]), one byte a slot when the
    /// longest distance among them (`longest`) allows.
    pub fn from_codes(codes: Vec<u16>, longest: u32) -> Values {
        if longest <= MAX_NARROW_DTZ {
            Values::Narrow(codes.into_iter().map(|v| v as u8).collect())
        } else {
            Values::Wide(codes)
        }
    }

    /// Bytes a value takes in the file.
    pub fn width(&self) -> usize {
        match self {
            Values::Narrow(_) => 1,
            Values::Packed { .. } | Values::Wide(_) => 2,
        }
    }

    /// Bytes held in memory.
    pub fn bytes(&self) -> usize {
        match self {
            Values::Narrow(v) => v.len(),
            Values::Packed { low, ninth } => low.len() + ninth.len() * 8,
            Values::Wide(v) => v.len() * 2,
        }
    }
}

/// A finished layer's win/draw/loss, two bits a slot: what the layer
/// behind it reads while it is solved.
pub struct WdlBits {
    words: Vec<u64>,
}

impl WdlBits {
    pub fn from_values(values: &Values) -> WdlBits {
        let mut bits = WdlBits {
            words: vec![0; values.len().div_ceil(32)],
        };
        bits.fill(0, values);
        bits
    }

    /// The win/draw/loss of `layer`, read from its file a chunk at a time
    /// ([`stream_layer`]): the layer's values are never held whole.
    ///
    /// # Errors
    /// As [`read_layer`].
    pub fn read(dir: &Path, kind: Kind, layer: &Layer) -> Result<WdlBits, LayerError> {
        let mut bits = WdlBits {
            words: vec![0; layer.slots.div_ceil(32) as usize],
        };
        stream_layer(dir, kind, layer, &mut |first, values| {
            bits.fill(first, values)
        })?;
        Ok(bits)
    }

    /// Sets the win/draw/loss of slots `first..` from `values` (`first` a
    /// multiple of 32).
    fn fill(&mut self, first: u64, values: &Values) {
        // 0 a draw, 1 a win (odd codes), 2 a loss (even codes but 0).
        fn bits(code: u16) -> u64 {
            match code {
                0 => 0,
                c if c % 2 == 1 => 1,
                _ => 2,
            }
        }
        fn pack(codes: impl Iterator<Item = u64>) -> u64 {
            codes
                .enumerate()
                .fold(0, |word, (i, code)| word | code << (2 * i))
        }
        debug_assert_eq!(first % 32, 0);
        let table: [u64; 256] = std::array::from_fn(|b| bits(b as u16));
        let words = &mut self.words[(first / 32) as usize..];
        match values {
            Values::Narrow(v) => {
                for (word, chunk) in words.iter_mut().zip(v.chunks(32)) {
                    *word = pack(chunk.iter().map(|&b| table[usize::from(b)]));
                }
            }
            Values::Packed { .. } | Values::Wide(_) => {
                let slots = values.len() as u64;
                for (k, word) in words.iter_mut().enumerate() {
                    let start = k as u64 * 32;
                    if start >= slots {
                        break;
                    }
                    let end = (start + 32).min(slots);
                    *word = pack((start..end).map(|slot| bits(values.code(slot))));
                }
            }
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }

    pub fn get(&self, slot: u64) -> Wdl {
        match (self.words[(slot / 32) as usize] >> (2 * (slot % 32))) & 3 {
            0 => Wdl::Draw,
            1 => Wdl::Win,
            _ => Wdl::Loss,
        }
    }
}

/// Win/draw/loss counts of a layer's positions (Black to move) and the
/// longest distance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub longest: u32,
}

impl Tally {
    pub fn add(&mut self, value: Dtz) {
        match value {
            Dtz::Win(d) => {
                self.wins += 1;
                self.longest = self.longest.max(d);
            }
            Dtz::Draw => self.draws += 1,
            Dtz::Loss(d) => {
                self.losses += 1;
                self.longest = self.longest.max(d);
            }
        }
    }

    pub fn merge(&mut self, other: Tally) {
        self.wins += other.wins;
        self.draws += other.draws;
        self.losses += other.losses;
        self.longest = self.longest.max(other.longest);
    }

    pub fn positions(&self) -> u64 {
        self.wins + self.draws + self.losses
    }
}

/// Why a table directory or layer file cannot be used.
#[derive(Debug)]
pub enum LayerError {
    Io(PathBuf, io::Error),
    NotALayerFile(PathBuf),
    Version(PathBuf, u32),
    /// The file or directory is for another board, rule, car limit or
    /// layer than asked for.
    Foreign(PathBuf, String),
    Truncated(PathBuf),
    Checksum(PathBuf),
    Corrupt(PathBuf, String),
    /// The directory has no manifest or a bad one.
    Manifest(PathBuf, String),
    /// A layer found unusable earlier: why.
    Unusable(String),
}

impl fmt::Display for LayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayerError::Io(path, error) => write!(f, "cannot use {}: {error}", path.display()),
            LayerError::NotALayerFile(path) => {
                write!(f, "{} is not a dodgem layer file", path.display())
            }
            LayerError::Version(path, version) => write!(
                f,
                "{} has layer format version {version}; this program reads version {VERSION}",
                path.display()
            ),
            LayerError::Foreign(path, why) => write!(f, "{} {why}", path.display()),
            LayerError::Truncated(path) => {
                write!(f, "{} is truncated or padded", path.display())
            }
            LayerError::Checksum(path) => write!(
                f,
                "{} fails its checksum (the file is damaged)",
                path.display()
            ),
            LayerError::Corrupt(path, why) => {
                write!(f, "{} is damaged: {why}", path.display())
            }
            LayerError::Manifest(path, why) => write!(f, "{}: {why}", path.display()),
            LayerError::Unusable(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for LayerError {}

/// What a table directory holds: a board size, a rule and a car limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    pub size: usize,
    pub rules: Rules,
    pub max_cars: u32,
}

impl Kind {
    fn manifest(&self) -> String {
        format!(
            "dodgem layered tables\nsize {}\nrules {}\nmax-cars {}\n",
            self.size,
            self.rules.name(),
            self.max_cars
        )
    }

    fn parse(text: &str) -> Option<Kind> {
        let mut lines = text.lines();
        if lines.next()? != "dodgem layered tables" {
            return None;
        }
        let mut field = |name: &str| {
            let line = lines.next()?;
            line.strip_prefix(name)?
                .strip_prefix(' ')
                .map(str::to_string)
        };
        let size = field("size")?.parse().ok()?;
        let rules = Rules::from_name(&field("rules")?)?;
        let max_cars = field("max-cars")?.parse().ok()?;
        Some(Kind {
            size,
            rules,
            max_cars,
        })
    }

    fn rules_code(&self) -> u8 {
        match self.rules {
            Rules::Textbook => 0,
            Rules::Classic => 1,
        }
    }
}

/// What the distances of a layer file count: plies to the next progress
/// move of best play (every layer has it), or plies to the end of the game
/// under best play, the winner hurrying, the loser delaying (derived from
/// the first, see [`super::dte`]). Both are stored as [`Dtz`] values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    Dtz,
    Dte,
}

impl Metric {
    /// The file of layer `(black, white)` in `dir`.
    pub fn path(self, dir: &Path, black: u32, white: u32) -> PathBuf {
        let extension = match self {
            Metric::Dtz => "dtz",
            Metric::Dte => "dte",
        };
        dir.join(format!("layer-{black:03}-{white:03}.{extension}"))
    }

    fn code(self) -> u8 {
        match self {
            Metric::Dtz => 0,
            Metric::Dte => 1,
        }
    }
}

/// The distance-to-progress file of layer `(black, white)` in `dir`.
pub fn layer_path(dir: &Path, black: u32, white: u32) -> PathBuf {
    Metric::Dtz.path(dir, black, white)
}

/// Prepares `dir` for tables of `kind`: writes the manifest, or checks the
/// one there, and removes temporary files a killed run left behind.
///
/// # Errors
/// An unusable directory, or one holding tables of another kind.
pub fn prepare_dir(dir: &Path, kind: Kind) -> Result<(), LayerError> {
    let io_error = |e| LayerError::Io(dir.to_path_buf(), e);
    fs::create_dir_all(dir).map_err(io_error)?;
    let manifest = dir.join(MANIFEST);
    match fs::read_to_string(&manifest) {
        Ok(text) => {
            let found = Kind::parse(&text).ok_or_else(|| {
                LayerError::Manifest(manifest.clone(), "not a dodgem tables manifest".into())
            })?;
            if found != kind {
                return Err(LayerError::Foreign(
                    dir.to_path_buf(),
                    format!(
                        "holds {n}x{n} {} tables with at most {} cars a side, not {m}x{m} {} with at most {}",
                        found.rules.name(),
                        found.max_cars,
                        kind.rules.name(),
                        kind.max_cars,
                        n = found.size,
                        m = kind.size,
                    ),
                ));
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            write_durably(&manifest, kind.manifest().as_bytes()).map_err(io_error)?;
        }
        Err(e) => return Err(LayerError::Io(manifest, e)),
    }
    for entry in fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        if path.extension().is_some_and(|e| e == "tmp") {
            fs::remove_file(&path).map_err(|e| LayerError::Io(path.clone(), e))?;
        }
    }
    Ok(())
}

/// The kind of tables in `dir`, from its manifest.
///
/// # Errors
/// A missing or unreadable manifest.
pub fn read_kind(dir: &Path) -> Result<Kind, LayerError> {
    let manifest = dir.join(MANIFEST);
    let text = fs::read_to_string(&manifest).map_err(|e| LayerError::Io(manifest.clone(), e))?;
    Kind::parse(&text)
        .ok_or_else(|| LayerError::Manifest(manifest, "not a dodgem tables manifest".into()))
}

/// Writes `bytes` to `path` through a temporary file, synced and renamed,
/// so `path` is either absent or complete.
fn write_durably(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_durably_with(path, |out| out.write_all(bytes))
}

/// Like [`write_durably`], with what goes into the file written by
/// `write` through a buffer (for files too large to build in memory
/// first).
pub(super) fn write_durably_with(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let temporary = path.with_extension("tmp");
    let mut out = BufWriter::new(File::create(&temporary)?);
    write(&mut out)?;
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    drop(file);
    fs::rename(&temporary, path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// What the header of a layer file says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub metric: Metric,
    pub black: u32,
    pub white: u32,
    pub slots: u64,
    pub tally: Tally,
    /// Bytes a value takes.
    pub width: usize,
    payload: u64,
}

impl Header {
    fn fields(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        out[0..4].copy_from_slice(&VERSION.to_le_bytes());
        out[4] = self.kind.size as u8;
        out[5] = self.kind.rules_code();
        out[6] = self.kind.max_cars as u8;
        out[7] = (self.width - 1) as u8;
        out[8..10].copy_from_slice(&(self.black as u16).to_le_bytes());
        out[10..12].copy_from_slice(&(self.white as u16).to_le_bytes());
        out[12] = self.metric.code();
        out[16..24].copy_from_slice(&self.slots.to_le_bytes());
        out[24..32].copy_from_slice(&self.tally.wins.to_le_bytes());
        out[32..40].copy_from_slice(&self.tally.draws.to_le_bytes());
        out[40..48].copy_from_slice(&self.tally.losses.to_le_bytes());
        out[48..52].copy_from_slice(&self.tally.longest.to_le_bytes());
        out[56..64].copy_from_slice(&self.payload.to_le_bytes());
        out
    }

    fn parse(path: &Path, bytes: &[u8]) -> Result<(Header, u32), LayerError> {
        if bytes.len() < HEADER_LEN || &bytes[0..8] != MAGIC {
            return Err(LayerError::NotALayerFile(path.to_path_buf()));
        }
        let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
        let version = u32_at(8);
        if version != VERSION {
            return Err(LayerError::Version(path.to_path_buf(), version));
        }
        let rules = match bytes[13] {
            0 => Rules::Textbook,
            1 => Rules::Classic,
            other => {
                return Err(LayerError::Corrupt(
                    path.to_path_buf(),
                    format!("unknown rules code {other}"),
                ));
            }
        };
        let width = match bytes[15] {
            0 => 1,
            1 => 2,
            other => {
                return Err(LayerError::Corrupt(
                    path.to_path_buf(),
                    format!("unknown value width code {other}"),
                ));
            }
        };
        let metric = match bytes[20] {
            0 => Metric::Dtz,
            1 => Metric::Dte,
            other => {
                return Err(LayerError::Corrupt(
                    path.to_path_buf(),
                    format!("unknown metric code {other}"),
                ));
            }
        };
        let header = Header {
            width,
            metric,
            kind: Kind {
                size: usize::from(bytes[12]),
                rules,
                max_cars: u32::from(bytes[14]),
            },
            black: u32::from(u16_at(16)),
            white: u32::from(u16_at(18)),
            slots: u64_at(24),
            tally: Tally {
                wins: u64_at(32),
                draws: u64_at(40),
                losses: u64_at(48),
                longest: u32_at(56),
            },
            payload: u64_at(64),
        };
        Ok((header, u32_at(72)))
    }

    fn checksum(&self, payload: &[u8]) -> u32 {
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&self.fields());
        hasher.update(payload);
        hasher.finalize()
    }
}

/// Compresses and durably writes the values of `layer`; returns the
/// file's length in bytes.
///
/// # Errors
/// Any I/O error.
pub fn write_layer(
    dir: &Path,
    kind: Kind,
    layer: &Layer,
    values: &Values,
    tally: Tally,
) -> io::Result<u64> {
    write_values(dir, kind, Metric::Dtz, layer, values, tally)
}

/// [`write_layer`] for the values of `metric`.
///
/// # Errors
/// Any I/O error.
pub fn write_values(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
    values: &Values,
    tally: Tally,
) -> io::Result<u64> {
    let payload = match values {
        Values::Narrow(v) => zstd::bulk::compress(v, ZSTD_LEVEL)?,
        Values::Packed { .. } | Values::Wide(_) => {
            let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), ZSTD_LEVEL)?;
            let slots = values.len() as u64;
            for start in (0..slots).step_by(1 << 16) {
                let bytes: Vec<u8> = (start..(start + (1 << 16)).min(slots))
                    .flat_map(|slot| values.code(slot).to_le_bytes())
                    .collect();
                encoder.write_all(&bytes)?;
            }
            encoder.finish()?
        }
    };
    let header = Header {
        kind,
        metric,
        black: layer.black,
        white: layer.white,
        slots: values.len() as u64,
        tally,
        width: values.width(),
        payload: payload.len() as u64,
    };
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&header.fields());
    bytes.extend_from_slice(&header.checksum(&payload).to_le_bytes());
    bytes.extend_from_slice(&[0; 4]);
    bytes.extend_from_slice(&payload);
    write_durably(&metric.path(dir, layer.black, layer.white), &bytes)?;
    Ok(bytes.len() as u64)
}

/// Checks that a header is the one `layer` of `kind` should have.
fn check_header(
    path: &Path,
    header: &Header,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
) -> Result<(), LayerError> {
    if header.metric != metric {
        return Err(LayerError::Foreign(
            path.to_path_buf(),
            format!("holds {:?} values, not {metric:?}", header.metric),
        ));
    }
    if header.kind != kind {
        let k = header.kind;
        return Err(LayerError::Foreign(
            path.to_path_buf(),
            format!(
                "is from {n}x{n} {} tables with at most {} cars a side",
                k.rules.name(),
                k.max_cars,
                n = k.size
            ),
        ));
    }
    if (header.black, header.white, header.slots) != (layer.black, layer.white, layer.slots) {
        return Err(LayerError::Foreign(
            path.to_path_buf(),
            format!(
                "holds layer {}-{} with {} slots, not layer {} with {}",
                header.black,
                header.white,
                header.slots,
                layer.name(),
                layer.slots
            ),
        ));
    }
    Ok(())
}

/// Reads the header of the file of `layer`, checking it and the file's
/// length but not the payload; `Ok(None)` when there is no such file.
///
/// # Errors
/// A file that is damaged, truncated or of another kind or layer.
pub fn read_header(dir: &Path, kind: Kind, layer: &Layer) -> Result<Option<Header>, LayerError> {
    read_values_header(dir, kind, Metric::Dtz, layer)
}

/// [`read_header`] for the file of `metric`.
///
/// # Errors
/// As [`read_header`].
pub fn read_values_header(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
) -> Result<Option<Header>, LayerError> {
    let path = metric.path(dir, layer.black, layer.white);
    let mut file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LayerError::Io(path, e)),
    };
    let length = file
        .metadata()
        .map_err(|e| LayerError::Io(path.clone(), e))?
        .len();
    let mut bytes = [0u8; HEADER_LEN];
    let read = file
        .read(&mut bytes)
        .map_err(|e| LayerError::Io(path.clone(), e))?;
    let (header, _) = Header::parse(&path, &bytes[..read])?;
    check_header(&path, &header, kind, metric, layer)?;
    if length != HEADER_LEN as u64 + header.payload {
        return Err(LayerError::Truncated(path));
    }
    Ok(Some(header))
}

/// Reads the file of `layer` and checks its header, length and checksum:
/// the header, the compressed payload (the file's bytes after the header)
/// and the file's path.
fn read_checked(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
) -> Result<(Header, Vec<u8>, PathBuf), LayerError> {
    let path = metric.path(dir, layer.black, layer.white);
    let mut bytes = fs::read(&path).map_err(|e| LayerError::Io(path.clone(), e))?;
    let (header, crc) = Header::parse(&path, &bytes)?;
    check_header(&path, &header, kind, metric, layer)?;
    if bytes.len() as u64 != HEADER_LEN as u64 + header.payload {
        return Err(LayerError::Truncated(path));
    }
    if header.checksum(&bytes[HEADER_LEN..]) != crc {
        return Err(LayerError::Checksum(path));
    }
    bytes.drain(..HEADER_LEN);
    Ok((header, bytes, path))
}

/// Values of one width from raw little-endian bytes.
fn values_of(width: usize, raw: Vec<u8>) -> Values {
    match width {
        1 => Values::Narrow(raw),
        _ => Values::Wide(
            raw.chunks_exact(2)
                .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
                .collect(),
        ),
    }
}

/// Reads, checks and decompresses the file of `layer`.
///
/// # Errors
/// A missing file, or one that is damaged, truncated or of another kind
/// or layer.
pub fn read_layer(dir: &Path, kind: Kind, layer: &Layer) -> Result<(Values, Tally), LayerError> {
    read_values(dir, kind, Metric::Dtz, layer)
}

/// [`read_layer`] for the file of `metric`.
///
/// # Errors
/// As [`read_layer`].
pub fn read_values(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
) -> Result<(Values, Tally), LayerError> {
    let (header, payload, path) = read_checked(dir, kind, metric, layer)?;
    let packed = header.tally.longest <= MAX_PACKED_DTZ;
    let values = decompress_values(header.width, &payload, layer.slots as usize, packed)
        .map_err(|why| LayerError::Corrupt(path, why))?;
    Ok((values, header.tally))
}

/// Decompresses a layer's payload of `slots` values of `width` bytes
/// straight into its values: a wide layer's into its `u16`s, without a
/// second copy of its bytes (4 GB rather than 8 at the peak for a wide
/// layer of 2e9 slots), or, when `packed` (its distances reach at most
/// [`MAX_PACKED_DTZ`]), into [`Values::Packed`] a piece at a time (2.25
/// GB for that layer).
fn decompress_values(
    width: usize,
    payload: &[u8],
    slots: usize,
    packed: bool,
) -> Result<Values, String> {
    let expected = slots * width;
    let wrong_size = |got: usize| format!("{got} bytes of values, expected {expected}");
    if width == 1 {
        let raw = zstd::bulk::decompress(payload, expected).map_err(|e| e.to_string())?;
        return match raw.len() {
            n if n == expected => Ok(Values::Narrow(raw)),
            n => Err(wrong_size(n)),
        };
    }
    if packed {
        return decompress_packed(payload, slots);
    }
    let mut values: Vec<u16> = bytemuck::zeroed_vec(slots);
    let got = zstd::bulk::decompress_to_buffer(payload, bytemuck::cast_slice_mut(&mut values))
        .map_err(|e| e.to_string())?;
    if got != expected {
        return Err(wrong_size(got));
    }
    // The file is little-endian (a no-op on little-endian machines).
    for value in &mut values {
        *value = u16::from_le(*value);
    }
    Ok(Values::Wide(values))
}

/// [`decompress_values`] of a two-byte payload into [`Values::Packed`]:
/// a code of 512 or more (beyond what the header's longest distance
/// allows) is refused as damage.
fn decompress_packed(payload: &[u8], slots: usize) -> Result<Values, String> {
    let mut decoder =
        zstd::stream::read::Decoder::with_buffer(payload).map_err(|e| e.to_string())?;
    let mut low = Vec::with_capacity(slots);
    let mut ninth = vec![0u64; slots.div_ceil(64)];
    let mut chunk = vec![0u8; 2 * STREAM_SLOTS];
    while low.len() < slots {
        let n = (slots - low.len()).min(STREAM_SLOTS);
        let bytes = &mut chunk[..2 * n];
        decoder
            .read_exact(bytes)
            .map_err(|e| format!("values end before slot {}: {e}", low.len() + n))?;
        for pair in bytes.chunks_exact(2) {
            let slot = low.len();
            match pair[1] {
                0 => {}
                1 => ninth[slot / 64] |= 1 << (slot % 64),
                _ => {
                    return Err(format!(
                        "slot {slot} holds a code beyond its header's longest distance"
                    ));
                }
            }
            low.push(pair[0]);
        }
    }
    if decoder.read(&mut [0u8; 1]).map_err(|e| e.to_string())? != 0 {
        return Err(format!("more values than the layer's {slots} slots"));
    }
    Ok(Values::Packed { low, ninth })
}

/// Slots a chunk of [`stream_layer`] holds.
const STREAM_SLOTS: usize = 1 << 20;

/// Reads and checks the file of `layer` like [`read_layer`], but hands
/// its values to `visit` a chunk at a time, in slot order (`visit(first
/// slot of the chunk, its values)`), so that a layer of billions of slots
/// is never held whole.
///
/// # Errors
/// As [`read_layer`].
pub fn stream_layer(
    dir: &Path,
    kind: Kind,
    layer: &Layer,
    visit: &mut dyn FnMut(u64, &Values),
) -> Result<(), LayerError> {
    let (header, payload, path) = read_checked(dir, kind, Metric::Dtz, layer)?;
    let corrupt = |why: String| LayerError::Corrupt(path.clone(), why);
    let mut decoder = zstd::stream::read::Decoder::with_buffer(&payload[..])
        .map_err(|e| corrupt(e.to_string()))?;
    let mut first = 0u64;
    while first < layer.slots {
        let slots = (layer.slots - first).min(STREAM_SLOTS as u64) as usize;
        let mut raw = vec![0u8; slots * header.width];
        decoder.read_exact(&mut raw).map_err(|e| {
            corrupt(format!(
                "values end before slot {}: {e}",
                first + slots as u64
            ))
        })?;
        visit(first, &values_of(header.width, raw));
        first += slots as u64;
    }
    let mut rest = [0u8; 1];
    if decoder
        .read(&mut rest)
        .map_err(|e| corrupt(e.to_string()))?
        != 0
    {
        return Err(corrupt(format!(
            "more values than the layer's {} slots",
            layer.slots
        )));
    }
    Ok(())
}

/// Where a [`Tables`] reads its layers.
enum Source {
    /// Layer files in a directory, read as they are needed.
    Dir(PathBuf),
    /// Every layer in memory (the built-in tables), by layer number.
    Memory(Vec<Option<Arc<Values>>>),
}

/// The tables of one kind, probed position by position: from a directory
/// of layer files (each read and checked when first needed, kept in a
/// bounded cache), or from layers solved in memory.
pub struct Tables {
    source: Source,
    kind: Kind,
    shape: Shape,
    /// Every layer has its distances to the end ([`Metric::Dte`]).
    dte: bool,
    values: Mutex<ValueCache>,
    /// Held while a layer is read for `values`: one read at a time, and
    /// not under `values`'s lock (a 6 x 6 layer takes seconds, and
    /// [`Tables::probe_metric_in_memory`] must not wait for it).
    reading: Mutex<()>,
    wdl: Arc<WdlCache>,
    /// What was wrong with layers found unusable.
    errors: Arc<Mutex<Errors>>,
}

/// Decompressed layers, and the layers found unusable (with why).
#[derive(Default)]
struct ValueCache {
    layers: Lru<Values>,
    unusable: HashMap<u32, String>,
}

/// Layers of at most this many slots are read for the search on its own
/// thread (a few milliseconds); larger ones on a thread of their own.
const INLINE_SLOTS: u64 = 1 << 22;

impl Tables {
    /// Opens the tables in `dir` (files are read when first probed).
    ///
    /// # Errors
    /// A missing or bad manifest, or one naming tables that cannot exist.
    pub fn open(dir: &Path) -> Result<Tables, LayerError> {
        let kind = read_kind(dir)?;
        // The size of the index is checked before it is built.
        let shape = super::layered::shape_of(kind).ok().ok_or_else(|| {
            LayerError::Manifest(
                dir.join(MANIFEST),
                format!(
                    "no tables for size {} with at most {} cars",
                    kind.size, kind.max_cars
                ),
            )
        })?;
        let dte = has_every_layer(dir, kind, &shape, Metric::Dte);
        Ok(Tables::new(
            Source::Dir(dir.to_path_buf()),
            kind,
            shape,
            dte,
        ))
    }

    /// Tables of `kind` from the values of every layer, by `(black,
    /// white)` progress (see [`super::solve_in_memory`]), and the
    /// distances to the end if known (see [`super::dte_in_memory`]).
    ///
    /// # Panics
    /// If `kind` has no tables or a layer is missing.
    pub fn from_memory(
        kind: Kind,
        layers: HashMap<(u32, u32), Values>,
        dte: Option<HashMap<(u32, u32), Values>>,
    ) -> Tables {
        let shape = super::layered::shape_of(kind).expect("solved tables have a shape");
        let (low, high) = (shape.min_progress(), shape.max_progress());
        let has_dte = dte.is_some();
        let mut values = Vec::new();
        for mut metric in std::iter::once(layers).chain(dte) {
            for a in low..=high {
                for b in low..=high {
                    let layer = metric.remove(&(a, b)).expect("every layer is solved");
                    values.push(Some(Arc::new(layer)));
                }
            }
        }
        Tables::new(Source::Memory(values), kind, shape, has_dte)
    }

    fn new(source: Source, kind: Kind, shape: Shape, dte: bool) -> Tables {
        Tables {
            source,
            kind,
            shape,
            dte,
            values: Mutex::new(ValueCache::default()),
            reading: Mutex::new(()),
            wdl: Arc::new(WdlCache::default()),
            errors: Arc::default(),
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The directory the tables are read from; `None` for tables solved
    /// in memory.
    pub fn dir(&self) -> Option<&Path> {
        match &self.source {
            Source::Dir(dir) => Some(dir),
            Source::Memory(_) => None,
        }
    }

    /// Whether the tables know the distance to the end of every position
    /// ([`Metric::Dte`]) as well as the distance to progress.
    pub fn has_dte(&self) -> bool {
        self.dte
    }

    /// Number of a layer's values of `metric`: `0..self.layers()` for the
    /// distances to progress, the next as many for those to the end.
    fn layer_id(&self, metric: Metric, black: u32, white: u32) -> u32 {
        let low = self.shape.min_progress();
        let first = match metric {
            Metric::Dtz => 0,
            Metric::Dte => self.layers() as u32,
        };
        first + (black - low) * self.span() + (white - low)
    }

    fn span(&self) -> u32 {
        self.shape.max_progress() - self.shape.min_progress() + 1
    }

    /// Number of layers.
    pub fn layers(&self) -> usize {
        (self.span() * self.span()) as usize
    }

    /// The stored value of `position` for its side to move; `Ok(None)` for
    /// a position the tables do not cover (another size, a finished game,
    /// more cars than the limit).
    ///
    /// # Errors
    /// The layer's file is missing or damaged.
    pub fn probe(&self, position: &Position) -> Result<Option<Dtz>, LayerError> {
        self.probe_metric(Metric::Dtz, position)
    }

    /// The stored value of `position` with its distance in `metric`:
    /// `Ok(None)` where [`Tables::probe`] says so, and for
    /// [`Metric::Dte`] when the tables do not have it.
    ///
    /// # Errors
    /// The layer's file is missing or damaged.
    pub fn probe_metric(
        &self,
        metric: Metric,
        position: &Position,
    ) -> Result<Option<Dtz>, LayerError> {
        let Some((black, white, slot)) = self.shape.locate(position) else {
            return Ok(None);
        };
        if metric == Metric::Dte && !self.dte {
            return Ok(None);
        }
        let values = self.metric_values(metric, black, white)?;
        Ok(Some(values.get(slot)))
    }

    /// [`Tables::probe_metric`] without reading a file: `None` when the
    /// layer is not in memory, `Some(None)` when the position is not
    /// covered or the tables do not have `metric`.
    pub fn probe_metric_in_memory(
        &self,
        metric: Metric,
        position: &Position,
    ) -> Option<Option<Dtz>> {
        let Some((black, white, slot)) = self.shape.locate(position) else {
            return Some(None);
        };
        if metric == Metric::Dte && !self.dte {
            return Some(None);
        }
        let id = self.layer_id(metric, black, white);
        let values = match &self.source {
            Source::Memory(layers) => Arc::clone(layers[id as usize].as_ref()?),
            Source::Dir(_) => {
                let mut cache = self.values.lock().unwrap_or_else(|e| e.into_inner());
                cache.layers.get(id)?
            }
        };
        Some(Some(values.get(slot)))
    }

    /// [`Tables::probe_metric_in_memory`], except that a layer of at most
    /// `max_slots` slots not in memory is read (and kept in the cache):
    /// `None` only for a larger layer not in memory, or one that cannot
    /// be read.
    pub fn probe_metric_reading(
        &self,
        metric: Metric,
        position: &Position,
        max_slots: u64,
    ) -> Option<Option<Dtz>> {
        if let Some(found) = self.probe_metric_in_memory(metric, position) {
            return Some(found);
        }
        let (black, white, _) = self.shape.locate(position)?;
        if self.shape.layer(black, white).slots > max_slots {
            return None;
        }
        self.probe_metric(metric, position).ok()
    }

    /// The decompressed values of layer `(black, white)`: from memory, or
    /// read, checked and kept in a cache of at most [`VALUE_BUDGET`]
    /// bytes ([`KEPT_LAYERS`] stay whatever their size). A layer found
    /// unusable is not read again: the same error comes back.
    ///
    /// # Errors
    /// The layer's file is missing or damaged.
    pub fn layer_values(&self, black: u32, white: u32) -> Result<Arc<Values>, LayerError> {
        self.metric_values(Metric::Dtz, black, white)
    }

    /// [`Tables::layer_values`] for the values of `metric` (which the
    /// tables must have: see [`Tables::has_dte`]).
    ///
    /// # Errors
    /// The layer's file is missing or damaged.
    pub fn metric_values(
        &self,
        metric: Metric,
        black: u32,
        white: u32,
    ) -> Result<Arc<Values>, LayerError> {
        let id = self.layer_id(metric, black, white);
        let dir = match &self.source {
            Source::Memory(layers) => {
                return Ok(Arc::clone(
                    layers[id as usize].as_ref().expect("every layer is solved"),
                ));
            }
            Source::Dir(dir) => dir,
        };
        let cached = || -> Option<Result<Arc<Values>, LayerError>> {
            let mut cache = self.values.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(values) = cache.layers.get(id) {
                return Some(Ok(values));
            }
            let why = cache.unusable.get(&id)?;
            Some(Err(LayerError::Unusable(why.clone())))
        };
        if let Some(found) = cached() {
            return found;
        }
        let _reading = self.reading.lock().unwrap_or_else(|e| e.into_inner());
        // Another thread may have read it while this one waited.
        if let Some(found) = cached() {
            return found;
        }
        let layer = self.shape.layer(black, white);
        // Room first: the layers read before this one go before it is
        // read, not after, so the memory held stays within the bound.
        self.values
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .layers
            .make_room(layer.slots as usize, VALUE_BUDGET, KEPT_LAYERS);
        let read = read_values(dir, self.kind, metric, &layer);
        let mut cache = self.values.lock().unwrap_or_else(|e| e.into_inner());
        match read {
            Ok((values, _)) => {
                let values = Arc::new(values);
                let bytes = values.bytes();
                cache
                    .layers
                    .insert(id, Arc::clone(&values), bytes, VALUE_BUDGET, KEPT_LAYERS);
                Ok(values)
            }
            Err(error) => {
                let why = error.to_string();
                cache.unusable.insert(id, why.clone());
                self.report(why);
                Err(error)
            }
        }
    }

    /// Hands the values of layer `(black, white)` to `visit` in slot
    /// order, a chunk at a time (`visit(first slot, values)`): streamed
    /// from its file without holding it whole (see [`stream_layer`]), or
    /// at once from memory. Not cached.
    ///
    /// # Errors
    /// The layer's file is missing or damaged.
    pub fn stream_values(
        &self,
        black: u32,
        white: u32,
        visit: &mut dyn FnMut(u64, &Values),
    ) -> Result<(), LayerError> {
        match &self.source {
            Source::Memory(layers) => {
                let id = self.layer_id(Metric::Dtz, black, white);
                visit(
                    0,
                    layers[id as usize].as_ref().expect("every layer is solved"),
                );
                Ok(())
            }
            Source::Dir(dir) => {
                stream_layer(dir, self.kind, &self.shape.layer(black, white), visit)
            }
        }
    }

    /// Notes what was wrong with a layer, for [`Tables::take_errors`].
    fn report(&self, why: String) {
        report(&self.errors, why);
    }

    /// What was found wrong with layers since the last call (each
    /// unusable layer once).
    pub fn take_errors(&self) -> Vec<String> {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut errors.new)
    }

    /// Win, draw or loss of `position` for the side to move from the
    /// win/draw/loss cache, for probes inside the search: `None` when the
    /// tables do not cover it or its layer is not in memory (a small layer
    /// is read at once, on the calling thread; a large one on a thread of
    /// its own while the probes in it miss; one larger than the cache's
    /// budget, or unusable, is never read).
    pub fn probe_wdl(&self, reader: &mut WdlReader, position: &Position) -> Option<Wdl> {
        let (black, white, slot) = self.shape.locate(position)?;
        let id = self.layer_id(Metric::Dtz, black, white);
        let miss = |budget: usize| -> (Miss, Loader) {
            let layer = self.shape.layer(black, white);
            let too_big = wdl_bytes(layer.slots) > budget;
            match &self.source {
                Source::Memory(layers) => {
                    let values = Arc::clone(layers[id as usize].as_ref().expect("solved"));
                    let how = if too_big { Miss::Skip } else { Miss::Inline };
                    (how, Box::new(move || Some(WdlBits::from_values(&values))))
                }
                Source::Dir(dir) => {
                    let how = if too_big {
                        Miss::Skip
                    } else if layer.slots <= INLINE_SLOTS {
                        Miss::Inline
                    } else {
                        Miss::Background
                    };
                    let (dir, kind) = (dir.clone(), self.kind);
                    let errors = Arc::clone(&self.errors);
                    let load = move || match WdlBits::read(&dir, kind, &layer) {
                        Ok(bits) => Some(bits),
                        Err(error) => {
                            report(&errors, error.to_string());
                            None
                        }
                    };
                    (how, Box::new(load))
                }
            }
        };
        self.wdl.probe(reader, self.layers(), id, slot, miss)
    }

    /// The win/draw/loss cache: bytes and layers held, and whether a layer
    /// is being loaded.
    pub fn wdl_resident(&self) -> (usize, usize, bool) {
        let (bytes, layers) = self.wdl.resident();
        (bytes, layers, self.wdl.is_loading())
    }
}

/// Whether every layer of `shape` has a file of `metric` in `dir` whose
/// header is right (a directory whose distances to the end are not all
/// written yet is used with its distances to progress alone).
fn has_every_layer(dir: &Path, kind: Kind, shape: &Shape, metric: Metric) -> bool {
    shape.pairs().into_iter().all(|(a, b)| {
        [(a, b), (b, a)].into_iter().all(|(black, white)| {
            // Only a regular file is opened (a FIFO would block).
            fs::metadata(metric.path(dir, black, white)).is_ok_and(|m| m.is_file())
                && read_values_header(dir, kind, metric, &shape.layer(black, white))
                    .is_ok_and(|header| header.is_some())
        })
    })
}

/// Errors found in layers: every one seen, and those not yet taken.
#[derive(Default)]
struct Errors {
    seen: HashSet<String>,
    new: Vec<String>,
}

/// Notes `why` among `errors`, unless it was noted before.
fn report(errors: &Mutex<Errors>, why: String) {
    let mut errors = errors.lock().unwrap_or_else(|e| e.into_inner());
    if errors.seen.insert(why.clone()) {
        log::error!("{why}");
        errors.new.push(why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_values_decompress_in_place_and_wrong_sizes_are_refused() {
        let codes: [u16; 4] = [1, 300, 0x1234, u16::MAX];
        let bytes: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()).collect();
        let payload = zstd::bulk::compress(&bytes, ZSTD_LEVEL).unwrap();
        assert_eq!(
            decompress_values(2, &payload, 4, false),
            Ok(Values::Wide(codes.to_vec()))
        );
        // Fewer or more values than the layer's slots.
        assert!(decompress_values(2, &payload, 5, false).is_err());
        assert!(decompress_values(2, &payload, 3, false).is_err());
        // One byte a value: the same bytes as eight values.
        assert_eq!(
            decompress_values(1, &payload, 8, false),
            Ok(Values::Narrow(bytes.clone()))
        );
        assert!(decompress_values(1, &payload, 9, false).is_err());
        // Codes of 512 and more cannot be packed: damage, where the
        // header promised distances of at most 254 plies.
        assert!(decompress_values(2, &payload, 4, true).is_err());
    }

    #[test]
    fn packed_values_keep_every_code_below_512() {
        // More than a chunk and a word, across the ninth bit's words.
        let slots = STREAM_SLOTS + 100;
        let codes: Vec<u16> = (0..slots).map(|i| ((i * 7919) % 512) as u16).collect();
        let wide = Values::Wide(codes.clone());
        let bytes: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()).collect();
        let payload = zstd::bulk::compress(&bytes, ZSTD_LEVEL).unwrap();
        let packed = decompress_values(2, &payload, slots, true).unwrap();
        assert!(matches!(packed, Values::Packed { .. }));
        assert_eq!(packed.len(), slots);
        assert!((0..slots as u64).all(|slot| packed.code(slot) == wide.code(slot)));
        assert!(packed.bytes() < wide.bytes() * 6 / 10);
        assert_eq!(packed.width(), 2);
        // Their win/draw/loss are the same.
        assert!(WdlBits::from_values(&packed).words == WdlBits::from_values(&wide).words);
        assert!(decompress_values(2, &payload, slots + 1, true).is_err());
        assert!(decompress_values(2, &payload, slots - 1, true).is_err());
    }

    #[test]
    fn encoding_round_trips() {
        for value in [
            Dtz::Draw,
            Dtz::Win(0),
            Dtz::Win(1),
            Dtz::Loss(0),
            Dtz::Loss(126),
            Dtz::Win(127),
            Dtz::Loss(2000),
        ] {
            assert_eq!(decode(encode(value)), value);
        }
    }

    #[test]
    fn win_draw_loss_bits_read_chunk_by_chunk_are_those_of_the_whole_layer() {
        let codes: Vec<u8> = (0..1000u32).map(|i| (i * 37 % 11) as u8).collect();
        let whole = WdlBits::from_values(&Values::Narrow(codes.clone()));
        let mut chunked = WdlBits {
            words: vec![0; codes.len().div_ceil(32)],
        };
        for (i, chunk) in codes.chunks(96).enumerate() {
            chunked.fill(96 * i as u64, &Values::Narrow(chunk.to_vec()));
        }
        assert_eq!(chunked.words, whole.words);
        for (slot, &code) in codes.iter().enumerate() {
            assert_eq!(whole.get(slot as u64), decode(u16::from(code)).wdl());
        }
    }

    #[test]
    fn a_move_into_a_lost_child_wins() {
        assert_eq!(Dtz::Loss(3).through(false), Dtz::Win(4));
        assert_eq!(Dtz::Loss(3).through(true), Dtz::Win(1));
        assert_eq!(Dtz::Win(0).through(false), Dtz::Loss(1));
        assert_eq!(Dtz::Draw.through(false), Dtz::Draw);
        assert!(Dtz::Win(2).preference() > Dtz::Win(3).preference());
        assert!(Dtz::Loss(3).preference() > Dtz::Loss(2).preference());
    }

    #[test]
    fn the_win_draw_loss_cache_agrees_with_the_values_and_keeps_its_budget() {
        let dir = super::super::solve_4x4_in_temp("wdl-cache", Rules::Classic);
        let tables = Tables::open(&dir).unwrap();
        // Room for a few of the larger layers only.
        let budget = 3 * wdl_bytes(tables.shape().layer(6, 6).slots);
        super::super::set_wdl_budget(budget);
        let mut reader = WdlReader::default();
        let mut probed = 0;
        let mut touched = HashSet::new();
        let mut held = 0;
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..10_000 {
            let mut sets = [0u64; 2];
            let mut taken = 0;
            for set in &mut sets {
                for _ in 0..=next(3) {
                    let square = loop {
                        let square = crate::board::square(next(4) as usize, next(4) as usize);
                        if taken & 1 << square == 0 {
                            break square;
                        }
                    };
                    taken |= 1 << square;
                    *set |= 1 << square;
                }
            }
            for side in [crate::board::Color::Black, crate::board::Color::White] {
                let position = Position::from_parts(4, sets[0], sets[1], side);
                let value = tables.probe(&position).unwrap().unwrap();
                assert_eq!(tables.probe_wdl(&mut reader, &position), Some(value.wdl()));
                let (a, b, _) = tables.shape().locate(&position).unwrap();
                touched.insert((a, b));
                probed += 1;
            }
            let (bytes, layers, loading) = tables.wdl_resident();
            assert!(bytes <= budget, "{bytes} > {budget}");
            assert!(!loading, "4 x 4 layers are read at once");
            held = layers;
        }
        // Layers came and went.
        assert!(
            touched.len() > 2 * held,
            "{} touched, {held} held",
            touched.len()
        );
        assert!(probed > 10_000, "{probed}");
        // No budget: no probes.
        super::super::set_wdl_budget(0);
        let fresh = Tables::open(&dir).unwrap();
        let start = Position::start(4);
        assert_eq!(fresh.probe_wdl(&mut WdlReader::default(), &start), None);
        super::super::set_wdl_budget(super::super::DEFAULT_WDL_MB << 20);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn manifest_round_trips() {
        let kind = Kind {
            size: 6,
            rules: Rules::Classic,
            max_cars: 5,
        };
        assert_eq!(Kind::parse(&kind.manifest()), Some(kind));
        assert_eq!(Kind::parse("something else\n"), None);
    }
}

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
//! | 21 | the block code: 0 runs with canonical Huffman codes ([`codec`]); 1 tiles of rows with a range coder ([`tiles`], `.wdl` files only) |
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
//! | 96.. (80.. before format 4) | the code's table. Runs: code lengths, a byte for each symbol, contexts x values x classes of them (see [`codec`]). Tiles: the odds each context starts from (see [`tiles::Model`]), as one zstd frame (most contexts never occur, so the table shrinks about ninefold) |
//! | then | the block index, either for each block the end of its data (8 bytes, from the data's start) and its CRC-32 (4 bytes); or, for each group of 64 blocks, the start of the group's data (8 bytes, from the data's start) then for each of its blocks the length of its data (2 bytes) and its CRC-32 (4 bytes), where no block is longer than 65,535 bytes |
//! | then | the blocks' data |
//!
//! With runs, block `i` holds slots `i * block slots` onwards; with tiles,
//! block `i` is tile `i` of the layer's [`Tiling`].
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

use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::codec::{self, BadBlock, Code};
use super::tiles::{self, Model, Tiling};
use crate::board::Rules;
use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::{Dtz, Tally, Values, Wdl, WdlBits, decode};
use crate::solver::parallel;

const MAGIC: &[u8; 8] = b"DODGEMLT";
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
const LAYER_VERSIONS: std::ops::RangeInclusive<u32> = 2..=LAYER_VERSION;
/// The format before blocks: one compressed frame a layer, read whole
/// (its directories and layer files both).
const OLD_VERSION: u32 = 1;
/// Bytes of a layer file's header in formats 2 and 3.
const HEADER_LEN: u64 = 80;
/// Bytes of a layer file's header in format 4: the table set, the
/// index's CRC and four zero bytes after the rest.
const BOUND_HEADER_LEN: u64 = 96;
/// The lock file a writer holds in a directory ([`lock_dir`]).
pub const LOCK_FILE: &str = ".dodgem-lock";
/// The block codes: runs ([`codec`]) and tiles ([`tiles`]).
const RUNS_CODE: u8 = 0;
const TILES_CODE: u8 = 1;
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
const BLOCK_BITS: std::ops::RangeInclusive<u8> = 6..=24;
/// Columns a tile has at most, by default (log2): wide enough for a run
/// to show, short enough for a tile to have rows above rows.
pub const TILE_WIDTH_BITS: u8 = 10;

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
    /// A directory or file of the old format: what it is.
    OldFormat(PathBuf),
    /// A layer found unusable earlier: why.
    Unusable(String),
    /// Another process writes into the directory (its id, if known).
    InUse(PathBuf, Option<u32>),
}

/// What the message about an old directory tells its owner to do.
pub const CONVERT_HINT: &str = "convert it once with `dodgem solve --convert OLD NEW` \
     (value for value, no new solve)";

impl fmt::Display for LayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayerError::Io(path, error) => write!(f, "cannot use {}: {error}", path.display()),
            LayerError::NotALayerFile(path) => {
                write!(f, "{} is not a dodgem layer file", path.display())
            }
            LayerError::Version(path, version) => write!(
                f,
                "{} has format version {version}; this program reads directories of format \
                 {UNBOUND_VERSION} and {VERSION} and layer files of format {} to {LAYER_VERSION}",
                path.display(),
                LAYER_VERSIONS.start()
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
            LayerError::OldFormat(path) => write!(
                f,
                "{} holds tables in the old format (version 1: each layer one compressed \
                 frame, read whole); {CONVERT_HINT}",
                path.display()
            ),
            LayerError::Unusable(why) => write!(f, "{why}"),
            LayerError::InUse(dir, pid) => {
                let by =
                    pid.map_or_else(|| "another process".to_string(), |p| format!("process {p}"));
                write!(
                    f,
                    "{} is in use by {by} (a solve, --dte or --convert writing into it): \
                     wait for it to end, or write into another directory",
                    dir.display()
                )
            }
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

/// What a directory's manifest says: the kind of its tables, its format
/// version and (from format 3) its table set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Manifest {
    pub kind: Kind,
    pub version: u32,
    /// The table set every layer file of the directory belongs to: drawn
    /// at random when the directory was prepared; `None` before format 3.
    pub set: Option<u64>,
}

impl Kind {
    /// The manifest of a directory of this kind in `version`'s format
    /// (of format 3 on: with no table set, see [`Kind::manifest_of_set`]).
    pub fn manifest(&self, version: u32) -> String {
        let format = match version {
            OLD_VERSION => String::new(),
            v => format!("format {v}\n"),
        };
        format!(
            "dodgem layered tables\n{format}size {}\nrules {}\nmax-cars {}\n",
            self.size,
            self.rules.name(),
            self.max_cars
        )
    }

    /// The manifest of a directory of the current format holding table
    /// set `set`.
    pub fn manifest_of_set(&self, set: u64) -> String {
        format!("{}set {set:016x}\n", self.manifest(VERSION))
    }

    fn parse(text: &str) -> Option<Manifest> {
        let mut lines = text.lines().peekable();
        if lines.next()? != "dodgem layered tables" {
            return None;
        }
        let mut version = OLD_VERSION;
        if let Some(v) = lines.peek().and_then(|l| l.strip_prefix("format ")) {
            version = v.parse().ok()?;
            lines.next();
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
        let set = if version >= VERSION {
            let hex = field("set")?;
            (hex.len() == 16).then_some(())?;
            Some(u64::from_str_radix(&hex, 16).ok()?)
        } else {
            None
        };
        if lines.next().is_some() {
            return None;
        }
        Some(Manifest {
            kind: Kind {
                size,
                rules,
                max_cars,
            },
            version,
            set,
        })
    }

    /// The rule's byte in a layer file's header (both formats).
    pub(super) fn rules_code(&self) -> u8 {
        match self.rules {
            Rules::Textbook => 0,
            Rules::Classic => 1,
        }
    }
}

/// What the distances of a layer file count: plies to the next progress
/// move of best play (every layer has it), or plies to the end of the game
/// under best play, the winner hurrying, the loser delaying (derived from
/// the first, see [`crate::solver::passes::dte`]). Both are read as [`Dtz`] values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    Dtz,
    Dte,
}

/// What one layer file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Content {
    /// Win, draw or loss.
    Wdl,
    /// The distances of a metric.
    Distance(Metric),
}

impl Content {
    /// The file of layer `(black, white)` in `dir`.
    pub fn path(self, dir: &Path, black: u32, white: u32) -> PathBuf {
        dir.join(format!(
            "layer-{}.{}",
            crate::solver::index::layers::layer_name(black, white),
            self.extension()
        ))
    }

    pub fn extension(self) -> &'static str {
        match self {
            Content::Wdl => "wdl",
            Content::Distance(Metric::Dtz) => "dtz",
            Content::Distance(Metric::Dte) => "dte",
        }
    }

    /// What a header says the file holds (in the old format, the metric
    /// byte of a distance file, with the same codes).
    pub(super) fn code(self) -> u8 {
        match self {
            Content::Distance(Metric::Dtz) => 0,
            Content::Distance(Metric::Dte) => 1,
            Content::Wdl => 2,
        }
    }

    fn from_code(code: u8) -> Option<Content> {
        Some(match code {
            0 => Content::Distance(Metric::Dtz),
            1 => Content::Distance(Metric::Dte),
            2 => Content::Wdl,
            _ => return None,
        })
    }

    /// Slots a block of this content's files holds, by default.
    pub fn block_slots(self) -> u64 {
        match self {
            Content::Wdl => WDL_BLOCK_SLOTS,
            Content::Distance(_) => BLOCK_SLOTS,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Content::Wdl => "win/draw/loss",
            Content::Distance(Metric::Dtz) => "distances to progress",
            Content::Distance(Metric::Dte) => "distances to the end",
        }
    }
}

impl Metric {
    /// What the files hold, in words.
    pub fn name(self) -> &'static str {
        Content::Distance(self).name()
    }

    /// The file of layer `(black, white)`'s distances in `dir`.
    pub fn path(self, dir: &Path, black: u32, white: u32) -> PathBuf {
        Content::Distance(self).path(dir, black, white)
    }
}

/// The distance-to-progress file of layer `(black, white)` in `dir`.
pub fn layer_path(dir: &Path, black: u32, white: u32) -> PathBuf {
    Metric::Dtz.path(dir, black, white)
}

/// A table set's identity, new for each directory prepared: the time,
/// the process and the standard library's random hash keys, mixed.
fn new_set() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    hasher.write_u128(now.as_nanos());
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// Prepares `dir` for tables of `kind`: writes the manifest (with a new
/// table set) into a new or empty directory, or checks the one there, and
/// removes the temporary files that runs no longer running left behind.
/// The caller holds the directory's lock ([`lock_dir`]).
///
/// # Errors
/// An unusable directory, one holding tables of another kind, one of an
/// older format (format 2 is read but not written into: converted), or
/// one without a manifest that holds other files.
pub fn prepare_dir(dir: &Path, kind: Kind) -> Result<(), LayerError> {
    let io_error = |e| LayerError::Io(dir.to_path_buf(), e);
    fs::create_dir_all(dir).map_err(io_error)?;
    let manifest = dir.join(MANIFEST);
    match fs::symlink_metadata(&manifest) {
        Ok(_) => {
            let found = read_directory(dir)?;
            if found.version != VERSION {
                return Err(LayerError::Manifest(
                    manifest,
                    format!(
                        "holds tables of format {}, which this program reads but does not \
                         write into; {CONVERT_HINT} to the current format, then carry on there",
                        found.version
                    ),
                ));
            }
            let found = found.kind;
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
            let other = fs::read_dir(dir)
                .map_err(io_error)?
                .filter_map(Result::ok)
                .map(|entry| entry.file_name())
                .find(|name| name != LOCK_FILE);
            if let Some(other) = other {
                return Err(LayerError::Manifest(
                    dir.to_path_buf(),
                    format!(
                        "has no manifest ({MANIFEST}) but holds other files ({} among them): \
                         tables are written into a new or empty directory",
                        Path::new(&other).display()
                    ),
                ));
            }
            write_durably(&manifest, kind.manifest_of_set(new_set()).as_bytes())
                .map_err(io_error)?;
        }
        Err(e) => return Err(LayerError::Io(manifest, e)),
    }
    remove_stale_temporaries(dir)
}

/// Removes the temporary files (`NAME.PID.tmp`, see [`write_durably_with`])
/// of `dir` left by processes that no longer run, and this process's own;
/// those of a running process are left to it.
fn remove_stale_temporaries(dir: &Path) -> Result<(), LayerError> {
    let io_error = |e| LayerError::Io(dir.to_path_buf(), e);
    for entry in fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        if path.extension().is_none_or(|e| e != "tmp") {
            continue;
        }
        let writer = path
            .file_stem()
            .and_then(|stem| Path::new(stem).extension())
            .and_then(|pid| pid.to_str()?.parse::<u32>().ok());
        let running = writer.is_some_and(|pid| pid != std::process::id() && process_runs(pid));
        if !running {
            fs::remove_file(&path).map_err(|e| LayerError::Io(path.clone(), e))?;
        }
    }
    Ok(())
}

/// Whether a process `pid` runs on this machine (Linux: it has its
/// directory in `/proc`).
fn process_runs(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Takes `file`'s exclusive `flock` without waiting: `Ok(false)` when
/// another open file holds it.
#[allow(unsafe_code)]
fn try_flock(file: &File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock only reads the descriptor, which `file` owns and keeps
    // open for the call.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(error)
    }
}

/// The lock of one directory's writer ([`lock_dir`]), held until dropped.
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
    file: File,
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Removed while still held, so no other writer locks the name
        // about to go ([`lock_dir`] checks it locked the file the name
        // names).
        let _ = fs::remove_file(&self.path);
        let _ = &self.file;
    }
}

/// Takes the lock of `dir`'s one writer (created if missing): `flock` on
/// its lock file, which names the holder's process. One solve, `--dte` or
/// `--convert` at a time writes into a directory; a second is refused
/// at once with the first's process id.
///
/// # Errors
/// A directory that cannot be made or locked, or one another process holds.
pub fn lock_dir(dir: &Path) -> Result<DirLock, LayerError> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let io_error = |e| LayerError::Io(dir.to_path_buf(), e);
    fs::create_dir_all(dir).map_err(io_error)?;
    let path = dir.join(LOCK_FILE);
    loop {
        let mut file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
            .map_err(|e| LayerError::Io(path.clone(), e))?;
        let opened = file
            .metadata()
            .map_err(|e| LayerError::Io(path.clone(), e))?;
        if !opened.is_file() {
            return Err(LayerError::Foreign(
                path,
                "is not a regular file (a directory's lock must be one)".into(),
            ));
        }
        if !try_flock(&file).map_err(|e| LayerError::Io(path.clone(), e))? {
            let mut text = String::new();
            let _ = (&mut file).take(32).read_to_string(&mut text);
            return Err(LayerError::InUse(
                dir.to_path_buf(),
                text.trim().parse().ok(),
            ));
        }
        // The holder before may have removed the name as this process
        // opened it: lock what the name names now.
        let named = fs::symlink_metadata(&path).ok();
        if named.is_none_or(|m| (m.dev(), m.ino()) != (opened.dev(), opened.ino())) {
            continue;
        }
        file.set_len(0)
            .map_err(|e| LayerError::Io(path.clone(), e))?;
        file.write_all_at(std::process::id().to_string().as_bytes(), 0)
            .map_err(|e| LayerError::Io(path.clone(), e))?;
        return Ok(DirLock { path, file });
    }
}

/// The longest manifest read: a real one is under 100 bytes.
const MANIFEST_LIMIT: u64 = 4096;

/// The kind of tables in `dir`, from its manifest (a regular file of at
/// most a few kilobytes; a FIFO or device there is refused unopened):
/// of the current format or of format 2.
///
/// # Errors
/// A missing, unreadable or bad manifest; one of the old format.
pub fn read_kind(dir: &Path) -> Result<Kind, LayerError> {
    Ok(read_directory(dir)?.kind)
}

/// The manifest of `dir`, of a format this program reads (the current
/// one or 2).
///
/// # Errors
/// A missing, unreadable or bad manifest; one of another format.
pub fn read_directory(dir: &Path) -> Result<Manifest, LayerError> {
    let found = read_any_manifest(dir)?;
    if found.version != VERSION && found.version != UNBOUND_VERSION {
        return Err(if found.version == OLD_VERSION {
            LayerError::OldFormat(dir.to_path_buf())
        } else {
            LayerError::Version(dir.join(MANIFEST), found.version)
        });
    }
    Ok(found)
}

/// The kind and format version a directory's manifest names.
///
/// # Errors
/// A missing, unreadable or bad manifest.
pub fn read_manifest(dir: &Path) -> Result<(Kind, u32), LayerError> {
    let found = read_any_manifest(dir)?;
    Ok((found.kind, found.version))
}

/// The manifest of `dir`, whatever its format.
fn read_any_manifest(dir: &Path) -> Result<Manifest, LayerError> {
    let path = dir.join(MANIFEST);
    let bad = |why: &str| LayerError::Manifest(path.clone(), why.into());
    let Some(file) = open_regular(&path)? else {
        if fs::metadata(dir).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
            return Err(LayerError::Manifest(
                dir.to_path_buf(),
                "no such directory".into(),
            ));
        }
        return Err(LayerError::Io(
            path.clone(),
            io::Error::from(io::ErrorKind::NotFound),
        ));
    };
    let length = file
        .metadata()
        .map_err(|e| LayerError::Io(path.clone(), e))?
        .len();
    if length > MANIFEST_LIMIT {
        return Err(bad("not a dodgem tables manifest (far too long)"));
    }
    let mut bytes = vec![0u8; length as usize];
    file.read_exact_at(&mut bytes, 0)
        .map_err(|e| LayerError::Io(path.clone(), e))?;
    let text = String::from_utf8(bytes).map_err(|_| bad("not a dodgem tables manifest"))?;
    Kind::parse(&text).ok_or_else(|| bad("not a dodgem tables manifest"))
}

/// Opens `path` for reading if it is a regular file: `Ok(None)` when
/// there is none; a FIFO, device or directory is refused without waiting
/// for a writer (the open does not block).
///
/// # Errors
/// Anything but a readable regular file.
pub fn open_regular(path: &Path) -> Result<Option<File>, LayerError> {
    match crate::files::open_regular(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => Err(LayerError::Foreign(
            path.to_path_buf(),
            "is not a regular file (a table file must be one)".into(),
        )),
        Err(e) => Err(LayerError::Io(path.to_path_buf(), e)),
    }
}

/// Writes `bytes` to `path` through a temporary file, synced and renamed,
/// so `path` is either absent or complete.
pub fn write_durably(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_durably_with(path, |out| out.write_all(bytes))
}

/// Like [`write_durably`], with what goes into the file written by
/// `write` through a buffer (for files too large to build in memory
/// first). The temporary file's name has the process id in it, so two
/// processes writing the same file (an MPI worker counted lost that still
/// runs, and the one given its pair) do not write into one another's.
pub fn write_durably_with(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(name);
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
    /// The layer format version: [`LAYER_VERSION`] in a file written.
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
const GROUP_BLOCKS: u64 = 64;
/// Bytes of a block's entry in a grouped index, and of a group's start.
const GROUPED_ENTRY: u64 = 6;
const GROUP_START: u64 = 8;
/// Bytes of a block's entry in a full index.
const FULL_ENTRY: u64 = 12;

impl Index {
    /// Bytes of the index of `blocks` blocks.
    pub fn bytes(self, blocks: u64) -> u64 {
        match self {
            Index::Full => blocks * FULL_ENTRY,
            Index::Grouped => blocks.div_ceil(GROUP_BLOCKS) * GROUP_START + blocks * GROUPED_ENTRY,
        }
    }

    /// The header's byte for it (format 3).
    fn code(self) -> u8 {
        match self {
            Index::Full => 0,
            Index::Grouped => 1,
        }
    }

    /// The smaller index that blocks ending at `ends` (each from the
    /// data's start) can have.
    fn for_ends(ends: &[u64]) -> Index {
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
    fn write(self, ends: &[u64], crcs: &[u32]) -> Vec<u8> {
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
    fn fields(&self) -> [u8; 64] {
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
    fn parse(path: &Path, bytes: &[u8]) -> Result<(Header, u32), LayerError> {
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

    fn classes(&self) -> u32 {
        codec::classes(self.block_slots)
    }

    /// Bytes of the code's table as it is used: code lengths, or odds.
    fn code_bytes(&self) -> u64 {
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
    fn block_bytes_bound(&self, slots: u64) -> u64 {
        match self.code {
            BlockCode::Runs { .. } => slots * 8 + 8,
            BlockCode::Tiles { .. } => slots * 3 + 8,
        }
    }

    /// Bytes of the header (before the code's table).
    fn header_len(&self) -> u64 {
        header_len(self.version)
    }

    fn index_at(&self) -> u64 {
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
    fn binding(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[0..8].copy_from_slice(&self.set.to_le_bytes());
        out[8..12].copy_from_slice(&self.index_crc.to_le_bytes());
        out
    }

    /// What a CRC of this file starts from: 0 before format 4; from
    /// format 4 a value drawn from the file's identity (its table set,
    /// board, rule, car limit, content, layer and format) and from `part`,
    /// the block's number ([`INDEX_PART`] for the index).
    fn seed(&self, part: u64) -> u32 {
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
    fn block_crc(&self, block: u64, bytes: &[u8]) -> u32 {
        let mut hasher = crc32fast::Hasher::new_with_initial(self.seed(block));
        hasher.update(bytes);
        hasher.finalize()
    }

    /// A CRC-32 of the index's bytes, `index` (in pieces): the one a
    /// format-4 header records.
    fn index_checksum<'a>(&self, index: impl IntoIterator<Item = &'a [u8]>) -> u32 {
        let mut hasher = crc32fast::Hasher::new_with_initial(self.seed(INDEX_PART));
        for piece in index {
            hasher.update(piece);
        }
        hasher.finalize()
    }

    fn data_at(&self) -> u64 {
        self.index_at() + self.index.bytes(self.blocks())
    }

    /// The length the file must have.
    fn file_length(&self) -> u64 {
        self.data_at() + self.data
    }

    /// Whether the header uses bytes 76..80 (format 3 on; zero and
    /// unchecked in format 2).
    fn has_trailer(&self) -> bool {
        self.version > 2
    }

    /// Bytes 76..80: in format 3, the index's layout and the table's
    /// length.
    fn trailer(&self) -> [u8; 4] {
        if !self.has_trailer() {
            return [0; 4];
        }
        // At most 256 KiB of odds, or 51,200 code lengths.
        debug_assert!(self.table < 1 << 24, "a table of {} bytes", self.table);
        (u32::from(self.index.code()) | (self.table as u32) << 8).to_le_bytes()
    }

    /// Whether the code's table is stored compressed.
    fn packed_table(&self) -> bool {
        self.has_trailer() && matches!(self.code, BlockCode::Tiles { .. })
    }

    fn checksum(&self, table: &[u8]) -> u32 {
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
    fn check(
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
const INDEX_PART: u64 = u64::MAX;

/// SplitMix64's finalizer: every bit of `x` moves every bit of the result.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Where a block's bytes are and their CRC-32.
struct Entry {
    start: u64,
    end: u64,
    crc: u32,
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
    fn entries(&self, first: u64, count: u64) -> Result<Vec<Entry>, LayerError> {
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

/// Level of the zstd frame a table of odds is stored in: within 1% of
/// the smallest (level 19), at a few milliseconds a file.
const TABLE_LEVEL: i32 = 9;
/// Level of the zstd frames that estimate what each number of neighbours'
/// table takes: 4% larger than [`TABLE_LEVEL`]'s, ten times as fast.
const ESTIMATE_LEVEL: i32 = 1;

/// A code's table as a file stores it, compressed at `level`.
fn pack_table(raw: &[u8], level: i32) -> Vec<u8> {
    zstd::bulk::compress(raw, level).expect("compressing in memory")
}

/// The most bytes a table of `raw` bytes takes compressed (zstd's own
/// bound, rounded up).
fn packed_bound(raw: u64) -> u64 {
    raw + raw / 128 + 512
}

/// The table of `raw` bytes that `stored` holds compressed: never more
/// than `raw` bytes are made, whatever `stored` holds.
fn unpack_table(stored: &[u8], raw: u64) -> Result<Vec<u8>, BadBlock> {
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

/// Which slots of `layer` are positions, a bit a slot.
pub fn positions_of(shape: &Shape, layer: &Layer) -> Vec<u64> {
    let mut bits = vec![0u64; layer.slots.div_ceil(64) as usize];
    for block in &layer.blocks {
        let whites = shape.white_sets(block);
        for (row, &black) in shape.black_sets(block).iter().enumerate() {
            let first = block.slot(row as u64, 0);
            for (column, &white) in whites.iter().enumerate() {
                if black & white == 0 {
                    let slot = first + column as u64;
                    bits[(slot / 64) as usize] |= 1 << (slot % 64);
                }
            }
        }
    }
    bits
}

/// Whether `slot` is set in a bit a slot (as [`positions_of`] gives).
pub fn is_set(bits: &[u64], slot: u64) -> bool {
    bits[(slot / 64) as usize] >> (slot % 64) & 1 == 1
}

/// The contexts of a file's code: a win/draw/loss run is coded with the
/// value of the run before it in mind (about 12% smaller on 6 x 6),
/// a distance run without.
fn contexts_of(content: Content) -> u32 {
    match content {
        Content::Wdl => 4,
        Content::Distance(_) => 1,
    }
}

/// What a file stores for a slot of `values`, if it matters: for the
/// win/draw/loss file 0, 1 or 2; for a distance file the distance of a
/// won or lost position (a draw's does not matter).
fn stored(content: Content, code: u16) -> Option<u16> {
    match (content, decode(code)) {
        (Content::Wdl, Dtz::Draw) => Some(0),
        (Content::Wdl, Dtz::Win(_)) => Some(1),
        (Content::Wdl, Dtz::Loss(_)) => Some(2),
        (Content::Distance(_), Dtz::Draw) => None,
        (Content::Distance(_), Dtz::Win(d) | Dtz::Loss(d)) => Some(d as u16),
    }
}

/// Writes the `content` file of `layer` from its `values` (slots that are
/// not `positions` are free), in blocks of `block_slots`, on `threads`
/// threads; returns the file's length in bytes. A `.wdl` file is written
/// in runs or in tiles, whichever is smaller.
///
/// # Errors
/// Any I/O error.
#[allow(clippy::too_many_arguments)]
pub fn write_file(
    dir: &Path,
    kind: Kind,
    content: Content,
    layer: &Layer,
    values: &Values,
    positions: &[u64],
    tally: Tally,
    block_slots: u64,
    threads: usize,
) -> io::Result<u64> {
    assert!(block_slots.is_power_of_two());
    // What is stored for each code, looked up rather than decoded: the
    // runs are found twice for every slot of the layer.
    let most = match values {
        Values::Narrow(_) => u16::from(u8::MAX),
        Values::Packed { .. } => 511,
        Values::Wide(_) => u16::MAX,
    };
    let stored_of: Vec<Option<u16>> = (0..=most).map(|code| stored(content, code)).collect();
    let set = read_directory(dir)
        .map_err(|e| io::Error::other(e.to_string()))?
        .set
        .ok_or_else(|| {
            io::Error::other(format!(
                "{} is a directory of format {UNBOUND_VERSION}: layer files are written only into \
                 directories of format {VERSION}",
                dir.display()
            ))
        })?;
    let source = Source {
        set,
        kind,
        content,
        layer,
        values,
        positions,
        stored_of: &stored_of,
        tally,
        block_slots,
        threads,
    };
    let body = match content {
        Content::Wdl => source.smaller_of_runs_and_tiles()?,
        Content::Distance(_) => source.runs_body(source.runs()?),
    };
    let path = content.path(dir, layer.black, layer.white);
    write_durably_with(&path, |out| {
        out.write_all(MAGIC)?;
        out.write_all(&body.header.fields())?;
        out.write_all(&body.header.checksum(&body.table).to_le_bytes())?;
        out.write_all(&body.header.trailer())?;
        out.write_all(&body.header.binding())?;
        out.write_all(&body.table)?;
        out.write_all(&body.index)?;
        for data in &body.data {
            out.write_all(data)?;
        }
        Ok(())
    })?;
    Ok(body.length())
}

/// What [`write_file`] writes from.
struct Source<'a> {
    /// The table set of the directory written into.
    set: u64,
    kind: Kind,
    content: Content,
    layer: &'a Layer,
    values: &'a Values,
    positions: &'a [u64],
    /// What the file stores for each value code ([`stored`]).
    stored_of: &'a [Option<u16>],
    tally: Tally,
    block_slots: u64,
    threads: usize,
}

/// A file made, before it is written: its header, its code's table, its
/// block index and its blocks' bytes (in pieces).
struct Body {
    header: Header,
    table: Vec<u8>,
    index: Vec<u8>,
    data: Vec<Vec<u8>>,
}

impl Body {
    fn length(&self) -> u64 {
        self.header.file_length()
    }
}

/// A file in runs, counted but not yet coded: its code, and its header
/// with the data's length estimated (within half a byte a block).
struct Runs {
    code: Code,
    header: Header,
}

impl Runs {
    fn length(&self) -> u64 {
        self.header.file_length()
    }
}

/// Tiles a writer counts at most to choose its code (the rest are coded
/// with the odds their sample gives).
const SAMPLE_TILES: u64 = 512;

/// Blocks of a `.wdl` file whose runs are counted to estimate what runs
/// would take, where the layer has at least four times as many.
const RUNS_SAMPLE_BLOCKS: u64 = 64;

/// Blocks are coded in chunks of this many, on every thread.
const CHUNK: u64 = 256;

impl Source<'_> {
    /// What the file stores for `slot`, if it matters.
    fn stored_at(&self, slot: u64) -> Option<u16> {
        if is_set(self.positions, slot) {
            self.stored_of[usize::from(self.values.code(slot))]
        } else {
            None
        }
    }

    /// The runs of block `block`, `emit(value, length)`.
    fn runs_of(&self, block: u64, emit: &mut dyn FnMut(u16, u64)) {
        let (values, block_slots) = (self.values, self.block_slots);
        let slots = values.len() as u64;
        let start = block * block_slots;
        let end = (start + block_slots).min(slots);
        match values {
            Values::Narrow(codes) => codec::runs(
                (start..end).map(|slot| {
                    if is_set(self.positions, slot) {
                        self.stored_of[usize::from(codes[slot as usize])]
                    } else {
                        None
                    }
                }),
                &mut *emit,
            ),
            _ => codec::runs((start..end).map(|slot| self.stored_at(slot)), &mut *emit),
        }
    }

    /// The file in runs, counted: its code and what it would take.
    fn runs(&self) -> io::Result<Runs> {
        self.runs_of_every(1)
    }

    /// [`Source::runs`] from every `every`-th block alone: the header's
    /// length is then an estimate (the code fits the blocks counted).
    fn runs_of_every(&self, every: u64) -> io::Result<Runs> {
        let block_slots = self.block_slots;
        let slots = self.values.len() as u64;
        let blocks = slots.div_ceil(block_slots);
        let counted = blocks.div_ceil(every);
        let classes = codec::classes(block_slots);
        let runs_of = |block: u64, emit: &mut dyn FnMut(u16, u64)| self.runs_of(block, emit);
        let chunks = counted.div_ceil(CHUNK) as usize;
        // The alphabet is what the values hold (a distance file's longest
        // distance is its own, whatever the tally passed says); counted for
        // each context with room for every value a file may have.
        let contexts = contexts_of(self.content);
        let per = (codec::MAX_VALUES * classes) as usize;
        let counts = parallel(
            self.threads,
            chunks,
            |chunk, out: &mut Vec<Option<Vec<u64>>>| {
                let mut frequencies = vec![0u64; contexts as usize * per];
                let mut runs = Vec::new();
                let mut fits = true;
                for i in chunk as u64 * CHUNK..((chunk as u64 + 1) * CHUNK).min(counted) {
                    runs.clear();
                    runs_of(i * every, &mut |v, n| {
                        fits &= u32::from(v) < codec::MAX_VALUES;
                        runs.push((v, n));
                    });
                    if fits {
                        codec::count_symbols(&runs, classes, contexts, &mut frequencies);
                    }
                }
                out.push(fits.then_some(frequencies));
            },
        );
        let mut frequencies = vec![0u64; contexts as usize * per];
        for counted in counts {
            let counted = counted.ok_or_else(|| {
                io::Error::other(format!(
                    "layer {}: a distance beyond {} plies, more than a table file holds",
                    self.layer.name(),
                    codec::MAX_VALUES - 1
                ))
            })?;
            for (total, n) in frequencies.iter_mut().zip(counted) {
                *total += n;
            }
        }
        let used = (0..frequencies.len()).rev().find(|&s| frequencies[s] > 0);
        let alphabet = match self.content {
            Content::Wdl => 3,
            Content::Distance(_) => used.map_or(1, |s| (s % per) as u32 / classes + 1),
        };
        // Each context's symbols of the alphabet, one context after the other.
        let frequencies: Vec<u64> = frequencies
            .chunks(per)
            .flat_map(|context| context[..(alphabet * classes) as usize].iter().copied())
            .collect();
        let tally = match self.content {
            Content::Wdl => self.tally,
            Content::Distance(_) => Tally {
                longest: alphabet - 1,
                ..self.tally
            },
        };
        let code = Code::from_frequencies(&frequencies, classes, contexts);
        let mut header = Header {
            data: code.data_bytes(&frequencies, counted) * blocks / counted.max(1),
            ..self.header(alphabet, tally, BlockCode::Runs { contexts }, blocks)
        };
        header.table = header.code_bytes();
        Ok(Runs { code, header })
    }

    /// A `.wdl` file in runs or in tiles, whichever is smaller. A large
    /// layer's runs are first counted from a sample of its blocks, and
    /// counted whole only when tiles do not beat that estimate by a wide
    /// margin (they nearly always do: the whole count of a layer
    /// hardly ever matters).
    fn smaller_of_runs_and_tiles(&self) -> io::Result<Body> {
        let blocks = (self.values.len() as u64).div_ceil(self.block_slots);
        let mut tiles = None;
        if blocks >= 4 * RUNS_SAMPLE_BLOCKS {
            let estimate = self.runs_of_every(blocks / RUNS_SAMPLE_BLOCKS)?.length();
            tiles = self.tiles(estimate);
            if let Some(body) = tiles.take_if(|t| t.length() < estimate / 10 * 9) {
                return Ok(body);
            }
        }
        let runs = self.runs()?;
        let tiles = match tiles {
            Some(tiles) => Some(tiles),
            None => self.tiles(runs.length()),
        };
        Ok(match tiles {
            Some(tiles) if tiles.length() < runs.length() => tiles,
            _ => self.runs_body(runs),
        })
    }

    /// The file in runs: the blocks coded with the code `runs` has.
    fn runs_body(&self, runs: Runs) -> Body {
        let blocks = runs.header.blocks;
        let chunks = blocks.div_ceil(CHUNK) as usize;
        let code = &runs.code;
        let coded = parallel(
            self.threads,
            chunks,
            |chunk, out: &mut Vec<(usize, Vec<u8>, Vec<u64>)>| {
                let mut data = Vec::new();
                let mut ends = Vec::new();
                let mut runs = Vec::new();
                for block in chunk as u64 * CHUNK..((chunk as u64 + 1) * CHUNK).min(blocks) {
                    runs.clear();
                    self.runs_of(block, &mut |v, n| runs.push((v, n)));
                    code.encode_block(&runs, &mut data);
                    ends.push(data.len() as u64);
                }
                out.push((chunk, data, ends));
            },
        );
        body(runs.header, code.lengths().to_vec(), coded)
    }

    /// The file in tiles (a `.wdl` file), or `None` if its estimate does
    /// not come near `beat` bytes: a sample of the tiles counted by
    /// context with every neighbour, the neighbours that code smallest
    /// chosen, then every tile coded.
    fn tiles(&self, beat: u64) -> Option<Body> {
        let width_bits = TILE_WIDTH_BITS.min(self.block_slots.trailing_zeros() as u8);
        let tiling = Tiling::new(self.layer, self.block_slots, 1 << width_bits);
        let count = tiling.tiles();
        let chunks = count.div_ceil(CHUNK) as usize;
        let value_of = |tile: &tiles::Tile, r: usize, c: usize| {
            self.stored_at(tile.slot(r, c)).map(|v| v as u8)
        };
        let all = tiles::NEIGHBOURS.len();
        // Every `every`-th tile counted: the odds only start each tile.
        let every = count.div_ceil(SAMPLE_TILES);
        let sampled = count.div_ceil(every);
        let counted = parallel(
            self.threads,
            sampled.div_ceil(CHUNK) as usize,
            |chunk, out: &mut Vec<tiles::Counts>| {
                if out.is_empty() {
                    out.push(vec![[0; 3]; tiles::contexts(all)]);
                }
                for i in chunk as u64 * CHUNK..((chunk as u64 + 1) * CHUNK).min(sampled) {
                    let tile = tiling.tile(i * every);
                    Model::count(
                        all,
                        tile.rows,
                        tile.columns,
                        |r, c| value_of(&tile, r, c),
                        &mut out[0],
                    );
                }
            },
        );
        let mut counts = vec![[0u64; 3]; tiles::contexts(all)];
        for thread in counted {
            for (total, n) in counts.iter_mut().zip(thread) {
                for i in 0..3 {
                    total[i] += n[i];
                }
            }
        }
        // Fewer neighbours: the first ones, the high digits of a context.
        let fewer = |neighbours: usize| {
            let mut merged = vec![[0u64; 3]; tiles::contexts(neighbours)];
            for (context, n) in counts.iter().enumerate() {
                let m = &mut merged[context >> (2 * (all - neighbours))];
                for i in 0..3 {
                    m[i] += n[i];
                }
            }
            merged
        };
        let scale = count as f64 / sampled as f64;
        let (neighbours, estimate) = (1..=all)
            .map(|n| {
                let counts = fewer(n);
                let table = pack_table(&Model::fit(n, &counts).to_bytes(), ESTIMATE_LEVEL).len();
                let bytes = scale * Model::estimate_bits(&counts) / 8.0 + table as f64;
                (n, bytes)
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        // The adaptation usually saves a few percent on the estimate.
        let overhead = (BOUND_HEADER_LEN + Index::Grouped.bytes(count)) as f64;
        if 0.8 * estimate + overhead > beat as f64 {
            return None;
        }
        let model = Model::fit(neighbours, &fewer(neighbours));
        let coded = parallel(
            self.threads,
            chunks,
            |chunk, out: &mut Vec<(usize, Vec<u8>, Vec<u64>)>| {
                let mut data = Vec::new();
                let mut ends = Vec::new();
                for t in chunk as u64 * CHUNK..((chunk as u64 + 1) * CHUNK).min(count) {
                    let tile = tiling.tile(t);
                    let start = data.len();
                    let positions = std::cell::Cell::new(false);
                    model.encode(
                        tile.rows,
                        tile.columns,
                        |r, c| {
                            let value = value_of(&tile, r, c);
                            positions.set(positions.get() | value.is_some());
                            value
                        },
                        &mut data,
                    );
                    // A tile the coder codes in no bytes (its values all as
                    // the odds expect) still takes one: the decoder reads
                    // past the end as zeros, so a zero byte decodes the
                    // same, and a block of no bytes is left to tiles
                    // without positions (what a zeroed index entry claims).
                    if data.len() == start && positions.get() {
                        data.push(0);
                    }
                    ends.push(data.len() as u64);
                }
                out.push((chunk, data, ends));
            },
        );
        let code = BlockCode::Tiles {
            neighbours: neighbours as u8,
            width_bits,
        };
        let header = self.header(3, self.tally, code, count);
        Some(body(
            header,
            pack_table(&model.to_bytes(), TABLE_LEVEL),
            coded,
        ))
    }

    /// The header of the file, its data length still 0.
    fn header(&self, values: u32, tally: Tally, code: BlockCode, blocks: u64) -> Header {
        Header {
            version: LAYER_VERSION,
            kind: self.kind,
            content: self.content,
            black: self.layer.black,
            white: self.layer.white,
            slots: self.values.len() as u64,
            block_slots: self.block_slots,
            tally,
            values,
            code,
            blocks,
            data: 0,
            // Until the blocks' lengths are known: the usual one.
            index: Index::Grouped,
            table: 0,
            set: self.set,
            index_crc: 0,
        }
    }
}

/// The body of a file from its header, its code's table and its coded
/// chunks (`(chunk, bytes, each block's end in them)`, in any order): the
/// smaller index its blocks allow.
fn body(mut header: Header, table: Vec<u8>, mut coded: Vec<(usize, Vec<u8>, Vec<u64>)>) -> Body {
    coded.sort_by_key(|(chunk, _, _)| *chunk);
    let mut ends = Vec::with_capacity(header.blocks as usize);
    let mut crcs = Vec::with_capacity(header.blocks as usize);
    let mut base = 0u64;
    for (_, data, chunk_ends) in &coded {
        let mut start = 0u64;
        for &end in chunk_ends {
            let block = ends.len() as u64;
            ends.push(base + end);
            crcs.push(header.block_crc(block, &data[start as usize..end as usize]));
            start = end;
        }
        base += data.len() as u64;
    }
    header.data = base;
    header.index = Index::for_ends(&ends);
    header.table = table.len() as u64;
    let index = header.index.write(&ends, &crcs);
    header.index_crc = header.index_checksum([index.as_slice()]);
    Body {
        header,
        table,
        index,
        data: coded.into_iter().map(|(_, data, _)| data).collect(),
    }
}

/// Writes the files of `layer` for its values with distances of `metric`:
/// the distances, and with [`Metric::Dtz`] the win/draw/loss too (the
/// `.wdl` file, written first: a layer is complete once its `.dtz` file
/// is there). Returns the bytes written.
///
/// # Errors
/// Any I/O error.
#[allow(clippy::too_many_arguments)]
pub fn write_values(
    dir: &Path,
    kind: Kind,
    shape: &Shape,
    metric: Metric,
    layer: &Layer,
    values: &Values,
    tally: Tally,
    threads: usize,
) -> io::Result<u64> {
    let positions = positions_of(shape, layer);
    let mut bytes = 0;
    if metric == Metric::Dtz {
        bytes += write_file(
            dir,
            kind,
            Content::Wdl,
            layer,
            values,
            &positions,
            tally,
            Content::Wdl.block_slots(),
            threads,
        )?;
    }
    bytes += write_file(
        dir,
        kind,
        Content::Distance(metric),
        layer,
        values,
        &positions,
        tally,
        Content::Distance(metric).block_slots(),
        threads,
    )?;
    Ok(bytes)
}

/// Reads the values of `layer` with distances of `metric` whole: its
/// win/draw/loss file and its distance file, checked block by block.
/// Returns the values and the distance file's counts.
///
/// # Errors
/// A missing file, or one that is damaged, truncated or of another kind
/// or layer.
pub fn read_values(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
) -> Result<(Values, Tally), LayerError> {
    let wdl = open_required(dir, kind, Content::Wdl, layer)?;
    let distances = open_required(dir, kind, Content::Distance(metric), layer)?;
    let tally = distances.header().tally;
    let mut values = Values::draws(layer.slots as usize, tally.longest);
    wdl.each_run(|first, value, length| {
        if value != 0 {
            for slot in first..first + length {
                values.set(slot, value);
            }
        }
    })?;
    // A file's code has no value beyond its header's longest distance
    // (checked at open), so every code fits `values`.
    distances.each_run(|first, distance, length| {
        for slot in first..first + length {
            values.set(slot, code_of(values.code(slot), distance));
        }
    })?;
    Ok((values, tally))
}

/// The open `content` file of `layer`; a missing one is an error.
///
/// # Errors
/// As [`LayerFile::open`], and a missing file.
pub fn open_required(
    dir: &Path,
    kind: Kind,
    content: Content,
    layer: &Layer,
) -> Result<LayerFile, LayerError> {
    LayerFile::open(dir, kind, content, layer)?.ok_or_else(|| {
        let path = content.path(dir, layer.black, layer.white);
        LayerError::Io(path, io::Error::from(io::ErrorKind::NotFound))
    })
}

/// The win/draw/loss of `layer`, two bits a slot, from its `.wdl` file.
///
/// # Errors
/// As [`read_values`].
pub fn read_wdl(dir: &Path, kind: Kind, layer: &Layer) -> Result<WdlBits, LayerError> {
    let file = open_required(dir, kind, Content::Wdl, layer)?;
    let mut bits = WdlBits::draws(layer.slots);
    file.each_run(|first, value, length| bits.set_run(first, length, wdl_of(value)))?;
    Ok(bits)
}

/// The win, draw or loss a `.wdl` file's value stands for (its code has
/// no other values: checked at open).
pub fn wdl_of(value: u16) -> Wdl {
    match value {
        1 => Wdl::Win,
        2 => Wdl::Loss,
        _ => Wdl::Draw,
    }
}

/// What a `.wdl` file stores for `wdl`: the inverse of [`wdl_of`].
pub fn wdl_value(wdl: Wdl) -> u16 {
    match wdl {
        Wdl::Draw => 0,
        Wdl::Win => 1,
        Wdl::Loss => 2,
    }
}

/// The code ([`crate::solver::index::value::encode`]) of a slot whose `.wdl` value is
/// `sign` and whose distance file holds `distance` (a draw's distance is
/// free and ignored).
pub fn code_of(sign: u16, distance: u16) -> u16 {
    match sign {
        0 => 0,
        sign => 2 * distance + sign,
    }
}

/// The header of `layer`'s distance-to-progress file, checked (the file's
/// kind, length, header and code); `Ok(None)` when there is no such file.
///
/// # Errors
/// As [`LayerFile::open`].
pub fn read_header(dir: &Path, kind: Kind, layer: &Layer) -> Result<Option<Header>, LayerError> {
    read_values_header(dir, kind, Metric::Dtz, layer)
}

/// [`read_header`] for the file of `metric`.
///
/// # Errors
/// As [`LayerFile::open`].
pub fn read_values_header(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
) -> Result<Option<Header>, LayerError> {
    Ok(LayerFile::open(dir, kind, Content::Distance(metric), layer)?.map(|f| *f.header()))
}

/// [`read_values`] of the distances to progress.
///
/// # Errors
/// As [`read_values`].
pub fn read_layer(dir: &Path, kind: Kind, layer: &Layer) -> Result<(Values, Tally), LayerError> {
    read_values(dir, kind, Metric::Dtz, layer)
}

/// [`write_values`] of the distances to progress, for a caller without
/// the tables' [`Shape`] at hand (tests and tools).
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
    write_metric(dir, kind, Metric::Dtz, layer, values, tally)
}

/// [`write_layer`] for the distances of `metric`.
///
/// # Errors
/// Any I/O error.
pub fn write_metric(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
    values: &Values,
    tally: Tally,
) -> io::Result<u64> {
    let shape = Shape::shared(kind.size, kind.max_cars)
        .ok_or_else(|| io::Error::other(format!("no tables of {kind:?}")))?;
    write_values(dir, kind, &shape, metric, layer, values, tally, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::index::value::encode;

    fn four() -> (Kind, Shape) {
        let kind = Kind {
            size: 4,
            rules: Rules::Classic,
            max_cars: 3,
        };
        (kind, Shape::new(4, 3).unwrap())
    }

    /// A directory with a manifest of `kind` and nothing else.
    fn scratch(name: &str, kind: Kind) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dodgem-format-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        prepare_dir(&dir, kind).unwrap();
        dir
    }

    /// Values for every slot of `layer`: a mix of long and short runs of
    /// wins, draws and losses at distances up to `longest`.
    fn values_for(layer: &Layer, longest: u32) -> (Values, Tally) {
        let mut values = Values::draws(layer.slots as usize, longest);
        let mut tally = Tally::default();
        for slot in 0..layer.slots {
            let d = (slot / 7 % u64::from(longest + 1)) as u32;
            let value = match slot / 23 % 3 {
                0 => Dtz::Draw,
                1 => Dtz::Win(d),
                _ => Dtz::Loss(d),
            };
            values.set(slot, encode(value));
            tally.add(value);
        }
        (values, tally)
    }

    fn write(dir: &Path, kind: Kind, layer: &Layer, values: &Values, tally: Tally, block: u64) {
        let (_, shape) = four();
        let positions = positions_of(&shape, layer);
        for content in [Content::Wdl, Content::Distance(Metric::Dtz)] {
            write_file(
                dir, kind, content, layer, values, &positions, tally, block, 2,
            )
            .unwrap();
        }
    }

    #[test]
    fn files_round_trip_and_probe_position_by_position() {
        let (kind, shape) = four();
        let dir = scratch("round-trip", kind);
        let layer = shape.layer(6, 6);
        let positions = positions_of(&shape, &layer);
        for (longest, block) in [(20, 64), (200, 1 << 14), (300, 256)] {
            let (values, tally) = values_for(&layer, longest);
            write(&dir, kind, &layer, &values, tally, block);
            let (read, read_tally) = read_values(&dir, kind, Metric::Dtz, &layer).unwrap();
            assert_eq!(read_tally.longest, longest);
            let wdl = LayerFile::open(&dir, kind, Content::Wdl, &layer)
                .unwrap()
                .unwrap();
            let dtz = open_required(&dir, kind, Content::Distance(Metric::Dtz), &layer).unwrap();
            assert_eq!(dtz.header().block_slots, block);
            for slot in (0..layer.slots).filter(|&s| is_set(&positions, s)) {
                assert_eq!(read.get(slot), values.get(slot), "slot {slot}");
                let sign = stored(Content::Wdl, values.code(slot));
                assert_eq!(wdl.value(slot).ok(), sign);
                if let Some(d) = stored(Content::Distance(Metric::Dtz), values.code(slot)) {
                    assert_eq!(dtz.value(slot).unwrap(), d);
                }
            }
            let bits = read_wdl(&dir, kind, &layer).unwrap();
            assert!(
                (0..layer.slots)
                    .filter(|&s| is_set(&positions, s))
                    .all(|s| bits.get(s) == values.get(s).wdl())
            );
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    /// The file `bytes` (of format 4, its header `header`) in format
    /// `version` (3 or 2) with an index of `index`: its header of 80
    /// bytes, its CRCs unseeded.
    fn downgrade(bytes: &[u8], header: &Header, version: u32, index: Index) -> Vec<u8> {
        let (table_at, data_at) = (BOUND_HEADER_LEN as usize, header.data_at() as usize);
        let data = &bytes[data_at..];
        let mut ends = Vec::new();
        let mut crcs = Vec::new();
        let mut start = 0usize;
        for end in block_ends(bytes, header) {
            crcs.push(crc32fast::hash(&data[start..end as usize]));
            ends.push(end);
            start = end as usize;
        }
        let mut old = bytes[..HEADER_LEN as usize].to_vec();
        old.extend_from_slice(&bytes[table_at..table_at + header.table as usize]);
        old.extend_from_slice(&index.write(&ends, &crcs));
        old.extend_from_slice(data);
        old[8..12].copy_from_slice(&version.to_le_bytes());
        old[76] = if version == 2 { 0 } else { index.code() };
        if version == 2 {
            old[77..80].fill(0);
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(&old[8..72]);
        if version > 2 {
            crc.update(&old[76..80]);
        }
        crc.update(&old[HEADER_LEN as usize..HEADER_LEN as usize + header.table as usize]);
        old[72..76].copy_from_slice(&crc.finalize().to_le_bytes());
        old
    }

    /// Every block's end (from the data's start) in a file's grouped or
    /// full index, read from its bytes.
    fn block_ends(bytes: &[u8], header: &Header) -> Vec<u64> {
        let at = header.index_at() as usize;
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
        let mut ends = Vec::new();
        match header.index {
            Index::Full => {
                for block in 0..header.blocks() as usize {
                    ends.push(u64_at(at + block * FULL_ENTRY as usize));
                }
            }
            Index::Grouped => {
                let group = (GROUP_START + GROUP_BLOCKS * GROUPED_ENTRY) as usize;
                let mut end = 0;
                for block in 0..header.blocks() as usize {
                    let g = at + block / GROUP_BLOCKS as usize * group;
                    if block % GROUP_BLOCKS as usize == 0 {
                        end = u64_at(g);
                    }
                    let e = g + GROUP_START as usize + block % GROUP_BLOCKS as usize * 6;
                    end += u64::from(u16::from_le_bytes([bytes[e], bytes[e + 1]]));
                    ends.push(end);
                }
            }
        }
        ends
    }

    /// Makes `dir` a directory of format 2 (no table set).
    fn unbind(dir: &Path, kind: Kind) {
        fs::write(dir.join(MANIFEST), kind.manifest(UNBOUND_VERSION)).unwrap();
    }

    #[test]
    fn a_grouped_index_reads_across_groups_and_format_2_files_still_read() {
        let (kind, shape) = four();
        let dir = scratch("groups", kind);
        let layer = shape.layer(6, 6);
        let positions = positions_of(&shape, &layer);
        let (values, tally) = values_for(&layer, 20);
        write(&dir, kind, &layer, &values, tally, 64);
        let content = Content::Distance(Metric::Dtz);
        let path = content.path(&dir, 6, 6);
        let grouped = open_required(&dir, kind, content, &layer).unwrap();
        let header = *grouped.header();
        assert_eq!(
            (header.version, header.index),
            (LAYER_VERSION, Index::Grouped)
        );
        let blocks = header.blocks();
        assert!(blocks > 2 * GROUP_BLOCKS, "{blocks} blocks");
        let whole = |e: &Entry| (e.start, e.end, e.crc);
        let all: Vec<_> = grouped
            .entries(0, blocks)
            .unwrap()
            .iter()
            .map(whole)
            .collect();
        for block in 0..blocks {
            let one = grouped.entries(block, 1).unwrap();
            assert_eq!(whole(&one[0]), all[block as usize], "block {block}");
        }
        let ends: Vec<u64> = all.iter().map(|e| e.1).collect();
        assert_eq!(ends, block_ends(&fs::read(&path).unwrap(), &header));
        let bytes = fs::read(&path).unwrap();

        // A group's start moved: the index fails its checksum at open.
        let mut moved = bytes.clone();
        let second = (header.index_at() + GROUP_START + GROUP_BLOCKS * GROUPED_ENTRY) as usize;
        moved[second] ^= 1;
        fs::write(&path, &moved).unwrap();
        let error = open_required(&dir, kind, content, &layer).err().unwrap();
        assert!(
            error
                .to_string()
                .contains("its block index fails its checksum"),
            "{error}"
        );

        // The same file in format 3 (in a directory of format 2): no
        // index checksum, but the moved start breaks the chain of blocks,
        // seen at open.
        unbind(&dir, kind);
        let wdl = open_required(&dir, kind, Content::Wdl, &layer).err();
        assert!(wdl.is_some());
        let wdl_path = Content::Wdl.path(&dir, 6, 6);
        let wdl_bytes = fs::read(&wdl_path).unwrap();
        fs::write(dir.join(MANIFEST), kind.manifest_of_set(header.set)).unwrap();
        let wdl_header = *open_required(&dir, kind, Content::Wdl, &layer)
            .unwrap()
            .header();
        unbind(&dir, kind);
        fs::write(
            &wdl_path,
            downgrade(&wdl_bytes, &wdl_header, 3, wdl_header.index),
        )
        .unwrap();
        let mut old3 = downgrade(&bytes, &header, 3, Index::Grouped);
        fs::write(&path, &old3).unwrap();
        assert!(open_required(&dir, kind, content, &layer).is_ok());
        old3[HEADER_LEN as usize + header.table as usize + 64 * 6 + 8] ^= 1;
        fs::write(&path, &old3).unwrap();
        let error = open_required(&dir, kind, content, &layer).err().unwrap();
        assert!(
            error
                .to_string()
                .contains("block 64's index entry points outside the file"),
            "{error}"
        );

        // The same file in format 2: a full index, version 2, its CRC
        // over bytes 8..72 and the code only.
        let mut old = downgrade(&bytes, &header, 2, Index::Full);
        fs::write(&path, &old).unwrap();
        let file = open_required(&dir, kind, content, &layer).unwrap();
        assert_eq!(
            (file.header().version, file.header().index),
            (2, Index::Full)
        );
        assert!(old.len() > bytes.len() - 16);
        let (read, _) = read_values(&dir, kind, Metric::Dtz, &layer).unwrap();
        for slot in (0..layer.slots).filter(|&s| is_set(&positions, s)) {
            assert_eq!(read.get(slot), values.get(slot), "slot {slot}");
        }
        // Format 3 on checks bytes 76..80 (with its CRC, and the table's
        // length against the code's); format 2 never looked at them.
        old[77] = 9;
        fs::write(&path, &old).unwrap();
        assert!(open_required(&dir, kind, content, &layer).is_ok());
        // A file of format 2 or 3 is refused in a directory of format 3,
        // and one of format 4 in a directory of format 2.
        fs::write(&wdl_path, &wdl_bytes).unwrap();
        let error = LayerFile::open(&dir, kind, Content::Wdl, &layer)
            .err()
            .unwrap();
        assert!(
            error.to_string().contains("in a directory of format 2"),
            "{error}"
        );
        fs::write(dir.join(MANIFEST), kind.manifest_of_set(7)).unwrap();
        let error = open_required(&dir, kind, content, &layer).err().unwrap();
        assert!(
            error.to_string().contains("is a layer file of format 2"),
            "{error}"
        );
        fs::write(&path, &bytes).unwrap();
        let error = open_required(&dir, kind, content, &layer).err().unwrap();
        assert!(
            error
                .to_string()
                .contains("not to this directory's (0000000000000007)"),
            "{error}"
        );
        fs::remove_dir_all(&dir).unwrap();

        let dir = scratch("groups-4", kind);
        write(&dir, kind, &layer, &values, tally, 64);
        let path = content.path(&dir, 6, 6);
        let bytes = fs::read(&path).unwrap();
        let mut flipped = bytes.clone();
        flipped[77] = 9;
        fs::write(&path, &flipped).unwrap();
        let error = open_required(&dir, kind, content, &layer).err().unwrap();
        assert!(
            error.to_string().contains("a code's table of 9 bytes"),
            "{error}"
        );
        flipped[77] = bytes[77];
        flipped[76] = 0;
        fs::write(&path, &flipped).unwrap();
        // The file's length no longer fits its index.
        let error = open_required(&dir, kind, content, &layer).err().unwrap();
        assert!(matches!(error, LayerError::Truncated(_)), "{error}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_zeroed_index_a_moved_block_and_another_sets_file_are_refused() {
        let (kind, shape) = four();
        let dir = scratch("bound", kind);
        let layer = shape.layer(6, 6);
        let (values, tally) = values_for(&layer, 20);
        write(&dir, kind, &layer, &values, tally, 64);
        let content = Content::Distance(Metric::Dtz);
        let path = content.path(&dir, 6, 6);
        let bytes = fs::read(&path).unwrap();
        let file = open_required(&dir, kind, content, &layer).unwrap();
        let header = *file.header();
        let (index_at, data_at) = (header.index_at() as usize, header.data_at() as usize);

        // Zeroed under an open file (the same inode): every block it reads
        // then fails, none reads as a value.
        let mut zeroed = bytes.clone();
        zeroed[index_at..data_at].fill(0);
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .write_all_at(&zeroed, 0)
            .unwrap();
        for slot in [0, 64, 1000] {
            let error = file.value(slot).unwrap_err().to_string();
            assert!(
                error.contains("fails its checksum") || error.contains("no bytes"),
                "{error}"
            );
        }
        // And at open.
        let error = open_required(&dir, kind, content, &layer).err().unwrap();
        assert!(
            error
                .to_string()
                .contains("its block index fails its checksum"),
            "{error}"
        );
        // In format 3, where nothing seeds the checks: the entries no
        // longer reach the data's end.
        unbind(&dir, kind);
        let mut old = downgrade(&bytes, &header, 3, Index::Grouped);
        let old_index = HEADER_LEN as usize + header.table as usize;
        old[old_index..old_index + (data_at - index_at)].fill(0);
        fs::write(&path, &old).unwrap();
        let error = open_required(&dir, kind, content, &layer).err().unwrap();
        assert!(
            error
                .to_string()
                .contains("block 0 (slots 0 to 63) has no bytes but holds positions"),
            "{error}"
        );
        fs::remove_dir_all(&dir).unwrap();

        // Block 1's bytes and entry where block 2's were (same lengths
        // swapped in): its CRC was seeded with its number, so it fails.
        let dir = scratch("bound-2", kind);
        write(&dir, kind, &layer, &values, tally, 64);
        let path = content.path(&dir, 6, 6);
        let bytes = fs::read(&path).unwrap();
        let file = open_required(&dir, kind, content, &layer).unwrap();
        let entries = file.entries(0, 3).unwrap();
        let one = &entries[1];
        let data = &bytes[data_at + one.start as usize..data_at + one.end as usize];
        let h = *file.header();
        assert_eq!(h.block_crc(1, data), one.crc);
        // Block 1's bytes fail as any other block, of this file or of the
        // same layer's file of other content, set or layer, and unseeded.
        let elsewhere = [
            Header { ..h },
            Header {
                set: h.set ^ 1,
                ..h
            },
            Header {
                content: Content::Wdl,
                ..h
            },
            Header { black: 7, ..h },
        ];
        for (i, other) in elsewhere.iter().enumerate() {
            let block = if i == 0 { 2 } else { 1 };
            assert_ne!(other.block_crc(block, data), one.crc, "{i}");
        }
        assert_ne!(crc32fast::hash(data), one.crc);
        assert_ne!(h.block_crc(1, &[]), 0);
        fs::remove_dir_all(&dir).unwrap();

        // A same-named file of another table set: refused at open, and
        // failing every block under a file opened before.
        let other = scratch("bound-other", kind);
        write(&other, kind, &layer, &values, tally, 64);
        let mine = scratch("bound-mine", kind);
        write(&mine, kind, &layer, &values, tally, 64);
        let theirs = fs::read(content.path(&other, 6, 6)).unwrap();
        let path = content.path(&mine, 6, 6);
        let file = open_required(&mine, kind, content, &layer).unwrap();
        assert_eq!(theirs.len() as u64, fs::metadata(&path).unwrap().len());
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .write_all_at(&theirs, 0)
            .unwrap();
        for slot in [0, 64, 1000] {
            let error = file.value(slot).unwrap_err().to_string();
            assert!(error.contains("fails its checksum"), "{error}");
        }
        let error = open_required(&mine, kind, content, &layer).err().unwrap();
        assert!(
            error.to_string().contains("belongs to table set"),
            "{error}"
        );
        fs::remove_dir_all(&other).unwrap();
        fs::remove_dir_all(&mine).unwrap();
    }

    /// Win/draw/loss that changes slowly across rows and columns, as real
    /// tables do (where tiles beat runs).
    fn smooth_values(shape: &Shape, layer: &Layer) -> (Values, Tally) {
        let mut values = Values::draws(layer.slots as usize, 0);
        let mut tally = Tally::default();
        for block in &layer.blocks {
            for row in 0..block.black_sets {
                for column in 0..block.white_sets {
                    let value = match (row / 3 + column / 5 + row * column % 7 / 6) % 3 {
                        0 => Dtz::Draw,
                        1 => Dtz::Win(0),
                        _ => Dtz::Loss(0),
                    };
                    let slot = block.slot(row, column);
                    values.set(slot, encode(value));
                    let (black, white) =
                        (shape.black_set(block, row), shape.white_set(block, column));
                    if black & white == 0 {
                        tally.add(value);
                    }
                }
            }
        }
        (values, tally)
    }

    /// The 5 x 5 tables' largest layer with [`smooth_values`], in a
    /// scratch directory: the kind, directory, layer, positions, values
    /// and tally.
    fn smooth_layer(name: &str) -> (Kind, PathBuf, Layer, Vec<u64>, Values, Tally) {
        let kind = Kind {
            size: 5,
            rules: Rules::Textbook,
            max_cars: 4,
        };
        let shape = Shape::new(5, 4).unwrap();
        let layer = shape.layer(8, 8);
        let positions = positions_of(&shape, &layer);
        let (values, tally) = smooth_values(&shape, &layer);
        (kind, scratch(name, kind), layer, positions, values, tally)
    }

    #[test]
    fn tiles_round_trip_and_probe_position_by_position() {
        let (kind, dir, layer, positions, values, tally) = smooth_layer("tiles");
        for block in [1 << 10, 1 << 14] {
            write_file(
                &dir,
                kind,
                Content::Wdl,
                &layer,
                &values,
                &positions,
                tally,
                block,
                2,
            )
            .unwrap();
            let file = open_required(&dir, kind, Content::Wdl, &layer).unwrap();
            assert!(
                matches!(file.header().code, BlockCode::Tiles { .. }),
                "{:?}",
                file.header().code
            );
            assert!(file.header().blocks() > 1);
            // The odds are stored compressed, and read back whole.
            assert!(file.header().packed_table());
            assert!(file.header().table < file.header().code_bytes());
            let wdl = |slot: u64| stored(Content::Wdl, values.code(slot)).unwrap();
            let bits = read_wdl(&dir, kind, &layer).unwrap();
            let mut decoded: Option<(u64, WdlBits)> = None;
            for slot in (0..layer.slots).filter(|&s| is_set(&positions, s)) {
                assert_eq!(bits.get(slot), values.get(slot).wdl(), "slot {slot}");
                if slot % 997 == 0 {
                    assert_eq!(file.value(slot).unwrap(), wdl(slot), "slot {slot}");
                }
                // A block decoded whole, as the search's cache holds it.
                let (block, place) = file.block_of(slot);
                if decoded.as_ref().is_none_or(|(b, _)| *b != block) {
                    decoded = Some((block, file.decode_wdl(block).unwrap()));
                }
                let held = &decoded.as_ref().unwrap().1;
                assert_eq!(held.get(place), values.get(slot).wdl(), "slot {slot}");
            }
            // Runs of any stretch of slots.
            for (first, end) in [
                (0, 1),
                (5, 900),
                (1000, 1001),
                (layer.slots - 70, layer.slots),
            ] {
                let mut at = first;
                file.runs_between(first, end, |start, value, length| {
                    assert_eq!(start, at);
                    for slot in start..start + length {
                        if is_set(&positions, slot) {
                            assert_eq!(value, wdl(slot), "slot {slot}");
                        }
                    }
                    at += length;
                })
                .unwrap();
                assert_eq!(at, end);
            }
        }
        // The same values in runs take more room than in tiles.
        let runs = Source {
            set: 1,
            kind,
            content: Content::Wdl,
            layer: &layer,
            values: &values,
            positions: &positions,
            stored_of: &(0..=255)
                .map(|c| stored(Content::Wdl, c))
                .collect::<Vec<_>>(),
            tally,
            block_slots: 1 << 14,
            threads: 1,
        }
        .runs()
        .unwrap();
        let path = Content::Wdl.path(&dir, 8, 8);
        assert!(fs::metadata(&path).unwrap().len() < runs.length());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_tile_is_named_and_the_other_tiles_still_read() {
        let (kind, dir, layer, positions, values, tally) = smooth_layer("damaged-tile");
        write_file(
            &dir,
            kind,
            Content::Wdl,
            &layer,
            &values,
            &positions,
            tally,
            1 << 10,
            1,
        )
        .unwrap();
        let path = Content::Wdl.path(&dir, 8, 8);
        let file = open_required(&dir, kind, Content::Wdl, &layer).unwrap();
        let entries = file.entries(3, 1).unwrap();
        assert!(entries[0].end > entries[0].start);
        let mut bytes = fs::read(&path).unwrap();
        bytes[(file.header().data_at() + entries[0].start) as usize] ^= 0x5A;
        fs::write(&path, &bytes).unwrap();
        let file = open_required(&dir, kind, Content::Wdl, &layer).unwrap();
        let inside = (0..layer.slots).find(|&s| file.block_of(s).0 == 3).unwrap();
        let outside = (0..layer.slots).find(|&s| file.block_of(s).0 == 4).unwrap();
        match file.value(inside) {
            Err(LayerError::Corrupt(p, why)) => {
                assert_eq!(p, path);
                assert!(
                    why.contains("block 3 (rows ") && why.contains("fails its checksum"),
                    "{why}"
                );
            }
            other => panic!("a damaged tile read as {other:?}"),
        }
        assert!(file.value(outside).is_ok() && file.value(0).is_ok());
        assert!(read_wdl(&dir, kind, &layer).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_block_is_named_and_the_other_blocks_still_read() {
        let (kind, shape) = four();
        let dir = scratch("damaged-block", kind);
        let layer = shape.layer(6, 6);
        let (values, tally) = values_for(&layer, 10);
        write(&dir, kind, &layer, &values, tally, 64);
        let path = Content::Wdl.path(&dir, 6, 6);
        let file = LayerFile::open(&dir, kind, Content::Wdl, &layer)
            .unwrap()
            .unwrap();
        let entries = file.entries(1, 1).unwrap();
        let mut bytes = fs::read(&path).unwrap();
        let at = (file.header().data_at() + entries[0].start) as usize;
        bytes[at] ^= 0x5A;
        fs::write(&path, &bytes).unwrap();
        let file = LayerFile::open(&dir, kind, Content::Wdl, &layer)
            .unwrap()
            .unwrap();
        match file.value(64 + 3) {
            Err(LayerError::Corrupt(p, why)) => {
                assert_eq!(p, path);
                assert!(
                    why.contains("block 1 (slots 64 to 127) fails its checksum"),
                    "{why}"
                );
            }
            other => panic!("a damaged block read as {other:?}"),
        }
        assert!(file.value(3).is_ok() && file.value(2 * 64 + 3).is_ok());
        assert!(read_wdl(&dir, kind, &layer).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Rewrites bytes `at..` of the header of `path` and its CRC, so that
    /// only the checks of what the header says can refuse it.
    fn patch_header(path: &Path, at: usize, new: &[u8]) {
        let mut bytes = fs::read(path).unwrap();
        bytes[at..at + new.len()].copy_from_slice(new);
        let values = u32::from_le_bytes(bytes[60..64].try_into().unwrap()) as usize;
        let classes = codec::classes(1 << bytes[20]) as usize;
        let contexts = usize::from(bytes[22]);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[8..72]);
        crc.update(&bytes[76..80]);
        crc.update(&bytes[80..80 + (contexts * values * classes).min(bytes.len() - 80)]);
        bytes[72..76].copy_from_slice(&crc.finalize().to_le_bytes());
        fs::write(path, bytes).unwrap();
    }

    #[test]
    fn headers_that_cannot_be_true_are_refused() {
        let (kind, shape) = four();
        let dir = scratch("headers", kind);
        let layer = shape.layer(6, 6);
        let (values, tally) = values_for(&layer, 10);
        let path = Content::Wdl.path(&dir, 6, 6);
        for (at, new, complaint) in [
            (32, (1u64 << 62).to_le_bytes().to_vec(), "exceed its"),
            (60, 9u32.to_le_bytes().to_vec(), "a code of 9 values"),
            (64, u64::MAX.to_le_bytes().to_vec(), "could need"),
            (20, vec![40], "blocks of 2^40 slots"),
            (21, vec![7], "block code 7"),
            (22, vec![1], "a code of 1 contexts"),
            (15, vec![1], "holds distances to the end, not win/draw/loss"),
            (12, vec![5], "is from 5x5"),
            (
                77,
                vec![1, 0, 0],
                "a code's table of 1 bytes where it takes",
            ),
            (76, vec![7], "an index of layout 7"),
        ] {
            write(&dir, kind, &layer, &values, tally, 64);
            patch_header(&path, at, &new);
            let error = LayerFile::open(&dir, kind, Content::Wdl, &layer)
                .err()
                .unwrap();
            assert!(
                error.to_string().contains(complaint),
                "{complaint}: {error}"
            );
        }
        // Padded or cut short.
        write(&dir, kind, &layer, &values, tally, 64);
        let bytes = fs::read(&path).unwrap();
        for length in [bytes.len() - 1, bytes.len() + 1, 40, 0] {
            let mut changed = bytes.clone();
            changed.resize(length, 0);
            fs::write(&path, &changed).unwrap();
            assert!(LayerFile::open(&dir, kind, Content::Wdl, &layer).is_err());
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn what_stands_at_a_layer_path_is_checked_before_it_is_read() {
        let (kind, shape) = four();
        let dir = scratch("not-files", kind);
        let layer = shape.layer(6, 6);
        let path = Content::Wdl.path(&dir, 6, 6);
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        if made.is_ok_and(|s| s.success()) {
            let error = LayerFile::open(&dir, kind, Content::Wdl, &layer)
                .err()
                .unwrap();
            assert!(error.to_string().contains("not a regular file"), "{error}");
            fs::remove_file(&path).unwrap();
        }
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let error = LayerFile::open(&dir, kind, Content::Wdl, &layer)
            .err()
            .unwrap();
        assert!(error.to_string().contains("not a regular file"), "{error}");
        fs::remove_file(&path).unwrap();
        fs::create_dir(&path).unwrap();
        let error = LayerFile::open(&dir, kind, Content::Wdl, &layer)
            .err()
            .unwrap();
        assert!(error.to_string().contains("not a regular file"), "{error}");
        // A manifest that is no file, or far too long.
        let manifest = dir.join(MANIFEST);
        fs::remove_file(&manifest).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &manifest).unwrap();
        assert!(read_kind(&dir).is_err());
        fs::remove_file(&manifest).unwrap();
        fs::write(&manifest, vec![b'x'; 1 << 20]).unwrap();
        assert!(
            read_kind(&dir)
                .err()
                .unwrap()
                .to_string()
                .contains("too long")
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_old_directory_or_file_names_the_conversion() {
        let (kind, shape) = four();
        let dir = scratch("old", kind);
        fs::write(dir.join(MANIFEST), kind.manifest(OLD_VERSION)).unwrap();
        let error = read_kind(&dir).err().unwrap();
        assert!(matches!(error, LayerError::OldFormat(_)));
        assert!(
            error.to_string().contains("dodgem solve --convert OLD NEW"),
            "{error}"
        );
        assert!(prepare_dir(&dir, kind).is_err());
        let layer = shape.layer(6, 6);
        let mut old = b"DODGEMLT".to_vec();
        old.extend_from_slice(&1u32.to_le_bytes());
        old.resize(100, 0);
        fs::write(Content::Wdl.path(&dir, 6, 6), &old).unwrap();
        let error = LayerFile::open(&dir, kind, Content::Wdl, &layer)
            .err()
            .unwrap();
        assert!(error.to_string().contains("--convert"), "{error}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn manifests_round_trip() {
        let (kind, _) = four();
        for version in [OLD_VERSION, UNBOUND_VERSION] {
            let parsed = Kind::parse(&kind.manifest(version)).unwrap();
            assert_eq!(
                (parsed.kind, parsed.version, parsed.set),
                (kind, version, None)
            );
        }
        let parsed = Kind::parse(&kind.manifest_of_set(0xfeed)).unwrap();
        assert_eq!(
            (parsed.kind, parsed.version, parsed.set),
            (kind, VERSION, Some(0xfeed))
        );
        // Format 3 names its set, in 16 digits.
        assert!(Kind::parse(&kind.manifest(VERSION)).is_none());
        let short = kind.manifest(VERSION) + "set feed\n";
        assert!(Kind::parse(&short).is_none());
        assert!(Kind::parse("something else\n").is_none());
    }
}

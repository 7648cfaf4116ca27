//! A table directory: what it holds ([`Kind`], [`Content`], [`Metric`]),
//! its manifest (written by [`prepare_dir`], read by [`read_directory`]),
//! its lock ([`lock_dir`]), the paths of its layer files, and files
//! opened safely ([`open_regular`]) and written durably
//! ([`write_durably`]).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::board::Rules;

use super::error::{CONVERT_HINT, LayerError};
use super::{
    BLOCK_SLOTS, LOCK_FILE, MANIFEST, OLD_VERSION, UNBOUND_VERSION, VERSION, WDL_BLOCK_SLOTS,
};

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

    pub(super) fn parse(text: &str) -> Option<Manifest> {
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
    pub(in crate::solver) fn rules_code(&self) -> u8 {
        match self.rules {
            Rules::Textbook => 0,
            Rules::Classic => 1,
        }
    }
}

/// What the distances of a layer file count: plies to the next progress
/// move of best play (every layer has it), or plies to the end of the game
/// under best play, the winner hurrying, the loser delaying (derived from
/// the first, see [`crate::solver::passes::dte`]). Both are read as [`Dtz`](crate::solver::index::value::Dtz) values.
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
    pub(in crate::solver) fn code(self) -> u8 {
        match self {
            Content::Distance(Metric::Dtz) => 0,
            Content::Distance(Metric::Dte) => 1,
            Content::Wdl => 2,
        }
    }

    pub(super) fn from_code(code: u8) -> Option<Content> {
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

    pub(in crate::solver) fn name(self) -> &'static str {
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

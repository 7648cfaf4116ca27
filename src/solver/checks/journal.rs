//! The verify journal: the pairs a check has finished, each with a
//! fingerprint of its files, so that a check started again skips them
//! ([`Journal`]).

use std::path::{Path, PathBuf};

use crate::solver::files::format::{self, Content, Kind, LayerError, Metric};
use crate::solver::index::layers::{Layer, Shape};

use crate::solver::run::plan::{LayeredError, ahead_of};

/// The names of a pair of layers, as the verify journal records them
/// (`.dte` after each for the distances to the end).
pub(in crate::solver) fn journal_name(layers: &[Layer], metric: Metric) -> String {
    let suffix = match metric {
        Metric::Dtz => "",
        Metric::Dte => ".dte",
    };
    layers
        .iter()
        .map(|layer| format!("{}{suffix}", layer.name()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the journal records of one checked pair.
#[derive(Clone, Copy, Debug)]
pub(super) struct JournalEntry {
    /// What was checked: [`pair_fingerprint`].
    pub(super) files: u64,
    pub(super) positions: u64,
    pub(super) mismatches: u64,
}

/// The error of a file that is missing.
pub(super) fn missing(path: PathBuf) -> LayerError {
    LayerError::Io(path, std::io::Error::from(std::io::ErrorKind::NotFound))
}

/// The line that binds a verify journal to the directory it checks: the
/// directory's full path and its table set (none before format 3).
pub(super) fn journal_binding(dir: &Path, manifest: &format::Manifest) -> String {
    let full = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let set = manifest
        .set
        .map_or_else(|| "none".to_string(), |set| format!("{set:016x}"));
    format!("tables {:?} set {set}", full.to_string_lossy().into_owned())
}

/// The longest journal the check of `pairs` can write: a line a pair and
/// metric, with room to spare.
pub(super) fn journal_limit(pairs: &[Vec<Layer>]) -> u64 {
    4096 + 2 * pairs.len() as u64 * 256
}

/// What the check of a pair's `metric` reads, identified: the
/// [`format::LayerFile::fingerprint`] of the pair's `.wdl` and distance
/// files and those of the layers ahead, mixed.
pub(super) fn pair_fingerprint(
    dir: &Path,
    manifest: &format::Manifest,
    shape: &Shape,
    layers: &[Layer],
    metric: Metric,
) -> Result<u64, LayerError> {
    let mut all: Vec<Layer> = layers.to_vec();
    all.extend(layers.iter().filter_map(|l| ahead_of(shape, l)));
    let mut digest = 0u64;
    for layer in &all {
        for content in [Content::Wdl, Content::Distance(metric)] {
            let file = format::LayerFile::open_in(dir, manifest, manifest.kind, content, layer)?
                .ok_or_else(|| missing(content.path(dir, layer.black, layer.white)))?;
            digest = digest.rotate_left(7) ^ file.fingerprint();
        }
    }
    Ok(digest)
}

/// The verify journal: a first line naming the kind of table, a second
/// naming the directory ([`journal_binding`]), then one line per checked
/// pair, `pair <layer names> files <what was read> positions <n>
/// mismatches <n>`, each flushed to disk before the next pair starts.
pub(super) struct Journal {
    path: PathBuf,
    file: std::fs::File,
    pub(super) done: std::collections::HashMap<String, JournalEntry>,
}

impl Journal {
    /// Opens (or starts) the journal at `path` of the check of `kind`'s
    /// tables in the directory `binding` names; a journal longer than
    /// `limit` bytes is refused unread.
    pub(super) fn open(
        path: &Path,
        kind: Kind,
        binding: &str,
        limit: u64,
    ) -> Result<Journal, LayeredError> {
        use std::io::Write;
        let heading = format!(
            "dodgem verify journal 2 size {} rules {} max-cars {}",
            kind.size,
            kind.rules.name(),
            kind.max_cars
        );
        let bad = |why: String| LayeredError::Journal(path.to_path_buf(), why);
        let io = |e| LayeredError::Io(path.to_path_buf(), e);
        let mut done = std::collections::HashMap::new();
        let existing =
            match crate::files::open_regular(path) {
                Ok(file) => {
                    let length = file.metadata().map_err(io)?.len();
                    if length > limit {
                        return Err(bad(format!(
                            "bad content: {length} bytes, far more than a verify journal of these \
                         tables takes"
                        )));
                    }
                    let mut bytes = Vec::with_capacity(length as usize);
                    std::io::Read::read_to_end(&mut std::io::Read::take(&file, limit), &mut bytes)
                        .map_err(io)?;
                    Some(String::from_utf8(bytes).map_err(|_| {
                        bad("bad content: not text, so not a verify journal".into())
                    })?)
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
                    return Err(bad(
                    "is not a regular file (a journal must be one: a FIFO or device is refused)"
                        .into(),
                ));
                }
                Err(e) => return Err(io(e)),
            };
        if let Some(text) = &existing {
            let mut lines = text.lines();
            let first = lines.next().unwrap_or_default();
            if first != heading {
                return Err(bad(if first.starts_with("dodgem verify journal") {
                    format!(
                        "is the journal of another check (its first line is {first:?}, this \
                         check's {heading:?}): name another journal, or remove it to check again"
                    )
                } else {
                    format!("bad content: not a verify journal (its first line is {first:?})")
                }));
            }
            let second = lines.next().unwrap_or_default();
            if second != binding {
                return Err(bad(format!(
                    "is the journal of the check of other tables (it records {second:?}, this \
                     check is of {binding:?}): name another journal, or remove it to check again"
                )));
            }
            let records: Vec<&str> = lines.collect();
            let cut_short = !text.ends_with('\n');
            for (i, line) in records.iter().enumerate() {
                match parse_journal_line(line) {
                    Some((names, entry)) => {
                        done.insert(names, entry);
                    }
                    // A last line cut short by a kill is not a record:
                    // that pair is checked again.
                    None if cut_short && i + 1 == records.len() => {}
                    None => {
                        return Err(bad(format!(
                            "bad content: line {} is not a record of a checked pair: {:?}",
                            i + 3,
                            line.chars().take(80).collect::<String>()
                        )));
                    }
                }
            }
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        if existing.is_none() {
            writeln!(file, "{heading}\n{binding}").map_err(io)?;
        } else if let Some(text) = existing.as_deref().filter(|t| !t.ends_with('\n')) {
            // A line cut short is dropped, so the next record starts on
            // a line of its own and the journal holds whole lines only.
            let whole = text.rfind('\n').map_or(0, |at| at + 1);
            file.set_len(whole as u64).map_err(io)?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            file,
            done,
        })
    }

    pub(super) fn record(&mut self, names: &str, entry: JournalEntry) -> Result<(), LayeredError> {
        use std::io::Write;
        let io = |e| LayeredError::Io(self.path.clone(), e);
        writeln!(
            self.file,
            "pair {names} files {:016x} positions {} mismatches {}",
            entry.files, entry.positions, entry.mismatches
        )
        .map_err(io)?;
        self.file.sync_data().map_err(io)?;
        self.done.insert(names.to_string(), entry);
        Ok(())
    }
}

fn parse_journal_line(line: &str) -> Option<(String, JournalEntry)> {
    let rest = line.strip_prefix("pair ")?;
    let (names, rest) = rest.split_once(" files ")?;
    let (files, counts) = rest.split_once(" positions ")?;
    let (positions, mismatches) = counts.split_once(" mismatches ")?;
    (files.len() == 16).then_some(())?;
    Some((
        names.to_string(),
        JournalEntry {
            files: u64::from_str_radix(files, 16).ok()?,
            positions: positions.parse().ok()?,
            mismatches: mismatches.parse().ok()?,
        },
    ))
}

//! [`Tables`]: the reader that probes solved tables a position at a time,
//! from a directory of layer files (each probe reads and decodes one block
//! of a file, see [`super::format`]) or from layers solved in memory (the
//! built-in 3 x 3 and 4 x 4 tables).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::cache::{BlockCache, Reading, Tag, WdlReader, wdl_budget};
use super::format::{Content, Kind, LayerError, LayerFile, Metric, code_of, wdl_value};
use crate::board::Position;
use crate::solver::index::layers::Shape;
use crate::solver::index::value::{Dtz, Values, Wdl, decode};

/// The open files of a directory, by layer number.
struct Files {
    dir: PathBuf,
    wdl: Vec<LayerFile>,
    /// Every layer's distances to progress, or none (a directory whose
    /// every layer has its distances to the end may go without).
    dtz: Option<Vec<LayerFile>>,
    /// Every layer's distances to the end, or none.
    dte: Option<Vec<LayerFile>>,
    blocks: BlockCache,
}

/// Where a [`Tables`] reads its layers.
enum Source {
    /// Layer files in a directory, open.
    Dir(Box<Files>),
    /// Every layer in memory (the built-in tables), by layer number.
    Memory(Vec<Arc<Values>>),
}

/// The tables of one kind, probed position by position: from a directory
/// of layer files, a block at a time, or from layers solved in memory.
pub struct Tables {
    source: Source,
    kind: Kind,
    shape: Arc<Shape>,
    /// Every layer has its distances to the end ([`Metric::Dte`]).
    dte: bool,
    /// Every layer has its distances to progress ([`Metric::Dtz`]).
    dtz: bool,
    /// What was wrong with layers found unusable.
    errors: Mutex<Errors>,
}

impl Tables {
    /// Opens the tables in `dir`: its manifest and every layer's files
    /// (header, code and whole block index checked; each block is checked
    /// against its CRC when read). The distances to the end are used when
    /// every layer has them; missing or damaged `.dte` files are reported
    /// by name ([`Tables::take_errors`]) and the tables are used without
    /// them. In a directory of the current format the `.dtz` files may be
    /// missing where every layer has its `.dte` file.
    ///
    /// # Errors
    /// A missing or bad manifest, an old-format directory, or a missing or
    /// damaged `.wdl` or `.dtz` file.
    pub fn open(dir: &Path) -> Result<Tables, LayerError> {
        let manifest = super::format::read_directory(dir)?;
        let kind = manifest.kind;
        // The size of the index is checked before it is built.
        let shape = crate::solver::run::plan::shape_of(kind)
            .ok()
            .ok_or_else(|| {
                LayerError::Manifest(
                    dir.join(super::format::MANIFEST),
                    format!(
                        "no tables for size {} with at most {} cars",
                        kind.size, kind.max_cars
                    ),
                )
            })?;
        raise_open_file_limit(3 * layer_count(&shape) + 64);
        let mut wdl = Vec::new();
        let mut dtz = Vec::new();
        let mut dte = Vec::new();
        for (black, white) in layer_order(&shape) {
            let layer = shape.layer(black, white);
            let file = LayerFile::open_in(dir, &manifest, kind, Content::Wdl, &layer)?
                .ok_or_else(|| incomplete(dir, Content::Wdl.path(dir, black, white)))?;
            wdl.push(file);
            for (metric, files) in [(Metric::Dtz, &mut dtz), (Metric::Dte, &mut dte)] {
                let content = Content::Distance(metric);
                let opened = match LayerFile::open_in(dir, &manifest, kind, content, &layer) {
                    Ok(Some(file)) => Ok(file),
                    Ok(None) => Err(None),
                    Err(error) => Err(Some(error)),
                };
                files.push((content.path(dir, black, white), opened));
            }
        }
        let mut errors = Errors::default();
        let dte = match Distances::of(dte) {
            Distances::All(files) => Some(files),
            Distances::None => None,
            partial => {
                errors.note(format!(
                    "{}; the tables are used without their distances to the end (`score cp` \
                     rather than `score mate`, `solve` without `dte`): run `dodgem solve --dte \
                     {}` to complete them",
                    partial.describe(dir, Metric::Dte),
                    dir.display()
                ));
                None
            }
        };
        // Without every `.dte` file the distances to progress are needed;
        // with them, a directory of the current format may go without.
        let dtz_optional = dte.is_some() && manifest.version >= super::format::VERSION;
        let dtz = match Distances::of(dtz) {
            Distances::All(files) => Some(files),
            Distances::None if dtz_optional => None,
            partial if dtz_optional => {
                errors.note(format!(
                    "{}; the tables are used without their distances to progress",
                    partial.describe(dir, Metric::Dtz)
                ));
                None
            }
            Distances::Damaged { error, .. } => return Err(error),
            Distances::Missing { first, .. } => return Err(incomplete(dir, first[0].clone())),
            Distances::None => {
                let low = shape.min_progress();
                return Err(incomplete(dir, Metric::Dtz.path(dir, low, low)));
            }
        };
        let block_slots = wdl
            .iter()
            .map(|f| f.header().block_slots)
            .max()
            .unwrap_or(1);
        let has_dte = dte.is_some();
        let has_dtz = dtz.is_some();
        let files = Files {
            dir: dir.to_path_buf(),
            wdl,
            dtz,
            dte,
            blocks: BlockCache::new(block_slots),
        };
        Ok(Tables::new(
            Source::Dir(Box::new(files)),
            kind,
            shape,
            has_dte,
            has_dtz,
            errors,
        ))
    }

    /// Tables of `kind` from the values of every layer, by `(black,
    /// white)` progress (see [`crate::solver::solve_in_memory`]), and the
    /// distances to the end if known (see [`crate::solver::dte_in_memory`]).
    ///
    /// # Panics
    /// If `kind` has no tables or a layer is missing.
    pub fn from_memory(
        kind: Kind,
        layers: std::collections::HashMap<(u32, u32), Values>,
        dte: Option<std::collections::HashMap<(u32, u32), Values>>,
    ) -> Tables {
        let shape = crate::solver::run::plan::shape_of(kind).expect("solved tables have a shape");
        let has_dte = dte.is_some();
        let mut values = Vec::new();
        for mut metric in std::iter::once(layers).chain(dte) {
            for (a, b) in layer_order(&shape) {
                let layer = metric.remove(&(a, b)).expect("every layer is solved");
                values.push(Arc::new(layer));
            }
        }
        Tables::new(
            Source::Memory(values),
            kind,
            shape,
            has_dte,
            true,
            Errors::default(),
        )
    }

    fn new(
        source: Source,
        kind: Kind,
        shape: Arc<Shape>,
        dte: bool,
        dtz: bool,
        errors: Errors,
    ) -> Tables {
        Tables {
            source,
            kind,
            shape,
            dte,
            dtz,
            errors: Mutex::new(errors),
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
            Source::Dir(files) => Some(&files.dir),
            Source::Memory(_) => None,
        }
    }

    /// Whether the tables know the distance to the end of every position
    /// ([`Metric::Dte`]) as well as the distance to progress.
    pub fn has_dte(&self) -> bool {
        self.dte
    }

    /// Whether the tables know the distance to progress of every position
    /// ([`Metric::Dtz`]); tables made by the one pass have the distance to
    /// the end instead.
    pub fn has_dtz(&self) -> bool {
        self.dtz
    }

    /// The metric [`Tables::probe`] reads: the distance to progress where
    /// the tables have it, else the distance to the end.
    fn first_metric(&self) -> Metric {
        if self.dtz { Metric::Dtz } else { Metric::Dte }
    }

    /// What identifies the win/draw/loss files the tables read (each
    /// file's [`LayerFile::fingerprint`], mixed): 0 for tables in memory.
    /// A checkpoint of work on the tables records it.
    pub fn fingerprint(&self) -> u64 {
        match &self.source {
            Source::Memory(_) => 0,
            Source::Dir(files) => files.wdl.iter().fold(0u64, |digest, file| {
                digest.rotate_left(5) ^ file.fingerprint()
            }),
        }
    }

    /// Number of layer `(black, white)`: `0..self.layers()`.
    fn layer_id(&self, black: u32, white: u32) -> usize {
        let low = self.shape.min_progress();
        ((black - low) * self.span() + (white - low)) as usize
    }

    fn span(&self) -> u32 {
        self.shape.max_progress() - self.shape.min_progress() + 1
    }

    /// Number of layers.
    pub fn layers(&self) -> usize {
        layer_count(&self.shape)
    }

    /// The stored value of `position` for its side to move, with its
    /// distance to progress (to the end in tables of the one pass, which
    /// have no other: see [`Tables::has_dtz`]); `Ok(None)` for a position
    /// the tables do not cover (another size, a finished game, more cars
    /// than the limit).
    ///
    /// # Errors
    /// A damaged block of the layer's files, or a failed read.
    pub fn probe(&self, position: &Position) -> Result<Option<Dtz>, LayerError> {
        self.probe_metric(self.first_metric(), position)
    }

    /// The stored value of `position` with its distance in `metric`:
    /// `Ok(None)` where [`Tables::probe`] says so, and for
    /// [`Metric::Dte`] when the tables do not have it. From a directory:
    /// a block of the `.wdl` file, and for a won or lost position one of
    /// the distance file.
    ///
    /// # Errors
    /// A damaged block of the layer's files, or a failed read (reported
    /// once in [`Tables::take_errors`] too).
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
        // Tables of the one pass: the distance to the end instead.
        let metric = if metric == Metric::Dtz && !self.dtz {
            Metric::Dte
        } else {
            metric
        };
        let id = self.layer_id(black, white);
        let files = match &self.source {
            Source::Memory(layers) => {
                let first = match metric {
                    Metric::Dtz => 0,
                    Metric::Dte => self.layers(),
                };
                return Ok(Some(layers[first + id].get(slot)));
            }
            Source::Dir(files) => files,
        };
        let value = (|| -> Result<Dtz, LayerError> {
            // Win, draw or loss from a block decoded once and kept: a tile
            // takes far longer to decode than one slot takes to read.
            let file = &files.wdl[id];
            let (block, place) = file.block_of(slot);
            let tag = Tag {
                layer: id as u32,
                block,
            };
            let mut failure = None;
            let decoded = files.blocks.get(tag, || {
                file.decode_wdl(block)
                    .map_err(|error| failure = Some(error))
                    .ok()
            });
            let sign = match decoded.map(|bits| wdl_value(bits.get(place))) {
                None => {
                    return Err(failure.unwrap_or_else(|| {
                        LayerError::Unusable(format!("{}: a block unread", file.path().display()))
                    }));
                }
                Some(0) => return Ok(Dtz::Draw),
                Some(sign) => sign,
            };
            let distances = match metric {
                Metric::Dtz => &files.dtz.as_ref().ok_or_else(|| no_dtz(&files.dir))?[id],
                Metric::Dte => &files.dte.as_ref().expect("has_dte")[id],
            };
            Ok(decode(code_of(sign, distances.value(slot)?)))
        })();
        value
            .map(Some)
            .inspect_err(|error| self.report(error.to_string()))
    }

    /// The values of every slot of layer `(black, white)` with their
    /// distances to progress, a chunk at a time in slot order
    /// (`visit(first slot, values)`): decoded from its files a block at a
    /// time, or from memory at once.
    ///
    /// # Errors
    /// A damaged block, or a failed read.
    pub fn stream_values(
        &self,
        black: u32,
        white: u32,
        visit: &mut dyn FnMut(u64, &Values),
    ) -> Result<(), LayerError> {
        let id = self.layer_id(black, white);
        let files = match &self.source {
            Source::Memory(layers) => {
                visit(0, &layers[id]);
                return Ok(());
            }
            Source::Dir(files) => files,
        };
        let dtz = match (&files.dtz, &files.dte) {
            (Some(dtz), _) => &dtz[id],
            (None, Some(dte)) => &dte[id],
            (None, None) => return Err(no_dtz(&files.dir)),
        };
        let wdl = &files.wdl[id];
        let (slots, longest) = (dtz.header().slots, dtz.header().tally.longest);
        let chunk = (1u64 << 20)
            .max(wdl.header().block_slots)
            .max(dtz.header().block_slots);
        for first in (0..slots).step_by(chunk as usize) {
            let end = (first + chunk).min(slots);
            let mut values = Values::draws((end - first) as usize, longest);
            // Win, draw or loss first, then the distances of the won and
            // lost slots.
            wdl.runs_between(first, end, |at, value, length| {
                if value != 0 {
                    for s in at - first..at - first + length {
                        values.set(s, value);
                    }
                }
            })?;
            dtz.runs_between(first, end, |at, distance, length| {
                for s in at - first..at - first + length {
                    values.set(s, code_of(values.code(s), distance));
                }
            })?;
            visit(first, &values);
        }
        Ok(())
    }

    /// Notes what was wrong with a layer, for [`Tables::take_errors`].
    fn report(&self, why: String) {
        self.errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .note(why);
    }

    /// What was found wrong with layers since the last call (each
    /// unusable file or block once).
    pub fn take_errors(&self) -> Vec<String> {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut errors.new)
    }

    /// Win, draw or loss of `position` for the side to move, for probes
    /// inside the search: `None` when the tables do not cover it, its
    /// block cannot be read, or `TablebaseCache` is 0. From a directory
    /// the block is decoded once and kept (see [`BlockCache`]); with
    /// [`Reading::Cached`] a block not in memory is not decoded (`None`).
    pub fn probe_wdl(
        &self,
        reader: &mut WdlReader,
        position: &Position,
        reading: Reading,
    ) -> Option<Wdl> {
        let (black, white, slot) = self.shape.locate(position)?;
        let id = self.layer_id(black, white);
        let files = match &self.source {
            Source::Memory(layers) => return Some(layers[id].get(slot).wdl()),
            Source::Dir(files) => files,
        };
        if wdl_budget() == 0 {
            return None;
        }
        let file = &files.wdl[id];
        let (block, place) = file.block_of(slot);
        let tag = Tag {
            layer: id as u32,
            block,
        };
        reader.probe(&files.blocks, tag, place, || match reading {
            Reading::Cached => None,
            Reading::Decode => file
                .decode_wdl(block)
                .inspect_err(|error| self.report(error.to_string()))
                .ok(),
        })
    }
}

/// The error of a probe of the distances to progress in a directory
/// without them.
fn no_dtz(dir: &Path) -> LayerError {
    LayerError::Unusable(format!(
        "{} has no distances to progress (.dtz files)",
        dir.display()
    ))
}

/// The error of a directory missing `path`.
fn incomplete(dir: &Path, path: PathBuf) -> LayerError {
    LayerError::Manifest(
        dir.to_path_buf(),
        format!(
            "is incomplete: {} is missing (is the solve finished?)",
            path.display()
        ),
    )
}

/// What a directory holds of one metric's distance files, from each
/// layer's path and what opening it gave (`Err(None)`: missing).
enum Distances {
    All(Vec<LayerFile>),
    None,
    /// Some layers' files are missing: how many of how many, and the
    /// first few.
    Missing {
        missing: usize,
        of: usize,
        first: Vec<PathBuf>,
    },
    /// Files that cannot be used: the first's error, and how many.
    Damaged {
        error: LayerError,
        damaged: usize,
    },
}

/// Missing files a message names at most.
const NAMED: usize = 3;

impl Distances {
    fn of(opened: Vec<(PathBuf, Result<LayerFile, Option<LayerError>>)>) -> Distances {
        let of = opened.len();
        let missing: Vec<&PathBuf> = opened
            .iter()
            .filter(|(_, f)| matches!(f, Err(None)))
            .map(|(path, _)| path)
            .collect();
        let damaged = opened
            .iter()
            .filter(|(_, f)| matches!(f, Err(Some(_))))
            .count();
        if missing.len() == of {
            return Distances::None;
        }
        if damaged > 0 {
            let error = opened
                .into_iter()
                .find_map(|(_, f)| f.err().flatten())
                .expect("a damaged file");
            return Distances::Damaged { error, damaged };
        }
        if !missing.is_empty() {
            return Distances::Missing {
                missing: missing.len(),
                of,
                first: missing.into_iter().take(NAMED).cloned().collect(),
            };
        }
        Distances::All(opened.into_iter().filter_map(|(_, f)| f.ok()).collect())
    }

    /// What is wrong, naming the files.
    fn describe(&self, dir: &Path, metric: Metric) -> String {
        let ext = Content::Distance(metric).extension();
        match self {
            Distances::Missing { missing, of, first } => {
                let named: Vec<String> = first.iter().map(|p| p.display().to_string()).collect();
                let more = if *missing > first.len() { ", ..." } else { "" };
                format!(
                    "{}: {missing} of the {of} .{ext} files ({}) are missing: {}{more}",
                    dir.display(),
                    metric.name(),
                    named.join(", ")
                )
            }
            Distances::Damaged { error, damaged } if *damaged > 1 => {
                format!(
                    "{error} (and {} other .{ext} files cannot be used)",
                    damaged - 1
                )
            }
            Distances::Damaged { error, .. } => error.to_string(),
            Distances::All(_) | Distances::None => String::new(),
        }
    }
}

/// Every layer of `shape`, in the order of their numbers.
fn layer_order(shape: &Shape) -> Vec<(u32, u32)> {
    let (low, high) = (shape.min_progress(), shape.max_progress());
    (low..=high)
        .flat_map(|a| (low..=high).map(move |b| (a, b)))
        .collect()
}

fn layer_count(shape: &Shape) -> usize {
    let span = (shape.max_progress() - shape.min_progress() + 1) as usize;
    span * span
}

/// Raises the soft limit on open files towards `wanted` (every layer file
/// of a directory stays open), as far as the hard limit allows; where it
/// cannot, opening the files reports what failed.
fn raise_open_file_limit(wanted: usize) {
    if let Err(error) = rlimit::increase_nofile_limit(wanted as u64) {
        log::warn!("cannot raise the limit on open files to {wanted}: {error}");
    }
}

/// Errors found in layers: every one seen, and those not yet taken.
#[derive(Default)]
struct Errors {
    seen: HashSet<String>,
    new: Vec<String>,
}

impl Errors {
    /// Notes `why`, unless it was noted before.
    fn note(&mut self, why: String) {
        if self.seen.insert(why.clone()) {
            log::error!("{why}");
            self.new.push(why);
        }
    }
}

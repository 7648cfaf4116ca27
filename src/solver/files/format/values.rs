//! A layer's values written and read whole: the files of one metric
//! ([`write_values`], [`read_values`]), the win/draw/loss of a layer
//! ([`read_wdl`]), the codes of a stored value, and the headers of a
//! layer's files.

use std::io;
use std::path::Path;

use parking_lot::Mutex;

use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::{Part, Tally, Values, WdlBits};

use super::directory::{Content, Kind, Metric};
use super::error::LayerError;
use super::header::Header;
use super::reader::LayerFile;
use super::stored::{code_of, wdl_of};
use super::writer::{positions_of, write_file};

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
    read_values_on(dir, kind, metric, layer, 1)
}

/// Slots a thread of [`read_values_on`] decodes at a time: a part of the
/// values, and about a band of tiles or less beside it decoded twice
/// (once for each part it touches).
const READ_PART_SLOTS: usize = 1 << 24;

/// [`read_values`] on `threads` threads, each decoding a part of the
/// layer's slots from both files.
///
/// # Errors
/// As [`read_values`] (the first error a thread meets).
pub fn read_values_on(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
    threads: usize,
) -> Result<(Values, Tally), LayerError> {
    read_in_parts(dir, kind, metric, layer, threads, READ_PART_SLOTS)
}

/// [`read_values_on`] in parts of `part_slots` slots (a multiple of 64).
pub(super) fn read_in_parts(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
    threads: usize,
    part_slots: usize,
) -> Result<(Values, Tally), LayerError> {
    let wdl = open_required(dir, kind, Content::Wdl, layer)?;
    let distances = open_required(dir, kind, Content::Distance(metric), layer)?;
    let tally = distances.header().tally;
    let mut values = Values::draws(layer.slots as usize, tally.longest);
    let parts: Vec<Mutex<Part>> = values
        .parts_mut(part_slots)
        .into_iter()
        .map(Mutex::new)
        .collect();
    let errors = crate::solver::parallel(threads, parts.len(), |p, errors| {
        let mut part = parts[p].lock();
        let first = (p * part_slots) as u64;
        let end = first + part_slots as u64;
        let range = |start: u64, length: u64| {
            let at = (start - first) as usize;
            at..at + length as usize
        };
        let read = wdl
            .runs_between(first, end, |start, value, length| {
                if value != 0 {
                    part.update(range(start, length), |_| value);
                }
            })
            // A file's code has no value beyond its header's longest
            // distance (checked at open), so every code fits `values`.
            .and_then(|()| {
                distances.runs_between(first, end, |start, distance, length| {
                    part.update(range(start, length), |sign| code_of(sign, distance));
                })
            });
        if let Err(error) = read {
            errors.push((p, error));
        }
    });
    drop(parts);
    // The error of the first part that failed, whatever the threads.
    match errors.into_iter().min_by_key(|&(p, _)| p) {
        Some((_, error)) => Err(error),
        None => Ok((values, tally)),
    }
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

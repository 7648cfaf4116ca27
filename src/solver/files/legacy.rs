//! The old table format (version 1, until November 2026), read only to
//! convert a directory to the current one ([`convert`]): each layer file
//! an 80-byte header and one zstd frame of a byte (or two) a slot, which
//! had to be decompressed whole to read one position.
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `DODGEMLT` |
//! | 8..12 | format version, 1 |
//! | 12, 13, 14 | board size, rules (0 textbook, 1 classic), most cars a side |
//! | 15 | bytes a value takes, less one |
//! | 16..18, 18..20 | the layer: Black's progress, White's progress |
//! | 20 | 0 distances to progress (`.dtz`), 1 to the end (`.dte`) |
//! | 24..32 | slots |
//! | 32..56 | wins, draws, losses |
//! | 56..60 | longest distance |
//! | 64..72 | payload length |
//! | 72..76 | CRC-32 of bytes 8..72 and of the payload |
//! | 80.. | one zstd frame: a value per slot ([`crate::solver::index::value::encode`]) |

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::format::{self, Content, Kind, LayerError, LayerFile, Metric};
use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::{Dtz, Tally, Values, decode};
use crate::solver::parallel;

const HEADER_LEN: usize = 80;
/// The largest old file read: the largest 6 x 6 file was under 1 GB.
const MOST_BYTES: u64 = 16 << 30;

/// Reads the old file of `layer`'s distances of `metric` whole, checked
/// against its header and checksum: `Ok(None)` when there is none.
///
/// # Errors
/// A file that is not a regular file, damaged, truncated or of another
/// kind, layer or version.
pub fn read_values(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layer: &Layer,
) -> Result<Option<(Values, Tally)>, LayerError> {
    let path = metric.path(dir, layer.black, layer.white);
    let Some(mut file) = format::open_regular(&path)? else {
        return Ok(None);
    };
    let io_error = |e| LayerError::Io(path.clone(), e);
    let length = file.metadata().map_err(io_error)?.len();
    if !(HEADER_LEN as u64..=MOST_BYTES).contains(&length) {
        return Err(LayerError::Truncated(path));
    }
    let mut bytes = Vec::with_capacity(length as usize);
    file.read_to_end(&mut bytes).map_err(io_error)?;
    let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
    if &bytes[0..8] != b"DODGEMLT" || u32_at(8) != 1 {
        return Err(LayerError::NotALayerFile(path));
    }
    let corrupt = |why: String| LayerError::Corrupt(path.clone(), why);
    if (
        usize::from(bytes[12]),
        bytes[13],
        u32::from(bytes[14]),
        bytes[20],
    ) != (
        kind.size,
        kind.rules_code(),
        kind.max_cars,
        Content::Distance(metric).code(),
    ) || (u32::from(u16_at(16)), u32::from(u16_at(18)), u64_at(24))
        != (layer.black, layer.white, layer.slots)
    {
        return Err(LayerError::Foreign(
            path,
            format!("is not layer {} of these tables", layer.name()),
        ));
    }
    let width = match bytes[15] {
        0 => 1,
        1 => 2,
        other => return Err(corrupt(format!("unknown value width code {other}"))),
    };
    if length != HEADER_LEN as u64 + u64_at(64) {
        return Err(LayerError::Truncated(path));
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[8..72]);
    crc.update(&bytes[HEADER_LEN..]);
    if crc.finalize() != u32_at(72) {
        return Err(LayerError::Checksum(path));
    }
    let tally = Tally {
        wins: u64_at(32),
        draws: u64_at(40),
        losses: u64_at(48),
        longest: u32_at(56),
    };
    if tally.longest > crate::solver::passes::dte::MAX_DTE {
        return Err(corrupt(format!("a longest distance of {}", tally.longest)));
    }
    let mut decoder = zstd::stream::read::Decoder::with_buffer(&bytes[HEADER_LEN..])
        .map_err(|e| corrupt(e.to_string()))?;
    let slots = layer.slots as usize;
    let mut values = Values::draws(slots, tally.longest);
    let most = 2 * tally.longest as u16 + 2;
    let mut chunk = vec![0u8; width << 20];
    let mut slot = 0usize;
    while slot < slots {
        let n = (slots - slot).min(1 << 20);
        let raw = &mut chunk[..n * width];
        decoder
            .read_exact(raw)
            .map_err(|e| corrupt(format!("values end before slot {}: {e}", slot + n)))?;
        for value in raw.chunks_exact(width) {
            let code = match width {
                1 => u16::from(value[0]),
                _ => u16::from_le_bytes([value[0], value[1]]),
            };
            if code > most {
                return Err(corrupt(format!(
                    "slot {slot} holds a distance beyond its header's longest"
                )));
            }
            values.set(slot as u64, code);
            slot += 1;
        }
    }
    if decoder
        .read(&mut [0u8; 1])
        .map_err(|e| corrupt(e.to_string()))?
        != 0
    {
        return Err(corrupt(format!(
            "more values than the layer's {slots} slots"
        )));
    }
    Ok(Some((values, tally)))
}

/// A layer converted (or found converted by an earlier run).
#[derive(Clone, Debug)]
pub struct Converted {
    pub layer: (u32, u32),
    pub metric: Metric,
    /// Bytes of the old file and of the new files.
    pub old_bytes: u64,
    pub new_bytes: u64,
    pub slots: u64,
    pub skipped: bool,
}

/// What a conversion did.
#[derive(Clone, Debug, Default)]
pub struct Conversion {
    pub layers: usize,
    pub old_bytes: u64,
    pub new_bytes: u64,
    /// Positions compared between the old and the new files.
    pub positions: u64,
    /// Every layer's distances to progress (`.dtz`) and to the end
    /// (`.dte`) were converted (a directory has both, or one of them
    /// for every layer).
    pub with_dtz: bool,
    pub with_dte: bool,
    /// Files of the new directory for the layers converted, and of those
    /// the ones this run wrote (the others an earlier run).
    pub files: usize,
    pub written: usize,
}

/// Converts the directory `old` (of the old format, 1, or of an earlier
/// format, 2, or of this one) into a new one, `new`, of the current
/// format and a table set of its own: for every layer its `.wdl` file and
/// each of its distance files that `old` holds for every layer (the
/// `.dtz` files, the `.dte` files), each written anew (win/draw/loss in
/// the smallest code this program writes), read back and compared value
/// for value with the old one on every position before the next.
/// Resumable: layers whose new files are there are skipped. `progress`
/// hears of each file.
///
/// # Errors
/// An old directory that is not of a format read, is damaged, or has a
/// kind of file for some layers and not others (the message names the
/// first missing); a new one that is the old one, lies inside it (or it
/// inside the new one), holds other files or tables of another kind, or
/// is in use; a value that differs; any I/O error.
pub fn convert(
    old: &Path,
    new: &Path,
    threads: usize,
    progress: &(dyn Fn(&Converted) + Sync),
) -> Result<Conversion, LayerError> {
    let (kind, version) = format::read_manifest(old)?;
    if !(1..=format::VERSION).contains(&version) {
        return Err(LayerError::Manifest(
            old.join(format::MANIFEST),
            format!("holds tables of format {version}, which this program does not convert"),
        ));
    }
    let shape = crate::solver::run::plan::shape_of(kind)
        .map_err(|e| LayerError::Manifest(old.join(format::MANIFEST), e.to_string()))?;
    if same_directory(old, new) {
        return Err(LayerError::Manifest(
            new.to_path_buf(),
            "is the old directory: convert into a new one".into(),
        ));
    }
    if let Some(why) = nested(old, new) {
        return Err(LayerError::Manifest(new.to_path_buf(), why));
    }
    let _lock = format::lock_dir(new)?;
    format::prepare_dir(new, kind)?;
    let layers: Vec<Layer> = shape
        .pairs()
        .into_iter()
        .flat_map(|(a, b)| {
            if a == b {
                vec![(a, b)]
            } else {
                vec![(a, b), (b, a)]
            }
        })
        .map(|(a, b)| shape.layer(a, b))
        .collect();
    // Each kind of file is there for every layer or for none: one missing
    // is named, never passed over.
    let every = |content: Content| -> Result<bool, LayerError> {
        let missing: Vec<PathBuf> = layers
            .iter()
            .map(|l| content.path(old, l.black, l.white))
            .filter(|path| std::fs::symlink_metadata(path).is_err())
            .collect();
        match missing.len() {
            0 => Ok(true),
            n if n == layers.len() => Ok(false),
            n => Err(LayerError::Manifest(
                old.to_path_buf(),
                format!(
                    "is incomplete: {n} of its {} .{} files ({}) are missing, {} the first; \
                     nothing of it is left out of a conversion (complete it first{})",
                    layers.len(),
                    content.extension(),
                    content.name(),
                    missing[0].display(),
                    match content {
                        Content::Distance(Metric::Dte) => ": `dodgem solve --dte OLD`",
                        _ => ", or solve it again",
                    }
                ),
            )),
        }
    };
    let with_dtz = every(Content::Distance(Metric::Dtz))?;
    let with_dte = every(Content::Distance(Metric::Dte))?;
    if version > 1 && !every(Content::Wdl)? {
        let first = &layers[0];
        return Err(LayerError::Io(
            Content::Wdl.path(old, first.black, first.white),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    if !with_dtz && (version == 1 || !with_dte) {
        let first = &layers[0];
        return Err(LayerError::Manifest(
            old.to_path_buf(),
            format!(
                "holds no distance files ({} is missing): nothing to convert",
                Metric::Dtz.path(old, first.black, first.white).display()
            ),
        ));
    }
    let metrics: Vec<Metric> = [(Metric::Dtz, with_dtz), (Metric::Dte, with_dte)]
        .into_iter()
        .filter_map(|(metric, with)| with.then_some(metric))
        .collect();
    let total = Mutex::new(Conversion {
        with_dtz,
        with_dte,
        ..Conversion::default()
    });
    let failed: Mutex<Option<LayerError>> = Mutex::new(None);
    // The largest layers first, so the threads end together.
    let mut order: Vec<usize> = (0..layers.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(layers[i].slots));
    parallel(threads, order.len(), |unit, _: &mut Vec<()>| {
        if failed.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
            return;
        }
        let layer = &layers[order[unit]];
        for (i, &metric) in metrics.iter().enumerate() {
            // The win/draw/loss goes with the first metric converted.
            let with_wdl = i == 0;
            let converted = if version == 1 {
                convert_layer(old, new, kind, &shape, layer, metric)
            } else {
                rebind_layer(old, new, kind, &shape, layer, metric, with_wdl)
            };
            match converted {
                Ok((done, positions)) => {
                    let files = if with_wdl { 2 } else { 1 };
                    let mut total = total.lock().unwrap_or_else(|e| e.into_inner());
                    total.layers += usize::from(with_wdl);
                    total.files += files;
                    total.written += if done.skipped { 0 } else { files };
                    total.old_bytes += done.old_bytes;
                    total.new_bytes += done.new_bytes;
                    total.positions += positions;
                    drop(total);
                    progress(&done);
                }
                Err(error) => {
                    failed
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(error);
                    return;
                }
            }
        }
    });
    if let Some(error) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(error);
    }
    Ok(total.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// Whether `a` and `b` name one directory.
fn same_directory(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Why `new` cannot be converted into from `old`: one lies inside the
/// other (`new` need not exist yet).
fn nested(old: &Path, new: &Path) -> Option<String> {
    let old = old.canonicalize().ok()?;
    // The deepest part of `new` that exists, with the rest after it.
    let mut existing = new.to_path_buf();
    let mut rest = Vec::new();
    let base = loop {
        if let Ok(found) = existing.canonicalize() {
            break found;
        }
        rest.push(existing.file_name()?.to_os_string());
        if !existing.pop() || existing.as_os_str().is_empty() {
            existing = std::env::current_dir().ok()?;
        }
    };
    let new = rest.iter().rev().fold(base, |path, part| path.join(part));
    if new.starts_with(&old) {
        Some(format!(
            "lies inside the old directory {}: convert into one outside it",
            old.display()
        ))
    } else if old.starts_with(&new) {
        Some(format!(
            "holds the old directory {}: convert into one outside it",
            old.display()
        ))
    } else {
        None
    }
}

/// Converts one layer's distances of `metric` (with the win/draw/loss for
/// [`Metric::Dtz`]), then compares the new files with the old values on
/// every position: the file and the positions compared.
fn convert_layer(
    old: &Path,
    new: &Path,
    kind: Kind,
    shape: &Shape,
    layer: &Layer,
    metric: Metric,
) -> Result<(Converted, u64), LayerError> {
    let old_path = metric.path(old, layer.black, layer.white);
    let old_bytes = std::fs::metadata(&old_path).map_or(0, |m| m.len());
    let contents: &[Content] = match metric {
        Metric::Dtz => &[Content::Wdl, Content::Distance(Metric::Dtz)],
        Metric::Dte => &[Content::Distance(Metric::Dte)],
    };
    write_and_compare(new, kind, shape, layer, metric, contents, old_bytes, || {
        read_values(old, kind, metric, layer)?.ok_or_else(|| {
            LayerError::Io(
                old_path.clone(),
                std::io::Error::from(std::io::ErrorKind::NotFound),
            )
        })
    })
}

/// Converts one layer of a directory of format 2 or later: its values
/// with distances of `metric` read whole (every block checked), written
/// anew in the current format and the new directory's table set (the
/// `.wdl` file too, `with_wdl`), and compared position by position.
fn rebind_layer(
    old: &Path,
    new: &Path,
    kind: Kind,
    shape: &Shape,
    layer: &Layer,
    metric: Metric,
    with_wdl: bool,
) -> Result<(Converted, u64), LayerError> {
    let distance = Content::Distance(metric);
    let contents: &[Content] = if with_wdl {
        &[Content::Wdl, distance]
    } else {
        &[distance]
    };
    let old_bytes = new_bytes(old, layer, contents);
    write_and_compare(new, kind, shape, layer, metric, contents, old_bytes, || {
        format::read_values(old, kind, metric, layer)
    })
}

/// Writes `contents` of `layer` into `new` from the values `read` gives
/// (the distance file last: with it there, the layer is done, and a
/// later run skips it), then compares them with the values.
#[allow(clippy::too_many_arguments)]
fn write_and_compare(
    new: &Path,
    kind: Kind,
    shape: &Shape,
    layer: &Layer,
    metric: Metric,
    contents: &[Content],
    old_bytes: u64,
    read: impl FnOnce() -> Result<(Values, Tally), LayerError>,
) -> Result<(Converted, u64), LayerError> {
    let mut done = Converted {
        layer: (layer.black, layer.white),
        metric,
        old_bytes,
        new_bytes: 0,
        slots: layer.slots,
        skipped: true,
    };
    if LayerFile::open(new, kind, Content::Distance(metric), layer)?.is_some() {
        done.new_bytes = new_bytes(new, layer, contents);
        return Ok((done, 0));
    }
    let (values, tally) = read()?;
    let positions = format::positions_of(shape, layer);
    for &content in contents {
        format::write_file(
            new,
            kind,
            content,
            layer,
            &values,
            &positions,
            tally,
            content.block_slots(),
            1,
        )
        .map_err(|e| LayerError::Io(content.path(new, layer.black, layer.white), e))?;
    }
    let with_wdl = contents.contains(&Content::Wdl);
    let compared = compare(new, kind, layer, metric, with_wdl, &values, &positions)?;
    done.new_bytes = new_bytes(new, layer, contents);
    done.skipped = false;
    Ok((done, compared))
}

fn new_bytes(dir: &Path, layer: &Layer, contents: &[Content]) -> u64 {
    contents
        .iter()
        .map(|c| std::fs::metadata(c.path(dir, layer.black, layer.white)).map_or(0, |m| m.len()))
        .sum()
}

/// Reads the new files of `layer` back and checks every position's value
/// against `values`: the positions compared.
fn compare(
    new: &Path,
    kind: Kind,
    layer: &Layer,
    metric: Metric,
    with_wdl: bool,
    values: &Values,
    positions: &[u64],
) -> Result<u64, LayerError> {
    let is_position = |slot: u64| format::is_set(positions, slot);
    let mut first_wrong: Option<(PathBuf, u64)> = None;
    let mut compared = 0u64;
    if with_wdl {
        let wdl = format::open_required(new, kind, Content::Wdl, layer)?;
        wdl.each_run(|first, value, length| {
            for slot in first..first + length {
                if !is_position(slot) {
                    continue;
                }
                compared += 1;
                let expected = match decode(values.code(slot)) {
                    Dtz::Draw => 0,
                    Dtz::Win(_) => 1,
                    Dtz::Loss(_) => 2,
                };
                if value != expected && first_wrong.is_none() {
                    first_wrong = Some((wdl.path().to_path_buf(), slot));
                }
            }
        })?;
    }
    let distances = format::open_required(new, kind, Content::Distance(metric), layer)?;
    distances.each_run(|first, value, length| {
        for slot in first..first + length {
            if !is_position(slot) {
                continue;
            }
            let expected = match decode(values.code(slot)) {
                Dtz::Draw => continue,
                Dtz::Win(d) | Dtz::Loss(d) => d,
            };
            if u32::from(value) != expected && first_wrong.is_none() {
                first_wrong = Some((distances.path().to_path_buf(), slot));
            }
        }
    })?;
    match first_wrong {
        Some((path, slot)) => Err(LayerError::Corrupt(
            path,
            format!("slot {slot} differs from the old file's value after conversion"),
        )),
        None => Ok(compared),
    }
}

//! The saved state of a reachability walk ([`super::reach`]), so that a
//! census of hours can stop at any moment and go on from where it last
//! saved: the next total progress to close, the counts so far, and the
//! bitmaps of what has already reached the layers of that total.
//!
//! The file is a few text lines naming the tables and the totals, then,
//! for each layer, a line with its progress pair and word count followed
//! by its two bitmaps (Black to move, White to move) in the machine's byte order
//! (64-bit words) and a CRC-32 of them. It is written to a temporary file, synced
//! and renamed, so a stop while saving leaves the previous one whole.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use crate::solver::files::format::{Kind, LayerError, write_durably_with};
use crate::solver::index::layers::Shape;

/// What the walk counted: reachable positions in which both sides still
/// have a car, by their value for the side to move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReachCounts {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Of those, positions whose side to move has no legal move.
    pub blocked: u64,
}

impl ReachCounts {
    pub fn positions(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    pub(super) fn add(&mut self, other: ReachCounts) {
        self.wins += other.wins;
        self.draws += other.draws;
        self.losses += other.losses;
        self.blocked += other.blocked;
    }
}

/// Every position reachable from the start, by side to move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Positions with a car of each side on the board, by the side to
    /// move ([`crate::board::Color::index`]).
    pub sides: [ReachCounts; 2],
    /// Finished games (one side has taken every car off), by the side to
    /// move, which has lost.
    pub finished: [u64; 2],
}

impl Census {
    /// Positions with a car of each side on the board, both sides to move.
    pub fn on_board(&self) -> ReachCounts {
        let mut total = self.sides[0];
        total.add(self.sides[1]);
        total
    }

    /// Every reachable position, finished games included.
    pub fn positions(&self) -> u64 {
        self.on_board().positions() + self.finished[0] + self.finished[1]
    }

    pub(super) fn add(&mut self, other: &Census) {
        for side in 0..2 {
            self.sides[side].add(other.sides[side]);
            self.finished[side] += other.finished[side];
        }
    }
}

/// What a checkpoint holds: the walk stopped before closing `total`.
pub struct Saved<M> {
    pub total: u32,
    pub census: Census,
    /// `(black progress, white progress, [Black to move, White to move])`.
    pub layers: Vec<(u32, u32, [M; 2])>,
}

/// The first line of a checkpoint of `kind`'s tables whose files have
/// the fingerprint `tables` ([`crate::solver::files::store::Tables::fingerprint`]): a
/// checkpoint of other tables (another solve, another set) is refused.
fn heading(kind: Kind, tables: u64) -> String {
    format!(
        "dodgem reach checkpoint 2 size {} rules {} max-cars {} tables {tables:016x}",
        kind.size,
        kind.rules.name(),
        kind.max_cars
    )
}

fn counts_line(census: &Census) -> String {
    let numbers: Vec<String> = census
        .sides
        .iter()
        .flat_map(|s| [s.wins, s.draws, s.losses, s.blocked])
        .chain(census.finished)
        .map(|n| n.to_string())
        .collect();
    format!("census {}", numbers.join(" "))
}

/// Saves `saved` for `kind`'s tables at `path`, durably.
///
/// # Errors
/// Any I/O error (the previous checkpoint, if any, is then untouched).
pub fn save(path: &Path, kind: Kind, tables: u64, saved: &Saved<&[u64]>) -> io::Result<()> {
    write_durably_with(path, |out| {
        writeln!(out, "{}", heading(kind, tables))?;
        writeln!(out, "total {}", saved.total)?;
        writeln!(out, "{}", counts_line(&saved.census))?;
        writeln!(out, "layers {}", saved.layers.len())?;
        for (black, white, bits) in &saved.layers {
            writeln!(out, "layer {black} {white} {}", bits[0].len())?;
            let mut crc = crc32fast::Hasher::new();
            for map in bits {
                let bytes: &[u8] = bytemuck::cast_slice(map);
                crc.update(bytes);
                out.write_all(bytes)?;
            }
            out.write_all(&crc.finalize().to_le_bytes())?;
        }
        Ok(())
    })
}

/// Reads the checkpoint at `path` for `kind`'s tables with the
/// fingerprint `tables`: `Ok(None)` when there is none yet. Only a
/// regular file is read (a FIFO or device is refused unopened), and no
/// more of it than a checkpoint of these tables can take.
///
/// # Errors
/// A checkpoint of other tables, or one that is damaged or truncated.
pub fn load(
    path: &Path,
    kind: Kind,
    tables: u64,
    shape: &Shape,
) -> Result<Option<Saved<Vec<u64>>>, LayerError> {
    let file = match crate::files::open_regular(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
            return Err(LayerError::Foreign(
                path.to_path_buf(),
                "is not a regular file (a reach checkpoint must be one: a FIFO or device is \
                 refused)"
                    .into(),
            ));
        }
        Err(e) => return Err(LayerError::Io(path.to_path_buf(), e)),
    };
    let bad = |why: &str| {
        LayerError::Corrupt(
            path.to_path_buf(),
            format!("bad content for a reach checkpoint: {why}"),
        )
    };
    // Every layer's two bitmaps and its line, and the lines before.
    let (low, high) = (shape.min_progress(), shape.max_progress());
    let most: u64 = 4096
        + (low..=high)
            .flat_map(|a| (low..=high).map(move |b| (a, b)))
            .map(|(a, b)| shape.layer(a, b).slots.div_ceil(64) * 16 + 64)
            .sum::<u64>();
    let length = file
        .metadata()
        .map_err(|e| LayerError::Io(path.to_path_buf(), e))?
        .len();
    if length > most {
        return Err(bad(&format!(
            "{length} bytes, more than a checkpoint of these tables takes ({most})"
        )));
    }
    let mut input = BufReader::new(file.take(most));
    let line =
        |input: &mut BufReader<io::Take<File>>, what: &str| -> Result<Vec<String>, LayerError> {
            let mut text = String::new();
            match input.read_line(&mut text) {
                Ok(0) | Err(_) => Err(bad(&format!("ends before its {what} line"))),
                Ok(_) => Ok(text.split_whitespace().map(str::to_string).collect()),
            }
        };
    let first = line(&mut input, "first")?.join(" ");
    let expected = heading(kind, tables);
    if first != expected {
        if !first.starts_with("dodgem reach checkpoint") {
            return Err(bad(&format!("its first line is {first:?}")));
        }
        return Err(LayerError::Foreign(
            path.to_path_buf(),
            format!(
                "is not a reach checkpoint of these tables (its first line is {first:?}, \
                 expected {expected:?}): name another, or remove it to count from the start"
            ),
        ));
    }
    let number = |words: &[String], i: usize, what: &str| -> Result<u64, LayerError> {
        words
            .get(i)
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| bad(&format!("bad {what} line")))
    };
    let words = line(&mut input, "total")?;
    if words.first().map(String::as_str) != Some("total") {
        return Err(bad("no total line"));
    }
    let total = u32::try_from(number(&words, 1, "total")?).map_err(|_| bad("bad total"))?;
    let words = line(&mut input, "census")?;
    if words.len() != 11 || words[0] != "census" {
        return Err(bad("bad census line"));
    }
    let n: Vec<u64> = (1..11)
        .map(|i| number(&words, i, "census"))
        .collect::<Result<_, _>>()?;
    let side = |o: usize| ReachCounts {
        wins: n[o],
        draws: n[o + 1],
        losses: n[o + 2],
        blocked: n[o + 3],
    };
    let census = Census {
        sides: [side(0), side(4)],
        finished: [n[8], n[9]],
    };
    let words = line(&mut input, "layers")?;
    if words.first().map(String::as_str) != Some("layers") {
        return Err(bad("no layers line"));
    }
    let count = number(&words, 1, "layers")?;
    let mut layers = Vec::new();
    for _ in 0..count {
        let words = line(&mut input, "layer")?;
        if words.first().map(String::as_str) != Some("layer") {
            return Err(bad("bad layer line"));
        }
        let (black, white) = (number(&words, 1, "layer")?, number(&words, 2, "layer")?);
        let (black, white) = (
            u32::try_from(black).map_err(|_| bad("bad layer line"))?,
            u32::try_from(white).map_err(|_| bad("bad layer line"))?,
        );
        let range = shape.min_progress()..=shape.max_progress();
        if !range.contains(&black) || !range.contains(&white) {
            return Err(bad(&format!("no layer {black}-{white} on this board")));
        }
        let words_a_map = number(&words, 3, "layer")?;
        if words_a_map != shape.layer(black, white).slots.div_ceil(64) {
            return Err(bad(&format!("layer {black}-{white} has the wrong size")));
        }
        let mut crc = crc32fast::Hasher::new();
        let mut read_map = |input: &mut BufReader<io::Take<File>>| -> Result<Vec<u64>, LayerError> {
            let mut map: Vec<u64> = bytemuck::zeroed_vec(words_a_map as usize);
            input
                .read_exact(bytemuck::cast_slice_mut(&mut map))
                .map_err(|_| bad("truncated"))?;
            crc.update(bytemuck::cast_slice(&map));
            Ok(map)
        };
        let maps = [read_map(&mut input)?, read_map(&mut input)?];
        let mut stored = [0u8; 4];
        input
            .read_exact(&mut stored)
            .map_err(|_| bad("truncated"))?;
        if u32::from_le_bytes(stored) != crc.finalize() {
            return Err(LayerError::Checksum(path.to_path_buf()));
        }
        layers.push((black, white, maps));
    }
    let mut rest = [0u8; 1];
    if input.read(&mut rest).map_err(|_| bad("unreadable"))? != 0 {
        return Err(bad("bytes after the last layer"));
    }
    Ok(Some(Saved {
        total,
        census,
        layers,
    }))
}

//! Writing a layer file ([`write_file`]): the slots that are positions
//! ([`positions_of`]), what each stores, and the body coded in runs or in
//! tiles, whichever is smaller, with its index and header.

use std::io::{self, Write};
use std::path::Path;

use crate::solver::files::codec::{self, Code};
use crate::solver::files::tiles::{self, Model, Tiling};
use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::{Tally, Values};
use crate::solver::parallel;

use super::directory::{Content, Kind, read_directory, write_durably_with};
use super::header::{BlockCode, ESTIMATE_LEVEL, Header, Index, TABLE_LEVEL, pack_table};
use super::stored::{contexts_of, stored};
use super::{BOUND_HEADER_LEN, LAYER_VERSION, MAGIC, TILE_WIDTH_BITS, UNBOUND_VERSION, VERSION};

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
        Content::Distance(_) => source.distance_body()?,
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
pub(super) struct Source<'a> {
    /// The table set of the directory written into.
    pub(super) set: u64,
    pub(super) kind: Kind,
    pub(super) content: Content,
    pub(super) layer: &'a Layer,
    pub(super) values: &'a Values,
    pub(super) positions: &'a [u64],
    /// What the file stores for each value code ([`stored`]).
    pub(super) stored_of: &'a [Option<u16>],
    pub(super) tally: Tally,
    pub(super) block_slots: u64,
    pub(super) threads: usize,
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
pub(super) struct Runs {
    code: Code,
    header: Header,
}

impl Runs {
    pub(super) fn length(&self) -> u64 {
        self.header.file_length()
    }
}

/// Tiles a writer counts at most to choose its code (the rest are coded
/// with the odds their sample gives): a quarter of a layer's tiles,
/// within these bounds (a layer of at most the fewest is counted whole).
const SAMPLE_TILES: std::ops::RangeInclusive<u64> = 32..=512;

/// Blocks of a `.wdl` file whose runs are counted at most to estimate
/// what runs would take.
const RUNS_SAMPLE_BLOCKS: u64 = 64;

/// A layer of at least [`SAMPLED_BLOCKS`] times this many blocks has its
/// runs counted in every this-many-th block (or fewer) alone: a `.wdl`
/// file's to estimate what runs would take; a distance file's for its
/// code, with a count of one more for every symbol its distances allow
/// (which the tally bounds), so that the runs are found once for most
/// blocks, not twice.
const SAMPLE_EVERY: u64 = 8;

/// Blocks a sample of a layer's runs counts at least.
const SAMPLED_BLOCKS: u64 = 8;

/// A gathered slot that stores nothing (no position).
const NOT_STORED: u8 = u8::MAX;

/// Blocks are coded in chunks of this many, on every thread.
const CHUNK: u64 = 256;

/// A chunk of blocks coded: its number, its bytes, and each block's end
/// in them.
type Coded = (usize, Vec<u8>, Vec<u64>);

impl Source<'_> {
    /// What the file stores for `slot`, if it matters.
    fn stored_at(&self, slot: u64) -> Option<u16> {
        if is_set(self.positions, slot) {
            self.stored_of[usize::from(self.values.code(slot))]
        } else {
            None
        }
    }

    /// The file's blocks of runs.
    fn blocks(&self) -> u64 {
        (self.values.len() as u64).div_ceil(self.block_slots)
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
    pub(super) fn runs(&self) -> io::Result<Runs> {
        self.runs_of_every(1, None)
    }

    /// A distance file: in runs, their code made from a sample of the
    /// blocks where the layer is large ([`SAMPLE_EVERY`]), or
    /// from every block if a distance beyond the tally's longest shows
    /// up.
    fn distance_body(&self) -> io::Result<Body> {
        let blocks = self.blocks();
        if blocks >= SAMPLE_EVERY * SAMPLED_BLOCKS && self.tally.longest < codec::MAX_VALUES {
            let alphabet = self.tally.longest + 1;
            if let Some(body) = self.runs_body(self.runs_of_every(SAMPLE_EVERY, Some(alphabet))?) {
                return Ok(body);
            }
            log::debug!(
                "layer {}: a distance beyond the tally's longest ({}): its runs counted whole",
                self.layer.name(),
                self.tally.longest
            );
        }
        Ok(self
            .runs_body(self.runs()?)
            .expect("a code made from every block codes every run"))
    }

    /// [`Source::runs`] from every `every`-th block alone: the header's
    /// length is then an estimate (the code fits the blocks counted, and
    /// with `smooth`, every run of a distance below that alphabet).
    fn runs_of_every(&self, every: u64, smooth: Option<u32>) -> io::Result<Runs> {
        let block_slots = self.block_slots;
        let blocks = self.blocks();
        let counted = blocks.div_ceil(every);
        let classes = codec::classes(block_slots);
        let runs_of = |block: u64, emit: &mut dyn FnMut(u16, u64)| self.runs_of(block, emit);
        let chunks = counted.div_ceil(CHUNK) as usize;
        // The alphabet is what the values hold (a distance file's longest
        // distance is its own, whatever the tally passed says); counted for
        // each context with room for every value a file may have: a win, a
        // draw or a loss, or any distance a file holds.
        let contexts = contexts_of(self.content);
        let most = match self.content {
            Content::Wdl => 3,
            Content::Distance(_) => codec::MAX_VALUES,
        };
        let per = (most * classes) as usize;
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
                        fits &= u32::from(v) < most;
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
        let seen = used.map_or(1, |s| (s % per) as u32 / classes + 1);
        let alphabet = match self.content {
            Content::Wdl => 3,
            Content::Distance(_) => smooth.map_or(seen, |alphabet| alphabet.max(seen)),
        };
        // Each context's symbols of the alphabet, one context after the
        // other; smoothed, every symbol counted once more.
        let frequencies: Vec<u64> = frequencies
            .chunks(per)
            .flat_map(|context| context[..(alphabet * classes) as usize].iter().copied())
            .map(|n| n + u64::from(smooth.is_some()))
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
        let blocks = self.blocks();
        let mut tiles = None;
        if blocks >= SAMPLE_EVERY * SAMPLED_BLOCKS {
            let every = (blocks / RUNS_SAMPLE_BLOCKS).max(SAMPLE_EVERY);
            let estimate = self.runs_of_every(every, None)?.length();
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
            _ => self
                .runs_body(runs)
                .expect("a code made from every block codes every run"),
        })
    }

    /// The file in runs: the blocks coded with the code `runs` has, or
    /// `None` if a run's value is beyond its alphabet (a code from a
    /// sample whose tally was short).
    fn runs_body(&self, runs: Runs) -> Option<Body> {
        let blocks = runs.header.blocks;
        let alphabet = runs.header.values;
        let chunks = blocks.div_ceil(CHUNK) as usize;
        let code = &runs.code;
        let coded = parallel(
            self.threads,
            chunks,
            |chunk, out: &mut Vec<Option<Coded>>| {
                let mut data = Vec::new();
                let mut ends = Vec::new();
                let mut runs = Vec::new();
                for block in chunk as u64 * CHUNK..((chunk as u64 + 1) * CHUNK).min(blocks) {
                    runs.clear();
                    let mut fits = true;
                    self.runs_of(block, &mut |v, n| {
                        fits &= u32::from(v) < alphabet;
                        runs.push((v, n));
                    });
                    if !fits {
                        out.push(None);
                        return;
                    }
                    code.encode_block(&runs, &mut data);
                    ends.push(data.len() as u64);
                }
                out.push(Some((chunk, data, ends)));
            },
        );
        let coded = coded.into_iter().collect::<Option<Vec<_>>>()?;
        Some(body(runs.header, code.lengths().to_vec(), coded))
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
        // What each code stores, a byte ([`NOT_STORED`] for none): a
        // tile's values are gathered row by row before they are coded.
        let wdl: Vec<u8> = self
            .stored_of
            .iter()
            .map(|v| v.map_or(NOT_STORED, |v| v as u8))
            .collect();
        let value_at = |grid: &[u8], columns: usize, r: usize, c: usize| {
            Some(grid[r * columns + c]).filter(|&v| v != NOT_STORED)
        };
        let all = tiles::NEIGHBOURS.len();
        // Every `every`-th tile counted: the odds only start each tile.
        let sample = (count / 4).clamp(*SAMPLE_TILES.start(), *SAMPLE_TILES.end());
        let every = count.div_ceil(sample);
        let sampled = count.div_ceil(every);
        let counted = parallel(
            self.threads,
            sampled.div_ceil(CHUNK) as usize,
            |chunk, out: &mut Vec<tiles::Counts>| {
                if out.is_empty() {
                    out.push(vec![[0; 3]; tiles::contexts(all)]);
                }
                let mut grid = Vec::new();
                for i in chunk as u64 * CHUNK..((chunk as u64 + 1) * CHUNK).min(sampled) {
                    let tile = tiling.tile(i * every);
                    self.gather(&tile, &wdl, &mut grid);
                    Model::count(
                        all,
                        tile.rows,
                        tile.columns,
                        |r, c| value_at(&grid, tile.columns, r, c),
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
        // Fewer neighbours: the first ones, the high digits of a context;
        // each count merged from the one with a neighbour more.
        let mut by_neighbours = vec![counts];
        for neighbours in (1..all).rev() {
            let more = by_neighbours.last().expect("the counts of every neighbour");
            let mut merged = vec![[0u64; 3]; tiles::contexts(neighbours)];
            for (context, n) in more.iter().enumerate() {
                let m = &mut merged[context >> 2];
                for i in 0..3 {
                    m[i] += n[i];
                }
            }
            by_neighbours.push(merged);
        }
        by_neighbours.reverse();
        let fewer = |neighbours: usize| &by_neighbours[neighbours - 1];
        let scale = count as f64 / sampled as f64;
        let (neighbours, estimate) = (1..=all)
            .map(|n| {
                let counts = fewer(n);
                let table = pack_table(&Model::fit(n, counts).to_bytes(), ESTIMATE_LEVEL).len();
                let bytes = scale * Model::estimate_bits(counts) / 8.0 + table as f64;
                (n, bytes)
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        // The adaptation usually saves a few percent on the estimate.
        let overhead = (BOUND_HEADER_LEN + Index::Grouped.bytes(count)) as f64;
        if 0.8 * estimate + overhead > beat as f64 {
            return None;
        }
        let model = Model::fit(neighbours, fewer(neighbours));
        let coded = parallel(self.threads, chunks, |chunk, out: &mut Vec<Coded>| {
            let mut data = Vec::new();
            let mut ends = Vec::new();
            let mut grid = Vec::new();
            for t in chunk as u64 * CHUNK..((chunk as u64 + 1) * CHUNK).min(count) {
                let tile = tiling.tile(t);
                let start = data.len();
                let positions = self.gather(&tile, &wdl, &mut grid);
                model.encode(
                    tile.rows,
                    tile.columns,
                    |r, c| value_at(&grid, tile.columns, r, c),
                    &mut data,
                );
                // A tile the coder codes in no bytes (its values all as
                // the odds expect) still takes one: the decoder reads
                // past the end as zeros, so a zero byte decodes the
                // same, and a block of no bytes is left to tiles
                // without positions (what a zeroed index entry claims).
                if data.len() == start && positions {
                    data.push(0);
                }
                ends.push(data.len() as u64);
            }
            out.push((chunk, data, ends));
        });
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

    /// The stored values of `tile`, row by row, into `grid`
    /// ([`NOT_STORED`] where no position), `stored` a code's byte;
    /// returns whether the tile has a position.
    fn gather(&self, tile: &tiles::Tile, stored: &[u8], grid: &mut Vec<u8>) -> bool {
        grid.clear();
        for r in 0..tile.rows {
            let first = tile.slot(r, 0);
            let slots = first..first + tile.columns as u64;
            match self.values {
                Values::Narrow(codes) => grid.extend(slots.map(|slot| {
                    if is_set(self.positions, slot) {
                        stored[usize::from(codes[slot as usize])]
                    } else {
                        NOT_STORED
                    }
                })),
                values => grid.extend(slots.map(|slot| {
                    if is_set(self.positions, slot) {
                        stored[usize::from(values.code(slot))]
                    } else {
                        NOT_STORED
                    }
                })),
            }
        }
        grid.iter().any(|&v| v != NOT_STORED)
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
/// chunks ([`Coded`], in any order): the
/// smaller index its blocks allow.
fn body(mut header: Header, table: Vec<u8>, mut coded: Vec<Coded>) -> Body {
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

//! The tests of the table files: layer files written and read back, probed
//! position by position, damaged, downgraded to older formats, and
//! manifests.

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::board::Rules;
use crate::solver::files::codec;
use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::{Dtz, Tally, Values, WdlBits};

use super::directory::{Content, Kind, Metric, prepare_dir, read_kind};
use super::error::LayerError;
use super::header::{
    BlockCode, FULL_ENTRY, GROUP_BLOCKS, GROUP_START, GROUPED_ENTRY, Header, Index,
};
use super::reader::{Entry, LayerFile};
use super::stored::stored;
use super::values::{open_required, read_in_parts, read_values, read_wdl};
use super::writer::{Source, is_set, positions_of, write_file};
use super::{
    BOUND_HEADER_LEN, HEADER_LEN, LAYER_VERSION, MANIFEST, OLD_VERSION, UNBOUND_VERSION, VERSION,
};

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
        // Read in parts by two threads, parts that cut blocks and tiles:
        // the same values.
        for part_slots in [64, 192, 4096] {
            let (parts, _) = read_in_parts(&dir, kind, Metric::Dtz, &layer, 2, part_slots).unwrap();
            assert!(
                parts == read,
                "parts of {part_slots} slots, longest {longest}"
            );
        }
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
                let (black, white) = (shape.black_set(block, row), shape.white_set(block, column));
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

/// A large distance file's code is made from a sample of its blocks; a
/// distance the sample and the tally both miss (here one long win in a
/// block the sample skips) has the runs counted whole, and every value
/// reads back.
#[test]
fn a_distance_the_sample_misses_is_still_written() {
    let (kind, dir, layer, positions, _, _) = smooth_layer("sampled-distances");
    let mut values = Values::draws(layer.slots as usize, 60);
    let mut tally = Tally::default();
    let long = (1..layer.slots)
        .find(|&s| is_set(&positions, s) && s / (1 << 10) % 8 == 3)
        .unwrap();
    for slot in (0..layer.slots).filter(|&s| is_set(&positions, s)) {
        let value = match slot {
            _ if slot == long => Dtz::Win(57),
            _ if slot / 11 % 3 == 0 => Dtz::Draw,
            _ => Dtz::Loss((slot / 5 % 4) as u32),
        };
        values.set(slot, encode(value));
        if slot != long {
            tally.add(value);
        }
    }
    assert_eq!(tally.longest, 3, "the tally misses the long win");
    let content = Content::Distance(Metric::Dte);
    for tally in [
        tally,
        Tally {
            longest: 57,
            ..tally
        },
    ] {
        write_file(
            &dir,
            kind,
            content,
            &layer,
            &values,
            &positions,
            tally,
            1 << 10,
            2,
        )
        .unwrap();
        let file = open_required(&dir, kind, content, &layer).unwrap();
        assert!(file.header().blocks() >= 64);
        assert_eq!(file.header().tally.longest, 57);
        for slot in (0..layer.slots).filter(|&s| is_set(&positions, s)) {
            let expected = stored(content, values.code(slot));
            if expected.is_some() {
                assert_eq!(file.value(slot).ok(), expected, "slot {slot}");
            }
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

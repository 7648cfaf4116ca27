//! Layer files attacked: random bytes, bit flips in real layer files (with
//! and without the checksum made to match), and the engine fed a sample
//! of them. A damaged file is refused, or holds exactly the true values,
//! unless its checksum was forged to match (then nothing can tell, short
//! of `solve --verify`); never a hang or a crash, and the engine keeps
//! answering, saying what is wrong and searching instead.

use std::path::{Path, PathBuf};

use crate::common::{Engine, LONG, Rng, scratch, shared};
use dodgem::board::{Position, Rules};
use dodgem::solver::{Kind, Plan, Shape, layer_path, read_layer, solve_layers};

const HEADER_LEN: usize = 80;

/// Solves `size` under `rules` into a fresh directory.
fn solved(name: &str, size: usize, rules: Rules) -> (PathBuf, Kind) {
    let dir = scratch(name);
    let kind = Kind {
        size,
        rules,
        max_cars: size as u32 - 1,
    };
    let plan = Plan {
        kind,
        dir: dir.clone(),
        threads: 2,
        stop_after_layers: None,
        two_bytes: false,
        with_dte: false,
    };
    solve_layers(&plan, &mut |_| {}).unwrap();
    (dir, kind)
}

/// Makes the header's checksum match the bytes (when there is a header).
fn fix_checksum(bytes: &mut [u8]) {
    if bytes.len() < HEADER_LEN {
        return;
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[8..72]);
    crc.update(&bytes[76..HEADER_LEN]);
    crc.update(&bytes[HEADER_LEN..]);
    let sum = crc.finalize().to_le_bytes();
    bytes[72..76].copy_from_slice(&sum);
}

/// Some damage: flipped bits, overwritten or cut or added bytes.
fn damage(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        // Half the damage hits the header, where the fields are.
        let at = if rng.chance(2) {
            rng.below(HEADER_LEN.min(bytes.len()))
        } else {
            rng.below(bytes.len())
        };
        match rng.below(8) {
            0 => bytes.truncate(at),
            1 => bytes.insert(at, rng.next() as u8),
            2 => bytes[at] = rng.next() as u8,
            _ => bytes[at] ^= 1 << rng.below(8),
        }
        if bytes.is_empty() {
            return;
        }
    }
}

/// The layer `(a, b)` of a random layer file of `dir`.
fn random_layer(rng: &mut Rng, shape: &Shape) -> (u32, u32) {
    let pairs = shape.pairs();
    let &(a, b) = rng.pick(&pairs);
    if rng.chance(2) { (a, b) } else { (b, a) }
}

#[test]
fn damaged_layer_files_are_refused_or_exactly_right() {
    let _cpu = shared();
    let mut rng = Rng(0x7ab1_e5ee);
    let originals = [
        solved("fuzz-3t", 3, Rules::Textbook),
        solved("fuzz-3c", 3, Rules::Classic),
        solved("fuzz-4c", 4, Rules::Classic),
    ];
    let mut loaded = 0;
    for round in 0..600 {
        let (dir, kind) = rng.pick(&originals).clone();
        let shape = Shape::new(kind.size, kind.max_cars).unwrap();
        let (a, b) = random_layer(&mut rng, &shape);
        let layer = shape.layer(a, b);
        let path = layer_path(&dir, a, b);
        let good = std::fs::read(&path).unwrap();
        let (truth, _) = read_layer(&dir, kind, &layer).unwrap();
        let mut bytes = good.clone();
        damage(&mut rng, &mut bytes);
        let fixed = rng.chance(2);
        if fixed {
            fix_checksum(&mut bytes);
        }
        std::fs::write(&path, &bytes).unwrap();
        // Opening reads every header: it must refuse or accept, not fail.
        let opened = dodgem::tablebase::Layered::open(&dir);
        match read_layer(&dir, kind, &layer) {
            Err(_) => {}
            Ok((values, _)) => {
                loaded += 1;
                if !fixed {
                    assert_eq!(values, truth, "round {round}: a damaged layer read wrong");
                }
                assert!(opened.is_ok() || fixed, "round {round}");
            }
        }
        std::fs::write(&path, &good).unwrap();
    }
    // Random bytes, short and long, some behind a real header.
    let (dir, kind) = &originals[0];
    let shape = Shape::new(kind.size, kind.max_cars).unwrap();
    let layer = shape.layer(1, 2);
    let path = layer_path(dir, 1, 2);
    let good = std::fs::read(&path).unwrap();
    for round in 0..200 {
        let len = rng.below(4096);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if rng.chance(2) && bytes.len() >= HEADER_LEN {
            bytes[..HEADER_LEN].copy_from_slice(&good[..HEADER_LEN]);
            fix_checksum(&mut bytes);
        }
        std::fs::write(&path, &bytes).unwrap();
        assert!(
            read_layer(dir, *kind, &layer).is_err(),
            "random bytes read as a layer (round {round})"
        );
    }
    // Some damage only touches bytes nobody reads (and stays right);
    // most must have been refused.
    assert!(loaded < 150, "{loaded} of 600 damaged files read");
    for (dir, _) in &originals {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

/// The layer file that holds `position`.
fn file_of(dir: &Path, kind: Kind, position: &Position) -> PathBuf {
    let shape = Shape::new(kind.size, kind.max_cars).unwrap();
    let (a, b, _) = shape.locate(position).unwrap();
    layer_path(dir, a, b)
}

#[test]
fn the_engine_survives_damaged_layer_files() {
    let _cpu = shared();
    let (dir, kind) = solved("fuzz-engine", 3, Rules::Textbook);
    let mut rng = Rng(0x7ab1_e5ef);
    let mut engine = Engine::start();
    engine.send_all(&[&format!(
        "setoption name TablebasePath value {}",
        dir.display()
    )]);
    engine.send("position startpos moves a3b3");
    let fen = engine.fen();
    let root = dodgem::notation::parse_position(&fen).unwrap();
    let path = file_of(&dir, kind, &root);
    let good = std::fs::read(&path).unwrap();
    for round in 0..25 {
        let mut bytes = good.clone();
        damage(&mut rng, &mut bytes);
        if rng.chance(2) {
            fix_checksum(&mut bytes);
        }
        std::fs::write(&path, &bytes).unwrap();
        // Loaded afresh, so the layer is read anew.
        engine.send(&format!(
            "setoption name TablebasePath value {}",
            dir.display()
        ));
        let lines = engine.sync();
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info string loaded") || l.starts_with("info string error")),
            "round {round}: {lines:?}"
        );
        engine.send("solve");
        let (lines, _) = engine.read_until(|l| l.starts_with("solve "), LONG);
        assert!(lines.last().unwrap().starts_with("solve "), "{lines:?}");
        let lines = engine.go("go depth 2", LONG);
        assert!(lines.last().unwrap().starts_with("bestmove"));
        assert_eq!(engine.fen(), fen, "round {round}");
    }
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_damaged_payload_is_reported_and_the_position_searched() {
    let _cpu = shared();
    let (dir, kind) = solved("fuzz-payload", 4, Rules::Textbook);
    let root = dodgem::notation::parse_position("4/B3/B1W1/1BW1 b").unwrap();
    let path = file_of(&dir, kind, &root);
    // Every layer's payload damaged: the root's, and those its moves reach.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().path();
        if file.extension().is_some_and(|e| e == "dtz") {
            let mut bytes = std::fs::read(&file).unwrap();
            let last = bytes.len() - 1;
            bytes[last] ^= 0x24;
            std::fs::write(&file, &bytes).unwrap();
        }
    }
    let mut engine = Engine::start();
    let lines = engine.send_all(&[
        &format!("setoption name TablebasePath value {}", dir.display()),
        "position fen 4/B3/B1W1/1BW1 b",
    ]);
    // The headers are sound: the directory loads.
    assert!(
        lines.iter().any(|l| l.starts_with("info string loaded")),
        "{lines:?}"
    );
    engine.send("solve");
    let (lines, _) = engine.read_until(|l| l.starts_with("solve "), LONG);
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string error: table:")
                && l.contains(name)
                && l.contains("checksum")),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), "solve unknown");
    // A search says what it found damaged and searches instead.
    let lines = engine.go("go depth 3", LONG);
    assert!(lines.last().unwrap().starts_with("bestmove"), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string error: table:")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("info depth 3")),
        "{lines:?}"
    );
    // Each damaged layer is said once: the next search is quiet.
    let lines = engine.go("go depth 3", LONG);
    assert!(!lines.iter().any(|l| l.contains("error")), "{lines:?}");
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

//! Table files attacked: random bytes, bit flips in a real table (with and
//! without the checksum made to match), and the engine fed a sample of
//! them. A file is refused, or (checksum passing) it holds exactly the
//! true values; never a hang or a crash, and the engine keeps answering.

use crate::common::{Engine, LONG, Rng, scratch, shared};
use dodgem::board::Rules;
use dodgem::tablebase::{self, Table};

const HEADER_LEN: usize = 32;

fn real_table(size: usize, rules: Rules) -> Vec<u8> {
    let mut bytes = Vec::new();
    tablebase::builtin(size, rules)
        .unwrap()
        .write_to(&mut bytes)
        .unwrap();
    bytes
}

/// Makes the header's checksum match the bytes (when the length field
/// can be trusted at all).
fn fix_checksum(bytes: &mut [u8]) {
    if bytes.len() < HEADER_LEN {
        return;
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[8..24]);
    crc.update(&bytes[HEADER_LEN..]);
    let sum = crc.finalize().to_le_bytes();
    bytes[24..28].copy_from_slice(&sum);
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

/// Loads `bytes` as a file and checks the outcome: refused, or exactly a
/// built-in table.
fn check_load(path: &std::path::Path, bytes: &[u8], what: &str) -> bool {
    std::fs::write(path, bytes).unwrap();
    match Table::load(path) {
        Err(_) => false,
        Ok(table) => {
            let truth = tablebase::builtin(table.size(), table.rules()).unwrap();
            assert_eq!(
                table.values(),
                truth.values(),
                "{what}: a wrong table loaded ({table:?})"
            );
            true
        }
    }
}

#[test]
fn damaged_table_files_are_refused_or_exactly_right() {
    let _cpu = shared();
    let dir = scratch("tables");
    let path = dir.join("t.dtb");
    let mut rng = Rng(0x7ab1_e5ee);
    let originals = [
        real_table(3, Rules::Textbook),
        real_table(3, Rules::Classic),
        real_table(4, Rules::Classic),
    ];
    let mut loaded = 0;
    for round in 0..600 {
        let mut bytes = rng.pick(&originals).clone();
        damage(&mut rng, &mut bytes);
        let fixed = rng.chance(2);
        if fixed {
            fix_checksum(&mut bytes);
        }
        let what = format!("round {round} (checksum fixed: {fixed})");
        if check_load(&path, &bytes, &what) {
            loaded += 1;
        }
    }
    // Random bytes, short and long, some behind a real header.
    for round in 0..200 {
        let len = rng.below(4096);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if rng.chance(2) && bytes.len() >= HEADER_LEN {
            let header = &originals[0][..HEADER_LEN];
            bytes[..HEADER_LEN].copy_from_slice(header);
            fix_checksum(&mut bytes);
        }
        assert!(
            !check_load(&path, &bytes, &format!("random {round}")),
            "random bytes loaded (round {round})"
        );
    }
    // Some damage only touches bytes nobody reads (and stays right);
    // most must have been refused.
    assert!(loaded < 100, "{loaded} of 600 damaged files loaded");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_engine_survives_damaged_table_files() {
    let _cpu = shared();
    let dir = scratch("engine-tables");
    let mut rng = Rng(0x7ab1_e5ef);
    let original = real_table(3, Rules::Textbook);
    let mut engine = Engine::start();
    engine.send("position startpos moves a3b3");
    let fen = engine.fen();
    for round in 0..25 {
        let mut bytes = original.clone();
        damage(&mut rng, &mut bytes);
        if rng.chance(2) {
            fix_checksum(&mut bytes);
        }
        let path = dir.join(format!("damaged-{round}.dtb"));
        std::fs::write(&path, &bytes).unwrap();
        engine.send(&format!(
            "setoption name TablebasePath value {}",
            path.display()
        ));
        let lines = engine.sync();
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info string loaded") || l.starts_with("info string error")),
            "round {round}: {lines:?}"
        );
        let lines = engine.go("go depth 2", LONG);
        assert!(lines.last().unwrap().starts_with("bestmove"));
        assert_eq!(engine.fen(), fen, "round {round}");
    }
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

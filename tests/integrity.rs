//! Tables that never lie (issue 57): damage that used to give wrong values
//! presented as exact, or to lose data silently, each on small tables
//! solved by the real binary. Every damaged file or block is named in an
//! error, a position it holds is treated as not covered, and whatever a
//! resumed run, a journal or a conversion builds on is checked first.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{Engine, LONG, Rng, files_of, mkfifo, run, scratch, shared};
use dodgem::notation::parse_position;
use dodgem::solver::Shape;

/// A solve in the debug build: a few seconds on 5 x 5 with 2 cars.
const SOLVE: Duration = Duration::from_secs(120);

/// `dodgem solve --size 5 --max-cars 2 --out <name>/t`, and the directory.
fn solve5(name: &str, rules: &str) -> PathBuf {
    let dir = scratch(name).join("t");
    let out = run(
        &[
            "solve",
            "--size",
            "5",
            "--max-cars",
            "2",
            "--rules",
            rules,
            "--out",
            dir.to_str().unwrap(),
            "--quiet",
        ],
        SOLVE,
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    dir
}

/// [`solve5`] by the value pass (`--no-distances`: `.wdl` and `.dtz`)
/// with the distances to the end added after (`--dte`): tables with both
/// distances, whose `.dte` files may go missing.
fn solve5_two_passes(name: &str, rules: &str) -> PathBuf {
    let dir = scratch(name).join("t");
    let dir_arg = dir.to_str().unwrap();
    let args = [
        "solve",
        "--size",
        "5",
        "--max-cars",
        "2",
        "--rules",
        rules,
        "--out",
        dir_arg,
        "--quiet",
        "--no-distances",
    ];
    let out = run(&args, SOLVE);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let out = run(&["solve", "--dte", dir_arg, "--quiet"], SOLVE);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    dir
}

/// A copy of the directory `from` at `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (name, bytes) in files_of(from) {
        std::fs::write(to.join(name), bytes).unwrap();
    }
}

/// The largest file of `dir` ending `.ext`, and its layer.
fn largest(dir: &Path, ext: &str) -> (PathBuf, (u32, u32)) {
    let path = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let name = path.file_stem().unwrap().to_str().unwrap().to_string();
    let layer = name.strip_prefix("layer-").unwrap();
    let (a, b) = layer.split_once('-').unwrap();
    (path, (a.parse().unwrap(), b.parse().unwrap()))
}

/// Where a layer file's block index lies: after the header (96 bytes in
/// format 4, 80 in format 3) and the code's table; before the block data.
fn index_of(path: &Path) -> std::ops::Range<usize> {
    let bytes = std::fs::read(path).unwrap();
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
    let header = if u32_at(8) >= 4 { 96 } else { 80 };
    let start = header + (u32_at(76) >> 8) as usize;
    let end = bytes.len() - u64_at(64) as usize;
    assert!(end > start, "{}: an index", path.display());
    start..end
}

/// Writes `bytes` over the file at `path` from `at`, in place (the same
/// inode, as a damaged disk or a copy onto an open file would).
fn write_in_place(path: &Path, at: usize, bytes: &[u8]) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.write_all_at(bytes, at as u64).unwrap();
    file.sync_all().unwrap();
}

/// `count` random 5 x 5 positions with at most 2 cars a side in layer
/// `layer` (either side to move), as FENs.
fn positions_in(layer: (u32, u32), count: usize, seed: u64) -> Vec<String> {
    let shape = Shape::shared(5, 2).unwrap();
    let mut rng = Rng(seed);
    let mut found = Vec::new();
    for _ in 0..2_000_000 {
        if found.len() == count {
            break;
        }
        let mut board = [b'.'; 25];
        for (piece, cars) in [(b'B', 1 + rng.below(2)), (b'W', 1 + rng.below(2))] {
            for _ in 0..cars {
                let square = rng.below(25);
                if board[square] == b'.' {
                    board[square] = piece;
                }
            }
        }
        let rows: Vec<String> = board
            .chunks(5)
            .map(|row| {
                let mut text = String::new();
                let mut empty = 0;
                for &c in row {
                    if c == b'.' {
                        empty += 1;
                    } else {
                        if empty > 0 {
                            text.push_str(&empty.to_string());
                            empty = 0;
                        }
                        text.push(c as char);
                    }
                }
                if empty > 0 {
                    text.push_str(&empty.to_string());
                }
                text
            })
            .collect();
        let side = if rng.chance(2) { "b" } else { "w" };
        let fen = format!("{} {side}", rows.join("/"));
        let Ok(position) = parse_position(&fen) else {
            continue;
        };
        if position.legal_moves().as_slice().is_empty() {
            continue;
        }
        if let Some((a, b, _)) = shape.locate(&position)
            && (a, b) == layer
            && !found.contains(&fen)
        {
            found.push(fen);
        }
    }
    assert_eq!(found.len(), count, "positions of layer {layer:?}");
    found
}

/// An engine on 5 x 5 with the tables of `path` (a `TablebasePath`
/// value), and what the load said.
fn engine_with(path: &str) -> (Engine, Vec<String>) {
    let mut engine = Engine::start();
    let lines = engine.send_all(&[
        "setoption name BoardSize value 5",
        &format!("setoption name TablebasePath value {path}"),
    ]);
    (engine, lines)
}

/// The `solve` reply for `fen`, with the `info string error` lines before
/// it.
fn solve(engine: &mut Engine, fen: &str) -> (String, Vec<String>) {
    engine.send(&format!("position fen {fen}"));
    engine.send("solve");
    let mut errors = Vec::new();
    loop {
        let (line, _) = engine.wait_for("", LONG);
        if line.starts_with("info string error:") {
            errors.push(line);
        } else if line.starts_with("solve") {
            return (line, errors);
        }
    }
}

fn errors(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|l| l.starts_with("info string error:"))
        .collect()
}

/// The replies of a good engine for `fens`: every one a value.
fn good_answers(dir: &Path, fens: &[String]) -> Vec<String> {
    let (mut engine, lines) = engine_with(dir.to_str().unwrap());
    assert!(errors(&lines).is_empty(), "{lines:?}");
    let answers: Vec<String> = fens.iter().map(|fen| solve(&mut engine, fen).0).collect();
    engine.quit();
    assert!(answers.iter().all(|a| a != "solve unknown"), "{answers:?}");
    answers
}

#[test]
fn a_zeroed_block_index_is_refused_at_load_and_under_a_running_engine() {
    let _cpu = shared();
    let good = solve5("zeroed", "textbook");
    let (wdl, layer) = largest(&good, "wdl");
    let fens = positions_in(layer, 40, 1);
    let answers = good_answers(&good, &fens);
    let name = wdl.file_name().unwrap().to_str().unwrap();

    // A zeroed copy first in the path, a good one after it: the damaged
    // directory is refused, naming the file, and the good one answers.
    let bad = good.parent().unwrap().join("bad");
    copy_dir(&good, &bad);
    let bad_wdl = bad.join(name);
    let index = index_of(&bad_wdl);
    write_in_place(&bad_wdl, index.start, &vec![0; index.len()]);
    let (mut engine, lines) = engine_with(&format!("{}:{}", bad.display(), good.display()));
    let refused = errors(&lines);
    assert!(
        refused.len() == 1
            && refused[0].contains(bad_wdl.to_str().unwrap())
            && refused[0].contains("block index fails its checksum"),
        "{lines:?}"
    );
    for (fen, answer) in fens.iter().zip(&answers) {
        assert_eq!(&solve(&mut engine, fen).0, answer, "{fen}");
    }
    engine.quit();

    // Zeroed under an engine that loaded the good file: every position of
    // the layer is unknown, with the file named, never a wrong value.
    let live = good.parent().unwrap().join("live");
    copy_dir(&good, &live);
    let (mut engine, lines) = engine_with(live.to_str().unwrap());
    assert!(errors(&lines).is_empty(), "{lines:?}");
    let live_wdl = live.join(name);
    write_in_place(&live_wdl, index.start, &vec![0; index.len()]);
    let mut named = false;
    for fen in &fens {
        let (reply, errors) = solve(&mut engine, fen);
        assert_eq!(reply, "solve unknown", "{fen}: {errors:?}");
        named |= errors
            .iter()
            .any(|e| e.contains(live_wdl.to_str().unwrap()));
    }
    assert!(named, "the damaged file is named");
    // A search over positions leading into the layer claims no value from
    // it: it still answers.
    engine.send(&format!("position fen {}", fens[0]));
    let lines = engine.go("go depth 3", LONG);
    assert!(lines.last().unwrap().starts_with("bestmove"), "{lines:?}");
    engine.quit();
    std::fs::remove_dir_all(good.parent().unwrap()).unwrap();
}

#[test]
fn another_table_sets_same_named_file_written_in_place_answers_nothing() {
    let _cpu = shared();
    let mine = solve5("foreign-mine", "textbook");
    let theirs = solve5("foreign-theirs", "classic");
    let (wdl, layer) = largest(&mine, "wdl");
    let name = wdl.file_name().unwrap().to_str().unwrap();
    let dte = wdl.with_extension("dte");
    let fens = positions_in(layer, 60, 2);
    let answers = good_answers(&mine, &fens);
    let (mut engine, lines) = engine_with(mine.to_str().unwrap());
    assert!(errors(&lines).is_empty(), "{lines:?}");
    // The other set's files of the same layer, written over these in
    // place, as far as these files reach.
    for (path, other) in [
        (&wdl, theirs.join(name)),
        (&dte, theirs.join(name).with_extension("dte")),
    ] {
        let bytes = std::fs::read(other).unwrap();
        let length = std::fs::metadata(path).unwrap().len() as usize;
        write_in_place(path, 0, &bytes[..bytes.len().min(length)]);
    }
    let (mut unknown, mut said) = (0, Vec::new());
    for (fen, answer) in fens.iter().zip(&answers) {
        let (reply, errors) = solve(&mut engine, fen);
        said.extend(errors);
        if reply == "solve unknown" {
            unknown += 1;
        } else {
            assert_eq!(&reply, answer, "{fen}: a value of other tables");
        }
    }
    // Each damaged block is named once, the first time it is read.
    assert!(unknown > 0, "the other set's blocks were read as these");
    assert!(
        said.iter()
            .any(|e| e.contains(name) && e.contains("fails its checksum")),
        "{said:?}"
    );
    engine.quit();
    // Loaded afresh, the file is refused as other tables' (its header
    // says classic before its set is compared).
    let (mut engine, lines) = engine_with(mine.to_str().unwrap());
    assert!(
        errors(&lines)
            .iter()
            .any(|l| l.contains(name) && l.contains("is from 5x5 classic tables")),
        "{lines:?}"
    );
    engine.quit();
    std::fs::remove_dir_all(mine.parent().unwrap()).unwrap();
    std::fs::remove_dir_all(theirs.parent().unwrap()).unwrap();
}

#[test]
fn missing_distance_files_are_named_at_load_and_fail_the_check() {
    let _cpu = shared();
    let dir = solve5_two_passes("no-dte", "textbook");
    let (dte, layer) = largest(&dir, "dte");
    let fen = &positions_in(layer, 1, 3)[0];
    let (mut engine, lines) = engine_with(dir.to_str().unwrap());
    assert!(errors(&lines).is_empty(), "{lines:?}");
    let with = solve(&mut engine, fen).0;
    engine.quit();
    std::fs::remove_file(&dte).unwrap();
    let (mut engine, lines) = engine_with(dir.to_str().unwrap());
    let said = errors(&lines);
    assert!(
        said.len() == 1
            && said[0].contains("1 of the 100 .dte files")
            && said[0].contains(dte.to_str().unwrap()),
        "{lines:?}"
    );
    // Answered without distances to the end, as documented.
    let (without, _) = solve(&mut engine, fen);
    let kind = with.split(' ').nth(1).unwrap();
    if kind == "draw" {
        assert_eq!(without, with);
    } else {
        let dtz = with.split(" dtz ").nth(1).unwrap();
        assert_eq!(without, format!("solve {kind} dtz {dtz}"), "{with}");
    }
    engine.quit();
    let out = run(&["solve", "--verify", dir.to_str().unwrap()], SOLVE);
    assert_eq!(out.status.code(), Some(1), "{}", out.stdout);
    assert!(
        out.stderr.contains("1 of its 100 .dte files")
            && out.stderr.contains(dte.to_str().unwrap()),
        "{}",
        out.stderr
    );
    // A `--dte` run killed part of the way: most are missing.
    let mut removed = 1;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if removed < 60 && path.extension().is_some_and(|e| e == "dte") {
            std::fs::remove_file(path).unwrap();
            removed += 1;
        }
    }
    let (mut engine, lines) = engine_with(dir.to_str().unwrap());
    assert!(
        errors(&lines)
            .iter()
            .any(|l| l.contains("60 of the 100 .dte files")),
        "{lines:?}"
    );
    engine.quit();
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

/// The 4 x 4 classic tables in the old format (version 1).
fn old_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/old-format-4x4-classic")
}

/// 4 x 4 textbook tables of at most 2 cars a side in format 2 (layer
/// files of format 3), as the solver wrote them until December 2026.
fn format_2_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/format-2-4x4-textbook-2cars")
}

#[test]
fn a_conversion_converts_all_or_names_what_is_missing() {
    let _cpu = shared();
    let base = scratch("convert-missing");
    for (what, source) in [("old", old_directory()), ("format 2", format_2_directory())] {
        let old = base.join(format!("{}-old", what.replace(' ', "")));
        copy_dir(&source, &old);
        let (dte, _) = largest(&old, "dte");
        std::fs::remove_file(&dte).unwrap();
        let new = base.join(format!("{}-new", what.replace(' ', "")));
        let out = run(
            &[
                "solve",
                "--convert",
                old.to_str().unwrap(),
                new.to_str().unwrap(),
                "--quiet",
            ],
            SOLVE,
        );
        assert_eq!(out.status.code(), Some(1), "{what}: {}", out.stdout);
        assert!(
            out.stderr.contains(".dte files") && out.stderr.contains(dte.to_str().unwrap()),
            "{what}: {}",
            out.stderr
        );
        // With every file there: all of it, said exactly.
        copy_dir(&source, &old);
        let out = run(
            &[
                "solve",
                "--convert",
                old.to_str().unwrap(),
                new.to_str().unwrap(),
                "--quiet",
            ],
            SOLVE,
        );
        assert_eq!(out.status.code(), Some(0), "{what}: {}", out.stderr);
        let layers = if what == "old" { 144 } else { 64 };
        assert!(
            out.stdout.contains(&format!(
                "converted {layers} layers from {} to {}: {} files, .wdl, .dtz and .dte for every layer",
                old.display(),
                new.display(),
                3 * layers
            )),
            "{what}: {}",
            out.stdout
        );
        let files = files_of(&new);
        for ext in ["wdl", "dtz", "dte"] {
            let count = files
                .keys()
                .filter(|n| n.ends_with(&format!(".{ext}")))
                .count();
            assert_eq!(count, layers, "{what}: .{ext}");
        }
        let out = run(
            &["solve", "--verify", new.to_str().unwrap(), "--quiet"],
            SOLVE,
        );
        assert_eq!(out.status.code(), Some(0), "{what}: {}", out.stderr);
    }
    // A format-2 directory is read as it is, by the engine and the check.
    let out = run(
        &[
            "solve",
            "--verify",
            format_2_directory().to_str().unwrap(),
            "--quiet",
        ],
        SOLVE,
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    // Into a directory inside the old one, or of other files: refused.
    let old = base.join("format2-old");
    for (new, complaint) in [
        (old.join("inner"), "lies inside the old directory"),
        (base.join("junk"), "holds other files"),
    ] {
        std::fs::create_dir_all(base.join("junk")).unwrap();
        std::fs::write(base.join("junk/notes.txt"), "mine").unwrap();
        let out = run(
            &[
                "solve",
                "--convert",
                old.to_str().unwrap(),
                new.to_str().unwrap(),
            ],
            SOLVE,
        );
        assert_eq!(out.status.code(), Some(1), "{}", out.stdout);
        assert!(out.stderr.contains(complaint), "{}", out.stderr);
    }
    assert!(!old.join("inner").exists());
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn a_resumed_solve_solves_a_damaged_finished_layer_again() {
    let _cpu = shared();
    let dir = scratch("resume-damaged").join("t");
    let go = |stop: Option<&str>| {
        let mut args = vec![
            "solve",
            "--size",
            "5",
            "--max-cars",
            "2",
            "--out",
            dir.to_str().unwrap(),
        ];
        if let Some(stop) = stop {
            args.extend(["--stop-after-layers", stop]);
        }
        run(&args, SOLVE)
    };
    let out = go(Some("40"));
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains("stopped after writing"),
        "{}",
        out.stdout
    );
    // A byte of a finished layer's last block flipped.
    let (wdl, _) = largest(&dir, "wdl");
    let mut bytes = std::fs::read(&wdl).unwrap();
    *bytes.last_mut().unwrap() ^= 0x10;
    std::fs::write(&wdl, &bytes).unwrap();
    let out = go(None);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains(wdl.to_str().unwrap())
            && out.stderr.contains("fails its checksum")
            && out.stderr.contains("is made again"),
        "{}",
        out.stderr
    );
    let out = run(
        &["solve", "--verify", dir.to_str().unwrap(), "--quiet"],
        SOLVE,
    );
    assert_eq!(out.status.code(), Some(0), "{}{}", out.stdout, out.stderr);
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[test]
fn a_journal_is_bound_to_the_directory_it_checked() {
    let _cpu = shared();
    let good = solve5("journal", "textbook");
    let bad = good.parent().unwrap().join("bad");
    copy_dir(&good, &bad);
    let (dte, _) = largest(&bad, "dte");
    let mut bytes = std::fs::read(&dte).unwrap();
    *bytes.last_mut().unwrap() ^= 0x01;
    std::fs::write(&dte, &bytes).unwrap();
    let journal = good.parent().unwrap().join("journal.txt");
    let verify = |dir: &Path| {
        run(
            &[
                "solve",
                "--verify",
                dir.to_str().unwrap(),
                "--journal",
                journal.to_str().unwrap(),
                "--quiet",
            ],
            SOLVE,
        )
    };
    let out = verify(&good);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    // Its own journal again: every pair recorded, still read.
    let out = verify(&good);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    // Another directory's check does not take it.
    let out = verify(&bad);
    assert_eq!(out.status.code(), Some(1), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("is the journal of the check of other tables"),
        "{}",
        out.stderr
    );
    // A recorded pair whose file is damaged since is not passed.
    let (good_dte, _) = largest(&good, "dte");
    std::fs::write(&good_dte, &bytes).unwrap();
    let out = verify(&good);
    assert_eq!(out.status.code(), Some(1), "{}", out.stdout);
    assert!(out.stderr.contains("fails its checksum"), "{}", out.stderr);
    std::fs::remove_dir_all(good.parent().unwrap()).unwrap();
}

#[test]
fn journals_refuse_fifos_devices_and_bad_content() {
    let _cpu = shared();
    let base = scratch("journal-kinds");
    let dir = base.join("t");
    let out = run(
        &[
            "solve",
            "--size",
            "4",
            "--out",
            dir.to_str().unwrap(),
            "--quiet",
        ],
        SOLVE,
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let fifo = base.join("fifo");
    assert!(mkfifo(&fifo), "mkfifo");
    let garbage = base.join("garbage");
    std::fs::write(&garbage, "not a journal\nat all\n").unwrap();
    for mode in ["--verify", "--reach"] {
        for (journal, complaint) in [
            (fifo.as_path(), "not a regular file"),
            (Path::new("/dev/zero"), "not a regular file"),
            (garbage.as_path(), "bad content"),
        ] {
            let out = run(
                &[
                    "solve",
                    mode,
                    dir.to_str().unwrap(),
                    "--journal",
                    journal.to_str().unwrap(),
                    "--quiet",
                ],
                LONG,
            );
            assert_eq!(
                out.status.code(),
                Some(1),
                "{mode} {journal:?}: {}",
                out.stdout
            );
            assert!(
                out.stderr.contains(complaint) && !out.stderr.contains("cannot write"),
                "{mode} {journal:?}: {}",
                out.stderr
            );
        }
    }
    // A reach checkpoint of other tables (another solve of the same kind):
    // refused.
    let checkpoint = base.join("reach.txt");
    let reach = |dir: &Path| {
        run(
            &[
                "solve",
                "--reach",
                dir.to_str().unwrap(),
                "--journal",
                checkpoint.to_str().unwrap(),
                "--quiet",
            ],
            SOLVE,
        )
    };
    assert_eq!(reach(&dir).status.code(), Some(0));
    let other = base.join("other");
    let out = run(
        &[
            "solve",
            "--size",
            "4",
            "--out",
            other.to_str().unwrap(),
            "--quiet",
        ],
        SOLVE,
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let out = reach(&other);
    assert_eq!(out.status.code(), Some(1), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("is not a reach checkpoint of these tables"),
        "{}",
        out.stderr
    );
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn one_writer_a_directory_and_only_its_own_temporary_files_removed() {
    let _cpu = shared();
    let base = scratch("lock");
    let dir = base.join("t");
    let solve = |stop: &str| {
        run(
            &[
                "solve",
                "--size",
                "4",
                "--max-cars",
                "2",
                "--out",
                dir.to_str().unwrap(),
                "--stop-after-layers",
                stop,
                "--quiet",
            ],
            SOLVE,
        )
    };
    assert_eq!(solve("4").status.code(), Some(0));
    // Another writer holds the directory: refused, naming it.
    let lock = dodgem::solver::lock_dir(&dir).unwrap();
    let out = solve("1000");
    assert_eq!(out.status.code(), Some(1), "{}", out.stdout);
    assert!(
        out.stderr
            .contains(&format!("is in use by process {}", std::process::id())),
        "{}",
        out.stderr
    );
    let fixture = format_2_directory();
    let others: [&[&str]; 2] = [
        &["solve", "--dte", dir.to_str().unwrap()],
        &[
            "solve",
            "--convert",
            fixture.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
    ];
    for args in others {
        let out = run(args, SOLVE);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", out.stdout);
        assert!(
            out.stderr.contains("is in use by process"),
            "{args:?}: {}",
            out.stderr
        );
    }
    drop(lock);
    // A running process's temporary file is its own; a dead one's goes.
    let live = dir.join(format!("layer-000-000.wdl.{}.tmp", std::process::id()));
    let dead = dir.join("layer-000-001.wdl.999999999.tmp");
    std::fs::write(&live, "writing").unwrap();
    std::fs::write(&dead, "left").unwrap();
    let out = solve("1000");
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(live.exists() && !dead.exists());
    std::fs::remove_file(&live).unwrap();
    assert!(!dir.join(dodgem::solver::LOCK_FILE).exists());
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn a_plan_of_any_size_is_counted_not_built() {
    let _cpu = shared();
    let out = run(&["solve", "--plan", "--size", "8"], LONG);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains("8x8 Dodgem, at most 7 cars a side"),
        "{}",
        out.stdout
    );
    let out = run(&["solve", "--plan", "--size", "3"], LONG);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(!out.stdout.contains("0.0 GiB"), "{}", out.stdout);
    assert!(
        out.stdout.contains(" KiB to solve") || out.stdout.contains(" bytes to solve"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_missing_directory_is_called_one() {
    let _cpu = shared();
    for mode in ["--verify", "--reach", "--dte", "--playout"] {
        let out = run(&["solve", mode, "/no/such/dir"], LONG);
        assert_eq!(out.status.code(), Some(1), "{mode}");
        assert!(
            out.stderr.contains("/no/such/dir: no such directory"),
            "{mode}: {}",
            out.stderr
        );
    }
}

/// The engine's resident memory, from `/proc`.
fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn the_table_cache_takes_the_memory_of_the_blocks_it_holds_not_its_bound() {
    let _cpu = shared();
    let dir = solve5("cache", "textbook");
    let mut engine = Engine::start();
    let lines = engine.send_all(&[
        "setoption name BoardSize value 5",
        "setoption name TablebaseCache value 65536",
        &format!("setoption name TablebasePath value {}", dir.display()),
    ]);
    assert!(errors(&lines).is_empty(), "{lines:?}");
    // Three black cars, one about to leave: the search meets positions of
    // two cars a side at once, and probes them.
    engine.send("position fen 5/5/4B/1B3/B1WW1 b");
    engine.sync();
    let before = resident_kib(engine.pid());
    engine.send("go nodes 2000");
    let (lines, _) = engine.read_until(|l| l.starts_with("bestmove"), LONG);
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" tbhits ") && !l.contains(" tbhits 0 ")),
        "no probe: {lines:?}"
    );
    let after = resident_kib(engine.pid());
    // 64 GiB of blocks allowed: a table sized for that bound would take
    // a quarter of a gigabyte at the first probe.
    assert!(
        after < before + 32 * 1024,
        "{before} KiB before the search, {after} KiB after"
    );
    engine.quit();
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

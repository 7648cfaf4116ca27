//! The table format as users meet it: an old directory converted value for
//! value (and named for conversion wherever it is given unconverted), and
//! what stands at a table's paths (FIFOs, devices, directories, damaged or
//! mislabelled distance files) refused with a clear message, at load, in
//! the command line and after a good load, without a hang.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{Engine, LONG, files_of, mkfifo, run, scratch, shared, table_dir};
use dodgem::board::Rules;
use dodgem::solver::{self, Dtz, Kind, Metric, Reading, Shape, Tables, WdlReader};
use dodgem::tablebase;

/// The 4 x 4 classic tables with their distances to the end in the old
/// format (version 1), as the solver wrote them until November 2026.
fn old_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/old-format-4x4-classic")
}

#[test]
fn an_old_directory_converts_value_for_value_and_resumes() {
    let _cpu = shared();
    let old = old_directory();
    let new = scratch("convert").join("tables");
    let done = solver::convert(&old, &new, 2, &|_| {}).unwrap();
    assert_eq!((done.layers, done.with_dte), (144, true));
    assert_eq!(done.positions, 276_600);
    let tables = Tables::open(&new).unwrap();
    assert!(tables.has_dte());
    let builtin = tablebase::builtin(4, Rules::Classic).unwrap();
    let reference = crate::reference::Reference::get(4, Rules::Classic);
    for position in &reference.positions {
        assert_eq!(tables.probe(position).unwrap(), builtin.probe(position));
        assert_eq!(
            tables.probe_metric(Metric::Dte, position).unwrap(),
            builtin.probe_end(position)
        );
    }
    // Again: every layer is there, nothing is written.
    let again = solver::convert(&old, &new, 2, &|file| assert!(file.skipped)).unwrap();
    assert_eq!((again.layers, again.positions), (144, 0));
    // The converted directory passes the verifier.
    let verified = solver::verify(&new, 2, None, &|_, _| {}).unwrap();
    assert_eq!(verified.mismatches, 0);
    assert_eq!((verified.layers, verified.dte_layers), (144, 144));
    std::fs::remove_dir_all(new.parent().unwrap()).unwrap();
}

#[test]
fn an_old_directory_is_named_for_conversion_wherever_it_is_given() {
    let _cpu = shared();
    let old = old_directory();
    let hint = "dodgem solve --convert OLD NEW";
    let error = tablebase::Layered::open(&old).unwrap_err();
    assert!(error.contains(hint), "{error}");
    for command in ["--verify", "--dte", "--reach", "--playout"] {
        let out = run(&["solve", command, old.to_str().unwrap()], LONG);
        assert_eq!(out.status.code(), Some(1), "{command}: {}", out.stderr);
        assert!(out.stderr.contains(hint), "{command}: {}", out.stderr);
    }
    let mut engine = Engine::start();
    let lines = engine.send_all(&[
        "setoption name BoardSize value 4",
        "setoption name Rules value classic",
        &format!("setoption name TablebasePath value {}", old.display()),
    ]);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string error:") && l.contains(hint)),
        "{lines:?}"
    );
    engine.quit();
}

#[test]
fn the_convert_command_reports_what_it_compared() {
    let _cpu = shared();
    let new = scratch("convert-cli").join("tables");
    let out = run(
        &[
            "solve",
            "--convert",
            old_directory().to_str().unwrap(),
            new.to_str().unwrap(),
            "--quiet",
        ],
        LONG,
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "converted 144 layers from OLD to NEW: 432 files, .wdl, .dtz and .dte for every \
             layer; 276600 positions compared value for value, all equal"
                .replace("OLD", old_directory().to_str().unwrap())
                .replace("NEW", new.to_str().unwrap())
                .as_str()
        ),
        "{}",
        out.stdout
    );
    // Into itself: refused.
    let out = run(
        &[
            "solve",
            "--convert",
            new.to_str().unwrap(),
            new.to_str().unwrap(),
        ],
        LONG,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.contains("convert into a new one"),
        "{}",
        out.stderr
    );
    std::fs::remove_dir_all(new.parent().unwrap()).unwrap();
}

#[test]
fn a_current_directory_recodes_value_for_value_into_the_smallest_code() {
    let _cpu = shared();
    let base = scratch("recode");
    let (current, again) = (base.join("current"), base.join("again"));
    solver::convert(&old_directory(), &current, 2, &|_| {}).unwrap();
    // Its win/draw/loss files are tiles where tiles are smaller.
    let tiles = std::fs::read_dir(&current)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wdl"))
        .filter(|p| std::fs::read(p).unwrap()[21] == 1)
        .count();
    assert!(tiles > 0, "no layer in tiles");
    let done = solver::convert(&current, &again, 2, &|_| {}).unwrap();
    assert_eq!((done.layers, done.with_dte), (144, true));
    assert_eq!(done.positions, 276_600);
    // A table set of its own: every file written anew, none shared with
    // the directory converted, each of the same length (the same writer,
    // the same values) but bound to the new set.
    let (before, after) = (files_of(&current), files_of(&again));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    assert_ne!(before[solver::MANIFEST], after[solver::MANIFEST]);
    use std::os::unix::fs::MetadataExt;
    for (name, bytes) in before.iter().filter(|(n, _)| *n != solver::MANIFEST) {
        assert_eq!(bytes.len(), after[name].len(), "{name}");
        assert_ne!(bytes, &after[name], "{name}");
        let inode = |dir: &Path| std::fs::metadata(dir.join(name)).unwrap().ino();
        assert_ne!(inode(&current), inode(&again), "{name}");
    }
    let verified = solver::verify(&again, 2, None, &|_, _| {}).unwrap();
    assert_eq!(verified.mismatches, 0);
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn what_stands_at_a_layer_path_is_refused_by_the_command_line_without_a_hang() {
    let _cpu = shared();
    let dir = table_dir("hostile-cli", 4, Rules::Textbook);
    solver::add_dte(&dir, 2, None, &mut |_| {}).unwrap();
    let layer = solver::Content::Distance(Metric::Dte).path(&dir, 5, 6);
    std::fs::remove_file(&layer).unwrap();
    for (what, make) in [
        ("fifo", &mkfifo as &dyn Fn(&Path) -> bool),
        ("device", &|p: &Path| {
            std::os::unix::fs::symlink("/dev/zero", p).is_ok()
        }),
        ("directory", &|p: &Path| std::fs::create_dir(p).is_ok()),
    ] {
        if !make(&layer) {
            continue;
        }
        for command in ["--verify", "--dte"] {
            let out = run(
                &["solve", command, dir.to_str().unwrap()],
                Duration::from_secs(60),
            );
            assert_eq!(
                out.status.code(),
                Some(1),
                "{what} {command}: {}",
                out.stderr
            );
            assert!(
                out.stderr.contains("is not a regular file"),
                "{what} {command}: {}",
                out.stderr
            );
        }
        let _ = std::fs::remove_file(&layer).or_else(|_| std::fs::remove_dir(&layer));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The `solve` reply for `fen` under `rules`.
fn solve_reply(engine: &mut Engine, fen: &str) -> String {
    engine.send(&format!("position fen {fen}"));
    engine.send("solve");
    engine.wait_for("solve", LONG).0
}

#[test]
fn damaged_distance_files_are_reported_at_load_and_the_rest_is_used() {
    let _cpu = shared();
    let dir = table_dir("hostile-dte", 4, Rules::Textbook);
    solver::add_dte(&dir, 2, None, &mut |_| {}).unwrap();
    let dte = |a, b| solver::Content::Distance(Metric::Dte).path(&dir, a, b);
    let good = std::fs::read(dte(5, 6)).unwrap();
    // A won position of 4 x 4 textbook (Black two steps from its last exit).
    let fen = "4/4/3B/W3 b";
    let mut engine = Engine::start();
    engine.send_all(&[
        "setoption name BoardSize value 4",
        "setoption name Tablebase value true",
    ]);
    let load = |engine: &mut Engine| {
        engine.send_all(&[&format!(
            "setoption name TablebasePath value {}",
            dir.display()
        )])
    };
    assert!(load(&mut engine).iter().all(|l| !l.contains("error")));
    let with_dte = solve_reply(&mut engine, fen);
    assert!(
        with_dte.starts_with("solve win ") && with_dte.contains(" dtz "),
        "{with_dte}"
    );
    /// What is done to the file, how, and what the engine must say.
    type Damage<'a> = (&'a str, Box<dyn Fn() + 'a>, &'a str);
    let damages: Vec<Damage> = vec![
        (
            "truncated",
            Box::new(|| std::fs::write(dte(5, 6), &good[..good.len() - 3]).unwrap()),
            "truncated",
        ),
        (
            "another metric",
            Box::new(|| {
                std::fs::copy(
                    solver::Content::Distance(Metric::Dtz).path(&dir, 5, 6),
                    dte(5, 6),
                )
                .unwrap();
            }),
            "holds distances to progress, not distances to the end",
        ),
        (
            "another layer",
            Box::new(|| {
                std::fs::copy(dte(6, 5), dte(5, 6)).unwrap();
            }),
            "holds layer 6-5",
        ),
        (
            "fifo",
            Box::new(|| {
                std::fs::remove_file(dte(5, 6)).unwrap();
                mkfifo(&dte(5, 6));
            }),
            "is not a regular file",
        ),
    ];
    for (what, damage, complaint) in damages {
        damage();
        let lines = load(&mut engine);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info string error:") && l.contains(complaint)),
            "{what}: {lines:?}"
        );
        // Loaded without its distances to the end: `solve` says so by
        // giving the distance to progress alone, and play goes on.
        let reply = solve_reply(&mut engine, fen);
        assert!(reply.starts_with("solve win dtz "), "{what}: {reply}");
        assert!(
            engine
                .go("go depth 2", LONG)
                .last()
                .unwrap()
                .starts_with("bestmove")
        );
        let _ = std::fs::remove_file(dte(5, 6));
        std::fs::write(dte(5, 6), &good).unwrap();
    }
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn files_replaced_after_a_good_load_do_not_block_the_engine() {
    let _cpu = shared();
    let dir = table_dir("hostile-after", 4, Rules::Textbook);
    let mut engine = Engine::start();
    engine.send_all(&[
        "setoption name BoardSize value 4",
        &format!("setoption name TablebasePath value {}", dir.display()),
    ]);
    let fen = "4/4/3B/W3 b";
    let before = solve_reply(&mut engine, fen);
    // Every layer file becomes a FIFO (or, without mkfifo, goes away).
    let kind = Kind {
        size: 4,
        rules: Rules::Textbook,
        max_cars: 3,
    };
    let shape = Shape::new(kind.size, kind.max_cars).unwrap();
    for (a, b) in shape.pairs() {
        for (black, white) in [(a, b), (b, a)] {
            for content in [solver::Content::Wdl, solver::Content::Distance(Metric::Dtz)] {
                let path = content.path(&dir, black, white);
                std::fs::remove_file(&path).unwrap();
                mkfifo(&path);
            }
        }
    }
    // The files stay open from the load: the same answers, at once.
    assert_eq!(solve_reply(&mut engine, fen), before);
    engine.send(&format!("position fen {fen}"));
    let lines = engine.go("go movetime 200", LONG);
    assert!(lines.last().unwrap().starts_with("bestmove"), "{lines:?}");
    engine.send("isready");
    engine.wait_for("readyok", LONG);
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_won_position_probes_the_same_from_files_as_from_memory() {
    let dir = table_dir("probe-same", 4, Rules::Textbook);
    solver::add_dte(&dir, 2, None, &mut |_| {}).unwrap();
    let tables = Tables::open(&dir).unwrap();
    let builtin = tablebase::builtin(4, Rules::Textbook).unwrap();
    let position = dodgem::notation::parse_position("4/4/3B/W3 b").unwrap();
    let value = tables.probe(&position).unwrap();
    assert!(matches!(value, Some(Dtz::Win(_))), "{value:?}");
    assert_eq!(value, builtin.probe(&position));
    assert_eq!(
        tables.probe_metric(Metric::Dte, &position).unwrap(),
        builtin.probe_end(&position)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_probe_that_may_not_decode_answers_only_from_blocks_in_memory() {
    // The search's probes at its horizon (Reading::Cached) never read a
    // file: a cold block gives no answer, and once a probe that may
    // decode has read it, the same answer as that probe.
    let dir = table_dir("probe-cached", 4, Rules::Textbook);
    let tables = Tables::open(&dir).unwrap();
    let position = dodgem::notation::parse_position("4/4/3B/W3 b").unwrap();
    let mut reader = WdlReader::default();
    assert_eq!(
        tables.probe_wdl(&mut reader, &position, Reading::Cached),
        None
    );
    let truth = tables.probe(&position).unwrap().map(Dtz::wdl);
    assert!(truth.is_some());
    assert_eq!(
        tables.probe_wdl(&mut reader, &position, Reading::Decode),
        truth
    );
    assert_eq!(
        tables.probe_wdl(&mut reader, &position, Reading::Cached),
        truth
    );
    // Another thread's reader finds it in the shared cache.
    let mut other = WdlReader::default();
    assert_eq!(
        tables.probe_wdl(&mut other, &position, Reading::Cached),
        truth
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

//! The layered solver: the published 3 x 3 counts, the independent
//! verifier, resume to byte-identical files, and damaged or foreign files
//! refused (agreement with the reference solver on every 3 x 3 and 4 x 4
//! position is in `tablebase`).

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::time::Duration;

use crate::common::{
    assert_same_wdl, files_of, files_with, run, same_set, scratch, shared, table_dir,
};
use dodgem::board::{Color, Position, Rules};
use dodgem::solver::{
    self, Dtz, Kind, LayerError, LayeredError, Metric, Plan, Tables, Values, layer_path,
    read_layer, solve_layers, verify, write_layer,
};

fn plan(dir: &Path, size: usize, rules: Rules, stop: Option<u64>) -> Plan {
    Plan {
        kind: Kind {
            size,
            rules,
            max_cars: size as u32 - 1,
        },
        dir: dir.to_path_buf(),
        threads: 2,
        stop_after_layers: stop,
        two_bytes: false,
        with_dte: false,
    }
}

fn solve(dir: &Path, size: usize, rules: Rules) {
    let outcome = solve_layers(&plan(dir, size, rules, None), &mut |_| {}).unwrap();
    assert!(!outcome.stopped);
}

/// Win, draw and loss counts of every position reachable from the start
/// (finished games count as lost for their side to move), walked with the
/// board's own move generator and probed in the tables.
fn reachable_counts(tables: &Tables, size: usize) -> (u64, u64, u64) {
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([Position::start(size)]);
    seen.insert(Position::start(size));
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    while let Some(position) = queue.pop_front() {
        if position.cars(Color::Black) == 0 || position.cars(Color::White) == 0 {
            losses += 1;
            continue;
        }
        match tables.probe(&position).unwrap().expect("covered") {
            Dtz::Win(_) => wins += 1,
            Dtz::Draw => draws += 1,
            Dtz::Loss(_) => losses += 1,
        }
        for &mv in position.legal_moves().as_slice() {
            let next = position.play(mv);
            if seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    (wins, draws, losses)
}

#[test]
fn three_by_three_matches_the_published_counts() {
    let _cpu = shared();
    for (rules, wins, losses) in [(Rules::Textbook, 1_120, 843), (Rules::Classic, 1_123, 840)] {
        let dir = scratch(&format!("3x3-{}", rules.name()));
        solve(&dir, 3, rules);
        let tables = Tables::open(&dir).unwrap();
        assert_eq!(reachable_counts(&tables, 3), (wins, 0, losses), "{rules:?}");
        // Black wins from the start, by a3b3 alone.
        assert!(matches!(
            tables.probe(&Position::start(3)).unwrap(),
            Some(Dtz::Win(_))
        ));
        let start = Position::start(3);
        let winning: Vec<String> = start
            .legal_moves()
            .as_slice()
            .iter()
            .filter(|&&mv| matches!(tables.probe(&start.play(mv)).unwrap(), Some(Dtz::Loss(_))))
            .map(|&mv| dodgem::notation::format_move(Some(mv)))
            .collect();
        assert_eq!(winning, ["a3b3"], "{rules:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn four_by_four_passes_the_verifier() {
    let _cpu = shared();
    for rules in Rules::ALL {
        let dir = scratch(&format!("4x4-{}", rules.name()));
        solve(&dir, 4, rules);
        let verified = verify(&dir, 2, None, &|_, _| {}).unwrap();
        assert_eq!(verified.mismatches, 0, "{:?}", verified.examples);
        assert_eq!(verified.positions, 276_600);
        assert_eq!(verified.layers, 144);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Rewrites layer `(a, b)` with one position's value changed (and a
/// valid checksum).
pub(crate) fn falsify(dir: &Path, kind: Kind, a: u32, b: u32) {
    let shape = solver::Shape::new(kind.size, kind.max_cars).unwrap();
    let layer = shape.layer(a, b);
    let (mut values, tally) = read_layer(dir, kind, &layer).unwrap();
    // The first real position of the layer.
    let block = &layer.blocks[0];
    let slot = (0..block.white_sets)
        .find(|&wi| shape.black_set(block, 0) & shape.white_set(block, wi) == 0)
        .map(|wi| block.slot(0, wi))
        .unwrap();
    let Values::Narrow(bytes) = &mut values else {
        panic!("4 x 4 distances fit in a byte");
    };
    bytes[slot as usize] = match bytes[slot as usize] {
        0 => 1,
        _ => 0,
    };
    write_layer(dir, kind, &layer, &values, tally).unwrap();
}

#[test]
fn the_verifier_finds_a_wrong_value_and_a_damaged_file() {
    let _cpu = shared();
    let dir = scratch("verify");
    solve(&dir, 4, Rules::Textbook);
    let kind = plan(&dir, 4, Rules::Textbook, None).kind;
    falsify(&dir, kind, 4, 5);
    let verified = verify(&dir, 2, None, &|_, _| {}).unwrap();
    assert!(verified.mismatches >= 1, "a changed value goes unseen");
    assert!(
        verified.examples[0].contains("layer 004-005"),
        "{:?}",
        verified.examples
    );
    // A flipped byte in a block fails that block's checksum: the error
    // names the file and the block.
    let path = layer_path(&dir, 3, 3);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    match verify(&dir, 2, None, &|_, _| {}) {
        Err(LayeredError::Layer(LayerError::Corrupt(p, why))) => {
            assert_eq!(p, path);
            assert!(why.contains("block 0") && why.contains("checksum"), "{why}");
        }
        other => panic!("expected a damaged block, got {other:?}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_verify_journal_resumes_a_check_and_keeps_what_it_found() {
    let _cpu = shared();
    let dir = scratch("verify-journal");
    solve(&dir, 4, Rules::Textbook);
    let kind = plan(&dir, 4, Rules::Textbook, None).kind;
    falsify(&dir, kind, 4, 5);
    let whole = verify(&dir, 2, None, &|_, _| {}).unwrap();
    assert!(whole.mismatches >= 1);

    let journal = dir.with_extension("journal");
    let _ = std::fs::remove_file(&journal);
    let first = verify(&dir, 2, Some(&journal), &|_, _| {}).unwrap();
    assert_eq!(
        (first.positions, first.mismatches, first.layers),
        (whole.positions, whole.mismatches, whole.layers)
    );
    let text = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("dodgem verify journal 2 size 4 rules textbook"));
    // Bound to the directory: its full path and table set.
    let full = dir.canonicalize().unwrap();
    assert!(
        lines[1].starts_with(&format!("tables {:?} set ", full.to_str().unwrap())),
        "{text}"
    );
    assert!(lines[2..].iter().all(|l| l.starts_with("pair ")), "{text}");

    // Killed half-way, in the middle of a line: the run started again
    // checks only what is missing and finds the same totals.
    let half = lines.len() / 2;
    let cut = format!("{}\n{}", lines[..half].join("\n"), &lines[half][..7]);
    std::fs::write(&journal, cut).unwrap();
    let resumed = verify(&dir, 2, Some(&journal), &|_, _| {}).unwrap();
    assert_eq!(
        (resumed.positions, resumed.mismatches, resumed.layers),
        (whole.positions, whole.mismatches, whole.layers)
    );
    assert!(!resumed.examples.is_empty());

    // A complete journal walks no successors, but every file is still
    // read: a missing one is named.
    let again = verify(&dir, 2, Some(&journal), &|_, _| {}).unwrap();
    assert_eq!(again.positions, whole.positions);
    std::fs::remove_file(layer_path(&dir, 0, 0)).unwrap();
    let error = verify(&dir, 2, Some(&journal), &|_, _| {}).unwrap_err();
    assert!(error.to_string().contains("layer-000-000.dtz"), "{error}");

    // A journal of another table is refused.
    let other = scratch("verify-journal-classic");
    solve(&other, 4, Rules::Classic);
    match verify(&other, 2, Some(&journal), &|_, _| {}) {
        Err(e) => assert!(
            e.to_string().contains("is the journal of another check"),
            "{e}"
        ),
        Ok(_) => panic!("a textbook journal was taken for a classic table"),
    }
    std::fs::remove_file(&journal).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&other).unwrap();
}

#[test]
fn a_stopped_solve_resumes_to_the_same_files() {
    let _cpu = shared();
    let whole = scratch("resume-whole");
    let parts = scratch("resume-parts");
    solve(&whole, 4, Rules::Classic);
    same_set(&whole, &parts);
    let mut layers_seen = 0;
    for stop in [7, 30] {
        let outcome =
            solve_layers(&plan(&parts, 4, Rules::Classic, Some(stop)), &mut |_| {}).unwrap();
        assert!(outcome.stopped);
        assert!(outcome.layers_written >= stop);
        layers_seen += outcome.layers_written;
    }
    // A temporary file left by a killed run is cleared away.
    std::fs::write(parts.join("layer-000-001.tmp"), b"half a file").unwrap();
    let outcome = solve_layers(&plan(&parts, 4, Rules::Classic, None), &mut |_| {}).unwrap();
    assert!(!outcome.stopped);
    assert_eq!(layers_seen + outcome.layers_written, 144);
    let (a, b) = (files_of(&whole), files_of(&parts));
    assert_eq!(a.len(), 289, "144 layers of two files and the manifest");
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs after resuming");
    }
    std::fs::remove_dir_all(&whole).unwrap();
    std::fs::remove_dir_all(&parts).unwrap();
}

/// The share of the slots each `solved pair` line ends with, in order,
/// and whether the line says what is left.
fn shares_done(text: &str) -> Vec<(f64, bool)> {
    text.lines()
        .filter(|line| line.starts_with("solved pair "))
        .map(|line| {
            let (_, tail) = line.rsplit_once("disk ").expect("a disk figure");
            let share = tail
                .split_once(", ")
                .and_then(|(_, rest)| rest.split_once("% of the slots"))
                .unwrap_or_else(|| panic!("no share of the slots: {line}"))
                .0;
            let left = line.ends_with(" to go at this run's pace");
            (share.parse().expect("a share in per cent"), left)
        })
        .collect()
}

#[test]
fn the_pair_lines_say_how_much_of_a_solve_is_done_and_what_is_left() {
    let _cpu = shared();
    let dir = scratch("share-done");
    let out = dir.to_str().unwrap();
    let (ok, text) = dodgem(&[
        "solve",
        "--size",
        "4",
        "--out",
        out,
        "--stop-after-layers",
        "20",
    ]);
    assert!(ok, "{text}");
    let first = shares_done(&text);
    // A resumed run counts the pairs it finds on disk.
    let (ok, text) = dodgem(&["solve", "--size", "4", "--out", out]);
    assert!(ok, "{text}");
    let second = shares_done(&text);
    assert!(!first.is_empty() && !second.is_empty(), "{text}");
    let all: Vec<_> = first.iter().chain(&second).collect();
    for pair in all.windows(2) {
        assert!(pair[0].0 <= pair[1].0, "the share never falls: {all:?}");
    }
    assert!(second[0].0 > 0.0, "the pairs on disk count: {all:?}");
    let (&last, before) = all.split_last().unwrap();
    assert_eq!(
        *last,
        (100.0, false),
        "the last pair ends the solve: {all:?}"
    );
    assert!(
        before.iter().all(|&&(share, left)| share < 100.0 && left),
        "{all:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_thread_and_pairs_side_by_side_write_the_same_files() {
    let _cpu = shared();
    let one = scratch("threads-one");
    let three = scratch("threads-three");
    for (dir, threads) in [(&one, 1), (&three, 3)] {
        if threads == 3 {
            same_set(&one, &three);
        }
        let plan = Plan {
            threads,
            ..plan(dir, 4, Rules::Textbook, None)
        };
        let mut order = Vec::new();
        let outcome = solve_layers(&plan, &mut |pair| order.push(pair.layers.clone())).unwrap();
        assert!(!outcome.stopped);
        assert_eq!(order.len(), 78, "every pair of 4 x 4 reported once");
        solver::add_dte(dir, threads, None, &mut |_| {}).unwrap();
    }
    let (a, b) = (files_of(&one), files_of(&three));
    assert_eq!(a.len(), 433, "144 layers of three files and the manifest");
    assert!(a == b, "the same names and bytes");
}

#[test]
fn the_one_pass_gives_the_values_and_distances_of_the_two_passes() {
    let _cpu = shared();
    for rules in Rules::ALL {
        // The value pass, then the distance pass: the reference.
        let apart = scratch("ends-apart");
        solve(&apart, 4, rules);
        let separate = solver::add_dte(&apart, 2, None, &mut |_| {}).unwrap();
        // The one pass: win/draw/loss and the distances to the end together.
        let fused = scratch("ends-fused");
        same_set(&apart, &fused);
        let together = Plan {
            with_dte: true,
            ..plan(&fused, 4, rules, None)
        };
        let mut pairs = 0;
        let outcome = solve_layers(&together, &mut |pair| {
            pairs += 1;
            assert!(pair.dte_seconds.is_none(), "no distance pass");
        })
        .unwrap();
        assert_eq!(pairs, 78);
        assert_eq!(outcome.longest_ends.len(), 144);
        let after = solver::add_dte_knowing(
            &fused,
            2,
            None,
            &outcome.longest_ends,
            solver::Ranks::Here,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(after.outcome.layers_written, 0, "nothing left for the pass");
        assert_eq!(
            (after.longest_win, after.longest_loss),
            (separate.longest_win, separate.longest_loss)
        );
        assert_eq!(
            files_with(&fused, "dtz").len(),
            0,
            "no distances to progress"
        );
        assert_eq!(files_with(&fused, "dte").len(), 144);
        assert!(
            files_with(&apart, "dte") == files_with(&fused, "dte"),
            "the same distance files, byte for byte"
        );
        assert_same_wdl(&apart, &fused);
        let tables = solver::Tables::open(&fused).unwrap();
        assert!(tables.has_dte() && !tables.has_dtz());
        std::fs::remove_dir_all(&apart).unwrap();
        std::fs::remove_dir_all(&fused).unwrap();
    }
}

#[test]
fn damaged_truncated_and_foreign_files_are_refused() {
    let _cpu = shared();
    let dir = scratch("refuse");
    solve(&dir, 3, Rules::Textbook);
    let kind = plan(&dir, 3, Rules::Textbook, None).kind;
    let shape = solver::Shape::new(3, 2).unwrap();
    let layer = shape.layer(1, 2);
    let path = layer_path(&dir, 1, 2);
    let good = std::fs::read(&path).unwrap();
    // Truncated.
    std::fs::write(&path, &good[..good.len() - 1]).unwrap();
    assert!(matches!(
        read_layer(&dir, kind, &layer),
        Err(LayerError::Truncated(_))
    ));
    // Not a layer file at all.
    std::fs::write(&path, b"hello").unwrap();
    assert!(matches!(
        read_layer(&dir, kind, &layer),
        Err(LayerError::NotALayerFile(_))
    ));
    // Another layer's file under this name.
    std::fs::copy(layer_path(&dir, 2, 1), &path).unwrap();
    let error = read_layer(&dir, kind, &layer).unwrap_err();
    assert!(matches!(error, LayerError::Foreign(..)), "{error}");
    assert!(error.to_string().contains("not layer 001-002"), "{error}");
    // Another rule's file.
    let other = scratch("refuse-classic");
    solve(&other, 3, Rules::Classic);
    std::fs::copy(layer_path(&other, 1, 2), &path).unwrap();
    let error = read_layer(&dir, kind, &layer).unwrap_err();
    assert!(error.to_string().contains("classic"), "{error}");
    // Another format version.
    let mut versioned = good.clone();
    versioned[8] = 9;
    std::fs::write(&path, &versioned).unwrap();
    assert!(matches!(
        read_layer(&dir, kind, &layer),
        Err(LayerError::Version(_, 9))
    ));
    // Good again.
    std::fs::write(&path, &good).unwrap();
    assert!(read_layer(&dir, kind, &layer).is_ok());
    // Resuming into a directory of another rule is refused.
    let error = solve_layers(&plan(&dir, 3, Rules::Classic, None), &mut |_| {}).unwrap_err();
    assert!(error.to_string().contains("holds 3x3 textbook"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&other).unwrap();
}

/// A bound on one small solve from the shell, far above what it takes.
const SOLVE_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs `dodgem <args>`: whether it succeeded, and its stdout and stderr.
fn dodgem(args: &[&str]) -> (bool, String) {
    let output = run(args, SOLVE_TIMEOUT);
    (output.status.success(), output.stdout + &output.stderr)
}

#[test]
fn the_plan_of_a_solve_counts_what_the_solve_does() {
    let _cpu = shared();
    let dir = scratch("census");
    let mut slots = Vec::new();
    let plan = plan(&dir, 4, Rules::Textbook, None);
    solve_layers(&plan, &mut |pair| slots.push(pair.slots)).unwrap();
    let census = solver::census(plan.kind).unwrap();
    assert_eq!(census.pairs, slots.len());
    assert_eq!(census.slots, slots.iter().sum::<u64>());
    assert_eq!(census.largest.0, *slots.iter().max().unwrap());
    // A chain is more than one pair, and not all of them (a pair waits
    // only for the pairs its forward moves reach).
    assert!(census.largest.0 < census.chain && census.chain < census.slots);
    let (ok, text) = dodgem(&["solve", "--plan", "--size", "4"]);
    assert!(ok, "{text}");
    for expected in [
        "4x4 Dodgem, at most 3 cars a side (either rule): 78 layer pairs, 484,416 index slots",
        "largest pair: layers 004-005 005-004, 30,208 slots",
        "heaviest chain of pairs that wait for one another: 225,352 slots (46.5% of all)",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from\n{text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_mpi_solve_outside_an_mpi_job_says_what_it_needs() {
    let _cpu = shared();
    let dir = scratch("mpi-refused");
    let out = dir.join("tables");
    let (ok, text) = dodgem(&[
        "solve",
        "--mpi",
        "--size",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!ok, "{text}");
    #[cfg(not(feature = "mpi"))]
    let expected = "built without MPI: build it with `cargo build --release --features mpi`";
    #[cfg(feature = "mpi")]
    let expected = "an MPI solve needs at least 2 ranks";
    assert!(text.contains(expected), "{expected:?} missing from\n{text}");
    assert!(!out.exists(), "nothing is written");
    // --mpi goes with a solve, the distances or a check, not with a
    // play-out.
    let (ok, text) = dodgem(&["solve", "--mpi", "--playout", out.to_str().unwrap()]);
    assert!(!ok && text.contains("cannot be used with"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_solve_flag_without_the_flag_it_goes_with_is_refused() {
    let _cpu = shared();
    let tables = table_dir("goes-with", 3, Rules::Textbook);
    let dir = tables.to_str().unwrap();
    let work = scratch("goes-with-out");
    let out = work.join("tables");
    let out = out.to_str().unwrap();
    let journal = work.join("journal");
    let journal = journal.to_str().unwrap();
    // Most of these ran with the flag ignored: clap let the flag it needs
    // go missing where that one conflicts with one given (--size, --out,
    // --verify, --plan...).
    for (args, missing) in [
        (
            &["--size", "3", "--out", out, "--positions", "5"][..],
            "--playout",
        ),
        (&["--size", "3", "--out", out, "--seed", "5"], "--playout"),
        (&["--size", "3", "--out", out, "--depth", "3"], "--playout"),
        (&["--size", "3", "--plan", "--seed", "5"], "--playout"),
        (&["--verify", dir, "--positions", "5"], "--playout"),
        (&["--reach", dir, "--depth", "3"], "--playout"),
        (&["--dte", dir, "--seed", "3"], "--playout"),
        (
            &["--size", "3", "--out", out, "--mpi-timeout", "5"],
            "--mpi",
        ),
        (&["--playout", dir, "--mpi-timeout", "5"], "--mpi"),
        (&["--size", "3", "--plan", "--mpi-timeout", "5"], "--mpi"),
        (&["--playout", dir, "--journal", journal], "--verify"),
        (&["--convert", dir, out, "--journal", journal], "--reach"),
        (
            &["--size", "3", "--out", out, "--journal", journal],
            "--verify",
        ),
    ] {
        let output = run(&[&["solve"], args].concat(), SOLVE_TIMEOUT);
        let shown = format!("solve {args:?}: {}", output.stderr);
        assert_eq!(output.status.code(), Some(2), "{shown}");
        assert_eq!(output.stdout, "", "{shown}");
        let (_, listed) = output
            .stderr
            .split_once("the following required arguments were not provided:")
            .unwrap_or_else(|| panic!("no list of missing arguments: {shown}"));
        let listed = listed.split("\n\n").next().unwrap();
        assert!(listed.contains(missing), "{missing} not listed: {shown}");
    }
    assert!(!Path::new(out).exists() && !Path::new(journal).exists());
    // With the flags they go with, they are taken.
    let (ok, text) = dodgem(&[
        "solve",
        "--playout",
        dir,
        "--positions",
        "4",
        "--seed",
        "2",
        "--depth",
        "1",
        "--quiet",
    ]);
    assert!(ok, "{text}");
    assert!(
        text.contains("4 decided and 0 drawn positions played out"),
        "{text}"
    );
    let (ok, text) = dodgem(&["solve", "--verify", dir, "--journal", journal, "--quiet"]);
    assert!(ok && Path::new(journal).exists(), "{text}");
    std::fs::remove_dir_all(&tables).unwrap();
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn what_to_solve_is_refused_beside_tables_that_record_it() {
    // --rules, --max-cars and --stop-after-layers were silently ignored by
    // the modes that read a directory of tables (its files say what they
    // hold): a user asking to verify the classic tables got the textbook
    // ones checked without a word.
    let _cpu = shared();
    let tables = table_dir("what-to-solve", 3, Rules::Textbook);
    let dir = tables.to_str().unwrap();
    let before = files_of(&tables);
    for args in [
        &["--verify", dir, "--rules", "classic"][..],
        &["--playout", dir, "--max-cars", "1"],
        &["--reach", dir, "--rules", "textbook"],
        &["--dte", dir, "--max-cars", "2"],
        &["--convert", dir, dir, "--rules", "classic"],
        &["--verify", dir, "--stop-after-layers", "3"],
        &["--playout", dir, "--stop-after-layers", "3"],
        &["--size", "3", "--plan", "--stop-after-layers", "3"],
    ] {
        let output = run(&[&["solve"], args].concat(), SOLVE_TIMEOUT);
        let shown = format!("solve {args:?}: {}", output.stderr);
        assert_eq!(output.status.code(), Some(2), "{shown}");
        assert_eq!(output.stdout, "", "{shown}");
        assert!(output.stderr.contains("cannot be used with"), "{shown}");
    }
    assert_eq!(files_of(&tables), before, "the tables were touched");
    // The rule and the cars still go with a solve and its plan.
    let (ok, text) = dodgem(&[
        "solve",
        "--size",
        "3",
        "--rules",
        "classic",
        "--max-cars",
        "1",
        "--plan",
    ]);
    assert!(ok && text.contains("at most 1 car"), "{text}");
    std::fs::remove_dir_all(&tables).unwrap();
}

#[test]
fn the_solve_command_stops_resumes_and_verifies() {
    let _cpu = shared();
    let dir = scratch("cli");
    let out = dir.to_str().unwrap();
    let (ok, text) = dodgem(&[
        "solve",
        "--size",
        "4",
        "--out",
        out,
        "--stop-after-layers",
        "10",
        "--quiet",
    ]);
    assert!(ok, "{text}");
    assert!(text.contains("run the same command to continue"), "{text}");
    let (ok, text) = dodgem(&["solve", "--size", "4", "--out", out, "--quiet"]);
    assert!(ok, "{text}");
    for expected in [
        "positions per side to move: 276,600",
        "start (Black to move): draw",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from\n{text}");
    }
    let (ok, text) = dodgem(&["solve", "--verify", out, "--quiet"]);
    assert!(ok, "{text}");
    assert!(
        text.contains("all 276,600 positions in 144 layers agree"),
        "{text}"
    );
    // No size, or no place for the files: refused with a message.
    let (ok, text) = dodgem(&["solve"]);
    assert!(!ok);
    assert!(text.contains("--size"), "{text}");
    let (ok, text) = dodgem(&["solve", "--size", "6", "--quiet"]);
    assert!(!ok);
    assert!(text.contains("needs --out"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_reach_command_counts_the_published_reachable_positions() {
    let _cpu = shared();
    let dir = scratch("cli-reach");
    let out = dir.to_str().unwrap();
    let (ok, text) = dodgem(&["solve", "--size", "3", "--out", out, "--quiet"]);
    assert!(ok, "{text}");
    let (ok, text) = dodgem(&["solve", "--reach", out, "--quiet"]);
    assert!(ok, "{text}");
    for expected in [
        "1,332 positions per side to move in the index",
        "reachable from the start: 1,963 positions (1,120 wins, 0 draws, 843 losses",
        "Black to move: 995 positions",
        "White to move: 968 positions",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from\n{text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // Endgame tables do not hold the start: refused with a word why.
    let (ok, text) = dodgem(&[
        "solve",
        "--size",
        "4",
        "--max-cars",
        "2",
        "--out",
        out,
        "--quiet",
    ]);
    assert!(ok, "{text}");
    let (ok, text) = dodgem(&["solve", "--reach", out, "--quiet"]);
    assert!(!ok);
    assert!(text.contains("do not hold the start"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn endgame_tables_match_the_whole_board() {
    let _cpu = shared();
    // Positions with at most two cars a side form a closed game: their
    // tables must give exactly what the whole board's tables give.
    let whole = scratch("endgame-whole");
    let part = scratch("endgame-part");
    solve(&whole, 4, Rules::Textbook);
    let mut small = plan(&part, 4, Rules::Textbook, None);
    small.kind.max_cars = 2;
    solve_layers(&small, &mut |_| {}).unwrap();
    let all = solver::Shape::new(4, 3).unwrap();
    let some = solver::Shape::new(4, 2).unwrap();
    let whole_kind = plan(&whole, 4, Rules::Textbook, None).kind;
    let mut compared = 0;
    for a in some.min_progress()..=some.max_progress() {
        for b in some.min_progress()..=some.max_progress() {
            let layer = some.layer(a, b);
            let (values, _) = read_layer(&part, small.kind, &layer).unwrap();
            let (reference, _) = read_layer(&whole, whole_kind, &all.layer(a, b)).unwrap();
            for block in &layer.blocks {
                for bi in 0..block.black_sets {
                    for wi in 0..block.white_sets {
                        let (black, white) = (some.black_set(block, bi), some.white_set(block, wi));
                        if black & white != 0 {
                            continue;
                        }
                        let (_, _, slot) = all.locate_masks(black, white).unwrap();
                        assert_eq!(
                            values.get(block.slot(bi, wi)),
                            reference.get(slot),
                            "layer {a}-{b}, black {black:#x}, white {white:#x}"
                        );
                        compared += 1;
                    }
                }
            }
        }
    }
    // Every position with one or two cars a side on the 16 squares.
    let choose = |n: u64, k: u64| (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1));
    let expected: u64 = (1..=2)
        .flat_map(|k| (1..=2).map(move |m| (k, m)))
        .map(|(k, m)| choose(16, k) * choose(16 - k, m))
        .sum();
    assert_eq!(compared, expected);
    std::fs::remove_dir_all(&whole).unwrap();
    std::fs::remove_dir_all(&part).unwrap();
}

#[test]
fn two_byte_cells_and_wide_files_give_the_same_values() {
    let _cpu = shared();
    // Pairs whose distances overflow a byte are solved with two bytes a
    // slot and, beyond 126 plies, stored two bytes a value: both paths
    // must agree with the usual one.
    let narrow = scratch("cells-narrow");
    let wide = scratch("cells-wide");
    solve(&narrow, 4, Rules::Classic);
    same_set(&narrow, &wide);
    let mut two = plan(&wide, 4, Rules::Classic, None);
    two.two_bytes = true;
    solve_layers(&two, &mut |_| {}).unwrap();
    let (a, b) = (files_of(&narrow), files_of(&wide));
    assert_eq!(a.len(), b.len());
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs with two-byte cells");
    }
    // A layer's file does not depend on how its values are held in
    // memory: written from two bytes a value, the same file, read back one
    // byte a value (its distances fit in one), and the verifier reads it.
    let shape = solver::Shape::new(4, 3).unwrap();
    let layer = shape.layer(5, 6);
    let path = layer_path(&wide, layer.black, layer.white);
    let file = std::fs::read(&path).unwrap();
    let (values, tally) = read_layer(&wide, two.kind, &layer).unwrap();
    let Values::Narrow(bytes) = &values else {
        panic!("4 x 4 distances fit in a byte");
    };
    let widened = Values::Wide(bytes.iter().map(|&b| u16::from(b)).collect());
    write_layer(&wide, two.kind, &layer, &widened, tally).unwrap();
    assert!(std::fs::read(&path).unwrap() == file);
    let (again, _) = read_layer(&wide, two.kind, &layer).unwrap();
    assert!(matches!(again, Values::Narrow(_)));
    assert!((0..layer.slots).all(|slot| again.get(slot) == values.get(slot)));
    let verified = verify(&wide, 2, None, &|_, _| {}).unwrap();
    assert_eq!(verified.mismatches, 0, "{:?}", verified.examples);
    std::fs::remove_dir_all(&narrow).unwrap();
    std::fs::remove_dir_all(&wide).unwrap();
}

#[test]
fn the_playout_command_plays_tables_out_as_they_predict() {
    let _cpu = shared();
    let four = scratch("playout-4");
    solve(&four, 4, Rules::Textbook);
    // The 4 x 4 tables with their distances to the end, the 5 x 5
    // endgames without.
    solver::add_dte(&four, 2, None, &mut |_| {}).unwrap();
    let five = scratch("playout-5");
    let mut endgames = plan(&five, 5, Rules::Classic, None);
    endgames.kind.max_cars = 2;
    solve_layers(&endgames, &mut |_| {}).unwrap();
    let playout = |dir: &Path| {
        dodgem(&[
            "solve",
            "--playout",
            dir.to_str().unwrap(),
            "--positions",
            "40",
            "--seed",
            "11",
            "--quiet",
        ])
    };
    // And 4 x 4 `classic` by the one pass: `.wdl` and `.dte`, no `.dtz`.
    let one_pass = scratch("playout-4-one-pass");
    let (ok, text) = dodgem(&[
        "solve",
        "--size",
        "4",
        "--rules",
        "classic",
        "--out",
        one_pass.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(ok, "{text}");
    for (dir, exact) in [(&four, 20), (&five, 0), (&one_pass, 20)] {
        let (ok, text) = playout(dir);
        assert!(ok, "{text}");
        assert!(
            text.contains("20 decided and 20 drawn positions played out")
                && text.contains(&format!(
                    "; {exact} decided ended at exactly their distance to the end;"
                ))
                && text.contains("0 not as predicted"),
            "{text}"
        );
    }
    // Distances to the end one ply too long everywhere: the games end a
    // ply sooner than the tables say.
    let kind = plan(&four, 4, Rules::Textbook, None).kind;
    let shape = solver::Shape::new(4, 3).unwrap();
    for layer in shape.layers() {
        let (values, tally) = solver::read_values(&four, kind, Metric::Dte, &layer).unwrap();
        let Values::Narrow(mut bytes) = values else {
            panic!("4 x 4 distances fit in a byte");
        };
        for byte in bytes.iter_mut().filter(|byte| **byte != 0) {
            *byte += 2;
        }
        let longer = Values::Narrow(bytes);
        solver::write_metric(&four, kind, Metric::Dte, &layer, &longer, tally).unwrap();
    }
    let (ok, text) = playout(&four);
    assert!(!ok, "{text}");
    assert!(
        text.contains("not as predicted") && text.contains("its distance to the end"),
        "{text}"
    );
    // Without them, tables that lie (every position "won in 1") do not
    // play out so either.
    for layer in shape.layers() {
        std::fs::remove_file(Metric::Dte.path(&four, layer.black, layer.white)).unwrap();
    }
    for layer in shape.layers() {
        let (_, tally) = read_layer(&four, kind, &layer).unwrap();
        let lies = Values::Narrow(vec![3; layer.slots as usize]);
        write_layer(&four, kind, &layer, &lies, tally).unwrap();
    }
    let (ok, text) = dodgem(&[
        "solve",
        "--playout",
        four.to_str().unwrap(),
        "--positions",
        "20",
        "--quiet",
    ]);
    assert!(!ok, "{text}");
    assert!(text.contains("not as predicted"), "{text}");
    std::fs::remove_dir_all(&four).unwrap();
    std::fs::remove_dir_all(&five).unwrap();
    std::fs::remove_dir_all(&one_pass).unwrap();
}

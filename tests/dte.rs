//! Distances to the end of the game derived from the solved tables: the
//! built-in tables and solved directories against the reference solver
//! on every 3 x 3 and 4 x 4 position, `dodgem solve --dte` resuming layer
//! by layer, 5 x 5 endgame tables against their own moves, and what
//! `solve` and `go` report from them.

use crate::common::{
    Engine, LONG, Rng, assert_same_wdl, best_move, files_with, run_cli, same_set, scratch, shared,
    table_dir,
};
use crate::reference::{Dtm, Reference};
use dodgem::board::{Position, Rules};
use dodgem::notation::format_position;
use dodgem::solver::{self, Dtz, Kind, Metric};
use dodgem::tablebase;

/// The reference's distance to the end as a stored value.
fn as_stored(dtm: Dtm) -> Dtz {
    match dtm {
        Dtm::Win(d) => Dtz::Win(d),
        Dtm::Draw => Dtz::Draw,
        Dtm::Loss(d) => Dtz::Loss(d),
    }
}

/// Checks `probe` against the reference's distance to the end on every
/// position of `size` under `rules`.
fn check_everywhere(size: usize, rules: Rules, probe: impl Fn(&Position) -> Option<Dtz>) {
    let reference = Reference::get(size, rules);
    for (position, &expected) in reference.positions.iter().zip(&reference.dtm) {
        assert_eq!(
            probe(position),
            Some(as_stored(expected)),
            "{} ({rules:?})",
            format_position(position)
        );
    }
}

/// How many files of `dir` have the extension `extension`.
fn files_ending(dir: &std::path::Path, extension: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|entry| {
            let path = entry.as_ref().unwrap().path();
            path.extension().is_some_and(|x| x == extension)
        })
        .count()
}

#[test]
fn built_in_distances_to_the_end_agree_with_the_reference_on_every_position() {
    let _cpu = shared();
    for size in tablebase::BUILTIN_SIZES {
        for rules in Rules::ALL {
            let table = tablebase::builtin(size, rules).unwrap();
            assert!(table.has_dte());
            check_everywhere(size, rules, |position| table.probe_end(position));
        }
    }
    // The 3 x 3 start: Black wins in 19 plies, by a3b3 alone.
    for rules in Rules::ALL {
        let table = tablebase::builtin(3, rules).unwrap();
        let start = Position::start(3);
        assert_eq!(table.probe_end(&start), Some(Dtz::Win(19)));
        let winning: Vec<String> = start
            .legal_moves()
            .as_slice()
            .iter()
            .filter(|&&mv| matches!(table.end_after(&start, mv), Some(Dtz::Win(_))))
            .map(|&mv| dodgem::notation::format_move(Some(mv)))
            .collect();
        assert_eq!(winning, ["a3b3"]);
    }
}

#[test]
fn solve_dte_adds_the_distances_to_a_solved_directory_resuming_pair_by_pair() {
    let _cpu = shared();
    for rules in Rules::ALL {
        let dir = table_dir(&format!("dte-add-4-{}", rules.name()), 4, rules);
        let path = dir.to_str().unwrap();
        // Solved without them: distances to progress alone.
        assert!(!solver::Tables::open(&dir).unwrap().has_dte());
        let (status, text) = run_cli(
            &[
                "solve",
                "--dte",
                path,
                "--stop-after-layers",
                "40",
                "--quiet",
            ],
            LONG,
        );
        assert!(status.success(), "{text}");
        assert!(
            text.contains("stopped after writing 40 distance-to-the-end files"),
            "{text}"
        );
        // Part-way: still used with distances to progress alone.
        assert!(!solver::Tables::open(&dir).unwrap().has_dte());
        assert_eq!(files_ending(&dir, "dte"), 40);
        let (status, text) = run_cli(&["solve", "--dte", path, "--quiet"], LONG);
        assert!(status.success(), "{text}");
        let shape = solver::Shape::new(4, 3).unwrap();
        let layers = (shape.max_progress() - shape.min_progress() + 1).pow(2);
        // The first run's files are kept, the rest written.
        assert!(
            text.contains(&format!("({} layer files written", layers - 40)),
            "{text}"
        );
        let longest = match rules {
            Rules::Textbook => "longest win 61 plies to the end, longest loss 60",
            Rules::Classic => "longest win 41 plies to the end, longest loss 42",
        };
        assert!(text.contains(longest), "{text}");
        assert_eq!(files_ending(&dir, "dte"), layers as usize);
        let tables = solver::Tables::open(&dir).unwrap();
        assert!(tables.has_dte());
        check_everywhere(4, rules, |position| {
            tables.probe_metric(Metric::Dte, position).unwrap()
        });
        // Nothing left to do: a third run writes nothing, and finds the
        // same longest win and loss from the files alone.
        let (status, text) = run_cli(&["solve", "--dte", path, "--quiet"], LONG);
        assert!(
            status.success() && text.contains("(0 layer files written") && text.contains(longest),
            "{text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn the_solve_command_writes_the_distances_to_the_end_pair_by_pair() {
    let _cpu = shared();
    let dir = scratch("dte-solve-3");
    let out = dir.join("3x3");
    let (status, text) = run_cli(
        &[
            "solve",
            "--size",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ],
        LONG,
    );
    assert!(status.success(), "{text}");
    assert!(
        text.contains("longest win 21 plies to the end")
            && text.contains("start (Black to move): win in 19 plies to the end"),
        "{text}"
    );
    // Every layer's distances came with its solve: nothing was read back.
    assert!(
        text.contains("(36 layer files written pair by pair with the solve, 0 after it"),
        "{text}"
    );
    let tables = solver::Tables::open(&out).unwrap();
    check_everywhere(3, Rules::Textbook, |position| {
        tables.probe_metric(Metric::Dte, position).unwrap()
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_solve_without_distances_resumes_one_with_them_and_the_dte_pass_completes_it() {
    let _cpu = shared();
    let dir = scratch("dte-no-distances");
    let solve = |out: &std::path::Path, extra: &[&str]| {
        let args = [
            &["solve", "--size", "4", "--rules", "classic"][..],
            &["--out", out.to_str().unwrap(), "--quiet"],
            extra,
        ]
        .concat();
        let (status, text) = run_cli(&args, LONG);
        assert!(status.success(), "{text}");
        text
    };
    // The reference: one solve with its distances.
    let whole = dir.join("whole");
    solve(&whole, &[]);
    // A solve with distances stopped part-way (as a killed run leaves
    // one), then finished without them.
    let parts = dir.join("parts");
    same_set(&whole, &parts);
    solve(&parts, &["--stop-after-layers", "30"]);
    let started = files_ending(&parts, "dte");
    assert!(started >= 30, "{started} distance files before resuming");
    let text = solve(&parts, &["--no-distances"]);
    assert!(
        text.contains("without the distances to the end, as asked")
            && text.contains(&format!("dodgem solve --dte {}", parts.display())),
        "{text}"
    );
    assert_eq!(files_ending(&parts, "dte"), started, "no distance written");
    assert_eq!(files_ending(&parts, "wdl"), 144);
    // Such tables play, with the distances to progress alone.
    let tables = solver::Tables::open(&parts).unwrap();
    assert!(!tables.has_dte());
    let reference = Reference::get(4, Rules::Classic);
    for (position, &expected) in reference.positions.iter().zip(&reference.dtm) {
        let wdl = tables.probe(position).unwrap().map(|dtz| dtz.wdl());
        assert_eq!(wdl, Some(as_stored(expected).wdl()));
    }
    // The pass adds the rest: the same files as the solve with them.
    let (status, text) = run_cli(
        &["solve", "--dte", parts.to_str().unwrap(), "--quiet"],
        LONG,
    );
    assert!(status.success(), "{text}");
    // The one pass's files are `.wdl` and `.dte`; the value pass's have
    // their `.dtz` besides.
    assert!(
        files_with(&whole, "dte") == files_with(&parts, "dte"),
        "the same distance files, byte for byte"
    );
    assert_same_wdl(&whole, &parts);
    // Nothing to take --no-distances from.
    let (status, text) = run_cli(
        &["solve", "--dte", parts.to_str().unwrap(), "--no-distances"],
        LONG,
    );
    assert!(!status.success(), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The distance to the end a position's moves give it, from the values
/// `probe` gives the positions they lead to: the quickest win, else the
/// slowest loss (the board's own moves; the last car off wins in 1).
fn from_moves(position: &Position, probe: &dyn Fn(&Position) -> Option<Dtz>) -> Dtz {
    let side = position.side_to_move();
    let mut best: Option<Dtz> = None;
    for &mv in position.legal_moves().as_slice() {
        let child = position.play(mv);
        let value = if child.cars(side) == 0 {
            Dtz::Win(1)
        } else {
            probe(&child).expect("covered").through(false)
        };
        if best.is_none_or(|b| value.preference() > b.preference()) {
            best = Some(value);
        }
    }
    best.expect("a position with a move")
}

#[test]
fn five_by_five_endgame_distances_agree_with_their_moves_and_the_engine_reports_them() {
    let _cpu = shared();
    let rules = Rules::Classic;
    let dir = scratch("dte-5-k2");
    let plan = solver::Plan {
        kind: Kind {
            size: 5,
            rules,
            max_cars: 2,
        },
        dir: dir.clone(),
        threads: 2,
        stop_after_layers: None,
        two_bytes: false,
        with_dte: false,
    };
    solver::solve_layers(&plan, &mut |_| {}).unwrap();
    solver::add_dte(&dir, 2, None, &mut |_| {}).unwrap();
    let tables = solver::Tables::open(&dir).unwrap();
    assert!(tables.has_dte());
    let end = |p: &Position| tables.probe_metric(Metric::Dte, p).unwrap();
    let mut rng = Rng(0xD7E5);
    let mut engine = Engine::start();
    engine.send_all(&[
        "setoption name Rules value classic",
        &format!("setoption name TablebasePath value {}", dir.display()),
    ]);
    let mut decided = 0;
    for _ in 0..300 {
        let position = crate::tablebase::random_covered(&mut rng, 5, 2, rules);
        if position.legal_moves().as_slice().is_empty() {
            continue;
        }
        let value = end(&position).unwrap();
        let dtz = tables.probe(&position).unwrap().unwrap();
        assert_eq!(value.wdl(), dtz.wdl(), "{}", format_position(&position));
        assert_eq!(
            value,
            from_moves(&position, &end),
            "{}",
            format_position(&position)
        );
        if decided < 20 && value != Dtz::Draw {
            decided += 1;
            engine.send_all(&[&format!("position fen {}", format_position(&position))]);
            engine.send("solve");
            let (lines, _) = engine.read_until(|l| l.starts_with("solve "), LONG);
            let expected = match (value, dtz) {
                (Dtz::Win(e), Dtz::Win(d)) => format!("solve win {e} dtz {d}"),
                (Dtz::Loss(e), Dtz::Loss(d)) => format!("solve loss {e} dtz {d}"),
                _ => unreachable!("decided"),
            };
            assert_eq!(lines.last().unwrap(), &expected);
            let lines = engine.go("go depth 1", LONG);
            let info = lines.iter().rev().find(|l| l.contains(" score ")).unwrap();
            let score = crate::common::info_score(info).unwrap();
            let expected = match value {
                Dtz::Win(p) => crate::tablebase::mate(p, 1),
                Dtz::Loss(p) => crate::tablebase::mate(p, -1),
                Dtz::Draw => unreachable!("decided"),
            };
            assert_eq!(score, expected, "{info}");
        }
    }
    assert_eq!(decided, 20);
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_three_by_three_start_is_mate_in_ten_from_the_built_in_table() {
    let _cpu = shared();
    let mut engine = Engine::start();
    for rules in Rules::ALL {
        engine.send_all(&[
            &format!("setoption name Rules value {}", rules.name()),
            "position startpos",
        ]);
        engine.send("solve");
        let (lines, _) = engine.read_until(|l| l.starts_with("solve "), LONG);
        let answer = lines.last().unwrap();
        assert!(answer.starts_with("solve win 19 dtz "), "{answer}");
        let lines = engine.go("go depth 1", LONG);
        let info = lines.iter().rev().find(|l| l.contains(" score ")).unwrap();
        assert!(info.contains(" score mate 10 "), "{info}");
        // The line shown is the whole game: 19 plies.
        let pv = info.split(" pv ").nth(1).unwrap();
        assert_eq!(pv.split_whitespace().count(), 19, "{info}");
        assert_eq!(best_move(lines.last().unwrap()), "a3b3");
    }
    engine.quit();
}

#[test]
fn the_verifier_checks_the_distances_to_the_end_and_finds_a_wrong_one() {
    let _cpu = shared();
    let rules = Rules::Classic;
    let dir = table_dir("dte-verify", 4, rules);
    let kind = Kind {
        size: 4,
        rules,
        max_cars: 3,
    };
    // Without .dte files only the distances to progress are checked.
    let verified = solver::verify(&dir, 2, None, &|_, _| {}).unwrap();
    assert_eq!((verified.layers, verified.dte_layers), (144, 0));
    solver::add_dte(&dir, 2, None, &mut |_| {}).unwrap();
    let verified = solver::verify(&dir, 2, None, &|_, _| {}).unwrap();
    assert_eq!(verified.mismatches, 0, "{:?}", verified.examples);
    assert_eq!(
        (verified.positions, verified.layers, verified.dte_layers),
        (276_600, 144, 144)
    );

    // One won position's distance to the end one ply too long (a valid
    // file otherwise): the verifier names it.
    let shape = solver::Shape::new(4, 3).unwrap();
    let layer = shape.layer(4, 5);
    let (values, _) = solver::read_values(&dir, kind, Metric::Dte, &layer).unwrap();
    let won = (0..layer.slots)
        .find(|&slot| matches!(values.get(slot), Dtz::Win(_)))
        .unwrap();
    // Adds `plies` to that position's stored distance (codes count two a ply).
    let lengthen = |plies: i8| {
        let (values, tally) = solver::read_values(&dir, kind, Metric::Dte, &layer).unwrap();
        let solver::Values::Narrow(mut bytes) = values else {
            panic!("4 x 4 distances fit in a byte");
        };
        bytes[won as usize] = bytes[won as usize].wrapping_add_signed(2 * plies);
        let changed = solver::Values::Narrow(bytes);
        solver::write_metric(&dir, kind, Metric::Dte, &layer, &changed, tally).unwrap();
    };
    lengthen(1);
    let verified = solver::verify(&dir, 2, None, &|_, _| {}).unwrap();
    assert!(verified.mismatches >= 1);
    assert!(
        verified.examples[0].contains("layer 004-005 (distance to the end)"),
        "{:?}",
        verified.examples
    );

    // Put back, the directory passes again.
    lengthen(-1);
    assert_eq!(
        solver::verify(&dir, 2, None, &|_, _| {})
            .unwrap()
            .mismatches,
        0
    );

    // The command says so.
    let (status, text) = run_cli(
        &["solve", "--verify", dir.to_str().unwrap(), "--quiet"],
        LONG,
    );
    assert!(status.success(), "{text}");
    assert!(
        text.contains("all 276,600 positions in 144 layers agree with their successors, and their distances to the end in 144 layers"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

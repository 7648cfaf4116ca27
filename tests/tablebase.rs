//! The retrograde solver and play from its tables: the published facts
//! about 3 x 3 and 4 x 4, every value checked against its successors with
//! the board's own move generator, the engine playing perfectly from
//! random positions over pipes, and bad table files.

use std::time::Duration;

use crate::common::{Engine, LONG, Rng, best_move, is_bestmove, ms, shared, timing};
use dodgem::board::{Color, Outcome, Position, Rules, WinReason};
use dodgem::notation::format_position;
use dodgem::solver::{self, Counts, Geometry, Value};
use dodgem::tablebase::{self, Table};

#[test]
fn three_by_three_matches_the_published_counts() {
    let _cpu = shared();
    for (rules, wins, losses) in [(Rules::Textbook, 1_120, 843), (Rules::Classic, 1_123, 840)] {
        let table = tablebase::builtin(3, rules).unwrap();
        let report = solver::report(&table, 2);
        assert_eq!(
            report.reachable,
            Counts {
                wins,
                losses,
                draws: 0
            },
            "{rules:?}"
        );
        assert_eq!(report.all.draws, 0, "no 3x3 position is a draw");
        assert_eq!(report.start, Value::Win(19));
        let winning: Vec<String> = report
            .first_moves
            .iter()
            .filter(|(_, value)| matches!(value, Value::Win(_)))
            .map(|&(mv, _)| dodgem::notation::format_move(Some(mv)))
            .collect();
        assert_eq!(winning, ["a3b3"], "{rules:?}");
    }
}

#[test]
fn four_by_four_start_is_a_draw_under_both_rules() {
    let _cpu = shared();
    for rules in Rules::ALL {
        let table = tablebase::builtin(4, rules).unwrap();
        assert_eq!(table.probe(&Position::start(4)), Some(Value::Draw));
        let report = solver::report(&table, 2);
        assert_eq!(report.reachable.total(), 393_900, "{rules:?}");
    }
}

/// The value a successor gives the side that moved into it.
fn through(table: &Table, position: &Position) -> Value {
    table.probe(position).unwrap().previous()
}

/// Checks one position's stored value against its successors, using the
/// board's move generator (not the solver's).
fn check_position(table: &Table, position: &Position, rules: Rules) {
    let value = table.probe(position).unwrap();
    let moves = position.legal_moves();
    let children: Vec<Value> = moves
        .as_slice()
        .iter()
        .map(|&mv| through(table, &position.play(mv)))
        .collect();
    let context = format!("{} ({rules:?}) is {value:?}", format_position(position));
    if moves.is_empty() {
        let side = position.side_to_move();
        let expected = match position.outcome(rules) {
            Some(Outcome::Win(winner, WinReason::Blocked(_))) if winner == side => Value::Win(0),
            Some(Outcome::Win(_, WinReason::Blocked(_))) => Value::Loss(0),
            other => panic!("{context}: no moves but outcome {other:?}"),
        };
        assert_eq!(value, expected, "{context}");
        return;
    }
    let best = children
        .iter()
        .copied()
        .max_by_key(|v| match *v {
            Value::Win(p) => (2, -(p as i64)),
            Value::Draw => (1, 0),
            Value::Loss(p) => (0, p as i64),
        })
        .unwrap();
    // A win has a successor lost one ply sooner and none faster; a loss has
    // only won successors, the slowest one ply sooner; a draw has no lost
    // successor and at least one drawn one. `best` is all three at once.
    assert_eq!(value, best, "{context}: successors {children:?}");
}

#[test]
fn every_value_agrees_with_its_successors() {
    let _cpu = shared();
    for size in [3, 4] {
        for rules in Rules::ALL {
            let table = tablebase::builtin(size, rules).unwrap();
            let indexer = table.indexer();
            let geometry = Geometry::new(size);
            for side in [Color::Black, Color::White] {
                for index in 0..indexer.len() {
                    let (black, white) = indexer.position(index);
                    let position = indexer.to_position(black, white, side);
                    let summary = geometry.summary(solver::Cars { black, white }, side);
                    assert_eq!(
                        summary.count as usize,
                        position.legal_moves().len(),
                        "solver and board disagree on the moves of {}",
                        format_position(&position)
                    );
                    check_position(&table, &position, rules);
                }
            }
        }
    }
}

/// A random position reached by random play from the start, not finished.
fn random_position(rng: &mut Rng, size: usize, rules: Rules) -> Position {
    loop {
        let mut position = Position::start(size);
        let plies = rng.below(4 * size * size);
        for _ in 0..plies {
            let moves = position.legal_moves();
            if moves.is_empty() || position.outcome(rules).is_some() {
                break;
            }
            position = position.play(moves.as_slice()[rng.below(moves.len())]);
        }
        if position.outcome(rules).is_none() {
            return position;
        }
    }
}

/// The `solve` answer for the engine's current position.
fn solve(engine: &mut Engine) -> String {
    engine.send("solve");
    let (lines, _) = engine.read_until(|l| l.starts_with("solve "), LONG);
    lines.last().unwrap().clone()
}

#[test]
fn self_play_from_tables_ends_as_the_table_predicts() {
    let _cpu = shared();
    let mut rng = Rng(0x7AB1_EBA5E);
    let mut engine = Engine::start();
    let (mut decided, mut drawn) = (0, 0);
    for (size, rules, games) in [
        (3, Rules::Textbook, 25),
        (3, Rules::Classic, 25),
        (4, Rules::Textbook, 40),
        (4, Rules::Classic, 40),
    ] {
        engine.send_all(&[
            &format!("setoption name Rules value {}", rules.name()),
            "ucinewgame",
        ]);
        let table = tablebase::builtin(size, rules).unwrap();
        for _ in 0..games {
            let start = random_position(&mut rng, size, rules);
            let fen = format_position(&start);
            let predicted = table.probe(&start).unwrap();
            engine.send_all(&[&format!("position fen {fen}")]);
            let answer = solve(&mut engine);
            let expected = match predicted {
                Value::Win(p) => format!("solve win {p}"),
                Value::Loss(p) => format!("solve loss {p}"),
                Value::Draw => "solve draw".to_string(),
            };
            assert_eq!(answer, expected, "{fen}");

            let mut moves: Vec<String> = Vec::new();
            let mut position = start;
            // Decided games end in exactly the predicted plies; drawn ones
            // are cut off after a while, never having left the draw.
            let limit = match predicted {
                Value::Win(p) | Value::Loss(p) => p as usize,
                Value::Draw => 40,
            };
            let mut repeated = false;
            while moves.len() < limit && position.outcome(rules).is_none() {
                let lines = engine.go("go depth 2", LONG);
                if lines
                    .iter()
                    .any(|l| l.contains("draw by threefold repetition"))
                {
                    repeated = true;
                    break;
                }
                let best = best_move(lines.last().unwrap()).to_string();
                assert!(lines.iter().any(|l| l.contains(" tbhits ")), "{lines:?}");
                let mv = dodgem::notation::parse_move(&best, &position).unwrap();
                position = position.play(mv);
                moves.push(best);
                engine.send_all(&[&format!("position fen {fen} moves {}", moves.join(" "))]);
                if predicted == Value::Draw && position.outcome(rules).is_none() {
                    assert_eq!(table.probe(&position), Some(Value::Draw), "{fen} {moves:?}");
                }
            }
            match predicted {
                Value::Draw => drawn += 1,
                _ => decided += 1,
            }
            let ended = if repeated {
                Some(Outcome::DrawByRepetition)
            } else {
                position.outcome(rules)
            };
            match predicted {
                Value::Draw => assert!(
                    ended.is_none() || ended == Some(Outcome::DrawByRepetition),
                    "{fen} {moves:?}: {ended:?}"
                ),
                Value::Win(p) | Value::Loss(p) => {
                    let mover = start.side_to_move();
                    let winner = if matches!(predicted, Value::Win(_)) {
                        mover
                    } else {
                        mover.other()
                    };
                    assert_eq!(moves.len(), p as usize, "{fen} {moves:?}");
                    assert_eq!(
                        ended.and_then(|o| o.winner()),
                        Some(winner),
                        "{fen} {moves:?}"
                    );
                }
            }
        }
    }
    assert!(
        decided >= 50 && drawn >= 5,
        "{decided} decided, {drawn} drawn"
    );
}

#[test]
fn a_bad_table_file_is_refused_and_the_engine_carries_on() {
    let _cpu = shared();
    let dir = std::env::temp_dir().join(format!("dodgem-bad-tables-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("3x3-classic.dtb");
    tablebase::builtin(3, Rules::Classic)
        .unwrap()
        .save(&good)
        .unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let truncated = dir.join("truncated.dtb");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let damaged = dir.join("damaged.dtb");
    let mut flipped = bytes.clone();
    flipped[100] ^= 0x40;
    std::fs::write(&damaged, &flipped).unwrap();
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a table").unwrap();

    let mut engine = Engine::start();
    engine.send_all(&[
        "setoption name Rules value classic",
        "position startpos moves a3b3",
    ]);
    for (file, complaint) in [
        (&truncated, "truncated"),
        (&damaged, "checksum"),
        (&text, "not a dodgem table file"),
        (&dir.join("missing.dtb"), "cannot read"),
    ] {
        let lines = engine.send_all(&[&format!(
            "setoption name TablebasePath value {}",
            file.display()
        )]);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info string error:") && l.contains(complaint)),
            "{complaint}: {lines:?}"
        );
        // Still answering, position kept, built-in table still in use.
        assert_eq!(solve(&mut engine), "solve loss 18");
        let lines = engine.go("go depth 1", Duration::from_secs(20));
        assert!(is_bestmove(lines.last().unwrap()));
    }
    // The good file loads and says so.
    let lines = engine.send_all(&[&format!(
        "setoption name TablebasePath value {}",
        good.display()
    )]);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string loaded 3x3 classic table")),
        "{lines:?}"
    );
    assert_eq!(solve(&mut engine), "solve loss 18");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn solve_answers_within_a_few_milliseconds_once_the_table_exists() {
    let _cpu = timing();
    let mut rng = Rng(0x50_1BE5);
    let mut engine = Engine::start();
    for size in [3, 4] {
        engine.send_all(&[&format!("setoption name BoardSize value {size}")]);
        // The first `solve` builds the table.
        solve(&mut engine);
        let mut times = Vec::new();
        for _ in 0..200 {
            let position = random_position(&mut rng, size, Rules::Textbook);
            engine.send_all(&[&format!("position fen {}", format_position(&position))]);
            let sent = engine.send("solve");
            let (_, answered) = engine.wait_for("solve ", LONG);
            times.push(answered - sent);
        }
        times.sort();
        let (median, worst) = (times[times.len() / 2], times[times.len() - 1]);
        println!(
            "{size}x{size} solve over pipes: median {:.3} ms, worst {:.3} ms",
            ms(median),
            ms(worst)
        );
        // Generous bounds: the machine is shared (typical is ~0.1 ms).
        assert!(median < Duration::from_millis(5), "median {median:?}");
        assert!(worst < Duration::from_millis(100), "worst {worst:?}");
    }
}

#[test]
fn the_solve_command_reports_and_writes_a_table_the_engine_loads() {
    let _cpu = shared();
    let dir = std::env::temp_dir().join(format!("dodgem-solve-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("4x4-classic.dtb");
    let path = file.to_str().unwrap();
    let (status, out) = crate::common::run_cli(
        &[
            "solve", "--size", "4", "--rules", "classic", "--out", path, "--quiet",
        ],
        LONG,
    );
    assert!(status.success(), "{out}");
    for expected in [
        "4x4 Dodgem, classic rule",
        "reachable from the start                 393,900",
        "start (Black to move): draw",
        "a2a1 loss in 38 plies",
    ] {
        assert!(out.contains(expected), "{expected:?} missing from\n{out}");
    }
    let loaded = Table::load(&file).unwrap();
    assert_eq!(
        loaded.values(),
        tablebase::builtin(4, Rules::Classic).unwrap().values()
    );
    // The same report from the file.
    let (status, again) = crate::common::run_cli(&["solve", "--table", path], LONG);
    assert!(status.success());
    assert!(
        again.contains("reachable from the start                 393,900"),
        "{again}"
    );
    // Sizes the solver cannot index are refused with a message.
    let (status, _) = crate::common::run_cli(&["solve", "--size", "6", "--quiet"], LONG);
    assert!(!status.success());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Layered tables of `size` under `rules` with at most `max_cars` cars a
/// side, solved into a fresh directory (a fraction of a second for the
/// sizes used here).
fn layered_dir(name: &str, size: usize, rules: Rules, max_cars: u32) -> std::path::PathBuf {
    let dir = crate::common::scratch(name);
    let plan = solver::Plan {
        kind: solver::Kind {
            size,
            rules,
            max_cars,
        },
        dir: dir.clone(),
        threads: 2,
        stop_after_layers: None,
        two_bytes: false,
    };
    let outcome = solver::solve_layers(&plan, &mut |_| {}).unwrap();
    assert!(!outcome.stopped);
    dir
}

/// A random position with 1 to `max_cars` cars a side, anywhere on the
/// board, not finished; `side` to move.
fn random_covered(rng: &mut Rng, size: usize, max_cars: usize, rules: Rules) -> Position {
    loop {
        let mut grid = vec!['.'; size * size];
        for car in ['B', 'W'] {
            for _ in 0..1 + rng.below(max_cars) {
                let empty: Vec<usize> = (0..grid.len()).filter(|&i| grid[i] == '.').collect();
                grid[*rng.pick(&empty)] = car;
            }
        }
        let rows: Vec<String> = grid
            .chunks(size)
            .map(|row| {
                let mut text = String::new();
                let mut gap = 0;
                for &c in row {
                    if c == '.' {
                        gap += 1;
                    } else {
                        if gap > 0 {
                            text.push_str(&gap.to_string());
                        }
                        gap = 0;
                        text.push(c);
                    }
                }
                if gap > 0 {
                    text.push_str(&gap.to_string());
                }
                text
            })
            .collect();
        let side = if rng.chance(2) { "b" } else { "w" };
        let fen = format!("{} {side}", rows.join("/"));
        if let Ok(position) = dodgem::notation::parse_position(&fen)
            && position.outcome(rules).is_none()
        {
            return position;
        }
    }
}

/// The `solve` answer layered tables give for `value`.
fn dtz_answer(value: solver::Dtz) -> String {
    match value {
        solver::Dtz::Win(d) => format!("solve win dtz {d}"),
        solver::Dtz::Loss(d) => format!("solve loss dtz {d}"),
        solver::Dtz::Draw => "solve draw".to_string(),
    }
}

#[test]
fn layered_tables_answer_solve_and_play_out_as_they_predict() {
    let _cpu = shared();
    let mut rng = Rng(0x1A7E_12ED);
    let (mut decided, mut drawn) = (0, 0);
    for (size, rules, max_cars, games) in [
        (4, Rules::Textbook, 3, 30),
        (4, Rules::Classic, 3, 20),
        (5, Rules::Classic, 2, 30),
    ] {
        let dir = layered_dir(
            &format!("tbdir-{size}-{}", rules.name()),
            size,
            rules,
            max_cars,
        );
        let tables = solver::Tables::open(&dir).unwrap();
        let dense = tablebase::builtin(size, rules);
        let mut engine = Engine::start();
        let lines = engine.send_all(&[
            &format!("setoption name Rules value {}", rules.name()),
            &format!("setoption name TablebasePath value {}", dir.display()),
        ]);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info string loaded") && l.contains("layered tables")),
            "{lines:?}"
        );
        for _ in 0..games {
            let start = random_covered(&mut rng, size, max_cars as usize, rules);
            let fen = format_position(&start);
            let predicted = tables.probe(&start).unwrap().expect("covered");
            if let Some(dense) = &dense {
                // An independent check of win, draw or loss.
                let exact = dense.probe(&start).unwrap();
                let same = matches!(
                    (predicted, exact),
                    (solver::Dtz::Win(_), Value::Win(_))
                        | (solver::Dtz::Draw, Value::Draw)
                        | (solver::Dtz::Loss(_), Value::Loss(_))
                );
                assert!(same, "{fen}: {predicted:?} against {exact:?}");
            }
            engine.send_all(&[&format!("position fen {fen}")]);
            assert_eq!(solve(&mut engine), dtz_answer(predicted), "{fen}");

            // The engine plays both sides. A decided game ends with the
            // predicted winner without any position repeating, within
            // the bound progress sets: each side's progress can rise at
            // most 2 * size * size times, and between two progress moves
            // the winner's distance falls at every one of its moves. A
            // drawn game is cut off after a while, never having left the
            // draw.
            let longest = 2 * 128;
            let limit = match predicted {
                solver::Dtz::Draw => 30,
                _ => 4 * size * size * longest,
            };
            let mut moves: Vec<String> = Vec::new();
            let mut position = start;
            let mut seen = std::collections::HashSet::from([position.key()]);
            let mut repeated = false;
            while moves.len() < limit && position.outcome(rules).is_none() {
                let lines = engine.go("go depth 1", LONG);
                if lines
                    .iter()
                    .any(|l| l.contains("draw by threefold repetition"))
                {
                    repeated = true;
                    break;
                }
                assert!(lines.iter().any(|l| l.contains(" tbhits ")), "{lines:?}");
                let value = tables.probe(&position).unwrap().expect("covered");
                if let solver::Dtz::Win(_) | solver::Dtz::Loss(_) = value {
                    // Scores beyond any evaluation, the winner's positive.
                    let info = lines.iter().rev().find(|l| l.contains(" score ")).unwrap();
                    let (kind, score) = crate::common::info_score(info).unwrap();
                    assert_eq!(kind, "cp", "{info}");
                    assert_eq!(
                        score > 20_000,
                        matches!(value, solver::Dtz::Win(_)),
                        "{info}"
                    );
                    assert!(score.abs() > 20_000, "{info}");
                }
                let best = best_move(lines.last().unwrap()).to_string();
                let mv = dodgem::notation::parse_move(&best, &position).unwrap();
                position = position.play(mv);
                moves.push(best);
                engine.send_all(&[&format!("position fen {fen} moves {}", moves.join(" "))]);
                if predicted == solver::Dtz::Draw {
                    if position.outcome(rules).is_none() {
                        assert_eq!(
                            tables.probe(&position).unwrap(),
                            Some(solver::Dtz::Draw),
                            "{fen} {moves:?}"
                        );
                    }
                } else {
                    assert!(seen.insert(position.key()), "{fen} {moves:?} repeats");
                }
            }
            let ended = if repeated {
                Some(Outcome::DrawByRepetition)
            } else {
                position.outcome(rules)
            };
            match predicted {
                solver::Dtz::Draw => {
                    drawn += 1;
                    assert!(
                        ended.is_none() || ended == Some(Outcome::DrawByRepetition),
                        "{fen} {moves:?}: {ended:?}"
                    );
                }
                solver::Dtz::Win(_) | solver::Dtz::Loss(_) => {
                    decided += 1;
                    let mover = start.side_to_move();
                    let winner = if matches!(predicted, solver::Dtz::Win(_)) {
                        mover
                    } else {
                        mover.other()
                    };
                    assert_eq!(
                        ended.and_then(|o| o.winner()),
                        Some(winner),
                        "{fen} {moves:?}: {ended:?}"
                    );
                }
            }
        }
        engine.quit();
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(
        decided >= 40 && drawn >= 5,
        "{decided} decided, {drawn} drawn"
    );
}

#[test]
fn a_bad_table_directory_is_refused_and_the_engine_carries_on() {
    let _cpu = shared();
    let good = layered_dir("tbdir-good", 4, Rules::Classic, 3);
    let root = crate::common::scratch("tbdir-bad");
    let copy = |name: &str| {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&good).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
        dir
    };
    let manifest = |dir: &std::path::Path| dir.join("dodgem-tables.txt");
    let empty = root.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let incomplete = copy("incomplete");
    let layer = std::fs::read_dir(&incomplete)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "dtz"))
        .unwrap();
    std::fs::remove_file(&layer).unwrap();
    // The manifest says one rule, the layer files another.
    let relabelled = copy("relabelled");
    let text = std::fs::read_to_string(manifest(&relabelled)).unwrap();
    std::fs::write(
        manifest(&relabelled),
        text.replace("rules classic", "rules textbook"),
    )
    .unwrap();
    let oversized = copy("oversized");
    std::fs::write(
        manifest(&oversized),
        text.replace("max-cars 3", "max-cars 4"),
    )
    .unwrap();
    let garbled = copy("garbled");
    std::fs::write(manifest(&garbled), "hello\n").unwrap();
    // A FIFO in place of the manifest must not block the loader.
    let piped = root.join("piped");
    std::fs::create_dir_all(&piped).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(manifest(&piped))
        .status()
        .is_ok_and(|status| status.success());

    let mut engine = Engine::start();
    engine.send_all(&[
        "setoption name Rules value textbook",
        "position fen 4/B3/4/2W1 b",
    ]);
    let before = solve(&mut engine);
    assert!(before.starts_with("solve "), "{before}");
    for (dir, complaint) in [
        (&empty, "no dodgem tables"),
        (&incomplete, "incomplete"),
        (&relabelled, "is from 4x4 classic tables"),
        (&oversized, "no tables for size 4 with at most 4 cars"),
        (&garbled, "not a dodgem tables manifest"),
        (
            &piped,
            if fifo {
                "is not a regular file"
            } else {
                "no dodgem tables"
            },
        ),
    ] {
        let lines = engine.send_all(&[&format!(
            "setoption name TablebasePath value {}",
            dir.display()
        )]);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info string error:") && l.contains(complaint)),
            "{complaint}: {lines:?}"
        );
        // Still answering, position kept, built-in table still in use.
        assert_eq!(solve(&mut engine), before);
        let lines = engine.go("go depth 1", Duration::from_secs(20));
        assert!(is_bestmove(lines.last().unwrap()));
    }
    // The good directory loads, but covers another rule: the textbook
    // answer stays the built-in table's.
    let lines = engine.send_all(&[&format!(
        "setoption name TablebasePath value {}",
        good.display()
    )]);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string loaded 4x4 classic layered tables")),
        "{lines:?}"
    );
    assert_eq!(solve(&mut engine), before);
    engine.send_all(&["setoption name Rules value classic"]);
    assert!(solve(&mut engine).contains(" dtz "));
    engine.quit();
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_dir_all(&good).unwrap();
}

#[test]
fn layered_move_values_agree_with_the_stored_values() {
    // The value the engine gives each move, from its successor's stored
    // value, must make the best move's value the position's own stored
    // value: the rule it plays by is the rule the solver stored.
    let _cpu = shared();
    let mut rng = Rng(0x5EED_1A7E);
    for (size, rules, max_cars) in [
        (4, Rules::Textbook, 3),
        (4, Rules::Classic, 3),
        (5, Rules::Textbook, 2),
    ] {
        let dir = layered_dir(
            &format!("tbdir-agree-{size}-{}", rules.name()),
            size,
            rules,
            max_cars,
        );
        let layered = tablebase::Layered::open(&dir).unwrap();
        let mut checked = 0;
        for _ in 0..1000 {
            let position = random_covered(&mut rng, size, max_cars as usize, rules);
            assert!(layered.covers(&position, rules));
            let ranked = layered.rank_moves(&position);
            if let Some(&(_, best)) = ranked.first() {
                let fen = format_position(&position);
                assert_eq!(Some(best), layered.probe(&position), "{fen}: {ranked:?}");
                checked += 1;
            }
        }
        assert!(checked > 800, "{checked}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

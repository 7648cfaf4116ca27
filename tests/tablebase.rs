//! The solver's tables and play from them: the built-in and solved
//! tables against the reference solver on every 3 x 3 and 4 x 4 position
//! (and the reference against the published facts), the engine playing
//! perfectly from random positions over pipes, `solve`, and bad tables.

use std::time::Duration;

use crate::common::{
    Engine, LOAD_SLACK, LONG, Rng, assert_prompt, best_move, is_bestmove, ms, shared, timing,
};
use crate::reference::{Dtm, Reference};
use dodgem::board::{Color, Outcome, Position, Rules};
use dodgem::notation::format_position;
use dodgem::solver::{self, Dtz};
use dodgem::tablebase;

#[test]
fn the_reference_solver_matches_the_published_facts() {
    let _cpu = shared();
    for (rules, wins, losses) in [(Rules::Textbook, 1_120, 843), (Rules::Classic, 1_123, 840)] {
        let reference = Reference::get(3, rules);
        assert_eq!(reference.reachable_counts(), (wins, 0, losses), "{rules:?}");
        assert!(reference.dtm.iter().all(|&v| v != Dtm::Draw), "no 3x3 draw");
        let start = Position::start(3);
        assert_eq!(reference.dtm(&start), Dtm::Win(19), "{rules:?}");
        // Black wins by a3b3 alone.
        let winning: Vec<String> = start
            .legal_moves()
            .as_slice()
            .iter()
            .filter(|&&mv| matches!(reference.dtm(&start.play(mv)), Dtm::Loss(_)))
            .map(|&mv| dodgem::notation::format_move(Some(mv)))
            .collect();
        assert_eq!(winning, ["a3b3"], "{rules:?}");
    }
    for rules in Rules::ALL {
        let reference = Reference::get(4, rules);
        assert_eq!(reference.positions.len(), 2 * 276_600);
        assert_eq!(reference.dtm(&Position::start(4)), Dtm::Draw, "{rules:?}");
        let (wins, draws, losses) = reference.reachable_counts();
        assert_eq!(wins + draws + losses, 393_900, "{rules:?}");
    }
}

/// Checks `probe` against the reference on every position of `size`
/// under `rules`: the same win, draw or loss and distance to progress.
fn check_everywhere(size: usize, rules: Rules, probe: impl Fn(&Position) -> Option<Dtz>) {
    let reference = Reference::get(size, rules);
    for (position, &expected) in reference.positions.iter().zip(&reference.dtz) {
        assert_eq!(
            probe(position),
            Some(expected),
            "{} ({rules:?})",
            format_position(position)
        );
        // The two passes of the reference agree on the result.
        let dtm = reference.dtm(position);
        assert!(
            matches!(
                (expected, dtm),
                (Dtz::Win(_), Dtm::Win(_)) | (Dtz::Draw, Dtm::Draw) | (Dtz::Loss(_), Dtm::Loss(_))
            ),
            "{}: {expected:?} against {dtm:?}",
            format_position(position)
        );
    }
}

#[test]
fn built_in_tables_agree_with_the_reference_on_every_position() {
    let _cpu = shared();
    for size in tablebase::BUILTIN_SIZES {
        for rules in Rules::ALL {
            let table = tablebase::builtin(size, rules).unwrap();
            check_everywhere(size, rules, |position| table.probe(position));
        }
    }
}

#[test]
fn solved_table_directories_agree_with_the_reference_on_every_position() {
    let _cpu = shared();
    for size in tablebase::BUILTIN_SIZES {
        for rules in Rules::ALL {
            let dir = layered_dir(
                &format!("reference-{size}-{}", rules.name()),
                size,
                rules,
                size as u32 - 1,
            );
            let tables = solver::Tables::open(&dir).unwrap();
            check_everywhere(size, rules, |position| tables.probe(position).unwrap());
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

/// The census of the reachable positions by the reference: a search over
/// the board's own moves from the start, values from the reference.
fn reference_census(reference: &Reference, size: usize) -> solver::reach::Census {
    let start = Position::start(size);
    let mut seen = std::collections::HashSet::from([start]);
    let mut queue = std::collections::VecDeque::from([start]);
    let mut census = solver::reach::Census::default();
    while let Some(position) = queue.pop_front() {
        let side = position.side_to_move().index();
        if position.cars(Color::Black) == 0 || position.cars(Color::White) == 0 {
            census.finished[side] += 1;
            continue;
        }
        let counts = &mut census.sides[side];
        match reference.dtm(&position) {
            Dtm::Win(_) => counts.wins += 1,
            Dtm::Draw => counts.draws += 1,
            Dtm::Loss(_) => counts.losses += 1,
        }
        counts.blocked += u64::from(position.count_moves() == 0);
        for &mv in position.legal_moves().as_slice() {
            let next = position.play(mv);
            if seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    census
}

#[test]
fn the_reachable_census_matches_the_reference_on_every_reachable_position() {
    let _cpu = shared();
    for size in tablebase::BUILTIN_SIZES {
        for rules in Rules::ALL {
            let reference = Reference::get(size, rules);
            let expected = reference_census(&reference, size);
            // The published totals, finished games counted as losses.
            let (wins, draws, losses) = reference.reachable_counts();
            let on_board = expected.on_board();
            let finished = expected.finished[0] + expected.finished[1];
            assert_eq!(
                (on_board.wins, on_board.draws, on_board.losses + finished),
                (wins, draws, losses)
            );
            // Streamed from layer files, and from layers in memory.
            let dir = layered_dir(
                &format!("census-{size}-{}", rules.name()),
                size,
                rules,
                size as u32 - 1,
            );
            let kind = solver::Kind {
                size,
                rules,
                max_cars: size as u32 - 1,
            };
            let in_memory =
                solver::Tables::from_memory(kind, solver::solve_in_memory(kind, 2).unwrap(), None);
            for tables in [solver::Tables::open(&dir).unwrap(), in_memory] {
                for threads in [1, 2] {
                    let census = solver::reach::census(&tables, threads, &mut |_, _| {}).unwrap();
                    assert_eq!(
                        census, expected,
                        "{size}x{size} {rules:?}, {threads} threads"
                    );
                    assert_eq!(census.positions(), wins + draws + losses);
                }
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

#[test]
fn a_census_stopped_part_way_resumes_from_its_checkpoint_to_the_same_counts() {
    let _cpu = shared();
    let kind = solver::Kind {
        size: 4,
        rules: Rules::Textbook,
        max_cars: 3,
    };
    let tables = solver::Tables::from_memory(kind, solver::solve_in_memory(kind, 2).unwrap(), None);
    let whole = solver::reach::census(&tables, 2, &mut |_, _| {}).unwrap();
    let dir = std::env::temp_dir().join(format!("dodgem-reach-checkpoint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("reach.checkpoint");
    let checkpoint = |stop_after| solver::reach::Checkpoint {
        path: &path,
        every: Duration::ZERO,
        stop_after,
    };
    // Three stops on the way, then to the end.
    let mut steps = Vec::new();
    for _ in 0..3 {
        let stopped =
            solver::reach::census_resumable(&tables, 1, &checkpoint(Some(2)), &mut |done, _| {
                steps.push(done)
            })
            .unwrap();
        assert_eq!(stopped, None);
    }
    let resumed = solver::reach::census_resumable(&tables, 2, &checkpoint(None), &mut |done, _| {
        steps.push(done)
    })
    .unwrap();
    assert_eq!(resumed, Some(whole));
    // Each start went on from where the last stopped.
    let closed: Vec<_> = steps.windows(2).filter(|w| w[1] <= w[0]).collect();
    assert!(closed.is_empty(), "a start went back: {steps:?}");
    // The final save answers at once.
    let again =
        solver::reach::census_resumable(&tables, 1, &checkpoint(None), &mut |_, _| {}).unwrap();
    assert_eq!(again, Some(whole));
    // A damaged checkpoint, or one of other tables, is refused.
    let other = solver::Kind {
        rules: Rules::Classic,
        ..kind
    };
    let classic =
        solver::Tables::from_memory(other, solver::solve_in_memory(other, 2).unwrap(), None);
    let refused = solver::reach::census_resumable(&classic, 1, &checkpoint(None), &mut |_, _| {});
    assert!(
        refused
            .unwrap_err()
            .to_string()
            .contains("not a reach checkpoint of these tables"),
    );
    std::fs::remove_file(&path).unwrap();
    solver::reach::census_resumable(&tables, 1, &checkpoint(Some(3)), &mut |_, _| {}).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 6;
    bytes[last] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let damaged = solver::reach::census_resumable(&tables, 1, &checkpoint(None), &mut |_, _| {});
    assert!(damaged.unwrap_err().to_string().contains("checksum"));
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let truncated = solver::reach::census_resumable(&tables, 1, &checkpoint(None), &mut |_, _| {});
    assert!(truncated.is_err());
    std::fs::remove_dir_all(&dir).unwrap();
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

/// Plays `start` out by the engine against itself (its tables set up by
/// the caller) and checks it ends as `probe` predicts: a decided game with
/// the predicted winner, without any position repeating, within the
/// bound progress sets (each side's progress can rise at most 2 * size *
/// size times, and between two progress moves the winner's distance
/// falls at every one of its moves); a drawn game, cut off after a while,
/// never leaves the draw. Every decided position scores beyond any
/// evaluation, the winner's positive: the mate its distance to the end
/// gives where `end` knows it (the tables have it), else `cp`. Returns
/// whether the game was decided.
fn play_out(
    engine: &mut Engine,
    start: Position,
    rules: Rules,
    probe: &dyn Fn(&Position) -> Option<Dtz>,
    end: &dyn Fn(&Position) -> Option<Dtz>,
) -> bool {
    let fen = format_position(&start);
    let predicted = probe(&start).expect("covered");
    engine.send_all(&[&format!("position fen {fen}")]);
    assert_eq!(solve(engine), solve_answer(predicted, end(&start)), "{fen}");
    let longest = 2 * 128;
    let limit = match predicted {
        Dtz::Draw => 30,
        _ => 4 * start.size() * start.size() * longest,
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
        let value = probe(&position).expect("covered");
        if let Dtz::Win(_) | Dtz::Loss(_) = value {
            let info = lines.iter().rev().find(|l| l.contains(" score ")).unwrap();
            let score = crate::common::info_score(info).unwrap();
            match end(&position) {
                Some(Dtz::Win(p)) => assert_eq!(score, mate(p, 1), "{info}"),
                Some(Dtz::Loss(p)) => assert_eq!(score, mate(p, -1), "{info}"),
                // Without the distance to the end: `cp`, but for a move
                // that takes the last car off (a mate in 1 all the same).
                _ if score == mate(1, 1) => assert_eq!(value, Dtz::Win(1), "{info}"),
                _ => {
                    let (kind, score) = score;
                    assert_eq!(kind, "cp", "{info}");
                    assert_eq!(score > 20_000, matches!(value, Dtz::Win(_)), "{info}");
                    assert!(score.abs() > 20_000, "{info}");
                }
            }
        }
        let best = best_move(lines.last().unwrap()).to_string();
        let mv = dodgem::notation::parse_move(&best, &position).unwrap();
        position = position.play(mv);
        moves.push(best);
        engine.send_all(&[&format!("position fen {fen} moves {}", moves.join(" "))]);
        if predicted == Dtz::Draw {
            if position.outcome(rules).is_none() {
                assert_eq!(probe(&position), Some(Dtz::Draw), "{fen} {moves:?}");
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
        Dtz::Draw => {
            assert!(
                ended.is_none() || ended == Some(Outcome::DrawByRepetition),
                "{fen} {moves:?}: {ended:?}"
            );
            false
        }
        Dtz::Win(_) | Dtz::Loss(_) => {
            let mover = start.side_to_move();
            let winner = if matches!(predicted, Dtz::Win(_)) {
                mover
            } else {
                mover.other()
            };
            assert_eq!(
                ended.and_then(|o| o.winner()),
                Some(winner),
                "{fen} {moves:?}: {ended:?}"
            );
            true
        }
    }
}

#[test]
fn self_play_from_built_in_tables_ends_as_they_predict() {
    let _cpu = shared();
    let mut rng = Rng(0x7AB1_EBA5E);
    let mut engine = Engine::start();
    let (mut decided, mut drawn) = (0, 0);
    for (size, rules, games) in [
        (3, Rules::Textbook, 20),
        (3, Rules::Classic, 20),
        (4, Rules::Textbook, 30),
        (4, Rules::Classic, 30),
    ] {
        engine.send_all(&[
            &format!("setoption name Rules value {}", rules.name()),
            "ucinewgame",
        ]);
        let table = tablebase::builtin(size, rules).unwrap();
        for _ in 0..games {
            let start = random_position(&mut rng, size, rules);
            let (probe, end) = (
                |p: &Position| table.probe(p),
                |p: &Position| table.probe_end(p),
            );
            match play_out(&mut engine, start, rules, &probe, &end) {
                true => decided += 1,
                false => drawn += 1,
            }
        }
    }
    assert!(
        decided >= 40 && drawn >= 5,
        "{decided} decided, {drawn} drawn"
    );
}

/// The first position two plies at most from the start of `size` x
/// `size` that `table` has won for its side to move.
fn won_near_the_start(table: &tablebase::Layered, size: usize) -> Position {
    let children =
        |p: Position| -> Vec<Position> { p.legal_moves().iter().map(|&mv| p.play(mv)).collect() };
    let start = Position::start(size);
    let mut near = vec![start];
    for child in children(start) {
        near.push(child);
        near.extend(children(child));
    }
    near.into_iter()
        .find(|p| matches!(table.probe(p), Some(Dtz::Win(_))))
        .expect("a won position within two plies of the start")
}

#[test]
fn the_first_short_search_of_a_fresh_engine_plays_from_the_built_in_table() {
    let _cpu = shared();
    // Each in a new process, whose built-in tables are not built yet: the
    // engine builds them before `readyok`, so a clock far shorter than the
    // build (about 0.1 s on 4 x 4) still plays from them.
    for (rules, hello, go) in [
        (Rules::Textbook, "uci", "go movetime 20"),
        (Rules::Classic, "uci", "go wtime 100 btime 100"),
        (Rules::Textbook, "ugi", "go p1time 100 p2time 100"),
    ] {
        let table = tablebase::builtin(4, rules).unwrap();
        let position = won_near_the_start(&table, 4);
        let fen = format_position(&position);
        let mut engine = Engine::start();
        engine.send(hello);
        engine.send("setoption name BoardSize value 4");
        engine.send(&format!("setoption name Rules value {}", rules.name()));
        engine.send(&format!("position fen {fen}"));
        engine.sync();
        let lines = engine.go(go, LONG);
        // The quickest win to the end.
        let Some(Dtz::Win(plies)) = table.probe_end(&position) else {
            panic!("{fen}: not won");
        };
        let played =
            dodgem::notation::parse_move(best_move(lines.last().unwrap()), &position).unwrap();
        assert_eq!(
            table.end_after(&position, played),
            Some(Dtz::Win(plies)),
            "{fen} {go}: {lines:#?}"
        );
        let info = lines.iter().rev().find(|l| l.contains(" score ")).unwrap();
        let score = crate::common::info_score(info).unwrap();
        assert_eq!(score, mate(plies, 1), "{fen} {go}: {info}");
        assert!(info.contains(" tbhits "), "{info}");
        engine.quit();
    }
}

#[test]
fn a_table_file_or_a_bad_path_is_refused_and_the_engine_carries_on() {
    let _cpu = shared();
    let dir = crate::common::scratch("tb-file");
    let file = dir.join("3x3-classic.dtb");
    std::fs::write(&file, b"DODGEMTB and more").unwrap();
    let mut engine = Engine::start();
    engine.send_all(&[
        "setoption name Rules value classic",
        "position startpos moves a3b3",
    ]);
    let before = solve(&mut engine);
    assert!(
        before.starts_with("solve loss ") && before.contains(" dtz "),
        "{before}"
    );
    for (path, complaint) in [
        (&file, "is not a directory"),
        (&dir.join("missing"), "no such directory"),
    ] {
        let lines = engine.send_all(&[&format!(
            "setoption name TablebasePath value {}",
            path.display()
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
    engine.quit();
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
        // Generous bounds: the machine is shared (typical is ~0.1 ms); the
        // worst may wait for a core behind other work.
        assert_prompt(
            &times,
            Duration::from_millis(5),
            &format!("{size}x{size} solve"),
        );
        assert!(
            worst < Duration::from_millis(100) + LOAD_SLACK,
            "worst {worst:?}"
        );
    }
}

#[test]
fn the_solve_command_writes_a_directory_the_engine_loads() {
    let _cpu = shared();
    let dir = crate::common::scratch("solve-cli");
    let out = dir.join("4x4-classic");
    let path = out.to_str().unwrap();
    let (status, text) = crate::common::run_cli(
        &[
            "solve", "--size", "4", "--rules", "classic", "--out", path, "--quiet",
        ],
        LONG,
    );
    assert!(status.success(), "{text}");
    for expected in [
        "4x4 Dodgem, classic rule",
        "positions per side to move: 276,600",
        "start (Black to move): draw",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from\n{text}");
    }
    let mut engine = Engine::start();
    let lines = engine.send_all(&[
        "setoption name Rules value classic",
        &format!("setoption name TablebasePath value {path}"),
    ]);
    assert!(
        lines.iter().any(|l| l
            == &format!(
                "info string loaded 4x4 classic layered tables (at most 3 cars a side) from {path}"
            )),
        "{lines:?}"
    );
    engine.send_all(&["setoption name BoardSize value 4"]);
    assert_eq!(solve(&mut engine), "solve draw");
    engine.quit();
    // A file for --out, or no --out: refused with a message.
    let file = dir.join("4x4.dtb");
    let refused = crate::common::run(
        &["solve", "--size", "4", "--out", file.to_str().unwrap()],
        LONG,
    );
    assert!(!refused.status.success());
    assert!(
        refused.stderr.contains("not to a single file"),
        "{refused:?}"
    );
    let refused = crate::common::run(&["solve", "--size", "6", "--quiet"], LONG);
    assert!(!refused.status.success());
    assert!(refused.stderr.contains("needs --out"), "{refused:?}");
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
        with_dte: false,
    };
    let outcome = solver::solve_layers(&plan, &mut |_| {}).unwrap();
    assert!(!outcome.stopped);
    dir
}

/// A random position with 1 to `max_cars` cars a side, anywhere on the
/// board, not finished; `side` to move.
pub fn random_covered(rng: &mut Rng, size: usize, max_cars: usize, rules: Rules) -> Position {
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

/// The `solve` answer tables give for `value`, with the distance to the
/// end `end` where they have it.
fn solve_answer(value: Dtz, end: Option<Dtz>) -> String {
    match (value, end) {
        (Dtz::Win(d), Some(Dtz::Win(e))) => format!("solve win {e} dtz {d}"),
        (Dtz::Loss(d), Some(Dtz::Loss(e))) => format!("solve loss {e} dtz {d}"),
        (Dtz::Win(d), None) => format!("solve win dtz {d}"),
        (Dtz::Loss(d), None) => format!("solve loss dtz {d}"),
        (Dtz::Draw, _) => "solve draw".to_string(),
        _ => panic!("{value:?} against {end:?}"),
    }
}

/// The `score mate` of a win (`sign` 1) or loss (-1) in `plies` plies:
/// moves of the side to move, as the search reports its own mates.
pub fn mate(plies: u32, sign: i64) -> (String, i64) {
    ("mate".to_string(), sign * i64::from(plies.div_ceil(2)))
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
            if size == 4 {
                // An independent check of the stored value.
                let reference = Reference::get(size, rules);
                assert_eq!(tables.probe(&start).unwrap(), Some(reference.dtz(&start)));
            }
            let probe = |p: &Position| tables.probe(p).unwrap();
            // Tables solved without their distances to the end.
            match play_out(&mut engine, start, rules, &probe, &|_| None) {
                true => decided += 1,
                false => drawn += 1,
            }
        }
        engine.quit();
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(
        decided >= 40 && drawn >= 2,
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

#[test]
fn tbhits_count_the_probes_of_every_search_thread() {
    // The same search by node count with one thread and with two: the
    // share of nodes that hit a table is much the same, the helpers'
    // hits counted (with the main thread's alone it halves when the
    // helper gets its share of the nodes).
    let _cpu = shared();
    let probed = layered_dir("tbhits-k2", 5, Rules::Textbook, 2);
    let mut ratios = Vec::new();
    for threads in [1, 2] {
        let mut engine = Engine::start();
        engine.send_all(&[
            "setoption name BoardSize value 5",
            &format!("setoption name Threads value {threads}"),
            &format!("setoption name TablebasePath value {}", probed.display()),
            "position fen 5/B4/B4/1B3/1WW2 b",
        ]);
        let lines = engine.go("go nodes 400000", LONG);
        let info = lines.iter().rev().find(|l| l.contains(" tbhits ")).unwrap();
        let number = |key| -> f64 {
            crate::common::info_value(info, key)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no {key} in {info}"))
        };
        ratios.push(number("tbhits") / number("nodes"));
    }
    assert!(ratios[0] > 0.01, "{ratios:?}");
    assert!(ratios[1] > 0.75 * ratios[0], "{ratios:?}");
    std::fs::remove_dir_all(&probed).unwrap();
}

#[test]
fn the_search_probes_tables_that_do_not_cover_its_root() {
    // Tables of at most 2 cars a side, a root with 3 black cars (and at
    // most 2 white ones): the root is not covered, but every exit of a black car leads into covered
    // positions, which the search must score exactly (as the tables of
    // at most 3 cars, the truth here, say).
    let _cpu = shared();
    let rules = Rules::Textbook;
    let probed = layered_dir("probes-k2", 5, rules, 2);
    let whole = layered_dir("probes-k3", 5, rules, 3);
    let truth = solver::Tables::open(&whole).unwrap();
    let small = solver::Tables::open(&probed).unwrap();
    let mut engine = Engine::start();
    let lines = engine.send_all(&[
        "setoption name BoardSize value 5",
        &format!("setoption name TablebasePath value {}", probed.display()),
    ]);
    assert!(
        lines.iter().any(|l| l.starts_with("info string loaded")),
        "{lines:?}"
    );
    let mut rng = Rng(0x9_0BE5);
    let (mut claimed, mut won_by_exit) = (0, 0);
    let mut tried = 0;
    while tried < 60 {
        let position = random_covered(&mut rng, 5, 3, rules);
        let black = position.cars(dodgem::Color::Black).count_ones();
        let white = position.cars(dodgem::Color::White).count_ones();
        let moves = position.legal_moves();
        let exits: Vec<_> = moves
            .as_slice()
            .iter()
            .filter(|mv| mv.is_exit(5))
            .copied()
            .collect();
        if position.side_to_move() != dodgem::Color::Black
            || black != 3
            || white > 2
            || exits.is_empty()
        {
            continue;
        }
        tried += 1;
        let fen = format_position(&position);
        let expected = truth.probe(&position).unwrap().expect("covered by 3 cars");
        assert_eq!(small.probe(&position).unwrap(), None, "{fen} is covered");
        // An exit into a position lost for White wins: one ply deep, the
        // search sees it through the tables.
        let wins_by_exit = exits
            .iter()
            .any(|&mv| matches!(small.probe(&position.play(mv)).unwrap(), Some(Dtz::Loss(_))));
        engine.send_all(&[&format!("position fen {fen}")]);
        let lines = engine.go("go depth 2", LONG);
        let info = lines.iter().rev().find(|l| l.contains(" score ")).unwrap();
        let (kind, score) = crate::common::info_score(info).unwrap();
        // (A mate found by the search needs no table.)
        assert!(kind == "mate" || info.contains(" tbhits "), "{fen}: {info}");
        let decided = kind == "mate" || score.abs() >= 27_000;
        if decided {
            claimed += 1;
            let won = score > 0;
            assert!(
                matches!((won, expected), (true, Dtz::Win(_)) | (false, Dtz::Loss(_))),
                "{fen}: the search says {kind} {score}, the tables {expected:?}"
            );
        }
        if wins_by_exit {
            won_by_exit += 1;
            assert!(decided && score > 0, "{fen}: {info}");
        }
    }
    assert!(
        won_by_exit >= 5 && claimed >= 10,
        "{won_by_exit} won by an exit, {claimed} claimed"
    );
    engine.quit();
    std::fs::remove_dir_all(&probed).unwrap();
    std::fs::remove_dir_all(&whole).unwrap();
}

/// What a referee sends before a game: `uci`, the rules, `ucinewgame` and
/// `isready` (no `BoardSize`: the board comes with each `position fen`).
fn start_as_a_referee_does(rules: Rules) -> Engine {
    let mut engine = Engine::start();
    engine.send_all(&[
        "uci",
        &format!("setoption name Rules value {}", rules.name()),
        "ucinewgame",
    ]);
    engine
}

/// The first move of a 4 x 4 game set by `position fen` (on an engine
/// whose `BoardSize` is still 3) at 1 s + 10 ms comes from the built-in
/// table, which `isready` waited for: a drawing move, played at once, not
/// the depth-1 search's `d1d2` that loses in 29 plies (the engine used to
/// build the 4 x 4 table only once it saw a 4 x 4 position, and the first
/// search's share of the clock ran out before the build was done).
///
/// Without the `isready` (a script that pipes its commands at once), the
/// build starts at the `position`, and the search waits for it up to half
/// its usable clock, beyond its usual hard limit: from the table it
/// answers at once. That case gets 5 s + 10 ms: half of it (2.47 s) holds
/// the build on a busy machine, where the test build took over a second
/// for it, and the search's own hard limit (under 1 s) would not.
#[test]
fn the_first_move_on_4x4_set_by_fen_is_perfect_at_a_short_clock() {
    let _cpu = shared();
    for (rules, ready) in [
        (Rules::Textbook, true),
        (Rules::Classic, true),
        (Rules::Textbook, false),
        (Rules::Classic, false),
    ] {
        let reference = Reference::get(4, rules);
        let mut engine = if ready {
            start_as_a_referee_does(rules)
        } else {
            let mut engine = Engine::start();
            engine.send(&format!("setoption name Rules value {}", rules.name()));
            engine
        };
        engine.send("position fen B3/B3/B3/1WWW b moves a2b2");
        let go = if ready {
            "go wtime 1000 btime 1000 winc 10 binc 10"
        } else {
            "go wtime 5000 btime 5000 winc 10 binc 10"
        };
        let lines = engine.go(go, LONG);
        let infos: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with("info depth"))
            .collect();
        assert!(
            !infos.is_empty() && infos.iter().all(|l| l.contains(" tbhits ")),
            "{rules:?} (isready: {ready}): not from the table: {lines:#?}"
        );
        let mv = best_move(lines.last().unwrap());
        let mut game =
            dodgem::game::Game::new(dodgem::notation::parse_position("B3/B3/B3/1WWW b").unwrap());
        game.play_text("a2b2", rules).unwrap();
        assert_eq!(
            reference.dtm(game.position()),
            Dtm::Draw,
            "{rules:?}: a2b2 draws"
        );
        game.play_text(mv, rules).unwrap();
        assert_eq!(
            reference.dtm(game.position()),
            Dtm::Draw,
            "{rules:?}: White's {mv} gives the draw away: {lines:#?}"
        );
        engine.quit();
    }
}

/// On 3 x 3 the engine as Black wins every game at `go wtime 50` (and
/// with 50 ms on its own clock too), from its first move, `a3b3`, the only
/// winning one: against itself as White and against White moves picked at
/// random, a fresh engine each game, started as a referee starts one.
#[test]
fn black_wins_every_3x3_game_from_the_first_move_at_50_ms() {
    let _cpu = shared();
    let mut rng = Rng(0x3B3_0050);
    for rules in Rules::ALL {
        for round in 0..4 {
            let mut black = start_as_a_referee_does(rules);
            let mut white = (round == 0).then(|| start_as_a_referee_does(rules));
            let mut game = dodgem::game::Game::new(Position::start(3));
            let go = if round % 2 == 0 {
                "go wtime 50"
            } else {
                "go wtime 50 btime 50"
            };
            while game.outcome(rules).is_none() {
                let command = game.position_command();
                let mv = match (game.position().side_to_move(), &mut white) {
                    (Color::Black, _) => {
                        black.send(&command);
                        best_move(black.go(go, LONG).last().unwrap()).to_string()
                    }
                    (Color::White, Some(white)) => {
                        white.send(&command);
                        best_move(white.go("go wtime 50 btime 50", LONG).last().unwrap())
                            .to_string()
                    }
                    (Color::White, None) => rng.pick(&game.legal_moves(rules)).clone(),
                };
                if game.moves().is_empty() {
                    assert_eq!(mv, "a3b3", "{rules:?} round {round}");
                }
                game.play_text(&mv, rules).unwrap();
            }
            assert_eq!(
                game.outcome(rules).and_then(Outcome::winner),
                Some(Color::Black),
                "{rules:?} round {round}: {}",
                game.position_command()
            );
            black.quit();
            if let Some(mut white) = white {
                white.quit();
            }
        }
    }
}

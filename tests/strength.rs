//! `dodgem strength` on 4 x 4 tables: the walk over the reachable
//! positions against a walk with the move generator, the uniform sample,
//! reproducible reports, perfect play judged perfect, faulty engines and
//! bad command lines.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{mock, run, scratch, shared};
use dodgem::board::{Color, Position, Rules};
use dodgem::solver::{Dtz, Kind, Plan, Tables, solve_layers};
use dodgem::strength::sample::{self, Smallest};
use dodgem::strength::{Class, ReachCounts};

/// No benchmark run here may take longer than this (they take seconds).
const TIMEOUT: Duration = Duration::from_secs(120);

/// Solves `size` x `size` under `rules` (at most `max_cars` cars a side)
/// into `dir`, with the distances to the end.
fn solve(dir: &Path, size: usize, rules: Rules, max_cars: u32) {
    let plan = Plan {
        kind: Kind {
            size,
            rules,
            max_cars,
        },
        dir: dir.to_path_buf(),
        threads: 2,
        stop_after_layers: None,
        two_bytes: false,
        with_dte: true,
    };
    assert!(!solve_layers(&plan, &mut |_| {}).unwrap().stopped);
}

/// A fresh scratch directory named after `name`, the whole 4 x 4 board's
/// tables of `rules` (with their distances) solved into its `tables`
/// folder, and that folder as `--tables` takes it.
fn solved_4x4(name: &str, rules: Rules) -> (PathBuf, String) {
    let dir = scratch(name);
    let tables = dir.join("tables");
    solve(&tables, 4, rules, 3);
    let arg = tables.to_string_lossy().into_owned();
    (dir, arg)
}

/// Every position reachable from the start with both sides on the board,
/// found with the move generator, and its stored value.
fn reachable_by_moves(tables: &Tables, size: usize) -> Vec<(Position, Dtz)> {
    let start = Position::start(size);
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    let mut found = Vec::new();
    while let Some(position) = queue.pop_front() {
        if position.cars(Color::Black) == 0 || position.cars(Color::White) == 0 {
            continue;
        }
        found.push((position, tables.probe(&position).unwrap().expect("covered")));
        for &mv in position.legal_moves().as_slice() {
            let next = position.play(mv);
            if seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    found
}

#[test]
fn the_walk_over_the_tables_finds_every_reachable_position_and_samples_uniformly() {
    let _cpu = shared();
    for rules in Rules::ALL {
        let (dir, tables) = solved_4x4(&format!("strength-walk-{}", rules.name()), rules);
        let tables = Tables::open(Path::new(&tables)).unwrap();
        let all = reachable_by_moves(&tables, 4);
        let mut expected = ReachCounts::default();
        for (position, value) in &all {
            match value {
                Dtz::Win(_) => expected.wins += 1,
                Dtz::Draw => expected.draws += 1,
                Dtz::Loss(_) => expected.losses += 1,
            }
            expected.blocked += u64::from(position.count_moves() == 0);
        }
        // 393,900 reachable positions, less the finished games.
        assert!(expected.positions() > 390_000, "{expected:?}");
        assert!(expected.blocked > 0);
        for seed in [1, 2] {
            let (walked, counts) =
                sample::reachable(&tables, [40; 3], seed, 2, &mut |_, _| {}).unwrap();
            assert_eq!(counts, expected, "{}", rules.name());
            // The sample is the one that all reachable positions, offered in
            // any order, give: the smallest keys.
            let offered = Smallest::new([40; 3], seed);
            for (position, value) in all.iter().rev() {
                offered.offer(position, *value);
            }
            for class in Class::ALL {
                let sample = walked.take(class);
                assert_eq!(sample.len(), 40);
                assert_eq!(sample, offered.take(class), "{} {seed}", rules.name());
                for (position, value) in sample {
                    assert_eq!(Class::of(value), class);
                    assert!(position.count_moves() > 0);
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The table rows of a report: (set, class, positions, kept).
fn rows(report: &str) -> Vec<(String, String, u64, u64)> {
    report
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.len() < 4 || !["reachable", "games"].contains(&words[0]) {
                return None;
            }
            Some((
                words[0].to_string(),
                words[1].to_string(),
                words[2].parse().ok()?,
                words[3].parse().ok()?,
            ))
        })
        .collect()
}

#[test]
fn the_benchmark_is_reproducible_and_writes_its_details() {
    let _cpu = shared();
    let (dir, tables) = solved_4x4("strength-cli", Rules::Textbook);
    let details = dir.join("details.tsv").to_string_lossy().into_owned();
    let args = [
        "strength",
        "--tables",
        &tables,
        "--nodes",
        "300",
        "--positions",
        "6",
        "--games",
        "8",
        "--game-nodes",
        "200",
        "--seed",
        "5",
        "--concurrency",
        "2",
        "--details",
        &details,
    ];
    let first = run(&args, TIMEOUT);
    assert!(first.status.success(), "{}{}", first.stdout, first.stderr);
    let table = rows(&first.stdout);
    let sets: Vec<(&str, &str)> = table
        .iter()
        .map(|(set, class, _, _)| (set.as_str(), class.as_str()))
        .collect();
    assert_eq!(
        sets,
        [
            ("reachable", "won"),
            ("reachable", "drawn"),
            ("games", "won"),
            ("games", "drawn")
        ],
        "{}",
        first.stdout
    );
    for (_, _, positions, kept) in &table {
        assert_eq!(*positions, 6);
        assert!(kept <= positions);
    }
    assert!(first.stdout.contains("`go nodes 300`"), "{}", first.stdout);
    // 4 x 4 textbook: 205,919 won and 48,546 drawn reachable positions.
    assert!(
        first.stdout.contains("won 205,919, drawn 48,546"),
        "{}",
        first.stdout
    );
    let written = std::fs::read_to_string(&details).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 1 + 24);
    let kept_in_details = lines[1..]
        .iter()
        .filter(|line| line.split('\t').nth(6).unwrap().starts_with("kept"))
        .count() as u64;
    assert_eq!(
        kept_in_details,
        table.iter().map(|row| row.3).sum::<u64>(),
        "{written}"
    );
    for line in &lines[1..] {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 11, "{line}");
        let position = dodgem::notation::parse_position(fields[2]).unwrap();
        assert!(position.is_legal(dodgem::notation::parse_move(fields[4], &position).unwrap()));
        // A kept move is among the moves that keep the result.
        let kept = fields[6].starts_with("kept");
        let keeping = fields[10]
            .split(' ')
            .any(|m| m.split(':').next() == Some(fields[4]));
        assert_eq!(kept, keeping, "{line}");
    }
    let second = run(&args, TIMEOUT);
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(written, std::fs::read_to_string(&details).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_engine_playing_from_its_tables_keeps_every_result() {
    let _cpu = shared();
    let (dir, tables) = solved_4x4("strength-perfect", Rules::Classic);
    // The engine's own 4 x 4 tables, left on, play perfectly: lost
    // positions too, held out as long as the tables' distance to the end.
    let output = run(
        &[
            "strength",
            "--tables",
            &tables,
            "--nodes",
            "100",
            "--positions",
            "20",
            "--lost",
            "20",
            "--games",
            "20",
            "--game-nodes",
            "200",
            "--option",
            "Tablebase=true",
        ],
        TIMEOUT,
    );
    assert!(output.status.success(), "{}", output.stderr);
    let table = rows(&output.stdout);
    assert_eq!(table.len(), 6, "{}", output.stdout);
    for (set, class, positions, kept) in table {
        assert_eq!(positions, 20);
        assert_eq!(kept, 20, "{set} {class}\n{}", output.stdout);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lost_positions_are_played_out_against_perfect_play() {
    let _cpu = shared();
    let (dir, tables) = solved_4x4("strength-lost", Rules::Textbook);
    let details = dir.join("d.tsv");
    // Search alone, one node a move: it holds out less than the tables
    // allow, never more.
    let output = run(
        &[
            "strength",
            "--tables",
            &tables,
            "--nodes",
            "1",
            "--positions",
            "1",
            "--lost",
            "30",
            "--sets",
            "reachable",
            "--details",
            &details.to_string_lossy(),
        ],
        TIMEOUT,
    );
    assert!(output.status.success(), "{}", output.stderr);
    let table = rows(&output.stdout);
    let lost = table
        .iter()
        .find(|row| row.1 == "lost")
        .unwrap_or_else(|| panic!("no lost row:\n{}", output.stdout));
    assert_eq!(lost.2, 30);
    assert!(
        lost.3 < 30,
        "one node a move held out every loss:\n{}",
        output.stdout
    );
    let text = std::fs::read_to_string(&details).unwrap();
    let mut played = 0;
    for line in text.lines().filter(|l| l.contains("\tlost\t")) {
        // "held S of L plies: MOVES", S moves from the start to the end.
        let fields: Vec<&str> = line.split('\t').collect();
        let verdict = fields[6];
        let (counts, moves) = verdict.split_once(": ").unwrap();
        let numbers: Vec<u32> = counts.split(' ').filter_map(|w| w.parse().ok()).collect();
        let (survived, longest) = (numbers[0], numbers[1]);
        assert!(survived <= longest, "{line}");
        assert_eq!(fields[3], format!("loss dte {longest}"), "{line}");
        assert_eq!(moves.split(' ').count() as u32, survived, "{line}");
        let mut position = dodgem::notation::parse_position(fields[2]).unwrap();
        for mv in moves.split(' ') {
            position = position.play(dodgem::notation::parse_move(mv, &position).unwrap());
        }
        assert!(position.outcome(Rules::Textbook).is_some(), "{line}");
        played += 1;
    }
    assert_eq!(played, 30);

    // Refused before any search, with a message that says why.
    let refused = |extra: &[&str], message: &str| {
        let mut args = vec!["strength", "--tables", &tables, "--nodes", "1"];
        args.extend_from_slice(extra);
        let output = run(&args, TIMEOUT);
        assert!(!output.status.success());
        assert!(output.stderr.contains(message), "{}", output.stderr);
    };
    refused(&["--positions", "0"], "nothing to measure");

    // Without the distances to the end (the value pass alone, `solve
    // --no-distances`), --lost is refused.
    let bare = dir.join("bare");
    let plan = Plan {
        kind: Kind {
            size: 4,
            rules: Rules::Textbook,
            max_cars: 3,
        },
        dir: bare.clone(),
        threads: 2,
        stop_after_layers: None,
        two_bytes: false,
        with_dte: false,
    };
    assert!(!solve_layers(&plan, &mut |_| {}).unwrap().stopped);
    let output = run(
        &[
            "strength",
            "--tables",
            &bare.to_string_lossy(),
            "--nodes",
            "1",
            "--lost",
            "1",
        ],
        TIMEOUT,
    );
    assert!(!output.status.success());
    assert!(
        output.stderr.contains("dodgem solve --dte"),
        "{}",
        output.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn faulty_engines_and_bad_command_lines() {
    let _cpu = shared();
    let dir = scratch("strength-faults");
    solve(&dir.join("whole"), 4, Rules::Textbook, 3);
    solve(&dir.join("endgame"), 4, Rules::Textbook, 2);
    let whole = dir.join("whole").to_string_lossy().into_owned();
    let endgame = dir.join("endgame").to_string_lossy().into_owned();
    let base = ["strength", "--positions", "4", "--sets", "reachable"];
    let with = |extra: &[&str]| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        run(&args, TIMEOUT)
    };

    // A mock engine that exits at its second `go`: those positions count as
    // not kept, the engine is started again for the rest.
    let exits = mock("exit");
    let output = with(&["--tables", &whole, "--nodes", "10", "--engine", &exits]);
    assert!(output.status.success(), "{}", output.stderr);
    assert!(
        output
            .stdout
            .contains("without a legal move from the engine"),
        "{}",
        output.stdout
    );
    let table = rows(&output.stdout);
    assert_eq!(table.len(), 2);
    assert!(table.iter().all(|row| row.2 == 4));

    for (extra, message) in [
        (
            vec!["--tables", &whole],
            "no limit for the searches: give --nodes, --depth or --movetime",
        ),
        (
            vec!["--tables", &endgame, "--nodes", "10"],
            "holds endgame tables (at most 2 cars a side)",
        ),
        (
            vec!["--tables", "/nonexistent/tables", "--nodes", "10"],
            "/nonexistent/tables",
        ),
        (
            vec![
                "--tables",
                &whole,
                "--nodes",
                "10",
                "--option",
                "Colour=red",
            ],
            "--option Colour=red",
        ),
        (
            vec!["--tables", &whole, "--nodes", "0"],
            "must be at least 1",
        ),
    ] {
        let output = with(&extra);
        assert!(!output.status.success(), "{extra:?}");
        assert!(
            output.stderr.contains(message),
            "{extra:?}: {}",
            output.stderr
        );
        assert!(output.stdout.is_empty(), "{extra:?}: {}", output.stdout);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_details_file_is_checked_first_and_a_failed_write_keeps_the_report() {
    let _cpu = shared();
    let (dir, tables) = solved_4x4("strength-details", Rules::Textbook);
    // An engine that leaves a mark when it is started.
    let started = dir.join("started");
    let script = format!(
        "touch {}; exec {}",
        shlex::try_quote(started.to_str().unwrap()).unwrap(),
        mock("legal")
    );
    let engine = format!("sh -c {}", shlex::try_quote(&script).unwrap());
    let base = [
        "strength",
        "--tables",
        &tables,
        "--nodes",
        "10",
        "--positions",
        "4",
        "--sets",
        "reachable",
        "--engine",
        &engine,
    ];
    let with = |extra: &[&str]| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        run(&args, TIMEOUT)
    };
    // A details file that cannot be created: refused before the engine
    // is even started.
    let refused = with(&["--details", "/nonexistent/x.tsv"]);
    assert!(!refused.status.success());
    assert!(
        refused.stderr.contains("cannot write /nonexistent/x.tsv"),
        "{}",
        refused.stderr
    );
    assert!(refused.stdout.is_empty(), "{}", refused.stdout);
    assert!(!started.exists(), "the benchmark began");
    // One that takes the open but not the write (a full disk): the
    // report is printed all the same, and the error names the file.
    let full = with(&["--details", "/dev/full"]);
    assert!(!full.status.success());
    assert!(
        full.stderr.contains("cannot write /dev/full"),
        "{}",
        full.stderr
    );
    assert_eq!(rows(&full.stdout).len(), 2, "{}", full.stdout);
    assert!(started.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

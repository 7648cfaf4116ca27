//! End-to-end tests of the `dodgem` binary over its protocol: search results,
//! evaluation, stop/isready latency, time management, pondering, hostile
//! input, shutdown, determinism, bench and the cleanliness of stdout.
//!
//! Tests whose assertions are latency bounds of a few milliseconds take the
//! [`common::timing`] lock, so that no other engine of this test binary
//! competes for the CPU while they measure; every other test takes
//! [`common::shared`] and they run in parallel. Latency statistics are
//! printed to stderr (`cargo test --test tests engine:: -- --nocapture` shows them).

use std::thread;
use std::time::{Duration, Instant};

use crate::common::{
    Engine, LOAD_SLACK, LONG, REPLY_BOUND, assert_prompt, best_move, info_score, is_bestmove,
    is_search_info, mask_timing, ms, run_cli, shared, timing,
};

/// Sets the board size and goes to its start position.
fn board(engine: &mut Engine, size: usize) {
    let out = engine.send_all(&[
        &format!("setoption name BoardSize value {size}"),
        "position startpos",
    ]);
    assert!(out.is_empty(), "unexpected output: {out:?}");
}

/// The `Fen: ` line that `d` prints.
fn displayed_fen(engine: &mut Engine) -> String {
    let out = engine.send_all(&["d"]);
    out.iter()
        .find_map(|line| line.strip_prefix("Fen: "))
        .unwrap_or_else(|| panic!("no `Fen: ` line in {out:?}"))
        .to_string()
}

fn max(durations: &[Duration]) -> Duration {
    durations.iter().copied().max().unwrap_or_default()
}

fn median(durations: &[Duration]) -> Duration {
    let mut sorted = durations.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

// 1. -----------------------------------------------------------------------

/// Checks one `go movetime 1000` on the 3 x 3 start, searched without
/// tables: a winning mate score (Black wins in 19 plies, i.e. on its 10th
/// move) and the only winning first move, `a3b3`.
fn assert_solves_3x3(engine: &mut Engine, rules: &str) {
    let lines = engine.go("go movetime 1000", LONG);
    let scores: Vec<(String, i64)> = lines
        .iter()
        .filter(|line| is_search_info(line))
        .filter_map(|line| info_score(line))
        .collect();
    assert!(
        scores.iter().any(|(kind, n)| kind == "mate" && *n > 0),
        "{rules}: no `score mate <positive>` line in {lines:#?}"
    );
    assert_eq!(
        scores.last(),
        Some(&("mate".to_string(), 10)),
        "{rules}: the last score should be a win on Black's 10th move (19 plies): {lines:#?}"
    );
    let best = lines.last().expect("bestmove");
    assert_eq!(best_move(best), "a3b3", "{rules}: {lines:#?}");
}

#[test]
fn solves_the_3x3_start_under_both_rules() {
    let _cpu = shared();
    for rules in ["textbook", "classic"] {
        let mut engine = Engine::start();
        let out = engine.send_all(&[
            "setoption name Tablebase value false",
            &format!("setoption name Rules value {rules}"),
            "position startpos",
        ]);
        assert!(out.is_empty(), "{rules}: unexpected output {out:?}");
        assert_solves_3x3(&mut engine, rules);
    }
    // One engine switching rules back and forth (its tables must not carry
    // scores from one rule set to the other).
    let mut engine = Engine::start();
    engine.send_all(&["setoption name Tablebase value false"]);
    for rules in ["classic", "textbook", "classic"] {
        let out = engine.send_all(&[
            &format!("setoption name Rules value {rules}"),
            "position startpos",
        ]);
        assert!(out.is_empty(), "{rules}: unexpected output {out:?}");
        assert_solves_3x3(&mut engine, rules);
    }
}

// 2. -----------------------------------------------------------------------

#[test]
fn textbook_evaluation_matches_the_course_examples() {
    let _cpu = shared();
    let mut engine = Engine::start();
    let out = engine.send_all(&["setoption name Evaluation value textbook"]);
    assert!(out.is_empty(), "unexpected output {out:?}");
    for (position, expected) in [
        ("fen B2/3/BWW b", 75),
        ("fen 1B1/1W1/B1W w", -5),
        ("startpos", 0),
        // Side to move does not matter.
        ("fen B2/3/BWW w", 75),
        ("fen 1B1/1W1/B1W b", -5),
    ] {
        let out = engine.send_all(&[&format!("position {position}"), "eval"]);
        let wanted = format!("Final evaluation: {expected} (white side)");
        assert_eq!(
            out.last().map(String::as_str),
            Some(wanted.as_str()),
            "position {position}: {out:#?}"
        );
    }
}

// 3. -----------------------------------------------------------------------

#[test]
fn stop_ends_an_infinite_search_within_20ms_100_times() {
    let _cpu = timing();
    let mut engine = Engine::start();
    board(&mut engine, 6);
    let legal = engine.legal_moves();
    let mut latencies = Vec::new();
    let mut problems = Vec::new();
    for round in 0..100u64 {
        engine.send("go infinite");
        thread::sleep(Duration::from_millis(round * 7 % 21));
        let early = engine
            .pending()
            .into_iter()
            .find(|(line, _)| is_bestmove(line));
        if let Some((line, _)) = early {
            problems.push(format!("round {round}: `{line}` before stop"));
            // That search is over; do not wait for a second bestmove.
            engine.send("stop");
            continue;
        }
        let before_stop = Instant::now();
        let sent = engine.send("stop");
        let (line, at) = engine.expect_line(is_bestmove, LONG);
        if at < before_stop {
            problems.push(format!("round {round}: `{line}` before stop"));
        }
        if !legal.contains(&best_move(&line).to_string()) {
            problems.push(format!("round {round}: `{line}` is not a legal move"));
        }
        latencies.push(at.saturating_duration_since(sent));
    }
    let rest = engine.sync();
    let extra: Vec<&String> = rest.iter().filter(|line| is_bestmove(line)).collect();
    assert!(
        extra.is_empty(),
        "bestmove lines after the last stop: {extra:?}"
    );
    eprintln!(
        "stop latency over {} rounds: max {:.2} ms, median {:.2} ms",
        latencies.len(),
        ms(max(&latencies)),
        ms(median(&latencies))
    );
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(latencies.len(), 100);
    assert_prompt(&latencies, REPLY_BOUND, "bestmove after stop");
}

#[test]
fn a_go_sent_right_after_stop_starts_a_new_search_whatever_was_running() {
    // A GUI need not wait for the `bestmove` (or the bench's report)
    // that `stop` brings before its next `position` and `go`: they wait
    // for the stopped task to end, then run. Before, the `go` was refused
    // as "a search is running" and its `bestmove` never came.
    let _cpu = shared();
    let mut engine = Engine::start();
    engine.send_all(&["uci", "setoption name Threads value 2"]);
    for running in [
        "go infinite",
        "go ponder movetime 100000",
        "bench 30",
        "go perft 9",
    ] {
        engine.send("position startpos");
        engine.send(running);
        engine.send("stop");
        engine.send("position startpos moves a2a1");
        engine.send("go movetime 50");
        let (lines, _) = engine.read_until(|l| l.starts_with("bestmove"), LONG);
        let errors: Vec<_> = lines.iter().filter(|l| l.contains("error")).collect();
        assert!(errors.is_empty(), "{running}: {errors:?}");
        if running.starts_with("go") && !running.contains("perft") {
            // The stopped search's own `bestmove` first, then the new one's.
            let (more, _) = engine.read_until(|l| l.starts_with("bestmove"), LONG);
            assert!(
                more.iter().all(|l| !l.contains("error")),
                "{running}: {more:?}"
            );
        }
        // Nothing else owed, and the engine idle: a new `go` runs.
        assert!(
            engine.sync().iter().all(|l| !l.starts_with("bestmove")),
            "{running}"
        );
        engine.send("go depth 1");
        let (lines, _) = engine.read_until(|l| l.starts_with("bestmove"), LONG);
        assert!(
            lines.iter().all(|l| !l.contains("error")),
            "{running}: {lines:?}"
        );
    }
}

// 4. -----------------------------------------------------------------------

#[test]
fn isready_is_answered_within_20ms_during_a_search() {
    let _cpu = timing();
    let mut engine = Engine::start();
    board(&mut engine, 6);
    engine.send("go infinite");
    thread::sleep(Duration::from_millis(50));
    let mut latencies = Vec::new();
    let mut infos = 0;
    for round in 0..20u64 {
        let sent = engine.send("isready");
        let (lines, at) = engine.read_until(|line| line == "readyok", LONG);
        assert!(
            !lines.iter().any(|line| is_bestmove(line)),
            "round {round}: bestmove during `go infinite`: {lines:#?}"
        );
        infos += lines.iter().filter(|line| is_search_info(line)).count();
        latencies.push(at.saturating_duration_since(sent));
        thread::sleep(Duration::from_millis(round * 3 % 11));
    }
    // Still searching: nothing but info lines until stop.
    for (line, _) in engine.lines_for(Duration::from_millis(200)) {
        assert!(!is_bestmove(&line), "bestmove before stop: {line}");
        infos += usize::from(is_search_info(&line));
    }
    let sent = engine.send("stop");
    let (_, at) = engine.expect_line(is_bestmove, LONG);
    eprintln!(
        "isready latency during search: max {:.2} ms, median {:.2} ms ({infos} info lines meanwhile; stop {:.2} ms)",
        ms(max(&latencies)),
        ms(median(&latencies)),
        ms(at.saturating_duration_since(sent))
    );
    assert!(infos > 0, "the search reported nothing while it ran");
    assert_prompt(&latencies, REPLY_BOUND, "readyok after isready");
}

// 5. -----------------------------------------------------------------------

#[test]
fn movetime_is_used_but_not_exceeded() {
    let _cpu = timing();
    let mut engine = Engine::start();
    engine.send("debug on");
    let mut times = Vec::new();
    for (round, size) in [5, 6, 5, 6, 5].into_iter().enumerate() {
        board(&mut engine, size);
        let timed = engine.timed_go("go movetime 300");
        times.push((size, timed.wall, timed.own));
        assert!(
            timed.lines.iter().any(|line| is_search_info(line)),
            "round {round}: no info line: {:#?}",
            timed.lines
        );
    }
    eprintln!(
        "go movetime 300: {}",
        times
            .iter()
            .map(|(size, wall, own)| format!(
                "{size}x{size} {:.1} ms ({} ms by the engine)",
                ms(*wall),
                own.as_millis()
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // By its own clock the engine answers within the movetime (less
    // `Move Overhead`, 10 ms, plus a millisecond or two); the harness
    // sees that plus the pipes and whatever a busy machine adds.
    // (The median: a busy machine can keep the engine off the CPU at its
    // deadline in any one round, which its own clock counts too.)
    let mut own: Vec<Duration> = times.iter().map(|&(_, _, own)| own).collect();
    own.sort();
    assert!(
        own[own.len() / 2] <= Duration::from_millis(300),
        "bestmove after a median {:?} by the engine's clock (limit 300 ms): {times:?}",
        own[own.len() / 2]
    );
    for (round, (size, elapsed, _)) in times.iter().enumerate() {
        assert!(
            *elapsed <= Duration::from_millis(330) + LOAD_SLACK,
            "round {round} ({size}x{size}): bestmove after {:.1} ms (limit 330 ms + {LOAD_SLACK:?})",
            ms(*elapsed)
        );
        assert!(
            *elapsed >= Duration::from_millis(250),
            "round {round} ({size}x{size}): bestmove after only {:.1} ms (should use ~300 ms)",
            ms(*elapsed)
        );
    }
}

// 6. -----------------------------------------------------------------------

#[test]
fn clock_limits_are_respected() {
    let _cpu = timing();
    let mut engine = Engine::start();
    engine.send("debug on");
    board(&mut engine, 6);
    let tiny = engine.timed_go("go wtime 100 btime 100");
    // Black to move, White's clock left out: Black's own clock still limits.
    let black_only = engine.timed_go("go btime 5000");
    // Black to move, only White's clock given: Black's counts as zero.
    let white_only = engine.timed_go("go wtime 5000");
    // The same with White to move.
    let out = engine.send_all(&["position startpos moves a2b2"]);
    assert!(out.is_empty(), "unexpected output {out:?}");
    let white_tiny = engine.timed_go("go wtime 100 btime 100");
    let white_own = engine.timed_go("go wtime 5000");
    let white_zero = engine.timed_go("go btime 5000");
    let all = [
        ("go wtime 100 btime 100", &tiny, 60),
        ("go btime 5000 (Black to move)", &black_only, 1000),
        ("go wtime 5000 (Black to move, so no time)", &white_only, 60),
        ("go wtime 100 btime 100 (White)", &white_tiny, 60),
        ("go wtime 5000 (White to move)", &white_own, 1000),
        ("go btime 5000 (White to move, so no time)", &white_zero, 60),
    ];
    for (what, timed, _) in &all {
        eprintln!(
            "clock: {what}: {:.1} ms ({} ms by the engine)",
            ms(timed.wall),
            timed.own.as_millis()
        );
    }
    // The engine's own time is what its clock handling decides; the
    // harness's adds the pipes and a busy machine's delays.
    for (what, timed, limit) in all {
        let limit = Duration::from_millis(limit);
        assert!(
            timed.own < limit,
            "{what}: {:?} by the engine's clock",
            timed.own
        );
        assert!(
            timed.wall < limit + LOAD_SLACK,
            "{what}: {:.1} ms ({:?} by the engine's clock)",
            ms(timed.wall),
            timed.own
        );
    }
}

// 7. -----------------------------------------------------------------------

/// Asserts that no bestmove arrives for `duration`; returns the number of
/// search info lines that did.
fn assert_no_bestmove_for(engine: &mut Engine, duration: Duration, what: &str) -> usize {
    let lines = engine.lines_for(duration);
    let best: Vec<&String> = lines
        .iter()
        .map(|(line, _)| line)
        .filter(|line| is_bestmove(line))
        .collect();
    assert!(
        best.is_empty(),
        "{what}: bestmove before ponderhit/stop: {best:?}{}",
        engine.context()
    );
    lines
        .iter()
        .filter(|(line, _)| is_search_info(line))
        .count()
}

#[test]
fn ponder_and_infinite_hold_the_bestmove() {
    let _cpu = shared();
    let hold = Duration::from_millis(500);
    let mut engine = Engine::start();
    let out = engine.send_all(&["setoption name Ponder value true", "position startpos"]);
    assert!(out.is_empty(), "unexpected output {out:?}");

    // 3 x 3: the search is solved in a few milliseconds.
    for release in ["ponderhit", "stop"] {
        engine.send("go ponder wtime 2000 btime 2000");
        let infos = assert_no_bestmove_for(&mut engine, hold, "3x3 go ponder");
        assert!(infos > 0, "3x3 go ponder: the search reported nothing");
        engine.send(release);
        let (line, _) = engine.expect_line(is_bestmove, Duration::from_secs(2));
        assert_eq!(best_move(&line), "a3b3", "after {release}");
    }
    engine.send("go infinite");
    let infos = assert_no_bestmove_for(&mut engine, hold, "3x3 go infinite");
    assert!(infos > 0, "3x3 go infinite: the search reported nothing");
    // `ponderhit` does not release an infinite search.
    engine.send("ponderhit");
    assert_no_bestmove_for(
        &mut engine,
        Duration::from_millis(100),
        "infinite + ponderhit",
    );
    engine.send("stop");
    let (line, _) = engine.expect_line(is_bestmove, Duration::from_secs(2));
    assert_eq!(best_move(&line), "a3b3");

    // 6 x 6: pondering is not limited by the clock (which alone would
    // end the search in well under 300 ms), ponderhit starts it.
    board(&mut engine, 6);
    engine.send("go ponder wtime 2000 btime 2000");
    assert_no_bestmove_for(&mut engine, hold, "6x6 go ponder");
    let sent = engine.send("ponderhit");
    let (_, at) = engine.expect_line(is_bestmove, Duration::from_secs(5));
    let after = at.saturating_duration_since(sent);
    eprintln!("6x6 bestmove {:.1} ms after ponderhit", ms(after));
    assert!(
        after < Duration::from_millis(1500),
        "bestmove {:.1} ms after ponderhit with 2 s on the clock",
        ms(after)
    );
    let rest = engine.sync();
    assert!(
        !rest.iter().any(|line| is_bestmove(line)),
        "a second bestmove: {rest:?}"
    );
}

/// `info ... time` counts from `go`, also after `ponderhit` (the nodes
/// do, so `nps` would be wrong otherwise).
#[test]
fn info_time_after_ponderhit_counts_from_go() {
    let _cpu = shared();
    let hold = Duration::from_millis(1000);
    let mut engine = Engine::start();
    // 6 x 6: no table, and iterations that go on after the ponderhit.
    board(&mut engine, 6);
    let out = engine.send_all(&["setoption name Ponder value true"]);
    assert!(out.is_empty(), "unexpected output {out:?}");
    // The engine may read `go` before `send` returns: its clock starts
    // between these two instants.
    let go_writing = Instant::now();
    let go_sent = engine.send("go ponder wtime 60000 btime 60000");
    assert_no_bestmove_for(&mut engine, hold, "6x6 go ponder");
    engine.send("ponderhit");
    let (line, at) = engine.expect_line(is_search_info, LONG);
    engine.send("stop");
    engine.expect_line(is_bestmove, LONG);
    let number = |key: &str| -> u64 {
        crate::common::info_value(&line, key)
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {line:?}"))
    };
    let time = Duration::from_millis(number("time"));
    let since_go = at.saturating_duration_since(go_sent);
    let since_writing = at.saturating_duration_since(go_writing);
    // Counted from ponderhit it would be short of `since_go` by the whole
    // ponder time (a second); allow a little for pipes and a busy machine.
    assert!(
        time + Duration::from_millis(300) >= since_go && time <= since_writing,
        "time {} ms in {line:?}, {:.0} ms after go",
        time.as_millis(),
        ms(since_go)
    );
    let (nodes, nps) = (number("nodes"), number("nps"));
    let expected = nodes * 1000 / time.as_millis().max(1) as u64;
    assert!(
        nps.abs_diff(expected) <= expected / 50 + 1,
        "nps {nps} does not match {nodes} nodes in {} ms",
        time.as_millis()
    );
}

/// Input after an `isready` is answered after its `readyok`, so after the
/// table work that `readyok` waited for: a `solve` sent with the
/// `setoption TablebasePath` that loads its table sees that table.
#[test]
fn input_after_isready_waits_for_the_table_being_loaded() {
    let _cpu = shared();
    let dir = crate::common::table_dir("held-input", 4, dodgem::Rules::Textbook);
    let file = &dir;
    let mut engine = Engine::start();
    // All at once, as a GUI sends them.
    for line in [
        &format!("setoption name TablebasePath value {}", file.display()),
        "isready",
        "setoption name BoardSize value 4",
        "position startpos",
        "d",
        "solve",
    ] {
        engine.send(line);
    }
    let (lines, _) = engine.read_until(|line| line.starts_with("solve "), LONG);
    assert!(
        lines[0].starts_with("info string loaded 4x4 textbook layered tables"),
        "{lines:#?}"
    );
    assert_eq!(lines[1], "readyok", "{lines:#?}");
    assert!(
        lines.iter().any(|line| line == "Fen: B3/B3/B3/1WWW b"),
        "{lines:#?}"
    );
    assert_eq!(lines.last().unwrap(), "solve draw");
    // `quit` (or the end of input) answers the held input first.
    engine.send(&format!(
        "setoption name TablebasePath value {}",
        file.display()
    ));
    engine.send("isready");
    engine.send("solve");
    engine.send("quit");
    let rest = engine.read_to_eof(LONG);
    assert_eq!(rest.len(), 3, "{rest:#?}");
    assert!(rest[0].starts_with("info string loaded"), "{rest:#?}");
    assert_eq!(rest[1..], ["readyok", "solve draw"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A table load sent during a search runs beside it (on the loader
/// thread); the input after it waits for the load, `stop` does not.
#[test]
fn stop_is_not_held_behind_a_pending_table_load() {
    let _cpu = shared();
    let dir = crate::common::table_dir("held-stop", 3, dodgem::Rules::Classic);
    let file = &dir;
    let mut engine = Engine::start();
    board(&mut engine, 6);
    engine.send("go infinite");
    engine.expect_line(is_search_info, LONG);
    engine.send(&format!(
        "setoption name TablebasePath value {}",
        file.display()
    ));
    engine.send("d");
    let sent = engine.send("stop");
    let (mut lines, at) = engine.read_until(is_bestmove, LONG);
    let stopped = at.saturating_duration_since(sent);
    // Generous: the requirement is 20 ms, the machine may be busy.
    assert!(
        stopped < Duration::from_millis(500),
        "bestmove {:.1} ms after stop",
        ms(stopped)
    );
    let best = lines.len() - 1;
    // The load may be done, and `d` answered, before the `stop` is read.
    if !lines.iter().any(|line| line.starts_with("Status:")) {
        lines.extend(
            engine
                .read_until(|line| line.starts_with("Status:"), LONG)
                .0,
        );
    }
    let position = |prefix: &str| {
        lines
            .iter()
            .position(|line| line.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in {lines:#?}"))
    };
    let loaded = position("info string loaded 3x3 classic layered tables");
    let fen = position("Fen: ");
    assert!(loaded < fen, "{lines:#?}");
    assert_eq!(
        lines.iter().filter(|line| is_bestmove(line)).count(),
        1,
        "{lines:#?} (bestmove at {best})"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// 8. -----------------------------------------------------------------------

/// Input that is not a valid command, or is one that must change nothing.
fn garbage() -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = [
        "hello",
        "xyzzy 1 2 3",
        "UCI",
        "uci uci",
        "isready now",
        "go fast",
        "go depth",
        "go depth 99999999999999999999",
        "go depth -3",
        "go nodes -1",
        "go movetime 18446744073709551616",
        "go wtime 99999999999999999999999",
        "go perft",
        "go perft 99999999999",
        "go perft 3 4",
        "go searchmoves",
        "go depth 1 searchmoves a1a1",
        "go depth 1 searchmoves zzzz",
        "go mate",
        "setoption",
        "setoption name",
        "setoption Hash 3",
        "setoption name Hash",
        "setoption name Hash value",
        "setoption name Hash value 99999999",
        "setoption name Hash value 0",
        "setoption name Hash value -1",
        "setoption name Hash value 18446744073709551617",
        "setoption name BoardSize value 9",
        "setoption name BoardSize value 2",
        "setoption name BoardSize value three",
        "setoption name Rules value chess",
        "setoption name Evaluation value",
        "setoption name Move Overhead value -5",
        "setoption name Ponder value maybe",
        "setoption name MultiPV value 0",
        "setoption name Threads value 0",
        "setoption name Clear Hash value 1",
        "setoption value 3",
        "position",
        "position fen",
        "position startfoo",
        "position startpos extra",
        "position startpos moves zzzz",
        "position startpos moves a3b3 a3b3",
        "position startpos moves a3b3 b1b2 a1a1",
        "position startpos moves 0000",
        "position fen B2/B2/1WW",
        "position fen B2/B2/1WW x",
        "position fen B2/B2/1WW b extra",
        "position fen B2/B2/1W b",
        "position fen BBB/B2/1WW b",
        "position fen 3/3/3 b",
        "position fen B1/1W b",
        "position fen B8/9/9/9/9/9/9/9/1WWWWWWWW b",
        "position fen 99999999999999999999999/3/3 b",
        "position fen B2/B2/1WW b moves a3b3 zzzz",
        "position fen B2/B2/1WX b",
        "position fen ///////// b",
        "debug",
        "debug maybe",
        "bench 1 2",
        "bench -1",
        "bench 99999999999",
        "perft 3",
        "d now",
        "eval please",
        "ponderhit",
        "quitquit",
        "quit now",
        "stop now",
        "go\tdepth\t-1",
    ]
    .iter()
    .map(|line| line.as_bytes().to_vec())
    .collect();
    // Control characters, escapes and invalid UTF-8, as raw bytes.
    lines.extend([
        b"\0".to_vec(),
        b"\0\0\0isready".to_vec(),
        b"isready\0".to_vec(),
        b"go\0depth 3".to_vec(),
        b"\xff\xfe\xfd".to_vec(),
        b"go \xc3\x28 depth 3".to_vec(),
        b"isready\xff".to_vec(),
        b"position fen B2/B2/1W\xe2\x82 b".to_vec(),
        b"setoption name \xff value \xfe".to_vec(),
        b"\x1b[2J\x1b[H".to_vec(),
        b"\x7f\x08\x08".to_vec(),
        b"\xef\xbb\xbfisready".to_vec(), // a byte order mark
        "\u{202e}isready".as_bytes().to_vec(),
        "posítion stârtpos".as_bytes().to_vec(),
    ]);
    // Huge lines.
    lines.push(vec![b'x'; 1 << 20]);
    let mut cycle = b"position startpos moves".to_vec();
    while cycle.len() < 100 * 1024 {
        cycle.extend_from_slice(b" a2a1 a1a2");
    }
    lines.push(cycle);
    let mut slashes = b"position fen ".to_vec();
    slashes.extend(std::iter::repeat_n(b'/', 1000));
    slashes.extend_from_slice(b" b");
    lines.push(slashes);
    let mut long_option = b"setoption name ".to_vec();
    long_option.extend(std::iter::repeat_n(b'A', 60_000));
    long_option.extend_from_slice(b" value 1");
    lines.push(long_option);
    let mut many_moves = b"go depth 1 searchmoves".to_vec();
    while many_moves.len() < 60_000 {
        many_moves.extend_from_slice(b" a1a1");
    }
    lines.push(many_moves);
    lines.push(format!("go depth {}", "9".repeat(50_000)).into_bytes());
    lines
}

/// Lines with no content: must produce no output at all.
const BLANK: [&[u8]; 7] = [b"", b"\r", b"\r\r", b"\t", b" \t \t ", b"\t\r", b"\x0b\x0c"];

#[test]
fn survives_hostile_input() {
    let _cpu = shared();
    let mut engine = Engine::start();
    let fen = "1B2/B2W/3W/BW2 w";
    let out = engine.send_all(&[&format!("position fen {fen}")]);
    assert!(out.is_empty(), "unexpected output {out:?}");
    assert_eq!(displayed_fen(&mut engine), fen);
    let legal_before = engine.legal_moves();

    let mut problems = Vec::new();
    for line in garbage() {
        let mut bytes = line.clone();
        bytes.push(b'\n');
        engine.send_bytes(&bytes);
        let out = engine.sync();
        let shown = crate::common::shorten(&String::from_utf8_lossy(&line));
        if out.is_empty() {
            problems.push(format!("{shown:?}: no error message"));
        }
        for reply in &out {
            if !reply.starts_with("info string error: ") {
                problems.push(format!("{shown:?}: unexpected reply {reply:?}"));
            }
        }
    }
    for line in BLANK {
        let mut bytes = line.to_vec();
        bytes.push(b'\n');
        engine.send_bytes(&bytes);
        let out = engine.sync();
        if !out.is_empty() {
            problems.push(format!("blank line {line:?}: replies {out:?}"));
        }
    }
    // Harmless commands at odd times: they may say something, but only
    // `info string`.
    for line in [
        "stop",
        "ponderhit",
        "ucinewgame",
        "setoption name Clear Hash",
    ] {
        for reply in engine.send_all(&[line]) {
            if !reply.starts_with("info string ") {
                problems.push(format!("{line:?}: unexpected reply {reply:?}"));
            }
        }
    }
    // Line endings and separators a GUI may use.
    for line in [&b"isready\r\n"[..], b"\tisready \t\n", b"   isready\r\r\n"] {
        engine.send_bytes(line);
        engine.wait_for("readyok", LONG);
    }
    // A burst of garbage and isready in one write: every isready answered,
    // in order, and nothing but errors besides.
    let mut burst = Vec::new();
    let pieces = garbage();
    let small: Vec<&Vec<u8>> = pieces.iter().filter(|line| line.len() < 1000).collect();
    for round in 0..2000 {
        burst.extend_from_slice(small[round % small.len()]);
        burst.extend_from_slice(b"\nisready\n");
    }
    engine.send_bytes(&burst);
    let mut readyoks = 0;
    while readyoks < 2000 {
        let (line, _) = engine.expect_line(|_| true, LONG);
        if line == "readyok" {
            readyoks += 1;
        } else if !line.starts_with("info string error: ") {
            problems.push(format!("burst: unexpected reply {line:?}"));
        }
    }
    assert!(engine.sync().is_empty());
    // The longest line accepted is accepted whole.
    let limit = dodgem::engine::MAX_LINE;
    let mut padded = b"isready".to_vec();
    padded.resize(limit, b' ');
    padded.push(b'\n');
    engine.send_bytes(&padded);
    engine.wait_for("readyok", LONG);
    assert!(engine.sync().is_empty());
    assert!(problems.is_empty(), "{problems:#?}");

    // Valid commands with hostile values: each search still ends.
    for go in [
        "go depth 0",
        "go nodes 0",
        "go nodes 1",
        "go mate 0",
        "go movetime 0",
        "go wtime -9223372036854775808 btime -9223372036854775808",
        "go wtime 0 btime 0 winc 0 binc 0 movestogo 0",
        "go depth 4294967295 movetime 50",
        "go nodes 18446744073709551615 movetime 50",
    ] {
        let lines = engine.go(go, LONG);
        let best = best_move(lines.last().expect("bestmove")).to_string();
        assert!(legal_before.contains(&best), "{go}: illegal {best}");
        assert!(
            lines.iter().any(|line| is_search_info(line)),
            "{go}: no info line (the first iteration always completes): {lines:?}"
        );
    }
    for go in [
        "go movetime 18446744073709551615",
        "go wtime 9223372036854775807 btime 9223372036854775807",
    ] {
        // (The search may end by itself once it proves a result.)
        engine.send(go);
        thread::sleep(Duration::from_millis(100));
        engine.send("stop");
        let (line, _) = engine.expect_line(is_bestmove, LONG);
        assert!(
            legal_before.contains(&best_move(&line).to_string()),
            "{go}: {line}"
        );
        let rest = engine.sync();
        assert!(
            !rest.iter().any(|l| is_bestmove(l)),
            "{go}: two bestmoves: {rest:?}"
        );
    }

    // Nothing changed the position, and the engine still talks.
    assert_eq!(displayed_fen(&mut engine), fen);
    engine.send("uci");
    engine.wait_for("uciok", LONG);
    let lines = engine.go("go depth 3", LONG);
    let best = best_move(lines.last().expect("bestmove")).to_string();
    assert!(
        legal_before.contains(&best),
        "bestmove {best} not among {legal_before:?}"
    );

    // End of input: a clean exit.
    engine.close_stdin();
    let status = engine.wait_exit(Duration::from_secs(5));
    assert_eq!(status.code(), Some(0), "exit status {status}");
}

// 9. -----------------------------------------------------------------------

#[test]
fn quit_during_a_search_exits_cleanly_with_one_bestmove() {
    let _cpu = shared();
    let mut engine = Engine::start();
    board(&mut engine, 6);
    engine.send("go infinite");
    assert_no_bestmove_for(&mut engine, Duration::from_millis(100), "go infinite");
    let sent = engine.send("quit");
    let status = engine.wait_exit(Duration::from_secs(2));
    let exited = sent.elapsed();
    let rest = engine.read_to_eof(Duration::from_secs(2));
    eprintln!("quit during search: exited within {:.1} ms", ms(exited));
    assert_eq!(status.code(), Some(0), "exit status {status}");
    let best: Vec<&String> = rest.iter().filter(|line| is_bestmove(line)).collect();
    assert_eq!(best.len(), 1, "bestmove lines after quit: {rest:#?}");
}

#[test]
fn end_of_input_during_a_search_exits_cleanly_with_one_bestmove() {
    let _cpu = shared();
    let mut engine = Engine::start();
    board(&mut engine, 6);
    engine.send("go infinite");
    assert_no_bestmove_for(&mut engine, Duration::from_millis(100), "go infinite");
    engine.close_stdin();
    let status = engine.wait_exit(Duration::from_secs(2));
    let rest = engine.read_to_eof(Duration::from_secs(2));
    assert_eq!(status.code(), Some(0), "exit status {status}");
    let best: Vec<&String> = rest.iter().filter(|line| is_bestmove(line)).collect();
    assert_eq!(
        best.len(),
        1,
        "bestmove lines after end of input: {rest:#?}"
    );
}

// 10. ----------------------------------------------------------------------

/// The searches whose output must not depend on anything but the input.
const DETERMINISM: [(usize, &str, &str); 5] = [
    (3, "textbook", "position startpos"),
    (4, "classic", "position startpos moves a3b3 b1b2"),
    (5, "textbook", "position startpos"),
    (6, "classic", "position startpos"),
    (6, "textbook", "position fen 6/B2W2/1B4/2B1W1/B2W2/1W3B w"),
];

/// `go depth 6` after `ucinewgame` for each case, time and nps masked.
fn depth_6_outputs(engine: &mut Engine) -> Vec<Vec<String>> {
    DETERMINISM
        .iter()
        .map(|(size, rules, position)| {
            let out = engine.send_all(&[
                &format!("setoption name BoardSize value {size}"),
                &format!("setoption name Rules value {rules}"),
                position,
            ]);
            assert!(out.is_empty(), "unexpected output {out:?}");
            engine.send("ucinewgame");
            engine
                .go("go depth 6", LONG)
                .iter()
                .map(|line| mask_timing(line))
                .collect()
        })
        .collect()
}

#[test]
fn fixed_depth_search_is_deterministic() {
    let _cpu = shared();
    let mut first = Engine::start();
    let mut second = Engine::start();
    let a = depth_6_outputs(&mut first);
    let b = depth_6_outputs(&mut first);
    let c = depth_6_outputs(&mut second);
    for (index, case) in DETERMINISM.iter().enumerate() {
        assert!(
            a[index].iter().any(|line| is_search_info(line)),
            "{case:?}: no info line: {:#?}",
            a[index]
        );
        assert_eq!(a[index], b[index], "{case:?}: twice in one process");
        assert_eq!(a[index], c[index], "{case:?}: two processes");
    }
}

// 11. ----------------------------------------------------------------------

/// The node count of the bench summary line `<nodes> nodes <nps> nps`,
/// which must be the last line.
fn bench_nodes(lines: &[String]) -> u64 {
    let last = lines.last().expect("bench output");
    let words: Vec<&str> = last.split_whitespace().collect();
    match words[..] {
        [nodes, "nodes", nps, "nps"] if nps.parse::<u64>().is_ok() => nodes
            .parse()
            .unwrap_or_else(|_| panic!("bad node count in {last:?}")),
        _ => panic!("last bench line is not `<nodes> nodes <nps> nps`: {lines:#?}"),
    }
}

fn is_bench_summary(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    matches!(words[..], [_, "nodes", _, "nps"])
}

#[test]
fn bench_node_counts_agree_between_protocol_and_shell() {
    let _cpu = shared();
    for depth in [6, 10] {
        let shell: Vec<u64> = (0..2)
            .map(|_| {
                let (status, text) = run_cli(&["bench", &depth.to_string()], LONG);
                assert!(status.success(), "dodgem bench {depth}: {status}");
                let lines: Vec<String> = text.lines().map(str::to_string).collect();
                bench_nodes(&lines)
            })
            .collect();
        assert_eq!(shell[0], shell[1], "two shell runs of bench {depth}");

        // From the protocol, after other work that must not influence it.
        let mut engine = Engine::start();
        let out = engine.send_all(&[
            "setoption name Hash value 1",
            "setoption name Rules value classic",
            "setoption name BoardSize value 5",
            "position startpos",
        ]);
        assert!(out.is_empty(), "unexpected output {out:?}");
        engine.go("go depth 5", LONG);
        engine.send(&format!("bench {depth}"));
        let (lines, _) = engine.read_until(is_bench_summary, LONG);
        let protocol = bench_nodes(&lines);
        assert_eq!(protocol, shell[0], "bench {depth}: protocol vs shell");
        // And once more in the same process.
        engine.send(&format!("bench {depth}"));
        let (lines, _) = engine.read_until(is_bench_summary, LONG);
        assert_eq!(bench_nodes(&lines), shell[0], "bench {depth}: second run");
    }
}

/// The bench signature: the node count of `dodgem bench` at its default
/// depth. It changes only when the search or the evaluation does, so a
/// change to it must be deliberate: update this number, and with it the
/// figure in README.md and docs/performance.md (as Stockfish's CI checks
/// its bench).
const BENCH_SIGNATURE: u64 = 12_340_497;

#[test]
fn the_bench_signature_is_the_documented_one() {
    let _cpu = shared();
    let (status, text) = run_cli(&["bench"], Duration::from_secs(300));
    assert!(status.success(), "dodgem bench: {status}\n{text}");
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert!(
        lines[0].contains(&format!("depth {}", dodgem::bench::DEFAULT_DEPTH)),
        "{text}"
    );
    assert_eq!(
        bench_nodes(&lines),
        BENCH_SIGNATURE,
        "the bench signature changed: if that is meant, update BENCH_SIGNATURE, \
         README.md and docs/performance.md\n{text}"
    );
}

// 12. ----------------------------------------------------------------------

/// Whether a stdout line looks like part of the protocol.
fn is_protocol_line(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or("");
    matches!(
        first,
        "id" | "option"
            | "uciok"
            | "readyok"
            | "info"
            | "bestmove"
            | "copyprotection"
            | "registration"
    )
}

#[test]
fn stdout_carries_only_protocol_lines_even_with_logging() {
    let _cpu = shared();
    let mut engine = Engine::start_with(|command| {
        command
            .env("RUST_LOG", "debug")
            .stderr(std::process::Stdio::piped());
    });
    let mut out = engine.send_all(&[
        "uci",
        "debug on",
        "setoption name BoardSize value 4",
        "setoption name Nonsense value 1",
        "ucinewgame",
        "position startpos moves a2b2",
        "bogus command",
    ]);
    out.extend(engine.go("go depth 4", LONG));
    out.extend(engine.go("go movetime 50", LONG));
    engine.send("go infinite");
    thread::sleep(Duration::from_millis(50));
    engine.send("stop");
    out.extend(engine.read_until(is_bestmove, LONG).0);
    out.extend(engine.send_all(&["go ponder wtime 100 btime 100", "ponderhit"]));
    engine.send("quit");
    out.extend(engine.read_to_eof(LONG));
    let status = engine.wait_exit(LONG);
    assert_eq!(status.code(), Some(0), "exit status {status}");
    let strays: Vec<&String> = out.iter().filter(|line| !is_protocol_line(line)).collect();
    assert!(
        strays.is_empty(),
        "non-protocol lines on stdout: {strays:#?}"
    );
    assert_eq!(out.iter().filter(|line| is_bestmove(line)).count(), 4);
    let stderr = engine.stderr();
    assert!(!stderr.is_empty(), "RUST_LOG=debug wrote nothing to stderr");
}

/// Started by a person in a terminal, the engine says on stderr what it
/// is and what to type (it used to print nothing at all); over pipes, as
/// every GUI and referee runs it, stderr stays empty. The terminal is a
/// pseudo-terminal from util-linux's `script`.
#[test]
fn a_person_at_a_terminal_gets_a_hint_and_a_pipe_gets_none() {
    let _cpu = shared();
    let command = format!("{} uci", shlex::try_quote(crate::common::BIN).unwrap());
    let mut script = std::process::Command::new("script");
    script.args(["-q", "-e", "-c", &command, "/dev/null"]);
    script.env_remove("RUST_LOG");
    let mut child = script
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux's `script` runs the engine on a pseudo-terminal");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"quit\n").unwrap();
    }
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains(dodgem::engine::TERMINAL_HINT), "{text:?}");

    let mut engine = Engine::start_with(|command| {
        command
            .env_remove("RUST_LOG")
            .stderr(std::process::Stdio::piped());
    });
    engine.send("quit");
    engine.read_to_eof(LONG);
    let stderr = engine.stderr();
    assert!(
        stderr.is_empty(),
        "stderr over pipes: {:?}",
        String::from_utf8_lossy(&stderr)
    );
}

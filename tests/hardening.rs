//! The defects found by attacking the engine (issue 10), one test each:
//! what crashed, hung or leaked before must now be refused or bounded,
//! with the engine still answering and its position kept.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use dodgem::Position;
use dodgem::board::Rules;
use dodgem::search::{Limits, Request, Settings, Signals, Tables, search};
use dodgem::tablebase;

use crate::common::{
    BIN, Engine, LOAD_SLACK, LONG, REPLY_BOUND, assert_prompt, best_move, info_value, is_bestmove,
    is_search_info, ms, run, scratch, shared, timing,
};

/// A deadline for a two-game referee match (seconds of play at most).
const MATCH: Duration = Duration::from_secs(60);

/// The `info string error:` lines among `lines`.
fn errors(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|l| l.starts_with("info string error:"))
        .collect()
}

/// Asserts the engine still answers and still holds `fen`.
fn assert_alive_at(engine: &mut Engine, fen: &str) {
    assert!(engine.sync().is_empty() || engine.is_running());
    let now = engine.fen();
    assert_eq!(now, fen, "{}", engine.context());
}

/// The deepest depth among `info depth` lines.
fn deepest(lines: &[String]) -> u64 {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("info depth "))
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .max()
        .unwrap_or(0)
}

#[test]
fn perft_depth_beyond_the_bound_is_refused_not_a_crash() {
    let _cpu = shared();
    let mut engine = Engine::start();
    engine.send("position startpos moves a3b3");
    let fen = engine.fen();
    for depth in ["20000", "65", "4294967295"] {
        engine.send(&format!("go perft {depth}"));
        let lines = engine.sync();
        let errors = errors(&lines);
        assert!(
            errors.len() == 1 && errors[0].contains("out of range (at most 64)"),
            "go perft {depth}: {lines:?}"
        );
        assert_alive_at(&mut engine, &fen);
    }
    // The bound itself is accepted (and stopped at once).
    engine.send("go perft 64");
    engine.send("stop");
    engine.read_until(
        |l| l.starts_with("info string") || l.starts_with("Nodes"),
        LONG,
    );
    assert_alive_at(&mut engine, &fen);
    engine.quit();
}

/// Runs `dodgem args` to its end (with a deadline) and gives exit code and
/// stderr.
fn run_cli(args: &[&str]) -> (Option<i32>, String) {
    let output = run(args, LONG);
    (output.status.code(), output.stderr)
}

#[test]
fn shell_perft_and_bench_refuse_depths_beyond_their_bounds() {
    let _cpu = shared();
    for args in [
        &["perft", "--size", "3", "100000"][..],
        &["perft", "65"],
        &["bench", "4294967295"],
        &["bench", "97"],
    ] {
        let (code, stderr) = run_cli(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("not in"), "{args:?}: {stderr}");
    }
    let (code, stderr) = run_cli(&["perft", "--size", "3", "4"]);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn huge_search_limits_are_clamped_not_wrapped() {
    let _cpu = shared();
    let mut engine = Engine::start();
    // The search itself, not the solved table (which answers at once).
    engine.send("setoption name Tablebase value false");
    for go in [
        "go depth 2147483648 movetime 300",
        "go depth 4294967295 movetime 300",
        "go mate 1073741824 movetime 300",
        "go mate 4294967295 movetime 300",
    ] {
        let lines = engine.go(go, LONG);
        assert!(deepest(&lines) > 1, "{go} searched one ply: {lines:?}");
        // Said, not silent.
        let warning = if go.contains("depth") {
            "is beyond the depth limit: searching at most 96 plies"
        } else {
            "plies: searching at most 96"
        };
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info string warning: go ") && l.contains(warning)),
            "{go}: no warning: {lines:?}"
        );
        assert!(engine.is_running());
    }
    engine.send("bench 4294967295");
    let lines = engine.sync();
    assert!(
        errors(&lines)
            .iter()
            .any(|l| l.contains("bench: depth 4294967295 is out of range (at most 96)")),
        "{lines:?}"
    );
    engine.quit();
}

#[test]
fn a_table_whose_values_lie_is_caught_by_the_verifier_and_go_still_answers() {
    let _cpu = shared();
    // Every layer rewritten to say "won in 1" (checksums made to match):
    // every move then looks lost, and best play would go round in circles.
    let dir = crate::common::table_dir("lying", 3, Rules::Textbook);
    let kind = dodgem::solver::Kind {
        size: 3,
        rules: Rules::Textbook,
        max_cars: 2,
    };
    let shape = dodgem::solver::Shape::new(3, 2).unwrap();
    for (a, b) in shape.pairs() {
        for (black, white) in [(a, b), (b, a)] {
            let layer = shape.layer(black, white);
            let (_, tally) = dodgem::solver::read_layer(&dir, kind, &layer).unwrap();
            let lies = dodgem::solver::Values::Narrow(vec![3; layer.slots as usize]);
            dodgem::solver::write_layer(&dir, kind, &layer, &lies, tally).unwrap();
        }
    }
    let verified = crate::common::run(&["solve", "--verify", dir.to_str().unwrap()], LONG);
    assert!(
        !verified.status.success() && verified.stderr.contains("disagree with their successors"),
        "{verified:?}"
    );

    let mut engine = Engine::start();
    let lines = load(&mut engine, &dir);
    assert!(
        lines.iter().any(|l| l.starts_with("info string loaded")),
        "{lines:?}"
    );
    engine.send("position fen 3/B2/2W b");
    let lines = engine.go("go depth 1", LONG);
    assert!(lines.last().unwrap().starts_with("bestmove"));
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The `solve` answer for the start position of `size` under `rules`,
/// from the built-in table.
fn solve_line(size: usize, rules: Rules) -> String {
    use dodgem::solver::Dtz;
    let builtin = tablebase::builtin(size, rules).unwrap();
    let start = dodgem::Position::start(size);
    match (
        builtin.probe(&start).unwrap(),
        builtin.probe_end(&start).unwrap(),
    ) {
        (Dtz::Win(d), Dtz::Win(e)) => format!("solve win {e} dtz {d}"),
        (Dtz::Loss(d), Dtz::Loss(e)) => format!("solve loss {e} dtz {d}"),
        (value, end) => {
            assert_eq!((value, end), (Dtz::Draw, Dtz::Draw));
            "solve draw".to_string()
        }
    }
}

/// Sends `TablebasePath` = `path` and returns the lines up to `readyok`.
fn load(engine: &mut Engine, path: &Path) -> Vec<String> {
    engine.send(&format!(
        "setoption name TablebasePath value {}",
        path.display()
    ));
    engine.sync()
}

#[test]
fn a_fifo_or_stdin_as_table_path_is_refused_without_blocking() {
    let _cpu = shared();
    let dir = scratch("fifo");
    let fifo = dir.join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut engine = Engine::start();
    engine.send("position startpos moves a3b3");
    let fen = engine.fen();
    for path in [
        fifo.as_path(),
        Path::new("/dev/stdin"),
        Path::new("/dev/zero"),
    ] {
        let started = Instant::now();
        let lines = load(&mut engine, path);
        assert!(
            errors(&lines)
                .iter()
                .any(|l| l.contains("is not a directory")),
            "{}: {lines:?}",
            path.display()
        );
        assert!(started.elapsed() < LONG / 2);
        // The engine's own input is intact: the next commands are read.
        assert_alive_at(&mut engine, &fen);
    }
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_table_path_keeps_runs_of_spaces() {
    let _cpu = shared();
    let dir = scratch("spaces");
    let path = dir.join("two  spaces   three");
    std::fs::rename(
        crate::common::table_dir("spaces-tables", 3, Rules::Classic),
        &path,
    )
    .unwrap();
    let mut engine = Engine::start();
    let lines = load(&mut engine, &path);
    assert!(
        lines.iter().any(
            |l| l.starts_with("info string loaded 3x3 classic layered tables")
                && l.ends_with(&format!("from {}", path.display()))
        ),
        "{lines:?}"
    );
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn control_bytes_in_echoed_input_are_escaped() {
    let _cpu = shared();
    let dir = scratch("escape");
    let hostile = dir.join("bell\u{7}esc\u{1b}[31m");
    std::fs::rename(
        crate::common::table_dir("escape-tables", 3, Rules::Textbook),
        &hostile,
    )
    .unwrap();
    let mut engine = Engine::start();
    let mut out = load(&mut engine, &hostile);
    assert!(
        out.iter()
            .any(|l| l.starts_with("info string loaded") && l.contains("bell\\u{7}esc\\u{1b}[31m")),
        "{out:?}"
    );
    out.extend(load(
        &mut engine,
        &dir.join("missing\u{0}\u{1b}]0;title\u{7}"),
    ));
    engine.send_bytes(b"unknown\x1b[2Jcommand\n");
    engine.send_bytes(b"setoption name No\x07Such value x\n");
    engine.send_bytes(b"position fen B2/\x1b/1WW b\n");
    out.extend(engine.sync());
    engine.assert_utf8("the hostile lines");
    assert!(errors(&out).len() >= 4, "{out:?}");
    for line in &out {
        assert!(
            !line.chars().any(char::is_control),
            "raw control byte in {line:?}"
        );
    }
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_referee_escapes_an_engines_name_on_stdout_and_in_pgn() {
    let _cpu = shared();
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("referee-name");
    let script = dir.join("evil.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\n\"{BIN}\" | sed -u 's/^id name .*/id name evil\\x1b[31mred\\x07/'\n"),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let pgn = dir.join("games.pgn");
    let output = run(
        &[
            "match",
            "--engine1",
            &script.to_string_lossy(),
            "--engine2",
            BIN,
            "--games",
            "2",
            "--tc",
            "1+0.01",
            "--pgn",
            &pgn.to_string_lossy(),
        ],
        MATCH,
    );
    let stdout = output.stdout;
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("evil\\u{1b}[31mred\\u{7}"), "{stdout}");
    let record = std::fs::read_to_string(&pgn).unwrap();
    for text in [&*stdout, &record] {
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "control byte in {text:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Whether process `pid` is alive (a zombie has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[cfg(target_os = "linux")]
#[test]
fn a_match_leaves_no_engine_helper_behind() {
    let _cpu = shared();
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("helpers");
    let pids = dir.join("pids");
    let script = dir.join("forking.sh");
    // A helper that holds the engine's stdout and would outlive it.
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nsleep 300 &\necho $! >> \"{}\"\nexec \"{BIN}\"\n",
            pids.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = run(
        &[
            "match",
            "--engine1",
            &script.to_string_lossy(),
            "--engine2",
            BIN,
            "--games",
            "2",
            "--tc",
            "1+0.01",
        ],
        MATCH,
    );
    assert!(output.status.success(), "{}", output.stderr);
    let helpers: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|pid| pid.parse().unwrap())
        .collect();
    assert!(!helpers.is_empty());
    let deadline = Instant::now() + LONG;
    while helpers.iter().any(|&pid| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<&u32> = helpers.iter().filter(|&&pid| alive(pid)).collect();
    // (Clean up before failing.)
    for pid in &left {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    assert!(left.is_empty(), "helpers outlived the match: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An engine whose search thread commits `fault` (a hook of the test
/// build, read from `DODGEM_DEBUG_FAULT`; see `src/search/thread.rs`).
fn faulty(fault: &str) -> Engine {
    Engine::start_with(|command| {
        command.env("DODGEM_DEBUG_FAULT", fault);
    })
}

/// The CPU time (user + system) process `pid` has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process runs");
    // After the name: the state is field 3 of stat(5), so utime (14) and
    // stime (15) are the 12th and 13th here.
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Asserts that the engine, with nothing to do, uses (almost) no CPU: no
/// busy loop on a dead channel.
#[cfg(target_os = "linux")]
fn assert_idle(engine: &Engine) {
    let before = cpu_ticks(engine.pid());
    std::thread::sleep(Duration::from_secs(1));
    let used = cpu_ticks(engine.pid()) - before;
    // A tick is 10 ms: a spinning thread takes about 100 a second.
    assert!(used < 30, "{used} ticks of CPU in one idle second");
}

/// Asserts that `lines` (a `go`'s) hold one error naming `what` and end in
/// their one `bestmove`, and returns its move.
fn failed_go<'a>(lines: &'a [String], what: &str) -> &'a str {
    assert!(
        errors(lines).iter().any(|l| l.contains(what)),
        "no error {what:?}: {lines:?}"
    );
    assert_eq!(
        lines.iter().filter(|l| is_bestmove(l)).count(),
        1,
        "{lines:?}"
    );
    best_move(lines.last().unwrap())
}

#[cfg(target_os = "linux")]
#[test]
fn a_search_thread_panic_is_reported_and_answered_with_the_best_move_known() {
    let _cpu = shared();
    let mut engine = faulty("panic-after-info");
    engine.send("setoption name Tablebase value false");
    engine.send("position startpos moves a3b3");
    let fen = engine.fen();
    let legal = engine.legal_moves();
    for round in 0..3 {
        let lines = engine.go("go depth 6", LONG);
        let best = failed_go(&lines, "the search thread failed");
        // The best move known: the first move of the line reported.
        let info = lines
            .iter()
            .rfind(|l| is_search_info(l))
            .unwrap_or_else(|| panic!("round {round}: no info line: {lines:?}"));
        assert_eq!(
            Some(best),
            info_value(info, "pv"),
            "round {round}: {lines:?}"
        );
        assert!(legal.iter().any(|m| m == best), "{best} is not legal");
    }
    // A held result stays held until stop, as for any `go infinite`.
    engine.send("go infinite");
    engine.expect_line(|l| l.contains("the search thread failed"), LONG);
    let early = engine.lines_for(Duration::from_millis(200));
    assert!(
        !early.iter().any(|(l, _)| is_bestmove(l)),
        "bestmove before stop: {early:?}"
    );
    engine.send("stop");
    engine.expect_line(is_bestmove, LONG);
    assert!(engine.sync().is_empty());
    assert_alive_at(&mut engine, &fen);
    assert_idle(&engine);
    engine.quit();
}

#[cfg(target_os = "linux")]
#[test]
fn a_search_that_panics_before_any_report_still_gets_a_legal_bestmove() {
    let _cpu = shared();
    let mut engine = faulty("panic");
    engine.send("position startpos moves a3b3");
    let fen = engine.fen();
    let legal = engine.legal_moves();
    for _ in 0..3 {
        let lines = engine.go("go depth 4", LONG);
        let best = failed_go(&lines, "the search thread failed");
        assert!(legal.iter().any(|m| m == best), "{best} is not legal");
    }
    // With searchmoves, a move among them.
    let last = legal.last().unwrap().clone();
    let lines = engine.go(&format!("go depth 4 searchmoves {last}"), LONG);
    assert_eq!(failed_go(&lines, "the search thread failed"), last);
    // The thread goes on: perft, table jobs and readyok work.
    engine.send("go perft 2");
    engine.wait_for("Nodes searched", LONG);
    engine.send("setoption name Clear Hash");
    assert!(engine.sync().is_empty());
    assert_alive_at(&mut engine, &fen);
    assert_idle(&engine);
    engine.quit();
}

#[cfg(target_os = "linux")]
#[test]
fn a_lost_search_thread_is_replaced_and_the_protocol_does_not_spin() {
    let _cpu = shared();
    let mut engine = faulty("die");
    engine.send("position startpos moves a3b3");
    let fen = engine.fen();
    let legal = engine.legal_moves();
    for _ in 0..3 {
        let lines = engine.go("go depth 4", LONG);
        let best = failed_go(&lines, "the search thread ended unexpectedly");
        assert!(legal.iter().any(|m| m == best), "{best} is not legal");
        // Not refused as "search running": the next go is taken.
        assert!(
            !lines.iter().any(|l| l.contains("search is running")),
            "{lines:?}"
        );
    }
    engine.send("setoption name Clear Hash");
    assert!(engine.sync().is_empty());
    assert_alive_at(&mut engine, &fen);
    assert_idle(&engine);
    engine.quit();
}

#[test]
fn quit_does_not_wait_for_a_search_deaf_to_stop() {
    let _cpu = shared();
    let mut engine = faulty("hang");
    engine.send("setoption name Tablebase value false");
    engine.send("go infinite");
    engine.expect_line(is_search_info, LONG);
    let started = Instant::now();
    engine.send("quit");
    engine.close_stdin();
    let status = engine.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "exit {status}");
    let rest = engine.read_to_eof(LONG);
    assert_eq!(
        rest.iter().filter(|l| is_bestmove(l)).count(),
        1,
        "{rest:?}"
    );
    assert!(
        errors(&rest).iter().any(|l| l.contains("did not stop")),
        "{rest:?}"
    );
    eprintln!("quit with a hung search: {:.0} ms", ms(started.elapsed()));
}

#[test]
fn isready_is_answered_while_a_search_runs_and_a_table_loads() {
    let _cpu = shared();
    let dir = crate::common::table_dir("load-during-search", 3, Rules::Classic);
    let file = &dir;
    let mut engine = Engine::start();
    engine.send("setoption name BoardSize value 6");
    engine.send("position startpos");
    engine.send("go infinite");
    engine.expect_line(is_search_info, LONG);
    engine.send(&format!(
        "setoption name TablebasePath value {}",
        file.display()
    ));
    engine.send("isready");
    // No stop: readyok must come while the search runs, after the load.
    let (lines, _) = engine.read_until(|l| l == "readyok", Duration::from_secs(5));
    assert!(!lines.iter().any(|l| is_bestmove(l)), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string loaded 3x3 classic layered tables")),
        "{lines:?}"
    );
    engine.send("stop");
    engine.expect_line(is_bestmove, LONG);
    // The loaded table answers.
    engine.send("setoption name BoardSize value 3");
    engine.send("setoption name Rules value classic");
    engine.send("position startpos");
    engine.send("solve");
    engine.wait_for("solve", LONG);
    assert!(engine.sync().is_empty());
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Sends `go infinite` right behind `setup` and `stop` right behind it,
/// and returns how long the `bestmove` took after the `stop`.
fn stop_latency(engine: &mut Engine, setup: &[&str]) -> Duration {
    for line in setup {
        engine.send(line);
    }
    engine.send("go infinite");
    let sent = engine.send("stop");
    let (_, at) = engine.expect_line(is_bestmove, LONG);
    let rest = engine.sync();
    assert!(!rest.iter().any(|l| is_bestmove(l)), "{rest:?}");
    at.saturating_duration_since(sent)
}

/// `stop` is read at every node, not every thousand or so: a node's time
/// has no bound (each node of the first search in a fresh 4 GB table
/// faults in pages of it; a thousand of them took 10-20 ms on a loaded
/// machine). So a search whose `stop` came before it began ends at the
/// first node it checks after its first iteration (which every search
/// completes, to have a move): the next iteration's first child, after
/// that iteration's root.
#[test]
fn a_search_stopped_before_it_begins_ends_right_after_its_first_iteration() {
    let _cpu = shared();
    for size in [4, 6, 8] {
        let request = |limits| Request {
            position: Position::start(size),
            history: Vec::new(),
            limits,
            settings: Settings::default(),
            tablebase: Default::default(),
        };
        let depth_1 = Limits {
            depth: Some(1),
            ..Limits::default()
        };
        let first = search(
            &request(depth_1),
            &mut Tables::new(1),
            &Signals::default(),
            &mut |_| {},
        );
        let infinite = Limits {
            infinite: true,
            ..Limits::default()
        };
        let signals = Signals::default();
        signals.stop.store(true, Ordering::SeqCst);
        let mut infos = Vec::new();
        let stopped = search(
            &request(infinite),
            &mut Tables::new(1),
            &signals,
            &mut |info| infos.push(info.depth),
        );
        assert_eq!(infos, [1], "{size}x{size}: the iterations reported");
        assert!(stopped.best_move.is_some(), "{size}x{size}: {stopped:?}");
        assert!(
            stopped.nodes <= first.nodes + 2,
            "{size}x{size}: {} nodes after stop, {} in the first iteration",
            stopped.nodes,
            first.nodes
        );
    }
}

#[test]
fn stop_is_prompt_while_the_built_in_4x4_table_is_built() {
    let _cpu = timing();
    // A new process has no 4 x 4 table yet: the `position` starts the
    // build and the search waits for it (no `isready` between them; the
    // one before comes while tables are off, so it builds nothing). Five
    // processes, for a median a busy machine does not move.
    let mut latencies = Vec::new();
    for _ in 0..5 {
        let mut engine = Engine::start();
        engine.send_all(&["setoption name Tablebase value false"]);
        let latency = stop_latency(
            &mut engine,
            &[
                "setoption name Tablebase value true",
                "setoption name BoardSize value 4",
                "position startpos",
            ],
        );
        latencies.push(latency);
        // Built in the background, the table is there for the next search.
        let lines = engine.go("go depth 2", LONG);
        assert!(lines.iter().any(|l| l.contains(" tbhits ")), "{lines:?}");
        engine.quit();
    }
    eprintln!("stop during the 4x4 table build: {latencies:.2?}");
    // The build keeps a core while the stop is answered: on a busy machine
    // the other core is shared with the load, so each stop is held to the
    // reply bound plus what the load adds (the 4 x 4 build alone takes
    // longer than that there, and a stop that waited for it would take
    // all of it).
    assert!(
        latencies.iter().all(|&l| l <= REPLY_BOUND + LOAD_SLACK),
        "stop during the 4x4 table build: {latencies:.2?}"
    );
}

#[test]
fn stop_is_prompt_right_behind_a_4_gb_hash() {
    let _cpu = timing();
    let mut engine = Engine::start();
    engine.send("setoption name BoardSize value 6");
    engine.sync();
    // Three resizes (4096 MB, 4095, 4096 again), for a median a busy
    // machine does not move.
    let latencies: Vec<Duration> = [4096, 4095, 4096]
        .into_iter()
        .map(|mb| stop_latency(&mut engine, &[&format!("setoption name Hash value {mb}")]))
        .collect();
    eprintln!("stop right behind Hash 4096: {latencies:.2?}");
    assert_prompt(&latencies, REPLY_BOUND, "stop right behind Hash 4096");
    engine.quit();
}

#[test]
fn stop_is_prompt_after_a_rules_change_with_a_4_gb_hash() {
    let _cpu = timing();
    let mut engine = Engine::start();
    engine.send("setoption name BoardSize value 6");
    engine.send("setoption name Hash value 4096");
    engine.sync();
    engine.go("go movetime 300", LONG);
    // Each three times (the rules back and forth), for a median a busy
    // machine does not move.
    let latencies: Vec<Duration> = ["classic", "textbook", "classic"]
        .into_iter()
        .map(|rules| {
            stop_latency(
                &mut engine,
                &[&format!("setoption name Rules value {rules}")],
            )
        })
        .collect();
    eprintln!("stop after a Rules change with 4 GB: {latencies:.2?}");
    assert_prompt(
        &latencies,
        REPLY_BOUND,
        "stop after a Rules change with 4 GB",
    );
    let latencies: Vec<Duration> = (0..3)
        .map(|_| stop_latency(&mut engine, &["ucinewgame"]))
        .collect();
    eprintln!("stop after ucinewgame with 4 GB: {latencies:.2?}");
    assert_prompt(&latencies, REPLY_BOUND, "stop after ucinewgame with 4 GB");
    engine.quit();
}

#[test]
fn stop_is_prompt_while_isready_or_solve_waits_for_a_built_in_table() {
    let _cpu = timing();
    // Each in a new process, which has no 4 x 4 table yet: `readyok`
    // waits for the build `isready` starts, `solve` for the one it has
    // made; the `stop` for the running search waits for neither. Three
    // processes each, for a median a busy machine does not move.
    for (command, answer, expected) in [
        ("isready", "readyok", "readyok".to_string()),
        ("solve", "solve ", solve_line(4, Rules::Textbook)),
    ] {
        let mut latencies = Vec::new();
        for _ in 0..3 {
            let mut engine = Engine::start();
            engine.send("setoption name BoardSize value 6");
            engine.send("go infinite");
            engine.expect_line(is_search_info, LONG);
            // (The search goes on with the 6 x 6 position it started from.)
            engine.send("setoption name BoardSize value 4");
            engine.send(command);
            let sent = engine.send("stop");
            let (mut lines, at) = engine.read_until(is_bestmove, LONG);
            let latency = at.saturating_duration_since(sent);
            eprintln!(
                "stop while {command} waits for the 4x4 table: {:.2} ms",
                ms(latency)
            );
            latencies.push(latency);
            // Not held behind the build: the `bestmove` comes before the
            // answer that waits for it.
            assert!(
                !lines.iter().any(|l| l.starts_with(answer)),
                "{command}: answered before the stop's bestmove: {lines:?}"
            );
            lines.extend(engine.read_until(|l| l.starts_with(answer), LONG).0);
            let line = lines.iter().find(|l| l.starts_with(answer)).unwrap();
            assert_eq!(line, &expected, "{lines:?}");
            assert!(engine.sync().is_empty());
            // Built: even a search too short for the build plays from it.
            engine.send("position startpos");
            let lines = engine.go("go movetime 20", LONG);
            assert!(lines.iter().any(|l| l.contains(" tbhits ")), "{lines:?}");
            engine.quit();
        }
        // On a busy machine the build itself keeps a core, so the bound
        // is the reply bound plus what the load adds (the order above is
        // what shows that `stop` does not wait for the build).
        assert!(
            latencies.iter().all(|&l| l <= REPLY_BOUND + LOAD_SLACK),
            "stop while {command} waits: {latencies:.2?}"
        );
    }
}

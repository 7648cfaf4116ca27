//! `Threads`: the parallel search. Every `go` gets exactly one `bestmove`
//! however `stop` falls, `stop` is prompt with helpers running, `go nodes`
//! counts the nodes of all threads, and one thread stays deterministic.

use std::time::Duration;

use crate::common::{
    Engine, LONG, REPLY_BOUND, assert_prompt, is_bestmove, is_search_info, mask_timing, shared,
    timing,
};

/// The bound on `stop` with two search threads: generous, because on a
/// loaded two-core machine a process that keeps both cores busy is
/// scheduled less promptly than one that keeps one (measured on such a
/// machine: 0.2 ms typically, 20 ms at worst in 60 stops).
const STOP_BOUND: Duration = REPLY_BOUND.saturating_mul(5);
use dodgem::board::Rules;
use dodgem::notation::parse_position;
use dodgem::search::{Limits, Request, Settings, Signals, TableUse, Tables, search};

/// An engine on the 7 x 7 start position with `threads` search threads.
fn engine_with_threads(threads: usize) -> Engine {
    let mut engine = Engine::start();
    engine.send_all(&[
        &format!("setoption name Threads value {threads}"),
        "setoption name BoardSize value 7",
        "position startpos",
    ]);
    engine
}

/// The lines of `go`, without the timing numbers.
fn masked(lines: &[String]) -> Vec<String> {
    lines.iter().map(|line| mask_timing(line)).collect()
}

#[test]
fn two_threads_answer_every_go_with_one_bestmove() {
    let _cpu = shared();
    let mut engine = engine_with_threads(2);
    // Stop at once, after a pause, after the search ended by itself, and
    // searches that end on their own limits; a game's positions between.
    let positions = [
        "position startpos",
        "position startpos moves a2b2 b1b2",
        "position startpos moves a2b2 b1b2 a3b3",
    ];
    for round in 0..60 {
        engine.send(positions[round % positions.len()]);
        match round % 5 {
            0 => {
                engine.send("go infinite");
                engine.send("stop");
            }
            1 => {
                engine.send("go infinite");
                std::thread::sleep(Duration::from_millis(15));
                engine.send("stop");
            }
            2 => {
                engine.send("go depth 6");
                std::thread::sleep(Duration::from_millis(5));
                engine.send("stop");
            }
            3 => {
                engine.send("go nodes 20000");
            }
            _ => {
                engine.send("go movetime 10");
            }
        }
        let (lines, _) = engine.read_until(is_bestmove, LONG);
        assert_eq!(lines.iter().filter(|l| is_bestmove(l)).count(), 1);
        let rest = engine.sync();
        assert!(
            !rest.iter().any(|l| is_bestmove(l)),
            "round {round}: {rest:?}"
        );
    }
    engine.quit();
}

#[test]
fn stop_is_prompt_with_two_threads() {
    let _cpu = timing();
    let mut engine = engine_with_threads(2);
    let mut latencies = Vec::new();
    for _ in 0..5 {
        engine.send("go infinite");
        // Well into the search: the helper is busy too.
        engine.expect_line(
            |line| is_search_info(line) && line.contains(" depth 8 "),
            LONG,
        );
        let sent = engine.send("stop");
        let (_, at) = engine.expect_line(is_bestmove, LONG);
        let latency = at.saturating_duration_since(sent);
        eprintln!("stop with 2 threads: {:.2} ms", latency.as_secs_f64() * 1e3);
        latencies.push(latency);
        let rest = engine.sync();
        assert!(!rest.iter().any(|l| is_bestmove(l)), "{rest:?}");
    }
    assert_prompt(&latencies, STOP_BOUND, "stop with 2 threads");
    engine.quit();
}

#[test]
fn one_thread_is_deterministic_whatever_ran_before() {
    let _cpu = shared();
    let mut fresh = engine_with_threads(1);
    let depth = masked(&fresh.go("go depth 9", LONG));
    fresh.send_all(&["ucinewgame", "position startpos"]);
    let nodes = masked(&fresh.go("go nodes 30000", LONG));
    fresh.quit();
    // An engine that searched with two threads first, then went back to one.
    let mut other = engine_with_threads(2);
    other.go("go depth 9", LONG);
    other.send_all(&[
        "setoption name Threads value 1",
        "ucinewgame",
        "position startpos",
    ]);
    assert_eq!(masked(&other.go("go depth 9", LONG)), depth);
    other.send_all(&["ucinewgame", "position startpos"]);
    assert_eq!(masked(&other.go("go nodes 30000", LONG)), nodes);
    other.quit();
}

/// `go nodes` with helpers limits the nodes of all threads together: the
/// search ends once they reach the limit, within a few checks' worth.
#[test]
fn a_node_limit_counts_every_thread() {
    let _cpu = shared();
    for (threads, limit) in [(1, 150_000), (2, 150_000), (3, 60_000)] {
        let request = Request {
            position: parse_position("B6/B6/B6/B6/B6/B6/1WWWWWW b").unwrap(),
            history: Vec::new(),
            limits: Limits {
                nodes: Some(limit),
                ..Limits::default()
            },
            settings: Settings {
                rules: Rules::Textbook,
                threads,
                ..Settings::default()
            },
            tablebase: TableUse::default(),
        };
        let mut tables = Tables::new(16);
        let mut reported = Vec::new();
        let outcome = search(&request, &mut tables, &Signals::default(), &mut |info| {
            reported.push(info.nodes)
        });
        assert!(outcome.best_move.is_some());
        let slack = 2 * 1024 * threads as u64;
        assert!(
            (limit..=limit + slack).contains(&outcome.nodes),
            "{threads} threads, limit {limit}: {} nodes",
            outcome.nodes
        );
        if threads == 1 {
            assert_eq!(outcome.nodes, limit);
        }
        assert!(reported.iter().all(|&nodes| nodes <= outcome.nodes));
    }
}

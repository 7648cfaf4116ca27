//! The protocol attacked with seeded random and mutated command lines.
//!
//! Each step sends one line, then `isready`, then (three times in four)
//! `stop`, and checks: `readyok` comes within a bound, an accepted `go`
//! gets exactly one `bestmove`, a refused command leaves the position as it
//! was (`d`), and stdout holds no control byte, log line or panic message.
//! A search not stopped runs on under the next lines: table loads, hash
//! resizes (up to 4 GB) and clears, `Rules` changes and more `go`s meet a
//! running search. At the end the engine still answers and `quit` ends it
//! with status 0.
//!
//! The storms send go/stop/isready/position/setoption lines, table jobs
//! included, with random timing and without waiting, also while the
//! built-in 4 x 4 tables are being built.
//!
//! `FUZZ_DEBUG=1` prints each refused `go` with its answer.

use std::time::Duration;

use crate::common::{Engine, LONG, Recv, Rng, scratch, shared};

/// The bound on `readyok` (generous: two loaded cores; the promise is a
/// few milliseconds).
const READY: Duration = Duration::from_secs(5);

const CORPUS: &[&str] = &[
    "uci",
    "isready",
    "ucinewgame",
    "position startpos",
    "position startpos moves a3b3 b1b2",
    "position fen B2/B2/1WW b",
    "position fen 3/B2/2W b",
    "position fen 1B1/BW1/2W w moves b2b3",
    "go depth 3",
    "go nodes 500",
    "go movetime 20",
    "go wtime 100 btime 100 winc 10 binc 10",
    "go wtime 50 btime 50 movestogo 3",
    "go infinite",
    "go ponder",
    "go mate 3",
    "go depth 2 searchmoves a3b3",
    "go perft 3",
    "go depth 2147483648 movetime 30",
    "go mate 1073741824 movetime 30",
    "go perft 20000",
    "stop",
    "ponderhit",
    "d",
    "eval",
    "solve",
    "bench 2",
    "bench 4294967295",
    "debug on",
    "debug off",
    "setoption name BoardSize value 4",
    "setoption name BoardSize value 3",
    "setoption name Rules value classic",
    "setoption name Rules value textbook",
    "setoption name Hash value 32",
    "setoption name Clear Hash",
    "setoption name MultiPV value 3",
    "setoption name Tablebase value false",
    "setoption name Tablebase value true",
    "setoption name Evaluation value textbook",
    "setoption name Move Overhead value 5",
    "setoption name TablebasePath value /nonexistent/tables",
    "setoption name TablebasePath value <empty>",
    "setoption name Hash value 4096",
    "setoption name Hash value 1",
    "setoption name TablebasePath value {table}",
];

/// A real table directory for the `{table}` lines of the corpora, in
/// `dir`.
fn table_file(dir: &std::path::Path) -> String {
    let name = dir.file_name().unwrap().to_string_lossy();
    let tables = crate::common::table_dir(&format!("{name}-tables"), 3, dodgem::Rules::Classic);
    let path = dir.join("3x3-classic");
    std::fs::rename(&tables, &path).unwrap();
    path.display().to_string()
}

/// `lines` with `{table}` replaced by the path of a real table file.
fn corpus(lines: &[&str], table: &str) -> Vec<String> {
    lines.iter().map(|l| l.replace("{table}", table)).collect()
}

const HOSTILE_NUMBERS: [&str; 8] = [
    "0",
    "-1",
    "4294967295",
    "4294967296",
    "2147483648",
    "18446744073709551615",
    "99999999999999999999999",
    "-9223372036854775808",
];

/// A line from the corpus, maybe mutated, maybe random bytes.
fn random_line(rng: &mut Rng, corpus: &[String]) -> Vec<u8> {
    if rng.chance(12) {
        return (0..rng.below(40)).map(|_| rng.next() as u8).collect();
    }
    let mut tokens: Vec<String> = rng.pick(corpus).split(' ').map(str::to_string).collect();
    // A third of the lines go out as written (so that many searches run).
    let mutations = if rng.chance(3) { 0 } else { 1 + rng.below(2) };
    for _ in 0..mutations {
        let at = rng.below(tokens.len());
        match rng.below(6) {
            0 => {
                tokens.remove(at);
            }
            1 => tokens.insert(at, tokens[at].clone()),
            2 => tokens[at] = rng.pick(&HOSTILE_NUMBERS).to_string(),
            3 => {
                let other = rng.below(tokens.len());
                tokens.swap(at, other);
            }
            4 => tokens.insert(at, rng.pick(corpus).to_string()),
            _ => tokens[at] = tokens[at].to_uppercase(),
        }
        if tokens.is_empty() {
            break;
        }
    }
    let mut bytes = tokens
        .join(if rng.chance(8) { "  \t" } else { " " })
        .into_bytes();
    if mutations > 0 && rng.chance(3) && !bytes.is_empty() {
        let at = rng.below(bytes.len());
        match rng.below(3) {
            0 => bytes[at] ^= 1 << rng.below(8),
            1 => bytes.insert(at, rng.below(32) as u8),
            _ => bytes.insert(at, 0x80 | rng.next() as u8),
        }
    }
    bytes
}

/// Lines this test must not send: `quit` (ends the run), a hash larger
/// than 4 GB (to spare the shared machine's memory), and lines with a
/// newline inside (two lines).
fn skipped(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let big_number = words
        .iter()
        .any(|w| w.parse::<u64>().is_ok_and(|n| n > 4096));
    words.first() == Some(&"quit")
        || (line.to_lowercase().contains("hash") && big_number)
        || line.contains('\n')
}

/// The position `d` shows, counting (and checking) the lines before it:
/// a search left running may end meanwhile.
fn fen_counting(engine: &mut Engine, bestmoves: &mut usize, context: &str) -> String {
    engine.send("d");
    let (lines, _) = engine.read_until(|l| l.starts_with("Fen: "), LONG);
    for line in &lines {
        assert_clean(line, context);
    }
    *bestmoves += lines.iter().filter(|l| l.starts_with("bestmove")).count();
    lines.last().unwrap()["Fen: ".len()..].to_string()
}

/// No log line, panic message or control byte.
fn assert_clean(line: &str, context: &str) {
    assert!(
        !line.chars().any(char::is_control),
        "control byte on stdout: {line:?} after {context}"
    );
    for bad in [
        "panicked",
        "RUST_BACKTRACE",
        " DEBUG ",
        " INFO ",
        " WARN ",
        " ERROR ",
    ] {
        assert!(
            !line.contains(bad),
            "not a protocol line: {line:?} after {context}"
        );
    }
}

fn run(seed: u64, steps: usize, corpus: &[String]) {
    let mut rng = Rng(seed);
    let mut engine = Engine::start();
    let mut bestmoves = 0usize;
    let mut fen = fen_counting(&mut engine, &mut bestmoves, "the start");
    let mut accepted_gos = 0usize;
    let mut refusals = 0usize;
    let mut left_running = 0usize;
    for step in 0..steps {
        let bytes = random_line(&mut rng, corpus);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if skipped(&text) {
            continue;
        }
        let context = format!("seed {seed:#x} step {step}: {text:?}");
        engine.send_bytes(&bytes);
        engine.send_bytes(b"\n");
        engine.send("isready");
        let started = std::time::Instant::now();
        let (lines, _) = engine.read_until(|l| l == "readyok", READY);
        assert!(started.elapsed() < READY, "{context}");
        let refused = lines.iter().any(|l| l.starts_with("info string error"));
        let words: Vec<&str> = text.split_whitespace().collect();
        let is_go = words.first() == Some(&"go") && words.get(1) != Some(&"perft");
        if is_go && refused && std::env::var("FUZZ_DEBUG").is_ok() {
            eprintln!("refused go {text:?}: {lines:?}");
        }
        if is_go && !refused {
            accepted_gos += 1;
        }
        bestmoves += lines.iter().filter(|l| l.starts_with("bestmove")).count();
        for line in &lines {
            assert_clean(line, &context);
        }
        if rng.chance(4) {
            // Left running under the next lines.
            left_running += usize::from(bestmoves < accepted_gos);
        } else {
            engine.send("stop");
            while bestmoves < accepted_gos {
                let (more, _) = engine.read_until(|l| l.starts_with("bestmove"), LONG);
                for line in &more {
                    assert_clean(line, &context);
                }
                bestmoves += 1;
            }
        }
        engine.assert_utf8(&context);
        let now = fen_counting(&mut engine, &mut bestmoves, &context);
        if refused {
            refusals += 1;
            assert_eq!(
                now, fen,
                "a refused command changed the position: {context}"
            );
        }
        fen = now;
        assert!(engine.is_running(), "{context}");
    }
    // Nothing more comes: every bestmove was counted, none was extra.
    engine.send("stop");
    while bestmoves < accepted_gos {
        engine.read_until(|l| l.starts_with("bestmove"), LONG);
        bestmoves += 1;
    }
    let rest = engine.sync();
    bestmoves += rest.iter().filter(|l| l.starts_with("bestmove")).count();
    assert_eq!(
        bestmoves,
        accepted_gos,
        "seed {seed:#x}: {}",
        engine.context()
    );
    // Not vacuous: both kinds were exercised.
    assert!(
        accepted_gos >= steps / 50,
        "seed {seed:#x}: {accepted_gos} searches"
    );
    assert!(refusals >= steps / 5, "seed {seed:#x}: {refusals} refusals");
    assert!(left_running > 0, "seed {seed:#x}: no search left running");
    eprintln!(
        "seed {seed:#x}: {accepted_gos} searches ({left_running} left running), \
         {refusals} refused lines"
    );
    engine.quit();
}

#[test]
fn random_and_mutated_lines_keep_every_promise() {
    let _cpu = shared();
    let dir = scratch("fuzz-protocol");
    let corpus = corpus(CORPUS, &table_file(&dir));
    for seed in [0xd0d6_e001, 0xd0d6_e002, 0xd0d6_e003] {
        run(seed, 1500, &corpus);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

const STORM: &[&str] = &[
    "go depth 4",
    "go depth 12",
    "go movetime 5",
    "go nodes 3000",
    "go infinite",
    "go wtime 30 btime 30",
    "stop",
    "stop",
    "isready",
    "isready",
    "position startpos",
    "position startpos moves a3b3",
    "position fen 2B1/B3/4/WWW1 w",
    "setoption name MultiPV value 2",
    "setoption name MultiPV value 1",
    "setoption name BoardSize value 4",
    "setoption name BoardSize value 3",
    "ponderhit",
    "d",
    // Table jobs: refused during a search, else carried out before the
    // next readyok; loads run beside a search.
    "setoption name Hash value 4096",
    "setoption name Hash value 16",
    "setoption name Clear Hash",
    "ucinewgame",
    "setoption name Rules value classic",
    "setoption name Rules value textbook",
    "setoption name TablebasePath value {table}",
    "setoption name TablebasePath value <empty>",
];

/// What a storm counted.
#[derive(Debug, Default)]
struct Storm {
    gos: usize,
    isreadys: usize,
    readyoks: usize,
    bestmoves: usize,
    refusals: usize,
}

/// Sends `rounds` lines picked from `lines` in random order with random
/// pauses, never waiting for an answer; then stops and syncs, and checks
/// that every `isready` got its `readyok` and every `go` its one
/// `bestmove` or one refusal, nothing more, and stdout stayed clean.
fn storm(engine: &mut Engine, rng: &mut Rng, lines: &[String], rounds: usize) -> Storm {
    let mut count = Storm::default();
    for _ in 0..rounds {
        let line = rng.pick(lines).clone();
        engine.send(&line);
        count.gos += usize::from(line.starts_with("go"));
        count.isreadys += usize::from(line == "isready");
        if rng.chance(4) {
            std::thread::sleep(Duration::from_micros(rng.below(3000) as u64));
        }
    }
    engine.send("stop");
    engine.send("isready");
    count.isreadys += 1;
    let deadline = std::time::Instant::now() + LONG;
    while count.readyoks < count.isreadys || count.bestmoves + count.refusals < count.gos {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let Recv::Line(line, _) = engine.recv(left) else {
            panic!("{count:?}{}", engine.context());
        };
        assert_clean(&line, "the storm");
        count.readyoks += usize::from(line == "readyok");
        count.bestmoves += usize::from(line.starts_with("bestmove"));
        count.refusals += usize::from(line.starts_with("info string error: go"));
        if line == "readyok"
            && count.readyoks == count.isreadys
            && count.bestmoves + count.refusals < count.gos
        {
            // A search may still be running after the last stop.
            engine.send("stop");
        }
    }
    // And nothing more.
    let rest = engine.sync();
    assert!(
        !rest
            .iter()
            .any(|l| l.starts_with("bestmove") || l == "readyok"),
        "{rest:?}"
    );
    engine.assert_utf8("the storm");
    count
}

/// go/stop/isready/position/setoption and table jobs in random order and
/// timing, never waiting for an answer: nothing is lost.
#[test]
fn a_storm_of_commands_loses_nothing() {
    let _cpu = shared();
    let dir = scratch("storm");
    let lines = corpus(STORM, &table_file(&dir));
    let mut rng = Rng(0x5707_3001);
    let mut engine = Engine::start();
    // How many of the `go`s find the engine free to search depends on the
    // machine's speed (an `isready` after a change of board waits for the
    // built-in table, and the lines behind it come in a burst): storm on
    // until enough searches have run to mean something.
    let mut searches = 0;
    for round in 0..10 {
        let count = storm(&mut engine, &mut rng, &lines, 1500);
        eprintln!("storm {round}: {count:?}");
        searches += count.bestmoves;
        if searches > 50 {
            break;
        }
    }
    assert!(searches > 50, "only {searches} searches ran in 10 storms");
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same while the built-in 4 x 4 tables are built: each fresh engine
/// builds one from its first `position` or `isready` on 4 x 4 (or its first
/// search, if that comes first), and the searches that meet the build are
/// stopped at random moments. In half the rounds `isready` is sent at
/// random moments too: its `readyok` waits for the build, and the lines
/// after it are answered after that, in order and at once (so most of
/// their searches find another running: those rounds do not count below).
#[test]
fn go_and_stop_during_the_built_in_table_builds_lose_nothing() {
    let _cpu = shared();
    let lines: Vec<String> = [
        "go infinite",
        "go depth 6",
        "go movetime 3",
        "stop",
        "stop",
        "position startpos",
        "setoption name Clear Hash",
    ]
    .map(String::from)
    .to_vec();
    let with_isready: Vec<String> = lines
        .iter()
        .cloned()
        .chain(["isready".to_string()])
        .collect();
    let mut rng = Rng(0x7ab1_ebd5);
    let mut total = 0;
    for round in 0..6 {
        let mut engine = Engine::start();
        let rules = if round % 2 == 0 {
            "textbook"
        } else {
            "classic"
        };
        let isready = round >= 3;
        engine.send("setoption name BoardSize value 4");
        engine.send(&format!("setoption name Rules value {rules}"));
        let pool = if isready { &with_isready } else { &lines };
        let count = storm(&mut engine, &mut rng, pool, 150);
        eprintln!("build storm {round} ({rules}, isready {isready}): {count:?}");
        if !isready {
            total += count.bestmoves;
        }
        // The table was built after all: the next search uses it.
        let out = engine.go("go depth 2", LONG);
        assert!(out.iter().any(|l| l.contains(" tbhits ")), "{out:?}");
        engine.quit();
    }
    assert!(total > 15, "only {total} searches ran");
}

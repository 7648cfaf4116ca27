//! The defects found by attacking the engine (issue 10), one test each:
//! what crashed, hung or leaked before must now be refused or bounded,
//! with the engine still answering and its position kept.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use dodgem::board::Rules;
use dodgem::tablebase;

use crate::common::{BIN, Engine, LONG, run, scratch, shared};

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

/// The bytes of a table file holding `values` for a table like `like`,
/// with a correct checksum.
fn table_file(like: &tablebase::Table, values: &[u8], rules_code: u8) -> Vec<u8> {
    let mut bytes = Vec::new();
    like.write_to(&mut bytes).unwrap();
    bytes[13] = rules_code;
    bytes.truncate(32);
    bytes.extend_from_slice(values);
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[8..24]);
    crc.update(values);
    bytes[24..28].copy_from_slice(&crc.finalize().to_le_bytes());
    bytes
}

#[test]
fn a_table_whose_values_cycle_is_refused_and_go_still_answers() {
    let _cpu = shared();
    let dir = scratch("cycle");
    let table = tablebase::builtin(3, Rules::Textbook).unwrap();
    let cycling = vec![dodgem::solver::encode(dodgem::solver::Value::Win(1)); table.len()];
    let path = dir.join("cycle.dtb");
    std::fs::write(&path, table_file(&table, &cycling, 0)).unwrap();

    let mut engine = Engine::start();
    engine.send(&format!(
        "setoption name TablebasePath value {}",
        path.display()
    ));
    let lines = engine.sync();
    assert!(
        errors(&lines)
            .iter()
            .any(|l| l.contains("passes its checksum but holds wrong values")),
        "{lines:?}"
    );
    engine.send("position fen 3/B2/2W b");
    let lines = engine.go("go depth 1", LONG);
    assert!(lines.last().unwrap().starts_with("bestmove"));
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_textbook_table_relabelled_classic_is_refused() {
    let _cpu = shared();
    let dir = scratch("relabel");
    let table = tablebase::builtin(4, Rules::Textbook).unwrap();
    let path = dir.join("4x4-classic.dtb");
    std::fs::write(&path, table_file(&table, table.values(), 1)).unwrap();
    assert!(matches!(
        tablebase::Table::load(&path),
        Err(tablebase::TableError::Wrong(..))
    ));

    let mut engine = Engine::start();
    engine.send("setoption name BoardSize value 4");
    engine.send("setoption name Rules value classic");
    engine.send(&format!(
        "setoption name TablebasePath value {}",
        path.display()
    ));
    let lines = engine.sync();
    assert!(
        errors(&lines)
            .iter()
            .any(|l| l.contains("passes its checksum but holds wrong values")),
        "{lines:?}"
    );
    // The built-in table still decides.
    let builtin = tablebase::builtin(4, Rules::Classic).unwrap();
    let start = dodgem::Position::start(4);
    let expected = match builtin.probe(&start).unwrap() {
        dodgem::tablebase::Value::Win(p) => format!("solve win {p}"),
        dodgem::tablebase::Value::Loss(p) => format!("solve loss {p}"),
        dodgem::tablebase::Value::Draw => "solve draw".to_string(),
    };
    engine.send("position startpos");
    engine.send("solve");
    let (lines, _) = engine.read_until(|l| l.starts_with("solve"), LONG);
    assert_eq!(lines.last().unwrap(), &expected);
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
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
                .any(|l| l.contains("is not a regular file")),
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
    let path = dir.join("two  spaces   three.dtb");
    tablebase::builtin(3, Rules::Classic)
        .unwrap()
        .save(&path)
        .unwrap();
    let mut engine = Engine::start();
    let lines = load(&mut engine, &path);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string loaded 3x3 classic table")
                && l.ends_with(&format!("from {}", path.display()))),
        "{lines:?}"
    );
    engine.quit();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn control_bytes_in_echoed_input_are_escaped() {
    let _cpu = shared();
    let dir = scratch("escape");
    let hostile = dir.join("bell\u{7}esc\u{1b}[31m.dtb");
    tablebase::builtin(3, Rules::Textbook)
        .unwrap()
        .save(&hostile)
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

//! Golden transcript tests: drive the real `dodgem` binary line by line.
//!
//! Every `tests/golden/*.txt` file is one scenario. The driver replays its
//! commands against a fresh engine process, rebuilds the whole transcript
//! from what the engine answers, and compares it with the file. A new file
//! dropped into `tests/golden` is picked up without touching this driver.
//!
//! Re-record every golden file (after checking the diff is intended):
//!
//! ```text
//! SNAPSHOTS=overwrite cargo test --test tests transcripts::
//! ```
//!
//! A file whose replay fails (timeout, crash, bad line) is reported and never
//! rewritten. `TRANSCRIPT_FILTER=perft` runs only the files whose name contains
//! `perft`; `TRANSCRIPT_JOBS=1` runs the files one at a time (the default
//! runs up to eight engines at once).
//!
//! # File format
//!
//! ```text
//! # comment lines start with '#', copied verbatim (so are blank lines)
//! > position startpos moves a3b3
//! > go depth 3
//! < info depth 1 seldepth 1 multipv 1 score cp 10 nodes 3 nps [..] hashfull 0 time [..] pv a3b3
//! < bestmove a3b3 ponder b1b2
//! ```
//!
//! `> X` sends `X` (everything after `"> "`, verbatim) to the engine; a bare
//! `>` sends an empty line. `< Y` is a recorded reply; a bare `<` is an empty
//! reply line. Recorded replies are ignored when replaying: they are rebuilt
//! from the engine's output. Any other line is an error.
//!
//! # How long each command waits (20 s at most, then the test fails)
//!
//! - `uci` until `uciok`, `ugi` until `ugiok`; `isready` until `readyok`.
//! - `go perft ..` until a line starting `Nodes searched:`.
//! - `go ..` without `infinite`/`ponder` until `bestmove`.
//! - `bench` until a line `<number> nodes <number> nps`.
//! - `quit` until the process exits (10 s), recording what it still prints.
//! - `stop`/`ponderhit` while a `go infinite`/`go .. ponder` search runs:
//!   until `bestmove`.
//! - A command refused with an `info string error: ..` line ends there
//!   (a refused `go` starts no search; a `go` sent while a `go infinite`
//!   search runs leaves that search's masking in place).
//! - Anything else (`position`, `setoption`, `go infinite`, garbage, ..):
//!   the driver sends a hidden `isready` and waits for its `readyok`, which
//!   is not recorded (the lines before it are).
//!
//! # Solved tables
//!
//! The files of `tests/golden/tables` run on tables the test solves first:
//! `{tables_5x5}` in a command stands for a directory of the whole 5 x 5
//! board's tables (`textbook`, with the distances to the end), as `dodgem
//! solve --size 5 --out` writes them, and the directory's path in a reply
//! is written back as `{tables_5x5}`.
//!
//! If the file does not end with `quit`, the driver sends one and records any
//! further output at the end. The engine must exit with status 0, and only
//! after `quit`.
//!
//! # Masking
//!
//! - `info` lines: the value after a `time` or `nps` token becomes `[..]`
//!   (up to an `info string`'s `string` token; the message is left alone).
//! - The bench line `<n> nodes <m> nps`: `<m>` becomes `[..]`.
//! - Searches whose `go` line has `movetime`, `wtime`, `btime`, `p1time`,
//!   `p2time`, `infinite` or `ponder`: their `info` lines (except `info string`) are dropped, and a
//!   single `< info [..]` is recorded just before their `bestmove` if any
//!   were dropped. (So such a search must always print at least one `info`
//!   line, or never any, for its transcript to be stable.)

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use snapbox::assert::DEFAULT_ACTION_ENV;
use snapbox::report::Palette;
use snapbox::{Assert, Data};

use crate::common::{
    dodgem, is_bestmove, is_number, is_search_info, mask_timing, run_cli, scratch, shared,
};

/// Longest wait for the replies to one command.
const REPLY_TIMEOUT: Duration = Duration::from_secs(20);
/// Longest wait for the process to exit after `quit`.
const QUIT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default cap on engines running at once.
const MAX_JOBS: usize = 8;

/// Longest wait for the 5 x 5 solve of the table transcripts (about 30 s
/// in the test build on two loaded cores).
const SOLVE_TIMEOUT: Duration = Duration::from_secs(600);

#[test]
fn golden_transcripts() {
    let _cpu = shared();
    let files = golden_files(&golden_dir());
    assert!(
        !files.is_empty(),
        "no golden files matched in {}",
        golden_dir().display()
    );
    check_all(&files, &[]);
}

#[test]
fn golden_transcripts_on_solved_tables() {
    let _cpu = shared();
    let files = golden_files(&golden_dir().join("tables"));
    if files.is_empty() {
        // All filtered out: nothing needs the tables.
        return;
    }
    let dir = scratch("golden-5x5");
    let tables = dir.join("tables");
    let path = tables.to_str().expect("a UTF-8 temporary directory");
    let (status, text) = run_cli(
        &["solve", "--size", "5", "--out", path, "--quiet"],
        SOLVE_TIMEOUT,
    );
    assert!(status.success(), "{text}");
    // The figures docs/tables.md gives for the whole board.
    assert!(
        text.contains("longest win 87 plies to the end, longest loss 86")
            && text.contains("start (Black to move): draw"),
        "{text}"
    );
    check_all(&files, &[("{tables_5x5}", path)]);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Replays `files` with `vars` (placeholder, value) and fails with every
/// file that differs.
fn check_all(files: &[PathBuf], vars: &[(&str, &str)]) {
    let failures: Vec<String> = run_all(files, vars)
        .into_iter()
        .zip(files)
        .filter_map(|(result, path)| result.err().map(|e| format!("{}:\n{e}", path.display())))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} golden transcripts failed (re-record with `SNAPSHOTS=overwrite cargo test --test tests transcripts::`):\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

/// The sorted `*.txt` files of `dir`, narrowed by `TRANSCRIPT_FILTER`.
fn golden_files(dir: &Path) -> Vec<PathBuf> {
    let filter = std::env::var("TRANSCRIPT_FILTER").unwrap_or_default();
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
        .filter(|path| file_name(path).contains(&filter))
        .collect();
    files.sort();
    files
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned())
}

/// Checks every file on a small pool of threads; results are in file order.
fn run_all(files: &[PathBuf], vars: &[(&str, &str)]) -> Vec<Result<(), String>> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    thread::scope(|scope| {
        for _ in 0..jobs().min(files.len()) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                while let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                    tx.send((path, check_file(path, vars)))
                        .expect("collector alive");
                }
            });
        }
    });
    drop(tx);
    let mut results: Vec<_> = rx.iter().collect();
    results.sort_by(|a, b| a.0.cmp(b.0));
    results.into_iter().map(|(_, result)| result).collect()
}

fn jobs() -> usize {
    std::env::var("TRANSCRIPT_JOBS")
        .ok()
        .and_then(|jobs| jobs.parse().ok())
        .unwrap_or_else(|| thread::available_parallelism().map_or(1, |n| n.get().min(MAX_JOBS)))
        .max(1)
}

/// Replays one golden file and compares (or, with `SNAPSHOTS=overwrite`,
/// rewrites) it.
fn check_file(path: &Path, vars: &[(&str, &str)]) -> Result<(), String> {
    let golden = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let actual = replay(&golden, vars)?;
    Assert::new()
        .action_env(DEFAULT_ACTION_ENV)
        .palette(palette())
        .try_eq(
            Some(&"engine"),
            Data::text(actual),
            Data::read_from(path, None).raw(),
        )
        .map_err(|e| e.to_string())
}

/// Colored diffs only when stderr is a terminal (our panic message is not
/// filtered the way snapbox's own panics are) and `NO_COLOR` is unset.
fn palette() -> Palette {
    if std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        Palette::color()
    } else {
        Palette::plain()
    }
}

/// Runs the commands of `golden` against a fresh engine, each placeholder
/// of `vars` replaced by its value; returns the rebuilt transcript.
fn replay(golden: &str, vars: &[(&str, &str)]) -> Result<String, String> {
    let mut session = Session::start(vars)?;
    for (index, line) in golden.lines().enumerate() {
        session
            .replay_line(line)
            .map_err(|e| format!("line {}: {e}", index + 1))?;
    }
    if !session.quit {
        session
            .engine
            .send("quit")
            .and_then(|()| session.await_exit())
            .map_err(|e| format!("after the last line, on the driver's `quit`: {e}"))?;
    }
    Ok(session.transcript)
}

/// What a golden line is.
enum GoldenLine<'a> {
    /// `#` comment or blank line, copied verbatim.
    Verbatim,
    /// `> cmd`: a command to send.
    Command(&'a str),
    /// `< reply`: a recorded reply, rebuilt rather than copied.
    Reply,
}

fn parse_line(line: &str) -> Result<GoldenLine<'_>, String> {
    if line.trim().is_empty() || line.starts_with('#') {
        Ok(GoldenLine::Verbatim)
    } else if line == ">" {
        Ok(GoldenLine::Command(""))
    } else if let Some(cmd) = line.strip_prefix("> ") {
        Ok(GoldenLine::Command(cmd))
    } else if line == "<" || line.starts_with("< ") {
        Ok(GoldenLine::Reply)
    } else {
        Err(format!(
            "`{line}` is not a `#` comment, a blank line, `> command` or `< reply`"
        ))
    }
}

/// How the driver waits after sending a command.
#[derive(Clone, Copy)]
enum Wait {
    /// Until a line matching the predicate, which is recorded.
    Until(&'static str, fn(&str) -> bool),
    /// Hidden `isready`, until its `readyok`, which is not recorded.
    Sync,
    /// Until the process exits.
    Exit,
}

const UNTIL_UCIOK: Wait = Wait::Until("`uciok`", |line| line == "uciok");
const UNTIL_UGIOK: Wait = Wait::Until("`ugiok`", |line| line == "ugiok");
const UNTIL_READYOK: Wait = Wait::Until("`readyok`", |line| line == "readyok");
const UNTIL_BESTMOVE: Wait = Wait::Until("`bestmove`", is_bestmove);
const UNTIL_PERFT: Wait = Wait::Until("`Nodes searched:`", |line| {
    line.starts_with("Nodes searched:")
});
const UNTIL_BENCH: Wait = Wait::Until("`<n> nodes <m> nps`", |line| bench_nps(line).is_some());

/// Picks the wait for `cmd`; `searching` is true while a `go infinite` or
/// `go .. ponder` search runs.
fn wait_for(cmd: &str, searching: bool) -> Wait {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let has = |word: &str| words.contains(&word);
    match words.first().copied() {
        Some("uci") => UNTIL_UCIOK,
        Some("ugi") => UNTIL_UGIOK,
        Some("isready") => UNTIL_READYOK,
        Some("go") if has("perft") => UNTIL_PERFT,
        Some("go") if !has("infinite") && !has("ponder") => UNTIL_BESTMOVE,
        Some("bench") => UNTIL_BENCH,
        Some("quit") => Wait::Exit,
        Some("stop" | "ponderhit") if searching => UNTIL_BESTMOVE,
        _ => Wait::Sync,
    }
}

/// Whether `cmd` starts a new search. A `go` sent while a `go infinite` or
/// `go .. ponder` search runs is refused by the engine, and the running
/// search keeps printing: its state (and the masking of its `info` lines)
/// must stay in place until its `bestmove`, not wait for the refusal.
fn starts_search(cmd: &str, searching: bool) -> bool {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    words.first() == Some(&"go") && !words.contains(&"perft") && !searching
}

/// One engine process and the transcript rebuilt from it.
struct Session {
    engine: Engine,
    transcript: String,
    search: SearchState,
    quit: bool,
    /// (placeholder, value): values sent for placeholders, and written back.
    vars: Vec<(String, String)>,
}

/// The search the engine is running, as far as the driver can tell.
#[derive(Default)]
struct SearchState {
    /// A `go infinite`/`go .. ponder` search has not answered `bestmove`.
    running: bool,
    /// The search's limits are not deterministic: drop its `info` lines.
    unstable: bool,
    /// At least one `info` line of this search was dropped.
    dropped: bool,
}

impl SearchState {
    /// State for a search started by the `go` command `cmd`.
    fn start(cmd: &str) -> Self {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let has = |word: &str| words.contains(&word);
        Self {
            running: has("infinite") || has("ponder"),
            unstable: [
                "movetime", "wtime", "btime", "p1time", "p2time", "infinite", "ponder",
            ]
            .into_iter()
            .any(has),
            dropped: false,
        }
    }
}

impl Session {
    fn start(vars: &[(&str, &str)]) -> Result<Self, String> {
        Ok(Self {
            engine: Engine::spawn()?,
            transcript: String::new(),
            search: SearchState::default(),
            quit: false,
            vars: vars
                .iter()
                .map(|&(name, value)| (name.to_owned(), value.to_owned()))
                .collect(),
        })
    }

    fn replay_line(&mut self, line: &str) -> Result<(), String> {
        match parse_line(line)? {
            GoldenLine::Verbatim => self.push(line),
            GoldenLine::Command(_) if self.quit => {
                return Err(format!("`{line}` comes after `quit`"));
            }
            GoldenLine::Command(cmd) => {
                self.push(line);
                self.run_command(cmd)
                    .map_err(|e| format!("`{line}`: {e}"))?;
            }
            GoldenLine::Reply => {}
        }
        Ok(())
    }

    fn run_command(&mut self, cmd: &str) -> Result<(), String> {
        let wait = wait_for(cmd, self.search.running);
        let before = if starts_search(cmd, self.search.running) {
            Some(std::mem::replace(&mut self.search, SearchState::start(cmd)))
        } else {
            None
        };
        let transcript_before = self.transcript.len();
        let sent = self.vars.iter().fold(cmd.to_owned(), |cmd, (name, value)| {
            cmd.replace(name, value)
        });
        self.engine.send(&sent)?;
        let result = match wait {
            Wait::Until(what, done) => self.collect(what, done, true),
            Wait::Sync => self.sync(),
            Wait::Exit => self.await_exit(),
        };
        // A refused `go` started nothing: the search state stays as it was.
        if let Some(before) = before {
            let replies = &self.transcript[transcript_before..];
            if replies
                .lines()
                .any(|l| l.starts_with("< info string error: "))
            {
                self.search = before;
            }
        }
        result
    }

    /// Sends a hidden `isready` and reads up to its (unrecorded) `readyok`.
    fn sync(&mut self) -> Result<(), String> {
        self.engine
            .send("isready")
            .map_err(|e| format!("hidden `isready`: {e}"))?;
        self.collect("`readyok` (hidden `isready`)", |l| l == "readyok", false)
    }

    /// Records replies up to and including the first line for which `done`
    /// holds (`record_last`: whether that line is recorded too).
    fn collect(
        &mut self,
        what: &str,
        done: fn(&str) -> bool,
        record_last: bool,
    ) -> Result<(), String> {
        let deadline = Instant::now() + REPLY_TIMEOUT;
        let mut received = Vec::new();
        loop {
            let line = self.engine.next_line(deadline).map_err(|e| {
                format!(
                    "{e} while waiting for {what}; received meanwhile:\n{}",
                    indent(&received)
                )
            })?;
            // A refused command ends with its error instead of its reply.
            let last = done(&line) || (record_last && is_error(&line));
            if !last || record_last {
                self.record(&line);
            }
            if last {
                return Ok(());
            }
            received.push(line);
        }
    }

    /// After `quit`: records the remaining output and checks a clean exit.
    fn await_exit(&mut self) -> Result<(), String> {
        self.quit = true;
        let deadline = Instant::now() + QUIT_TIMEOUT;
        while let Some(line) = self.engine.line_before_exit(deadline)? {
            self.record(&line);
        }
        let status = self.engine.wait(deadline)?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("engine exited with {status} after `quit`"))
        }
    }

    /// Records one reply line, applying the masking rules.
    fn record(&mut self, line: &str) {
        if self.search.unstable && is_search_info(line) {
            self.search.dropped = true;
            return;
        }
        if is_bestmove(line) {
            if self.search.unstable && self.search.dropped {
                self.push("< info [..]");
            }
            self.search = SearchState::default();
        }
        let masked = self
            .vars
            .iter()
            .fold(mask_timing(line), |line, (name, value)| {
                line.replace(value, name)
            });
        if masked.is_empty() {
            self.push("<");
        } else {
            self.push(&format!("< {masked}"));
        }
    }

    fn push(&mut self, line: &str) {
        self.transcript.push_str(line);
        self.transcript.push('\n');
    }
}

fn indent(lines: &[String]) -> String {
    if lines.is_empty() {
        return "    (nothing)".to_owned();
    }
    let indented: Vec<String> = lines.iter().map(|line| format!("    {line}")).collect();
    indented.join("\n")
}

/// An error reply: the command was refused and nothing else follows.
fn is_error(line: &str) -> bool {
    line.starts_with("info string error: ")
}

/// For the bench summary `<n> nodes <m> nps`, the `<m>` token.
fn bench_nps(line: &str) -> Option<&str> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words[..] {
        [nodes, "nodes", nps, "nps"] if is_number(nodes) && is_number(nps) => Some(nps),
        _ => None,
    }
}

/// The engine process, with its stdout forwarded line by line over a channel
/// so that every read can time out.
struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Engine {
    fn spawn() -> Result<Self, String> {
        let mut child = dodgem(&[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the engine: {e}"))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(mut line) = line else { break };
                if line.ends_with('\r') {
                    line.pop();
                }
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            stdin: child.stdin.take(),
            child,
            lines,
        })
    }

    fn send(&mut self, cmd: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().expect("stdin open until drop");
        let sent = writeln!(stdin, "{cmd}").and_then(|()| stdin.flush());
        sent.map_err(|e| format!("cannot send `{cmd}` ({e}); {}", self.exit_report()))
    }

    /// The next line, or an error on timeout or if the engine's stdout closed.
    fn next_line(&mut self, deadline: Instant) -> Result<String, String> {
        match self.recv(deadline) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(format!("timed out after {REPLY_TIMEOUT:?}")),
            Err(RecvTimeoutError::Disconnected) => Err(format!(
                "the engine closed its output before `quit` ({})",
                self.exit_report()
            )),
        }
    }

    /// The next line before the engine's stdout closes (`None` once closed).
    fn line_before_exit(&mut self, deadline: Instant) -> Result<Option<String>, String> {
        match self.recv(deadline) {
            Ok(line) => Ok(Some(line)),
            Err(RecvTimeoutError::Disconnected) => Ok(None),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "the engine did not exit within {QUIT_TIMEOUT:?} of `quit`"
            )),
        }
    }

    fn recv(&self, deadline: Instant) -> Result<String, RecvTimeoutError> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.lines.recv_timeout(left)
    }

    /// Waits for the process to exit, polling until `deadline`.
    fn wait(&mut self, deadline: Instant) -> Result<ExitStatus, String> {
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Ok(status),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                Ok(None) => {
                    return Err(format!(
                        "the engine closed its output but did not exit within {QUIT_TIMEOUT:?} of `quit`"
                    ));
                }
                Err(e) => return Err(format!("cannot wait for the engine: {e}")),
            }
        }
    }

    /// Describes whether (and how) the process has exited, for messages.
    fn exit_report(&mut self) -> String {
        thread::sleep(Duration::from_millis(50));
        match self.child.try_wait() {
            Ok(Some(status)) => format!("it exited with {status}"),
            Ok(None) => "it is still running".to_owned(),
            Err(e) => format!("its status is unknown: {e}"),
        }
    }
}

impl Drop for Engine {
    /// Never leave an engine behind, whatever went wrong.
    fn drop(&mut self) {
        drop(self.stdin.take());
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Unit tests of the driver itself (no engine needed).
mod driver_tests {
    use super::*;

    #[test]
    fn masks_time_and_nps_in_info_lines() {
        assert_eq!(
            mask_timing("info depth 2 nodes 7 nps 3500 time 2 pv a3b3"),
            "info depth 2 nodes 7 nps [..] time [..] pv a3b3"
        );
        assert_eq!(
            mask_timing("info string time 5 nps 6"),
            "info string time 5 nps 6"
        );
        assert_eq!(mask_timing("bestmove a3b3 time 5"), "bestmove a3b3 time 5");
    }

    #[test]
    fn masks_bench_nps_only() {
        assert_eq!(mask_timing("12345 nodes 67890 nps"), "12345 nodes [..] nps");
        assert_eq!(mask_timing("Nodes searched: 27"), "Nodes searched: 27");
    }

    #[test]
    fn picks_the_wait_for_each_command() {
        assert!(matches!(
            wait_for("go depth 3", false),
            Wait::Until("`bestmove`", _)
        ));
        assert!(matches!(
            wait_for("go perft 3", false),
            Wait::Until("`Nodes searched:`", _)
        ));
        assert!(matches!(wait_for("go infinite", false), Wait::Sync));
        assert!(matches!(wait_for("go ponder wtime 5", false), Wait::Sync));
        assert!(matches!(
            wait_for("stop", true),
            Wait::Until("`bestmove`", _)
        ));
        assert!(matches!(wait_for("stop", false), Wait::Sync));
        assert!(matches!(wait_for("ucinewgame", false), Wait::Sync));
        assert!(matches!(wait_for("quit", false), Wait::Exit));
        assert!(matches!(wait_for("ugi", false), Wait::Until("`ugiok`", _)));
        assert!(matches!(wait_for("query result", false), Wait::Sync));
    }

    #[test]
    fn a_go_refused_during_an_infinite_search_keeps_its_masking() {
        assert!(starts_search("go depth 1", false));
        assert!(!starts_search("go perft 2", false));
        assert!(!starts_search("go depth 1", true));
        assert!(!starts_search("position startpos", false));
    }

    #[test]
    fn drops_unstable_info_lines() {
        let mut search = SearchState::start("go movetime 100");
        assert!(search.unstable && !search.running);
        search = SearchState::start("go infinite");
        assert!(search.unstable && search.running);
        search = SearchState::start("go p1time 100 p2time 100");
        assert!(search.unstable && !search.running);
        search = SearchState::start("go depth 4 nodes 100");
        assert!(!search.unstable && !search.running);
    }
}

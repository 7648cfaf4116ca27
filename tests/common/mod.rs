//! A small driver for the real `dodgem` binary, shared by integration tests.
//!
//! [`Engine`] spawns the binary with piped stdin/stdout, forwards every
//! stdout line over a channel together with the [`Instant`] it was read, and
//! offers `send` / `expect_line` / `wait_for` helpers. Every wait has a hard
//! timeout, so a test can fail but never hang; the child is killed on drop.
//!
//! [`dodgem`] is the one way a test starts the binary: [`Engine`] drives
//! it over pipes, [`run_cli`] runs a subcommand to its end. [`mask_timing`] hides
//! the timing-dependent numbers of a reply line.
//!
//! [`timing`] and [`shared`] serialise the timing-critical tests against
//! every other test that runs engines (see their docs). [`gui`] starts
//! `dodgem gui` and talks raw HTTP to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub mod gui;

/// The engine binary cargo built for this test run.
pub const BIN: &str = env!("CARGO_BIN_EXE_dodgem");

/// A generous wait for replies that have no timing requirement of their own
/// (CI runs the tests in parallel on two cores).
pub const LONG: Duration = Duration::from_secs(20);

/// `stop` and `isready` must be answered within this (the requirement);
/// tests that check it hold [`timing`].
pub const REPLY_BOUND: Duration = Duration::from_millis(20);

/// What a busy machine may add to a time the harness measures and the
/// engine does not control: its process waiting for a core behind other
/// work, then the harness's reader thread waiting too (with two `yes >
/// /dev/null` keeping both cores busy beside the test suite). Bounds on
/// wall time add it; the engine's own share is judged on figures it
/// controls (its own clock, or the typical latency of many tries).
pub const LOAD_SLACK: Duration = Duration::from_millis(300);

/// Latencies of one kind of reply that a busy machine does not turn into
/// a failure: the median (what the engine does, load or not) within
/// `bound`, and every one within `bound` plus [`LOAD_SLACK`] (a reply the
/// engine held up, on a table build or a large allocation, takes longer
/// every time, not once in a while).
pub fn assert_prompt(latencies: &[Duration], bound: Duration, what: &str) {
    assert!(!latencies.is_empty(), "{what}: no latency measured");
    let mut sorted = latencies.to_vec();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    let worst = sorted[sorted.len() - 1];
    let shown: Vec<String> = latencies.iter().map(|l| format!("{:.2}", ms(*l))).collect();
    assert!(
        median <= bound,
        "{what}: median {:.2} ms, over {bound:?} (ms: {})",
        ms(median),
        shown.join(" ")
    );
    assert!(
        worst <= bound + LOAD_SLACK,
        "{what}: {:.2} ms, over {bound:?} + {LOAD_SLACK:?} for a busy machine (ms: {})",
        ms(worst),
        shown.join(" ")
    );
}

/// A search timed two ways: by the harness (`wall`, from writing the `go`
/// to reading its `bestmove`: pipes and a busy machine's scheduling
/// included) and by the engine (`own`, from its reading the `go` to its
/// `bestmove`, from the `info string debug: ... in <t> ms` that `debug
/// on` adds). The engine controls `own`.
#[derive(Debug)]
pub struct Timed {
    pub lines: Vec<String>,
    pub wall: Duration,
    pub own: Duration,
}

/// How many recent lines a failure message quotes.
const TAIL: usize = 40;
/// Longest quoted line in a failure message.
const QUOTE: usize = 160;

static CPU: RwLock<()> = RwLock::new(());

/// Held by a test whose assertions are latency bounds of a few
/// milliseconds: no other test of this binary that holds [`shared`] runs at
/// the same time, so the bound measures the engine, not the harness's
/// contention for two cores. (Other processes can still load the machine.)
pub fn timing() -> RwLockWriteGuard<'static, ()> {
    CPU.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Held by every other test that runs an engine or searches in-process:
/// they run in parallel with each other, but not with a [`timing`] test.
pub fn shared() -> RwLockReadGuard<'static, ()> {
    CPU.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What one read from the engine's stdout gave.
#[derive(Debug)]
pub enum Recv {
    Line(String, Instant),
    Timeout,
    /// The engine closed its stdout (it exited, or is exiting).
    Eof,
}

/// A running engine process.
pub struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Each stdout line byte for byte (newline removed).
    lines: Receiver<(Vec<u8>, Instant)>,
    /// Lines that were not UTF-8 (see [`Engine::assert_utf8`]).
    not_utf8: Vec<Vec<u8>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    /// What was sent (`> `) and received (`< `), for failure messages.
    log: Vec<String>,
    eof: bool,
}

/// Cuts a line short for a failure message.
pub fn shorten(line: &str) -> String {
    if line.chars().count() > QUOTE {
        let head: String = line.chars().take(QUOTE).collect();
        format!("{head}... ({} bytes)", line.len())
    } else {
        line.to_string()
    }
}

/// The one way the tests start `dodgem`: the binary cargo built, with
/// `args`, `RUST_LOG` removed (logging is the test's choice) and stdin,
/// stdout and stderr closed until the caller pipes them.
pub fn dodgem(args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

impl Engine {
    /// Starts the engine with stderr discarded and `RUST_LOG` removed.
    pub fn start() -> Engine {
        Engine::start_with(|_| {})
    }

    /// Starts the engine after `configure` has adjusted the command (it may
    /// set environment variables, or pipe stderr to have it captured; see
    /// [`Engine::stderr`]).
    pub fn start_with(configure: impl FnOnce(&mut Command)) -> Engine {
        let mut command = dodgem(&[]);
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
        configure(&mut command);
        let mut child = command.spawn().expect("cannot start the engine");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, lines) = mpsc::channel();
        thread::Builder::new()
            .name("engine stdout".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut buffer = Vec::new();
                loop {
                    buffer.clear();
                    match reader.read_until(b'\n', &mut buffer) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                    let at = Instant::now();
                    if buffer.last() == Some(&b'\n') {
                        buffer.pop();
                    }
                    if sender.send((buffer.clone(), at)).is_err() {
                        break;
                    }
                }
            })
            .expect("cannot start the stdout reader");
        // Read stderr as it comes, so a chatty engine never blocks on a
        // full pipe.
        let stderr = child.stderr.take().map(|mut pipe| {
            thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                bytes
            })
        });
        Engine {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            not_utf8: Vec::new(),
            log: Vec::new(),
            eof: false,
        }
    }

    /// Writes `line` and a newline, flushes, and returns the instant just
    /// after the flush.
    pub fn send(&mut self, line: &str) -> Instant {
        self.send_bytes(format!("{line}\n").as_bytes())
    }

    /// Writes raw bytes (the caller adds any newline), flushes, and returns
    /// the instant just after the flush.
    pub fn send_bytes(&mut self, bytes: &[u8]) -> Instant {
        self.log
            .push(format!("> {}", shorten(&String::from_utf8_lossy(bytes))));
        let stdin = self.stdin.as_mut().expect("stdin is closed");
        if let Err(error) = stdin.write_all(bytes).and_then(|()| stdin.flush()) {
            let context = self.context();
            panic!("cannot write to the engine ({error}){context}");
        }
        Instant::now()
    }

    /// Closes the engine's stdin (end of input).
    pub fn close_stdin(&mut self) {
        self.log.push("> (end of input)".into());
        self.stdin = None;
    }

    /// The next stdout line, waiting at most `timeout`.
    pub fn recv(&mut self, timeout: Duration) -> Recv {
        if self.eof {
            return Recv::Eof;
        }
        match self.lines.recv_timeout(timeout) {
            Ok((bytes, at)) => {
                let line = match String::from_utf8(bytes) {
                    Ok(line) => line,
                    Err(error) => {
                        let bytes = error.into_bytes();
                        let line = String::from_utf8_lossy(&bytes).into_owned();
                        self.not_utf8.push(bytes);
                        line
                    }
                };
                self.log.push(format!("< {}", shorten(&line)));
                Recv::Line(line, at)
            }
            Err(RecvTimeoutError::Timeout) => Recv::Timeout,
            Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                self.log.push("< (end of output)".into());
                Recv::Eof
            }
        }
    }

    /// Reads lines until one satisfies `pred` and returns it with its
    /// receipt instant; panics on timeout or end of output.
    pub fn expect_line(
        &mut self,
        pred: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> (String, Instant) {
        let (mut lines, at) = self.read_until(pred, timeout);
        (lines.pop().expect("the matching line"), at)
    }

    /// Reads lines until one starts with `prefix`.
    pub fn wait_for(&mut self, prefix: &str, timeout: Duration) -> (String, Instant) {
        let owned = prefix.to_string();
        self.expect_line(move |line| line.starts_with(&owned), timeout)
    }

    /// Reads lines until one satisfies `pred`; returns all of them (the
    /// match last) and the match's receipt instant. Panics on timeout or
    /// end of output.
    pub fn read_until(
        &mut self,
        pred: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> (Vec<String>, Instant) {
        let deadline = Instant::now() + timeout;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv(left) {
                Recv::Line(line, at) => {
                    let done = pred(&line);
                    lines.push(line);
                    if done {
                        return (lines, at);
                    }
                }
                Recv::Timeout => {
                    let context = self.context();
                    panic!("no expected line within {timeout:?}{context}");
                }
                Recv::Eof => {
                    let context = self.context();
                    panic!("the engine closed its output while a line was expected{context}");
                }
            }
        }
    }

    /// Everything that arrives within `duration` (panics on end of output).
    pub fn lines_for(&mut self, duration: Duration) -> Vec<(String, Instant)> {
        let deadline = Instant::now() + duration;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return lines;
            }
            match self.recv(left) {
                Recv::Line(line, at) => lines.push((line, at)),
                Recv::Timeout => return lines,
                Recv::Eof => {
                    let context = self.context();
                    panic!("the engine closed its output unexpectedly{context}");
                }
            }
        }
    }

    /// Lines already received and waiting, without blocking.
    pub fn pending(&mut self) -> Vec<(String, Instant)> {
        let mut lines = Vec::new();
        while let Recv::Line(line, at) = self.recv(Duration::ZERO) {
            lines.push((line, at));
        }
        lines
    }

    /// Sends `isready` and returns the lines before its `readyok`.
    pub fn sync(&mut self) -> Vec<String> {
        self.send("isready");
        let (mut lines, _) = self.read_until(|line| line == "readyok", LONG);
        lines.pop();
        lines
    }

    /// Sends the lines, then syncs; returns what they printed.
    pub fn send_all(&mut self, lines: &[&str]) -> Vec<String> {
        for line in lines {
            self.send(line);
        }
        self.sync()
    }

    /// Sends `go ...` to an engine in `debug on` mode and times it both
    /// ways (see [`Timed`]). A game already over (a repetition, say) is
    /// answered with no search, in no time of the engine's own.
    pub fn timed_go(&mut self, go: &str) -> Timed {
        let sent = self.send(go);
        let (lines, at) = self.read_until(is_bestmove, LONG);
        let own = lines
            .iter()
            .find_map(|line| {
                let rest = line.strip_prefix("info string debug: ")?;
                if rest == "the game is over, nothing to search" {
                    return Some(0);
                }
                let took = rest.strip_suffix(" ms")?.rsplit(" in ").next()?;
                took.parse().ok()
            })
            .map(Duration::from_millis)
            .unwrap_or_else(|| {
                panic!("no `debug: ... in <t> ms` line (send `debug on`): {lines:#?}")
            });
        Timed {
            lines,
            wall: at.saturating_duration_since(sent),
            own,
        }
    }

    /// Sends `go ...` and returns every line up to and including `bestmove`.
    pub fn go(&mut self, go: &str, timeout: Duration) -> Vec<String> {
        self.send(go);
        self.read_until(is_bestmove, timeout).0
    }

    /// Reads the remaining output up to the end of output (panics if it
    /// does not end within `timeout`).
    pub fn read_to_eof(&mut self, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv(left) {
                Recv::Line(line, _) => lines.push(line),
                Recv::Eof => return lines,
                Recv::Timeout => {
                    let context = self.context();
                    panic!("the engine did not close its output within {timeout:?}{context}");
                }
            }
        }
    }

    /// The `Fen:` line of `d` (the position the engine holds).
    pub fn fen(&mut self) -> String {
        self.send("d");
        let (line, _) = self.wait_for("Fen: ", LONG);
        line["Fen: ".len()..].to_string()
    }

    /// The legal moves that `d` lists for the current position.
    pub fn legal_moves(&mut self) -> Vec<String> {
        let out = self.send_all(&["d"]);
        let line = out
            .iter()
            .find_map(|line| line.strip_prefix("Legal moves:"))
            .unwrap_or_else(|| panic!("no `Legal moves:` line in {out:?}"));
        line.split_whitespace().map(str::to_string).collect()
    }

    /// The process id (to look at its threads, memory or CPU time).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends `quit`, closes stdin and asserts a prompt exit with status 0.
    pub fn quit(&mut self) {
        self.send("quit");
        self.close_stdin();
        let status = self.wait_exit(LONG);
        let context = self.context();
        assert!(status.success(), "exit {status} after quit{context}");
    }

    /// Panics if any stdout line so far was not UTF-8. Together with a
    /// check of the decoded lines for control characters this is a
    /// byte-exact check: a stray byte (a lone `0x9b`, a C1 control) cannot
    /// hide behind the replacement character.
    pub fn assert_utf8(&self, context: &str) {
        if let Some(bytes) = self.not_utf8.first() {
            panic!(
                "{} stdout line(s) not UTF-8, the first {bytes:?}, after {context}{}",
                self.not_utf8.len(),
                self.context()
            );
        }
    }

    /// Waits for the process to exit; panics if it is still running after
    /// `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
                Ok(None) => {
                    let context = self.context();
                    panic!("the engine did not exit within {timeout:?}{context}");
                }
                Err(error) => panic!("cannot wait for the engine: {error}"),
            }
        }
    }
    /// What the engine wrote to stderr, once it has exited (only when
    /// `start_with` piped stderr).
    pub fn stderr(&mut self) -> Vec<u8> {
        self.wait_exit(LONG);
        self.stderr
            .take()
            .map(|reader| reader.join().expect("stderr reader"))
            .unwrap_or_default()
    }

    /// The last lines exchanged, for failure messages.
    pub fn context(&self) -> String {
        let start = self.log.len().saturating_sub(TAIL);
        let mut text = format!(
            "\n--- last {} of {} lines exchanged with the engine ---\n",
            self.log.len() - start,
            self.log.len()
        );
        for line in &self.log[start..] {
            text.push_str(line);
            text.push('\n');
        }
        text
    }
}

impl Drop for Engine {
    /// Never leaves an engine behind, whatever went wrong.
    fn drop(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// What a finished `dodgem <args>` run gave.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Runs `dodgem <args>` to its end; returns the exit status and stdout
/// (see [`run`]).
pub fn run_cli(args: &[&str], timeout: Duration) -> (ExitStatus, String) {
    let output = run(args, timeout);
    (output.status, output.stdout)
}

/// Runs `dodgem <args>` to its end with stdin closed, killing it (and
/// failing the test) if it outlives `timeout`.
pub fn run(args: &[&str], timeout: Duration) -> Output {
    run_command(dodgem(args), timeout)
}

/// Runs `command` (one that starts `dodgem`, perhaps through `mpirun`) to
/// its end, as [`run`] does.
pub fn run_command(mut command: Command, timeout: Duration) -> Output {
    let started = Instant::now();
    let shown = format!("{command:?}");
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start dodgem");
    let read = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().expect("stdout is piped")));
    let stderr = read(Box::new(child.stderr.take().expect("stderr is piped")));
    let status = loop {
        match child.try_wait().expect("cannot wait for dodgem") {
            Some(status) => break status,
            None if started.elapsed() < timeout => thread::sleep(Duration::from_millis(5)),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "`{shown}` did not finish within {timeout:?}; stdout so far:\n{}",
                    stdout.join().expect("stdout reader")
                );
            }
        }
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
        elapsed: started.elapsed(),
    }
}

/// Whether `line` is a `bestmove` line.
pub fn is_bestmove(line: &str) -> bool {
    line.split_whitespace().next() == Some("bestmove")
}

/// Whether `line` is a search `info` line (not `info string`).
pub fn is_search_info(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words.next() == Some("info") && words.next() != Some("string")
}

/// The move of a `bestmove` line.
pub fn best_move(line: &str) -> &str {
    let mut words = line.split_whitespace();
    assert_eq!(
        words.next(),
        Some("bestmove"),
        "not a bestmove line: {line}"
    );
    words.next().unwrap_or_else(|| panic!("no move in: {line}"))
}

/// The value after `key` in an `info` line, if any.
pub fn info_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let words: Vec<&str> = line.split_whitespace().collect();
    words
        .windows(2)
        .find(|pair| pair[0] == key)
        .map(|pair| pair[1])
}

/// The `score` of an `info` line: `("mate", n)` or `("cp", n)`.
pub fn info_score(line: &str) -> Option<(String, i64)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|&word| word == "score")?;
    let kind = words.get(at + 1)?.to_string();
    let value = words.get(at + 2)?.parse().ok()?;
    Some((kind, value))
}

/// Masks the numbers that depend on timing: the values of `time` and
/// `nps` in `info` lines (not inside an `info string` message) and the
/// rate of a bench summary `<n> nodes <m> nps` become `[..]`.
pub fn mask_timing(line: &str) -> String {
    if let [nodes, "nodes", nps, "nps"] = line.split_whitespace().collect::<Vec<_>>()[..]
        && is_number(nodes)
        && is_number(nps)
    {
        return format!("{nodes} nodes [..] nps");
    }
    if line.split_whitespace().next() != Some("info") {
        return line.to_owned();
    }
    let mut words: Vec<&str> = line.split(' ').collect();
    for i in 1..words.len() {
        match words[i - 1] {
            "string" => break,
            "time" | "nps" if is_number(words[i]) => words[i] = "[..]",
            _ => {}
        }
    }
    words.join(" ")
}

/// Whether `word` is a whole number (a leading minus allowed).
pub fn is_number(word: &str) -> bool {
    let digits = word.strip_prefix('-').unwrap_or(word);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Milliseconds, for messages.
pub fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// A small deterministic generator (xorshift64*, seeded with a non-zero
/// number), so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() >> 33) as usize % n
    }

    /// One of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// True once in `one_in` times on average.
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// The command line of a mock engine of `tests/mock/engine.py` in `mode`.
pub fn mock(mode: &str) -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mock/engine.py");
    let script = script.to_string_lossy();
    format!("python3 {} {mode}", shlex::try_quote(&script).unwrap())
}

/// Every file of `dir` by name, with its bytes: for comparing two
/// directories of tables byte for byte.
pub fn files_of(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect()
}

/// Makes the new or empty directory `dir` one of the table set of the
/// tables in `like` (its manifest copied), so that a solve into it writes
/// the same bytes as the solve into `like`: every layer file is bound to
/// its directory's set, drawn at random for each new directory.
pub fn same_set(like: &std::path::Path, dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("cannot make a directory");
    let manifest = dodgem::solver::MANIFEST;
    std::fs::copy(like.join(manifest), dir.join(manifest)).expect("cannot copy a manifest");
}

/// A fresh, empty directory for one test's files, named after it.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dodgem-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("cannot make a scratch directory");
    dir
}

/// A fresh directory (named after `name`) holding the layered tables of
/// the whole `size` x `size` board under `rules`, as `dodgem solve --out`
/// writes them (a fraction of a second for 3 x 3 and 4 x 4).
pub fn table_dir(name: &str, size: usize, rules: dodgem::Rules) -> std::path::PathBuf {
    let dir = scratch(name);
    let plan = dodgem::solver::Plan {
        kind: dodgem::solver::Kind {
            size,
            rules,
            max_cars: size as u32 - 1,
        },
        dir: dir.clone(),
        threads: 2,
        stop_after_layers: None,
        two_bytes: false,
        with_dte: false,
    };
    dodgem::solver::solve_layers(&plan, &mut |_| {}).expect("a small solve");
    dir
}

/// Makes a FIFO at `path` (false where `mkfifo` is missing).
pub fn mkfifo(path: &std::path::Path) -> bool {
    Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

/// The files of `dir` whose names end in `.extension`, by name.
pub fn files_with(
    dir: &std::path::Path,
    extension: &str,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = files_of(dir);
    files.retain(|name, _| name.ends_with(&format!(".{extension}")));
    files
}

/// Asserts that the tables in `a` and `b` give every slot of every layer
/// the same win, draw or loss (their distances may count different
/// metrics).
pub fn assert_same_wdl(a: &std::path::Path, b: &std::path::Path) {
    let (a, b) = (
        dodgem::solver::Tables::open(a).unwrap(),
        dodgem::solver::Tables::open(b).unwrap(),
    );
    assert_eq!(a.kind(), b.kind());
    for layer in a.shape().layers() {
        let wdl_of = |tables: &dodgem::solver::Tables| {
            let mut wdl = Vec::new();
            tables
                .stream_values(layer.black, layer.white, &mut |_, values| {
                    wdl.extend((0..values.len() as u64).map(|slot| values.get(slot).wdl()));
                })
                .unwrap();
            wdl
        };
        assert!(wdl_of(&a) == wdl_of(&b), "layer {}", layer.name());
    }
}

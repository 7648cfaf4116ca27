//! One engine process, driven over pipes without ever blocking the caller.
//!
//! A reader thread turns the engine's stdout into lines (cut at
//! [`MAX_LINE`], stamped with the instant they were read) and either queues
//! them for [`EngineProcess::recv_until`] or hands them to a handler. A
//! writer thread feeds the engine's stdin from a queue, so an engine that
//! stops reading cannot block the caller on a full pipe.
//!
//! Each engine runs in a process group of its own, so that ending it ends
//! whatever it started too (a helper it forked may hold its stdout and
//! outlive it). Ending an engine means `quit`, closing its stdin, a kill
//! if it has not exited after a grace period, and then a kill of what is
//! left of its group. [`EngineProcess::shutdown`] waits for
//! that (a referee must not start the next game while the last one's
//! engines still run); dropping the value does it on a thread of its own
//! (a server must not hold up a request for it).

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};

use super::EngineCommand;

/// Lines longer than this (in bytes) are cut; the rest of the line is
/// dropped. An engine printing without newlines cannot grow our memory.
pub const MAX_LINE: usize = 1 << 16;
/// Lines queued from an engine's stdout before its reader thread waits.
const LINE_BUFFER: usize = 1024;
/// How long a dropped engine gets to exit after `quit` before it is killed.
const DROP_GRACE: Duration = Duration::from_millis(500);
/// How long [`EngineProcess::exit_description`] waits for an exit status.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(200);
/// How often a waiting caller looks whether the process has exited.
const POLL: Duration = Duration::from_millis(2);

/// Where the engine's stderr goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stderr {
    /// To our own stderr (the engine's messages reach the user).
    Inherit,
    /// Nowhere.
    Discard,
}

/// What waiting for a line gave.
#[derive(Debug)]
pub enum Recv {
    /// A line (without its line end) and the instant it was read.
    Line(String, Instant),
    Timeout,
    /// The engine closed its stdout (it exited, or is exiting).
    Eof,
}

/// A line for the engine's stdin, and where to report the instant it was
/// written and flushed (for lines that start a clock).
type Outgoing = (String, Option<Sender<Instant>>);

/// The instant a line sent with [`EngineProcess::send_timed`] reached the
/// engine's pipe.
pub struct Written {
    queued: Instant,
    report: Receiver<Instant>,
    written: Cell<Option<Instant>>,
}

impl Written {
    /// When the line was flushed to the pipe, if it has been; else when
    /// it was queued (earlier, so never in the engine's favour).
    pub fn instant(&self) -> Instant {
        if self.written.get().is_none() {
            self.written.set(self.report.try_recv().ok());
        }
        self.written.get().unwrap_or(self.queued)
    }
}

/// A running engine process. Told to `quit`, then killed, on
/// [`shutdown`](EngineProcess::shutdown) or drop.
pub struct EngineProcess {
    /// Taken when the process is ended.
    child: Option<Child>,
    pid: u32,
    /// Lines for the writer thread; dropping it closes the engine's stdin.
    to_engine: Option<Sender<Outgoing>>,
    /// Lines from the reader thread; never ready when a handler takes them.
    from_engine: Receiver<(String, Instant)>,
    eof: bool,
}

impl EngineProcess {
    /// Starts `command` with piped stdin and stdout. Its lines are queued
    /// for [`recv_until`](EngineProcess::recv_until) and
    /// [`drain`](EngineProcess::drain).
    ///
    /// # Errors
    /// When the program or the threads cannot be started.
    pub fn spawn(command: &EngineCommand, stderr: Stderr) -> io::Result<EngineProcess> {
        let (lines, from_engine) = crossbeam_channel::bounded(LINE_BUFFER);
        let reader = move |pid, stdout| {
            // Dropping `lines` at the end tells `recv_until` of the end.
            read_lines(pid, stdout, |line, at| lines.send((line, at)).is_ok());
        };
        EngineProcess::start(command, stderr, reader, from_engine)
    }

    /// Starts `command` with piped stdin and stdout, and calls `handler`
    /// on the reader thread with each line, then once with `None` when the
    /// engine has closed its stdout. Nothing is left for
    /// [`recv_until`](EngineProcess::recv_until), which only times out.
    ///
    /// # Errors
    /// When the program or the threads cannot be started.
    pub fn spawn_with_handler(
        command: &EngineCommand,
        stderr: Stderr,
        mut handler: impl FnMut(Option<String>) + Send + 'static,
    ) -> io::Result<EngineProcess> {
        let reader = move |pid, stdout| {
            read_lines(pid, stdout, |line, _| {
                handler(Some(line));
                true
            });
            handler(None);
        };
        EngineProcess::start(command, stderr, reader, crossbeam_channel::never())
    }

    /// Starts the process and its threads; `reader` runs on the reader
    /// thread with the process id and the engine's stdout.
    fn start(
        command: &EngineCommand,
        stderr: Stderr,
        reader: impl FnOnce(u32, ChildStdout) + Send + 'static,
        from_engine: Receiver<(String, Instant)>,
    ) -> io::Result<EngineProcess> {
        let mut child = Command::new(command.program())
            .args(command.args())
            // Its own group (id = its pid), so its helpers can be ended
            // with it; a terminal's Ctrl-C no longer reaches it, but the
            // end of its stdin does.
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match stderr {
                Stderr::Inherit => Stdio::inherit(),
                Stderr::Discard => Stdio::null(),
            })
            .spawn()?;
        let pid = child.id();
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            kill(child);
            return Err(io::Error::other("the engine's pipes are missing"));
        };
        let (to_engine, outgoing) = crossbeam_channel::unbounded::<Outgoing>();
        let threads = thread::Builder::new()
            .name("engine reader".into())
            .spawn(move || reader(pid, stdout))
            .and_then(|_| {
                thread::Builder::new()
                    .name("engine writer".into())
                    .spawn(move || write_lines(pid, stdin, outgoing))
            });
        if let Err(error) = threads {
            kill(child);
            return Err(error);
        }
        Ok(EngineProcess {
            child: Some(child),
            pid,
            to_engine: Some(to_engine),
            from_engine,
            eof: false,
        })
    }

    /// Queues `line` (the newline is added) for the engine's stdin and
    /// returns at once. A line for an engine that has gone is lost
    /// silently: its end shows on the reading side.
    pub fn send(&self, line: &str) {
        if let Some(sender) = &self.to_engine {
            let _ = sender.send((line.to_string(), None));
        }
    }

    /// As [`EngineProcess::send`], and tells when the line was flushed.
    pub fn send_timed(&self, line: &str) -> Written {
        let (sender, report) = crossbeam_channel::bounded(1);
        let queued = Instant::now();
        if let Some(to_engine) = &self.to_engine {
            let _ = to_engine.send((line.to_string(), Some(sender)));
        }
        Written {
            queued,
            report,
            written: Cell::new(None),
        }
    }

    /// The next line, waiting until `deadline` at most.
    pub fn recv_until(&mut self, deadline: Instant) -> Recv {
        if self.eof {
            return Recv::Eof;
        }
        let timeout = deadline.saturating_duration_since(Instant::now());
        match self.from_engine.recv_timeout(timeout) {
            Ok((line, at)) => Recv::Line(line, at),
            Err(RecvTimeoutError::Timeout) => Recv::Timeout,
            Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                Recv::Eof
            }
        }
    }

    /// Discards the lines already received; `false` if the engine has
    /// closed its output.
    pub fn drain(&mut self) -> bool {
        loop {
            match self.from_engine.try_recv() {
                Ok(_) => {}
                Err(TryRecvError::Empty) => return !self.eof,
                Err(TryRecvError::Disconnected) => {
                    self.eof = true;
                    return false;
                }
            }
        }
    }

    /// The OS process id.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// How the process exited, if it has (without waiting).
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// How the process ended, for messages: `exit status: 3`,
    /// `signal: 9 (SIGKILL)`, or `still running` if it has not ended
    /// within a short wait (an engine that closed its output is usually
    /// about to exit).
    pub fn exit_description(&mut self) -> String {
        let Some(child) = &mut self.child else {
            return "ended".into();
        };
        let until = Instant::now() + EXIT_STATUS_WAIT;
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return status.to_string(),
                Ok(None) if Instant::now() < until => thread::sleep(POLL),
                Ok(None) => return "still running".into(),
                Err(error) => return format!("status unknown: {error}"),
            }
        }
    }

    /// Sends `quit`, closes the engine's stdin, and waits up to `grace`
    /// for it to exit before killing it; returns once it is gone.
    pub fn shutdown(mut self, grace: Duration) {
        if let Some(child) = self.quit() {
            reap(child, grace);
        }
    }

    /// Sends `quit` and closes stdin; the child, if not already taken.
    fn quit(&mut self) -> Option<Child> {
        if let Some(sender) = self.to_engine.take() {
            let _ = sender.send(("quit".into(), None));
        }
        self.child.take()
    }
}

impl Drop for EngineProcess {
    /// As [`EngineProcess::shutdown`] with a grace of half a second, but
    /// on a thread of its own, so the caller does not wait.
    fn drop(&mut self) {
        let Some(child) = self.quit() else {
            return;
        };
        if let Err(error) = thread::Builder::new()
            .name("engine reaper".into())
            .spawn(move || reap(child, DROP_GRACE))
        {
            log::warn!("cannot start a thread to end engine {}: {error}", self.pid);
        }
    }
}

/// Waits up to `grace` for `child` to exit, then kills it and its group.
fn reap(mut child: Child, grace: Duration) {
    let until = Instant::now() + grace;
    while Instant::now() < until {
        match child.try_wait() {
            Ok(None) => thread::sleep(POLL),
            Ok(Some(_)) | Err(_) => {
                // It exited; what it started may not have.
                kill_group(child.id());
                return;
            }
        }
    }
    kill(child);
}

/// Kills `child`'s process group (while `child`, not yet waited for,
/// still holds the group's id), then `child` itself.
fn kill(mut child: Child) {
    kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
}

/// Sends SIGKILL to every process of group `group` with the shell's
/// built-in `kill` (always there, unlike a `kill` program): the crate has
/// no unsafe code to call `kill(2)` itself, and the call is rare (once per
/// engine ended). Quiet when the group is already gone.
fn kill_group(group: u32) {
    let status = Command::new("sh")
        .args(["-c", "kill -9 -\"$1\"", "sh", &group.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if let Err(error) = status {
        log::warn!("cannot run sh to end the processes of engine {group}: {error}");
    }
}

/// Hands the engine's stdout to `deliver` as lines (without `\n` or
/// `\r\n`, invalid UTF-8 replaced, cut at [`MAX_LINE`]) with the instant
/// each was read, until end of output or until `deliver` returns `false`.
fn read_lines(pid: u32, stdout: impl Read, mut deliver: impl FnMut(String, Instant) -> bool) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    let mut finish = |line: &mut Vec<u8>| {
        let at = Instant::now();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let text = String::from_utf8_lossy(line).into_owned();
        line.clear();
        log::debug!("from engine {pid}: {text}");
        deliver(text, at)
    };
    loop {
        let buffer = match reader.fill_buf() {
            Ok([]) => break,
            Ok(buffer) => buffer,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let newline = buffer.iter().position(|&b| b == b'\n');
        let chunk = &buffer[..newline.unwrap_or(buffer.len())];
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = chunk.len() + usize::from(newline.is_some());
        reader.consume(used);
        if newline.is_some() && !finish(&mut line) {
            return;
        }
    }
    if !line.is_empty() {
        finish(&mut line);
    }
}

/// Writes queued lines to the engine's stdin until the queue closes or a
/// write fails (the engine has gone); then closes stdin.
fn write_lines(pid: u32, mut stdin: ChildStdin, lines: Receiver<Outgoing>) {
    for (line, report) in lines {
        log::debug!("to engine {pid}: {line}");
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        if let Err(error) = stdin.write_all(&bytes).and_then(|()| stdin.flush()) {
            // The reader sees the end of output and reports it.
            log::debug!("cannot write to engine {pid}: {error}");
            break;
        }
        if let Some(report) = report {
            let _ = report.send(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where tests wait at most for something that should come at once.
    const PATIENCE: Duration = Duration::from_secs(10);

    fn sh(script: &str) -> EngineCommand {
        let line = format!("sh -c {}", shlex::try_quote(script).unwrap());
        EngineCommand::parse(&line).unwrap()
    }

    fn spawn(script: &str) -> EngineProcess {
        EngineProcess::spawn(&sh(script), Stderr::Discard).unwrap()
    }

    /// Every line until end of output.
    fn all_lines(engine: &mut EngineProcess) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        let mut lines = Vec::new();
        loop {
            match engine.recv_until(deadline) {
                Recv::Line(line, _) => lines.push(line),
                Recv::Eof => return lines,
                Recv::Timeout => panic!("no end of output; so far {lines:?}"),
            }
        }
    }

    #[cfg(target_os = "linux")]
    fn running(pid: u32) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn lines_are_cut_and_cleaned() {
        let mut input = b"uciok\r\nbad \xff byte\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        input.extend(b"\nlast without newline");
        let mut lines = Vec::new();
        read_lines(0, &input[..], |line, _| {
            lines.push(line);
            true
        });
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], "uciok");
        assert_eq!(lines[1], "bad \u{fffd} byte");
        assert_eq!(lines[2].len(), MAX_LINE);
        assert_eq!(lines[3], "last without newline");
    }

    #[test]
    fn a_childs_lines_arrive_cut_and_cleaned() {
        let script = format!(
            "printf 'uciok\\r\\nbad \\377 byte\\n'; head -c {} /dev/zero | tr '\\0' x; echo; printf end",
            MAX_LINE * 3
        );
        let mut engine = spawn(&script);
        let lines = all_lines(&mut engine);
        assert_eq!(lines.len(), 4, "{:?}", lines.iter().map(String::len));
        assert_eq!(lines[0], "uciok");
        assert_eq!(lines[1], "bad \u{fffd} byte");
        assert_eq!(lines[2], "x".repeat(MAX_LINE));
        assert_eq!(lines[3], "end");
    }

    #[test]
    fn an_engine_that_exits_gives_end_of_output() {
        let mut engine = spawn("echo bye; exit 3");
        assert_eq!(all_lines(&mut engine), ["bye"]);
        assert!(matches!(engine.recv_until(Instant::now()), Recv::Eof));
        assert!(!engine.drain());
        assert!(engine.exit_description().contains('3'));
        assert_eq!(engine.exit_status().and_then(|s| s.code()), Some(3));
    }

    #[test]
    fn a_lines_timestamp_is_when_it_was_read() {
        let mut engine = spawn("echo first; sleep 0.3; echo second; exec cat");
        // Both lines are read while nobody receives them.
        thread::sleep(Duration::from_millis(1200));
        let received = Instant::now();
        let deadline = received + PATIENCE;
        let (Recv::Line(_, first), Recv::Line(_, second)) =
            (engine.recv_until(deadline), engine.recv_until(deadline))
        else {
            panic!("two lines expected");
        };
        assert!(second.duration_since(first) >= Duration::from_millis(250));
        assert!(received.duration_since(second) >= Duration::from_millis(300));
        assert!(matches!(
            engine.recv_until(Instant::now() + Duration::from_millis(50)),
            Recv::Timeout
        ));
    }

    #[test]
    fn send_timed_reports_when_the_line_was_flushed() {
        let mut engine = spawn("read line; echo \"got $line\"; exec cat >/dev/null");
        let go = engine.send_timed("go");
        let Recv::Line(line, _) = engine.recv_until(Instant::now() + PATIENCE) else {
            panic!("no reply");
        };
        assert_eq!(line, "got go");
        // The writer reports just after the flush, which the reply proves.
        let until = Instant::now() + PATIENCE;
        while go.written.get().is_none() && Instant::now() < until {
            go.instant();
            thread::sleep(Duration::from_millis(1));
        }
        let flushed = go.written.get().expect("no flush reported");
        assert!(flushed >= go.queued);
        assert_eq!(go.instant(), flushed);
    }

    #[test]
    fn an_engine_that_stops_reading_does_not_block_the_sender() {
        let engine = spawn("exec sleep 30");
        let started = Instant::now();
        let line = "x".repeat(1000);
        // Far more than a pipe holds.
        for _ in 0..2000 {
            engine.send(&line);
        }
        assert!(started.elapsed() < Duration::from_secs(1));
        engine.shutdown(Duration::ZERO);
    }

    #[test]
    fn an_engine_that_quits_is_not_killed() {
        let engine = spawn("while read line; do [ \"$line\" = quit ] && exit 0; done; exit 1");
        let started = Instant::now();
        engine.shutdown(PATIENCE);
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn shutdown_kills_an_engine_that_ignores_quit() {
        let engine = spawn("exec sleep 30");
        let pid = engine.id();
        let started = Instant::now();
        engine.shutdown(Duration::from_millis(100));
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert!(!running(pid));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn drop_ends_the_engine_without_waiting() {
        let engine = spawn("exec sleep 30");
        let pid = engine.id();
        let started = Instant::now();
        drop(engine);
        assert!(started.elapsed() < DROP_GRACE / 2);
        let until = Instant::now() + PATIENCE;
        while running(pid) && Instant::now() < until {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(!running(pid));
    }

    /// A zombie has ended; only its parent has not looked yet.
    #[cfg(target_os = "linux")]
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

    /// An engine that starts a helper holding its stdout, says the
    /// helper's pid, and (if `then_exit`) exits at once.
    #[cfg(target_os = "linux")]
    fn with_helper(then_exit: bool) -> (EngineProcess, u32) {
        let script = format!(
            "sleep 60 & echo $!; {}",
            if then_exit { "exit 0" } else { "exec sleep 60" }
        );
        let mut engine = spawn(&script);
        let Recv::Line(pid, _) = engine.recv_until(Instant::now() + PATIENCE) else {
            panic!("no pid");
        };
        let pid: u32 = pid.parse().unwrap();
        assert!(alive(pid));
        (engine, pid)
    }

    #[cfg(target_os = "linux")]
    fn assert_ends(pid: u32) {
        let until = Instant::now() + PATIENCE;
        while alive(pid) && Instant::now() < until {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "process {pid} outlived its engine");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn ending_an_engine_ends_the_processes_it_started() {
        // An engine that exited by itself, leaving a helper behind.
        let (engine, helper) = with_helper(true);
        engine.shutdown(PATIENCE);
        assert_ends(helper);
        // An engine that must be killed.
        let (engine, helper) = with_helper(false);
        engine.shutdown(Duration::from_millis(50));
        assert_ends(helper);
        // A dropped engine.
        let (engine, helper) = with_helper(false);
        drop(engine);
        assert_ends(helper);
    }

    #[test]
    fn a_handler_gets_each_line_then_the_end() {
        let (sender, receiver) = crossbeam_channel::unbounded();
        let mut engine = EngineProcess::spawn_with_handler(
            &sh("echo one; echo two"),
            Stderr::Discard,
            move |line| {
                let _ = sender.send(line);
            },
        )
        .unwrap();
        let got: Vec<Option<String>> = (0..3)
            .map(|_| receiver.recv_timeout(PATIENCE).unwrap())
            .collect();
        assert_eq!(got, [Some("one".into()), Some("two".into()), None]);
        // The lines went to the handler: none are queued.
        assert!(matches!(engine.recv_until(Instant::now()), Recv::Timeout));
    }
}

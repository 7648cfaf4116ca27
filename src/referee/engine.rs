//! One engine process, driven over pipes without ever blocking the referee.
//!
//! A reader thread turns the engine's stdout into lines (stamped with the
//! instant they were read) on a bounded channel; a writer thread feeds its
//! stdin from another channel, so a engine that stops reading cannot block
//! the referee on a full pipe. Every wait has a deadline. Dropping an
//! [`EngineProcess`] sends `quit`, waits briefly, then kills the process.

use std::cell::Cell;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};

/// Lines longer than this are cut (the rest of the line is dropped).
const MAX_LINE: usize = 1 << 16;
/// Lines buffered from an engine's stdout before its reader thread waits.
const LINE_BUFFER: usize = 1024;
/// How long a dropped engine gets to exit after `quit` before it is killed.
const QUIT_GRACE: Duration = Duration::from_millis(300);
/// How long to wait for an exit status after an engine closed its output.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(200);

/// What reading from the engine gave.
#[derive(Debug)]
pub enum Recv {
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

/// A running engine process. Killed on drop.
pub struct EngineProcess {
    child: Child,
    to_engine: Option<Sender<Outgoing>>,
    from_engine: Receiver<(String, Instant)>,
    eof: bool,
}

impl EngineProcess {
    /// Starts `command` (program and arguments) with piped stdin and stdout;
    /// its stderr is discarded.
    ///
    /// # Errors
    /// When the program cannot be started, or the threads cannot be.
    pub fn start(command: &[String]) -> io::Result<EngineProcess> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the engine's pipes are missing"));
        };
        let (line_sender, from_engine) = crossbeam_channel::bounded(LINE_BUFFER);
        let (to_engine, line_receiver) = crossbeam_channel::unbounded::<Outgoing>();
        let threads = thread::Builder::new()
            .name("engine reader".into())
            .spawn(move || read_lines(stdout, line_sender))
            .and_then(|_| {
                thread::Builder::new()
                    .name("engine writer".into())
                    .spawn(move || write_lines(stdin, line_receiver))
            });
        if let Err(error) = threads {
            let _ = child.kill();
            let _ = child.wait();
            return Err(error);
        }
        Ok(EngineProcess {
            child,
            to_engine: Some(to_engine),
            from_engine,
            eof: false,
        })
    }

    /// Queues `line` for the engine's stdin and returns at once. A write
    /// to an engine that has gone is lost silently; its end shows on the
    /// reading side as [`Recv::Eof`].
    pub fn send(&mut self, line: &str) {
        log::debug!("referee > engine {}: {line}", self.child.id());
        if let Some(sender) = &self.to_engine {
            let _ = sender.send((line.to_string(), None));
        }
    }

    /// As [`EngineProcess::send`], and reports when the line was written.
    pub fn send_timed(&mut self, line: &str) -> Written {
        log::debug!("referee > engine {}: {line}", self.child.id());
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
            Ok((line, at)) => {
                log::debug!("referee < engine {}: {line}", self.child.id());
                Recv::Line(line, at)
            }
            Err(RecvTimeoutError::Timeout) => Recv::Timeout,
            Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                Recv::Eof
            }
        }
    }

    /// Discards lines already received; `false` if the engine has closed
    /// its output.
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

    /// How the process ended, for messages: `exit status 3`, `signal 9`,
    /// or `still running` if it has not ended within a short wait.
    pub fn exit_description(&mut self) -> String {
        let until = Instant::now() + EXIT_STATUS_WAIT;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.to_string(),
                Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(5)),
                Ok(None) => return "still running".into(),
                Err(error) => return format!("status unknown: {error}"),
            }
        }
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        if let Some(sender) = self.to_engine.take() {
            let _ = sender.send(("quit".into(), None));
        }
        let until = Instant::now() + QUIT_GRACE;
        while Instant::now() < until {
            match self.child.try_wait() {
                Ok(None) => thread::sleep(Duration::from_millis(2)),
                Ok(Some(_)) | Err(_) => return,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Forwards the engine's stdout as lines (without `\n` or `\r\n`, invalid
/// UTF-8 replaced, cut at [`MAX_LINE`]) until end of output or until the
/// referee stops listening.
fn read_lines(stdout: impl Read, lines: Sender<(String, Instant)>) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
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
        if newline.is_some() && !send_line(&mut line, &lines) {
            return;
        }
    }
    if !line.is_empty() {
        send_line(&mut line, &lines);
    }
}

fn send_line(line: &mut Vec<u8>, lines: &Sender<(String, Instant)>) -> bool {
    let at = Instant::now();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    let text = String::from_utf8_lossy(line).into_owned();
    line.clear();
    lines.send((text, at)).is_ok()
}

/// Writes queued lines to the engine's stdin until the queue closes or a
/// write fails (the engine has gone); then closes stdin.
fn write_lines(mut stdin: ChildStdin, lines: Receiver<Outgoing>) {
    for (line, report) in lines {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        if stdin
            .write_all(&bytes)
            .and_then(|()| stdin.flush())
            .is_err()
        {
            break;
        }
        if let Some(report) = report {
            let _ = report.send(Instant::now());
        }
    }
}

/// An option an engine advertised with an `option name ... type ...` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    pub name: String,
    pub kind: OptionKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionKind {
    Check,
    Spin { min: i64, max: i64 },
    Combo(Vec<String>),
    Button,
    String,
}

/// Reads an `option name <name> type <type> [default ..] [min ..] [max ..]
/// [var ..]...` line; `None` if it is not one (or names an unknown type).
pub fn parse_option_line(line: &str) -> Option<OptionSpec> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.first() != Some(&"option") || tokens.get(1) != Some(&"name") {
        return None;
    }
    let type_at = tokens.iter().position(|&t| t == "type")?;
    let name = tokens.get(2..type_at)?.join(" ");
    if name.is_empty() {
        return None;
    }
    let rest = &tokens[type_at + 1..];
    let value_after = |key: &str| {
        rest.iter()
            .position(|&t| t == key)
            .and_then(|i| rest.get(i + 1))
            .copied()
    };
    let kind = match *rest.first()? {
        "check" => OptionKind::Check,
        "spin" => OptionKind::Spin {
            min: value_after("min")?.parse().ok()?,
            max: value_after("max")?.parse().ok()?,
        },
        "combo" => OptionKind::Combo(
            rest.windows(2)
                .filter(|pair| pair[0] == "var")
                .map(|pair| pair[1].to_string())
                .collect(),
        ),
        "button" => OptionKind::Button,
        "string" => OptionKind::String,
        _ => return None,
    };
    Some(OptionSpec { name, kind })
}

/// What an engine said in its handshake.
#[derive(Clone, Debug, Default)]
pub struct EngineInfo {
    /// From `id name`.
    pub name: Option<String>,
    pub options: Vec<OptionSpec>,
}

/// A fault of an engine: the game (or, in the probe before the match, the
/// match) cannot go on with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Did not answer in time (and not because of its clock).
    Stalled(String),
    /// Closed its output or could not be started.
    Exited(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Stalled(what) | Fault::Exited(what) => f.write_str(what),
        }
    }
}

/// Sends `uci` and reads `id name` and `option` lines up to `uciok`.
///
/// # Errors
/// A [`Fault`] if `uciok` does not come within `timeout` or the engine
/// exits.
pub fn handshake(engine: &mut EngineProcess, timeout: Duration) -> Result<EngineInfo, Fault> {
    engine.send("uci");
    let deadline = super::game::later(Instant::now(), timeout);
    let mut info = EngineInfo::default();
    loop {
        match engine.recv_until(deadline) {
            Recv::Line(line, _) => {
                let trimmed = line.trim();
                if trimmed == "uciok" {
                    return Ok(info);
                }
                if let Some(name) = trimmed.strip_prefix("id name ") {
                    info.name = Some(name.trim().to_string());
                } else if let Some(option) = parse_option_line(trimmed) {
                    info.options.push(option);
                }
            }
            Recv::Timeout => {
                return Err(Fault::Stalled(format!(
                    "sent no uciok within {} s of uci",
                    timeout.as_secs_f64()
                )));
            }
            Recv::Eof => {
                let how = engine.exit_description();
                return Err(Fault::Exited(format!("exited before uciok ({how})")));
            }
        }
    }
}

/// Sends `isready` and waits for `readyok`.
///
/// # Errors
/// A [`Fault`] if `readyok` does not come within `timeout` or the engine
/// exits.
pub fn ready(engine: &mut EngineProcess, timeout: Duration) -> Result<(), Fault> {
    engine.send("isready");
    let deadline = super::game::later(Instant::now(), timeout);
    loop {
        match engine.recv_until(deadline) {
            Recv::Line(line, _) if line.trim() == "readyok" => return Ok(()),
            Recv::Line(..) => {}
            Recv::Timeout => {
                return Err(Fault::Stalled(format!(
                    "sent no readyok within {} s of isready",
                    timeout.as_secs_f64()
                )));
            }
            Recv::Eof => {
                let how = engine.exit_description();
                return Err(Fault::Exited(format!("exited before readyok ({how})")));
            }
        }
    }
}

/// Checks a `Name=Value` (or, for a button, `Name`) setting against the
/// options an engine advertised and returns its `setoption` line.
///
/// # Errors
/// A message when the engine has no such option or the value does not fit.
pub fn setoption_line(
    options: &[OptionSpec],
    name: &str,
    value: Option<&str>,
) -> Result<String, String> {
    let name = name.trim();
    let option = options
        .iter()
        .find(|o| o.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            let known: Vec<&str> = options.iter().map(|o| o.name.as_str()).collect();
            format!(
                "the engine has no option '{name}' (it has: {})",
                known.join(", ")
            )
        })?;
    let value = value.map(str::trim);
    let checked = match (&option.kind, value) {
        (OptionKind::Button, None) => None,
        (OptionKind::Button, Some(_)) => {
            return Err(format!("'{}' is a button and takes no value", option.name));
        }
        (_, None) => return Err(format!("option '{}' needs a value", option.name)),
        (OptionKind::Check, Some(v)) => {
            if !(v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false")) {
                return Err(format!("'{}' takes true or false, not '{v}'", option.name));
            }
            Some(v.to_ascii_lowercase())
        }
        (OptionKind::Spin { min, max }, Some(v)) => match v.parse::<i64>() {
            Ok(n) if (*min..=*max).contains(&n) => Some(n.to_string()),
            _ => {
                return Err(format!(
                    "'{}' takes a whole number from {min} to {max}, not '{v}'",
                    option.name
                ));
            }
        },
        (OptionKind::Combo(vars), Some(v)) => {
            match vars.iter().find(|var| var.eq_ignore_ascii_case(v)) {
                Some(var) => Some(var.clone()),
                None => {
                    return Err(format!(
                        "'{}' takes one of {}, not '{v}'",
                        option.name,
                        vars.join(", ")
                    ));
                }
            }
        }
        (OptionKind::String, Some(v)) => Some(v.to_string()),
    };
    Ok(match checked {
        Some(value) => format!("setoption name {} value {value}", option.name),
        None => format!("setoption name {}", option.name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Vec<OptionSpec> {
        [
            "option name Hash type spin default 16 min 1 max 16384",
            "option name Clear Hash type button",
            "option name Rules type combo default textbook var textbook var classic",
            "option name Move Overhead type spin default 10 min 0 max 5000",
            "option name Ponder type check default false",
            "option name Book File type string default <empty>",
        ]
        .iter()
        .map(|line| parse_option_line(line).unwrap())
        .collect()
    }

    #[test]
    fn reads_option_lines() {
        let options = options();
        assert_eq!(options[0].kind, OptionKind::Spin { min: 1, max: 16384 });
        assert_eq!(options[1].name, "Clear Hash");
        assert_eq!(
            options[2].kind,
            OptionKind::Combo(vec!["textbook".into(), "classic".into()])
        );
        assert_eq!(options[3].name, "Move Overhead");
        assert_eq!(parse_option_line("option name X type weird"), None);
        assert_eq!(parse_option_line("id name X"), None);
        assert_eq!(parse_option_line("option name type check"), None);
        assert_eq!(parse_option_line("option name S type spin min 1"), None);
    }

    #[test]
    fn checks_settings_against_the_advertised_options() {
        let options = options();
        let ok = |name, value| setoption_line(&options, name, value).unwrap();
        assert_eq!(ok("hash", Some("64")), "setoption name Hash value 64");
        assert_eq!(
            ok("move overhead", Some(" 30 ")),
            "setoption name Move Overhead value 30"
        );
        assert_eq!(
            ok("Rules", Some("CLASSIC")),
            "setoption name Rules value classic"
        );
        assert_eq!(
            ok("Ponder", Some("True")),
            "setoption name Ponder value true"
        );
        assert_eq!(ok("Clear Hash", None), "setoption name Clear Hash");
        assert_eq!(
            ok("Book File", Some("a b.txt")),
            "setoption name Book File value a b.txt"
        );
        let error = |name, value| setoption_line(&options, name, value).unwrap_err();
        assert!(error("Threads", Some("2")).contains("no option 'Threads'"));
        assert!(error("Hash", Some("0")).contains("from 1 to 16384"));
        assert!(error("Hash", Some("x")).contains("not 'x'"));
        assert!(error("Hash", None).contains("needs a value"));
        assert!(error("Rules", Some("fast")).contains("textbook, classic"));
        assert!(error("Ponder", Some("yes")).contains("true or false"));
        assert!(error("Clear Hash", Some("1")).contains("button"));
    }

    #[test]
    fn lines_are_cut_and_cleaned() {
        let mut input = b"uciok\r\nbad \xff byte\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        input.extend(b"\nlast without newline");
        let (sender, receiver) = crossbeam_channel::unbounded();
        read_lines(&input[..], sender);
        let lines: Vec<String> = receiver.iter().map(|(line, _)| line).collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], "uciok");
        assert_eq!(lines[1], "bad \u{fffd} byte");
        assert_eq!(lines[2].len(), MAX_LINE);
        assert_eq!(lines[3], "last without newline");
    }
}

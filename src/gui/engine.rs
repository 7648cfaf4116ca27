//! The engine as a child process, and the protocol.md lines it prints.
//!
//! [`EngineProcess`] owns the child: a writer thread feeds its stdin (so a
//! stalled engine never blocks the server) and a reader thread hands each
//! stdout line to a callback. The child is told to `quit` and then killed
//! when the process value is dropped.

use std::fmt;
use std::io::{self, BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Sender};
use std::thread;
use std::time::{Duration, Instant};

/// How long a dropped engine gets to exit after `quit` before it is killed.
const QUIT_GRACE: Duration = Duration::from_millis(500);

/// The program the GUI runs as its engine, fixed when the server starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineCommand {
    program: String,
    args: Vec<String>,
}

impl EngineCommand {
    /// This executable with no subcommand: the built-in engine.
    ///
    /// # Errors
    /// When the path of the running executable cannot be found.
    pub fn builtin() -> io::Result<EngineCommand> {
        let exe = std::env::current_exe()?;
        Ok(EngineCommand {
            program: exe.to_string_lossy().into_owned(),
            args: Vec::new(),
        })
    }

    /// A command line split as a POSIX shell would (quotes, escapes), but
    /// run directly, not by a shell.
    ///
    /// # Errors
    /// A message when the line is empty or its quoting is unbalanced.
    pub fn parse(line: &str) -> Result<EngineCommand, String> {
        let words = shlex::split(line).ok_or_else(|| {
            format!("cannot split the engine command '{line}' (unbalanced quotes?)")
        })?;
        let mut words = words.into_iter();
        let program = words
            .next()
            .ok_or_else(|| "the engine command is empty".to_string())?;
        Ok(EngineCommand {
            program,
            args: words.collect(),
        })
    }
}

impl fmt::Display for EngineCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words = std::iter::once(&self.program).chain(&self.args);
        let quoted: Vec<String> = words
            .map(|word| shlex::try_quote(word).map_or_else(|_| word.clone(), |q| q.into_owned()))
            .collect();
        f.write_str(&quoted.join(" "))
    }
}

/// A running engine.
pub struct EngineProcess {
    child: Option<Child>,
    /// Lines for the writer thread; dropping it closes the engine's stdin.
    input: Option<Sender<String>>,
}

impl EngineProcess {
    /// Starts the engine with piped stdin and stdout (its stderr is ours).
    /// `on_output` is called on a reader thread with each stdout line, and
    /// once with `None` when the engine closes its stdout.
    ///
    /// # Errors
    /// When the program cannot be started.
    pub fn spawn(
        command: &EngineCommand,
        mut on_output: impl FnMut(Option<String>) + Send + 'static,
    ) -> io::Result<EngineProcess> {
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the engine's pipes were not set up"));
        };
        let (input, lines) = mpsc::channel::<String>();
        thread::Builder::new()
            .name("engine stdin".into())
            .spawn(move || {
                for line in lines {
                    log::debug!("to engine: {line}");
                    let written = stdin
                        .write_all(line.as_bytes())
                        .and_then(|()| stdin.write_all(b"\n"))
                        .and_then(|()| stdin.flush());
                    if let Err(error) = written {
                        // The reader sees the end of output and reports it.
                        log::info!("cannot write to the engine: {error}");
                        break;
                    }
                }
            })?;
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
                    let line = String::from_utf8_lossy(&buffer);
                    let line = line.trim_end_matches(['\n', '\r']);
                    log::debug!("from engine: {line}");
                    on_output(Some(line.to_string()));
                }
                on_output(None);
            })?;
        Ok(EngineProcess {
            child: Some(child),
            input: Some(input),
        })
    }

    /// Sends one command line (the newline is added).
    pub fn send(&self, line: &str) {
        if let Some(input) = &self.input {
            // A send fails only once the writer has stopped, after a write
            // error; the reader reports the engine's end.
            let _ = input.send(line.to_string());
        }
    }

    /// The OS process id.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// How the engine exited, if it has.
    pub fn exit_status(&mut self) -> Option<String> {
        let child = self.child.as_mut()?;
        match child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            _ => None,
        }
    }
}

impl Drop for EngineProcess {
    /// Sends `quit`, closes the engine's stdin, and kills it if it has not
    /// exited after a grace period (on a thread of its own, so the caller
    /// does not wait).
    fn drop(&mut self) {
        self.send("quit");
        self.input = None;
        let Some(mut child) = self.child.take() else {
            return;
        };
        let reaper = move || {
            let deadline = Instant::now() + QUIT_GRACE;
            while Instant::now() < deadline {
                match child.try_wait() {
                    Ok(Some(_)) | Err(_) => return,
                    Ok(None) => thread::sleep(Duration::from_millis(10)),
                }
            }
            let _ = child.kill();
            let _ = child.wait();
        };
        if let Err(error) = thread::Builder::new()
            .name("engine reaper".into())
            .spawn(reaper)
        {
            log::warn!("cannot start a thread to end the engine: {error}");
        }
    }
}

/// A search score as the engine reports it, from the point of view of the
/// side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Evaluation units (a car's move is worth about 30).
    Cp(i64),
    /// The side to move wins (`n > 0`) or loses (`n < 0`) after `|n|` more
    /// moves of its own.
    Mate(i64),
}

/// The fields of a search `info` line the GUI shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    pub depth: Option<u32>,
    pub seldepth: Option<u32>,
    pub multipv: Option<u32>,
    pub score: Option<Score>,
    pub nodes: Option<u64>,
    pub nps: Option<u64>,
    pub time: Option<u64>,
    pub pv: Vec<String>,
}

/// Reads a search `info` line; `None` for any other line, including
/// `info string`. Unknown fields are skipped; a field with a bad value is
/// left out.
pub fn parse_info(line: &str) -> Option<Info> {
    let mut words = line.split_whitespace().peekable();
    if words.next() != Some("info") || words.peek() == Some(&"string") {
        return None;
    }
    let mut info = Info::default();
    while let Some(word) = words.next() {
        match word {
            "depth" => info.depth = words.next().and_then(|w| w.parse().ok()),
            "seldepth" => info.seldepth = words.next().and_then(|w| w.parse().ok()),
            "multipv" => info.multipv = words.next().and_then(|w| w.parse().ok()),
            "nodes" => info.nodes = words.next().and_then(|w| w.parse().ok()),
            "nps" => info.nps = words.next().and_then(|w| w.parse().ok()),
            "time" => info.time = words.next().and_then(|w| w.parse().ok()),
            "score" => {
                let kind = words.next();
                let value = words.next().and_then(|w| w.parse().ok());
                info.score = match (kind, value) {
                    (Some("cp"), Some(v)) => Some(Score::Cp(v)),
                    (Some("mate"), Some(v)) => Some(Score::Mate(v)),
                    _ => None,
                };
            }
            // UCI puts the variation last (only `string` may follow it).
            "pv" => {
                info.pv = words
                    .by_ref()
                    .take_while(|&w| w != "string")
                    .map(str::to_string)
                    .collect();
            }
            "string" => break,
            _ => {}
        }
    }
    Some(info)
}

/// The move of a `bestmove` line (`(none)` included); `None` for other lines.
pub fn parse_bestmove(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace();
    (words.next() == Some("bestmove")).then(|| words.next().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_info_lines() {
        let line = "info depth 19 seldepth 19 multipv 1 score mate 10 nodes 13298 nps 13101477 \
                    hashfull 1 time 1 pv a3b3 b1b2 b3c3";
        let info = parse_info(line).unwrap();
        assert_eq!(info.depth, Some(19));
        assert_eq!(info.seldepth, Some(19));
        assert_eq!(info.multipv, Some(1));
        assert_eq!(info.score, Some(Score::Mate(10)));
        assert_eq!(info.nodes, Some(13298));
        assert_eq!(info.nps, Some(13101477));
        assert_eq!(info.time, Some(1));
        assert_eq!(info.pv, ["a3b3", "b1b2", "b3c3"]);
        let info = parse_info("info score cp -38 lowerbound depth x nodes 5").unwrap();
        assert_eq!(info.score, Some(Score::Cp(-38)));
        assert_eq!(info.depth, None);
        assert_eq!(info.nodes, Some(5));
        assert_eq!(parse_info("info string game over"), None);
        assert_eq!(parse_info("bestmove a3b3"), None);
        assert_eq!(parse_info("info"), Some(Info::default()));
    }

    #[test]
    fn reads_bestmove_lines() {
        assert_eq!(parse_bestmove("bestmove a3b3 ponder b1b2"), Some("a3b3"));
        assert_eq!(parse_bestmove("bestmove (none)"), Some("(none)"));
        assert_eq!(parse_bestmove("bestmove"), Some(""));
        assert_eq!(parse_bestmove("info depth 1"), None);
    }

    #[test]
    fn splits_engine_command_lines() {
        let command = EngineCommand::parse("'my engine' --threads 2 \"a b\"").unwrap();
        assert_eq!(command.program, "my engine");
        assert_eq!(command.args, ["--threads", "2", "a b"]);
        assert_eq!(command.to_string(), "'my engine' --threads 2 'a b'");
        assert!(EngineCommand::parse("").is_err());
        assert!(EngineCommand::parse("   ").is_err());
        assert!(EngineCommand::parse("engine 'unbalanced").is_err());
    }
}

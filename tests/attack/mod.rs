//! What the self-attack tests share: the engine driven over pipes with a
//! deadline on every wait, a seeded random source, and `dodgem gui` with a
//! raw HTTP client. Nothing here may hang: every wait has a deadline.

#![allow(dead_code)] // Each test file uses a part.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_dodgem");
/// A generous bound for what should happen promptly (two loaded cores).
pub const LONG: Duration = Duration::from_secs(20);

/// A deterministic random source (SplitMix64): a failing seed reproduces.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// A running engine (`dodgem` with no arguments).
pub struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every line read so far, for failure messages.
    pub transcript: Vec<String>,
}

impl Engine {
    pub fn start() -> Engine {
        let mut child = Command::new(BIN)
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start the engine");
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if line.last() == Some(&b'\n') {
                            line.pop();
                        }
                        // Kept byte for byte (lossy only where not UTF-8):
                        // the tests look for control bytes.
                        let text = String::from_utf8_lossy(&line).into_owned();
                        if sender.send(text).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stdin = child.stdin.take();
        Engine {
            child,
            stdin,
            lines,
            transcript: Vec::new(),
        }
    }

    pub fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        if let Some(stdin) = &mut self.stdin {
            let _ = stdin.write_all(bytes).and_then(|()| stdin.flush());
        }
    }

    /// The next line, or `None` after `timeout` or at end of output.
    pub fn recv(&mut self, timeout: Duration) -> Option<String> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                self.transcript.push(line.clone());
                Some(line)
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Lines up to and including the first for which `done` holds;
    /// panics after `timeout`, naming `what`.
    pub fn until(
        &mut self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv(left) {
                Some(line) => {
                    let finished = done(&line);
                    lines.push(line);
                    if finished {
                        return lines;
                    }
                }
                None => panic!(
                    "no {what} within {timeout:?}; last lines: {:?}",
                    self.tail()
                ),
            }
        }
    }

    /// Sends `isready` and returns the lines before its `readyok`.
    pub fn sync(&mut self) -> Vec<String> {
        self.send("isready");
        let mut lines = self.until("readyok", LONG, |l| l == "readyok");
        lines.pop();
        lines
    }

    /// Sends a `go` and returns its lines up to and including `bestmove`.
    pub fn go(&mut self, go: &str) -> Vec<String> {
        self.send(go);
        self.until("bestmove", LONG, |l| l.starts_with("bestmove"))
    }

    /// The `Fen:` line of `d`.
    pub fn fen(&mut self) -> String {
        self.send("d");
        let lines = self.until("Fen line", LONG, |l| l.starts_with("Fen: "));
        lines.last().unwrap()["Fen: ".len()..].to_string()
    }

    pub fn tail(&self) -> Vec<String> {
        let from = self.transcript.len().saturating_sub(12);
        self.transcript[from..].to_vec()
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends `quit` and waits for the exit.
    pub fn quit(mut self) {
        self.send("quit");
        self.stdin = None;
        let deadline = Instant::now() + LONG;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                assert!(status.success(), "exit {status}; {:?}", self.tail());
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        panic!("no exit within {LONG:?} after quit; {:?}", self.tail());
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A line the protocol allows on stdout: a reply keyword first, no
/// control bytes.
pub fn is_protocol_line(line: &str) -> bool {
    const FIRST_WORDS: [&str; 12] = [
        "id", "uciok", "readyok", "bestmove", "info", "option", "Fen:", "Key:", "Nodes", "Time:",
        "solve", "eval",
    ];
    let first = line.split(' ').next().unwrap_or("");
    !line.chars().any(char::is_control)
        && (FIRST_WORDS.contains(&first) || is_board_line(line) || line.is_empty())
}

/// A line of the `d` board picture and its labels, or a `perft` divide
/// line (`a3b3: 12`), or an `eval` breakdown line.
fn is_board_line(line: &str) -> bool {
    line.starts_with(' ')
        || line.starts_with('+')
        || line.starts_with('|')
        || line.chars().next().is_some_and(|c| c.is_ascii_digit())
        || line.split(':').next().is_some_and(|head| {
            head.len() <= 24 && head.chars().all(|c| c.is_ascii_alphanumeric() || c == ' ')
        })
}

/// A running `dodgem gui`.
pub struct Gui {
    child: Child,
    pub port: u16,
}

impl Gui {
    pub fn start() -> Gui {
        let mut child = Command::new(BIN)
            .args(["gui", "--port", "0"])
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start dodgem gui");
        let stdout = child.stdout.take().unwrap();
        let (sender, receiver) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let line = receiver.recv_timeout(LONG).expect("no address line");
        let port = line
            .trim()
            .strip_prefix("http://127.0.0.1:")
            .and_then(|rest| rest.strip_suffix('/'))
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("not an address line: {line:?}"));
        Gui { child, port }
    }

    /// Sends raw bytes on a new connection and returns the status of the
    /// answer (`None`: the connection closed with no status line).
    pub fn raw(&self, request: &[u8]) -> Option<u16> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("cannot connect");
        stream.set_read_timeout(Some(LONG)).unwrap();
        stream.set_write_timeout(Some(LONG)).unwrap();
        let _ = stream.write_all(request);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut response = Vec::new();
        let _ = stream.take(1 << 20).read_to_end(&mut response);
        let text = String::from_utf8_lossy(&response);
        text.strip_prefix("HTTP/1.1 ")
            .or_else(|| text.strip_prefix("HTTP/1.0 "))
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse().ok())
    }

    /// The `Host` header this server accepts.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The server's thread count (Linux).
    pub fn threads(&self) -> usize {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server is running");
        status
            .lines()
            .find_map(|line| line.strip_prefix("Threads:"))
            .and_then(|n| n.trim().parse().ok())
            .expect("a Threads line")
    }
}

impl Drop for Gui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

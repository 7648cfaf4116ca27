//! `dodgem gui` for the tests: [`Gui`] starts a server on a free port
//! (`--port 0`), reads the address it prints, and talks to it with a small
//! hand-written HTTP/1.1 client: [`Gui::raw`] for a well-formed exchange,
//! [`Gui::status_of`] for hostile bytes. Every wait has a deadline, so a
//! test can fail but not hang; the server is killed when the value drops.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{LONG, dodgem};

/// A running `dodgem gui`.
pub struct Gui {
    child: Child,
    pub port: u16,
}

impl Gui {
    pub fn start() -> Gui {
        Gui::start_with(&[])
    }

    /// Starts `dodgem gui --port 0 <args>`.
    pub fn start_with(args: &[&str]) -> Gui {
        let mut child = dodgem(&["gui", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("cannot start dodgem gui");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, receiver) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let line = match receiver.recv_timeout(LONG) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("dodgem gui printed no address within {LONG:?}");
            }
        };
        let port = line
            .trim()
            .strip_prefix("http://127.0.0.1:")
            .and_then(|rest| rest.strip_suffix('/'))
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("not an address line: {line:?}"));
        Gui { child, port }
    }

    /// The `Host` header this server accepts.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Sends a raw request and returns the status, the headers (lowercased
    /// names) and the body; panics on anything but a well-formed answer.
    pub fn raw(&self, request: &[u8]) -> (u16, Vec<(String, String)>, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("cannot connect");
        stream.set_read_timeout(Some(LONG)).unwrap();
        stream.write_all(request).expect("cannot send the request");
        let mut response = Vec::new();
        stream
            .read_to_end(&mut response)
            .expect("cannot read the response");
        let text = String::from_utf8(response).expect("a UTF-8 response");
        let (head, body) = text
            .split_once("\r\n\r\n")
            .unwrap_or_else(|| panic!("no header end in {text:?}"));
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no status in {head:?}"));
        let headers = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_lowercase(), value.trim().to_string()))
            .collect();
        (status, headers, body.to_string())
    }

    /// Sends any bytes (a hostile request) on a new connection, closes the
    /// sending side, and returns the status of the answer; `None` if the
    /// connection closed with no status line. Never panics on what the
    /// server does, only if it cannot be reached.
    pub fn status_of(&self, request: &[u8]) -> Option<u16> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("cannot connect");
        stream.set_read_timeout(Some(LONG)).unwrap();
        stream.set_write_timeout(Some(LONG)).unwrap();
        let _ = stream.write_all(request);
        let _ = stream.shutdown(Shutdown::Write);
        let mut response = Vec::new();
        let _ = stream.take(1 << 20).read_to_end(&mut response);
        let text = String::from_utf8_lossy(&response);
        text.strip_prefix("HTTP/1.1 ")
            .or_else(|| text.strip_prefix("HTTP/1.0 "))
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse().ok())
    }

    pub fn request(&self, method: &str, path: &str, headers: &[&str], body: &str) -> (u16, String) {
        let mut text = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.host(),
            body.len()
        );
        for header in headers {
            text.push_str(header);
            text.push_str("\r\n");
        }
        text.push_str("\r\n");
        text.push_str(body);
        let (status, _, body) = self.raw(text.as_bytes());
        (status, body)
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        let (status, body) = self.request("GET", path, &[], "");
        (status, parse(&body))
    }

    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let (status, body) = self.request(
            "POST",
            path,
            &["Content-Type: application/json"],
            &body.to_string(),
        );
        (status, parse(&body))
    }

    /// A POST that must succeed; returns the state.
    pub fn ok(&self, path: &str, body: Value) -> Value {
        let (status, state) = self.post(path, &body);
        assert_eq!(status, 200, "POST {path} {body}: {state}");
        state
    }

    /// A request that must fail with `status` and a message containing
    /// `needle`.
    pub fn refused(&self, path: &str, body: Value, status: u16, needle: &str) {
        let (got, reply) = self.post(path, &body);
        assert_eq!(got, status, "POST {path} {body}: {reply}");
        let message = reply["error"].as_str().unwrap_or_default();
        assert!(
            message.contains(needle),
            "POST {path} {body}: message {message:?} lacks {needle:?}"
        );
    }

    pub fn state(&self) -> Value {
        let (status, state) = self.get("/api/state");
        assert_eq!(status, 200, "{state}");
        state
    }

    /// Polls the state until `done` holds; panics after `timeout`.
    pub fn wait(&self, what: &str, timeout: Duration, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let state = self.state();
            if done(&state) {
                return state;
            }
            if Instant::now() > deadline {
                panic!("not {what} within {timeout:?}; last state: {state:#}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait_ready(&self) -> Value {
        self.wait("ready", LONG, |s| s["engine"]["status"] == "ready")
    }

    pub fn wait_turn(&self, turn: &str) -> Value {
        self.wait(&format!("turn {turn}"), LONG, |s| {
            s["turn"] == turn && s["engine"]["status"] == "ready"
        })
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

/// A JSON body, or a panic quoting it.
pub fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|error| panic!("not JSON ({error}): {body:?}"))
}

//! The little HTTP/1.1 the GUI needs, with every resource bounded: one
//! request per connection (`Connection: close`), a fixed pool of worker
//! threads that accept connections themselves (more connections wait in
//! the kernel's queue; no thread is ever started per connection), a head
//! of at most [`MAX_HEAD`] bytes, a body of at most the caller's limit
//! (refused by its `Content-Length` before any of it is read), and a
//! deadline on reading each request.
//!
//! Framing that can be read two ways is refused with 400: more than one
//! `Host`, a `Content-Length` that is not one plain decimal number (or
//! several that differ), or a `Content-Length` beside a
//! `Transfer-Encoding`. A chunked body is not supported (411: a length is
//! required); the page never sends one.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The longest request line and headers accepted, in bytes.
pub const MAX_HEAD: usize = 16 * 1024;
/// How long a client gets to send its whole request.
pub const READ_DEADLINE: Duration = Duration::from_secs(5);
/// How long writing a response may take.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long unread input is drained after a response, at most.
const LINGER: Duration = Duration::from_millis(100);

/// One request, read whole.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The request target as sent (path and query).
    pub target: String,
    /// Header names and values in order, values trimmed.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// Every value of header `name` (case-insensitive).
    pub fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.header_values(name).first().copied()
    }
}

/// A response to send.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// Why no request was read.
#[derive(Debug)]
pub enum ReadError {
    /// Answer with this status and message.
    Refuse(u16, String),
    /// The client went away or was too slow: nothing to answer.
    Gone,
}

/// Reads one request from `stream`, taking at most [`READ_DEADLINE`] and
/// a body of at most `max_body` bytes.
///
/// # Errors
/// [`ReadError::Refuse`] for a request to answer with an error status,
/// [`ReadError::Gone`] when the connection broke or timed out.
pub fn read_request(stream: &mut TcpStream, max_body: usize) -> Result<Request, ReadError> {
    let deadline = Instant::now() + READ_DEADLINE;
    let mut buffer = Vec::with_capacity(1024);
    let head_end = loop {
        if let Some(at) = find(&buffer, b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_HEAD {
            return Err(ReadError::Refuse(
                431,
                format!("the request head is over {MAX_HEAD} bytes"),
            ));
        }
        read_some(stream, &mut buffer, deadline)?;
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut body = buffer.split_off(head_end + 4);
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("a malformed request line"));
    };
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0")
        || method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
        || !target.starts_with('/')
    {
        return Err(bad("a malformed request line"));
    }
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad("a malformed header line"));
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(bad("a malformed header name"));
        }
        headers.push((name.to_string(), value.trim().to_string()));
    }
    let mut request = Request {
        method: method.to_string(),
        target: target.to_string(),
        headers,
        body: Vec::new(),
    };
    let length = body_length(&request)?;
    if length > max_body {
        return Err(ReadError::Refuse(
            413,
            format!("the request body is over {max_body} bytes"),
        ));
    }
    while body.len() < length {
        read_some(stream, &mut body, deadline)?;
    }
    body.truncate(length);
    request.body = body;
    Ok(request)
}

fn bad(what: &str) -> ReadError {
    ReadError::Refuse(400, what.to_string())
}

/// The body's length from the headers, refusing anything ambiguous.
fn body_length(request: &Request) -> Result<usize, ReadError> {
    if request.header_values("Host").len() > 1 {
        return Err(bad("more than one Host header"));
    }
    let lengths = request.header_values("Content-Length");
    let chunked = !request.header_values("Transfer-Encoding").is_empty();
    if chunked && !lengths.is_empty() {
        return Err(bad("both Content-Length and Transfer-Encoding"));
    }
    if chunked {
        return Err(ReadError::Refuse(
            411,
            "a body needs a Content-Length (chunked bodies are not supported)".into(),
        ));
    }
    let Some(first) = lengths.first() else {
        return Ok(0);
    };
    let parse = |text: &str| {
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<u64>().ok())
            .flatten()
    };
    let Some(length) = parse(first) else {
        return Err(bad(&format!(
            "bad Content-Length {}",
            crate::protocol::quote(first)
        )));
    };
    if lengths.iter().any(|other| parse(other) != Some(length)) {
        return Err(bad("Content-Length headers that disagree"));
    }
    Ok(usize::try_from(length).unwrap_or(usize::MAX))
}

/// Reads what is there into `buffer`, waiting until `deadline` at most.
fn read_some(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    deadline: Instant,
) -> Result<(), ReadError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(ReadError::Gone);
    }
    stream
        .set_read_timeout(Some(left))
        .map_err(|_| ReadError::Gone)?;
    let mut chunk = [0u8; 4096];
    match stream.read(&mut chunk) {
        Ok(0) | Err(_) => Err(ReadError::Gone),
        Ok(n) => {
            buffer.extend_from_slice(&chunk[..n]);
            Ok(())
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Writes `response` (without its body for `HEAD`) and closes the
/// connection.
///
/// # Errors
/// Any write error (the client has gone).
pub fn write_response(stream: &mut TcpStream, response: &Response, head: bool) -> io::Result<()> {
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let mut out = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        out += &format!("{name}: {value}\r\n");
    }
    out += &format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        response.body.len()
    );
    let mut bytes = out.into_bytes();
    if !head {
        bytes.extend_from_slice(&response.body);
    }
    stream.write_all(&bytes)?;
    stream.flush()?;
    let _ = stream.shutdown(std::net::Shutdown::Write);
    // Let the client read the answer before the socket goes: a close with
    // unread input would reset the connection. Bounded in time, so a
    // client that keeps sending cannot hold the worker.
    let until = Instant::now() + LINGER;
    let mut sink = [0u8; 4096];
    while let Some(left) = until
        .checked_duration_since(Instant::now())
        .filter(|left| !left.is_zero())
    {
        let _ = stream.set_read_timeout(Some(left));
        if !matches!(stream.read(&mut sink), Ok(n) if n > 0) {
            break;
        }
    }
    Ok(())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// What `read_request` makes of `bytes` sent by a client that then
    /// closes its side.
    fn read(bytes: &'static [u8]) -> Result<Request, ReadError> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = std::thread::spawn(move || {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream.write_all(bytes).unwrap();
            let _ = stream.shutdown(std::net::Shutdown::Write);
            stream
        });
        let (mut stream, _) = listener.accept().unwrap();
        let result = read_request(&mut stream, 100);
        drop(client.join());
        result
    }

    fn status(bytes: &'static [u8]) -> Option<u16> {
        match read(bytes) {
            Ok(_) => Some(200),
            Err(ReadError::Refuse(status, _)) => Some(status),
            Err(ReadError::Gone) => None,
        }
    }

    #[test]
    fn reads_a_request_with_a_body() {
        let request =
            read(b"POST /api/move?x HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcdEXTRA")
                .unwrap();
        assert_eq!(request.method, "POST");
        assert_eq!(request.target, "/api/move?x");
        assert_eq!(request.header("host"), Some("h"));
        assert_eq!(request.body, b"abcd");
    }

    #[test]
    fn refuses_ambiguous_or_oversized_framing() {
        assert_eq!(
            status(b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"),
            Some(400)
        );
        for length in ["-1", "+1", "1x", "", "100000000000000000000000"] {
            let text = format!("POST / HTTP/1.1\r\nContent-Length: {length}\r\n\r\n");
            assert_eq!(
                status(Box::leak(text.into_bytes().into_boxed_slice())),
                Some(400),
                "{length}"
            );
        }
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab"),
            Some(400)
        );
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Some(400)
        );
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Some(411)
        );
        // Refused by its announced length, before any of it is read.
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nContent-Length: 9000000000000000000\r\n\r\n"),
            Some(413)
        );
        assert_eq!(status(b"G\x01T / HTTP/1.1\r\n\r\n"), Some(400));
        assert_eq!(status(b"GET / HTTP/1.1\r\nno colon\r\n\r\n"), Some(400));
        // A body shorter than announced, then the end: nothing to answer.
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nab"),
            None
        );
    }
}

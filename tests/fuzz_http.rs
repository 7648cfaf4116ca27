//! `dodgem gui` attacked over HTTP: malformed framing headers get 400, and
//! a seeded stream of random and mutated requests never takes the server
//! down or gets a 5xx; after each request the server still answers a good
//! one.

use crate::common::gui::Gui;
use crate::common::{Rng, shared};

/// A well-formed request the server must answer 200.
fn good(gui: &Gui) -> Vec<u8> {
    format!(
        "GET /api/state HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        gui.host()
    )
    .into_bytes()
}

/// A JSON `POST` to `path` with extra header lines `extra`.
fn post(gui: &Gui, path: &str, extra: &str, body: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n{extra}Connection: close\r\n\r\n{body}",
        gui.host()
    )
    .into_bytes()
}

#[test]
fn malformed_framing_headers_are_refused_with_400() {
    let _cpu = shared();
    let gui = Gui::start();
    let host = gui.host();
    let cases = [
        ("negative length", post(&gui, "/api/undo", "Content-Length: -1\r\n", "{}")),
        (
            "length past u64",
            post(&gui, "/api/undo", "Content-Length: 100000000000000000000000\r\n", "{}"),
        ),
        (
            "two different lengths",
            post(&gui, "/api/undo", "Content-Length: 2\r\nContent-Length: 3\r\n", "{}"),
        ),
        ("not a number", post(&gui, "/api/undo", "Content-Length: 2x\r\n", "{}")),
        ("a plus sign", post(&gui, "/api/undo", "Content-Length: +2\r\n", "{}")),
        (
            "two Host headers",
            format!("GET /api/state HTTP/1.1\r\nHost: {host}\r\nHost: {host}\r\nConnection: close\r\n\r\n")
                .into_bytes(),
        ),
    ];
    for (what, request) in cases {
        assert_eq!(gui.status_of(&request), Some(400), "{what}");
    }
    // A huge announced body that never comes: the old HTTP layer made a
    // buffer of that size to skip it, which panicked (past isize::MAX,
    // and took a worker with it) or aborted the process (below).
    for huge in ["10000000000000000000", "7511453919051360197", "9000000000"] {
        let header = format!("Content-Length: {huge}\r\n");
        assert_eq!(
            gui.status_of(&post(&gui, "/api/undo", &header, "{}")),
            Some(413),
            "{huge}"
        );
    }
    assert_eq!(gui.status_of(&good(&gui)), Some(200));
    // The same with a sound length is fine.
    assert_eq!(
        gui.status_of(&post(&gui, "/api/undo", "Content-Length: 2\r\n", "{}")),
        Some(409)
    );
    assert_eq!(gui.status_of(&good(&gui)), Some(200));
}

const PATHS: [&str; 10] = [
    "/",
    "/api/state",
    "/api/new",
    "/api/position",
    "/api/move",
    "/api/undo",
    "/api/config",
    "/api/restart",
    "/app.js",
    "/nope",
];
const METHODS: [&str; 6] = ["GET", "POST", "PUT", "HEAD", "DELETE", "G\u{1}T"];
const BODIES: [&str; 10] = [
    "{}",
    "{\"move\":\"a3b3\"}",
    "{\"move\":\"zz\"}",
    "{\"position\":\"B2/B2/1WW b\"}",
    "{\"position\":\"\\u0000\"}",
    "{\"size\":1000000}",
    "{\"movetime\":-1}",
    "[1,2,3",
    "\u{0}\u{ff}",
    "{\"engine\":\"white\",\"movetime\":18446744073709551615}",
];

/// A request built from random parts, then maybe mutated byte-wise.
fn random_request(rng: &mut Rng, gui: &Gui) -> Vec<u8> {
    let method = rng.pick(&METHODS);
    let path = rng.pick(&PATHS);
    let body = rng.pick(&BODIES);
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !rng.chance(8) {
        head += &format!("Host: {}\r\n", gui.host());
    }
    if !rng.chance(6) {
        head += "Content-Type: application/json\r\n";
    }
    match rng.below(6) {
        0 => {}
        1 => head += &format!("Content-Length: {}\r\n", rng.below(40)),
        2 => head += &format!("Content-Length: {}\r\n", rng.next() >> rng.below(64)),
        3 => head += "Transfer-Encoding: chunked\r\n",
        _ => head += &format!("Content-Length: {}\r\n", body.len()),
    }
    head += "Connection: close\r\n\r\n";
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    if rng.chance(3) {
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len());
            match rng.below(3) {
                0 => bytes[at] ^= 1 << rng.below(8),
                1 => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, rng.next() as u8),
            }
        }
    }
    bytes
}

#[test]
fn random_requests_never_take_the_server_down() {
    let _cpu = shared();
    let mut gui = Gui::start();
    let mut rng = Rng(0x5eed_4711);
    for round in 0..300 {
        let request = random_request(&mut rng, &gui);
        let status = gui.status_of(&request);
        if let Some(status) = status {
            assert!(
                (200..500).contains(&status),
                "round {round}: {status} for {:?}",
                String::from_utf8_lossy(&request)
            );
        }
        assert!(gui.is_running(), "round {round}: the server died");
        if round % 10 == 0 {
            assert_eq!(gui.status_of(&good(&gui)), Some(200), "round {round}");
        }
    }
    assert_eq!(gui.status_of(&good(&gui)), Some(200));
}

#[cfg(target_os = "linux")]
#[test]
fn many_idle_connections_do_not_grow_the_threads_or_kill_the_server() {
    let _cpu = shared();
    let mut gui = Gui::start();
    // Once it has answered, every thread it needs has started.
    assert_eq!(gui.status_of(&good(&gui)), Some(200));
    std::thread::sleep(std::time::Duration::from_millis(200));
    let before = gui.threads();
    // Connections that send nothing: each holds a worker until the read
    // deadline, the rest wait to be accepted. No thread per connection.
    // (Fewer than the listen queue holds, so that connecting never waits.)
    let idle: Vec<std::net::TcpStream> = (0..100)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", gui.port)).expect("cannot connect"))
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let during = gui.threads();
    assert!(during <= before + 2, "threads {before} -> {during}");
    drop(idle);
    assert!(gui.is_running());
    assert_eq!(gui.status_of(&good(&gui)), Some(200));
}

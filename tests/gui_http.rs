//! `dodgem gui` over HTTP: every endpoint, its errors, and the engine's
//! faults (an engine that dies, hangs, cheats, or cannot start).
//!
//! Each test starts its own server ([`Gui`]) on a free port and talks raw
//! HTTP/1.1 to it. Every wait has a generous deadline, so a test can fail
//! but not hang; the server is killed when a test ends.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::gui::{Gui, parse};
use crate::common::{LONG, run, shared};

/// A fake engine that speaks the handshake but never answers `go`.
const STALLING_ENGINE: &str = r#"sh -c 'while read -r line; do case "$line" in uci) echo "id name staller"; echo "info string hello from the staller"; echo uciok;; isready) echo readyok;; quit) exit 0;; esac; done'"#;
/// A fake engine that answers every `go` with a move that is never legal.
const CHEATING_ENGINE: &str = r#"sh -c 'while read -r line; do case "$line" in uci) echo uciok;; isready) echo readyok;; go*) echo "bestmove a1a1";; quit) exit 0;; esac; done'"#;

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
        .iter()
        .map(|v| v.as_str().expect("a string"))
        .collect()
}

#[test]
fn serves_the_page_and_its_assets() {
    let _cpu = shared();
    let gui = Gui::start();
    for (path, kind, needle) in [
        ("/", "text/html", "<script src=\"/app.js\""),
        ("/app.js", "text/javascript", "/api/state"),
        ("/app.css", "text/css", ".board"),
    ] {
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: localhost:{}\r\nConnection: close\r\n\r\n",
            gui.port
        );
        let (status, headers, body) = gui.raw(request.as_bytes());
        assert_eq!(status, 200, "{path}");
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
                .unwrap_or_default()
        };
        assert!(
            header("content-type").starts_with(kind),
            "{path}: {headers:?}"
        );
        assert!(header("content-security-policy").contains("default-src 'self'"));
        assert!(body.contains(needle), "{path} lacks {needle}");
    }
}

#[test]
fn the_state_describes_the_start_and_the_engine() {
    let _cpu = shared();
    let gui = Gui::start();
    let state = gui.wait_ready();
    assert_eq!(state["size"], 3);
    assert_eq!(state["rules"], "textbook");
    assert_eq!(state["engine_side"], "white");
    assert_eq!(state["position"], "B2/B2/1WW b");
    assert_eq!(state["start"], "B2/B2/1WW b");
    assert_eq!(state["side_to_move"], "black");
    assert_eq!(strings(&state["black"]), ["a2", "a3"]);
    assert_eq!(strings(&state["white"]), ["b1", "c1"]);
    assert_eq!(strings(&state["legal_moves"]), ["a2a1", "a2b2", "a3b3"]);
    assert_eq!(state["turn"], "human");
    assert_eq!(state["result"], Value::Null);
    assert_eq!(state["engine"]["name"], "dodgem 0.1.0");
    assert!(state["engine"]["pid"].as_u64().is_some());
    assert!(
        state["engine"]["command"]
            .as_str()
            .unwrap()
            .ends_with("dodgem")
    );
}

#[test]
fn a_person_plays_a_whole_game_against_the_engine() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.ok(
        "/api/new",
        json!({"size": 3, "rules": "textbook", "engine": "white", "movetime": 50}),
    );
    let mut state = gui.wait_turn("human");
    let mut plies = 0;
    while state["turn"] == "human" {
        // Black's forward moves (exits included) first, so the game moves on.
        let legal = strings(&state["legal_moves"]);
        let choice = legal
            .iter()
            .find(|mv| mv.as_bytes()[2] > mv.as_bytes()[0])
            .unwrap_or(&legal[0])
            .to_string();
        let after = gui.ok("/api/move", json!({ "move": choice }));
        assert_eq!(strings(&after["moves"]).last(), Some(&choice.as_str()));
        plies += 2;
        assert!(plies < 200, "the game does not end: {after:#}");
        state = gui.wait("the person's turn or the end", LONG, |s| {
            s["turn"] != "engine" && s["engine"]["status"] == "ready"
        });
    }
    assert_eq!(state["turn"], "over");
    let result = &state["result"];
    assert!(["black", "white"].contains(&result["winner"].as_str().unwrap()));
    assert!(["cars_off", "blocked"].contains(&result["reason"].as_str().unwrap()));
    assert!(
        result["text"].as_str().unwrap().contains("wins"),
        "{result}"
    );
    assert!(strings(&state["legal_moves"]).is_empty());
    let analysis = &state["analysis"];
    assert!(analysis["depth"].as_u64().unwrap() >= 1, "{analysis}");
    assert!(analysis["nodes"].as_u64().unwrap() >= 1, "{analysis}");
    assert_eq!(analysis["done"], true);
    gui.refused(
        "/api/move",
        json!({"move": "a2a1"}),
        409,
        "the game is over",
    );
}

#[test]
fn the_engine_plays_both_sides_to_the_end() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.ok(
        "/api/new",
        json!({"size": 3, "engine": "both", "movetime": 100}),
    );
    let state = gui.wait("over", Duration::from_secs(60), |s| s["turn"] == "over");
    // The engine solves 3 x 3 at once: the first player wins in 19 plies.
    assert_eq!(state["result"]["winner"], "black", "{state:#}");
    assert_eq!(state["moves"][0], "a3b3", "the only winning first move");
}

#[test]
fn moves_are_checked() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    // 8 x 8, where a 30 s search takes its time (3 x 3 is solved at once).
    gui.ok(
        "/api/new",
        json!({"size": 8, "engine": "white", "movetime": 30000}),
    );
    gui.refused("/api/move", json!({"move": "b1b2"}), 400, "illegal");
    gui.refused("/api/move", json!({"move": "a3c3"}), 400, "not a step");
    gui.refused("/api/move", json!({"move": "zz"}), 400, "not a move");
    gui.refused("/api/move", json!({"move": 7}), 400, "bad JSON body");
    gui.refused("/api/move", json!({}), 400, "missing field `move`");
    let state = gui.ok("/api/move", json!({"move": "a3b3"}));
    assert_eq!(state["turn"], "engine");
    gui.refused(
        "/api/move",
        json!({"move": "b1b2"}),
        409,
        "the engine's turn",
    );
    assert_eq!(strings(&gui.state()["moves"]), ["a3b3"]);
}

#[test]
fn undo_takes_back_to_the_last_move_of_a_person() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.refused("/api/undo", json!({}), 409, "no move to take back");
    gui.ok("/api/new", json!({"engine": "white", "movetime": 50}));
    gui.ok("/api/move", json!({"move": "a3b3"}));
    let state = gui.wait_turn("human");
    assert_eq!(state["moves"].as_array().unwrap().len(), 2);
    let state = gui.ok("/api/undo", json!({}));
    assert_eq!(strings(&state["moves"]), Vec::<&str>::new());
    assert_eq!(state["position"], "B2/B2/1WW b");
    assert_eq!(state["turn"], "human");

    // With nobody's engine, one move at a time; an empty body is fine.
    gui.ok("/api/config", json!({"engine": "none"}));
    gui.ok("/api/move", json!({"move": "a3b3"}));
    gui.ok("/api/move", json!({"move": "b1b2"}));
    let (status, body) = gui.request("POST", "/api/undo", &["Content-Type: application/json"], "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(strings(&parse(&body)["moves"]), ["a3b3"]);
}

#[test]
fn undo_while_the_engine_thinks_stops_it_and_drops_its_move() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.ok(
        "/api/new",
        json!({"size": 8, "engine": "white", "movetime": 30000}),
    );
    gui.ok("/api/move", json!({"move": "a3b3"}));
    gui.wait("thinking", LONG, |s| s["engine"]["status"] == "thinking");
    let started = Instant::now();
    let state = gui.ok("/api/undo", json!({}));
    assert_eq!(strings(&state["moves"]), Vec::<&str>::new());
    // `stop` is answered at once, long before the 30 s move time.
    let state = gui.wait_ready();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(strings(&state["moves"]), Vec::<&str>::new());
    assert_eq!(state["turn"], "human");
    // The engine is usable again.
    gui.ok("/api/config", json!({"movetime": 50}));
    gui.ok("/api/move", json!({"move": "a3b3"}));
    let state = gui.wait_turn("human");
    assert_eq!(state["moves"].as_array().unwrap().len(), 2);
}

#[test]
fn new_game_checks_every_field_and_changes_nothing_on_error() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    let bad = [
        (json!({"size": 9}), "outside 3..8"),
        (json!({"size": 2}), "outside 3..8"),
        (json!({"size": -1}), "bad JSON body"),
        (json!({"size": "4"}), "bad JSON body"),
        (json!({"rules": "house"}), "unknown rules 'house'"),
        (json!({"engine": "red"}), "unknown variant `red`"),
        (json!({"movetime": 5}), "outside 10..60000"),
        (json!({"movetime": 60001}), "outside 10..60000"),
        (json!({"colour": "black"}), "unknown field `colour`"),
        (json!([1, 2]), "bad JSON body"),
        (json!({"size": 4, "rules": "house"}), "unknown rules"),
    ];
    for (body, needle) in bad {
        gui.refused("/api/new", body, 400, needle);
    }
    let (status, body) = gui.request(
        "POST",
        "/api/new",
        &["Content-Type: application/json"],
        "{\"size\": 4",
    );
    assert_eq!(status, 400);
    assert!(parse(&body)["error"].as_str().unwrap().contains("bad JSON"));
    let state = gui.state();
    assert_eq!(
        (state["size"].as_u64(), state["rules"].as_str()),
        (Some(3), Some("textbook"))
    );

    for size in 3..=8 {
        let state = gui.ok(
            "/api/new",
            json!({"size": size, "rules": "classic", "engine": "none", "movetime": 100}),
        );
        assert_eq!(state["size"], size);
        assert_eq!(state["rules"], "classic");
        assert_eq!(state["engine_side"], "none");
        assert_eq!(state["movetime"], 100);
        assert_eq!(state["black"].as_array().unwrap().len(), size - 1);
        assert_eq!(state["legal_moves"].as_array().unwrap().len(), size);
        assert_eq!(state["turn"], "human");
    }
}

#[test]
fn the_engine_moves_on_every_board_size() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    for size in 3..=8 {
        gui.ok(
            "/api/new",
            json!({"size": size, "engine": "black", "movetime": 50}),
        );
        let state = gui.wait_turn("human");
        assert_eq!(state["size"], size);
        let moves = strings(&state["moves"]);
        assert_eq!(moves.len(), 1, "{state:#}");
        // The engine's report on the search for its move (an interrupted
        // last iteration may still change the move, so the reported line
        // need not start with it).
        let analysis = &state["analysis"];
        assert_eq!(analysis["side"], "black");
        assert_eq!(analysis["ply"], 0);
        assert!(analysis["depth"].as_u64().unwrap() >= 1, "{analysis}");
        assert!(!analysis["pv"].as_array().unwrap().is_empty(), "{analysis}");
    }
}

#[test]
fn positions_can_be_set_and_read_back() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.ok("/api/config", json!({"engine": "none"}));
    let state = gui.ok("/api/position", json!({"position": "1B1/BW1/2W b"}));
    assert_eq!(state["position"], "1B1/BW1/2W b");
    assert_eq!(state["start"], "1B1/BW1/2W b");
    assert_eq!(strings(&state["legal_moves"]), ["a2a1", "a2a3", "b3c3"]);

    let state = gui.ok(
        "/api/position",
        json!({"position": "3/B2/WB1 w", "rules": "classic"}),
    );
    assert_eq!(state["turn"], "over");
    assert_eq!(state["result"]["winner"], "white");
    assert_eq!(state["result"]["reason"], "blocked");
    assert!(
        state["result"]["text"]
            .as_str()
            .unwrap()
            .contains("classic rule")
    );

    let state = gui.ok("/api/position", json!({"position": "4/4/B3/4 w"}));
    assert_eq!(state["result"]["reason"], "cars_off");
    assert_eq!(state["result"]["winner"], "white");
    assert_eq!(state["size"], 4);

    gui.refused(
        "/api/position",
        json!({"position": "B2/B2/1WW"}),
        400,
        "bad position string: missing side to move",
    );
    gui.refused("/api/position", json!({"position": ""}), 400, "empty");
    gui.refused(
        "/api/position",
        json!({"position": "B2/B2/1WW b", "rules": "x"}),
        400,
        "unknown rules",
    );
    gui.refused("/api/position", json!({}), 400, "missing field `position`");
    assert_eq!(gui.state()["position"], "4/4/B3/4 w");
}

#[test]
fn a_repeated_position_is_a_draw() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.ok("/api/config", json!({"engine": "none"}));
    gui.ok("/api/position", json!({"position": "3/B2/2W b"}));
    for mv in [
        "a2a3", "c1b1", "a3a2", "b1c1", "a2a3", "c1b1", "a3a2", "b1c1",
    ] {
        gui.ok("/api/move", json!({ "move": mv }));
    }
    let state = gui.state();
    assert_eq!(state["turn"], "over");
    assert_eq!(state["result"]["reason"], "repetition");
    assert_eq!(state["result"]["winner"], Value::Null);
}

#[test]
fn config_changes_who_the_engine_plays_mid_game() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.ok("/api/new", json!({"engine": "none", "movetime": 50}));
    gui.ok("/api/move", json!({"move": "a3b3"}));
    let state = gui.state();
    assert_eq!(state["turn"], "human");
    let state = gui.ok("/api/config", json!({"engine": "white"}));
    assert_eq!(state["engine_side"], "white");
    let state = gui.wait_turn("human");
    assert_eq!(state["moves"].as_array().unwrap().len(), 2);
    gui.refused("/api/config", json!({"movetime": 0}), 400, "outside");
    gui.refused(
        "/api/config",
        json!({"engine": "all"}),
        400,
        "unknown variant",
    );
    gui.refused("/api/config", json!({"size": 4}), 400, "unknown field");
    assert_eq!(gui.state()["movetime"], 50);
}

#[test]
fn bad_requests_get_json_errors() {
    let _cpu = shared();
    let gui = Gui::start();
    // method, path, headers, body, status, part of the message
    type Case = (
        &'static str,
        &'static str,
        &'static [&'static str],
        &'static str,
        u16,
        &'static str,
    );
    let cases: [Case; 9] = [
        ("GET", "/nothing", &[], "", 404, "no such page"),
        ("GET", "/api/move", &[], "", 405, "use POST"),
        (
            "POST",
            "/api/state",
            &["Content-Type: application/json"],
            "{}",
            405,
            "use GET",
        ),
        ("DELETE", "/", &[], "", 405, "use GET"),
        ("POST", "/api/new", &[], "{}", 415, "application/json"),
        (
            "POST",
            "/api/new",
            &["Content-Type: text/plain"],
            "{}",
            415,
            "application/json",
        ),
        (
            "POST",
            "/api/undo",
            &["Content-Type: application/json"],
            "{\"x\":1}",
            400,
            "unknown field",
        ),
        (
            "POST",
            "/api/restart",
            &["Content-Type: application/json"],
            "[]",
            400,
            "bad JSON",
        ),
        (
            "POST",
            "/api/new",
            &["Content-Type: application/json"],
            "\u{fffd}",
            400,
            "bad JSON",
        ),
    ];
    for (method, path, headers, body, status, needle) in cases {
        let (got, reply) = gui.request(method, path, headers, body);
        assert_eq!(got, status, "{method} {path}: {reply}");
        let message = parse(&reply)["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.contains(needle), "{method} {path}: {message:?}");
    }

    let big = format!("{{\"position\": \"{}\"}}", "1".repeat(20_000));
    let (status, reply) = gui.request(
        "POST",
        "/api/position",
        &["Content-Type: application/json"],
        &big,
    );
    assert_eq!(status, 413, "{reply}");

    let request = format!(
        "GET /api/state HTTP/1.1\r\nHost: attacker.example:{}\r\nConnection: close\r\n\r\n",
        gui.port
    );
    let (status, _, reply) = gui.raw(request.as_bytes());
    assert_eq!(status, 403, "{reply}");
    assert!(reply.contains("is not this server"));

    // Garbage on the socket does not hurt the server.
    if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", gui.port)) {
        let _ = stream.write_all(b"\x00\x01\x02 not http at all\r\n\r\n");
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = stream.read(&mut [0u8; 256]);
    }
    assert_eq!(gui.state()["size"], 3);
}

#[test]
fn a_killed_engine_is_reported_and_can_be_restarted() {
    let _cpu = shared();
    let gui = Gui::start();
    let state = gui.wait_ready();
    let pid = state["engine"]["pid"].as_u64().unwrap();
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("cannot run kill");
    assert!(killed.success());
    let state = gui.wait("dead", LONG, |s| s["engine"]["status"] == "dead");
    let message = state["engine"]["message"].as_str().unwrap();
    assert!(message.contains("the engine exited"), "{message}");
    assert_eq!(state["engine"]["pid"], Value::Null);

    // A person can still move; then a restart brings the engine back and
    // it answers.
    gui.ok("/api/config", json!({"movetime": 50}));
    gui.ok("/api/move", json!({"move": "a3b3"}));
    let state = gui.ok("/api/restart", json!({}));
    assert_ne!(state["engine"]["pid"].as_u64(), Some(pid));
    let state = gui.wait_turn("human");
    assert_eq!(state["moves"].as_array().unwrap().len(), 2);
    assert_eq!(state["engine"]["message"], Value::Null);
}

#[test]
fn an_engine_that_stops_answering_times_out() {
    let _cpu = shared();
    let gui = Gui::start_with(&["--engine", STALLING_ENGINE]);
    let state = gui.wait_ready();
    assert_eq!(state["engine"]["name"], "staller");
    assert_eq!(
        state["engine"]["last_info_string"],
        "hello from the staller"
    );
    gui.ok("/api/config", json!({"movetime": 10}));
    let started = Instant::now();
    gui.ok("/api/move", json!({"move": "a3b3"}));
    // Move time plus a 3 s margin, then it is given up.
    let state = gui.wait("dead", LONG, |s| s["engine"]["status"] == "dead");
    assert!(started.elapsed() >= Duration::from_secs(3));
    let message = state["engine"]["message"].as_str().unwrap();
    assert!(
        message.contains("did not answer `go movetime 10`"),
        "{message}"
    );
    let state = gui.ok("/api/restart", json!({}));
    assert_ne!(state["engine"]["status"], "dead");
}

#[test]
fn an_engine_that_plays_an_illegal_move_is_refused() {
    let _cpu = shared();
    let gui = Gui::start_with(&["--engine", CHEATING_ENGINE]);
    gui.wait_ready();
    gui.ok("/api/move", json!({"move": "a3b3"}));
    let state = gui.wait("dead", LONG, |s| s["engine"]["status"] == "dead");
    let message = state["engine"]["message"].as_str().unwrap();
    assert!(message.contains("bestmove a1a1"), "{message}");
    assert_eq!(strings(&state["moves"]), ["a3b3"]);
}

#[test]
fn an_engine_that_exits_at_once_is_reported() {
    let _cpu = shared();
    let gui = Gui::start_with(&["--engine", "true"]);
    let state = gui.wait("dead", LONG, |s| s["engine"]["status"] == "dead");
    let message = state["engine"]["message"].as_str().unwrap();
    assert!(message.contains("the engine exited"), "{message}");
    // A restart is accepted (the process starts), and it dies again.
    gui.ok("/api/restart", json!({}));
    gui.wait("dead again", LONG, |s| s["engine"]["status"] == "dead");
}

#[test]
fn an_engine_that_cannot_start_stops_the_server_with_a_message() {
    let _cpu = shared();
    for engine in ["/nonexistent/engine", "'unbalanced", ""] {
        let output = run(&["gui", "--port", "0", "--engine", engine], LONG);
        assert!(!output.status.success(), "{engine}");
        assert!(output.stdout.is_empty(), "{engine}");
        let stderr = &output.stderr;
        assert!(stderr.contains("engine"), "{engine}: {stderr}");
    }
}

#[test]
fn engine_options_from_the_command_line_are_checked_and_sent() {
    let _cpu = shared();
    // A good option reaches the engine: a table file that is not there
    // makes it say so, and it plays on.
    let gui = Gui::start_with(&[
        "--option",
        "TablebasePath=/nonexistent/5x5.dtb",
        "--option",
        "Hash=8",
    ]);
    let state = gui.wait("the engine's complaint", LONG, |s| {
        s["engine"]["last_info_string"]
            .as_str()
            .is_some_and(|m| m.contains("TablebasePath"))
    });
    assert_ne!(state["engine"]["status"], "dead", "{state}");
    gui.ok(
        "/api/new",
        json!({"size": 3, "rules": "textbook", "engine": "black", "movetime": 50}),
    );
    gui.wait("the engine's first move", LONG, |s| {
        !strings(&s["moves"]).is_empty()
    });
}

#[test]
fn an_option_the_engine_cannot_take_stops_the_server_before_it_serves() {
    let _cpu = shared();
    // An option the engine does not have, or a value out of range, is
    // refused before the server starts (a server that started would fail
    // every engine start, Restart engine included), with a message naming
    // the setting and what the engine objects to.
    for (setting, complaint) in [
        ("Contempt=4", "no option 'Contempt'"),
        ("Hash=0", "'Hash' takes a whole number from 1"),
    ] {
        // Before the fix the server started: it never exits, so `run`
        // kills it and fails after LONG.
        let output = run(
            &[
                "gui", "--port", "0", "--option", "Hash=8", "--option", setting,
            ],
            LONG,
        );
        assert!(!output.status.success(), "{setting}");
        let (stdout, stderr) = (&output.stdout, &output.stderr);
        assert!(stdout.is_empty(), "{setting}: the server started: {stdout}");
        assert!(
            stderr.contains(&format!("--option {setting}:")) && stderr.contains(complaint),
            "{setting}: {stderr}"
        );
    }
}

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
use crate::common::{BIN, Engine, LONG, run, scratch, shared};

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

    let big = format!("{{\"position\": \"{}\"}}", "1".repeat(70_000));
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
        "TablebasePath=/nonexistent/5x5-textbook",
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
    let state = gui.wait("the engine's first move", LONG, |s| {
        !strings(&s["moves"]).is_empty()
    });
    // The refusal stays in the state while the engine plays on without
    // the tables, whatever it says after it (not only as its latest
    // message, which the next one replaces).
    let refused = strings(&state["engine"]["refused"]);
    assert_eq!(refused.len(), 1, "{state}");
    assert!(
        refused[0].starts_with("TablebasePath: ")
            && refused[0].contains("/nonexistent/5x5-textbook"),
        "{state}"
    );
}

#[test]
fn a_table_directory_given_as_an_option_is_loaded_and_played_from() {
    let _cpu = shared();
    let dir = crate::common::table_dir("gui-tables", 4, dodgem::Rules::Classic);
    let option = format!("TablebasePath={}", dir.display());
    let gui = Gui::start_with(&["--option", &option]);
    gui.wait("the engine's word that it loaded the tables", LONG, |s| {
        s["engine"]["last_info_string"].as_str().is_some_and(|m| {
            m.contains("loaded 4x4 classic layered tables (at most 3 cars a side) from")
        })
    });
    gui.ok(
        "/api/new",
        json!({"size": 4, "rules": "classic", "engine": "black", "movetime": 50}),
    );
    gui.wait("the engine's first move", LONG, |s| {
        !strings(&s["moves"]).is_empty()
    });
    drop(gui);
    std::fs::remove_dir_all(&dir).unwrap();
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

/// The hint for `mv` in a state's `view.hints`.
fn hint<'a>(state: &'a Value, mv: &str) -> &'a Value {
    state["view"]["hints"]["moves"]
        .as_array()
        .and_then(|moves| moves.iter().find(|h| h["move"] == mv))
        .unwrap_or_else(|| panic!("no hint for {mv}: {state:#}"))
}

/// What `solve` says about a position, straight from an engine.
fn solve(position: &str) -> String {
    let mut engine = Engine::start();
    engine.send(&format!("position fen {position}"));
    engine.send("solve");
    let (line, _) = engine.wait_for("solve ", LONG);
    engine.quit();
    line
}

/// Waits until the hints of the position on show are all in.
fn wait_hints(gui: &Gui, source: &str) -> Value {
    gui.wait(&format!("{source} hints"), LONG, |s| {
        s["view"]["hints"]["source"] == source && s["view"]["hints"]["done"] == true
    })
}

#[test]
fn hints_give_every_move_its_exact_value_where_a_table_covers_it() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    // Hints are off by default.
    assert_eq!(gui.state()["hints"], false);
    assert_eq!(gui.state()["view"]["hints"], Value::Null);
    gui.ok(
        "/api/new",
        json!({"size": 4, "engine": "white", "movetime": 100}),
    );
    gui.ok("/api/config", json!({"hints": true}));
    let state = wait_hints(&gui, "table");
    // The 4 x 4 start is a draw whatever Black plays first.
    for mv in ["a2a1", "a2b2", "a3b3", "a4b4"] {
        assert_eq!(hint(&state, mv)["value"], "draw", "{state:#}");
    }
    assert_eq!(state["view"]["solved"], "a draw with best play");
    // A decided 3 x 3 position: each move's value is the table's value
    // of the position after it, one ply further from the end, for the
    // other side.
    gui.ok("/api/position", json!({"position": "1B1/BW1/2W b"}));
    let state = wait_hints(&gui, "table");
    for (mv, after) in [
        ("a2a1", "1B1/1W1/B1W w"),
        ("a2a3", "BB1/1W1/2W w"),
        ("b3c3", "2B/BW1/2W w"),
    ] {
        let solved = solve(after);
        let words: Vec<&str> = solved.split_whitespace().collect();
        // The tables count plies to the next forward move or exit: a move
        // that is one is itself that progress (Black's a2a1 and a2a3 are
        // sideways moves; b3c3 goes forward).
        let through = |n: &str| match mv {
            "b3c3" => 1,
            _ => n.parse::<u64>().unwrap() + 1,
        };
        // With the distance to the end (the built-in tables have it),
        // every move counts.
        let (value, plies) = match words[..] {
            ["solve", "win", e, "dtz", _] => ("loss", e.parse::<u64>().unwrap() + 1),
            ["solve", "loss", e, "dtz", _] => ("win", e.parse::<u64>().unwrap() + 1),
            ["solve", "win", "dtz", n] => ("loss", through(n)),
            ["solve", "loss", "dtz", n] => ("win", through(n)),
            _ => panic!("{after}: {solved}"),
        };
        let hint = hint(&state, mv);
        assert_eq!(hint["value"], value, "{mv}: {hint}");
        assert_eq!(hint["plies"], plies, "{mv}: {hint}");
        assert!(
            hint["text"]
                .as_str()
                .unwrap()
                .contains(&format!("{plies} pl")),
            "{hint}"
        );
    }
    // Off again: no hints, and no exact values on show.
    let state = gui.ok("/api/config", json!({"hints": false}));
    assert_eq!(state["view"]["hints"], Value::Null);
    assert_eq!(state["view"]["solved"], Value::Null);
    gui.refused("/api/config", json!({"hints": "yes"}), 400, "bad JSON");
}

#[test]
fn hints_beyond_the_tables_are_the_engines_lines_in_words() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.ok(
        "/api/new",
        json!({"size": 6, "engine": "white", "movetime": 100}),
    );
    gui.ok("/api/config", json!({"hints": true}));
    let state = wait_hints(&gui, "engine");
    let moves = state["view"]["hints"]["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 6, "{state:#}");
    let mut ranks: Vec<u64> = moves
        .iter()
        .map(|h| h["rank"].as_u64().expect("every move ranked"))
        .collect();
    ranks.sort_unstable();
    assert_eq!(ranks, [1, 2, 3, 4, 5, 6]);
    for hint in moves {
        assert_eq!(hint["score"]["kind"], "cp", "{hint}");
        let text = hint["text"].as_str().unwrap();
        assert!(
            text.contains("better") || text.contains("even"),
            "not in words: {text}"
        );
    }
}

#[test]
fn an_engine_without_solve_gives_hints_from_its_lines() {
    let _cpu = shared();
    let dir = scratch("gui-nosolve");
    let log = dir.join("log");
    let gui = Gui::start_with(&["--engine", &wrapped(&log, "nosolve")]);
    gui.wait_ready();
    gui.ok("/api/config", json!({"hints": true, "movetime": 100}));
    // 3 x 3 is in the engine's tables, but this one does not say.
    let state = wait_hints(&gui, "engine");
    assert_eq!(hint(&state, "a3b3")["value"], "win", "{state:#}");
    let sent = std::fs::read_to_string(&log).unwrap();
    assert_eq!(sent.matches("solve").count(), 1, "asked again: {sent}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn hints_and_best_move_where_no_engine_runs() {
    let _cpu = shared();
    let gui = Gui::start_with(&["--engine", "true"]);
    gui.wait("dead", LONG, |s| s["engine"]["status"] == "dead");
    let state = gui.ok("/api/config", json!({"hints": true, "engine": "none"}));
    let hints = &state["view"]["hints"];
    assert_eq!(hints["source"], "unavailable", "{state:#}");
    assert!(
        hints["message"]
            .as_str()
            .unwrap()
            .contains("the engine is not running")
    );
    assert_eq!(hints["moves"].as_array().unwrap().len(), 3);
    gui.refused("/api/best", json!({}), 503, "the engine is not running");
}

#[test]
fn the_best_move_is_asked_for_and_shown() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.ok("/api/config", json!({"engine": "none", "movetime": 100}));
    let state = gui.ok("/api/best", json!({}));
    assert_eq!(state["view"]["best"]["done"], false);
    let state = gui.wait("the best move", LONG, |s| s["view"]["best"]["done"] == true);
    // The only winning first move on 3 x 3.
    assert_eq!(state["view"]["best"]["move"], "a3b3", "{state:#}");
    assert!(
        state["view"]["best"]["text"]
            .as_str()
            .unwrap()
            .starts_with("a3b3: Black wins")
    );
    gui.refused("/api/best", json!({"x": 1}), 400, "unknown field");
    gui.ok("/api/position", json!({"position": "4/4/B3/4 w"}));
    gui.refused("/api/best", json!({}), 409, "the game is over here");
}

#[test]
fn review_steps_through_the_game_and_plays_on() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.ok("/api/config", json!({"engine": "none", "movetime": 100}));
    for mv in ["a3b3", "b1b2", "a2a1"] {
        gui.ok("/api/move", json!({ "move": mv }));
    }
    gui.refused("/api/playon", json!({}), 409, "no earlier position");
    let state = gui.ok("/api/review", json!({"ply": 1}));
    assert_eq!(state["review"], 1);
    let view = &state["view"];
    assert_eq!(view["ply"], 1);
    assert_eq!(view["position"], "1B1/B2/1WW w");
    assert_eq!(view["last_move"], "a3b3");
    assert_eq!(view["side_to_move"], "white");
    assert_eq!(strings(&view["legal_moves"]), ["b1a1", "b1b2", "c1c2"]);
    // The live game is untouched, and the engine looks at the position.
    assert_eq!(state["moves"].as_array().unwrap().len(), 3);
    let state = gui.wait("the engine's view of it", LONG, |s| {
        s["view"]["analysis"]["ply"] == 1 && s["view"]["analysis"]["depth"].as_u64().is_some()
    });
    assert_eq!(state["view"]["analysis"]["side"], "white");
    gui.refused(
        "/api/review",
        json!({"ply": 4}),
        400,
        "ply 4 is beyond the game (3 moves)",
    );
    gui.refused("/api/review", json!({"ply": -1}), 400, "bad JSON");
    // The last ply is the live game.
    assert_eq!(
        gui.ok("/api/review", json!({"ply": 3}))["review"],
        Value::Null
    );
    let state = gui.ok("/api/review", json!({"ply": 0}));
    assert_eq!(state["view"]["position"], "B2/B2/1WW b");
    assert_eq!(state["view"]["last_move"], Value::Null);
    assert_eq!(
        gui.ok("/api/review", json!({"ply": null}))["review"],
        Value::Null
    );
    // Play on from after the first move: the later moves go.
    gui.ok("/api/review", json!({"ply": 1}));
    let state = gui.ok("/api/playon", json!({}));
    assert_eq!(strings(&state["moves"]), ["a3b3"]);
    assert_eq!(state["review"], Value::Null);
    assert_eq!(state["view"]["ply"], 1);
    // Undo past a position under review ends the review.
    gui.ok("/api/move", json!({"move": "b1b2"}));
    gui.ok("/api/review", json!({"ply": 1}));
    let state = gui.ok("/api/undo", json!({}));
    assert_eq!(state["review"], Value::Null);
}

#[test]
fn the_graph_fills_in_once_the_game_is_over() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    // During play, without hints, only the engine's own searches.
    gui.ok(
        "/api/new",
        json!({"size": 3, "engine": "white", "movetime": 50}),
    );
    gui.ok("/api/move", json!({"move": "a3b3"}));
    let state = gui.wait_turn("human");
    let graph = state["graph"].as_array().unwrap();
    assert_eq!(graph.len(), 3);
    assert_eq!(graph[0], Value::Null, "{state:#}");
    assert_eq!(graph[1]["source"], "engine");
    gui.ok(
        "/api/new",
        json!({"size": 3, "engine": "both", "movetime": 50}),
    );
    // The engine's own searches fill the points first; the table's
    // answers replace them once the game is over.
    let state = gui.wait("over and every point exact", Duration::from_secs(60), |s| {
        s["turn"] == "over"
            && s["graph"].as_array().is_some_and(|g| {
                g.iter()
                    .all(|p| p["source"] == "table" || p["source"] == "end")
            })
    });
    let graph = state["graph"].as_array().unwrap();
    assert_eq!(graph.len(), state["moves"].as_array().unwrap().len() + 1);
    // Perfect play: Black wins from the start, every position on the way.
    for point in graph {
        assert_eq!(point["black"], 1.0, "{point}");
    }
    assert_eq!(graph.last().unwrap()["source"], "end");
}

#[test]
fn games_export_as_records_and_import_back() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    gui.ok(
        "/api/new",
        json!({"size": 4, "rules": "classic", "engine": "white", "movetime": 50}),
    );
    gui.ok("/api/move", json!({"move": "a2b2"}));
    let played = gui.wait_turn("human");
    let (status, headers, record) = gui.raw(
        format!(
            "GET /api/export HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            gui.host()
        )
        .as_bytes(),
    );
    assert_eq!(status, 200);
    assert!(
        headers
            .iter()
            .any(|(n, v)| n == "content-type" && v.starts_with("text/plain"))
    );
    for needle in [
        "[Event \"dodgem gui\"]",
        "[Black \"person\"]",
        "[White \"dodgem 0.1.0\"]",
        "[Result \"*\"]",
        "[BoardSize \"4\"]",
        "[Rules \"classic\"]",
        "[FEN \"B3/B3/B3/1WWW b\"]",
        "[Termination \"unterminated\"]",
        "[PlyCount \"2\"]",
        "1. a2b2 ",
    ] {
        assert!(record.contains(needle), "{needle} not in:\n{record}");
    }
    // The engine's move carries its score and depth.
    let reply = strings(&played["moves"])[1];
    assert!(record.contains(&format!("{reply} {{cp ")), "{record}");

    gui.ok(
        "/api/new",
        json!({"size": 3, "rules": "textbook", "engine": "none"}),
    );
    let state = gui.ok("/api/import", json!({ "record": record }));
    assert_eq!(state["moves"], played["moves"]);
    assert_eq!(state["rules"], "classic");
    assert_eq!(state["size"], 4);
    assert!(
        state["imported"]
            .as_str()
            .unwrap()
            .starts_with("2 moves on 4 x 4, classic rule")
    );

    let bad = [
        ("", "line 1: the record is empty"),
        ("1. a3b3", "no FEN or BoardSize tag"),
        (
            "[BoardSize \"3\"]\n1. a3b3 b1b2 2. a3b3",
            "line 2: move 3 ('a3b3'): move a3b3 is illegal",
        ),
        (
            "[BoardSize \"3\"] 1. a3b3 * [BoardSize \"3\"]",
            "more than one game",
        ),
        ("[FEN \"nonsense\"]", "FEN 'nonsense'"),
        ("[BoardSize \"3\"] {never closed", "never closed"),
    ];
    for (text, needle) in bad {
        gui.refused("/api/import", json!({ "record": text }), 400, needle);
    }
    gui.refused("/api/import", json!({}), 400, "missing field `record`");
    // Nothing changed.
    assert_eq!(gui.state()["moves"], played["moves"]);
}

#[test]
fn the_tree_shows_minimax_and_alpha_beta() {
    let _cpu = shared();
    let gui = Gui::start();
    gui.wait_ready();
    let (status, tree) = gui.get("/api/tree?depth=2");
    assert_eq!(status, 200, "{tree}");
    assert_eq!(tree["position"], "B2/B2/1WW b");
    assert_eq!(tree["minimax"]["nodes"], 1 + 3 + 7);
    assert_eq!(tree["minimax"]["leaves"], 7);
    let visited = tree["alphabeta"]["nodes"].as_u64().unwrap();
    assert!(visited < 11, "{tree}");
    let root = &tree["root"];
    assert_eq!(root["side"], "black");
    assert_eq!(root["children"].as_array().unwrap().len(), 3);
    // MIN at the root: the smallest of its children's values.
    let smallest = root["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["value"].as_i64().unwrap())
        .min();
    assert_eq!(root["value"].as_i64(), smallest);
    assert_eq!(root["ab"]["alpha"], -tree["infinity"].as_i64().unwrap());
    assert_eq!(tree["deepest"], 4);
    let (status, _) = gui.get("/api/tree?depth=4");
    assert_eq!(status, 200);

    for (query, needle) in [
        ("depth=0", "depth 0 is outside 1..4"),
        ("depth=5", "depth 5 is outside 1..4"),
        ("depth=x", "depth must be a whole number"),
        ("ply=3", "ply 3 is beyond the game (0 moves)"),
        ("width=3", "unknown parameter 'width'"),
    ] {
        let (status, reply) = gui.get(&format!("/api/tree?{query}"));
        assert_eq!(status, 400, "{query}: {reply}");
        let message = reply["error"].as_str().unwrap();
        assert!(message.contains(needle), "{query}: {message}");
    }
    gui.ok("/api/new", json!({"size": 8, "engine": "none"}));
    let (status, reply) = gui.get("/api/tree?depth=4");
    assert_eq!(status, 400);
    assert!(reply["error"].as_str().unwrap().contains("does not fit"));
    let (status, tree) = gui.get("/api/tree?depth=3");
    assert_eq!(status, 200, "{tree}");
    assert_eq!(tree["deepest"], 3);
    // Another ply of the game than the one on show.
    gui.ok("/api/move", json!({"move": "a2b2"}));
    let (_, tree) = gui.get("/api/tree?depth=1&ply=0");
    assert_eq!(tree["position"], "B7/B7/B7/B7/B7/B7/B7/1WWWWWWW b");
    let (status, reply) = gui.request(
        "POST",
        "/api/tree",
        &["Content-Type: application/json"],
        "{}",
    );
    assert_eq!(status, 405, "{reply}");
}

#[test]
fn the_engine_s_own_levels_and_chances_reach_the_page() {
    let _cpu = shared();
    let gui = Gui::start();
    let state = gui.wait_ready();
    assert_eq!(
        state["strength"],
        json!({"kind": "skill", "min": 0, "max": 20})
    );
    assert_eq!(state["engine"]["wdl"], true);
    // Level 0 plays a move (its own budget is 24 nodes: the generous
    // movetime only keeps a loaded machine from cutting it before its
    // first line); 3 x 3 is solved, so the chances the engine reports are
    // exact: one of the three results is certain.
    gui.ok("/api/config", json!({"level": 0, "movetime": 1000}));
    gui.ok("/api/move", json!({"move": "a3b3"}));
    let state = gui.wait_turn("human");
    let wdl: Vec<u64> = state["analysis"]["wdl"]
        .as_array()
        .unwrap_or_else(|| panic!("no wdl: {state}"))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(wdl.iter().sum::<u64>(), 1000, "{wdl:?}");
    assert!(wdl.contains(&1000), "not exact on a solved board: {wdl:?}");
    assert_eq!(state["level"], 0);
}

/// The GUI's test engine (`tests/mock/gui_engine.py`): the real engine
/// with extra options, logging what it is sent to `log`.
fn wrapped(log: &std::path::Path, mode: &str) -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mock/gui_engine.py");
    let quote = |text: &str| shlex::try_quote(text).unwrap().into_owned();
    format!(
        "python3 {} {} {} {mode}",
        quote(&script.to_string_lossy()),
        quote(BIN),
        quote(&log.to_string_lossy())
    )
}

/// The lines sent before each `go`, as (options set since the last `go`,
/// the `go`).
fn searches_in(log: &str) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut options = Vec::new();
    for line in log.lines() {
        if line.starts_with("setoption") {
            options.push(line.to_string());
        } else if line.starts_with("go ") {
            out.push((std::mem::take(&mut options), line.to_string()));
        }
    }
    out
}

#[test]
fn levels_and_win_draw_loss_are_used_when_the_engine_offers_them() {
    let _cpu = shared();
    let dir = scratch("gui-levels");
    // An engine with neither: no levels to choose.
    let gui = Gui::start_with(&["--engine", &wrapped(&dir.join("plain.log"), "plain")]);
    let state = gui.wait_ready();
    assert_eq!(state["strength"], Value::Null);
    assert_eq!(state["engine"]["wdl"], false);
    gui.refused(
        "/api/config",
        json!({"level": 3}),
        409,
        "offers no weaker levels",
    );
    drop(gui);

    let log = dir.join("skill.log");
    let gui = Gui::start_with(&["--engine", &wrapped(&log, "skill")]);
    let state = gui.wait_ready();
    assert_eq!(
        state["strength"],
        json!({"kind": "skill", "min": 0, "max": 20})
    );
    assert_eq!(state["engine"]["wdl"], true);
    gui.refused(
        "/api/config",
        json!({"level": 21}),
        400,
        "level 21 is outside 0..20",
    );
    gui.refused(
        "/api/config",
        json!({"level": "weak"}),
        400,
        "neither \"full\" nor a number",
    );
    let state = gui.ok("/api/config", json!({"level": 3, "movetime": 50}));
    assert_eq!(state["level"], 3);
    // The engine's move at level 3; its view of a position at full strength.
    gui.ok("/api/move", json!({"move": "a3b3"}));
    let state = gui.wait_turn("human");
    let analysis = &state["analysis"];
    let wdl: Vec<u64> = analysis["wdl"]
        .as_array()
        .unwrap_or_else(|| panic!("no wdl: {analysis}"))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(wdl.iter().sum::<u64>(), 1000);
    gui.ok("/api/best", json!({}));
    gui.wait("the best move", LONG, |s| s["view"]["best"]["done"] == true);
    let sent = std::fs::read_to_string(&log).unwrap();
    assert!(
        sent.contains("setoption name UCI_ShowWDL value true"),
        "{sent}"
    );
    let searches = searches_in(&sent);
    assert_eq!(searches.len(), 2, "{sent}");
    assert!(
        searches[0]
            .0
            .contains(&"setoption name Skill Level value 3".to_string()),
        "{sent}"
    );
    assert!(
        searches[1]
            .0
            .contains(&"setoption name Skill Level value 20".to_string()),
        "{sent}"
    );
    // "full" is full strength again.
    assert_eq!(
        gui.ok("/api/config", json!({"level": "full"}))["level"],
        Value::Null
    );
    drop(gui);

    let log = dir.join("elo.log");
    let gui = Gui::start_with(&["--engine", &wrapped(&log, "elo")]);
    let state = gui.wait_ready();
    assert_eq!(
        state["strength"],
        json!({"kind": "elo", "min": 800, "max": 2400})
    );
    gui.ok(
        "/api/new",
        json!({"engine": "black", "movetime": 50, "level": 1200}),
    );
    gui.wait_turn("human");
    let sent = std::fs::read_to_string(&log).unwrap();
    let searches = searches_in(&sent);
    assert!(
        searches[0]
            .0
            .contains(&"setoption name UCI_LimitStrength value true".to_string())
            && searches[0]
                .0
                .contains(&"setoption name UCI_Elo value 1200".to_string()),
        "{sent}"
    );
    drop(gui);

    // A level and UCI_ShowWDL on the command line: the page starts at
    // that level, and the GUI leaves the figures off.
    let log = dir.join("given.log");
    let gui = Gui::start_with(&[
        "--engine",
        &wrapped(&log, "skill"),
        "--option",
        "Skill Level=4",
        "--option",
        "UCI_ShowWDL=false",
    ]);
    assert_eq!(gui.wait_ready()["level"], 4);
    let sent = std::fs::read_to_string(&log).unwrap();
    assert!(
        sent.contains("setoption name UCI_ShowWDL value false"),
        "{sent}"
    );
    assert!(
        !sent.contains("setoption name UCI_ShowWDL value true"),
        "{sent}"
    );
    drop(gui);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_port_in_use_suggests_port_0() {
    let _cpu = shared();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let output = run(&["gui", "--port", &port], LONG);
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    assert!(
        output
            .stderr
            .contains(&format!("cannot listen on 127.0.0.1:{port}"))
            && output.stderr.contains("use --port 0 for any free port"),
        "{}",
        output.stderr
    );
}

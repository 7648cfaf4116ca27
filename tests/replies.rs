//! Every line the engine writes reads back through the client's one reply
//! parser (`dodgem::client::parse_reply`) to the same values: the real
//! engine is driven through `uci`, searches (with and without the solved
//! tables, one and two lines, with win/draw/loss chances), a finished game
//! and refused input, and through `ugi` with its queries; each line it
//! prints must parse, and print back as exactly that line.

use dodgem::client::{OptionKind, Reply, Score, parse_reply};

use crate::common::{Engine, LONG, info_score, info_value, shared};

/// Parses `line`, checks it prints back unchanged, and returns it.
fn read_back(line: &str) -> Reply {
    let reply = parse_reply(line).unwrap_or_else(|| panic!("unreadable engine line: {line:?}"));
    assert_eq!(reply.to_string(), line, "{reply:?}");
    reply
}

/// The number after `key` in `line`, as the parser should have read it.
fn number(line: &str, key: &str) -> Option<u64> {
    info_value(line, key).map(|value| value.parse().expect("a number"))
}

/// Checks an `info` line's values one by one against its words.
fn check_info(line: &str) {
    let Reply::Info(info) = read_back(line) else {
        panic!("not a search info line: {line}");
    };
    assert_eq!(info.depth.map(u64::from), number(line, "depth"), "{line}");
    assert_eq!(info.seldepth.map(u64::from), number(line, "seldepth"));
    assert_eq!(info.multipv.map(u64::from), number(line, "multipv"));
    assert_eq!(info.nodes, number(line, "nodes"), "{line}");
    assert_eq!(info.nps, number(line, "nps"), "{line}");
    assert_eq!(info.hashfull.map(u64::from), number(line, "hashfull"));
    assert_eq!(info.tbhits, number(line, "tbhits"), "{line}");
    assert_eq!(info.time, number(line, "time"), "{line}");
    let score = info_score(line).map(|(kind, value)| match kind.as_str() {
        "cp" => Score::Cp(value),
        "mate" => Score::Mate(value),
        _ => panic!("unknown score kind in {line}"),
    });
    assert_eq!(info.score, score, "{line}");
    let wdl = line.split_once(" wdl ").map(|(_, rest)| {
        let numbers: Vec<u32> = rest
            .split(' ')
            .take(3)
            .map(|n| n.parse().expect("a number"))
            .collect();
        [numbers[0], numbers[1], numbers[2]]
    });
    assert_eq!(info.wdl, wdl, "{line}");
    let pv: Vec<&str> = line
        .split_once(" pv ")
        .map_or(Vec::new(), |(_, moves)| moves.split(' ').collect());
    assert_eq!(info.pv, pv, "{line}");
}

#[test]
fn every_line_the_engine_writes_reads_back_to_the_same_values() {
    let _cpu = shared();
    let mut engine = Engine::start();
    engine.send("uci");
    let (handshake, _) = engine.read_until(|line| line == "uciok", LONG);
    let mut names = Vec::new();
    let mut options = Vec::new();
    for line in &handshake {
        match read_back(line) {
            Reply::IdName(name) => names.push(name),
            Reply::IdAuthor(author) => assert!(!author.is_empty()),
            Reply::Option(option) => options.push(option),
            Reply::UciOk => {}
            other => panic!("unexpected in the handshake: {other:?}"),
        }
    }
    assert_eq!(names.len(), 1, "{handshake:?}");
    assert!(names[0].starts_with("dodgem "), "{names:?}");
    let hash = options
        .iter()
        .find(|o| o.name == "Hash")
        .expect("a Hash option");
    assert!(
        matches!(hash.kind, OptionKind::Spin { min: 1, .. }),
        "{hash:?}"
    );
    assert!(options.iter().any(|o| o.kind == OptionKind::Button));
    assert!(
        options
            .iter()
            .any(|o| matches!(o.kind, OptionKind::Combo(_)))
    );

    engine.send("isready");
    let (line, _) = engine.wait_for("readyok", LONG);
    assert_eq!(read_back(&line), Reply::ReadyOk);

    let mut lines = Vec::new();
    // A search on 5 x 5 (no table), two lines at a time, and on 3 x 3
    // (answered from the built-in table, with tbhits).
    lines.extend(engine.send_all(&[
        "setoption name MultiPV value 2",
        "setoption name UCI_ShowWDL value true",
        "position startpos",
    ]));
    lines.extend(engine.go("go depth 5", LONG));
    lines.extend(engine.send_all(&[
        "setoption name MultiPV value 1",
        "setoption name BoardSize value 3",
        "position startpos",
    ]));
    lines.extend(engine.go("go depth 3", LONG));
    // A finished game, and a refused command.
    lines.extend(engine.send_all(&["position fen 2B/3/W2 b moves c3d3"]));
    lines.extend(engine.go("go depth 2", LONG));
    lines.extend(engine.send_all(&["position startpos moves zz"]));

    let mut seen = [false; 5];
    for line in &lines {
        match read_back(line) {
            Reply::Info(_) => {
                check_info(line);
                seen[0] |= line.contains(" tbhits ");
                seen[1] |= line.contains(" multipv 2 ");
                seen[4] |= line.contains(" wdl ");
            }
            Reply::BestMove { mv, ponder } => {
                let words: Vec<&str> = line.split(' ').collect();
                assert_eq!(mv, words[1], "{line}");
                assert_eq!(ponder.as_deref(), words.get(3).copied(), "{line}");
                seen[2] |= mv == "(none)";
            }
            Reply::InfoString(text) => {
                assert_eq!(line.strip_prefix("info string "), Some(text.as_str()));
                seen[3] = true;
            }
            other => panic!("unexpected after the handshake: {other:?} from {line}"),
        }
    }
    assert_eq!(
        seen, [true; 5],
        "tbhits, multipv 2, bestmove (none), info string and wdl all seen in:\n{lines:#?}"
    );
    engine.quit();
    check_ugi_lines();
}

/// The lines of a UGI session: `ugiok`, `response` to every question,
/// a `bestmove` of exactly two words.
fn check_ugi_lines() {
    let mut engine = Engine::start();
    engine.send("ugi");
    let (handshake, _) = engine.read_until(|line| line == "ugiok", LONG);
    assert_eq!(handshake.last().map(|l| read_back(l)), Some(Reply::UgiOk));
    for line in &handshake {
        assert!(
            matches!(
                read_back(line),
                Reply::IdName(_) | Reply::IdAuthor(_) | Reply::Option(_) | Reply::UgiOk
            ),
            "{line}"
        );
    }
    let mut answers = Vec::new();
    let mut lines = Vec::new();
    for (position, question) in [
        ("position startpos", "p1turn"),
        ("position startpos moves a3b3", "p1turn"),
        ("position startpos", "gameover"),
        ("position startpos", "result"),
        ("position fen 2B/3/WW1 b moves c3d3", "gameover"),
        ("position fen 2B/3/WW1 b moves c3d3", "result"),
        ("position fen 1W1/3/B2 w moves b3b4", "result"),
        (
            "position fen 3/B2/2W b moves a2a3 c1b1 a3a2 b1c1 a2a3 c1b1 a3a2 b1c1",
            "result",
        ),
        ("position startpos moves a3b3 a1a2", "result"),
    ] {
        engine.send(position);
        let printed = engine.send_all(&[&format!("query {question}")]);
        for line in &printed {
            match read_back(line) {
                Reply::Response(answer) => answers.push(answer),
                Reply::InfoString(_) => {}
                other => panic!("unexpected: {other:?} from {line}"),
            }
        }
        lines.extend(printed);
    }
    assert_eq!(
        answers,
        [
            "true", "false", "false", "none", "true", "p1win", "p2win", "draw", "p1win"
        ],
        "{lines:#?}"
    );
    // `bestmove` is exactly two words in UGI.
    engine.send_all(&["setoption name UCI_ShowWDL value true", "position startpos"]);
    for line in engine.go("go p1time 1000 p2time 1000 p1inc 10 p2inc 10", LONG) {
        match read_back(&line) {
            Reply::Info(_) => check_info(&line),
            Reply::BestMove { ponder, .. } => {
                assert_eq!(ponder, None, "{line}");
                assert_eq!(line.split(' ').count(), 2, "{line}");
            }
            other => panic!("unexpected: {other:?} from {line}"),
        }
    }
    engine.quit();
}

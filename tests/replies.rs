//! Every line the engine writes reads back through the client's one reply
//! parser (`dodgem::client::parse_reply`) to the same values: the real
//! engine is driven through `uci`, searches (with and without the solved
//! tables, one and two lines), a finished game and refused input, and each
//! line it prints must parse, and print back as exactly that line.

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
    lines.extend(engine.send_all(&["setoption name MultiPV value 2", "position startpos"]));
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

    let mut seen = [false; 4];
    for line in &lines {
        match read_back(line) {
            Reply::Info(_) => {
                check_info(line);
                seen[0] |= line.contains(" tbhits ");
                seen[1] |= line.contains(" multipv 2 ");
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
        seen, [true; 4],
        "tbhits, multipv 2, bestmove (none) and info string all seen in:\n{lines:#?}"
    );
}

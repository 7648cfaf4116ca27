//! `UCI_ShowWDL`: every `info` line carries `wdl <win> <draw> <loss>`
//! summing to 1000, exact where a table decides the position (built-in
//! tables, layered tables loaded from a directory) or the search proves a
//! result; none without the option.

use crate::common::{Engine, LONG, info_score, is_search_info, run, scratch, shared};

/// The `wdl` numbers of an `info` line.
fn wdl(line: &str) -> Option<[u32; 3]> {
    let (_, rest) = line.split_once(" wdl ")?;
    let numbers: Vec<u32> = rest
        .split(' ')
        .take(3)
        .map(|n| n.parse().expect("a number after wdl"))
        .collect();
    Some([numbers[0], numbers[1], numbers[2]])
}

/// The search `info` lines of a `go`, each checked to carry chances that
/// sum to 1000.
fn search_lines(engine: &mut Engine, go: &str) -> Vec<(String, [u32; 3])> {
    let lines = engine.go(go, LONG);
    let infos: Vec<(String, [u32; 3])> = lines
        .iter()
        .filter(|line| is_search_info(line))
        .map(|line| {
            let chances = wdl(line).unwrap_or_else(|| panic!("no wdl in {line}"));
            assert_eq!(chances.iter().sum::<u32>(), 1000, "{line}");
            (line.clone(), chances)
        })
        .collect();
    assert!(!infos.is_empty(), "{lines:?}");
    infos
}

const WIN: [u32; 3] = [1000, 0, 0];
const DRAW: [u32; 3] = [0, 1000, 0];
const LOSS: [u32; 3] = [0, 0, 1000];

#[test]
fn chances_sum_to_1000_and_follow_the_score() {
    let _cpu = shared();
    let mut engine = Engine::start();
    let quiet = engine.send_all(&["setoption name BoardSize value 5", "position startpos"]);
    assert!(quiet.is_empty(), "{quiet:?}");
    let lines = engine.go("go depth 3", LONG);
    assert!(
        lines.iter().all(|line| !line.contains(" wdl ")),
        "{lines:?}"
    );
    engine.send_all(&[
        "setoption name UCI_ShowWDL value true",
        "setoption name MultiPV value 3",
    ]);
    let mut seen = 0;
    for (size, fen) in [
        (5, "B4/B4/B4/B4/1WWWW b"),
        (5, "1B3/2B2/B4/4B/W1WW1 w"),
        (6, "B5/B5/B5/B5/B5/1WWWWW b"),
        (8, "B7/B7/B7/B7/B7/B7/B7/1WWWWWWW b"),
    ] {
        engine.send_all(&[&format!("position fen {fen}")]);
        let lines = search_lines(&mut engine, "go depth 6");
        for (line, chances) in &lines {
            let Some(("cp", cp)) = info_score(line).as_ref().map(|(k, v)| (k.as_str(), *v)) else {
                continue;
            };
            // Ahead, the side to move is likelier to win than to lose.
            if cp > 0 {
                assert!(chances[0] >= chances[2], "{size}: {line}");
            } else if cp < 0 {
                assert!(chances[0] <= chances[2], "{size}: {line}");
            }
            seen += 1;
        }
    }
    assert!(seen > 20);
    // A result the search proves is exact.
    engine.send_all(&[
        "setoption name Tablebase value false",
        "position fen 4B/5/5/5/1WWWW b",
    ]);
    for (line, chances) in search_lines(&mut engine, "go depth 4") {
        if line.contains(" multipv 1 ") {
            assert_eq!(chances, WIN, "{line}");
        }
    }
    engine.quit();
}

#[test]
fn chances_are_exact_where_a_table_decides() {
    let _cpu = shared();
    let mut engine = Engine::start();
    engine.send_all(&["setoption name UCI_ShowWDL value true"]);
    // 3 x 3 from the built-in table: the start is won, this one lost.
    for (fen, expected) in [("B2/B2/1WW b", WIN), ("1B1/B2/1WW w", LOSS)] {
        engine.send_all(&[&format!("position fen {fen}")]);
        for (line, chances) in search_lines(&mut engine, "go depth 5") {
            assert_eq!(chances, expected, "{line}");
        }
    }
    // 4 x 4: the start is a draw, searched over the drawing moves; every
    // line says so, at every depth and in every MultiPV line.
    engine.send_all(&[
        "setoption name MultiPV value 2",
        "position fen B3/B3/B3/1WWW b",
    ]);
    for (line, chances) in search_lines(&mut engine, "go depth 5") {
        assert_eq!(chances, DRAW, "{line}");
    }
    engine.quit();
}

#[test]
fn chances_are_exact_from_loaded_layered_tables() {
    let _cpu = shared();
    let dir = scratch("wdl-layered");
    let tables = dir.join("t4");
    let out = run(
        &[
            "solve",
            "--size",
            "4",
            "--out",
            tables.to_str().unwrap(),
            "--quiet",
        ],
        LONG,
    );
    assert!(out.status.success(), "{}", out.stderr);
    let mut engine = Engine::start();
    let loaded = engine.send_all(&[
        "setoption name UCI_ShowWDL value true",
        &format!("setoption name TablebasePath value {}", tables.display()),
    ]);
    assert!(
        loaded.iter().any(|l| l.contains("loaded 4x4")),
        "{loaded:?}"
    );
    // Won for the side to move (the layered tables, to which `solve
    // --out` added the distances to the end: a mate in 2), and drawn.
    for (fen, expected) in [("2B1/4/4/WW2 b", WIN), ("B3/B3/B3/1WWW b", DRAW)] {
        engine.send_all(&[&format!("position fen {fen}")]);
        let lines = search_lines(&mut engine, "go depth 4");
        for (line, chances) in &lines {
            assert_eq!(*chances, expected, "{line}");
        }
        if expected == WIN {
            let score = info_score(&lines[0].0).unwrap();
            assert_eq!(score, ("mate".to_string(), 2), "{}", lines[0].0);
        }
    }
    engine.quit();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_weak_level_reports_only_the_lines_asked_for_with_exact_table_chances() {
    let _cpu = shared();
    let mut engine = Engine::start();
    engine.send_all(&[
        "setoption name UCI_ShowWDL value true",
        "setoption name Skill Level value 3",
        "position startpos",
    ]);
    // 3 x 3: every root move's value is known from the table: each line's
    // chances are exact (the move played may be a losing one).
    for _ in 0..5 {
        let lines = engine.go("go depth 8", LONG);
        let best = lines.last().expect("bestmove");
        let played = best.split(' ').nth(1).expect("a move");
        assert!(["a2a1", "a2b2", "a3b3"].contains(&played), "{best}");
        for line in lines.iter().filter(|l| is_search_info(l)) {
            assert!(line.contains(" multipv 1 "), "{line}");
            let chances = wdl(line).expect("wdl");
            assert!([WIN, LOSS].contains(&chances), "{line}");
        }
    }
    // 5 x 5: searched; chances from the curve.
    engine.send_all(&["setoption name BoardSize value 5", "position startpos"]);
    for (line, chances) in search_lines(&mut engine, "go nodes 100000") {
        assert!(line.contains(" multipv 1 "), "{line}");
        assert!(chances != DRAW, "{line}");
    }
    engine.quit();
}

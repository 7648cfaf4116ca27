//! The search on positions whose values are known.

use crate::common::shared;
use dodgem::board::Rules;
use dodgem::eval::Evaluation;
use dodgem::notation::{format_move, parse_position};
use dodgem::search::{Limits, Request, Score, SearchResult, Settings, Signals, Tables, search};
use dodgem::solver::Dtz;
use dodgem::tablebase;
use dodgem::{Position, search::Info};

fn run(position: &str, rules: Rules, limits: Limits, multipv: usize) -> (SearchResult, Vec<Info>) {
    run_with(position, rules, limits, multipv, Evaluation::default())
}

/// As [`run`], with the given evaluation.
fn run_with(
    position: &str,
    rules: Rules,
    limits: Limits,
    multipv: usize,
    evaluation: Evaluation,
) -> (SearchResult, Vec<Info>) {
    let request = Request {
        position: parse_position(position).unwrap(),
        history: Vec::new(),
        limits,
        settings: Settings {
            rules,
            multipv,
            evaluation,
            ..Settings::default()
        },
        tablebase: Default::default(),
    };
    let mut tables = Tables::new(16);
    let mut infos = Vec::new();
    let outcome = search(&request, &mut tables, &Signals::default(), &mut |info| {
        infos.push(info)
    });
    (outcome, infos)
}

fn depth(d: u32) -> Limits {
    Limits {
        depth: Some(d),
        ..Limits::default()
    }
}

fn best(outcome: &SearchResult) -> String {
    format_move(outcome.best_move)
}

#[test]
fn three_by_three_start_is_a_win_in_19_plies_under_both_rules() {
    let _cpu = shared();
    for rules in Rules::ALL {
        let (outcome, infos) = run("B2/B2/1WW b", rules, depth(30), 1);
        assert_eq!(best(&outcome), "a3b3", "{rules:?}");
        // 19 plies: Black makes 10 moves.
        assert_eq!(infos.last().unwrap().score, Score::Mate(10), "{rules:?}");
    }
}

#[test]
fn drives_the_last_car_off() {
    let _cpu = shared();
    let (outcome, infos) = run("2B/3/WW1 b", Rules::Textbook, depth(5), 1);
    assert_eq!(best(&outcome), "c3d3");
    assert_eq!(infos.last().unwrap().score, Score::Mate(1));
}

#[test]
fn blocking_the_opponent_wins_under_textbook_and_is_avoided_under_classic() {
    let _cpu = shared();
    // Black b2b1 leaves White's only car a1 with no move.
    let position = "3/BB1/W2 b";
    let (outcome, infos) = run(position, Rules::Textbook, depth(8), 1);
    assert_eq!(best(&outcome), "b2b1");
    assert_eq!(infos.last().unwrap().score, Score::Mate(1));
    let (outcome, _) = run(position, Rules::Classic, depth(8), 1);
    assert_ne!(
        best(&outcome),
        "b2b1",
        "under classic blocking White hands it the win"
    );
}

#[test]
fn blocked_side_to_move_is_a_loss_or_a_win_per_rules() {
    let _cpu = shared();
    let blocked = parse_position("3/B2/WB1 w").unwrap();
    assert!(blocked.legal_moves().is_empty());
    let textbook = blocked.outcome(Rules::Textbook).unwrap();
    assert_eq!(textbook.winner(), Some(dodgem::Color::Black));
    let classic = blocked.outcome(Rules::Classic).unwrap();
    assert_eq!(classic.winner(), Some(dodgem::Color::White));
}

#[test]
fn a_race_the_cars_can_no_longer_influence_is_scored_exactly_at_once() {
    let _cpu = shared();
    // Every White car stands north-west of every Black car: Black needs
    // 3 moves, White 2, so White wins after 2 moves of its own; the
    // search knows it at depth 1, under both rules.
    for rules in Rules::ALL {
        let (_, infos) = run("WW3/5/3B1/4B/5 b", rules, depth(1), 1);
        assert_eq!(infos.last().unwrap().score, Score::Mate(-2), "{rules:?}");
        let (_, infos) = run("WW3/5/3B1/4B/5 w", rules, depth(1), 1);
        assert_eq!(infos.last().unwrap().score, Score::Mate(2), "{rules:?}");
    }
}

#[test]
fn reports_a_loss_as_negative_mate() {
    let _cpu = shared();
    // White to move; Black's last car is on its exit line and White
    // cannot get both cars off first.
    let (_, infos) = run("2B/3/WW1 w", Rules::Textbook, depth(6), 1);
    match infos.last().unwrap().score {
        Score::Mate(n) => assert!(n < 0, "expected a loss, got mate {n}"),
        other => panic!("expected a mate score, got {other:?}"),
    }
}

#[test]
fn node_and_depth_limited_searches_are_deterministic() {
    let _cpu = shared();
    let limits = Limits {
        nodes: Some(20_000),
        ..Limits::default()
    };
    let first = run("B4/B4/B4/B4/1WWWW b", Rules::Classic, limits.clone(), 1);
    let second = run("B4/B4/B4/B4/1WWWW b", Rules::Classic, limits, 1);
    assert_eq!(first.0, second.0);
    let strip = |infos: &[Info]| -> Vec<(i32, Score, u64, Vec<String>)> {
        infos
            .iter()
            .map(|i| {
                (
                    i.depth,
                    i.score,
                    i.nodes,
                    i.pv.iter().map(|&m| format_move(Some(m))).collect(),
                )
            })
            .collect()
    };
    assert_eq!(strip(&first.1), strip(&second.1));
    assert!(first.0.nodes <= 20_000 + 1);
}

#[test]
fn multipv_reports_distinct_first_moves() {
    let _cpu = shared();
    let (_, infos) = run("B3/B3/B3/1WWW b", Rules::Textbook, depth(6), 3);
    let last_depth: Vec<&Info> = infos.iter().filter(|i| i.depth == 6).collect();
    assert_eq!(last_depth.len(), 3);
    let firsts: std::collections::HashSet<_> = last_depth.iter().map(|i| i.pv[0]).collect();
    assert_eq!(firsts.len(), 3);
    assert!(last_depth.windows(2).all(|w| {
        let rank = |s: Score| match s {
            Score::Cp(cp) => cp as i64,
            Score::Mate(n) if n > 0 => 1_000_000 - n as i64,
            Score::Mate(n) => -1_000_000 - n as i64,
        };
        rank(w[0].score) >= rank(w[1].score)
    }));
}

#[test]
fn searchmoves_restricts_the_root() {
    let _cpu = shared();
    let position = parse_position("B2/B2/1WW b").unwrap();
    let only = dodgem::notation::parse_move("a2a1", &position).unwrap();
    let limits = Limits {
        depth: Some(6),
        searchmoves: vec![only],
        ..Limits::default()
    };
    let (outcome, _) = run("B2/B2/1WW b", Rules::Textbook, limits, 1);
    assert_eq!(best(&outcome), "a2a1");
}

#[test]
fn a_third_occurrence_is_a_draw_and_saves_a_lost_game() {
    let _cpu = shared();
    // White to move is lost: Black's last car drives off next move...
    let lost = "2B/3/WW1 w";
    let (_, infos) = run(lost, Rules::Textbook, depth(4), 1);
    assert!(matches!(infos.last().unwrap().score, Score::Mate(n) if n < 0));
    // ...unless the game has already seen the position after b1c1 twice:
    // playing it a third time draws.
    let position: Position = parse_position(lost).unwrap();
    let shuffle = dodgem::notation::parse_move("b1c1", &position).unwrap();
    let repeated = position.play(shuffle).key();
    let request = Request {
        position,
        // Positions alternate sides, so the repeated (Black to move)
        // position sits an odd number of plies before the root.
        history: vec![11, repeated, 12, repeated],
        limits: depth(4),
        settings: Settings::default(),
        tablebase: Default::default(),
    };
    let mut infos = Vec::new();
    let outcome = search(
        &request,
        &mut Tables::new(1),
        &Signals::default(),
        &mut |info| infos.push(info),
    );
    assert_eq!(best(&outcome), "b1c1");
    assert_eq!(infos.last().unwrap().score, Score::Cp(0));
    // Seen only once before, it would be just the second occurrence.
    let request = Request {
        history: vec![11, repeated],
        ..request
    };
    let mut infos = Vec::new();
    search(
        &request,
        &mut Tables::new(1),
        &Signals::default(),
        &mut |info| infos.push(info),
    );
    assert!(matches!(infos.last().unwrap().score, Score::Mate(n) if n < 0));
}

#[test]
fn an_iteration_cut_short_does_not_play_a_move_it_proved_lost() {
    let _cpu = shared();
    // A draw; a2b2 loses. Up to depth 5 the search with `Evaluation race`
    // prefers a2b2; the depth 6 iteration, cut short by the node limit,
    // proves a2b2 lost before it reaches another move. Playing the cut
    // iteration's first move then threw the draw away.
    let position = "1B2/WB1W/B3/1W2 b";
    let root = parse_position(position).unwrap();
    let table = tablebase::builtin(4, Rules::Textbook).unwrap();
    let after = |mv: &str| {
        let mv = root
            .legal_moves()
            .iter()
            .copied()
            .find(|&m| format_move(Some(m)) == mv);
        table.probe(&root.play(mv.unwrap()))
    };
    assert_eq!(table.probe(&root), Some(Dtz::Draw));
    assert_eq!(after("a2b2"), Some(Dtz::Win(1)), "a2b2 loses");
    for nodes in [660, 680, 700, 720, 740] {
        let limits = Limits {
            nodes: Some(nodes),
            ..Limits::default()
        };
        let (outcome, infos) = run_with(position, Rules::Textbook, limits, 1, Evaluation::Race);
        let last = infos.last().unwrap();
        assert_eq!(
            format_move(last.pv.first().copied()),
            "a2b2",
            "{nodes} nodes"
        );
        let played = best(&outcome);
        assert!(
            after(&played) == Some(Dtz::Draw),
            "{nodes} nodes: {played} does not keep the draw"
        );
    }
}

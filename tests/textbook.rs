//! The textbook algorithms (`SearchAlgorithm minimax` / `alphabeta`, and
//! the trees the GUI draws) against brute force written here on its own:
//! a plain recursive count of every position down to the depth, a
//! minimax over it, and an alpha-beta in negamax form (the same algorithm
//! written the other way round, so its node count must agree exactly).
//! Also from the protocol: `go depth D` reports those exact counts.

use dodgem::eval::{Evaluation, evaluate};
use dodgem::notation::{format_move, parse_position};
use dodgem::search::MATE;
use dodgem::search::textbook::{self, Algorithm, Leaf};
use dodgem::{Color, Position, Rules};

use crate::common::{Engine, LONG, info_value, shared};

const INF: i32 = 1_000_000;

/// Positions on every size small enough to search to depth 4, with
/// finished games, blocked sides and exits within reach.
const POSITIONS: [&str; 9] = [
    "B2/B2/1WW b",
    "B2/3/BWW w",
    "1B1/1W1/B1W b",
    "2B/3/WW1 b",
    "3/B2/WB1 b",
    "B3/B3/B3/1WWW b",
    "1B2/2W1/B2W/1W2 w",
    "B4/B4/B4/B4/1WWWW b",
    "2B2/1W3/B1W2/3B1/W3W w",
];

/// Children in the order of their moves' names.
fn children(position: &Position) -> Vec<Position> {
    let mut moves: Vec<_> = position.legal_moves().as_slice().to_vec();
    moves.sort_by_key(|&mv| format_move(Some(mv)));
    moves.into_iter().map(|mv| position.play(mv)).collect()
}

/// The value of a finished game at `ply`, White's view, if it is one.
fn game_over(position: &Position, rules: Rules, ply: i32) -> Option<i32> {
    let winner = position.outcome(rules)?.winner()?;
    Some(if winner == Color::White {
        MATE - ply
    } else {
        -(MATE - ply)
    })
}

/// Minimax by brute force: (value for White, positions visited).
fn brute_minimax(position: &Position, depth: u32, ply: i32, rules: Rules) -> (i32, u64) {
    if let Some(value) = game_over(position, rules, ply) {
        return (value, 1);
    }
    if depth == 0 {
        return (evaluate(position, Evaluation::Textbook, rules), 1);
    }
    let white = position.side_to_move() == Color::White;
    let mut best = if white { -INF } else { INF };
    let mut count = 1;
    for child in children(position) {
        let (value, nodes) = brute_minimax(&child, depth - 1, ply + 1, rules);
        count += nodes;
        best = if white {
            best.max(value)
        } else {
            best.min(value)
        };
    }
    (best, count)
}

/// Alpha-beta in negamax form (fail-soft): (value for the side to move,
/// positions visited).
fn negamax(
    position: &Position,
    depth: u32,
    ply: i32,
    mut alpha: i32,
    beta: i32,
    rules: Rules,
) -> (i32, u64) {
    let sign = if position.side_to_move() == Color::White {
        1
    } else {
        -1
    };
    if let Some(value) = game_over(position, rules, ply) {
        return (sign * value, 1);
    }
    if depth == 0 {
        return (sign * evaluate(position, Evaluation::Textbook, rules), 1);
    }
    let mut best = -INF;
    let mut count = 1;
    for child in children(position) {
        let (value, nodes) = negamax(&child, depth - 1, ply + 1, -beta, -alpha, rules);
        count += nodes;
        best = best.max(-value);
        alpha = alpha.max(best);
        if alpha >= beta {
            break;
        }
    }
    (best, count)
}

#[test]
fn minimax_and_alphabeta_agree_with_brute_force() {
    let _cpu = shared();
    for text in POSITIONS {
        let position = parse_position(text).unwrap();
        for rules in Rules::ALL {
            for depth in 1..=4 {
                let context = format!("{text} {} depth {depth}", rules.name());
                let (value, nodes) = brute_minimax(&position, depth, 0, rules);
                let minimax = textbook::run(
                    Algorithm::Minimax,
                    &position,
                    depth,
                    rules,
                    Evaluation::Textbook,
                );
                assert_eq!(
                    (minimax.value, minimax.counts.nodes),
                    (value, nodes),
                    "{context}"
                );
                let sign = if position.side_to_move() == Color::White {
                    1
                } else {
                    -1
                };
                let (negated, pruned) = negamax(&position, depth, 0, -INF, INF, rules);
                let alphabeta = textbook::run(
                    Algorithm::AlphaBeta,
                    &position,
                    depth,
                    rules,
                    Evaluation::Textbook,
                );
                assert_eq!(sign * negated, value, "{context}: negamax");
                assert_eq!(
                    (alphabeta.value, alphabeta.counts.nodes),
                    (value, pruned),
                    "{context}: alpha-beta"
                );
                assert!(pruned <= nodes, "{context}");
                // The same best move: the first that reaches the value.
                assert_eq!(alphabeta.pv.first(), minimax.pv.first(), "{context}");
            }
        }
    }
}

#[test]
fn minimax_counts_match_perft_from_the_start() {
    let _cpu = shared();
    // No game ends within 4 plies of the 3 x 3 start, so minimax visits
    // every position perft counts: 1 + 3 + 7 + 27 + 101.
    let start = Position::start(3);
    let found = textbook::run(
        Algorithm::Minimax,
        &start,
        4,
        Rules::Textbook,
        Evaluation::Textbook,
    );
    assert_eq!(found.counts.nodes, 1 + 3 + 7 + 27 + 101);
    assert_eq!(found.counts.leaves, 101);
    // 4 x 4 to depth 3: 1 + 4 + 14 + 79.
    let found = textbook::run(
        Algorithm::Minimax,
        &Position::start(4),
        3,
        Rules::Textbook,
        Evaluation::Textbook,
    );
    assert_eq!(found.counts.nodes, 98);
}

#[test]
fn the_worked_examples_of_the_evaluation() {
    // As the course states them: White's view, whoever is to move.
    for side in ["b", "w"] {
        for (text, value) in [("B2/3/BWW", 75), ("1B1/1W1/B1W", -5), ("B2/B2/1WW", 0)] {
            let position = parse_position(&format!("{text} {side}")).unwrap();
            assert_eq!(
                evaluate(&position, Evaluation::Textbook, Rules::Textbook),
                value,
                "{text}"
            );
            // A depth-0 tree is the leaf itself with that value.
            let tree = textbook::tree(&position, 0, Rules::Textbook, Evaluation::Textbook);
            assert_eq!(tree.root.value, value);
            assert_eq!(tree.root.leaf, Some(Leaf::Evaluated));
        }
    }
}

/// Every node of `node`'s tree, with its minimax value checked against
/// its children's and alpha-beta's visits checked against the window
/// rules; returns (positions, positions alpha-beta visited).
fn check_tree(node: &textbook::TreeNode) -> (u64, u64) {
    let max = node.side == Color::White;
    if !node.children.is_empty() {
        let values = node.children.iter().map(|child| child.value);
        let backed_up = if max { values.max() } else { values.min() };
        assert_eq!(Some(node.value), backed_up, "{node:?}");
    }
    let mut counts = (1, u64::from(node.alphabeta.is_some()));
    let mut visited_after_cut = false;
    if let Some(visit) = node.alphabeta {
        if let Some(cut) = visit.cut_after {
            // The cut child reached beyond the window.
            let last = node.children[cut - 1].alphabeta.expect("visited").value;
            if max {
                assert!(last >= visit.beta, "{node:?}");
            } else {
                assert!(last <= visit.alpha, "{node:?}");
            }
            visited_after_cut = node.children[cut..]
                .iter()
                .any(|child| child.alphabeta.is_some());
        } else {
            assert!(node.children.iter().all(|child| child.alphabeta.is_some()));
        }
        // Inside the window, alpha-beta's value is the exact one.
        if visit.alpha < visit.value && visit.value < visit.beta {
            assert_eq!(visit.value, node.value, "{node:?}");
        }
    } else {
        assert!(node.children.iter().all(|child| child.alphabeta.is_none()));
    }
    assert!(!visited_after_cut, "{node:?}");
    for child in &node.children {
        let (all, visited) = check_tree(child);
        counts.0 += all;
        counts.1 += visited;
    }
    counts
}

#[test]
fn trees_carry_both_algorithms() {
    let _cpu = shared();
    let mut cuts = 0;
    for text in POSITIONS {
        let position = parse_position(text).unwrap();
        for depth in 1..=3 {
            let tree = textbook::tree(&position, depth, Rules::Textbook, Evaluation::Textbook);
            let (all, visited) = check_tree(&tree.root);
            assert_eq!(all, tree.minimax.nodes, "{text} {depth}");
            assert_eq!(visited, tree.alphabeta.nodes, "{text} {depth}");
            assert_eq!(
                textbook::count_nodes(&position, depth, Rules::Textbook, u64::MAX),
                all
            );
            cuts += all - visited;
        }
    }
    assert!(cuts > 0, "alpha-beta never cut anything");
    // The count stops once over its limit.
    let start = Position::start(8);
    assert!(textbook::count_nodes(&start, 6, Rules::Textbook, 1000) <= 1001);
}

#[test]
fn go_reports_the_exact_counts() {
    let _cpu = shared();
    let mut engine = Engine::start();
    engine.send_all(&[
        "setoption name Evaluation value textbook",
        "setoption name Rules value classic",
    ]);
    for text in ["B2/B2/1WW b", "1B2/2W1/B2W/1W2 w", "B4/B4/B4/B4/1WWWW b"] {
        let position = parse_position(text).unwrap();
        for algorithm in [Algorithm::Minimax, Algorithm::AlphaBeta] {
            engine.send_all(&[
                &format!("setoption name SearchAlgorithm value {}", algorithm.name()),
                &format!("position fen {text}"),
            ]);
            let lines = engine.go("go depth 3", LONG);
            let infos: Vec<&String> = lines.iter().filter(|l| l.contains(" nodes ")).collect();
            assert_eq!(infos.len(), 3, "{lines:?}");
            for (depth, line) in (1..=3).zip(infos) {
                let found = textbook::run(
                    algorithm,
                    &position,
                    depth,
                    Rules::Classic,
                    Evaluation::Textbook,
                );
                let (value, nodes) = brute_minimax(&position, depth, 0, Rules::Classic);
                assert_eq!(found.value, value);
                if algorithm == Algorithm::Minimax {
                    assert_eq!(found.counts.nodes, nodes);
                }
                assert_eq!(info_value(line, "depth"), Some(&*depth.to_string()));
                assert_eq!(
                    info_value(line, "nodes"),
                    Some(&*found.counts.nodes.to_string()),
                    "{text} {line}"
                );
                let side = if position.side_to_move() == Color::White {
                    1
                } else {
                    -1
                };
                assert!(
                    line.contains(&format!(" score cp {} ", side * value)),
                    "{text} {line}"
                );
                assert!(line.contains(&format!(" pv {}", format_move(found.pv.first().copied()))));
            }
            let best = lines.last().unwrap();
            assert!(best.starts_with("bestmove "), "{best}");
        }
    }
    engine.quit();
}

#[test]
fn stop_ends_a_textbook_search() {
    let _cpu = shared();
    let mut engine = Engine::start();
    engine.send_all(&[
        "setoption name SearchAlgorithm value minimax",
        "setoption name BoardSize value 8",
        "position startpos",
        "go infinite",
    ]);
    // Depth 1 always completes; stop then ends the deeper ones.
    engine.wait_for("info depth 2 ", LONG);
    engine.send("stop");
    let (line, _) = engine.wait_for("bestmove", LONG);
    assert!(line.starts_with("bestmove a"), "{line}");
    engine.quit();
}

//! `GET /api/tree`: the game tree below a position, as the course draws
//! it, for the "How the engine thinks" panel. The tree is the library's
//! own ([`crate::search::textbook::tree`]): the textbook evaluation at the
//! leaves, minimax values backed up, and alpha-beta's window, value and
//! cut-offs at every node it visits. It is computed here, in the server
//! (it is the algorithm that is being shown, not any engine's opinion),
//! outside the session's lock.

use serde::Serialize;

use super::error::ApiError;
use crate::board::{Position, Rules};
use crate::eval::Evaluation;
use crate::notation;
use crate::search::textbook::{self, Counts, Leaf, TreeNode, Visit};
use crate::search::{INFINITY, MATE_BOUND};

/// Depths the panel offers.
pub const DEPTHS: std::ops::RangeInclusive<u32> = 1..=4;
/// Depths always drawn; deeper ones only when the tree is small enough.
const ALWAYS_DRAWN: u32 = 3;
/// The most positions a tree deeper than [`ALWAYS_DRAWN`] may have.
pub const MAX_DRAWN: u64 = 1_000;

/// The reply.
#[derive(Debug, Serialize)]
pub struct TreeReply {
    pub ply: usize,
    pub depth: u32,
    pub position: String,
    pub rules: &'static str,
    /// Values at or beyond this (in absolute value) are won games:
    /// `MATE - ply` for the winner (White positive).
    pub win: i32,
    /// The value standing for infinity (alpha and beta at the start).
    pub infinity: i32,
    /// The deepest tree of this position the panel draws.
    pub deepest: u32,
    pub minimax: CountsState,
    pub alphabeta: CountsState,
    /// The effective branching factor B: minimax's leaves are B^depth.
    pub branching: f64,
    /// The fewest leaves alpha-beta can evaluate in a uniform tree of
    /// branching B: B^ceil(D/2) + B^floor(D/2) - 1 (2 B^(D/2) - 1 for
    /// even D).
    pub best_case: f64,
    /// The line both algorithms choose.
    pub pv: Vec<String>,
    pub root: NodeState,
}

#[derive(Debug, Serialize)]
pub struct CountsState {
    /// Positions visited, the root included.
    pub nodes: u64,
    /// Positions valued without looking further.
    pub leaves: u64,
}

impl From<Counts> for CountsState {
    fn from(counts: Counts) -> CountsState {
        CountsState {
            nodes: counts.nodes,
            leaves: counts.leaves,
        }
    }
}

/// One position of the tree.
#[derive(Debug, Serialize)]
pub struct NodeState {
    #[serde(rename = "move")]
    pub mv: Option<String>,
    /// The side to move: `white` (MAX) or `black` (MIN).
    pub side: &'static str,
    /// Minimax's value, White's point of view.
    pub value: i32,
    /// `eval` (the depth limit: the textbook evaluation) or `end` (the
    /// game is over).
    pub leaf: Option<&'static str>,
    /// Alpha-beta's visit; `null` where it cut the branch off.
    pub ab: Option<VisitState>,
    pub children: Vec<NodeState>,
}

#[derive(Debug, Serialize)]
pub struct VisitState {
    pub alpha: i32,
    pub beta: i32,
    pub value: i32,
    /// Children searched before the cut-off (the rest were cut).
    pub cut_after: Option<usize>,
}

impl From<Visit> for VisitState {
    fn from(visit: Visit) -> VisitState {
        VisitState {
            alpha: visit.alpha,
            beta: visit.beta,
            value: visit.value,
            cut_after: visit.cut_after,
        }
    }
}

fn node_state(node: TreeNode) -> NodeState {
    NodeState {
        mv: node.mv.map(|mv| notation::format_move(Some(mv))),
        side: node.side.key(),
        value: node.value,
        leaf: node.leaf.map(|leaf| match leaf {
            Leaf::Evaluated => "eval",
            Leaf::GameOver => "end",
        }),
        ab: node.alphabeta.map(VisitState::from),
        children: node.children.into_iter().map(node_state).collect(),
    }
}

/// The deepest tree of `position` that is drawn.
fn deepest(position: &Position, rules: Rules) -> u32 {
    let mut deepest = ALWAYS_DRAWN;
    for depth in ALWAYS_DRAWN + 1..=*DEPTHS.end() {
        if textbook::count_nodes(position, depth, rules, MAX_DRAWN) > MAX_DRAWN {
            break;
        }
        deepest = depth;
    }
    deepest
}

/// Reads `depth=D&ply=P` (both optional: depth 2, the ply on show).
///
/// # Errors
/// 400 for an unknown parameter or a value that is not a number.
pub fn parse_query(query: &str) -> Result<(u32, Option<usize>), ApiError> {
    let mut depth = 2;
    let mut ply = None;
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let number = || {
            value.parse::<u64>().map_err(|_| {
                ApiError::bad_request(format!(
                    "{name} must be a whole number, not {}",
                    crate::protocol::quote(value)
                ))
            })
        };
        match name {
            "depth" => depth = u32::try_from(number()?).unwrap_or(u32::MAX),
            "ply" => ply = Some(usize::try_from(number()?).unwrap_or(usize::MAX)),
            _ => {
                return Err(ApiError::bad_request(format!(
                    "unknown parameter {} (the tree takes depth and ply)",
                    crate::protocol::quote(name)
                )));
            }
        }
    }
    Ok((depth, ply))
}

/// The tree of `position` (after `ply` moves) to `depth`.
///
/// # Errors
/// 400 for a depth outside 1..4, or 4 where the tree is too large to draw.
pub fn tree(
    position: &Position,
    rules: Rules,
    ply: usize,
    depth: u32,
) -> Result<TreeReply, ApiError> {
    if !DEPTHS.contains(&depth) {
        return Err(ApiError::bad_request(format!(
            "depth {depth} is outside {}..{}",
            DEPTHS.start(),
            DEPTHS.end()
        )));
    }
    let deepest = deepest(position, rules);
    if depth > deepest {
        return Err(ApiError::bad_request(format!(
            "depth {depth} does not fit: this tree has more than {MAX_DRAWN} positions (choose 1 to {deepest})"
        )));
    }
    let tree = textbook::tree(position, depth, rules, Evaluation::Textbook);
    let leaves = tree.minimax.leaves.max(1) as f64;
    let branching = leaves.powf(1.0 / f64::from(depth));
    let best_case =
        branching.powi(depth.div_ceil(2) as i32) + branching.powi((depth / 2) as i32) - 1.0;
    Ok(TreeReply {
        ply,
        depth,
        position: notation::format_position(position),
        rules: rules.name(),
        win: MATE_BOUND,
        infinity: INFINITY,
        deepest,
        minimax: tree.minimax.into(),
        alphabeta: tree.alphabeta.into(),
        branching,
        best_case,
        pv: tree
            .pv
            .iter()
            .map(|&mv| notation::format_move(Some(mv)))
            .collect(),
        root: node_state(tree.root),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_query() {
        assert_eq!(parse_query("").unwrap(), (2, None));
        assert_eq!(parse_query("depth=3&ply=4").unwrap(), (3, Some(4)));
        assert!(parse_query("depth=x").is_err());
        assert!(parse_query("width=3").is_err());
    }

    #[test]
    fn depth_four_only_where_it_fits() {
        let start = Position::start(3);
        assert_eq!(deepest(&start, Rules::Textbook), 4);
        assert!(tree(&start, Rules::Textbook, 0, 4).is_ok());
        assert!(tree(&start, Rules::Textbook, 0, 0).is_err());
        let big = Position::start(8);
        assert_eq!(deepest(&big, Rules::Textbook), 3);
        let error = tree(&big, Rules::Textbook, 0, 4).unwrap_err();
        assert!(error.message.contains("does not fit"), "{error:?}");
        let reply = tree(&start, Rules::Textbook, 0, 2).unwrap();
        // 3 x 3 start: 7 leaves at depth 2, B = sqrt(7), 2B - 1.
        assert_eq!(reply.minimax.leaves, 7);
        assert!((reply.best_case - (2.0 * 7f64.sqrt() - 1.0)).abs() < 1e-9);
    }
}

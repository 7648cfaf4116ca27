//! The two search algorithms of the course this engine grew out of, in
//! their plain textbook form: **minimax** and **alpha-beta**, with no
//! solved table, no move ordering, no transposition table and no
//! repetition detection. They exist to be watched and counted: the
//! `SearchAlgorithm` option runs them under `go` (their node counts are
//! exact), and the GUI's "How the engine thinks" panel draws their trees
//! ([`tree`]).
//!
//! Values are from **White's** point of view, as the course states them:
//! White is the maximising player (MAX), Black the minimising one (MIN).
//! A leaf at the depth limit gets the static evaluation; a finished game
//! (all of a side's cars off, or a blocked side to move, judged by the
//! rules) is worth `MATE - ply` to the winner, so a nearer win is worth
//! more. Children are visited in the order of their moves' names (`a2a1`
//! before `a2b2`), the order a person reading the tree expects.
//!
//! Alpha-beta is the fail-soft form: a MAX node stops at the first child
//! worth at least beta (a beta cut-off), a MIN node at the first worth at
//! most alpha (an alpha cut-off). With the same move order it returns the
//! same root value and best move as minimax, visiting at best
//! `B^ceil(D/2) + B^floor(D/2) - 1` leaves of a uniform tree of branching
//! factor B and depth D (`2 B^(D/2) - 1` for even D) where minimax visits
//! `B^D`.
//!
//! ```
//! use dodgem::{Position, Rules};
//! use dodgem::eval::Evaluation;
//! use dodgem::search::textbook::{Algorithm, run};
//! let start = Position::start(3);
//! let minimax = run(Algorithm::Minimax, &start, 3, Rules::Textbook, Evaluation::Textbook);
//! let alphabeta = run(Algorithm::AlphaBeta, &start, 3, Rules::Textbook, Evaluation::Textbook);
//! assert_eq!(minimax.value, alphabeta.value);
//! // 1 + 3 + 7 + 27 positions: every one down to depth 3 (perft 1..3).
//! assert_eq!(minimax.counts.nodes, 38);
//! assert!(alphabeta.counts.nodes < minimax.counts.nodes);
//! ```

use std::time::{Duration, Instant};

use super::{INFINITY, Info, MATE, MAX_DEPTH, MAX_PLY, Request, Score, SearchResult, Signals};
use crate::board::{Color, Move, Position, Rules};
use crate::eval::{Evaluation, evaluate};
use crate::wdl::{Curve, Wdl};

/// Which search `go` runs (the `SearchAlgorithm` option).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// The engine's own search (see [`super`]).
    #[default]
    Engine,
    /// Plain minimax.
    Minimax,
    /// Plain alpha-beta.
    AlphaBeta,
}

impl Algorithm {
    pub const ALL: [Algorithm; 3] = [Algorithm::Engine, Algorithm::Minimax, Algorithm::AlphaBeta];

    /// The option value naming this algorithm.
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Engine => "engine",
            Algorithm::Minimax => "minimax",
            Algorithm::AlphaBeta => "alphabeta",
        }
    }
}

/// How many positions a search visited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Every position visited, the root included.
    pub nodes: u64,
    /// The positions valued without looking further: evaluated at the
    /// depth limit, or finished games.
    pub leaves: u64,
}

/// What one search to a fixed depth found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The root's value, White's point of view.
    pub value: i32,
    /// The line both sides choose, the best move first (empty at a leaf).
    pub pv: Vec<Move>,
    pub counts: Counts,
}

/// The moves of `position` in the order of their names.
pub fn ordered_moves(position: &Position) -> Vec<Move> {
    let mut moves = position.legal_moves().as_slice().to_vec();
    moves.sort_by_key(|mv| {
        let (file, rank) = mv.to_coords();
        (
            crate::board::file_of(mv.from),
            crate::board::rank_of(mv.from),
            file,
            rank,
        )
    });
    moves
}

/// Why a node's value needs no children: the depth limit (static
/// evaluation) or the end of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    Evaluated,
    GameOver,
}

/// Hooks into a search, for drawing its tree. Every node is entered, then
/// (for an inner node) its children, then left with its value.
pub trait Observer {
    /// A node is entered by `mv` (`None` for the root); alpha-beta gives
    /// the window it is searched with.
    fn enter(&mut self, _mv: Option<Move>, _window: Option<(i32, i32)>) {}
    /// The node just entered is left with `value`; `leaf` says why it
    /// had no children, if it had none.
    fn leave(&mut self, _value: i32, _leaf: Option<Leaf>) {}
    /// Alpha-beta stops at the node being searched after `searched` of its
    /// `total` children: the rest are cut off.
    fn cut(&mut self, _searched: usize, _total: usize) {}
}

/// An observer that sees nothing (the engine's searches).
pub struct Unobserved;

impl Observer for Unobserved {}

/// One search's walk over the tree.
struct Walk<'a, O: Observer> {
    rules: Rules,
    evaluation: Evaluation,
    counts: Counts,
    observer: &'a mut O,
    /// Says whether to give up (checked every [`super::params::CHECK_INTERVAL`]
    /// nodes); once it has, every value is meaningless.
    stop: &'a mut dyn FnMut(u64) -> bool,
    stopped: bool,
    /// Triangular principal-variation table.
    pv: Vec<Vec<Move>>,
    /// The root's moves, when not all of them (`searchmoves`).
    root_moves: Option<&'a [Move]>,
}

impl<O: Observer> Walk<'_, O> {
    /// Counts the node; its value if it is a leaf.
    fn visit(&mut self, position: &Position, depth: u32, ply: usize) -> Option<(i32, Leaf)> {
        self.counts.nodes += 1;
        self.pv[ply].clear();
        if self
            .counts
            .nodes
            .is_multiple_of(super::params::CHECK_INTERVAL)
            && (self.stop)(self.counts.nodes)
        {
            self.stopped = true;
        }
        let leaf = if let Some(outcome) = position.outcome(self.rules) {
            let win = MATE - ply as i32;
            let value = match outcome.winner() {
                Some(Color::White) => win,
                Some(Color::Black) => -win,
                None => 0,
            };
            Some((value, Leaf::GameOver))
        } else if depth == 0 || ply >= MAX_PLY {
            Some((
                evaluate(position, self.evaluation, self.rules),
                Leaf::Evaluated,
            ))
        } else {
            None
        };
        if leaf.is_some() {
            self.counts.leaves += 1;
        }
        leaf
    }

    /// The moves to search at `ply`, in order.
    fn moves(&self, position: &Position, ply: usize) -> Vec<Move> {
        match self.root_moves {
            Some(moves) if ply == 0 => moves.to_vec(),
            _ => ordered_moves(position),
        }
    }

    /// Makes `mv` and the child's line the line of `ply`.
    fn set_pv(&mut self, ply: usize, mv: Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        head[ply].clear();
        head[ply].push(mv);
        head[ply].extend_from_slice(&tail[0]);
    }

    fn minimax(&mut self, position: &Position, mv: Option<Move>, depth: u32, ply: usize) -> i32 {
        self.observer.enter(mv, None);
        if let Some((value, leaf)) = self.visit(position, depth, ply) {
            self.observer.leave(value, Some(leaf));
            return value;
        }
        let max = position.side_to_move() == Color::White;
        let mut best = if max { -INFINITY } else { INFINITY };
        for mv in self.moves(position, ply) {
            let value = self.minimax(&position.play(mv), Some(mv), depth - 1, ply + 1);
            if self.stopped {
                return 0;
            }
            if (max && value > best) || (!max && value < best) {
                best = value;
                self.set_pv(ply, mv);
            }
        }
        self.observer.leave(best, None);
        best
    }

    fn alphabeta(
        &mut self,
        position: &Position,
        mv: Option<Move>,
        depth: u32,
        ply: usize,
        mut alpha: i32,
        mut beta: i32,
    ) -> i32 {
        self.observer.enter(mv, Some((alpha, beta)));
        if let Some((value, leaf)) = self.visit(position, depth, ply) {
            self.observer.leave(value, Some(leaf));
            return value;
        }
        let max = position.side_to_move() == Color::White;
        let moves = self.moves(position, ply);
        let mut best = if max { -INFINITY } else { INFINITY };
        for (index, &mv) in moves.iter().enumerate() {
            let value = self.alphabeta(
                &position.play(mv),
                Some(mv),
                depth - 1,
                ply + 1,
                alpha,
                beta,
            );
            if self.stopped {
                return 0;
            }
            if (max && value > best) || (!max && value < best) {
                best = value;
                self.set_pv(ply, mv);
            }
            if max {
                alpha = alpha.max(best);
            } else {
                beta = beta.min(best);
            }
            if alpha >= beta {
                if index + 1 < moves.len() {
                    self.observer.cut(index + 1, moves.len());
                }
                break;
            }
        }
        self.observer.leave(best, None);
        best
    }
}

/// Searches `position` to `depth` plies with `algorithm` (minimax or
/// alpha-beta), calling `stop` with the node count every so often: once it
/// says yes the search ends and `None` is returned.
///
/// # Panics
/// If `algorithm` is [`Algorithm::Engine`].
pub fn search_observed(
    algorithm: Algorithm,
    position: &Position,
    depth: u32,
    rules: Rules,
    evaluation: Evaluation,
    observer: &mut impl Observer,
    stop: &mut dyn FnMut(u64) -> bool,
) -> Option<Found> {
    search_from(
        algorithm,
        position,
        None,
        depth,
        (rules, evaluation),
        observer,
        stop,
    )
}

/// [`search_observed`] with the root's moves restricted to `root_moves`
/// (in that order) when given.
fn search_from(
    algorithm: Algorithm,
    position: &Position,
    root_moves: Option<&[Move]>,
    depth: u32,
    (rules, evaluation): (Rules, Evaluation),
    observer: &mut impl Observer,
    stop: &mut dyn FnMut(u64) -> bool,
) -> Option<Found> {
    let mut walk = Walk {
        rules,
        evaluation,
        counts: Counts::default(),
        observer,
        stop,
        stopped: false,
        pv: vec![Vec::new(); MAX_PLY + 1],
        root_moves,
    };
    let value = match algorithm {
        Algorithm::Minimax => walk.minimax(position, None, depth, 0),
        Algorithm::AlphaBeta => walk.alphabeta(position, None, depth, 0, -INFINITY, INFINITY),
        Algorithm::Engine => panic!("the engine's own search is not a textbook algorithm"),
    };
    (!walk.stopped).then(|| Found {
        value,
        pv: std::mem::take(&mut walk.pv[0]),
        counts: walk.counts,
    })
}

/// Searches `position` to `depth` plies with `algorithm`, to the end.
///
/// # Panics
/// If `algorithm` is [`Algorithm::Engine`].
pub fn run(
    algorithm: Algorithm,
    position: &Position,
    depth: u32,
    rules: Rules,
    evaluation: Evaluation,
) -> Found {
    search_observed(
        algorithm,
        position,
        depth,
        rules,
        evaluation,
        &mut Unobserved,
        &mut |_| false,
    )
    .expect("a search that is never stopped finishes")
}

/// `go` under `SearchAlgorithm minimax` or `alphabeta`: searches depth 1,
/// 2, ... (each a fresh search, so each `info` line's `nodes` is that
/// depth's exact count) until a limit of the request is reached or the
/// value is a proven win or loss; the first depth always completes.
/// `MultiPV` is not used; `searchmoves` restricts the root's moves.
pub fn search(
    algorithm: Algorithm,
    request: &Request,
    signals: &Signals,
    report: &mut dyn FnMut(Info),
) -> SearchResult {
    let root = request.position;
    let limits = &request.limits;
    let rules = request.settings.rules;
    let evaluation = request.settings.evaluation;
    let mut result = SearchResult {
        best_move: None,
        ponder_move: None,
        score: 0,
        depth: 0,
        nodes: 0,
    };
    let mut moves = ordered_moves(&root);
    if !limits.searchmoves.is_empty() {
        moves.retain(|mv| limits.searchmoves.contains(mv));
    }
    if moves.is_empty() {
        return result;
    }
    result.best_move = Some(moves[0]);
    let start = Instant::now();
    let hard = request.budget().map(|b| b.hard);
    let max_depth = limits
        .depth
        .map_or(MAX_DEPTH as u32, |d| d.clamp(1, MAX_DEPTH as u32))
        .min(limits.mate.map_or(MAX_DEPTH as u32, |m| {
            m.saturating_mul(2).clamp(1, MAX_DEPTH as u32)
        }));
    let sign = match root.side_to_move() {
        Color::White => 1,
        Color::Black => -1,
    };
    let mut total = 0;
    for depth in 1..=max_depth {
        let may_stop = depth > 1;
        let mut stop = |nodes: u64| {
            may_stop
                && (signals.stop.load(std::sync::atomic::Ordering::Relaxed)
                    || limits.nodes.is_some_and(|limit| total + nodes >= limit)
                    || (!signals.pondering.load(std::sync::atomic::Ordering::Relaxed)
                        && hard.is_some_and(|hard| start.elapsed() >= hard)))
        };
        let all = moves.len() == root.legal_moves().len();
        let Some(found) = search_from(
            algorithm,
            &root,
            (!all).then_some(moves.as_slice()),
            depth,
            (rules, evaluation),
            &mut Unobserved,
            &mut stop,
        ) else {
            break;
        };
        total += found.counts.nodes;
        let score = sign * found.value;
        let time = start.elapsed();
        let nodes = found.counts.nodes;
        report(Info {
            depth: depth as i32,
            seldepth: depth as usize,
            multipv: 1,
            score: Score::from_internal(score),
            nodes,
            nps: nps(nodes, time),
            hashfull: 0,
            tbhits: 0,
            time,
            pv: found.pv.clone(),
            wdl: Wdl::from_score(
                score,
                &request.position,
                Curve::of(evaluation, request.position.size(), request.settings.rules),
            ),
        });
        result.best_move = found.pv.first().copied().or(result.best_move);
        result.ponder_move = found.pv.get(1).copied();
        result.score = score;
        result.depth = depth as i32;
        result.nodes = total;
        let proven = found.value.abs() >= super::MATE_BOUND;
        let stopped = signals.stop.load(std::sync::atomic::Ordering::Relaxed);
        if (proven && !limits.infinite) || stopped {
            break;
        }
    }
    result
}

/// One position of a drawn tree ([`tree`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeNode {
    /// The move that leads here (`None` at the root).
    pub mv: Option<Move>,
    /// The side to move: White is MAX, Black MIN.
    pub side: Color,
    /// The minimax value, White's point of view.
    pub value: i32,
    /// Why the node has no children, if it has none.
    pub leaf: Option<Leaf>,
    /// What alpha-beta did here; `None` where it never came (a branch it
    /// cut off).
    pub alphabeta: Option<Visit>,
    pub children: Vec<TreeNode>,
}

/// Alpha-beta's visit to a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Visit {
    /// The window the node was searched with.
    pub alpha: i32,
    pub beta: i32,
    /// The value alpha-beta returned (exact inside the window, else a
    /// bound beyond it).
    pub value: i32,
    /// The search stopped after this many children: the rest were cut off
    /// (a beta cut-off at a MAX node, an alpha cut-off at a MIN node).
    pub cut_after: Option<usize>,
}

/// The game tree below a position, as both algorithms see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    pub root: TreeNode,
    /// The best line by minimax (and alpha-beta: they agree).
    pub pv: Vec<Move>,
    pub minimax: Counts,
    pub alphabeta: Counts,
}

/// A node as an [`Observer`] saw it.
#[derive(Default)]
struct Seen {
    mv: Option<Move>,
    window: Option<(i32, i32)>,
    value: i32,
    leaf: Option<Leaf>,
    cut_after: Option<usize>,
    children: Vec<Seen>,
}

/// Builds the tree a search walks, node by node.
#[derive(Default)]
struct Recorder {
    /// The nodes entered and not yet left, the root first.
    open: Vec<Seen>,
    root: Option<Seen>,
}

impl Observer for Recorder {
    fn enter(&mut self, mv: Option<Move>, window: Option<(i32, i32)>) {
        self.open.push(Seen {
            mv,
            window,
            ..Seen::default()
        });
    }

    fn leave(&mut self, value: i32, leaf: Option<Leaf>) {
        let Some(mut node) = self.open.pop() else {
            return;
        };
        node.value = value;
        node.leaf = leaf;
        match self.open.last_mut() {
            Some(parent) => parent.children.push(node),
            None => self.root = Some(node),
        }
    }

    fn cut(&mut self, searched: usize, _total: usize) {
        if let Some(node) = self.open.last_mut() {
            node.cut_after = Some(searched);
        }
    }
}

/// The tree below `position` to `depth` plies, with minimax's value at
/// every node and alpha-beta's window, value and cut-offs where it went.
/// Its size is that of the minimax tree: callers bound `depth` by the
/// position's branching (see [`count_nodes`]).
pub fn tree(position: &Position, depth: u32, rules: Rules, evaluation: Evaluation) -> Tree {
    let record = |algorithm| {
        let mut recorder = Recorder::default();
        let found = search_observed(
            algorithm,
            position,
            depth,
            rules,
            evaluation,
            &mut recorder,
            &mut |_| false,
        )
        .expect("a search that is never stopped finishes");
        (recorder.root.unwrap_or_default(), found)
    };
    let (minimax, found) = record(Algorithm::Minimax);
    let (alphabeta, pruned) = record(Algorithm::AlphaBeta);
    Tree {
        root: merge(position, minimax, Some(alphabeta)),
        pv: found.pv,
        minimax: found.counts,
        alphabeta: pruned.counts,
    }
}

/// Joins the minimax tree with alpha-beta's (whose children at each node
/// are the first ones of minimax's, in the same order).
fn merge(position: &Position, minimax: Seen, alphabeta: Option<Seen>) -> TreeNode {
    let (visit, mut pruned) = match alphabeta {
        Some(seen) => {
            let (alpha, beta) = seen.window.unwrap_or((-INFINITY, INFINITY));
            let visit = Visit {
                alpha,
                beta,
                value: seen.value,
                cut_after: seen.cut_after,
            };
            (Some(visit), seen.children.into_iter())
        }
        None => (None, Vec::new().into_iter()),
    };
    let children = minimax
        .children
        .into_iter()
        .map(|child| {
            let mv = child.mv.expect("a child has a move");
            merge(&position.play(mv), child, pruned.next())
        })
        .collect();
    TreeNode {
        mv: minimax.mv,
        side: position.side_to_move(),
        value: minimax.value,
        leaf: minimax.leaf,
        alphabeta: visit,
        children,
    }
}

/// How many positions the tree below `position` has down to `depth`
/// plies, counting no further than `limit` (the answer is then above
/// `limit`): whether a tree is small enough to draw.
pub fn count_nodes(position: &Position, depth: u32, rules: Rules, limit: u64) -> u64 {
    fn walk(position: &Position, depth: u32, rules: Rules, count: &mut u64, limit: u64) {
        *count += 1;
        if depth == 0 || *count > limit || position.outcome(rules).is_some() {
            return;
        }
        for mv in position.legal_moves().as_slice() {
            walk(&position.play(*mv), depth - 1, rules, count, limit);
            if *count > limit {
                return;
            }
        }
    }
    let mut count = 0;
    walk(position, depth, rules, &mut count, limit);
    count
}

fn nps(nodes: u64, time: Duration) -> u64 {
    nodes.saturating_mul(1_000_000) / (time.as_micros().max(1) as u64)
}

//! Lazy SMP: the search runs on the main thread and `threads - 1` helper
//! threads at once. They share the transposition table, a node count and
//! the deepest iteration a helper has completed: every thread searches
//! the same root with its own move ordering tables, the helpers at depths
//! spread just ahead of the main thread, and what one thread stores in
//! the table the others find.
//!
//! No thread repeats an iteration another has finished. A helper never
//! starts a depth the main thread has started, and drops the one it is
//! searching once the main thread has completed it (the main thread has
//! moved on); the main thread drops its iteration once a helper has
//! completed one as deep, takes that helper's result as its own (reports
//! it, and decides on it whether to search on) and goes on one deeper.
//! When the search ends, the deepest completed iteration of any thread
//! gives the move. Only the main thread reports and decides when the
//! search ends; the helpers end when it does.
//!
//! With one thread nothing is spawned and the search is the plain
//! single-threaded one, node for node (`go depth`, `go nodes` and `bench`
//! stay deterministic).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

use parking_lot::Mutex;

use super::params::{SKIP_PHASE, SKIP_SIZE};
use super::{Info, Request, SearchResult, Searcher, Signals, Tables};
use crate::board::Move;

/// What the threads of one search share besides the table.
pub(super) struct Team {
    /// Nodes counted so far by all threads (each adds its own in batches).
    nodes: AtomicU64,
    /// Table probes that hit, counted so far by all threads (likewise).
    tbhits: AtomicU64,
    /// The main thread has finished: the helpers end.
    done: AtomicBool,
    /// The depth of the iteration the main thread is searching (0 before
    /// its first).
    main_depth: AtomicI32,
    /// The depth of [`Team::helper_best`] (0 while there is none), read
    /// without the lock every few nodes.
    helper_depth: AtomicI32,
    /// The deepest iteration a helper has completed. Locked only when an
    /// iteration ends, never inside the tree.
    helper_best: Mutex<Option<Completed>>,
}

/// A completed iteration's result (for the first MultiPV line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Completed {
    pub depth: i32,
    pub score: i32,
    /// The principal variation, the best move first.
    pub pv: Vec<Move>,
}

impl Team {
    /// Adds `nodes` to the total and returns the new total.
    pub(super) fn add_nodes(&self, nodes: u64) -> u64 {
        self.nodes.fetch_add(nodes, Ordering::Relaxed) + nodes
    }

    /// Adds `hits` to the total of table hits and returns the new total.
    pub(super) fn add_tbhits(&self, hits: u64) -> u64 {
        self.tbhits.fetch_add(hits, Ordering::Relaxed) + hits
    }

    pub(super) fn is_done(&self) -> bool {
        self.done.load(Ordering::Relaxed)
    }

    /// A team of one search's threads, nothing counted or completed yet.
    pub(super) fn new() -> Team {
        Team {
            nodes: AtomicU64::new(0),
            tbhits: AtomicU64::new(0),
            done: AtomicBool::new(false),
            main_depth: AtomicI32::new(0),
            helper_depth: AtomicI32::new(0),
            helper_best: Mutex::new(None),
        }
    }

    /// The main thread starts its iteration of depth `depth`.
    pub(super) fn main_starts(&self, depth: i32) {
        self.main_depth.store(depth, Ordering::Relaxed);
    }

    /// The depth of the iteration the main thread is searching.
    pub(super) fn main_depth(&self) -> i32 {
        self.main_depth.load(Ordering::Relaxed)
    }

    /// The depth of the deepest iteration a helper has completed (0 for
    /// none).
    pub(super) fn helper_depth(&self) -> i32 {
        self.helper_depth.load(Ordering::Acquire)
    }

    /// A helper completed `completed`: kept if no helper has completed an
    /// iteration as deep.
    pub(super) fn helper_completed(&self, completed: Completed) {
        let mut best = self.helper_best.lock();
        if best
            .as_ref()
            .is_none_or(|best| best.depth < completed.depth)
        {
            let depth = completed.depth;
            *best = Some(completed);
            self.helper_depth.store(depth, Ordering::Release);
        }
    }

    /// The deepest iteration a helper has completed, if deeper than
    /// `depth`.
    pub(super) fn helper_result_deeper_than(&self, depth: i32) -> Option<Completed> {
        if self.helper_depth() <= depth {
            return None;
        }
        self.helper_best.lock().clone()
    }
}

/// Ends the helpers when the main thread's search returns or unwinds (a
/// panic in it must not leave the helpers searching forever).
struct EndHelpers<'a>(&'a Team);

impl Drop for EndHelpers<'_> {
    fn drop(&mut self) {
        self.0.done.store(true, Ordering::Relaxed);
    }
}

/// Whether helper `thread`, whose turn it is to start an iteration, leaves
/// out the one of depth `depth`: the main thread (0) searches every depth;
/// a helper leaves out the depths the main thread has already started
/// (`main_depth` is the one it is searching), and besides those every
/// depth its place in the spread gives it (see [`skips`]).
pub(super) fn helper_skips(thread: usize, depth: i32, main_depth: i32) -> bool {
    thread > 0 && (depth <= main_depth || skips(thread, depth))
}

/// Whether thread `thread` leaves out the iteration of depth `depth` by
/// its place in the spread of depths.
pub(super) fn skips(thread: usize, depth: i32) -> bool {
    if thread == 0 || depth <= 1 {
        return false;
    }
    let k = (thread - 1) % SKIP_SIZE.len();
    (depth + SKIP_PHASE[k]) / SKIP_SIZE[k] % 2 == 1
}

/// Runs one search on this thread with `request.settings.threads - 1`
/// helpers beside it (fewer if threads cannot be had). `finished` gets the
/// main thread's result before the helpers are waited for; the result
/// returned counts the nodes of every thread.
pub(super) fn run(
    request: &Request,
    tables: &mut Tables,
    signals: &Signals,
    report: &mut dyn FnMut(Info),
    finished: &mut dyn FnMut(&SearchResult),
) -> SearchResult {
    tables.tt.new_search();
    let team = Team::new();
    let Tables { tt, history } = tables;
    let tt = &*tt;
    let threads = request.settings.threads.max(1);
    let mut result = std::thread::scope(|scope| {
        let end = EndHelpers(&team);
        for thread in 1..threads {
            let mut history = history.clone();
            let team = &team;
            let spawned = std::thread::Builder::new()
                .name(format!("search helper {thread}"))
                .spawn_scoped(scope, move || {
                    Searcher::new(request, tt, &mut history, signals, team, thread)
                        .iterate(&mut |_| {});
                });
            if let Err(error) = spawned {
                log::warn!("search helper {thread} could not be started: {error}");
                break;
            }
        }
        let result = Searcher::new(request, tt, history, signals, &team, 0).iterate(report);
        drop(end);
        finished(&result);
        result
    });
    result.nodes = team.nodes.load(Ordering::Relaxed);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Rules;
    use crate::notation::parse_position;
    use crate::search::{Limits, Settings, TableUse};
    use crate::tt::TranspositionTable;

    /// A 7 x 7 position from a game, searched to `depth`.
    fn request(depth: u32) -> Request {
        Request {
            position: parse_position("B6/B6/B6/B6/B6/B6/1WWWWWW b").unwrap(),
            history: Vec::new(),
            limits: Limits {
                depth: Some(depth),
                ..Limits::default()
            },
            settings: Settings {
                rules: Rules::Textbook,
                ..Settings::default()
            },
            tablebase: TableUse::default(),
        }
    }

    /// The main thread's search beside `team`: its result and the depth
    /// and line of each `info` it reported.
    fn main_thread(request: &Request, team: &Team) -> (SearchResult, Vec<(i32, Vec<Move>)>) {
        let tt = TranspositionTable::new(16);
        let mut history = crate::search::History::new();
        let signals = Signals::default();
        let mut lines = Vec::new();
        let result = Searcher::new(request, &tt, &mut history, &signals, team, 0)
            .iterate(&mut |info| lines.push((info.depth, info.pv)));
        (result, lines)
    }

    #[test]
    fn a_deeper_helper_iteration_gives_the_move() {
        let request = request(4);
        let (alone, _) = main_thread(&request, &Team::new());
        // A move the main thread would not play, as a helper's result.
        let other = (request.position.legal_moves().iter().copied())
            .find(|&mv| Some(mv) != alone.best_move)
            .unwrap();
        let team = Team::new();
        let helper = Completed {
            depth: 6,
            score: 17,
            pv: vec![other],
        };
        team.helper_completed(helper.clone());
        let (result, lines) = main_thread(&request, &team);
        assert_eq!(result.best_move, Some(other));
        assert_eq!((result.depth, result.score), (6, 17));
        // The last line reported is the helper's, which the move is from.
        assert_eq!(lines.last(), Some(&(6, vec![other])));
    }

    #[test]
    fn a_shallower_helper_iteration_is_not_used() {
        let request = request(5);
        let (alone, alone_lines) = main_thread(&request, &Team::new());
        let other = (request.position.legal_moves().iter().copied())
            .find(|&mv| Some(mv) != alone.best_move)
            .unwrap();
        let team = Team::new();
        for depth in [2, 1] {
            team.helper_completed(Completed {
                depth,
                score: 17,
                pv: vec![other],
            });
        }
        // The team keeps the deepest.
        assert_eq!(team.helper_depth(), 2);
        assert!(team.helper_result_deeper_than(2).is_none());
        assert_eq!(team.helper_result_deeper_than(1).unwrap().depth, 2);
        // Completed before the main thread's second iteration reaches a
        // check: the main thread searches every depth itself, as alone.
        let (result, lines) = main_thread(&request, &team);
        assert_eq!((result, lines), (alone, alone_lines));
    }

    #[test]
    fn helpers_start_no_depth_the_main_thread_has_started() {
        assert!((1..40).all(|depth| !helper_skips(0, depth, 20)));
        let searched = |thread, main| -> Vec<i32> {
            (1..12)
                .filter(|&d| !helper_skips(thread, d, main))
                .collect()
        };
        assert_eq!(searched(1, 0), [1, 2, 4, 6, 8, 10]);
        assert_eq!(searched(1, 6), [8, 10]);
        assert_eq!(searched(2, 6), [7, 9, 11]);
    }

    #[test]
    fn the_main_thread_searches_every_depth_and_helpers_spread() {
        assert!((1..40).all(|depth| !skips(0, depth)));
        // The first helper takes every other depth, the second the others.
        let searched = |thread| -> Vec<i32> { (1..10).filter(|&d| !skips(thread, d)).collect() };
        assert_eq!(searched(1), [1, 2, 4, 6, 8]);
        assert_eq!(searched(2), [1, 3, 5, 7, 9]);
        assert_eq!(searched(3), [1, 4, 5, 8, 9]);
    }
}

//! Lazy SMP: the search runs on the main thread and `threads - 1` helper
//! threads at once. They share nothing but the transposition table and a
//! node count: every thread searches the same root with its own move
//! ordering tables, the helpers at depths spread just ahead of the main
//! thread, and what one thread stores in the table the others find. Only
//! the main thread reports, decides when the search ends and gives the
//! result; the helpers end when it does.
//!
//! With one thread nothing is spawned and the search is the plain
//! single-threaded one, node for node (`go depth`, `go nodes` and `bench`
//! stay deterministic).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::params::{SKIP_PHASE, SKIP_SIZE};
use super::{Info, Request, SearchResult, Searcher, Signals, Tables};

/// What the threads of one search share besides the table.
pub(super) struct Team {
    /// Nodes counted so far by all threads (each adds its own in batches).
    nodes: AtomicU64,
    /// Table probes that hit, counted so far by all threads (likewise).
    tbhits: AtomicU64,
    /// The main thread has finished: the helpers end.
    done: AtomicBool,
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
}

/// Ends the helpers when the main thread's search returns or unwinds (a
/// panic in it must not leave the helpers searching forever).
struct EndHelpers<'a>(&'a Team);

impl Drop for EndHelpers<'_> {
    fn drop(&mut self) {
        self.0.done.store(true, Ordering::Relaxed);
    }
}

/// Whether thread `thread` leaves out the iteration of depth `depth`.
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
    let team = Team {
        nodes: AtomicU64::new(0),
        tbhits: AtomicU64::new(0),
        done: AtomicBool::new(false),
    };
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

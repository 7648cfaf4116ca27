//! The search: iterative deepening over a negamax alpha-beta (principal
//! variation search with aspiration windows), a transposition table, and
//! killer/history move ordering.
//!
//! Scores are from the side to move's point of view, in evaluation units;
//! a forced win `p` plies away scores `MATE - p`, a forced loss `-(MATE - p)`.
//! Repeated positions score as draws: twofold inside the search tree,
//! threefold counting the game's history before the root.
//!
//! [`search`] runs one search from the calling thread (with helper
//! threads beside it when `Threads` asks for more than one, see [`smp`])
//! and reports progress through a callback; [`thread`] wraps it in the
//! long-lived search thread.

mod ordering;
mod params;
mod race;
mod skill;
mod smp;
mod tablebase;
pub mod textbook;
pub mod thread;
mod traps;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::board::{Move, Position, Rules};
use crate::eval::{Evaluation, evaluate_for_side_to_move, moves_to_go};
use crate::time::{Budget, TimeLimit, budget};
use crate::tt::{Bound, TranspositionTable};
use crate::wdl::{Curve, Wdl};

pub use crate::score::{DRAW, INFINITY, MATE, MATE_BOUND, MAX_PLY, Score, TABLE_WIN_BOUND};
pub use ordering::History;
pub use params::{MAX_DEPTH, MAX_THREADS};
pub use skill::Skill;
pub use tablebase::TableUse;

/// Limits of one search, as `go` gives them. Any combination may be set;
/// the search stops at the first one reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub time: TimeLimit,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    /// Stop once a win in at most this many moves is found.
    pub mate: Option<u32>,
    /// Keep searching until stopped (`infinite`, and `ponder` before
    /// `ponderhit`): no early stop on one legal move.
    pub infinite: bool,
    /// Only these root moves (empty: all).
    pub searchmoves: Vec<Move>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: TimeLimit::None,
            depth: None,
            nodes: None,
            mate: None,
            infinite: false,
            searchmoves: Vec::new(),
        }
    }
}

/// Game settings a search needs. Their default (the settings of the
/// engine's default options) is made in `options`, beside those defaults:
/// the options know the search, and the search does not know them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    pub rules: Rules,
    pub evaluation: Evaluation,
    pub multipv: usize,
    pub move_overhead: Duration,
    /// Play from a solved table where one covers the board.
    pub tablebase: bool,
    /// The engine's own search, or a plain textbook one.
    pub algorithm: textbook::Algorithm,
    /// Search threads (`Threads`): the main thread and `threads - 1`
    /// helpers sharing its transposition table.
    pub threads: usize,
    /// How well to play (`Skill Level`): full strength, or weaker for
    /// people (see [`skill`]).
    pub skill: Skill,
}

/// Everything one search needs.
#[derive(Clone, Debug)]
pub struct Request {
    pub position: Position,
    /// Keys of the game's positions before the root since the last
    /// irreversible move, oldest first (only these can repeat).
    pub history: Vec<u64>,
    pub limits: Limits,
    pub settings: Settings,
    /// Solved tables to play from (see [`crate::tablebase`]).
    pub tablebase: TableUse,
}

impl Request {
    /// The time this search may take (soft and hard limits), from its
    /// limits and the moves the side to move still needs; `None` when
    /// time does not limit it.
    pub fn budget(&self) -> Option<Budget> {
        let position = &self.position;
        let moves_needed = moves_to_go(position, position.side_to_move()) as u32;
        budget(self.limits.time, self.settings.move_overhead, moves_needed)
    }
}

/// Flags the protocol thread sets and the search reads.
#[derive(Debug, Default)]
pub struct Signals {
    /// End the search now.
    pub stop: AtomicBool,
    /// The search is pondering: time limits do not run until this is
    /// cleared (`ponderhit`).
    pub pondering: AtomicBool,
}

/// The tables a search uses and keeps between searches.
pub struct Tables {
    pub tt: TranspositionTable,
    pub history: History,
}

impl Tables {
    pub fn new(hash_mb: usize) -> Tables {
        Tables {
            tt: TranspositionTable::new(hash_mb),
            history: History::new(),
        }
    }

    /// Forgets everything learnt (`ucinewgame`).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.history.clear();
    }
}

/// One `info` report: a completed iteration's line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    pub depth: i32,
    pub seldepth: usize,
    pub multipv: usize,
    pub score: Score,
    pub nodes: u64,
    pub nps: u64,
    pub hashfull: u32,
    /// Solved-table lookups (0 when no table was used).
    pub tbhits: u64,
    pub time: Duration,
    pub pv: Vec<Move>,
    /// Win/draw/loss chances for the side to move: exact where a table
    /// decides the position or the score is proven.
    pub wdl: Wdl,
}

/// What a finished search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// `None` only when the root has no legal move.
    pub best_move: Option<Move>,
    pub ponder_move: Option<Move>,
    /// The best move's score (internal units, side to move's view).
    pub score: i32,
    pub depth: i32,
    pub nodes: u64,
}

struct RootMove {
    mv: Move,
    /// Score in the current pass over the root moves: the move's score
    /// once it is the best so far, else `-INFINITY` (for sorting).
    score: i32,
    /// The score the current pass's search of the move returned (exact or
    /// a bound), whether or not it is the best; `None` until that search
    /// ends.
    searched: Option<i32>,
    /// Score of the last completed iteration (for ordering and reports).
    previous_score: i32,
    pv: Vec<Move>,
}

/// Runs one search on this thread, calling `report` after each completed
/// iteration (once per MultiPV line).
pub fn search(
    request: &Request,
    tables: &mut Tables,
    signals: &Signals,
    report: &mut dyn FnMut(Info),
) -> SearchResult {
    search_then(request, tables, signals, report, &mut |_| {})
}

/// [`search`], calling `finished` with the result as soon as it is known:
/// with helper threads, before waiting for them to end (they end within
/// a moment), so that the answer never waits on a helper's scheduling.
pub fn search_then(
    request: &Request,
    tables: &mut Tables,
    signals: &Signals,
    report: &mut dyn FnMut(Info),
    finished: &mut dyn FnMut(&SearchResult),
) -> SearchResult {
    let algorithm = request.settings.algorithm;
    if algorithm != textbook::Algorithm::Engine {
        let result = textbook::search(algorithm, request, signals, report);
        finished(&result);
        return result;
    }
    if !request.settings.skill.is_full() {
        let result = skill::play(request, tables, signals, report);
        finished(&result);
        return result;
    }
    let probe = (request.tablebase.root.as_ref())
        .and_then(|table| tablebase::probe_root(request, table, &signals.stop));
    match probe {
        None => smp::run(request, tables, signals, report, finished),
        Some(tablebase::RootProbe::Decided(result, lines)) => {
            for info in lines {
                report(info);
            }
            finished(&result);
            result
        }
        Some(tablebase::RootProbe::Drawn { moves, probes }) => {
            // Search only the moves that hold the draw; whatever the
            // evaluation thinks of them, the table says they draw.
            let mut drawn = request.clone();
            drawn.settings.multipv = drawn.settings.multipv.min(moves.len());
            drawn.limits.searchmoves = moves;
            drawn.tablebase = TableUse::default();
            let mut exact = |mut info: Info| {
                info.score = Score::Cp(DRAW);
                info.wdl = Wdl::DRAW;
                info.tbhits = probes;
                report(info);
            };
            let drawn_result = |result: &SearchResult| SearchResult {
                score: DRAW,
                ..result.clone()
            };
            let result = smp::run(&drawn, tables, signals, &mut exact, &mut |result| {
                finished(&drawn_result(result));
            });
            drawn_result(&result)
        }
    }
}

/// One thread's search: the main thread's (which reports and decides
/// when to stop) or a helper's.
struct Searcher<'a> {
    request: &'a Request,
    tt: &'a TranspositionTable,
    history: &'a mut History,
    signals: &'a Signals,
    team: &'a smp::Team,
    /// 0 for the main thread, 1.. for helpers.
    thread: usize,
    rules: Rules,
    evaluation: Evaluation,
    /// When the search began (`go`): `info ... time` counts from here.
    start: Instant,
    /// When the clock began: at `go`, or at `ponderhit` for a ponder
    /// search. The time budget counts from here.
    clock_start: Instant,
    budget: Option<Budget>,
    pondering: bool,
    /// Nodes this thread searched...
    nodes: u64,
    /// ...of which this many are counted in the team's total...
    flushed: u64,
    /// ...which held this many nodes of the other threads when last read.
    others: u64,
    seldepth: usize,
    /// The search of the current iteration was cut short: by a limit, or
    /// (with `abandoned` set) because another thread completed it.
    stopped: bool,
    /// The current iteration was dropped because another thread has
    /// completed it (see [`smp`]); the search goes on with a deeper one.
    abandoned: bool,
    /// The depth of the iteration being searched.
    iteration: i32,
    /// The main thread takes a helper's completed iteration as its own
    /// (not with several MultiPV lines: a helper's result has one).
    adopts: bool,
    /// Limits are not checked in the first iteration, so every search has
    /// a move and reports at least one line.
    may_stop: bool,
    /// Keys of the game before the root, then of each position on the
    /// current line (index `root_index + ply`).
    keys: Vec<u64>,
    /// For each entry of `keys`, the index of the oldest position that can
    /// still repeat (the one after the last irreversible move).
    window: Vec<usize>,
    root_index: usize,
    /// Triangular principal-variation table.
    pv: Vec<Vec<Move>>,
    /// Solved tables probed inside the search, if any.
    prober: Option<tablebase::Prober>,
    /// This thread's table hits added to the team's total, and the other
    /// threads' share of it as last seen (as `flushed` and `others`).
    hits_flushed: u64,
    hits_others: u64,
}

impl<'a> Searcher<'a> {
    fn new(
        request: &'a Request,
        tt: &'a TranspositionTable,
        history: &'a mut History,
        signals: &'a Signals,
        team: &'a smp::Team,
        thread: usize,
    ) -> Searcher<'a> {
        let mut keys = request.history.clone();
        keys.push(request.position.key());
        let root_index = keys.len() - 1;
        let pondering = signals.pondering.load(Ordering::Acquire);
        Searcher {
            request,
            rules: request.settings.rules,
            // Resolved once here rather than at every node.
            evaluation: request.settings.evaluation.resolved(),
            start: Instant::now(),
            clock_start: Instant::now(),
            budget: request.budget(),
            pondering,
            nodes: 0,
            flushed: 0,
            others: 0,
            seldepth: 0,
            stopped: false,
            abandoned: false,
            iteration: 0,
            adopts: false,
            // A helper's partial iteration is never used: it may stop at
            // any time.
            may_stop: thread > 0,
            window: vec![0; keys.len()],
            keys,
            root_index,
            pv: vec![Vec::new(); MAX_PLY + 1],
            prober: tablebase::Prober::new(request),
            hits_flushed: 0,
            hits_others: 0,
            tt,
            history,
            signals,
            team,
            thread,
        }
    }

    /// Time since `go`.
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Time on the clock: since `go`, or since `ponderhit`.
    fn clock_elapsed(&self) -> Duration {
        self.clock_start.elapsed()
    }

    /// Notices `ponderhit`: the clock starts when pondering ends.
    fn update_pondering(&mut self) {
        if self.pondering && !self.signals.pondering.load(Ordering::Acquire) {
            self.pondering = false;
            self.clock_start = Instant::now();
        }
    }

    /// Adds this thread's new nodes and table hits to the team's totals
    /// and reads the other threads' share of them.
    fn sync_nodes(&mut self) {
        let total = self.team.add_nodes(self.nodes - self.flushed);
        self.flushed = self.nodes;
        self.others = total - self.flushed;
        let hits = self.hits();
        let total = self.team.add_tbhits(hits - self.hits_flushed);
        self.hits_flushed = hits;
        self.hits_others = total - hits;
    }

    /// This thread's table hits.
    fn hits(&self) -> u64 {
        self.prober.as_ref().map_or(0, |p| p.hits)
    }

    /// Table hits of all threads, as far as this thread knows.
    fn total_tbhits(&self) -> u64 {
        self.hits() + self.hits_others
    }

    /// Nodes of all threads, as far as this thread knows.
    fn total_nodes(&self) -> u64 {
        self.nodes + self.others
    }

    /// Whether the search of the current iteration must end now: the
    /// search ends (stop flag, node limit, hard time, or for a helper the
    /// main thread's end), or another thread has completed the iteration
    /// (then `abandoned` is set too).
    ///
    /// The flags are read at every node: a node's time has no useful bound
    /// (in a fresh table each node faults in pages of it, and a thousand
    /// such nodes took 10-20 ms on a loaded machine), so reading them every
    /// [`params::CHECK_INTERVAL`] nodes left `stop` waiting that long.
    /// Reading two flags costs next to nothing. The clock is read less
    /// often: the protocol thread watches it too, and sets `stop` when the
    /// hard limit passes.
    fn check_limits(&mut self) -> bool {
        if !self.may_stop {
            return false;
        }
        if self.signals.stop.load(Ordering::Relaxed) || self.team.is_done() {
            self.stopped = true;
        }
        if self
            .request
            .limits
            .nodes
            .is_some_and(|limit| self.total_nodes() >= limit)
        {
            self.stopped = true;
        }
        if self.nodes.is_multiple_of(params::CHECK_INTERVAL) {
            self.sync_nodes();
            if self.thread > 0 {
                // The main thread has completed this iteration.
                if !self.stopped && self.team.main_depth() > self.iteration {
                    self.stopped = true;
                    self.abandoned = true;
                }
                return self.stopped;
            }
            self.update_pondering();
            let hard = self.budget.map(|budget| budget.hard);
            if !self.pondering && hard.is_some_and(|hard| self.clock_elapsed() >= hard) {
                self.stopped = true;
            }
            // A helper has completed an iteration as deep as this one.
            if !self.stopped && self.adopts && self.team.helper_depth() >= self.iteration {
                self.stopped = true;
                self.abandoned = true;
            }
        }
        self.stopped
    }

    /// Iterative deepening from the root. For the main thread the result
    /// is the deepest completed iteration of any thread, and each
    /// iteration it completed or took over from a helper is reported; a
    /// helper's own return value is not used.
    fn iterate(&mut self, report: &mut dyn FnMut(Info)) -> SearchResult {
        let root = self.request.position;
        let mut moves = root.legal_moves();
        let searchmoves = &self.request.limits.searchmoves;
        if !searchmoves.is_empty() {
            moves.retain(|mv| searchmoves.contains(&mv));
        }
        let tt_move = self
            .tt
            .probe(root.key(), 0)
            .and_then(|entry| entry.best_move);
        self.history.order(&root, moves.as_mut_slice(), tt_move, 0);
        let mut root_moves: Vec<RootMove> = moves
            .iter()
            .map(|&mv| RootMove {
                mv,
                score: -INFINITY,
                searched: None,
                previous_score: -INFINITY,
                pv: vec![mv],
            })
            .collect();
        let mut outcome = SearchResult {
            best_move: root_moves.first().map(|rm| rm.mv),
            ponder_move: None,
            score: 0,
            depth: 0,
            nodes: 0,
        };
        if root_moves.is_empty() {
            return outcome;
        }
        let limits = &self.request.limits;
        let max_depth = limits
            .depth
            .map_or(MAX_DEPTH, |d| d.clamp(1, MAX_DEPTH as u32) as i32)
            .min(limits.mate.map_or(MAX_DEPTH, |m| {
                m.saturating_mul(2).clamp(1, MAX_DEPTH as u32) as i32
            }));
        let lines = self.request.settings.multipv.clamp(1, root_moves.len());

        self.adopts = self.thread == 0 && lines == 1;
        // The depth of the deepest completed iteration `outcome` holds.
        let mut completed_depth = 0;
        let mut depth = 0;
        while depth < max_depth {
            depth += 1;
            if smp::helper_skips(self.thread, depth, self.team.main_depth()) {
                continue;
            }
            if self.thread == 0 {
                self.team.main_starts(depth);
            }
            self.iteration = depth;
            self.may_stop = self.may_stop || depth > 1;
            let mut stopped_line = 0;
            for line in 0..lines {
                stopped_line = line;
                let previous = root_moves[line].previous_score;
                self.aspiration(&mut root_moves, line, depth, previous);
                if self.stopped {
                    break;
                }
                // The lines found so far stay in front, best first.
                root_moves[line..].sort_by_key(|rm| -rm.score);
            }
            if self.abandoned {
                // Another thread completed this iteration: go on deeper.
                self.abandoned = false;
                self.stopped = false;
                if self.thread > 0 {
                    continue;
                }
                let helper = self.team.helper_result_deeper_than(completed_depth);
                let Some(helper) = helper.filter(|helper| adopt(&mut root_moves, helper)) else {
                    // Not to be had (a bug): search this depth again, alone.
                    log::error!("a helper's completed iteration could not be taken over");
                    self.adopts = false;
                    depth -= 1;
                    continue;
                };
                depth = helper.depth;
                completed_depth = depth;
                outcome.best_move = Some(root_moves[0].mv);
                outcome.ponder_move = root_moves[0].pv.get(1).copied();
                outcome.score = root_moves[0].score;
                outcome.depth = depth;
                self.sync_nodes();
                report(self.info(depth, 1, &root_moves[0]));
                if self.should_stop_after_iteration(depth, &root_moves, lines) {
                    break;
                }
                continue;
            }
            let completed = !self.stopped;
            if !completed {
                if let Some(index) = partial_choice(&root_moves, stopped_line) {
                    let rm = &root_moves[index];
                    outcome.best_move = Some(rm.mv);
                    outcome.ponder_move = rm.pv.get(1).copied();
                    if rm.score > -INFINITY {
                        outcome.score = rm.score;
                        outcome.depth = depth;
                    }
                }
                break;
            }
            for rm in root_moves.iter_mut() {
                rm.previous_score = rm.score;
            }
            outcome.best_move = Some(root_moves[0].mv);
            outcome.ponder_move = root_moves[0].pv.get(1).copied();
            outcome.score = root_moves[0].score;
            outcome.depth = depth;
            completed_depth = depth;
            if self.thread > 0 {
                self.team.helper_completed(smp::Completed {
                    depth,
                    score: root_moves[0].score,
                    pv: root_moves[0].pv.clone(),
                });
                continue;
            }
            self.sync_nodes();
            for (index, rm) in root_moves.iter().take(lines).enumerate() {
                report(self.info(depth, index + 1, rm));
            }
            if self.should_stop_after_iteration(depth, &root_moves, lines) {
                break;
            }
        }
        // The search ended: a helper's deeper completed iteration beats
        // the main thread's last one, and its partial one.
        let deeper = self
            .adopts
            .then(|| self.team.helper_result_deeper_than(completed_depth));
        if let Some(helper) = deeper
            .flatten()
            .filter(|helper| adopt(&mut root_moves, helper))
        {
            outcome.best_move = Some(root_moves[0].mv);
            outcome.ponder_move = root_moves[0].pv.get(1).copied();
            outcome.score = root_moves[0].score;
            outcome.depth = helper.depth;
            self.sync_nodes();
            report(self.info(helper.depth, 1, &root_moves[0]));
        }
        self.sync_nodes();
        if outcome.ponder_move.is_none() {
            outcome.ponder_move = outcome
                .best_move
                .and_then(|mv| self.ponder_from_tt(&root, mv));
        }
        outcome.nodes = self.total_nodes();
        outcome
    }

    /// Decides, after a completed iteration, whether to start another.
    ///
    /// A win or loss proven within the horizon stops it under any limits.
    /// Under a time limit (not `infinite`, nor while pondering) the search
    /// also moves at once when more search cannot change the result: one
    /// legal move, or a win or loss proven at any distance. Else it starts
    /// another iteration until the soft limit.
    fn should_stop_after_iteration(
        &mut self,
        depth: i32,
        root_moves: &[RootMove],
        lines: usize,
    ) -> bool {
        let limits = &self.request.limits;
        let best = root_moves[0].score;
        if limits.mate.is_some_and(|mate| {
            best >= MATE_BOUND && (MATE - best + 1) / 2 <= mate.min(MAX_DEPTH as u32) as i32
        }) {
            return true;
        }
        // A forced result proven within the horizon will not change.
        let proven = best.abs() >= MATE_BOUND && MATE - best.abs() <= depth;
        if proven && lines == 1 {
            return true;
        }
        self.update_pondering();
        if limits.infinite || self.pondering {
            return false;
        }
        if root_moves.len() == 1 && limits.time != TimeLimit::None {
            return true;
        }
        // Mate scores come only from positions decided on the board, by
        // a race (see [`race`]) or by a table's distance to the end, never
        // from an evaluation or a null move: one beyond the horizon is as
        // proven as one within it, and only its distance could change.
        // (A race decided at the root shows at the first iteration.)
        if best.abs() >= MATE_BOUND && lines == 1 && limits.time != TimeLimit::None {
            return true;
        }
        match self.budget {
            Some(budget) => self.clock_elapsed() >= budget.soft,
            None => false,
        }
    }

    /// Searches root line `line` at `depth` with a window around `previous`,
    /// widening it until the score falls inside.
    fn aspiration(&mut self, root_moves: &mut [RootMove], line: usize, depth: i32, previous: i32) {
        let mut delta = params::ASPIRATION_WINDOW;
        let (mut alpha, mut beta) =
            if depth >= params::ASPIRATION_MIN_DEPTH && previous.abs() < MATE_BOUND {
                (previous - delta, previous + delta)
            } else {
                (-INFINITY, INFINITY)
            };
        loop {
            let score = self.search_root(root_moves, line, depth, alpha, beta);
            if self.stopped {
                return;
            }
            if score <= alpha {
                alpha = (alpha - delta).max(-INFINITY);
            } else if score >= beta {
                beta = (beta + delta).min(INFINITY);
            } else {
                return;
            }
            if alpha.abs() >= MATE_BOUND || beta.abs() >= MATE_BOUND {
                (alpha, beta) = (-INFINITY, INFINITY);
            }
            delta *= params::ASPIRATION_GROWTH;
        }
    }

    /// Alpha-beta over the root moves `line..`; the moves before `line` are
    /// earlier MultiPV lines and are left out.
    fn search_root(
        &mut self,
        root_moves: &mut [RootMove],
        line: usize,
        depth: i32,
        mut alpha: i32,
        beta: i32,
    ) -> i32 {
        let root = self.request.position;
        let mut best = -INFINITY;
        self.nodes += 1;
        // Moves not searched to the end in this pass rank last if it is cut short.
        for rm in root_moves[line..].iter_mut() {
            rm.score = -INFINITY;
            rm.searched = None;
        }
        #[allow(clippy::needless_range_loop)] // the body needs the index and the slice
        for index in line..root_moves.len() {
            let mv = root_moves[index].mv;
            let child = root.play(mv);
            self.push(&child, mv.is_irreversible(root.side_to_move()));
            let score = if index == line {
                -self.negamax(&child, depth - 1, 1, -beta, -alpha)
            } else {
                let mut score = -self.negamax(&child, depth - 1, 1, -alpha - 1, -alpha);
                if score > alpha && score < beta && !self.stopped {
                    score = -self.negamax(&child, depth - 1, 1, -beta, -alpha);
                }
                score
            };
            self.pop();
            if self.stopped {
                break;
            }
            let rm = &mut root_moves[index];
            rm.searched = Some(score);
            if score > alpha || index == line {
                rm.score = score;
                rm.pv.clear();
                rm.pv.push(mv);
                rm.pv.extend_from_slice(&self.pv[1]);
            } else {
                rm.score = -INFINITY;
            }
            if score > best {
                best = score;
            }
            if score > alpha {
                alpha = score;
                if score >= beta {
                    break;
                }
            }
        }
        if !self.stopped {
            let best_move = root_moves[line..]
                .iter()
                .max_by_key(|rm| rm.score)
                .map(|rm| rm.mv);
            if line == 0 {
                let bound = if best >= beta {
                    Bound::Lower
                } else {
                    Bound::Exact
                };
                self.tt.store(root.key(), 0, best_move, best, depth, bound);
            }
        }
        best
    }

    fn push(&mut self, position: &Position, irreversible: bool) {
        let index = self.keys.len();
        let window = if irreversible {
            index
        } else {
            self.window[index - 1]
        };
        self.keys.push(position.key());
        self.window.push(window);
    }

    fn pop(&mut self) {
        self.keys.pop();
        self.window.pop();
    }

    /// Whether the current position (the last key) repeats: once is
    /// enough inside the tree; before the root it must be the third time.
    fn is_repetition(&self) -> bool {
        let current = self.keys.len() - 1;
        let key = self.keys[current];
        let mut earlier = 0;
        let mut index = current;
        while index >= self.window[current] + 2 {
            index -= 2;
            if self.keys[index] == key {
                if index > self.root_index {
                    return true;
                }
                earlier += 1;
                if earlier >= 2 {
                    return true;
                }
            }
        }
        false
    }

    fn negamax(
        &mut self,
        position: &Position,
        depth: i32,
        ply: usize,
        mut alpha: i32,
        mut beta: i32,
    ) -> i32 {
        self.pv[ply].clear();
        self.nodes += 1;
        if self.check_limits() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let side = position.side_to_move();
        // The opponent just drove its last car off.
        if position.cars(side.other()) == 0 {
            return -(MATE - ply as i32);
        }
        if self.is_repetition() {
            return DRAW;
        }
        // One car left, on its exit line: it drives off next move.
        if position.can_win_next_move() {
            return MATE - ply as i32 - 1;
        }
        // The cars have passed each other: the race is decided.
        if let Some(score) = race::decided_race(position, ply) {
            return score;
        }
        let mut moves = position.legal_moves();
        if moves.is_empty() {
            return match self.rules {
                Rules::Textbook => -(MATE - ply as i32),
                Rules::Classic => MATE - ply as i32,
            };
        }
        // A position the solved tables cover has its exact result.
        if let Some(score) = self
            .prober
            .as_mut()
            .and_then(|p| p.probe(position, ply, depth))
        {
            return score;
        }
        // A forced move costs no depth: forced sequences are seen to their end.
        let depth = if moves.len() == 1 {
            depth + params::FORCED_EXTENSION
        } else {
            depth
        };
        if depth <= 0 || ply >= MAX_PLY {
            return self.evaluate(position);
        }
        // Mate distance pruning: no line from here beats a faster mate.
        alpha = alpha.max(-(MATE - ply as i32));
        beta = beta.min(MATE - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }
        let pv_node = beta - alpha > 1;
        let key = position.key();
        let entry = self.tt.probe(key, ply);
        if let Some(entry) = entry {
            let fits = match entry.bound {
                Bound::Exact => true,
                Bound::Lower => entry.score >= beta,
                Bound::Upper => entry.score <= alpha,
            };
            if !pv_node && entry.depth >= depth && fits {
                return entry.score;
            }
        }
        // Null move: if passing still holds beta, a real move will. (Not
        // tried where the table already says the score is below beta.)
        let below_beta = entry.is_some_and(|e| e.bound != Bound::Lower && e.score < beta);
        if !pv_node
            && depth >= params::NULL_MIN_DEPTH
            && beta.abs() < MATE_BOUND
            && !below_beta
            && self.evaluate(position) >= beta
        {
            let null = position.with_side_to_move(side.other());
            self.push(&null, true);
            let score = -self.negamax(
                &null,
                depth - 1 - params::NULL_REDUCTION,
                ply + 1,
                -beta,
                -beta + 1,
            );
            self.pop();
            if self.stopped {
                return 0;
            }
            if score >= beta {
                return if score >= MATE_BOUND { beta } else { score };
            }
        }
        let tt_move = entry
            .and_then(|e| e.best_move)
            .filter(|&mv| moves.contains(mv));
        // The table move is tried first, alone; the others are ordered
        // only if it does not cut off.
        let mut ordered = match tt_move.and_then(|mv| moves.iter().position(|&m| m == mv)) {
            Some(at) => {
                moves.as_mut_slice()[..=at].rotate_right(1);
                false
            }
            None => {
                self.history
                    .order(position, moves.as_mut_slice(), None, ply);
                true
            }
        };

        let original_alpha = alpha;
        let mut best = -INFINITY;
        let mut best_move = None;
        for index in 0..moves.len() {
            if index == 1 && !ordered {
                self.history
                    .order(position, &mut moves.as_mut_slice()[1..], None, ply);
                ordered = true;
            }
            let mv = moves[index];
            let child = position.play(mv);
            self.push(&child, mv.is_irreversible(side));
            let score = if index == 0 {
                -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha)
            } else {
                let reduction = if depth >= params::LMR_MIN_DEPTH
                    && index >= params::LMR_MIN_MOVES
                    && !self.history.is_killer(ply, mv)
                {
                    params::LMR_REDUCTION
                } else {
                    0
                };
                let mut score =
                    -self.negamax(&child, depth - 1 - reduction, ply + 1, -alpha - 1, -alpha);
                // A search cut short returns 0, which is no reason to
                // search again (nor to count nodes past the limit).
                if score > alpha && reduction > 0 && !self.stopped {
                    score = -self.negamax(&child, depth - 1, ply + 1, -alpha - 1, -alpha);
                }
                if score > alpha && score < beta && !self.stopped {
                    score = -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha);
                }
                score
            };
            self.pop();
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    best_move = Some(mv);
                    alpha = score;
                    let (head, tail) = self.pv.split_at_mut(ply + 1);
                    head[ply].clear();
                    head[ply].push(mv);
                    head[ply].extend_from_slice(&tail[0]);
                    if score >= beta {
                        self.history.update(side, ply, depth, mv, &moves[..=index]);
                        break;
                    }
                }
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(key, ply, best_move, best, depth, bound);
        best
    }

    /// The static evaluation of the current position (the last key),
    /// drawn towards zero the longer both sides have only moved sideways:
    /// a position nobody can make progress from is a draw, whatever the
    /// race looks like.
    fn evaluate(&self, position: &Position) -> i32 {
        let eval = evaluate_for_side_to_move(position, self.evaluation, self.rules);
        let current = self.keys.len() - 1;
        let idle = (current - self.window[current]).min(params::DRAW_DECAY_PLIES) as i32;
        let full = params::DRAW_DECAY_PLIES as i32;
        eval * (full - idle) / full
    }

    /// A reply to `best` to ponder on, from the table.
    fn ponder_from_tt(&self, root: &Position, best: Move) -> Option<Move> {
        let child = root.play(best);
        self.tt
            .probe(child.key(), 1)
            .and_then(|entry| entry.best_move)
            .filter(|&mv| child.is_legal(mv))
    }

    fn info(&self, depth: i32, multipv: usize, rm: &RootMove) -> Info {
        let time = self.elapsed();
        let micros = time.as_micros().max(1) as u64;
        Info {
            depth,
            seldepth: self.seldepth.max(depth as usize),
            multipv,
            score: Score::from_internal(rm.score),
            nodes: self.total_nodes(),
            nps: self.total_nodes().saturating_mul(1_000_000) / micros,
            hashfull: self.tt.hashfull(),
            tbhits: self.total_tbhits(),
            time,
            pv: rm.pv.clone(),
            wdl: Wdl::from_score(
                rm.score,
                &self.request.position,
                Curve::of(self.evaluation, self.request.position.size(), self.rules),
            ),
        }
    }
}

/// Takes another thread's completed iteration as this thread's own: its
/// best move goes first in `root_moves`, with its score and line; the
/// other moves keep their order behind it. `false`, and nothing changed,
/// if its move is not among `root_moves` (every thread searches the same
/// moves, so that would be a bug).
fn adopt(root_moves: &mut [RootMove], completed: &smp::Completed) -> bool {
    let found = (completed.pv.first()).and_then(|&mv| root_moves.iter().position(|rm| rm.mv == mv));
    let Some(at) = found else {
        return false;
    };
    root_moves[..=at].rotate_right(1);
    let rm = &mut root_moves[0];
    rm.score = completed.score;
    rm.previous_score = completed.score;
    rm.pv.clone_from(&completed.pv);
    true
}

/// The root move to play after an iteration cut short (by `stop`, the node
/// limit or the clock), as an index into `root_moves`, or `None` to keep
/// the last completed iteration's move.
///
/// The moves are still in the order the pass searched them: the last
/// completed iteration's best first. A move whose search this pass ended
/// replaces it only when it proved more than the first move did (a score
/// above the first move's, which for the first move may be only an upper
/// bound after failing low). The pass's best is kept unless it is proven
/// lost: then any move not yet proven lost is the better bet, the first of
/// them in the pass's order (a move the pass did not reach, or one that
/// only failed low against a window above the loss). That holds for the
/// first MultiPV line only (`line` is the line the pass was searching): a
/// later line's pass starts after the first line has ranked every move.
fn partial_choice(root_moves: &[RootMove], line: usize) -> Option<usize> {
    let best = (0..root_moves.len())
        .filter(|&index| root_moves[index].score > -INFINITY)
        .max_by_key(|&index| (root_moves[index].score, std::cmp::Reverse(index)))?;
    if root_moves[best].score > -MATE_BOUND || line > 0 {
        return Some(best);
    }
    // A score at or below -MATE_BOUND, exact or an upper bound, is a loss.
    let not_lost =
        (root_moves.iter()).position(|rm| rm.searched.is_none_or(|score| score > -MATE_BOUND));
    Some(not_lost.unwrap_or(best))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::parse_position;

    /// An 8 x 8 race Black has won: every White car stands north of every
    /// Black car, and Black needs 24 moves to White's 30. With Black to
    /// move, a3a4 gives up the safety (the search goes on after it); with
    /// White to move, every move loses.
    const WON_RACE: &str = "8/8/8/8/1WWWWWW1/B7/B7/B7 b";
    const LOST_RACE: &str = "8/8/8/8/1WWWWWW1/B7/B7/B7 w";

    /// Ten minutes on the clock: a soft limit of seconds.
    fn clock() -> TimeLimit {
        TimeLimit::Clock {
            remaining: Duration::from_secs(600),
            increment: Duration::ZERO,
            moves_to_go: None,
        }
    }

    /// Searches `position` under `limits` (pondering if asked): the
    /// result and the lines reported.
    fn run(position: &str, limits: Limits, pondering: bool) -> (SearchResult, Vec<Info>) {
        let request = Request {
            position: parse_position(position).unwrap(),
            history: Vec::new(),
            limits,
            settings: Settings::default(),
            tablebase: TableUse::default(),
        };
        let signals = Signals::default();
        signals.pondering.store(pondering, Ordering::Release);
        let mut tables = Tables::new(16);
        let mut infos = Vec::new();
        let result = search(&request, &mut tables, &signals, &mut |info| {
            infos.push(info)
        });
        (result, infos)
    }

    #[test]
    fn a_decided_race_is_played_after_one_iteration_under_a_clock() {
        for (position, won) in [(WON_RACE, true), (LOST_RACE, false)] {
            let limits = Limits {
                time: clock(),
                ..Limits::default()
            };
            let (result, infos) = run(position, limits, false);
            let depths: Vec<i32> = infos.iter().map(|info| info.depth).collect();
            assert_eq!(depths, [1], "{position}");
            assert!(result.nodes < 100, "{position}: {} nodes", result.nodes);
            assert_eq!(
                result.score >= MATE_BOUND,
                won,
                "{position}: {}",
                result.score
            );
            assert_eq!(
                result.score <= -MATE_BOUND,
                !won,
                "{position}: {}",
                result.score
            );
            // The winner's move keeps the race won.
            let after = parse_position(position)
                .unwrap()
                .play(result.best_move.unwrap());
            let race = race::decided_race(&after, 0);
            assert!(
                race.is_some_and(|score| (score < 0) == won),
                "{position}: {race:?}"
            );
        }
    }

    #[test]
    fn a_decided_race_is_searched_on_without_a_clock_or_while_pondering() {
        let deepest = |limits, pondering| {
            let (_, infos) = run(WON_RACE, limits, pondering);
            infos.last().map_or(0, |info| info.depth)
        };
        assert_eq!(deepest(depth(6), false), 6);
        let nodes = Limits {
            nodes: Some(20_000),
            ..Limits::default()
        };
        assert!(deepest(nodes.clone(), false) > 3);
        // `go infinite` and pondering, with a clock given too.
        let infinite = Limits {
            time: clock(),
            infinite: true,
            ..nodes.clone()
        };
        assert!(deepest(infinite, false) > 3);
        let ponder = Limits {
            time: clock(),
            ..nodes
        };
        assert!(deepest(ponder, true) > 3);
    }

    /// Limits of `d` plies.
    fn depth(d: u32) -> Limits {
        Limits {
            depth: Some(d),
            ..Limits::default()
        }
    }
}

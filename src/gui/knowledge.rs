//! What the engine has said about the game's positions, kept so that each
//! question is asked once: its searches ([`Report`]s, by the key of the
//! game's moves up to the position) and its `solve` answers (by position
//! and rules).
//!
//! A search is keyed by the game prefix, not the position alone, because
//! the engine's answer depends on the moves before it (repetitions); a
//! `solve` answer depends on the position and the rules only.

use std::collections::HashMap;

use crate::board::{Color, Move, Position, Rules};
use crate::client::{Info, Solved};
use crate::zobrist;

/// Answers kept at most: beyond this many, the oldest knowledge is
/// dropped whole (a long session cannot grow without bound).
const MAX_ENTRIES: usize = 100_000;

/// What a search was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The engine's own move in the game (at its level).
    Play,
    /// The values of every move, in words (hints where no table covers
    /// the position).
    Hints,
    /// The best move, asked for with the button.
    Best,
    /// The engine's view of a position under review.
    Review,
    /// A point of the evaluation graph.
    Graph,
}

/// One search of one position, as the engine reported it.
#[derive(Clone, Debug)]
pub struct Report {
    pub purpose: Purpose,
    /// Moves played before the searched position.
    pub ply: usize,
    /// The side to move there: the scores' point of view.
    pub side: Color,
    /// Lines asked for (`MultiPV`).
    pub asked: usize,
    /// At full strength (not the engine's move at a weaker level).
    pub full_strength: bool,
    /// The latest line of each rank (index 0: the principal line).
    pub lines: Vec<Info>,
    /// The search has ended (or was stopped).
    pub done: bool,
    /// It ended with this `bestmove` (not stopped).
    pub best: Option<String>,
}

impl Report {
    pub fn new(
        purpose: Purpose,
        ply: usize,
        side: Color,
        asked: usize,
        full_strength: bool,
    ) -> Report {
        Report {
            purpose,
            ply,
            side,
            asked,
            full_strength,
            lines: Vec::new(),
            done: false,
            best: None,
        }
    }

    /// The principal line, if one was reported.
    pub fn principal(&self) -> Option<&Info> {
        self.lines.first()
    }
}

/// See the module docs.
#[derive(Debug, Default)]
pub struct Knowledge {
    reports: HashMap<u64, Report>,
    solved: HashMap<(Rules, u64), Solved>,
}

/// The keys of the prefixes of a game from `start`: entry `i` stands for
/// the game after its first `i` moves (an FNV-1a hash of the start and the
/// moves).
pub fn prefix_keys(start: &Position, moves: &[Move]) -> Vec<u64> {
    let mix = |hash: u64, value: u64| zobrist::fnv1a(hash, &value.to_le_bytes());
    let mut hash = mix(zobrist::FNV_OFFSET, start.key());
    let mut keys = Vec::with_capacity(moves.len() + 1);
    keys.push(hash);
    for mv in moves {
        hash = mix(hash, u64::from(mv.code()));
        keys.push(hash);
    }
    keys
}

impl Knowledge {
    /// A search of prefix `key` starts; it replaces what was known.
    pub fn start(&mut self, key: u64, report: Report) {
        if self.reports.len() >= MAX_ENTRIES {
            self.reports.clear();
        }
        self.reports.insert(key, report);
    }

    /// An `info` line of the search of prefix `key`.
    pub fn record(&mut self, key: u64, info: Info) {
        let Some(report) = self.reports.get_mut(&key) else {
            return;
        };
        let rank = info.multipv.unwrap_or(1).max(1) as usize;
        if rank > report.asked.max(1) || info.pv.is_empty() && info.score.is_none() {
            return;
        }
        if report.lines.len() < rank {
            report.lines.resize(rank, Info::default());
        }
        report.lines[rank - 1] = info;
    }

    /// The search of prefix `key` ended: with its `bestmove`, or stopped
    /// (`None`).
    pub fn finish(&mut self, key: u64, best: Option<&str>) {
        if let Some(report) = self.reports.get_mut(&key) {
            report.done = true;
            report.best = best.map(str::to_string);
            // Lines a stopped search never reached stay empty: drop them.
            report
                .lines
                .retain(|info| !info.pv.is_empty() || info.score.is_some());
        }
    }

    pub fn report(&self, key: u64) -> Option<&Report> {
        self.reports.get(&key)
    }

    /// Whether a full-strength search of prefix `key` has named its best
    /// move.
    pub fn has_best(&self, key: u64) -> bool {
        self.reports
            .get(&key)
            .is_some_and(|report| report.full_strength && report.best.is_some())
    }

    /// Whether prefix `key` has a full-strength search with `lines` lines,
    /// or one that asked for them and ended (an engine may report fewer;
    /// asking again would not help).
    pub fn has_lines(&self, key: u64, lines: usize) -> bool {
        self.reports.get(&key).is_some_and(|report| {
            report.full_strength
                && (report.lines.len() >= lines || (report.best.is_some() && report.asked >= lines))
        })
    }

    /// What `solve` said about `position` under `rules`.
    pub fn solved(&self, rules: Rules, position: &Position) -> Option<Solved> {
        self.solved.get(&(rules, position.key())).copied()
    }

    pub fn store_solved(&mut self, rules: Rules, position: u64, solved: Solved) {
        if self.solved.len() >= MAX_ENTRIES {
            self.solved.clear();
        }
        self.solved.insert((rules, position), solved);
    }

    /// Forgets the searches (a new game); `solve` answers stay true.
    pub fn forget_searches(&mut self) {
        self.reports.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::parse_info;

    #[test]
    fn prefixes_differ_by_moves_and_start() {
        let start = Position::start(3);
        let moves: Vec<Move> = start.legal_moves().as_slice().to_vec();
        let a = prefix_keys(&start, &moves[..1]);
        let b = prefix_keys(&start, &moves[1..2]);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0], b[0]);
        assert_ne!(a[1], b[1]);
        assert_ne!(prefix_keys(&Position::start(4), &[])[0], a[0]);
    }

    #[test]
    fn reports_keep_the_latest_line_of_each_rank() {
        let mut knowledge = Knowledge::default();
        knowledge.start(7, Report::new(Purpose::Hints, 0, Color::Black, 2, true));
        assert!(!knowledge.has_lines(7, 2));
        for line in [
            "info depth 1 multipv 1 score cp 5 pv a3b3",
            "info depth 1 multipv 2 score cp 1 pv a2b2",
            "info depth 2 multipv 1 score cp 7 pv a3b3 b1b2",
            "info depth 2 multipv 3 score cp 0 pv a2a1",
        ] {
            knowledge.record(7, parse_info(line).unwrap());
        }
        let report = knowledge.report(7).unwrap();
        assert_eq!(report.lines.len(), 2);
        assert_eq!(report.lines[0].depth, Some(2));
        assert!(knowledge.has_lines(7, 2));
        assert!(!knowledge.has_best(7));
        knowledge.finish(7, Some("a3b3"));
        assert!(knowledge.has_best(7));
        // A search at a weaker level answers no questions.
        knowledge.start(8, Report::new(Purpose::Play, 0, Color::Black, 1, false));
        knowledge.finish(8, Some("a3b3"));
        assert!(!knowledge.has_best(8) && !knowledge.has_lines(8, 1));
    }
}

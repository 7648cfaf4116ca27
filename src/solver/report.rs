//! What a solved table says about a board size: how many positions are
//! won, lost and drawn, and the value of the start and of each first move.

use std::fmt;

use super::{Cars, Value, decode, reachable};
use crate::board::{Color, Move, Position};
use crate::notation;
use crate::tablebase::Table;

/// Win/loss/draw counts, for the side to move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub wins: u64,
    pub losses: u64,
    pub draws: u64,
}

impl Counts {
    pub fn total(&self) -> u64 {
        self.wins + self.losses + self.draws
    }

    fn add(&mut self, value: Value) {
        match value {
            Value::Win(_) => self.wins += 1,
            Value::Loss(_) => self.losses += 1,
            Value::Draw => self.draws += 1,
        }
    }
}

/// The facts a table gives about its board size and rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub size: usize,
    pub rules: crate::Rules,
    /// Every slot of the table (both sides still have a car on the board).
    pub all: Counts,
    /// Positions that can arise from the start, finished games included
    /// (each counts as lost for its side to move).
    pub reachable: Counts,
    /// Longest decided position in the table, in plies.
    pub longest: u32,
    pub start: Value,
    pub first_moves: Vec<(Move, Value)>,
}

/// Tallies `table`, walking the positions reachable from the start on
/// `threads` threads.
pub fn report(table: &Table, threads: usize) -> Report {
    let size = table.size();
    let indexer = table.indexer();
    let start = Position::start(size);
    let (black, white) = indexer
        .masks(&start)
        .expect("the start has cars on the board");
    let seen = reachable(indexer, Cars { black, white }, Color::Black, threads);
    let mut all = Counts::default();
    let mut reached = Counts::default();
    let mut longest = 0;
    for (slot, &byte) in table.values().iter().enumerate() {
        let value = decode(byte);
        all.add(value);
        if let Value::Win(plies) | Value::Loss(plies) = value {
            longest = longest.max(plies);
        }
        if seen.contains(slot as u64) {
            reached.add(value);
        }
    }
    reached.losses += seen.finished();
    Report {
        size,
        rules: table.rules(),
        all,
        reachable: reached,
        longest,
        start: table.probe(&start).expect("the table covers its start"),
        first_moves: table.rank_moves(&start),
    }
}

/// `win in 19 plies`, `loss in 4 plies`, `draw`.
pub fn describe(value: Value) -> String {
    match value {
        Value::Win(plies) => format!("win in {plies} plies"),
        Value::Loss(plies) => format!("loss in {plies} plies"),
        Value::Draw => "draw".to_string(),
    }
}

pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.size;
        writeln!(f, "{n}x{n} Dodgem, {} rule", self.rules.name())?;
        writeln!(
            f,
            "{:<34} {:>13} {:>13} {:>13} {:>13}",
            "", "positions", "wins", "losses", "draws"
        )?;
        for (name, counts) in [
            ("reachable from the start", self.reachable),
            ("all with cars of both sides", self.all),
        ] {
            writeln!(
                f,
                "{name:<34} {:>13} {:>13} {:>13} {:>13}",
                grouped(counts.total()),
                grouped(counts.wins),
                grouped(counts.losses),
                grouped(counts.draws)
            )?;
        }
        writeln!(f, "(wins, losses and draws for the side to move)")?;
        writeln!(f, "longest decided position: {} plies", self.longest)?;
        writeln!(f, "start (Black to move): {}", describe(self.start))?;
        let moves: Vec<String> = self
            .first_moves
            .iter()
            .map(|&(mv, value)| format!("{} {}", notation::format_move(Some(mv)), describe(value)))
            .collect();
        write!(f, "first moves: {}", moves.join(", "))
    }
}

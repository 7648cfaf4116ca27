//! Move ordering: which move to try first. Good ordering is what makes
//! alpha-beta fast: the best move first gives the most cutoffs.

use super::params::*;
use crate::board::{Color, Direction, MAX_MOVES, Move, Position, SQUARES};

/// History and killer tables, kept between searches and cleared by
/// `ucinewgame`.
#[derive(Clone)]
pub struct History {
    /// `[side][from square][direction]`: how often the move caused a cutoff.
    scores: [[[i32; 4]; SQUARES]; 2],
    /// Two moves per ply that recently caused a cutoff there.
    killers: [[Option<Move>; 2]; MAX_PLY + 1],
}

impl History {
    pub fn new() -> History {
        History {
            scores: [[[0; 4]; SQUARES]; 2],
            killers: [[None; 2]; MAX_PLY + 1],
        }
    }

    pub fn clear(&mut self) {
        *self = History::new();
    }

    fn score(&self, side: Color, mv: Move) -> i32 {
        self.scores[side.index()][mv.from as usize][mv.dir as usize]
    }

    /// Whether `mv` is a killer at `ply`.
    pub fn is_killer(&self, ply: usize, mv: Move) -> bool {
        self.killers[ply].contains(&Some(mv))
    }

    /// Rewards `best`, which caused a cutoff at `depth`, and penalises the
    /// moves tried before it.
    pub fn update(&mut self, side: Color, ply: usize, depth: i32, best: Move, tried: &[Move]) {
        let bonus = (depth * depth).min(HISTORY_MAX / 4);
        for &mv in tried {
            let delta = if mv == best { bonus } else { -bonus };
            let entry = &mut self.scores[side.index()][mv.from as usize][mv.dir as usize];
            // Gravity keeps scores within +-HISTORY_MAX and lets old news fade.
            *entry += delta - *entry * delta.abs() / HISTORY_MAX;
        }
        let killers = &mut self.killers[ply];
        if killers[0] != Some(best) {
            killers[1] = killers[0];
            killers[0] = Some(best);
        }
    }

    /// Sorts `moves` best-first for the node at `ply`.
    pub fn order(
        &self,
        position: &Position,
        moves: &mut [Move],
        tt_move: Option<Move>,
        ply: usize,
    ) {
        let side = position.side_to_move();
        let size = position.size();
        let mut keyed: [(i32, usize); MAX_MOVES] = [(0, 0); MAX_MOVES];
        for (i, &mv) in moves.iter().enumerate() {
            let priority = if Some(mv) == tt_move {
                ORDER_TT_MOVE
            } else if self.killers[ply][0] == Some(mv) {
                ORDER_KILLER[0]
            } else if self.killers[ply][1] == Some(mv) {
                ORDER_KILLER[1]
            } else if mv.is_exit(size) {
                ORDER_EXIT + self.score(side, mv)
            } else if mv.dir == Direction::forward(side) {
                ORDER_FORWARD + self.score(side, mv)
            } else {
                self.score(side, mv)
            };
            // Ties keep generation order, so ordering is deterministic.
            keyed[i] = (-priority, i);
        }
        let keyed = &mut keyed[..moves.len()];
        keyed.sort_unstable();
        let mut original = [moves[0]; MAX_MOVES];
        original[..moves.len()].copy_from_slice(moves);
        for (slot, &(_, i)) in moves.iter_mut().zip(keyed.iter()) {
            *slot = original[i];
        }
    }
}

impl Default for History {
    fn default() -> Self {
        History::new()
    }
}

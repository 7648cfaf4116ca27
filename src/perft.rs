//! Perft: counts the leaves of the legal move tree to a fixed depth, the
//! standard check of a move generator. A finished game (either side has no
//! cars left, or the side to move is blocked) has no children.

use crate::board::{Move, Position};

/// Number of leaf positions `depth` plies below `position`.
pub fn perft(position: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        // Bulk counting: the leaves one ply down are the legal moves.
        1 => position.count_moves() as u64,
        _ => position
            .legal_moves()
            .iter()
            .map(|&mv| perft(&position.play(mv), depth - 1))
            .sum(),
    }
}

/// Leaf counts below each root move (`go perft` prints these), in move
/// generation order.
pub fn divide(position: &Position, depth: u32) -> Vec<(Move, u64)> {
    let child_depth = depth.saturating_sub(1);
    position
        .legal_moves()
        .iter()
        .map(|&mv| (mv, perft(&position.play(mv), child_depth)))
        .collect()
}

//! Perft: counts the leaves of the legal move tree to a fixed depth, the
//! standard check of a move generator. A finished game (either side has no
//! cars left, or the side to move is blocked) has no children.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::board::{self, Move, Position};
use crate::notation;
use crate::protocol::response::perft_total;

/// `dodgem perft`: the command line.
#[derive(clap::Args, Clone, Debug)]
pub struct PerftArgs {
    /// Depth in plies (0 to 64: deeper never finishes).
    #[arg(value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_DEPTH)))]
    pub depth: u32,
    /// Board size of the start position.
    #[arg(long, default_value_t = board::MIN_SIZE)]
    pub size: usize,
    /// A position string instead of the start position.
    #[arg(long, conflicts_with = "size")]
    pub fen: Option<String>,
}

impl PerftArgs {
    /// Counts the leaves and prints the count and the speed to stdout.
    ///
    /// # Errors
    /// A bad position string or board size, or stdout cannot be written.
    pub fn run(&self) -> Result<(), Box<dyn std::error::Error>> {
        let position = match &self.fen {
            Some(text) => notation::parse_position(text)?,
            None => Position::start(board::check_size(self.size)?),
        };
        let start = std::time::Instant::now();
        let nodes = perft(&position, self.depth);
        let elapsed = start.elapsed();
        let nps = (nodes as f64 / elapsed.as_secs_f64().max(1e-9)) as u64;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", perft_total(nodes))?;
        writeln!(out, "Time: {} ms, {nps} nodes/s", elapsed.as_millis())?;
        Ok(())
    }
}

/// The deepest perft the protocol and the shell accept. Sideways moves
/// cycle, so the tree has no natural bottom: the recursion here goes as
/// deep as asked, one stack frame per ply. Every board has at least two
/// moves in most positions, so a count this deep (2^64 leaves and more)
/// would neither finish nor fit in a `u64`; the bound keeps the stack
/// small and the promise honest.
pub const MAX_DEPTH: u32 = 64;

/// Number of leaf positions `depth` plies below `position`. Callers keep
/// `depth` within [`MAX_DEPTH`] (each ply is a stack frame).
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

/// Like [`perft`], but gives up (`None`) once `stop` is set; checked at
/// nodes four or more plies from the leaves, so often enough to answer
/// within milliseconds and rarely enough to cost nothing.
fn perft_until(position: &Position, depth: u32, stop: &AtomicBool) -> Option<u64> {
    if depth < 4 {
        return Some(perft(position, depth));
    }
    if stop.load(Ordering::Relaxed) {
        return None;
    }
    let mut total = 0;
    for &mv in position.legal_moves().iter() {
        total += perft_until(&position.play(mv), depth - 1, stop)?;
    }
    Some(total)
}

/// Leaf counts below each root move (`go perft` prints these), in move
/// generation order.
pub fn divide(position: &Position, depth: u32) -> Vec<(Move, u64)> {
    divide_until(position, depth, &AtomicBool::new(false)).unwrap_or_default()
}

/// [`divide`] that gives up (`None`) once `stop` is set.
pub fn divide_until(
    position: &Position,
    depth: u32,
    stop: &AtomicBool,
) -> Option<Vec<(Move, u64)>> {
    let child_depth = depth.saturating_sub(1);
    position
        .legal_moves()
        .iter()
        .map(|&mv| Some((mv, perft_until(&position.play(mv), child_depth, stop)?)))
        .collect()
}

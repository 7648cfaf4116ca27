//! Search tunables, in one place.

/// Deepest iteration the search starts (plies).
pub const MAX_DEPTH: i32 = 96;
/// Longest line from the root the search can follow (plies).
pub use crate::score::MAX_PLY;

/// Nodes between reads of the clock (and updates of the shared node
/// count); the stop flag is read at every node.
pub const CHECK_INTERVAL: u64 = 1024;

/// Aspiration windows start at this iteration depth...
pub const ASPIRATION_MIN_DEPTH: i32 = 4;
/// ...with this half-width around the previous score (eval units), which
/// grows by this factor on every fail.
pub const ASPIRATION_WINDOW: i32 = 30;
pub const ASPIRATION_GROWTH: i32 = 3;

/// Move ordering priorities: the table move, then killers, then the rest by
/// history plus a bonus for exits and forward moves.
pub const ORDER_TT_MOVE: i32 = 1 << 20;
pub const ORDER_KILLER: [i32; 2] = [1 << 19, (1 << 19) - 1];
pub const ORDER_EXIT: i32 = 8192;
pub const ORDER_FORWARD: i32 = 4096;
/// History scores stay within +-HISTORY_MAX.
pub const HISTORY_MAX: i32 = 16384;

/// Late move reductions: from this depth, moves after the first
/// `LMR_MIN_MOVES` that are neither the table move nor killers are first
/// searched `LMR_REDUCTION` plies shallower. (Reductions growing with
/// depth and move number, `ln(depth) ln(move) / 2`, lost 16 to 23 Elo at
/// equal nodes on 6 x 6 and 7 x 7.)
pub const LMR_MIN_DEPTH: i32 = 3;
pub const LMR_MIN_MOVES: usize = 3;
pub const LMR_REDUCTION: i32 = 1;

/// Most search threads `Threads` accepts.
pub const MAX_THREADS: usize = 64;
/// Lazy SMP: helper `i` (from 1) searches only the iterations whose depth
/// `d` has `(d + SKIP_PHASE[k]) / SKIP_SIZE[k]` even, `k = (i - 1) % 20`,
/// so the helpers spread over the depths just ahead of the main thread.
pub const SKIP_SIZE: [i32; 20] = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4];
pub const SKIP_PHASE: [i32; 20] = [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7];

/// Plies added to the depth of a node whose side to move has one legal move.
pub const FORCED_EXTENSION: i32 = 1;

// Tried and left out, measured at equal nodes (20,000 a move, 400 games
// from random openings on each board, against the search without it):
// reverse futility pruning (non-PV nodes up to depth 3, a static
// evaluation 60 a ply above beta cuts off): +3.5 Elo on 6 x 6, -6.1 on
// 7 x 7, both within +-34.

/// The evaluation falls linearly to zero over this many plies without a
/// forward move by either side. (Neutral in matches from random openings,
/// which are rarely drawn: -7.8 Elo on 6 x 6 and +0.9 on 7 x 7, +-34; it
/// is there for the scores of drawn positions.)
pub const DRAW_DECAY_PLIES: usize = 40;

/// Null-move pruning at non-PV nodes from this depth, when the static
/// evaluation is at least beta: the pass is searched this much shallower.
/// Zugzwang is real in Dodgem (blockades), but measured at equal nodes it
/// pays: +16.5 Elo on 6 x 6 and +9.6 on 7 x 7 (400 games each, +-33).
pub const NULL_MIN_DEPTH: i32 = 3;
pub const NULL_REDUCTION: i32 = 2;

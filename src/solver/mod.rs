//! Retrograde analysis: the exact value of every position of one board
//! size under one rule, or of every position with at most so many cars a
//! side (endgame tables for the larger boards).
//!
//! The positions fall into layers by each side's progress (see
//! [`layers`](index::layers)): every move raises one side's progress by one or leaves
//! both alone, so the game only ever moves to the same layer or a later
//! one. The solver works from the last layers back to the start
//! ([`run::solve`]), several pairs at a time where they are ready and small
//! ([`schedule`](run::schedule)); inside a pair of layers it runs the retrograde analysis
//! over their sideways moves ([`retro`](passes::retro)), given the win/draw/loss of the
//! layers the forward moves reach. Each finished layer goes to its own
//! compressed, checksummed files ([`format`](mod@files::format): blocks of runs, [`codec`](files::codec),
//! or for win/draw/loss tiles coded by their neighbours, [`tiles`](files::tiles)), read
//! through [`store`](files::store), or, for the built-in 3 x 3 and 4 x 4 tables, stays
//! in memory ([`solve_in_memory`]).
//!
//! What is stored for every position is win, draw or loss for the side to
//! move and the plies to the end of the game of best play ([`Metric::Dte`]),
//! both from one retrograde pass a pair ([`pass`](passes::pass): levels of the distance to
//! the end at one byte a slot, the layers ahead entering at their own
//! levels). The older value pass ([`retro`](passes::retro), `solve --no-distances`) gives
//! the plies to the next progress move ([`Dtz`]) instead, and the distance
//! pass ([`dte`](passes::dte), [`add_dte`]) derives the distances to the end from those;
//! the built-in 3 x 3 and 4 x 4 tables keep both ([`solve_in_memory`],
//! [`dte_in_memory`]).
//!
//! The parts, a folder each:
//!
//! - [`index`]: the layout of the positions (layers, their blocks and
//!   moves) and the values a table stores;
//! - [`passes`]: the retrograde passes over one pair of layers;
//! - [`files`]: the table files (format, block and tile codes, the
//!   [`Tables`] reader, the search's cache, the old format);
//! - [`checks`]: the checks of a finished directory (verify, play-out,
//!   reach);
//! - [`run`]: `dodgem solve` and the solve itself (its plan, the driver,
//!   one pair made, the solves in memory, the distances added, the
//!   schedule, the MPI cluster);
//! - [`threads`]: work spread over threads, and the threads the pairs
//!   made side by side share.

mod checks;
mod files;
mod index;
mod passes;
mod run;
mod threads;

use threads::parallel;

pub use checks::pair_check::Verified;
pub use checks::playout::{PlayoutPlan, Playouts, playout};
pub use checks::reach;
pub use checks::verify::verify;
pub use files::cache::{DEFAULT_WDL_MB, Reading, WdlReader, set_wdl_budget, wdl_budget};
pub use files::format::{
    BLOCK_SLOTS, BlockCode, CONVERT_HINT, Content, Header, Index, Kind, LAYER_VERSION, LayerError,
    LayerFile, MANIFEST, Metric, VERSION, layer_path, read_header, read_kind, read_layer,
    read_manifest, read_values, read_values_header, write_layer, write_metric,
};
pub use files::format::{
    DirLock, LOCK_FILE, Manifest, UNBOUND_VERSION, is_set, lock_dir, positions_of, prepare_dir,
    read_directory, read_wdl, wdl_value, write_file,
};
pub use files::legacy::{Conversion, Converted, convert, read_values as read_old_values};
pub use files::store::Tables;
pub use index::layers::{Block, Child, Layer, Shape};
pub use index::value::{Dtz, Tally, Values, Wdl, WdlBits, decode, encode};
pub use passes::dte::MAX_DTE;
pub use run::add_dte::{DteOutcome, add_dte, add_dte_knowing};
pub use run::cli;
#[cfg(feature = "mpi")]
pub use run::cluster;
pub use run::in_memory::{dte_in_memory, solve_in_memory};
pub use run::plan::{Census, LayeredError, Outcome, PairDone, Plan, census, shape_of};
pub use run::solve::{Ranks, solve as solve_layers, solve_on};

/// Why a solve could not be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SolveError {
    /// A distance to progress beyond what two-byte cells hold (or one to
    /// the end beyond what two-byte values hold).
    TooDeep(u32),
    /// Solved values that contradict each other: what is wrong.
    Inconsistent(String),
}

impl std::fmt::Display for SolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SolveError::TooDeep(plies) => write!(
                f,
                "a position is {plies} plies from progress, more than the solver's cells hold"
            ),
            SolveError::Inconsistent(why) => write!(f, "the solved values disagree: {why}"),
        }
    }
}

impl std::error::Error for SolveError {}

/// Threads a solve uses by default: every core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Solves the whole 4 x 4 board under `rules` into a fresh directory
/// `dodgem-<name>-<process id>` in the system's temporary directory, for
/// unit tests that read tables from files; the caller removes it.
#[cfg(test)]
pub(crate) fn solve_4x4_in_temp(name: &str, rules: crate::board::Rules) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dodgem-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let plan = Plan {
        kind: Kind {
            size: 4,
            rules,
            max_cars: 3,
        },
        dir: dir.clone(),
        threads: 2,
        stop_after_layers: None,
        two_bytes: false,
        with_dte: false,
    };
    solve_layers(&plan, &mut |_| {}).expect("4 x 4 solves");
    dir
}

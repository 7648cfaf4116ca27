//! Solved tables in use: directories of layered tables written by
//! `dodgem solve --out DIR`, and the built-in 3 x 3 and 4 x 4 tables,
//! solved in memory by the same solver the first time they are asked for
//! ([`builtin`], well under a second).
//!
//! Every position a table covers has its win, draw or loss for the side
//! to move and the plies to the next progress move of best play (see
//! [`crate::solver::Dtz`]); the built-in tables, and directories to which
//! `dodgem solve --dte` added them, also have the plies to the end of the
//! game of best play ([`Layered::probe_end`]).
//!
//! ```
//! use dodgem::{Position, Rules, solver::Dtz, tablebase};
//! let table = tablebase::builtin(3, Rules::Textbook).unwrap();
//! assert!(matches!(table.probe(&Position::start(3)), Some(Dtz::Win(_))));
//! ```

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::board::{Color, Move, Position, Rules};
use crate::files::shown;
use crate::protocol::escape;
use crate::solver::{self, Dtz, Kind, Metric, Reading, Wdl, WdlReader};

/// Board sizes with a built-in table.
pub const BUILTIN_SIZES: [usize; 2] = [3, 4];

/// Solver threads for a built-in table. One: these boards are too small
/// for the threads' hand-overs to pay, and on a busy 2-core machine one
/// thread built the 4 x 4 tables in about half the time two took (0.18 to
/// 0.24 s against 0.30 to 0.45 s, docs/tables.md), leaving the other core
/// to the search or to the other engine of a match.
const BUILD_THREADS: usize = 1;

/// Layered tables in use: win, draw or loss and the distance to the next
/// progress move of every position of one size and rule with at most a
/// number of cars a side (see [`solver::Tables`]).
pub struct Layered {
    tables: solver::Tables,
}

impl fmt::Debug for Layered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Layered({})", self.describe())
    }
}

impl Layered {
    /// Opens the tables in `dir`: its manifest is read and every layer file
    /// it needs must be there, a regular file with a header of the
    /// manifest's size, rule and car limit and of the right length, and is
    /// kept open (each block is checked against its checksum when read). A
    /// problem with the distances to the end is not fatal: the tables are
    /// used without them and the problem is in [`Layered::take_errors`].
    ///
    /// # Errors
    /// What is wrong, naming the directory or the file.
    pub fn open(dir: &Path) -> Result<Layered, String> {
        match std::fs::metadata(dir) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Err(format!("{}: no such directory", shown(dir)));
            }
            Err(error) => return Err(format!("cannot read {}: {error}", shown(dir))),
            Ok(meta) if !meta.is_dir() => {
                return Err(format!(
                    "{} is not a directory: tables are directories of layer files \
                     written by `dodgem solve --out DIR` (single-file .dtb tables are no \
                     longer read: solve into a directory instead)",
                    shown(dir)
                ));
            }
            Ok(_) => {}
        }
        let tables = solver::Tables::open(dir).map_err(|e| match e {
            solver::LayerError::Io(ref path, ref io)
                if io.kind() == io::ErrorKind::NotFound && path.ends_with(solver::MANIFEST) =>
            {
                format!(
                    "{} holds no dodgem tables (no manifest: a directory must be one \
                 `dodgem solve --out` wrote)",
                    shown(dir)
                )
            }
            e => escape(&e.to_string()),
        })?;
        Ok(Layered { tables })
    }

    /// The whole of `size` x `size` under `rules` solved in memory.
    fn solve_in_memory(size: usize, rules: Rules) -> Layered {
        let kind = Kind {
            size,
            rules,
            max_cars: size as u32 - 1,
        };
        let started = std::time::Instant::now();
        let layers =
            solver::solve_in_memory(kind, BUILD_THREADS).expect("3x3 and 4x4 solve in memory");
        let ends = solver::dte_in_memory(kind, BUILD_THREADS, &layers)
            .expect("3x3 and 4x4 distances to the end derive in memory");
        log::info!(
            "built the {size}x{size} {} table in {:?}",
            rules.name(),
            started.elapsed()
        );
        Layered {
            tables: solver::Tables::from_memory(kind, layers, Some(ends)),
        }
    }

    /// Board size, rule and car limit.
    pub fn kind(&self) -> Kind {
        self.tables.kind()
    }

    /// The directory the tables come from (`None` for a built-in table).
    pub fn dir(&self) -> Option<&Path> {
        self.tables.dir()
    }

    /// What the tables cover and where they come from, for messages:
    /// `5x5 classic layered tables (at most 4 cars a side) from DIR`.
    pub fn describe(&self) -> String {
        let kind = self.kind();
        let from = match self.dir() {
            Some(dir) => format!("from {}", shown(dir)),
            None => "built in".to_string(),
        };
        format!(
            "{n}x{n} {} layered tables (at most {} cars a side) {from}",
            kind.rules.name(),
            kind.max_cars,
            n = kind.size
        )
    }

    /// Whether the tables hold `position` under `rules`: its size and
    /// rule, both sides with a car on the board and at most the limit.
    pub fn covers(&self, position: &Position, rules: Rules) -> bool {
        let kind = self.kind();
        let cars = |color| position.cars(color).count_ones();
        kind.size == position.size()
            && kind.rules == rules
            && (1..=kind.max_cars).contains(&cars(Color::Black))
            && (1..=kind.max_cars).contains(&cars(Color::White))
    }

    /// The stored value of `position` for the side to move; `None` when
    /// the tables do not cover it or its layer cannot be read (see
    /// [`Layered::take_errors`]).
    pub fn probe(&self, position: &Position) -> Option<Dtz> {
        self.tables.probe(position).unwrap_or(None)
    }

    /// Whether the tables know every position's distance to the end of
    /// the game (the built-in tables do; a directory does once
    /// `dodgem solve --dte` has run on it).
    pub fn has_dte(&self) -> bool {
        self.tables.has_dte()
    }

    /// Whether the tables know every position's distance to progress
    /// (all but those made by the one pass, which know the distance to
    /// the end instead; [`Layered::probe`] then gives that).
    pub fn has_dtz(&self) -> bool {
        self.tables.has_dtz()
    }

    /// The value of `position` for the side to move with the plies to the
    /// end of the game under best play (the winner hurrying, the loser
    /// delaying); `None` when the tables do not cover it, do not have the
    /// distances to the end, or its layer cannot be read.
    pub fn probe_end(&self, position: &Position) -> Option<Dtz> {
        self.tables
            .probe_metric(Metric::Dte, position)
            .unwrap_or(None)
    }

    /// [`Layered::probe_end`] for tables held whole in memory (the built-in
    /// ones): `None` for tables read from a directory, whose probes inside
    /// the search read the win/draw/loss alone (one block, cached) rather
    /// than two blocks a probe.
    pub fn probe_end_built_in(&self, position: &Position) -> Option<Dtz> {
        if self.dir().is_some() {
            return None;
        }
        self.probe_end(position)
    }

    /// The value the move `mv` of `position` gives the side to move with
    /// the plies to the end of the game (the last car off: a win in 1);
    /// `None` where [`Layered::probe_end`] has none for the position it
    /// leads to.
    pub fn end_after(&self, position: &Position, mv: Move) -> Option<Dtz> {
        let side = position.side_to_move();
        let child = position.play(mv);
        if child.cars(side) == 0 {
            return Some(Dtz::Win(1));
        }
        Some(self.probe_end(&child)?.through(false))
    }

    /// Every legal move of a covered `position` with the value it gives
    /// the side to move and its plies to the end of the game, best first
    /// (the quickest win, the slowest loss; ties in move-generation
    /// order): `None` when a move's distance to the end cannot be read
    /// (or the tables have none), empty when `position` is not covered.
    pub fn rank_ends(&self, position: &Position) -> Option<Vec<(Move, Dtz)>> {
        let side = position.side_to_move();
        if position.cars(side) == 0 || position.cars(side.other()) == 0 {
            return Some(Vec::new());
        }
        let mut ranked = position
            .legal_moves()
            .as_slice()
            .iter()
            .map(|&mv| Some((mv, self.end_after(position, mv)?)))
            .collect::<Option<Vec<_>>>()?;
        ranked.sort_by_key(|&(_, value)| std::cmp::Reverse(value.preference()));
        Some(ranked)
    }

    /// Win, draw or loss of `position` for probes inside the search: `None`
    /// when not covered or its block cannot be read, or with
    /// [`Reading::Cached`] is not in memory (see
    /// [`solver::Tables::probe_wdl`]).
    pub fn probe_wdl(
        &self,
        reader: &mut WdlReader,
        position: &Position,
        reading: Reading,
    ) -> Option<Wdl> {
        self.tables.probe_wdl(reader, position, reading)
    }

    /// What was found wrong with layers since the last call, each
    /// unusable layer once (the caller says so to the user).
    pub fn take_errors(&self) -> Vec<String> {
        self.tables.take_errors()
    }

    /// Every legal move of a covered `position` with the value it gives
    /// the side to move (as [`Layered::probe`] would say of `position` were
    /// it the best move), best first: a progress move into a position lost
    /// for the opponent (or the last car off) wins at distance 1, a
    /// sideways move into a loss at distance `d` wins at `d + 1`; losses
    /// likewise, the longest first; ties in move-generation order. Empty
    /// when `position` is not covered or a value cannot be read.
    pub fn rank_moves(&self, position: &Position) -> Vec<(Move, Dtz)> {
        self.rank_with(position, |child| self.probe(child))
    }

    /// Ranks the moves of `position` by the values `probe` gives their
    /// positions (empty if it gives none for one).
    fn rank_with(
        &self,
        position: &Position,
        mut probe: impl FnMut(&Position) -> Option<Dtz>,
    ) -> Vec<(Move, Dtz)> {
        let side = position.side_to_move();
        if position.cars(side) == 0 || position.cars(side.other()) == 0 {
            return Vec::new();
        }
        let mut ranked = Vec::new();
        for &mv in position.legal_moves().as_slice() {
            let child = position.play(mv);
            let value = if child.cars(side) == 0 {
                Dtz::Win(1)
            } else {
                match probe(&child) {
                    None => return Vec::new(),
                    Some(value) => value.through(mv.is_irreversible(side)),
                }
            };
            ranked.push((mv, value));
        }
        ranked.sort_by_key(|&(_, value)| std::cmp::Reverse(value.preference()));
        ranked
    }
}

/// The built-in tables, each solved on first use.
static BUILTIN: [OnceLock<Arc<Layered>>; 4] = [const { OnceLock::new() }; 4];

/// Where the built-in table for `size` under `rules` is kept, if `size`
/// has one.
fn builtin_slot(size: usize, rules: Rules) -> Option<&'static OnceLock<Arc<Layered>>> {
    let slot = BUILTIN_SIZES.iter().position(|&s| s == size)? * 2
        + match rules {
            Rules::Textbook => 0,
            Rules::Classic => 1,
        };
    Some(&BUILTIN[slot])
}

/// Whether `size` has built-in tables.
pub fn has_builtin(size: usize) -> bool {
    BUILTIN_SIZES.contains(&size)
}

/// The built-in table for `size` under `rules` if it has been built
/// already (never builds it).
pub fn builtin_if_built(size: usize, rules: Rules) -> Option<Arc<Layered>> {
    builtin_slot(size, rules)?.get().cloned()
}

/// The built-in table for `size` (3 or 4) under `rules`, solved in memory
/// on the first call and kept for the life of the process; `None` for
/// other sizes.
pub fn builtin(size: usize, rules: Rules) -> Option<Arc<Layered>> {
    let table =
        builtin_slot(size, rules)?.get_or_init(|| Arc::new(Layered::solve_in_memory(size, rules)));
    Some(Arc::clone(table))
}

/// The table directories an engine has loaded (`TablebasePath`); the
/// built-in tables come after them.
#[derive(Clone, Debug, Default)]
pub struct Tablebases {
    layered: Vec<Arc<Layered>>,
}

impl Tablebases {
    pub fn new(layered: Vec<Arc<Layered>>) -> Tablebases {
        Tablebases { layered }
    }

    /// The loaded tables that cover `position` under `rules`, if any (the
    /// first loaded of those that do).
    pub fn covering(&self, position: &Position, rules: Rules) -> Option<Arc<Layered>> {
        self.layered
            .iter()
            .find(|t| t.covers(position, rules))
            .cloned()
    }

    /// Every loaded table of `size` under `rules`, the most cars first:
    /// what probes inside a search of that board consult.
    pub fn for_board(&self, size: usize, rules: Rules) -> Vec<Arc<Layered>> {
        let mut found: Vec<Arc<Layered>> = self
            .layered
            .iter()
            .filter(|t| t.kind().size == size && t.kind().rules == rules)
            .cloned()
            .collect();
        found.sort_by_key(|t| std::cmp::Reverse(t.kind().max_cars));
        found
    }

    /// The loaded tables.
    pub fn loaded(&self) -> &[Arc<Layered>] {
        &self.layered
    }
}

/// What loading a `TablebasePath` value gave.
#[derive(Debug, Default)]
pub struct Loaded {
    pub layered: Vec<Arc<Layered>>,
    /// One line per directory read: what it covers and where it came from.
    pub descriptions: Vec<String>,
    /// One message per path that could not be used.
    pub errors: Vec<String>,
}

/// Loads every directory of a `TablebasePath` value (paths separated as
/// in the `PATH` variable).
pub fn load_path_list(list: &str) -> Loaded {
    let mut loaded = Loaded::default();
    for path in std::env::split_paths(list) {
        if path.as_os_str().is_empty() {
            continue;
        }
        match Layered::open(&path) {
            Ok(layered) => {
                loaded.descriptions.push(layered.describe());
                // What was wrong with its distances to the end, if anything.
                loaded.errors.extend(layered.take_errors());
                loaded.layered.push(Arc::new(layered));
            }
            Err(error) => loaded.errors.push(error),
        }
    }
    loaded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoed_paths_are_escaped() {
        let loaded = load_path_list("/no/such\u{1b}[31m\u{7}file");
        assert_eq!(loaded.errors.len(), 1);
        assert!(!loaded.errors[0].contains('\u{1b}'), "{:?}", loaded.errors);
        assert!(
            loaded.errors[0].contains("\\u{1b}[31m\\u{7}"),
            "{:?}",
            loaded.errors
        );
    }

    #[test]
    fn a_file_is_refused_with_a_word_on_directories() {
        let dir = std::env::temp_dir().join(format!("dodgem-tb-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("5x5-classic.dtb");
        std::fs::write(&file, b"DODGEMTB").unwrap();
        let loaded = load_path_list(file.to_str().unwrap());
        assert!(loaded.layered.is_empty());
        assert!(
            loaded.errors[0].contains("is not a directory")
                && loaded.errors[0].contains("dodgem solve --out DIR"),
            "{:?}",
            loaded.errors
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn built_in_tables_rank_moves_as_they_store() {
        for rules in Rules::ALL {
            let table = builtin(3, rules).unwrap();
            let start = Position::start(3);
            let ranked = table.rank_moves(&start);
            assert_eq!(Some(ranked[0].1), table.probe(&start));
            assert_eq!(crate::notation::format_move(Some(ranked[0].0)), "a3b3");
        }
    }
}

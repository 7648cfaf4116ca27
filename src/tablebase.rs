//! Solved tables in use: probing a position, ranking its moves, table
//! files, and the built-in 3 x 3 and 4 x 4 tables.
//!
//! A [`Table`] holds the exact value of every position of one board size
//! under one rule (see [`crate::solver`]). The 3 x 3 and 4 x 4 tables are
//! solved in memory the first time they are asked for ([`builtin`], a few
//! milliseconds); larger ones are solved by `dodgem solve` into a file and
//! loaded with [`Table::load`].
//!
//! ```
//! use dodgem::{Position, Rules, tablebase::{self, Value}};
//! let table = tablebase::builtin(3, Rules::Textbook).unwrap();
//! assert_eq!(table.probe(&Position::start(3)), Some(Value::Win(19)));
//! ```
//!
//! # File format (version 1)
//! All integers little-endian.
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `DODGEMTB` |
//! | 8..12 | format version, 1 |
//! | 12 | board size |
//! | 13 | rules: 0 `textbook`, 1 `classic` |
//! | 14..16 | zero |
//! | 16..24 | number of values: twice the positions per side to move |
//! | 24..28 | CRC-32 of bytes 8..24 and of every value |
//! | 28..32 | zero |
//! | 32.. | one byte per position in solver index order, Black to move first ([`crate::solver::encode`]) |

use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::board::{Color, Move, Outcome, Position, Rules, WinReason};
use crate::protocol::escape;
use crate::solver::{self, Cars, Dtz, Indexer, Solution};

pub use crate::solver::Value;

const MAGIC: &[u8; 8] = b"DODGEMTB";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 32;

/// Positions of a loaded table (of a size without a built-in table)
/// checked against their successors.
const SPOT_CHECKS: u64 = 4096;

/// Board sizes with a built-in table.
pub const BUILTIN_SIZES: [usize; 2] = [3, 4];

/// The value of every position of one board size under one rule.
pub struct Table {
    rules: Rules,
    indexer: Indexer,
    values: Vec<u8>,
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Table({}x{} {})",
            self.size(),
            self.size(),
            self.rules.name()
        )
    }
}

/// Why a table file could not be used.
#[derive(Debug)]
pub enum TableError {
    Io(PathBuf, io::Error),
    /// A FIFO, a device, a directory: anything but a regular file.
    NotAFile(PathBuf),
    NotATable(PathBuf),
    Version(PathBuf, u32),
    BadHeader(PathBuf, String),
    Truncated {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    Checksum(PathBuf),
    /// The checksum holds, but the values do not: `why` names a position.
    Wrong(PathBuf, String),
}

/// A path as it may be echoed: control characters escaped.
fn shown(path: &Path) -> String {
    escape(&path.display().to_string())
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::Io(path, error) => write!(f, "cannot read {}: {error}", shown(path)),
            TableError::NotAFile(path) => write!(
                f,
                "{} is not a regular file (a table must be one)",
                shown(path)
            ),
            TableError::Wrong(path, why) => write!(
                f,
                "{} passes its checksum but holds wrong values: {why}",
                shown(path)
            ),
            TableError::NotATable(path) => {
                write!(f, "{} is not a dodgem table file", shown(path))
            }
            TableError::Version(path, version) => write!(
                f,
                "{} has table format version {version}; this engine reads version {VERSION}",
                shown(path)
            ),
            TableError::BadHeader(path, why) => {
                write!(f, "{} has a bad header: {why}", shown(path))
            }
            TableError::Truncated {
                path,
                expected,
                found,
            } => write!(
                f,
                "{} is truncated or padded: {found} bytes of values, expected {expected}",
                shown(path)
            ),
            TableError::Checksum(path) => write!(
                f,
                "{} fails its checksum (the file is damaged)",
                shown(path)
            ),
        }
    }
}

impl std::error::Error for TableError {}

impl From<Solution> for Table {
    fn from(solution: Solution) -> Table {
        Table {
            rules: solution.rules,
            indexer: solution.indexer,
            values: solution.values,
        }
    }
}

impl Table {
    pub fn size(&self) -> usize {
        self.indexer.size()
    }

    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// Number of positions with a stored value (both sides to move).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always false: every table holds its whole board size.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The stored byte values, in index order (Black to move first).
    pub fn values(&self) -> &[u8] {
        &self.values
    }

    pub fn indexer(&self) -> &Indexer {
        &self.indexer
    }

    /// The value of `position` for its side to move under this table's
    /// rule, ignoring repetitions in the game so far; `None` when the board
    /// size is not this table's. A finished game (a side with every car
    /// off) is lost in 0 plies for the side to move.
    pub fn probe(&self, position: &Position) -> Option<Value> {
        if position.size() != self.size() {
            return None;
        }
        let side = position.side_to_move();
        if position.cars(side.other()) == 0 {
            return Some(Value::Loss(0));
        }
        if position.cars(side) == 0 {
            return Some(Value::Win(0));
        }
        let (black, white) = self.indexer.masks(position)?;
        Some(self.value(Cars { black, white }, side))
    }

    fn value(&self, cars: Cars, side: Color) -> Value {
        solver::decode(self.values[self.indexer.slot(cars.black, cars.white, side) as usize])
    }

    /// Every legal move of `position` with its value for the side to move,
    /// best first (fastest wins, then draws, then slowest losses; ties in
    /// move-generation order). Empty for another board size or a finished
    /// game.
    pub fn rank_moves(&self, position: &Position) -> Vec<(Move, Value)> {
        if position.size() != self.size()
            || position.cars(Color::Black) == 0
            || position.cars(Color::White) == 0
        {
            return Vec::new();
        }
        let mut ranked: Vec<(Move, Value)> = position
            .legal_moves()
            .as_slice()
            .iter()
            .filter_map(|&mv| Some((mv, self.probe(&position.play(mv))?.previous())))
            .collect();
        ranked.sort_by_key(|&(_, value)| std::cmp::Reverse(value.preference()));
        ranked
    }

    /// Writes the table in the file format above.
    ///
    /// # Errors
    /// Any write error.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let fields = self.header_fields();
        let mut crc = crc32fast::Hasher::new();
        crc.update(&fields);
        crc.update(&self.values);
        out.write_all(MAGIC)?;
        out.write_all(&fields)?;
        out.write_all(&crc.finalize().to_le_bytes())?;
        out.write_all(&[0; 4])?;
        out.write_all(&self.values)
    }

    /// Bytes 8..24 of the header.
    fn header_fields(&self) -> [u8; 16] {
        let mut fields = [0u8; 16];
        fields[0..4].copy_from_slice(&VERSION.to_le_bytes());
        fields[4] = self.size() as u8;
        fields[5] = match self.rules {
            Rules::Textbook => 0,
            Rules::Classic => 1,
        };
        fields[8..16].copy_from_slice(&(self.values.len() as u64).to_le_bytes());
        fields
    }

    /// Writes the table to a file at `path`.
    ///
    /// # Errors
    /// Any error creating or writing the file.
    pub fn save(&self, path: &Path) -> io::Result<()> {
        let mut out = io::BufWriter::new(std::fs::File::create(path)?);
        self.write_to(&mut out)?;
        out.flush()
    }

    /// Reads a table file, checking its header, length and checksum.
    ///
    /// # Errors
    /// A [`TableError`] naming the file and what is wrong with it.
    pub fn load(path: &Path) -> Result<Table, TableError> {
        let io_error = |e| TableError::Io(path.to_path_buf(), e);
        let file = open_regular(path).map_err(io_error)?;
        let Some(mut file) = file else {
            return Err(TableError::NotAFile(path.to_path_buf()));
        };
        let mut header = [0u8; HEADER_LEN];
        let mut got = 0;
        while got < HEADER_LEN {
            match file.read(&mut header[got..]).map_err(io_error)? {
                0 => return Err(TableError::NotATable(path.to_path_buf())),
                n => got += n,
            }
        }
        if &header[0..8] != MAGIC {
            return Err(TableError::NotATable(path.to_path_buf()));
        }
        let u32_at = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().unwrap());
        let version = u32_at(8);
        if version != VERSION {
            return Err(TableError::Version(path.to_path_buf(), version));
        }
        let bad = |why: String| TableError::BadHeader(path.to_path_buf(), why);
        let size = usize::from(header[12]);
        let indexer = Indexer::new(size).ok_or_else(|| bad(format!("board size {size}")))?;
        let rules = match header[13] {
            0 => Rules::Textbook,
            1 => Rules::Classic,
            other => return Err(bad(format!("rules code {other}"))),
        };
        let count = u64::from_le_bytes(header[16..24].try_into().unwrap());
        let expected = 2 * indexer.len();
        if count != expected {
            return Err(bad(format!(
                "{count} values, but a {size}x{size} table has {expected}"
            )));
        }
        let mut values = Vec::new();
        values
            .try_reserve_exact(expected as usize + 1)
            .map_err(|e| io_error(io::Error::new(io::ErrorKind::OutOfMemory, e)))?;
        // Read one byte more than expected to notice trailing garbage.
        let found = file
            .take(expected + 1)
            .read_to_end(&mut values)
            .map_err(io_error)? as u64;
        if found != expected {
            return Err(TableError::Truncated {
                path: path.to_path_buf(),
                expected,
                found,
            });
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(&header[8..24]);
        crc.update(&values);
        if crc.finalize() != u32_at(24) {
            return Err(TableError::Checksum(path.to_path_buf()));
        }
        let table = Table {
            rules,
            indexer,
            values,
        };
        table
            .check()
            .map_err(|why| TableError::Wrong(path.to_path_buf(), why))?;
        Ok(table)
    }

    /// Checks the values against what can be checked: equal to the
    /// built-in table for 3 x 3 and 4 x 4; for other sizes, a spread
    /// sample of positions whose values must follow from their
    /// successors' (a checksum only proves the file is what was written).
    ///
    /// # Errors
    /// What is wrong, naming a position.
    pub fn check(&self) -> Result<(), String> {
        if let Some(builtin) = builtin(self.size(), self.rules) {
            return match self
                .values
                .iter()
                .zip(builtin.values())
                .position(|(a, b)| a != b)
            {
                None => Ok(()),
                Some(slot) => Err(self.describe_slot(slot as u64, builtin.values[slot])),
            };
        }
        self.spot_check()
    }

    /// Checks a spread sample of values against their successors'.
    fn spot_check(&self) -> Result<(), String> {
        let len = self.values.len() as u64;
        let step = (len / SPOT_CHECKS).max(1);
        // An odd offset per sample, so samples do not all fall at the
        // start of a class.
        for (n, at) in (0..len).step_by(step as usize).enumerate() {
            let slot = (at + (n as u64).wrapping_mul(0x9e37_79b9) % step).min(len - 1);
            let position = self.position_at(slot);
            let expected = self.value_by_successors(&position);
            if self.probe(&position) != Some(expected) {
                return Err(self.describe_slot(slot, solver::encode(expected)));
            }
        }
        Ok(())
    }

    /// The position stored at `slot`.
    fn position_at(&self, slot: u64) -> Position {
        let len = self.indexer.len();
        let side = if slot < len {
            Color::Black
        } else {
            Color::White
        };
        let (black, white) = self.indexer.position(slot % len);
        self.indexer.to_position(black, white, side)
    }

    /// The value `position` must have given its successors' values (a
    /// blocked side wins or loses by the table's rule).
    fn value_by_successors(&self, position: &Position) -> Value {
        match self.rank_moves(position).first() {
            Some(&(_, value)) => value,
            None => match position.outcome(self.rules) {
                Some(Outcome::Win(winner, WinReason::Blocked(_)))
                    if winner == position.side_to_move() =>
                {
                    Value::Win(0)
                }
                _ => Value::Loss(0),
            },
        }
    }

    /// Says what is wrong with the value at `slot`, `expected` encoded.
    fn describe_slot(&self, slot: u64, expected: u8) -> String {
        format!(
            "{} is {:?}, should be {:?}",
            crate::notation::format_position(&self.position_at(slot)),
            solver::decode(self.values[slot as usize]),
            solver::decode(expected)
        )
    }
}

/// Opens `path` for reading if it is a regular file (`None` if not),
/// without ever blocking on a FIFO or a device: the name is checked first,
/// the file opened non-blocking, and what was opened checked again.
fn open_regular(path: &Path) -> io::Result<Option<std::fs::File>> {
    if !std::fs::metadata(path)?.is_file() {
        return Ok(None);
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    // The name may have been replaced between the two looks.
    Ok(file.metadata()?.is_file().then_some(file))
}

/// The built-in tables, each solved on first use.
static BUILTIN: [OnceLock<Arc<Table>>; 4] = [const { OnceLock::new() }; 4];

/// Where the built-in table for `size` under `rules` is kept, if `size`
/// has one.
fn builtin_slot(size: usize, rules: Rules) -> Option<&'static OnceLock<Arc<Table>>> {
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
pub fn builtin_if_built(size: usize, rules: Rules) -> Option<Arc<Table>> {
    builtin_slot(size, rules)?.get().cloned()
}

/// The built-in table for `size` (3 or 4) under `rules`, solved on the
/// first call and kept for the life of the process; `None` for other sizes.
pub fn builtin(size: usize, rules: Rules) -> Option<Arc<Table>> {
    let table = builtin_slot(size, rules)?.get_or_init(|| {
        let started = std::time::Instant::now();
        let solution = solver::solve(size, rules, solver::default_threads(), &|_| {})
            .expect("3x3 and 4x4 solve within the table format");
        log::info!(
            "built the {size}x{size} {} table in {:?}",
            rules.name(),
            started.elapsed()
        );
        Arc::new(Table::from(solution))
    });
    Some(Arc::clone(table))
}

/// A directory of layered tables (written by `dodgem solve --out DIR`) in
/// use: win, draw or loss and the distance to the next progress move of
/// every position of one size and rule with at most a number of cars a
/// side (see [`solver::Tables`]).
pub struct Layered {
    tables: solver::Tables,
}

impl fmt::Debug for Layered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind();
        write!(
            f,
            "Layered({n}x{n} {} max-cars {} in {})",
            kind.rules.name(),
            kind.max_cars,
            self.tables.dir().display(),
            n = kind.size
        )
    }
}

impl Layered {
    /// Opens the tables in `dir`: its manifest is read and every layer file
    /// it needs must be there, with a header of the manifest's size, rule
    /// and car limit and of the right length (values are checked against
    /// their checksum when a layer is first probed).
    ///
    /// # Errors
    /// What is wrong, naming the directory or the file.
    pub fn open(dir: &Path) -> Result<Layered, String> {
        // Every file is looked at before it is opened: a FIFO or a device
        // in its place must not block the loader.
        let not_a_file = |path: &Path| {
            std::fs::metadata(path)
                .is_ok_and(|m| !m.is_file())
                .then(|| TableError::NotAFile(path.to_path_buf()).to_string())
        };
        if let Some(error) = not_a_file(&dir.join(solver::MANIFEST)) {
            return Err(error);
        }
        let tables = solver::Tables::open(dir).map_err(|e| match e {
            solver::LayerError::Io(_, ref io) if io.kind() == io::ErrorKind::NotFound => format!(
                "{} holds no dodgem tables (no manifest: a directory must be one \
                 `dodgem solve --out` wrote)",
                shown(dir)
            ),
            e => escape(&e.to_string()),
        })?;
        let (kind, shape) = (tables.kind(), tables.shape());
        for (a, b) in shape.pairs() {
            for (black, white) in [(a, b), (b, a)] {
                let layer = shape.layer(black, white);
                if let Some(error) = not_a_file(&solver::layer_path(dir, black, white)) {
                    return Err(error);
                }
                if solver::read_header(dir, kind, &layer)
                    .map_err(|e| escape(&e.to_string()))?
                    .is_none()
                {
                    return Err(format!(
                        "{} is incomplete: {} is missing (is the solve finished?)",
                        shown(dir),
                        shown(&solver::layer_path(dir, black, white))
                    ));
                }
            }
        }
        Ok(Layered { tables })
    }

    /// Board size, rule and car limit.
    pub fn kind(&self) -> solver::Kind {
        self.tables.kind()
    }

    pub fn dir(&self) -> &Path {
        self.tables.dir()
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
    /// the tables do not cover it or its layer file cannot be read (logged).
    pub fn probe(&self, position: &Position) -> Option<Dtz> {
        match self.tables.probe(position) {
            Ok(value) => value,
            Err(error) => {
                log::error!("probing {self:?}: {error}");
                None
            }
        }
    }

    /// Every legal move of a covered `position` with the value it gives
    /// the side to move (as [`Layered::probe`] would say of `position` were
    /// it the best move), best first: a progress move into a position lost
    /// for the opponent (or the last car off) wins at distance 1, a
    /// sideways move into a loss at distance `d` wins at `d + 1`; losses
    /// likewise, the longest first; ties in move-generation order. Empty
    /// when `position` is not covered or a value cannot be read.
    pub fn rank_moves(&self, position: &Position) -> Vec<(Move, Dtz)> {
        let side = position.side_to_move();
        if position.cars(side) == 0 || position.cars(side.other()) == 0 {
            return Vec::new();
        }
        let mut ranked = Vec::new();
        for &mv in position.legal_moves().as_slice() {
            let child = position.play(mv);
            let progress = mv.is_irreversible(side);
            let value = if child.cars(side) == 0 {
                Dtz::Win(1)
            } else {
                match self.probe(&child) {
                    None => return Vec::new(),
                    Some(Dtz::Draw) => Dtz::Draw,
                    Some(Dtz::Loss(_)) if progress => Dtz::Win(1),
                    Some(Dtz::Loss(d)) => Dtz::Win(d + 1),
                    Some(Dtz::Win(_)) if progress => Dtz::Loss(1),
                    Some(Dtz::Win(d)) => Dtz::Loss(d + 1),
                }
            };
            ranked.push((mv, value));
        }
        ranked.sort_by_key(|&(_, value)| std::cmp::Reverse(dtz_preference(value)));
        ranked
    }
}

/// Orders layered values from the side to move's view: larger is better
/// (nearer wins, then draws, then farther losses).
pub fn dtz_preference(value: Dtz) -> i64 {
    Value::from(value).preference()
}

impl From<Dtz> for Value {
    /// The same result with the distance to progress in place of the
    /// distance to the end (for ordering; not a distance to the end).
    fn from(value: Dtz) -> Value {
        match value {
            Dtz::Win(d) => Value::Win(d),
            Dtz::Draw => Value::Draw,
            Dtz::Loss(d) => Value::Loss(d),
        }
    }
}

/// The tables an engine may consult: files it loaded, directories of
/// layered tables it loaded, then the built-in sizes.
#[derive(Clone, Debug, Default)]
pub struct Tablebases {
    loaded: Vec<Arc<Table>>,
    layered: Vec<Arc<Layered>>,
}

impl Tablebases {
    pub fn new(loaded: Vec<Arc<Table>>, layered: Vec<Arc<Layered>>) -> Tablebases {
        Tablebases { loaded, layered }
    }

    /// The layered tables that cover `position` under `rules`, if any
    /// (the first loaded of those that do).
    pub fn layered_for(&self, position: &Position, rules: Rules) -> Option<Arc<Layered>> {
        self.layered
            .iter()
            .find(|t| t.covers(position, rules))
            .cloned()
    }

    /// Tables loaded from files.
    pub fn loaded(&self) -> &[Arc<Table>] {
        &self.loaded
    }

    /// The table loaded from a file for `size` under `rules`, if any.
    pub fn loaded_for(&self, size: usize, rules: Rules) -> Option<Arc<Table>> {
        self.loaded
            .iter()
            .find(|t| t.size() == size && t.rules() == rules)
            .cloned()
    }

    /// The table for `size` under `rules`, if any (building a built-in one
    /// on first use).
    pub fn find(&self, size: usize, rules: Rules) -> Option<Arc<Table>> {
        self.loaded_for(size, rules)
            .or_else(|| builtin(size, rules))
    }
}

/// What loading a `TablebasePath` value gave.
#[derive(Debug, Default)]
pub struct Loaded {
    pub tables: Vec<Arc<Table>>,
    pub layered: Vec<Arc<Layered>>,
    /// One line per table read: what it covers and where it came from.
    pub descriptions: Vec<String>,
    /// One message per file that could not be used.
    pub errors: Vec<String>,
}

/// Loads every file and directory of a `TablebasePath` value (paths
/// separated as in the `PATH` variable): a file holds a dense table, a
/// directory layered tables.
pub fn load_path_list(list: &str) -> Loaded {
    let mut loaded = Loaded::default();
    for path in std::env::split_paths(list) {
        if path.as_os_str().is_empty() {
            continue;
        }
        if path.is_dir() {
            match Layered::open(&path) {
                Ok(layered) => {
                    let kind = layered.kind();
                    loaded.descriptions.push(format!(
                        "{n}x{n} {} layered tables (at most {} cars a side) from {}",
                        kind.rules.name(),
                        kind.max_cars,
                        shown(&path),
                        n = kind.size
                    ));
                    loaded.layered.push(Arc::new(layered));
                }
                Err(error) => loaded.errors.push(error),
            }
            continue;
        }
        match Table::load(&path) {
            Ok(table) => {
                let n = table.size();
                loaded.descriptions.push(format!(
                    "{n}x{n} {} table ({} positions) from {}",
                    table.rules().name(),
                    table.len(),
                    shown(&path)
                ));
                loaded.tables.push(Arc::new(table));
            }
            Err(error) => loaded.errors.push(error.to_string()),
        }
    }
    loaded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_round_trip_and_damage() {
        let table = builtin(3, Rules::Classic).unwrap();
        let mut bytes = Vec::new();
        table.write_to(&mut bytes).unwrap();
        assert_eq!(bytes.len(), HEADER_LEN + table.len());
        let dir = std::env::temp_dir().join(format!("dodgem-tb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.dtb");

        std::fs::write(&path, &bytes).unwrap();
        let loaded = Table::load(&path).unwrap();
        assert_eq!(loaded.values, table.values);
        assert_eq!(loaded.rules(), Rules::Classic);

        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(matches!(
            Table::load(&path),
            Err(TableError::Truncated { .. })
        ));

        let mut damaged = bytes.clone();
        damaged[HEADER_LEN + 7] ^= 1;
        std::fs::write(&path, &damaged).unwrap();
        assert!(matches!(Table::load(&path), Err(TableError::Checksum(_))));

        // A checksum that passes does not make wrong values right.
        let mut wrong = Table::from(solver::solve(3, Rules::Classic, 1, &|_| {}).unwrap());
        wrong.values[5] = solver::encode(Value::Win(1));
        let mut relabelled = Vec::new();
        wrong.write_to(&mut relabelled).unwrap();
        std::fs::write(&path, &relabelled).unwrap();
        let error = Table::load(&path).unwrap_err();
        assert!(matches!(error, TableError::Wrong(..)), "{error}");

        std::fs::write(&path, b"hello").unwrap();
        assert!(matches!(Table::load(&path), Err(TableError::NotATable(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn spot_checks_pass_sound_tables_and_catch_damaged_ones() {
        for size in BUILTIN_SIZES {
            for rules in Rules::ALL {
                let table = builtin(size, rules).unwrap();
                assert_eq!(table.spot_check(), Ok(()), "{table:?}");
                // The textbook table relabelled: its blocked positions
                // and what follows from them are wrong under the other
                // rule.
                let other = Table {
                    rules: match rules {
                        Rules::Textbook => Rules::Classic,
                        Rules::Classic => Rules::Textbook,
                    },
                    indexer: table.indexer.clone(),
                    values: table.values.clone(),
                };
                assert!(other.check().is_err(), "{table:?} relabelled");
            }
        }
        let mut cycling = Table::from(solver::solve(3, Rules::Textbook, 1, &|_| {}).unwrap());
        cycling.values.fill(solver::encode(Value::Win(1)));
        assert!(cycling.spot_check().is_err());
        assert!(cycling.check().is_err());
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_opened() {
        let dir = std::env::temp_dir().join(format!("dodgem-tb-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|status| status.success()) {
            assert!(matches!(Table::load(&fifo), Err(TableError::NotAFile(_))));
        }
        for path in [Path::new("/dev/null"), &dir] {
            let error = Table::load(path).unwrap_err();
            assert!(matches!(error, TableError::NotAFile(_)), "{error}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
}

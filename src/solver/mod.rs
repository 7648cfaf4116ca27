//! Retrograde analysis: the exact value of every position of one board
//! size under one rule.
//!
//! Every position in which both sides still have a car on the board gets a
//! slot in a dense index ([`Indexer`]), for each side to move. The solve
//! runs in two phases, both spread over all cores:
//!
//! 1. **Seed.** For each position count the legal moves. A blocked side to
//!    move is decided at once (lost in 0 plies under `textbook`, won in 0
//!    under `classic`), and so is a side that can take its last car off
//!    (won in 1). The rest keep their move count.
//! 2. **Retreat.** Level by level (plies 0, 1, 2, ...), each position
//!    decided at the current level walks its predecessors by un-moves. A
//!    predecessor with a lost successor is won one ply later; a
//!    predecessor's count drops for each won successor, and when it reaches
//!    zero every move wins for the opponent, so it is lost one ply later
//!    than its longest such successor, which is the current one because
//!    levels go in order. The winner therefore hurries and the loser
//!    delays.
//!
//! Whatever is still undecided when no level has anything left is a draw:
//! neither side can force an end, so best play cycles forever.
//!
//! Each slot is an atomic `u16` holding either the remaining move count or
//! the decided value, so both threads update predecessors with a
//! compare-and-swap and the result does not depend on thread timing.

pub mod cli;
mod index;
mod layered;
mod layers;
mod moves;
mod reach;
mod report;
mod retro;
mod store;

use std::ops::Range;
use std::sync::atomic::{AtomicU16, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

pub use index::{Class, Indexer, MAX_SOLVABLE_SIZE, Row};
pub use layered::{
    LayeredError, Outcome, PairDone, Plan, Verified, compare_with_dense, solve as solve_layers,
    verify,
};
pub use layers::{Block, Child, Layer, Shape};
pub use moves::{Cars, Geometry};
pub use reach::{Reachable, reachable};
pub use report::{Counts, Report, describe, report};
pub use store::{
    Dtz, Header, Kind, LayerError, MANIFEST, Tables, Tally, Values, Wdl, layer_path, read_header,
    read_layer, write_layer,
};

use crate::board::{Color, Rules};

/// A solved slot: bit 15 set, bit 14 set for a win, plies below.
const DECIDED: u16 = 0x8000;
const WIN: u16 = 0x4000;
const PLIES: u16 = 0x3fff;

/// The value of a position for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// The side to move wins; the game ends after this many plies of best
    /// play (the winner hurrying, the loser delaying).
    Win(u32),
    /// The side to move loses after this many plies of best play.
    Loss(u32),
    /// Neither side can force the game to end.
    Draw,
}

impl Value {
    /// The value of a position one ply earlier, seen by the other side.
    pub fn previous(self) -> Value {
        match self {
            Value::Win(plies) => Value::Loss(plies + 1),
            Value::Loss(plies) => Value::Win(plies + 1),
            Value::Draw => Value::Draw,
        }
    }

    /// Whether `self` is better than `other` for the side to move:
    /// faster wins, then draws, then slower losses.
    pub fn is_better_than(self, other: Value) -> bool {
        self.preference() > other.preference()
    }

    /// Orders values from the side to move's view: larger is better.
    pub(crate) fn preference(self) -> i64 {
        match self {
            Value::Win(plies) => i64::from(u32::MAX) - i64::from(plies),
            Value::Draw => 0,
            Value::Loss(plies) => i64::from(plies) - i64::from(u32::MAX),
        }
    }
}

/// Where a solve has got to, for progress displays.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// Move counting: `done` of `total` positions seen.
    Seed { done: u64, total: u64 },
    /// The retreat has finished level `plies`; `decided` positions so far.
    Level {
        plies: u32,
        decided: u64,
        total: u64,
    },
}

/// The values of every position of one board size under one rule, one
/// byte each (see [`encode`]), in index order: all positions with Black to
/// move, then all with White to move.
pub struct Solution {
    pub indexer: Indexer,
    pub rules: Rules,
    pub values: Vec<u8>,
}

/// Why a solve could not be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SolveError {
    /// The board size has no solver index (above [`MAX_SOLVABLE_SIZE`]).
    Size(usize),
    /// A decided position needs more plies than one byte can record.
    TooDeep(u32),
}

impl std::fmt::Display for SolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SolveError::Size(size) => write!(
                f,
                "board size {size} cannot be solved (sizes 3..{MAX_SOLVABLE_SIZE})"
            ),
            SolveError::TooDeep(plies) => write!(
                f,
                "a position lasts {plies} plies, more than the table format records ({MAX_ENCODED_PLIES})"
            ),
        }
    }
}

impl std::error::Error for SolveError {}

/// Threads a solve uses by default: every core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Longest game the one-byte encoding holds.
pub const MAX_ENCODED_PLIES: u32 = 126;

/// One byte per value: 0 a draw, `2p + 1` a win in `p` plies, `2p + 2` a
/// loss in `p` plies.
pub fn encode(value: Value) -> u8 {
    match value {
        Value::Draw => 0,
        Value::Win(plies) => (2 * plies + 1) as u8,
        Value::Loss(plies) => (2 * plies + 2) as u8,
    }
}

/// Inverse of [`encode`].
pub fn decode(byte: u8) -> Value {
    match byte {
        0 => Value::Draw,
        b if b % 2 == 1 => Value::Win(u32::from(b / 2)),
        b => Value::Loss(u32::from(b / 2 - 1)),
    }
}

impl Solution {
    /// Value of the position with these dense masks and side to move.
    pub fn value(&self, cars: Cars, side: Color) -> Value {
        decode(self.values[self.slot(cars, side)])
    }

    fn slot(&self, cars: Cars, side: Color) -> usize {
        self.indexer.slot(cars.black, cars.white, side) as usize
    }
}

/// A frontier entry: both masks and the side to move, packed.
#[derive(Clone, Copy)]
struct Entry(u64);

impl Entry {
    fn new(cars: Cars, side: Color) -> Entry {
        Entry(u64::from(cars.black) | u64::from(cars.white) << 32 | (side.index() as u64) << 63)
    }

    fn cars(self) -> Cars {
        Cars {
            black: self.0 as u32,
            white: (self.0 >> 32) as u32 & 0x7fff_ffff,
        }
    }

    fn side(self) -> Color {
        if self.0 >> 63 == 0 {
            Color::Black
        } else {
            Color::White
        }
    }
}

/// Positions per unit of work handed to a thread.
const UNIT: u64 = 1 << 15;

/// A level holding more than one slot in this many is found by scanning
/// the table instead of walking its list.
const SCAN_RATIO: u64 = 256;

/// Solves every position of `size` x `size` Dodgem under `rules`, on
/// `threads` threads, reporting progress to `progress` (from any thread).
///
/// # Errors
/// [`SolveError::Size`] above [`MAX_SOLVABLE_SIZE`]; [`SolveError::TooDeep`]
/// if some position lasts longer than the one-byte format records.
pub fn solve(
    size: usize,
    rules: Rules,
    threads: usize,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Solution, SolveError> {
    let indexer = Indexer::new(size).ok_or(SolveError::Size(size))?;
    let solver = Solver {
        geometry: Geometry::new(size),
        max_cars: size as u32 - 1,
        slots: (0..2 * indexer.len()).map(|_| AtomicU16::new(0)).collect(),
        indexer,
        rules,
        threads: threads.max(1),
    };
    let started = Instant::now();
    let (mut current, mut decided_in_one) = solver.seed(progress);
    log::info!("seeded in {:?}", started.elapsed());
    let mut decided = (current.len() + decided_in_one.len()) as u64;
    let mut plies = 0;
    while !current.is_empty() || plies == 0 {
        let level_started = Instant::now();
        let mut found = solver.retreat(&current, plies);
        log::debug!(
            "ply {plies}: {} positions decided {} more in {:?}",
            current.len(),
            found.len(),
            level_started.elapsed()
        );
        decided += found.len() as u64;
        found.append(&mut decided_in_one);
        current = found;
        progress(Progress::Level {
            plies,
            decided,
            total: 2 * solver.indexer.len(),
        });
        plies += 1;
    }
    log::info!("solved in {:?}", started.elapsed());
    solver.finish()
}

struct Solver {
    indexer: Indexer,
    geometry: Geometry,
    rules: Rules,
    max_cars: u32,
    slots: Vec<AtomicU16>,
    threads: usize,
}

impl Solver {
    fn slot(&self, cars: Cars, side: Color) -> &AtomicU16 {
        &self.slots[self.indexer.slot(cars.black, cars.white, side) as usize]
    }

    /// Phase 1: move counts and the positions decided without looking
    /// ahead. Returns those decided in 0 plies and in 1 ply.
    fn seed(&self, progress: &(dyn Fn(Progress) + Sync)) -> (Vec<Entry>, Vec<Entry>) {
        let units = row_units(&self.indexer);
        let done = AtomicU64::new(0);
        let total = 2 * self.indexer.len();
        let decided = parallel(self.threads, units.len(), |unit, out| {
            let (side, class, ref black_ranks) = units[unit];
            for black_rank in black_ranks.clone() {
                let row_start = self.indexer.row_start(side, &class, black_rank);
                let mut row = Row::new(&self.indexer, &class, black_rank);
                for rank in 0..class.white_sets {
                    let cars = Cars {
                        black: row.black(),
                        white: row.white(rank),
                    };
                    let summary = self.geometry.summary(cars, side);
                    let state = if summary.count == 0 {
                        out.push((0, Entry::new(cars, side)));
                        match self.rules {
                            Rules::Textbook => DECIDED,
                            Rules::Classic => DECIDED | WIN,
                        }
                    } else if summary.wins_at_once {
                        out.push((1, Entry::new(cars, side)));
                        DECIDED | WIN | 1
                    } else {
                        summary.count as u16
                    };
                    self.slots[(row_start + rank) as usize].store(state, Ordering::Relaxed);
                }
            }
            let count = (black_ranks.end - black_ranks.start) * class.white_sets;
            let done = done.fetch_add(count, Ordering::Relaxed) + count;
            progress(Progress::Seed { done, total });
        });
        let (zero, one): (Vec<_>, Vec<_>) = decided.into_iter().partition(|(plies, _)| *plies == 0);
        (
            zero.into_iter().map(|(_, e)| e).collect(),
            one.into_iter().map(|(_, e)| e).collect(),
        )
    }

    /// Phase 2, one level: decides, in `plies + 1` plies, the predecessors
    /// of `frontier` (everything decided in `plies` plies) that it can, and
    /// returns them.
    ///
    /// A large level is found by scanning the table in index order rather
    /// than by walking the list: neighbouring positions then have
    /// neighbouring predecessors, so the updates stay in cache.
    fn retreat(&self, frontier: &[Entry], plies: u32) -> Vec<Entry> {
        if frontier.len() as u64 * SCAN_RATIO > 2 * self.indexer.len() {
            return self.retreat_by_scan(plies);
        }
        const CHUNK: usize = 1 << 12;
        let units = frontier.len().div_ceil(CHUNK);
        parallel(self.threads, units, |unit, out| {
            let end = ((unit + 1) * CHUNK).min(frontier.len());
            for &entry in &frontier[unit * CHUNK..end] {
                let (cars, side) = (entry.cars(), entry.side());
                let child_won = self.slot(cars, side).load(Ordering::Relaxed) & WIN != 0;
                self.settle_predecessors(cars, side, child_won, plies, out);
            }
        })
    }

    /// [`Solver::retreat`] for a large level: scans every slot for the
    /// values decided in `plies` plies.
    fn retreat_by_scan(&self, plies: u32) -> Vec<Entry> {
        let units = row_units(&self.indexer);
        let won = DECIDED | WIN | plies as u16;
        let lost = DECIDED | plies as u16;
        parallel(self.threads, units.len(), |unit, out| {
            let (side, class, ref black_ranks) = units[unit];
            for black_rank in black_ranks.clone() {
                let row_start = self.indexer.row_start(side, &class, black_rank) as usize;
                let slots = &self.slots[row_start..row_start + class.white_sets as usize];
                let mut row = Row::new(&self.indexer, &class, black_rank);
                for (rank, slot) in slots.iter().enumerate() {
                    let state = slot.load(Ordering::Relaxed);
                    if state != won && state != lost {
                        continue;
                    }
                    let cars = Cars {
                        black: row.black(),
                        white: row.white(rank as u64),
                    };
                    self.settle_predecessors(cars, side, state == won, plies, out);
                }
            }
        })
    }

    /// The retreat step for one position decided in `plies` plies (won for
    /// its side to move when `child_won`): updates each predecessor and
    /// pushes those it decides.
    fn settle_predecessors(
        &self,
        cars: Cars,
        side: Color,
        child_won: bool,
        plies: u32,
        out: &mut Vec<Entry>,
    ) {
        let won = DECIDED | WIN | (plies + 1) as u16;
        let lost = DECIDED | (plies + 1) as u16;
        let mover = side.other();
        self.geometry
            .predecessors(cars, mover, self.max_cars, |parent| {
                let slot = self.slot(parent, mover);
                let mut state = slot.load(Ordering::Relaxed);
                loop {
                    if state & DECIDED != 0 {
                        return;
                    }
                    let new = if !child_won {
                        won
                    } else if state == 1 {
                        lost
                    } else {
                        state - 1
                    };
                    match slot.compare_exchange_weak(
                        state,
                        new,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => {
                            if new & DECIDED != 0 {
                                out.push(Entry::new(parent, mover));
                            }
                            return;
                        }
                        Err(actual) => state = actual,
                    }
                }
            });
    }

    /// The one-byte table.
    fn finish(self) -> Result<Solution, SolveError> {
        let mut deepest = 0;
        let values = self
            .slots
            .into_iter()
            .map(|slot| {
                let state = slot.into_inner();
                if state & DECIDED == 0 {
                    return 0;
                }
                let plies = u32::from(state & PLIES);
                deepest = deepest.max(plies);
                if state & WIN != 0 {
                    encode(Value::Win(plies.min(MAX_ENCODED_PLIES)))
                } else {
                    encode(Value::Loss(plies.min(MAX_ENCODED_PLIES)))
                }
            })
            .collect();
        if deepest > MAX_ENCODED_PLIES {
            return Err(SolveError::TooDeep(deepest));
        }
        Ok(Solution {
            indexer: self.indexer,
            rules: self.rules,
            values,
        })
    }
}

/// Runs `work(unit)` for units `0..units` on all threads; each thread
/// gathers what `work` pushes, and the results are concatenated.
fn parallel<T: Send>(
    threads: usize,
    units: usize,
    work: impl Fn(usize, &mut Vec<T>) + Sync,
) -> Vec<T> {
    let next_unit = AtomicUsize::new(0);
    let mut gathered = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let unit = next_unit.fetch_add(1, Ordering::Relaxed);
                        if unit >= units {
                            break out;
                        }
                        work(unit, &mut out);
                    }
                })
            })
            .collect();
        for handle in handles {
            gathered.extend(handle.join().expect("solver thread panicked"));
        }
    });
    gathered
}

/// Units of work over the whole table: a run of black sets (rows of
/// white sets) inside one class, for one side to move, in index order.
fn row_units(indexer: &Indexer) -> Vec<(Color, Class, Range<u64>)> {
    let mut units = Vec::new();
    for side in [Color::Black, Color::White] {
        for class in indexer.classes() {
            let step = (UNIT / class.white_sets).max(1);
            let mut first = 0;
            while first < class.black_sets {
                let last = (first + step).min(class.black_sets);
                units.push((side, *class, first..last));
                first = last;
            }
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Position;

    fn start_value(size: usize, rules: Rules) -> Value {
        let solution = solve(size, rules, 2, &|_| {}).unwrap();
        let (black, white) = solution.indexer.masks(&Position::start(size)).unwrap();
        solution.value(Cars { black, white }, Color::Black)
    }

    #[test]
    fn three_by_three_start_is_a_win_in_19() {
        assert_eq!(start_value(3, Rules::Textbook), Value::Win(19));
        assert_eq!(start_value(3, Rules::Classic), Value::Win(19));
    }

    #[test]
    fn encoding_round_trips() {
        for value in [
            Value::Draw,
            Value::Win(0),
            Value::Win(1),
            Value::Loss(0),
            Value::Loss(126),
            Value::Win(126),
        ] {
            assert_eq!(decode(encode(value)), value);
        }
    }
}

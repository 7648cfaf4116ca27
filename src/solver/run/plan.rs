//! What a layered solve is asked and what it reports: the plan
//! ([`Plan`]), a finished pair ([`PairDone`]) and the outcome
//! ([`Outcome`]), why it failed ([`LayeredError`]); the index of a kind
//! ([`shape_of`]) and its pairs of layers in the order they are made;
//! the memory a pair takes while it is made; and the census of a kind
//! before any solve ([`census`]).

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::solver::SolveError;
use crate::solver::files::format::{Kind, LayerError};
use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::Tally;

/// Why a layered solve, check or comparison failed.
#[derive(Debug)]
pub enum LayeredError {
    /// No tables for this size and car limit.
    Shape(Kind),
    Layer(LayerError),
    Solve(SolveError),
    Io(PathBuf, std::io::Error),
    /// A worker of an MPI job failed, or every worker was lost.
    Worker(String),
    /// A journal that cannot be used: what it is or holds.
    Journal(PathBuf, String),
}

impl fmt::Display for LayeredError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayeredError::Shape(kind) => write!(
                f,
                "no layered tables for size {} with at most {} cars a side (sizes 3 to 8 and 1 to size-1 cars, at most 5 on 7 x 7 and 8 x 8: choose fewer with --max-cars)",
                kind.size, kind.max_cars
            ),
            LayeredError::Layer(e) => e.fmt(f),
            LayeredError::Solve(e) => e.fmt(f),
            LayeredError::Io(path, e) => write!(f, "cannot write {}: {e}", path.display()),
            LayeredError::Worker(why) => write!(f, "MPI: {why}"),
            LayeredError::Journal(path, why) => write!(f, "--journal {}: {why}", path.display()),
        }
    }
}

impl std::error::Error for LayeredError {}

impl From<LayerError> for LayeredError {
    fn from(e: LayerError) -> LayeredError {
        LayeredError::Layer(e)
    }
}

impl From<SolveError> for LayeredError {
    fn from(e: SolveError) -> LayeredError {
        LayeredError::Solve(e)
    }
}

/// What a layered solve is asked to do.
#[derive(Clone, Debug)]
pub struct Plan {
    pub kind: Kind,
    pub dir: PathBuf,
    pub threads: usize,
    /// Stop once this many layer files have been written by this run.
    pub stop_after_layers: Option<u64>,
    /// Solve with two bytes a slot from the start (normally only pairs
    /// whose distances overflow one byte are): for tests.
    pub two_bytes: bool,
    /// Derive each pair's distances to the end (its `.dte` files) as soon
    /// as the pair is solved, from its values still in memory, where the
    /// layers ahead have theirs (see [`solve`](super::solve::solve)).
    pub with_dte: bool,
}

/// One finished layer pair, for progress displays and logs.
#[derive(Clone, Debug)]
pub struct PairDone {
    /// The pair's layers, `(a, b)` and (unless `a == b`) `(b, a)`.
    pub layers: Vec<(u32, u32)>,
    /// Index slots of the pair (positions and non-positions).
    pub slots: u64,
    pub tally: Tally,
    /// Already on disk from an earlier run.
    pub resumed: bool,
    pub seconds: f64,
    /// Bytes of the pair's files.
    pub bytes: u64,
    /// Seconds spent reading the layers ahead, solving, and compressing
    /// and writing the files.
    pub phases: [f64; 3],
    /// Seconds spent deriving and writing the distances to the end, when
    /// a solve did that for the pair too ([`Plan::with_dte`]).
    pub dte_seconds: Option<f64>,
    /// Pairs finished so far, of `pairs`.
    pub done: usize,
    pub pairs: usize,
    /// In an MPI job: the rank that made the pair, and its peak memory
    /// so far in bytes (0 where unknown).
    pub rank: Option<(usize, u64)>,
}

impl PairDone {
    /// The report of pair `done` of `pairs` before its work: found on
    /// disk until known otherwise, nothing counted yet.
    pub(super) fn starting(layers: &[Layer], done: usize, pairs: usize) -> PairDone {
        PairDone {
            layers: layers.iter().map(|l| (l.black, l.white)).collect(),
            slots: layers.iter().map(|l| l.slots).sum(),
            tally: Tally::default(),
            resumed: true,
            seconds: 0.0,
            bytes: 0,
            phases: [0.0; 3],
            dte_seconds: None,
            done,
            pairs,
            rank: None,
        }
    }
}

/// What a layered solve ended with.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Every finished layer's tally (Black to move; White to move mirrors it).
    pub tally: Tally,
    pub layers_written: u64,
    /// The run stopped early (`stop_after_layers`) with pairs left.
    pub stopped: bool,
    /// The longest win and loss to the end of each layer whose distances
    /// to the end this run derived, by `(black, white)` progress.
    pub longest_ends: HashMap<(u32, u32), (u32, u32)>,
}

/// Total index slots of every layer, for progress displays.
pub fn total_slots(shape: &Shape) -> u64 {
    pair_layers(shape)
        .iter()
        .flatten()
        .map(|layer| layer.slots)
        .sum()
}

pub(in crate::solver) fn pair_layers(shape: &Shape) -> Vec<Vec<Layer>> {
    shape
        .pairs()
        .into_iter()
        .map(|(a, b)| {
            if a == b {
                vec![shape.layer(a, a)]
            } else {
                vec![shape.layer(a, b), shape.layer(b, a)]
            }
        })
        .collect()
}

/// Most sets of cars of one count the index lists (8 x 8 with 5 cars
/// a side is 7.6 million; 6 cars, 75 million, would be out of reach to
/// solve anyway).
const MAX_SETS: u64 = 10_000_000;

/// The shape a kind of tables has, built once a process
/// ([`Shape::shared`]): the solver, the tables and their files' readers
/// hold the same one.
///
/// # Errors
/// A size or car limit without tables, or one too large to solve.
pub fn shape_of(kind: Kind) -> Result<Arc<Shape>, LayeredError> {
    let squares = (kind.size * kind.size) as u64;
    let sets = (0..u64::from(kind.max_cars)).fold(1u64, |acc, i| {
        acc.saturating_mul(squares.saturating_sub(i)) / (i + 1)
    });
    if sets > MAX_SETS {
        return Err(LayeredError::Shape(kind));
    }
    Shape::shared(kind.size, kind.max_cars).ok_or(LayeredError::Shape(kind))
}

/// The layer `(b, a + 1)` that Black's forward moves from `(a, b)` reach.
pub(in crate::solver) fn ahead_of(shape: &Shape, layer: &Layer) -> Option<Layer> {
    (layer.black < shape.max_progress()).then(|| shape.layer(layer.white, layer.black + 1))
}

/// Whether some layer reads `layer` as its layer ahead (the inverse of
/// [`ahead_of`]): Black's forward moves from `(w - 1, b)` reach `(b, w)`.
pub(super) fn read_as_ahead(shape: &Shape, layer: &Layer) -> bool {
    layer.white > shape.min_progress()
}

/// The sizes that decide what a solve of one kind needs, before it is
/// run: how its work splits into pairs, and how much of it must be done
/// one pair after another whatever the number of machines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Census {
    pub pairs: usize,
    /// Index slots of every layer (positions and non-positions), Black to
    /// move; White to move mirrors them.
    pub slots: u64,
    /// The largest pair: its slots and layers.
    pub largest: (u64, Vec<(u32, u32)>),
    /// Slots of the heaviest chain of pairs each waiting for the one
    /// before: a solve on any number of workers takes at least as long
    /// as these take one after another.
    pub chain: u64,
    /// Memory a pair takes while it is solved with its distances to the
    /// end, a slot.
    pub bytes_per_slot: u64,
}

/// The [`Census`] of `kind`'s tables, also of one too large for this
/// solver to take on (the whole 8 x 8 board, for a plan): counted from
/// how many sets of cars each progress has, without building the index,
/// so in a few kilobytes whatever the size and car count.
///
/// # Errors
/// A kind without tables.
pub fn census(kind: Kind) -> Result<Census, LayeredError> {
    let counts = SetCounts::new(kind).ok_or(LayeredError::Shape(kind))?;
    let (low, high) = (counts.min_progress(), counts.max_progress());
    // The pairs in solving order, as [`Shape::pairs`] gives them.
    let mut pairs: Vec<Vec<(u32, u32)>> = Vec::new();
    for total in (2 * low..=2 * high).rev() {
        for a in low.max(total.saturating_sub(high))..=total / 2 {
            let b = total - a;
            pairs.push(if a == b {
                vec![(a, a)]
            } else {
                vec![(a, b), (b, a)]
            });
        }
    }
    let index: HashMap<(u32, u32), usize> = pairs
        .iter()
        .enumerate()
        .flat_map(|(i, layers)| layers.iter().map(move |&l| (l, i)))
        .collect();
    let slots_of =
        |layers: &[(u32, u32)]| -> u64 { layers.iter().map(|&(a, b)| counts.slots(a, b)).sum() };
    // Pairs come from the end of the game back, so those a pair waits
    // for come before it in the list.
    let mut heaviest = vec![0u64; pairs.len()];
    for (i, layers) in pairs.iter().enumerate() {
        // The layer `(b, a + 1)` Black's forward moves from `(a, b)` reach.
        let before = layers
            .iter()
            .filter(|&&(a, _)| a < high)
            .map(|&(a, b)| heaviest[index[&(b, a + 1)]])
            .max()
            .unwrap_or(0);
        debug_assert!(
            layers
                .iter()
                .all(|&(a, b)| a == high || index[&(b, a + 1)] < i)
        );
        heaviest[i] = before + slots_of(layers);
    }
    let (largest, layers) = pairs
        .iter()
        .map(|layers| (slots_of(layers), layers))
        .max_by_key(|(slots, _)| *slots)
        .expect("every kind of tables has pairs");
    Ok(Census {
        pairs: pairs.len(),
        slots: pairs.iter().map(|layers| slots_of(layers)).sum(),
        largest: (largest, layers.clone()),
        chain: heaviest.into_iter().max().unwrap_or(0),
        bytes_per_slot: PASS_BYTES_PER_SLOT,
    })
}

/// How many sets of `k` cars have each file sum (a side's progress is
/// its file sum, less for each car it lacks): what the sizes of the
/// layered index follow from, without the sets themselves.
struct SetCounts {
    size: u32,
    max_cars: u32,
    /// `count[k][sum]`.
    count: Vec<Vec<u64>>,
}

impl SetCounts {
    /// The counts of `kind`'s index; `None` where [`Shape::new`] has no
    /// index.
    fn new(kind: Kind) -> Option<SetCounts> {
        let (size, max_cars) = (kind.size, kind.max_cars);
        if !(crate::board::MIN_SIZE..=crate::board::MAX_SIZE).contains(&size)
            || max_cars == 0
            || max_cars as usize >= size
        {
            return None;
        }
        let n = size as u32;
        let kmax = max_cars as usize;
        let sums = kmax * (size - 1) + 1;
        // Square by square: a set either holds the square or not.
        let mut count = vec![vec![0u64; sums]; kmax + 1];
        count[0][0] = 1;
        for square in 0..n * n {
            let file = (square % n) as usize;
            for k in (1..=kmax).rev() {
                for sum in (file..sums).rev() {
                    count[k][sum] = count[k][sum].saturating_add(count[k - 1][sum - file]);
                }
            }
        }
        Some(SetCounts {
            size: n,
            max_cars,
            count,
        })
    }

    fn min_progress(&self) -> u32 {
        self.size * (self.size - 1 - self.max_cars)
    }

    fn max_progress(&self) -> u32 {
        self.size * (self.size - 1) - 1
    }

    /// Sets of `cars` cars with this progress.
    fn sets(&self, progress: u32, cars: u32) -> u64 {
        progress
            .checked_sub(self.size * (self.size - 1 - cars))
            .and_then(|sum| self.count[cars as usize].get(sum as usize))
            .copied()
            .unwrap_or(0)
    }

    /// Slots of layer `(black, white)`: every block of car counts.
    fn slots(&self, black: u32, white: u32) -> u64 {
        let cars = 1..=self.max_cars;
        cars.clone()
            .map(|k| {
                let blacks = self.sets(black, k);
                cars.clone()
                    .map(|m| blacks.saturating_mul(self.sets(white, m)))
                    .fold(0u64, u64::saturating_add)
            })
            .fold(0u64, u64::saturating_add)
    }
}

/// Memory a pair takes while it is solved, a slot: its one-byte states
/// (two for the rare pair whose distances need them) with the layers
/// ahead's win/draw/loss, and its values while they are written.
pub(super) const SOLVE_BYTES_PER_SLOT: u64 = 3;

/// Memory a pair takes while the one pass solves it ([`pass`](crate::solver::passes::pass)), a slot:
/// its one-byte states, a layer ahead's distances while its side is
/// seeded, and the values made in place from the states.
pub(super) const PASS_BYTES_PER_SLOT: u64 = 2;

/// The least memory the one pass takes for its pairs and the layers
/// ahead it keeps: on a board whose largest pair is small, 2 bytes a slot
/// of it would run even the small pairs one after another with every
/// thread, and read back nearly every layer ahead from its file.
pub(super) const PASS_SMALLEST_BUDGET: u64 = 192 << 20;

/// Memory a pair takes while its distances to the end are derived, a
/// slot: two-byte states, the layers ahead's distances, and the values
/// made from the states.
pub(super) const DTE_BYTES_PER_SLOT: u64 = 5;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Rules;
    use crate::solver::run::solve::pair_jobs;

    /// The census of a kind from its index built whole (the count before
    /// [`census`] counted sets instead).
    fn census_of_shape(kind: Kind) -> Census {
        let shape = Shape::new(kind.size, kind.max_cars).unwrap();
        let pairs = pair_layers(&shape);
        let jobs = pair_jobs(&shape, &pairs, 1);
        let mut heaviest = vec![0u64; jobs.len()];
        for (i, job) in jobs.iter().enumerate() {
            let before = job.after.iter().map(|&j| heaviest[j]).max().unwrap_or(0);
            heaviest[i] = before + job.bytes;
        }
        let (largest, layers) = pairs
            .iter()
            .map(|layers| (layers.iter().map(|l| l.slots).sum::<u64>(), layers))
            .max_by_key(|(slots, _)| *slots)
            .unwrap();
        Census {
            pairs: pairs.len(),
            slots: pairs.iter().flatten().map(|l| l.slots).sum(),
            largest: (largest, layers.iter().map(|l| (l.black, l.white)).collect()),
            chain: heaviest.into_iter().max().unwrap(),
            bytes_per_slot: PASS_BYTES_PER_SLOT,
        }
    }

    #[test]
    fn the_census_counted_from_sets_is_the_one_of_the_index() {
        for (size, cars) in [
            (3, 2),
            (4, 1),
            (4, 3),
            (5, 2),
            (5, 4),
            (6, 3),
            (7, 2),
            (8, 2),
        ] {
            let kind = Kind {
                size,
                rules: Rules::Textbook,
                max_cars: cars,
            };
            assert_eq!(
                census(kind).unwrap(),
                census_of_shape(kind),
                "{size} {cars}"
            );
        }
        // The whole 8 x 8 board: counted, not built (its index would take
        // tens of gigabytes).
        let whole = Kind {
            size: 8,
            rules: Rules::Textbook,
            max_cars: 7,
        };
        let found = census(whole).unwrap();
        assert!(found.slots > 1 << 40, "{found:?}");
        assert!(
            census(Kind {
                max_cars: 8,
                ..whole
            })
            .is_err()
        );
    }
}

//! The layered solve of a whole board (or of its positions with at most
//! so many cars a side): layer pairs from the end of the game back to the
//! start, each written to its own file as soon as it is done, so a run
//! killed at any moment continues from the last finished pair. Also the
//! independent check of a finished directory and the comparison with the
//! dense solver.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::run::schedule;
use super::{SolveError, parallel};
use crate::board::Rules;
use crate::solver::files::format::{
    self, Content, Kind, LayerError, Metric, read_header, read_wdl,
};
use crate::solver::index::layers::{Block, Child, Layer, Shape};
use crate::solver::index::value::{Dtz, Tally, Values, WdlBits, decode};
use crate::solver::passes::dte::{self, DteSide};
use crate::solver::passes::pass::{self, PassSide};
use crate::solver::passes::retro::{Side, Solved, solve_pair};

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
    /// layers ahead have theirs (see [`solve`]).
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
    fn starting(layers: &[Layer], done: usize, pairs: usize) -> PairDone {
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

fn pair_layers(shape: &Shape) -> Vec<Vec<Layer>> {
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
fn ahead_of(shape: &Shape, layer: &Layer) -> Option<Layer> {
    (layer.black < shape.max_progress()).then(|| shape.layer(layer.white, layer.black + 1))
}

/// Whether some layer reads `layer` as its layer ahead (the inverse of
/// [`ahead_of`]): Black's forward moves from `(w - 1, b)` reach `(b, w)`.
fn read_as_ahead(shape: &Shape, layer: &Layer) -> bool {
    layer.white > shape.min_progress()
}

/// Solves every layer of `plan.kind` not yet in `plan.dir`, calling
/// `progress` after each pair.
///
/// # Errors
/// An unusable directory, a damaged file, a write failure.
pub fn solve(plan: &Plan, progress: &mut dyn FnMut(&PairDone)) -> Result<Outcome, LayeredError> {
    solve_on(plan, Ranks::Here, progress)
}

/// [`solve`] with the pairs made by `ranks`.
///
/// # Errors
/// As [`solve`]; a worker's error, or every worker lost.
pub fn solve_on(
    plan: &Plan,
    ranks: Ranks,
    progress: &mut dyn FnMut(&PairDone),
) -> Result<Outcome, LayeredError> {
    let shape = shape_of(plan.kind)?;
    let _lock = format::lock_dir(&plan.dir)?;
    format::prepare_dir(&plan.dir, plan.kind)?;
    let pairs = pair_layers(&shape);
    // The one pass keeps within 2 bytes a slot of the largest pair, all
    // told (or [`PASS_SMALLEST_BUDGET`] on a small board): the pairs made
    // at once, and an eighth of that for the layers ahead kept in memory
    // for the pairs that read them.
    let largest = pairs
        .iter()
        .map(|layers| layers.iter().map(|l| l.slots).sum::<u64>())
        .max()
        .unwrap_or(0);
    let (memory, keep) = if plan.with_dte {
        let all = (PASS_BYTES_PER_SLOT * largest).max(PASS_SMALLEST_BUDGET);
        let keep = all / 8;
        (memory_budget().min(all - keep), keep)
    } else {
        (memory_budget(), memory_budget() / 8)
    };
    let pass = Pass {
        shape: &shape,
        dir: &plan.dir,
        kind: plan.kind,
        metric: if plan.with_dte {
            Metric::Dte
        } else {
            Metric::Dtz
        },
        threads: plan.threads,
        bytes_per_slot: if plan.with_dte {
            PASS_BYTES_PER_SLOT
        } else {
            SOLVE_BYTES_PER_SLOT
        },
        memory,
        stop_after_layers: plan.stop_after_layers,
        fresh: &HashMap::new(),
    };
    let maker = Maker::solving(shape.clone(), plan, keep);
    each_pair(&pairs, &pass, progress, &maker, ranks)
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

/// Where a pass's pairs are made: by this process, or by the workers of
/// an MPI job that this process (rank 0) manages.
#[derive(Clone, Copy, Debug)]
pub enum Ranks<'a> {
    Here,
    #[cfg(feature = "mpi")]
    Mpi(&'a crate::solver::run::cluster::Cluster),
    #[doc(hidden)]
    #[cfg(not(feature = "mpi"))]
    _Never(std::convert::Infallible, std::marker::PhantomData<&'a ()>),
}

/// What making one pair gave.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Made {
    /// Each layer's tally and the bytes of its files.
    written: Vec<(Tally, u64)>,
    /// The longest win and loss to the end of each layer whose distances
    /// were derived, by `(black, white)` progress.
    ends: Vec<((u32, u32), (u32, u32))>,
    /// Seconds reading the layers ahead, solving, writing.
    phases: [f64; 3],
    /// Seconds deriving the distances to the end, when that was done too.
    dte_seconds: Option<f64>,
    seconds: f64,
    /// The peak memory of the process that made it, in bytes (0 where
    /// unknown).
    peak: u64,
    /// What a check of the pair found (a verify writes no files).
    checked: Option<Walked>,
}

/// How a pass makes one pair's files: solving it (and deriving its
/// distances to the end where the layers ahead have theirs), or deriving
/// the distances of a solved pair; or, making none, how it checks a
/// pair's stored values. In this process or in a worker.
enum Maker {
    Solve {
        shape: Arc<Shape>,
        plan: Plan,
        /// Win/draw/loss of finished layers, for the pair that reads them
        /// as its layers ahead.
        wdl: Handoff<WdlBits>,
        /// With [`Plan::with_dte`].
        ends: Option<Ends>,
    },
    Distances {
        shape: Arc<Shape>,
        dir: PathBuf,
        kind: Kind,
        ends: Ends,
    },
    Verify {
        shape: Arc<Shape>,
        dir: PathBuf,
        kind: Kind,
    },
}

/// A pair to make, as the manager of an MPI job sends it to a worker.
#[cfg(feature = "mpi")]
#[derive(Debug, Serialize, Deserialize)]
struct Task {
    pass: PassTask,
    /// Its index among the pairs.
    pair: usize,
}

/// What a worker needs to know of a pass to make its pairs.
#[cfg(feature = "mpi")]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct PassTask {
    work: Work,
    dir: PathBuf,
    two_bytes: bool,
    with_dte: bool,
}

/// What a pass does with each pair.
#[cfg(feature = "mpi")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Work {
    /// Solves it (`dodgem solve --out`).
    Solve,
    /// Derives its distances to the end (`dodgem solve --dte`).
    Distances,
    /// Checks its stored values (`dodgem solve --verify`).
    Verify,
}

impl Maker {
    /// The solve of `plan`, keeping up to `keep` bytes of finished layers
    /// in memory for the pairs that read them next.
    fn solving(shape: Arc<Shape>, plan: &Plan, keep: u64) -> Maker {
        Maker::Solve {
            shape,
            plan: plan.clone(),
            wdl: Handoff::new(keep),
            ends: plan.with_dte.then(|| Ends::new(keep)),
        }
    }

    /// The distances to the end of the solved tables in `dir`.
    fn distances(shape: Arc<Shape>, dir: &Path, kind: Kind, keep: u64) -> Maker {
        Maker::Distances {
            shape,
            dir: dir.to_path_buf(),
            kind,
            ends: Ends::new(keep),
        }
    }

    /// The task of making pair `pair`, for a worker.
    #[cfg(feature = "mpi")]
    fn task(&self, pair: usize) -> Task {
        let pass = match self {
            Maker::Solve { plan, .. } => PassTask {
                work: Work::Solve,
                dir: plan.dir.clone(),
                two_bytes: plan.two_bytes,
                with_dte: plan.with_dte,
            },
            Maker::Distances { dir, .. } => PassTask {
                work: Work::Distances,
                dir: dir.clone(),
                two_bytes: false,
                with_dte: true,
            },
            Maker::Verify { dir, .. } => PassTask {
                work: Work::Verify,
                dir: dir.clone(),
                two_bytes: false,
                with_dte: false,
            },
        };
        Task { pass, pair }
    }

    /// Makes the files of the pair of `layers` with `threads` threads.
    fn make(&self, layers: &[Layer], threads: usize) -> Result<Made, LayeredError> {
        let started = Instant::now();
        let mut made = Made::default();
        match self {
            Maker::Solve {
                shape,
                plan,
                ends: Some(ends),
                ..
            } if plan.with_dte => {
                (made.written, made.ends) =
                    pass_one_pair(shape, plan, threads, layers, &mut made.phases, ends)?;
            }
            Maker::Solve {
                shape,
                plan,
                wdl,
                ends,
            } => {
                let solved = solve_one_pair(shape, plan, threads, layers, &mut made.phases, wdl)?;
                let own: Vec<WdlBits> = solved
                    .iter()
                    .map(|(solved, _)| WdlBits::from_values(&solved.values))
                    .collect();
                made.written = solved
                    .into_iter()
                    .map(|(solved, bytes)| (solved.tally, bytes))
                    .collect();
                for (layer, bits) in layers.iter().zip(&own) {
                    let bytes = bits.bytes() as u64;
                    if read_as_ahead(shape, layer) && wdl.has_room(bytes) {
                        wdl.give(layer, bits.clone(), bytes);
                    }
                }
                if let Some(ends) = ends
                    && ends.ready(shape, &plan.dir, plan.kind, layers)?
                {
                    let derived = Instant::now();
                    let (written, longest) = ends.derive(
                        shape,
                        &plan.dir,
                        plan.kind,
                        threads,
                        layers,
                        own,
                        &mut [0.0; 3],
                    )?;
                    for ((_, bytes), (_, ends_bytes)) in made.written.iter_mut().zip(written) {
                        *bytes += ends_bytes;
                    }
                    made.ends = longest;
                    made.dte_seconds = Some(derived.elapsed().as_secs_f64());
                }
            }
            Maker::Distances {
                shape,
                dir,
                kind,
                ends,
            } => {
                let own = layers
                    .iter()
                    .map(|layer| read_wdl(dir, *kind, layer))
                    .collect::<Result<Vec<_>, LayerError>>()?;
                (made.written, made.ends) =
                    ends.derive(shape, dir, *kind, threads, layers, own, &mut made.phases)?;
            }
            Maker::Verify { shape, dir, kind } => {
                let end = has_dte(dir, *kind, layers)?;
                made.checked = Some(check_pair(dir, *kind, shape, layers, end, threads)?);
            }
        }
        made.seconds = started.elapsed().as_secs_f64();
        made.peak = crate::memory::peak_bytes().unwrap_or(0);
        Ok(made)
    }
}

/// A worker of an MPI job: makes the pairs the manager sends (with
/// `threads` threads each) until told there are no more. Finished layers
/// go to and come from the shared directory only: the next pair that
/// reads one may be on another rank.
#[cfg(feature = "mpi")]
pub fn serve(cluster: &crate::solver::run::cluster::Cluster, threads: usize) {
    // The pass being served, its pairs, and how it makes one.
    struct Serving {
        pass: PassTask,
        pairs: Vec<Vec<Layer>>,
        maker: Maker,
    }
    let mut serving: Option<Serving> = None;
    cluster.serve(|bytes| {
        let made = (|| -> Result<Made, LayeredError> {
            let task: Task = serde_json::from_slice(bytes).map_err(|e| {
                LayeredError::Worker(format!("a task this worker cannot read: {e}"))
            })?;
            let Task { pass, pair } = task;
            if serving.as_ref().is_none_or(|serving| serving.pass != pass) {
                let kind = format::read_kind(&pass.dir)?;
                let shape = shape_of(kind)?;
                let maker = match pass.work {
                    Work::Distances => Maker::distances(shape.clone(), &pass.dir, kind, 0),
                    Work::Verify => Maker::Verify {
                        shape: shape.clone(),
                        dir: pass.dir.clone(),
                        kind,
                    },
                    Work::Solve => {
                        let plan = Plan {
                            kind,
                            dir: pass.dir.clone(),
                            threads,
                            stop_after_layers: None,
                            two_bytes: pass.two_bytes,
                            with_dte: pass.with_dte,
                        };
                        Maker::solving(shape.clone(), &plan, 0)
                    }
                };
                serving = Some(Serving {
                    pass,
                    pairs: pair_layers(&shape),
                    maker,
                });
            }
            let Serving { pass, pairs, maker } = serving.as_ref().expect("set above");
            let layers = pairs.get(pair).ok_or_else(|| {
                LayeredError::Worker(format!("no pair {pair} in {}", pass.dir.display()))
            })?;
            maker.make(layers, threads)
        })();
        let made: Result<Made, String> = made.map_err(|e| e.to_string());
        serde_json::to_vec(&made).expect("a report serializes")
    });
}

/// A pass over the pairs of a directory: which files it makes, and with
/// what.
struct Pass<'a> {
    shape: &'a Shape,
    dir: &'a Path,
    kind: Kind,
    metric: Metric,
    threads: usize,
    /// Memory a pair takes while it is made, a slot.
    bytes_per_slot: u64,
    /// Memory the pairs being made may take at once.
    memory: u64,
    stop_after_layers: Option<u64>,
    /// Layers whose files this process wrote (a solve that derived their
    /// distances to the end): found finished, they are not read again.
    fresh: &'a HashMap<(u32, u32), (u32, u32)>,
}

/// Memory a pair takes while it is solved, a slot: its one-byte states
/// (two for the rare pair whose distances need them) with the layers
/// ahead's win/draw/loss, and its values while they are written.
const SOLVE_BYTES_PER_SLOT: u64 = 3;

/// Memory a pair takes while the one pass solves it ([`pass`]), a slot:
/// its one-byte states, a layer ahead's distances while its side is
/// seeded, and the values made in place from the states.
const PASS_BYTES_PER_SLOT: u64 = 2;

/// The least memory the one pass takes for its pairs and the layers
/// ahead it keeps: on a board whose largest pair is small, 2 bytes a slot
/// of it would run even the small pairs one after another with every
/// thread, and read back nearly every layer ahead from its file.
const PASS_SMALLEST_BUDGET: u64 = 192 << 20;

/// Memory a pair takes while its distances to the end are derived, a
/// slot: two-byte states, the layers ahead's distances, and the values
/// made from the states.
const DTE_BYTES_PER_SLOT: u64 = 5;

/// Works through `pairs` (in the order of [`pair_layers`]): a pair whose
/// `pass.metric` files are all in `dir` already is reported as found there;
/// any other is made by `maker` (here, given the threads it may use, or by
/// a worker of `ranks`) once the pairs its forward moves reach are done,
/// several at a time where they are small enough (see [`schedule`]): each
/// takes about `bytes_per_slot` bytes a slot while it is made. Starts no
/// pair once `stop_after_layers` files have been written or are being
/// written, if given; calls `progress` after each pair, in the order they
/// finish.
fn each_pair(
    pairs: &[Vec<Layer>],
    pass: &Pass,
    progress: &mut dyn FnMut(&PairDone),
    maker: &Maker,
    ranks: Ranks,
) -> Result<Outcome, LayeredError> {
    let Pass {
        shape,
        dir,
        kind,
        metric,
        threads,
        bytes_per_slot,
        memory,
        stop_after_layers,
        fresh,
    } = *pass;
    let mut outcome = Outcome {
        tally: Tally::default(),
        layers_written: 0,
        stopped: false,
        longest_ends: HashMap::new(),
    };
    let mut reported = 0;
    let mut found = Vec::with_capacity(pairs.len());
    for layers in pairs {
        let headers = match finished_pair(dir, kind, metric, layers, fresh) {
            Ok(headers) => headers,
            // A damaged file is made again; what cannot be read at all
            // (a FIFO, a file of another format) stops the run.
            Err(
                error @ (LayerError::Checksum(_)
                | LayerError::Corrupt(..)
                | LayerError::Truncated(_)),
            ) => {
                log::warn!(
                    "{error}: the pair of layers {} is made again",
                    journal_name(layers, Metric::Dtz)
                );
                vec![None]
            }
            Err(error) => return Err(error.into()),
        };
        let on_disk = headers.iter().all(Option::is_some);
        if on_disk {
            reported += 1;
            let mut report = PairDone::starting(layers, reported, pairs.len());
            for (header, layer) in headers.iter().flatten().zip(layers) {
                report.tally.merge(header.tally);
                report.bytes += file_len(&metric.path(dir, layer.black, layer.white));
            }
            outcome.tally.merge(report.tally);
            progress(&report);
        }
        found.push(on_disk);
    }
    let jobs = pair_jobs(shape, pairs, bytes_per_slot);
    // Shared by the two callbacks below, both on this thread.
    let outcome = std::cell::RefCell::new(outcome);
    let reported = std::cell::Cell::new(reported);
    // Layers of the pairs being made now, for the stop.
    let pending = std::cell::Cell::new(0u64);
    let mut error = None;
    let start = |i: usize| {
        let written = outcome.borrow().layers_written + pending.get();
        if stop_after_layers.is_some_and(|limit| written >= limit) {
            outcome.borrow_mut().stopped = true;
            return schedule::Flow::Stop;
        }
        pending.set(pending.get() + pairs[i].len() as u64);
        schedule::Flow::Continue
    };
    let mut finished = |i: usize, rank: Option<usize>, made: Result<Made, LayeredError>| {
        let layers = &pairs[i];
        pending.set(pending.get() - layers.len() as u64);
        match made {
            Ok(made) => {
                reported.set(reported.get() + 1);
                let mut report = PairDone::starting(layers, reported.get(), pairs.len());
                report.resumed = false;
                report.phases = made.phases;
                report.dte_seconds = made.dte_seconds;
                report.seconds = made.seconds;
                report.rank = rank.map(|rank| (rank, made.peak));
                for (tally, bytes) in made.written {
                    report.tally.merge(tally);
                    report.bytes += bytes;
                }
                let mut outcome = outcome.borrow_mut();
                outcome.layers_written += layers.len() as u64;
                outcome.tally.merge(report.tally);
                outcome.longest_ends.extend(made.ends);
                progress(&report);
                schedule::Flow::Continue
            }
            Err(e) => {
                error.get_or_insert(e);
                schedule::Flow::Stop
            }
        }
    };
    match ranks {
        Ranks::Here => schedule::run(
            &jobs,
            found,
            schedule::Budget {
                threads,
                bytes: memory,
            },
            |i, threads| maker.make(&pairs[i], threads),
            start,
            |i, made| finished(i, None, made),
        ),
        #[cfg(feature = "mpi")]
        Ranks::Mpi(cluster) => manage_pairs(
            cluster,
            &jobs,
            found,
            pairs,
            maker,
            start,
            |i, rank, made| finished(i, Some(rank), made),
        )?,
        #[cfg(not(feature = "mpi"))]
        Ranks::_Never(never, _) => match never {},
    }
    let outcome = outcome.into_inner();
    if let Some(e) = error {
        return Err(e);
    }
    Ok(outcome)
}

/// The headers of the files of `metric` of a pair's `layers` that an
/// earlier run finished (`None` for a layer not finished), each of those
/// files and the `.wdl` files that go with distances to progress read
/// whole and checked block by block: a resumed run never builds on a
/// damaged file. The layers in `fresh`, written by this process, are
/// taken as they are.
///
/// # Errors
/// A finished layer's file that is damaged or of other tables.
fn finished_pair(
    dir: &Path,
    kind: Kind,
    metric: Metric,
    layers: &[Layer],
    fresh: &HashMap<(u32, u32), (u32, u32)>,
) -> Result<Vec<Option<format::Header>>, LayerError> {
    let manifest = format::read_directory(dir)?;
    let mut headers = Vec::with_capacity(layers.len());
    for layer in layers {
        let distance = Content::Distance(metric);
        let Some(file) = format::LayerFile::open_in(dir, &manifest, kind, distance, layer)? else {
            headers.push(None);
            continue;
        };
        if fresh.contains_key(&(layer.black, layer.white)) {
            headers.push(Some(*file.header()));
            continue;
        }
        file.check_blocks()?;
        // The win/draw/loss beside it: the one pass writes it with the
        // distances to the end, the value pass with those to progress.
        {
            let wdl = format::LayerFile::open_in(dir, &manifest, kind, Content::Wdl, layer)?
                .ok_or_else(|| {
                    LayerError::Io(
                        Content::Wdl.path(dir, layer.black, layer.white),
                        std::io::Error::from(std::io::ErrorKind::NotFound),
                    )
                })?;
            wdl.check_blocks()?;
        }
        headers.push(Some(*file.header()));
    }
    Ok(headers)
}

/// Hands the `jobs` of `pairs` not `done` to the workers of `cluster`
/// ([`crate::solver::run::cluster::Cluster::manage`]), each as `maker`'s task, and
/// gives `finished` each worker's report read back (with the rank that
/// made it), or why it could not be.
///
/// # Errors
/// Every worker lost with pairs left.
#[cfg(feature = "mpi")]
fn manage_pairs(
    cluster: &crate::solver::run::cluster::Cluster,
    jobs: &[schedule::Job],
    done: Vec<bool>,
    pairs: &[Vec<Layer>],
    maker: &Maker,
    start: impl FnMut(usize) -> schedule::Flow,
    mut finished: impl FnMut(usize, usize, Result<Made, LayeredError>) -> schedule::Flow,
) -> Result<(), LayeredError> {
    cluster
        .manage(
            jobs,
            done,
            |i| serde_json::to_vec(&maker.task(i)).expect("a task serializes"),
            |i| {
                format!(
                    "the pair of layers {}",
                    journal_name(&pairs[i], Metric::Dtz)
                )
            },
            start,
            |i, rank, report| {
                let made = report
                    .and_then(|bytes| {
                        serde_json::from_slice::<Result<Made, String>>(&bytes)
                            .map_err(|e| format!("a report that cannot be read: {e}"))?
                    })
                    .map_err(|e| LayeredError::Worker(format!("rank {rank}: {e}")));
                finished(i, rank, made)
            },
        )
        .map_err(|e| LayeredError::Worker(e.to_string()))
}

/// The pairs as jobs: each waits for the pairs holding the layers its
/// forward moves reach, and needs `bytes_per_slot` bytes a slot.
fn pair_jobs(shape: &Shape, pairs: &[Vec<Layer>], bytes_per_slot: u64) -> Vec<schedule::Job> {
    let index: HashMap<(u32, u32), usize> = pairs
        .iter()
        .enumerate()
        .flat_map(|(i, layers)| layers.iter().map(move |l| ((l.black, l.white), i)))
        .collect();
    pairs
        .iter()
        .map(|layers| schedule::Job {
            after: layers
                .iter()
                .filter_map(|l| ahead_of(shape, l))
                .map(|ahead| index[&(ahead.black, ahead.white)])
                .collect(),
            bytes: layers.iter().map(|l| l.slots).sum::<u64>() * bytes_per_slot,
        })
        .collect()
}

/// Memory the pairs being made may take at once: half the machine's
/// (4 GiB where it cannot be read).
fn memory_budget() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
    total.map_or(4 << 30, |kib| kib * 1024 / 2)
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Solves and writes one pair, taking the win/draw/loss of the layers
/// ahead from `wdl` where kept there, else from their files; returns
/// each layer's values and the bytes of its files.
fn solve_one_pair(
    shape: &Shape,
    plan: &Plan,
    threads: usize,
    layers: &[Layer],
    phases: &mut [f64; 3],
    wdl: &Handoff<WdlBits>,
) -> Result<Vec<(Solved, u64)>, LayeredError> {
    let started = Instant::now();
    let solved = solve_pair_from(
        shape,
        plan.kind.rules,
        threads,
        plan.two_bytes,
        layers,
        &|layer| match wdl.take(layer) {
            Some(bits) => Ok(bits),
            None => read_wdl(&plan.dir, plan.kind, layer),
        },
        phases,
    )?;
    let solving = started.elapsed().as_secs_f64();
    // Compress and write both files at once.
    let written = std::thread::scope(|scope| {
        let handles: Vec<_> = solved
            .iter()
            .zip(layers)
            .map(|(solved, layer)| {
                scope.spawn(move || {
                    format::write_values(
                        &plan.dir,
                        plan.kind,
                        shape,
                        Metric::Dtz,
                        layer,
                        &solved.values,
                        solved.tally,
                        1,
                    )
                    .map_err(|e| {
                        LayeredError::Io(format::layer_path(&plan.dir, layer.black, layer.white), e)
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("writer thread panicked"))
            .collect::<Result<Vec<_>, _>>()
    })?;
    phases[2] = started.elapsed().as_secs_f64() - solving;
    Ok(solved.into_iter().zip(written).collect())
}

/// Solves the layers of one pair by the one pass ([`pass`]), each with the
/// layer its forward moves reach, whose distances to the end `read` gives.
fn pass_pair(
    shape: &Shape,
    rules: Rules,
    threads: usize,
    layers: &[Layer],
    read: &(dyn Fn(&Layer) -> Result<Values, LayeredError> + Sync),
    two_bytes: bool,
) -> Result<Vec<Solved>, LayeredError> {
    let ahead: Vec<Option<Layer>> = layers.iter().map(|l| ahead_of(shape, l)).collect();
    let sides: Vec<PassSide> = layers
        .iter()
        .zip(&ahead)
        .map(|(layer, ahead)| PassSide {
            layer,
            ahead: ahead.as_ref(),
        })
        .collect();
    pass::solve_pair(shape, rules, threads, &sides, read, two_bytes)
}

/// Solves one pair by the one pass ([`pass`]) and writes each layer's
/// `.wdl` and `.dte` files, taking the distances to the end of the layers
/// ahead from `ends` where kept there, else from their files; returns
/// each layer's tally and file bytes and its longest win and loss, and
/// fills in the phases' seconds (reading the layers ahead is counted in
/// the solving).
fn pass_one_pair(
    shape: &Shape,
    plan: &Plan,
    threads: usize,
    layers: &[Layer],
    phases: &mut [f64; 3],
    ends: &Ends,
) -> Result<EndsWritten, LayeredError> {
    let started = Instant::now();
    let read = |layer: &Layer| -> Result<Values, LayeredError> {
        match ends.handoff.take(layer) {
            Some(values) => Ok(values),
            None => Ok(format::read_values(&plan.dir, plan.kind, Metric::Dte, layer)?.0),
        }
    };
    let solved = pass_pair(
        shape,
        plan.kind.rules,
        threads,
        layers,
        &read,
        plan.two_bytes,
    )?;
    phases[1] = started.elapsed().as_secs_f64();
    // Compress and write both layers at once, each its `.wdl` file first:
    // a layer whose `.dte` file is there is finished.
    let written = std::thread::scope(|scope| {
        let handles: Vec<_> = solved
            .iter()
            .zip(layers)
            .map(|(solved, layer)| {
                scope.spawn(move || -> Result<u64, LayeredError> {
                    let positions = format::positions_of(shape, layer);
                    let mut bytes = 0;
                    for content in [Content::Wdl, Content::Distance(Metric::Dte)] {
                        bytes += format::write_file(
                            &plan.dir,
                            plan.kind,
                            content,
                            layer,
                            &solved.values,
                            &positions,
                            solved.tally,
                            content.block_slots(),
                            1,
                        )
                        .map_err(|e| {
                            LayeredError::Io(content.path(&plan.dir, layer.black, layer.white), e)
                        })?;
                    }
                    Ok(bytes)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("writer thread panicked"))
            .collect::<Result<Vec<_>, _>>()
    })?;
    phases[2] = started.elapsed().as_secs_f64() - phases[1];
    let mut longest = Vec::new();
    let mut tallies = Vec::new();
    for ((solved, layer), bytes) in solved.into_iter().zip(layers).zip(written) {
        longest.push((
            (layer.black, layer.white),
            solved.values.longest_win_and_loss(),
        ));
        tallies.push((solved.tally, bytes));
        if read_as_ahead(shape, layer) {
            let kept = solved.values.bytes() as u64;
            if ends.handoff.has_room(kept) {
                ends.handoff.give(layer, solved.values, kept);
            }
        }
    }
    Ok((tallies, longest))
}

/// Solves the layers of one pair, reading the win/draw/loss of the
/// layers ahead (both at once) with `read`; `phases[0..2]` get the
/// seconds spent reading and solving.
fn solve_pair_from(
    shape: &Shape,
    rules: Rules,
    threads: usize,
    two_bytes: bool,
    layers: &[Layer],
    read: &(dyn Fn(&Layer) -> Result<WdlBits, LayerError> + Sync),
    phases: &mut [f64; 3],
) -> Result<Vec<Solved>, LayeredError> {
    let started = Instant::now();
    let ahead: Vec<Option<Layer>> = layers.iter().map(|l| ahead_of(shape, l)).collect();
    let values: Vec<Option<WdlBits>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ahead
            .iter()
            .map(|layer| {
                scope.spawn(move || -> Result<Option<WdlBits>, LayerError> {
                    layer.as_ref().map(read).transpose()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("reader thread panicked"))
            .collect::<Result<Vec<_>, _>>()
    })?;
    let sides: Vec<Side> = layers
        .iter()
        .zip(ahead.iter().zip(&values))
        .map(|(layer, (ahead, values))| Side {
            layer,
            ahead: ahead.as_ref().zip(values.as_ref()),
        })
        .collect();
    phases[0] = started.elapsed().as_secs_f64();
    let solved = solve_pair(shape, rules, threads, &sides, two_bytes)?;
    phases[1] = started.elapsed().as_secs_f64() - phases[0];
    Ok(solved)
}

/// Solves every layer of `kind` in memory (for boards small enough to
/// solve in a moment: the built-in tables); returns each layer's values
/// by `(black, white)` progress.
///
/// # Errors
/// A kind without tables, or distances beyond two bytes.
pub fn solve_in_memory(
    kind: Kind,
    threads: usize,
) -> Result<HashMap<(u32, u32), Values>, LayeredError> {
    let shape = shape_of(kind)?;
    let mut solved: HashMap<(u32, u32), Values> = HashMap::new();
    for layers in pair_layers(&shape) {
        let read = |layer: &Layer| {
            Ok(WdlBits::from_values(
                solved
                    .get(&(layer.black, layer.white))
                    .expect("the layers ahead are solved first"),
            ))
        };
        let pair = solve_pair_from(
            &shape,
            kind.rules,
            threads,
            false,
            &layers,
            &read,
            &mut [0.0; 3],
        )?;
        for (layer, done) in layers.iter().zip(pair) {
            solved.insert((layer.black, layer.white), done.values);
        }
    }
    Ok(solved)
}

/// Solves every layer of `kind` in memory by the one pass that gives the
/// win/draw/loss and the distance to the end together ([`pass`]); returns
/// each layer's values (distances to the end) by `(black, white)`
/// progress.
///
/// # Errors
/// A kind without tables, or distances beyond what the pass holds.
#[cfg(test)]
pub fn pass_in_memory(
    kind: Kind,
    threads: usize,
    two_bytes: bool,
) -> Result<HashMap<(u32, u32), Values>, LayeredError> {
    let shape = shape_of(kind)?;
    let mut solved: HashMap<(u32, u32), Values> = HashMap::new();
    for layers in pair_layers(&shape) {
        let read = |layer: &Layer| -> Result<Values, LayeredError> {
            Ok(solved
                .get(&(layer.black, layer.white))
                .expect("the layers ahead are solved first")
                .clone())
        };
        let pair = pass_pair(&shape, kind.rules, threads, &layers, &read, two_bytes)?;
        for (layer, done) in layers.iter().zip(pair) {
            solved.insert((layer.black, layer.white), done.values);
        }
    }
    Ok(solved)
}

/// Derives the distances to the end of every layer of `kind` in memory
/// from its solved values by `(black, white)` progress (what
/// [`solve_in_memory`] gives); returns them the same way.
///
/// # Errors
/// A kind without tables, values that contradict each other, distances
/// beyond two bytes.
pub fn dte_in_memory(
    kind: Kind,
    threads: usize,
    solved: &HashMap<(u32, u32), Values>,
) -> Result<HashMap<(u32, u32), Values>, LayeredError> {
    let shape = shape_of(kind)?;
    let mut ends: HashMap<(u32, u32), Values> = HashMap::new();
    for layers in pair_layers(&shape) {
        let own: Vec<WdlBits> = layers
            .iter()
            .map(|layer| WdlBits::from_values(&solved[&(layer.black, layer.white)]))
            .collect();
        let read = |layer: &Layer| {
            Ok(ends
                .get(&(layer.black, layer.white))
                .expect("the layers ahead have their distances first")
                .clone())
        };
        let pair = dte_pair_from(&shape, threads, &layers, own, &read, &mut [0.0; 3])?;
        for (layer, done) in layers.iter().zip(pair) {
            ends.insert((layer.black, layer.white), done.values);
        }
    }
    Ok(ends)
}

/// Derives the distances to the end of the layers of one pair from their
/// solved values `own`, reading the distances to the end of the layers
/// ahead with `read` (both are dropped once the pass has seeded from
/// them); `phases[0..2]` get the seconds spent reading and solving.
fn dte_pair_from(
    shape: &Shape,
    threads: usize,
    layers: &[Layer],
    own: Vec<WdlBits>,
    read: &(dyn Fn(&Layer) -> Result<Values, LayerError> + Sync),
    phases: &mut [f64; 3],
) -> Result<Vec<Solved>, LayeredError> {
    let started = Instant::now();
    let ahead: Vec<Option<Layer>> = layers.iter().map(|l| ahead_of(shape, l)).collect();
    let values = ahead
        .iter()
        .map(|layer| layer.as_ref().map(read).transpose())
        .collect::<Result<Vec<_>, _>>()?;
    let sides: Vec<DteSide> = layers
        .iter()
        .zip(own)
        .zip(ahead.iter().zip(values))
        .map(|((layer, values), (ahead, ends))| DteSide {
            layer,
            values,
            ahead: ahead.as_ref().zip(ends),
        })
        .collect();
    phases[0] = started.elapsed().as_secs_f64();
    let solved = dte::solve_pair(shape, threads, sides)?;
    phases[1] = started.elapsed().as_secs_f64() - phases[0];
    Ok(solved)
}

/// What [`add_dte`] did: the pass's outcome, and the longest win and
/// loss of the whole directory (once every pair has its distances).
#[derive(Clone, Debug)]
pub struct DteOutcome {
    pub outcome: Outcome,
    pub longest_win: u32,
    pub longest_loss: u32,
}

/// Adds the distance to the end of every position to the solved tables
/// in `dir` (a `.dte` file beside each layer's `.dtz` file), pair by pair
/// from the end of the game back, calling `progress` after each pair. A
/// pair whose files are there already is skipped, so a run killed at any
/// moment continues from the last finished pair; it stops once
/// `stop_after_layers` files have been written, if given.
///
/// # Errors
/// An unusable or unfinished directory, a damaged file, values that
/// contradict each other, a write failure.
pub fn add_dte(
    dir: &Path,
    threads: usize,
    stop_after_layers: Option<u64>,
    progress: &mut dyn FnMut(&PairDone),
) -> Result<DteOutcome, LayeredError> {
    add_dte_knowing(
        dir,
        threads,
        stop_after_layers,
        &HashMap::new(),
        Ranks::Here,
        progress,
    )
}

/// [`add_dte`] after a solve that derived the distances of some layers
/// itself: `known` holds their longest win and loss
/// ([`Outcome::longest_ends`]), so that their files need not be read
/// again for the summary; the pairs are made by `ranks`.
///
/// # Errors
/// As [`add_dte`].
pub fn add_dte_knowing(
    dir: &Path,
    threads: usize,
    stop_after_layers: Option<u64>,
    known: &HashMap<(u32, u32), (u32, u32)>,
    ranks: Ranks,
    progress: &mut dyn FnMut(&PairDone),
) -> Result<DteOutcome, LayeredError> {
    let kind = format::read_kind(dir)?;
    let shape = shape_of(kind)?;
    let _lock = format::lock_dir(dir)?;
    format::prepare_dir(dir, kind)?;
    let pairs = pair_layers(&shape);
    for layer in pairs.iter().flatten() {
        // Solved: by the value pass (its distances to progress), or by
        // the one pass (its distances to the end, nothing to add).
        if read_header(dir, kind, layer)?.is_none()
            && format::read_values_header(dir, kind, Metric::Dte, layer)?.is_none()
        {
            return Err(LayeredError::Layer(LayerError::Unusable(format!(
                "{} is not solved yet ({} is missing): finish the solve first",
                dir.display(),
                format::layer_path(dir, layer.black, layer.white).display()
            ))));
        }
    }
    let pass = Pass {
        shape: &shape,
        dir,
        kind,
        metric: Metric::Dte,
        threads,
        bytes_per_slot: DTE_BYTES_PER_SLOT,
        memory: memory_budget(),
        stop_after_layers,
        fresh: known,
    };
    let maker = Maker::distances(shape.clone(), dir, kind, memory_budget() / 8);
    let mut found = Vec::new();
    let outcome = each_pair(
        &pairs,
        &pass,
        &mut |pair: &PairDone| {
            if pair.resumed {
                found.push(pair.layers.clone());
            }
            progress(pair);
        },
        &maker,
        ranks,
    )?;
    let mut longest = known.clone();
    longest.extend(&outcome.longest_ends);
    let (mut longest_win, mut longest_loss) = longest
        .values()
        .fold((0, 0), |(w, l), &(win, loss)| (w.max(win), l.max(loss)));
    if !outcome.stopped {
        // The layers found on disk that the solve did not make: a file's
        // header holds the longer of its longest win and loss, so only
        // the layers whose header could still beat what is known are
        // read, the longest first (a few, not the whole directory).
        let mut unread = Vec::new();
        for (black, white) in found.into_iter().flatten() {
            if !longest.contains_key(&(black, white)) {
                let layer = shape.layer(black, white);
                let file = format::open_required(
                    dir,
                    kind,
                    format::Content::Distance(Metric::Dte),
                    &layer,
                )?;
                unread.push((file.header().tally.longest, layer));
            }
        }
        unread.sort_by_key(|(bound, _)| std::cmp::Reverse(*bound));
        for (bound, layer) in unread {
            if bound <= longest_win.min(longest_loss) {
                break;
            }
            let (values, _) = format::read_values(dir, kind, Metric::Dte, &layer)?;
            let (win, loss) = values.longest_win_and_loss();
            longest_win = longest_win.max(win);
            longest_loss = longest_loss.max(loss);
        }
    }
    Ok(DteOutcome {
        outcome,
        longest_win,
        longest_loss,
    })
}

/// The distances to the end as they are derived pair by pair: a layer's
/// go from the pair that made them to the one pair that reads them as
/// its layer ahead (in memory while they fit).
struct Ends {
    handoff: Handoff<Values>,
}

impl Ends {
    fn new(most: u64) -> Ends {
        Ends {
            handoff: Handoff::new(most),
        }
    }

    /// Whether the layers ahead of `layers` have their distances to the
    /// end, kept or in their files.
    fn ready(
        &self,
        shape: &Shape,
        dir: &Path,
        kind: Kind,
        layers: &[Layer],
    ) -> Result<bool, LayeredError> {
        for ahead in layers.iter().filter_map(|layer| ahead_of(shape, layer)) {
            if !self.handoff.holds(&ahead)
                && format::read_values_header(dir, kind, Metric::Dte, &ahead)?.is_none()
            {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Derives and writes the distances to the end of the layers of one
    /// pair from their win/draw/loss `own`; returns each layer's tally and
    /// file size, and each layer's longest win and loss, and fills in the
    /// phases' seconds.
    #[allow(clippy::too_many_arguments)]
    fn derive(
        &self,
        shape: &Shape,
        dir: &Path,
        kind: Kind,
        threads: usize,
        layers: &[Layer],
        own: Vec<WdlBits>,
        phases: &mut [f64; 3],
    ) -> Result<EndsWritten, LayeredError> {
        let solved = dte_pair_from(
            shape,
            threads,
            layers,
            own,
            &|layer| match self.handoff.take(layer) {
                Some(values) => Ok(values),
                None => Ok(format::read_values(dir, kind, Metric::Dte, layer)?.0),
            },
            phases,
        )?;
        let writing = Instant::now();
        let mut written = Vec::new();
        let mut longest = Vec::new();
        for (solved, layer) in solved.into_iter().zip(layers) {
            let bytes = format::write_values(
                dir,
                kind,
                shape,
                Metric::Dte,
                layer,
                &solved.values,
                solved.tally,
                threads,
            )
            .map_err(|e| LayeredError::Io(Metric::Dte.path(dir, layer.black, layer.white), e))?;
            longest.push((
                (layer.black, layer.white),
                solved.values.longest_win_and_loss(),
            ));
            if read_as_ahead(shape, layer) {
                let bytes = solved.values.bytes() as u64;
                self.handoff.give(layer, solved.values, bytes);
            }
            written.push((solved.tally, bytes));
        }
        phases[2] = writing.elapsed().as_secs_f64();
        Ok((written, longest))
    }
}

/// What [`Ends::derive`] wrote: each layer's tally and file size, and
/// its longest win and loss by `(black, white)` progress.
type EndsWritten = (Vec<(Tally, u64)>, Vec<((u32, u32), (u32, u32))>);

/// Layers' values kept in memory for the one pair that reads them next
/// (as its layers ahead), up to a number of bytes; a layer that does not
/// fit is read back from its file instead.
struct Handoff<T> {
    kept: parking_lot::Mutex<Kept<T>>,
    most: u64,
}

/// What a [`Handoff`] holds: values and their bytes by layer, and the
/// bytes in all.
struct Kept<T> {
    layers: HashMap<(u32, u32), (T, u64)>,
    bytes: u64,
}

impl<T> Handoff<T> {
    fn new(most: u64) -> Handoff<T> {
        Handoff {
            kept: parking_lot::Mutex::new(Kept {
                layers: HashMap::new(),
                bytes: 0,
            }),
            most,
        }
    }

    fn kept(&self) -> parking_lot::MutexGuard<'_, Kept<T>> {
        self.kept.lock()
    }

    /// Whether `bytes` more would fit.
    fn has_room(&self, bytes: u64) -> bool {
        self.kept().bytes + bytes <= self.most
    }

    /// Keeps `values` of `layer` (`bytes` of memory) if they fit.
    fn give(&self, layer: &Layer, values: T, bytes: u64) {
        let mut kept = self.kept();
        if kept.bytes + bytes <= self.most {
            kept.bytes += bytes;
            kept.layers
                .insert((layer.black, layer.white), (values, bytes));
        }
    }

    /// Whether the values of `layer` are kept.
    fn holds(&self, layer: &Layer) -> bool {
        self.kept().layers.contains_key(&(layer.black, layer.white))
    }

    /// The values of `layer`, if kept: they are not kept any longer.
    fn take(&self, layer: &Layer) -> Option<T> {
        let mut kept = self.kept();
        let (values, bytes) = kept.layers.remove(&(layer.black, layer.white))?;
        kept.bytes -= bytes;
        Some(values)
    }
}

/// Mismatches a check describes (it counts them all).
const EXAMPLES: usize = 10;

/// What [`verify`] found.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Verified {
    pub positions: u64,
    pub layers: u64,
    /// Layers whose distances to the end (`.dte` files) were checked too.
    pub dte_layers: u64,
    pub mismatches: u64,
    /// The first few mismatches, described.
    pub examples: Vec<String>,
}

/// Re-derives every stored value in `dir` from the stored values of its
/// successors (the best of them for the side to move, by the rules alone),
/// calling `progress(layers checked, of layers)` as it goes.
///
/// With a `journal` file, each checked pair of layers is recorded there as
/// it finishes, and a run started again with the same journal skips the
/// pairs already recorded (a whole 6 x 6 check takes hours).
///
/// # Errors
/// A missing, damaged or foreign file; a journal that cannot be written or
/// belongs to another kind of table.
pub fn verify(
    dir: &Path,
    threads: usize,
    journal: Option<&Path>,
    progress: &dyn Fn(u64, u64),
) -> Result<Verified, LayeredError> {
    verify_on(dir, threads, journal, progress, Ranks::Here)
}

/// [`verify`] with the pairs checked by `ranks`: here, one after another,
/// or by the workers of an MPI job, which read the directory themselves
/// and report what they found to this process (rank 0), which keeps the
/// journal. The pairs wait for nothing, so every worker is kept busy.
///
/// # Errors
/// As [`verify`]; a worker that cannot check its pair.
pub fn verify_on(
    dir: &Path,
    threads: usize,
    journal: Option<&Path>,
    progress: &dyn Fn(u64, u64),
    ranks: Ranks,
) -> Result<Verified, LayeredError> {
    let manifest = format::read_directory(dir)?;
    let kind = manifest.kind;
    let shape = shape_of(kind)?;
    let pairs = pair_layers(&shape);
    // The distances to the end are checked where the `.dte` files are
    // there, and they must be there for every layer or none.
    let with_dte: Vec<bool> = pairs
        .iter()
        .map(|layers| has_dte(dir, kind, layers))
        .collect::<Result<_, LayeredError>>()?;
    if with_dte.iter().any(|&d| d) {
        let missing: Vec<PathBuf> = pairs
            .iter()
            .flatten()
            .map(|l| Metric::Dte.path(dir, l.black, l.white))
            .filter(|path| std::fs::symlink_metadata(path).is_err())
            .collect();
        if let Some(first) = missing.first() {
            return Err(LayeredError::Layer(LayerError::Manifest(
                dir.to_path_buf(),
                format!(
                    "{} of its {} .dte files (distances to the end) are missing, {} the \
                     first: the tables are incomplete (`dodgem solve --dte {}` completes them)",
                    missing.len(),
                    pairs.iter().flatten().count(),
                    first.display(),
                    dir.display()
                ),
            )));
        }
    }
    // A pair made by the one pass has its distances to the end alone.
    let metrics: Vec<&[Metric]> = pairs
        .iter()
        .zip(&with_dte)
        .map(|(layers, &dte)| {
            Ok(match (dte, has(dir, kind, layers, Metric::Dtz)?) {
                (true, true) => &[Metric::Dtz, Metric::Dte][..],
                (true, false) => &[Metric::Dte][..],
                _ => &[Metric::Dtz][..],
            })
        })
        .collect::<Result<_, LayeredError>>()?;
    let mut journal = match journal {
        Some(path) => Some(Journal::open(
            path,
            kind,
            &journal_binding(dir, &manifest),
            journal_limit(&pairs),
        )?),
        None => None,
    };
    // What each pair's check reads (its files and those of the layers
    // ahead), for a journal that records it: a record of other files is
    // not taken.
    let fingerprints: Vec<Vec<u64>> = match &journal {
        None => vec![Vec::new(); pairs.len()],
        Some(_) => pairs
            .iter()
            .zip(&metrics)
            .map(|(layers, metrics)| {
                metrics
                    .iter()
                    .map(|&m| pair_fingerprint(dir, &manifest, &shape, layers, m))
                    .collect::<Result<Vec<u64>, LayerError>>()
            })
            .collect::<Result<_, _>>()?,
    };
    let total: u64 = pairs
        .iter()
        .zip(&metrics)
        .map(|(layers, metrics)| (layers.len() * metrics.len()) as u64)
        .sum();
    let recorded = |journal: &Option<Journal>, i: usize, metric: Metric| {
        let m = metrics[i].iter().position(|&x| x == metric)?;
        journal
            .as_ref()
            .and_then(|j| j.done.get(&journal_name(&pairs[i], metric)).copied())
            .filter(|entry| entry.files == fingerprints[i][m])
    };
    // Both metrics are checked in one walk over the successors; a pair
    // with either not in the journal is walked again for both.
    let in_journal: Vec<bool> = (0..pairs.len())
        .map(|i| {
            metrics[i]
                .iter()
                .all(|&m| recorded(&journal, i, m).is_some())
        })
        .collect();
    let mut verified = Verified::default();
    let mut checked = 0;
    // Counts pair `i` from the journal and from what its walk found (for
    // the metrics the journal does not have, which are recorded there).
    let mut take = |i: usize, walked: Option<Walked>| -> Result<(), LayeredError> {
        let layers = &pairs[i];
        for &metric in metrics[i] {
            let found = match recorded(&journal, i, metric) {
                Some(done) => {
                    let mut found = Verified {
                        positions: done.positions,
                        mismatches: done.mismatches,
                        ..Verified::default()
                    };
                    if done.mismatches > 0 {
                        found.examples.push(format!(
                            "layers {}: {} mismatches (recorded in the journal by an earlier run)",
                            journal_name(layers, metric),
                            done.mismatches
                        ));
                    }
                    found
                }
                None => {
                    let found = walked
                        .as_ref()
                        .and_then(|walked| walked.of(metric))
                        .ok_or_else(|| {
                            LayeredError::Worker(format!(
                                "the pair of layers {} was checked without its {}",
                                journal_name(layers, Metric::Dtz),
                                metric.name()
                            ))
                        })?
                        .clone();
                    if let Some(journal) = journal.as_mut() {
                        let m = metrics[i].iter().position(|&x| x == metric).unwrap_or(0);
                        journal.record(
                            &journal_name(layers, metric),
                            JournalEntry {
                                files: fingerprints[i][m],
                                positions: found.positions,
                                mismatches: found.mismatches,
                            },
                        )?;
                    }
                    found
                }
            };
            if metric == metrics[i][0] {
                verified.positions += found.positions;
                verified.layers += layers.len() as u64;
            }
            if metric == Metric::Dte {
                verified.dte_layers += layers.len() as u64;
            }
            verified.add_mismatches(found);
            checked += layers.len() as u64;
        }
        progress(checked, total);
        Ok(())
    };
    for i in (0..pairs.len()).filter(|&i| in_journal[i]) {
        // Not walked again, but read: every block against its checks.
        for layer in &pairs[i] {
            // The pair's metrics: a pair of the one pass has no `.dtz`.
            let contents = std::iter::once(Content::Wdl)
                .chain(metrics[i].iter().map(|&metric| Content::Distance(metric)));
            for content in contents {
                format::LayerFile::open_in(dir, &manifest, kind, content, layer)?
                    .ok_or_else(|| missing(content.path(dir, layer.black, layer.white)))?
                    .check_blocks()?;
            }
        }
        take(i, None)?;
    }
    let maker = Maker::Verify {
        shape: shape.clone(),
        dir: dir.to_path_buf(),
        kind,
    };
    match ranks {
        Ranks::Here => {
            for i in (0..pairs.len()).filter(|&i| !in_journal[i]) {
                take(i, maker.make(&pairs[i], threads)?.checked)?;
            }
        }
        #[cfg(feature = "mpi")]
        Ranks::Mpi(cluster) => {
            let jobs: Vec<schedule::Job> = pairs
                .iter()
                .map(|layers| schedule::Job {
                    after: Vec::new(),
                    bytes: layers.iter().map(|l| l.slots).sum(),
                })
                .collect();
            let mut error = None;
            manage_pairs(
                cluster,
                &jobs,
                in_journal.clone(),
                &pairs,
                &maker,
                |_| schedule::Flow::Continue,
                |i, _, made| match made.and_then(|made| take(i, made.checked)) {
                    Ok(()) => schedule::Flow::Continue,
                    Err(e) => {
                        error.get_or_insert(e);
                        schedule::Flow::Stop
                    }
                },
            )?;
            if let Some(e) = error {
                return Err(e);
            }
        }
        #[cfg(not(feature = "mpi"))]
        Ranks::_Never(never, _) => match never {},
    }
    Ok(verified)
}

/// Whether every layer of the pair has its distances to the end.
fn has_dte(dir: &Path, kind: Kind, layers: &[Layer]) -> Result<bool, LayeredError> {
    has(dir, kind, layers, Metric::Dte)
}

/// Whether every layer of the pair has its distances of `metric`.
fn has(dir: &Path, kind: Kind, layers: &[Layer], metric: Metric) -> Result<bool, LayeredError> {
    for layer in layers {
        if format::read_values_header(dir, kind, metric, layer)?.is_none() {
            return Ok(false);
        }
    }
    Ok(true)
}

impl Verified {
    /// Adds `found`'s positions to this count (for one metric).
    fn add(&mut self, found: Verified) {
        self.positions += found.positions;
        self.add_mismatches(found);
    }

    /// Adds `found`'s mismatches and keeps the first few described.
    fn add_mismatches(&mut self, found: Verified) {
        self.mismatches += found.mismatches;
        for example in found.examples {
            if self.examples.len() < EXAMPLES {
                self.examples.push(example);
            }
        }
    }

    /// Notes a slot whose stored value is not the one its successors
    /// give.
    fn mismatch(&mut self, describe: impl FnOnce() -> String) {
        self.mismatches += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(describe());
        }
    }
}

/// What one walk over a pair's successors found: for the distances to
/// progress and, where they were checked, the distances to the end.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Walked {
    progress: Verified,
    end: Option<Verified>,
}

impl Walked {
    /// Nothing found yet, for the distances to progress and, with `end`,
    /// to the end.
    fn new(end: bool) -> Walked {
        Walked {
            progress: Verified::default(),
            end: end.then(Verified::default),
        }
    }

    fn add(&mut self, found: Walked) {
        self.progress.add(found.progress);
        if let (Some(total), Some(found)) = (self.end.as_mut(), found.end) {
            total.add(found);
        }
    }

    fn of(&self, metric: Metric) -> Option<&Verified> {
        match metric {
            Metric::Dtz => Some(&self.progress),
            Metric::Dte => self.end.as_ref(),
        }
    }
}

/// Checks one pair of layers against their successors' stored values:
/// the distances to progress and, with `end`, the distances to the end,
/// both in one walk over the successors.
fn check_pair(
    dir: &Path,
    kind: Kind,
    shape: &Shape,
    layers: &[Layer],
    end: bool,
    threads: usize,
) -> Result<Walked, LayeredError> {
    let read = |metric: Metric, layer: &Layer| {
        format::read_values(dir, kind, metric, layer).map(|(values, _)| values)
    };
    let read_pair = |metric: Metric| {
        layers
            .iter()
            .map(|layer| read(metric, layer))
            .collect::<Result<Vec<_>, _>>()
    };
    // The one pass writes no distances to progress.
    let with_progress = has(dir, kind, layers, Metric::Dtz)?;
    let progress = if with_progress {
        Some(read_pair(Metric::Dtz)?)
    } else {
        None
    };
    let to_end = if end {
        Some(read_pair(Metric::Dte)?)
    } else {
        None
    };
    let mut walked = Walked::new(end);
    for (i, layer) in layers.iter().enumerate() {
        let partner = layers.len() - 1 - i;
        let ahead = ahead_of(shape, layer);
        let ahead_progress = match (&ahead, with_progress) {
            (Some(ahead), true) => Some(read(Metric::Dtz, ahead)?),
            _ => None,
        };
        let ahead_end = match (&ahead, end) {
            (Some(ahead), true) => Some(read(Metric::Dte, ahead)?),
            _ => None,
        };
        let checker = Checker {
            shape,
            rules: kind.rules,
            layer,
            partner: &layers[partner],
            ahead: ahead.as_ref(),
            progress: progress.as_ref().map(|progress| Stored {
                values: &progress[i],
                partner: &progress[partner],
                ahead: ahead_progress.as_ref(),
            }),
            end: to_end.as_ref().map(|to_end| Stored {
                values: &to_end[i],
                partner: &to_end[partner],
                ahead: ahead_end.as_ref(),
            }),
        };
        walked.add(checker.run(threads));
    }
    Ok(walked)
}

/// The names of a pair of layers, as the verify journal records them
/// (`.dte` after each for the distances to the end).
fn journal_name(layers: &[Layer], metric: Metric) -> String {
    let suffix = match metric {
        Metric::Dtz => "",
        Metric::Dte => ".dte",
    };
    layers
        .iter()
        .map(|layer| format!("{}{suffix}", layer.name()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the journal records of one checked pair.
#[derive(Clone, Copy, Debug)]
struct JournalEntry {
    /// What was checked: [`pair_fingerprint`].
    files: u64,
    positions: u64,
    mismatches: u64,
}

/// The error of a file that is missing.
fn missing(path: PathBuf) -> LayerError {
    LayerError::Io(path, std::io::Error::from(std::io::ErrorKind::NotFound))
}

/// The line that binds a verify journal to the directory it checks: the
/// directory's full path and its table set (none before format 3).
fn journal_binding(dir: &Path, manifest: &format::Manifest) -> String {
    let full = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let set = manifest
        .set
        .map_or_else(|| "none".to_string(), |set| format!("{set:016x}"));
    format!("tables {:?} set {set}", full.to_string_lossy().into_owned())
}

/// The longest journal the check of `pairs` can write: a line a pair and
/// metric, with room to spare.
fn journal_limit(pairs: &[Vec<Layer>]) -> u64 {
    4096 + 2 * pairs.len() as u64 * 256
}

/// What the check of a pair's `metric` reads, identified: the
/// [`format::LayerFile::fingerprint`] of the pair's `.wdl` and distance
/// files and those of the layers ahead, mixed.
fn pair_fingerprint(
    dir: &Path,
    manifest: &format::Manifest,
    shape: &Shape,
    layers: &[Layer],
    metric: Metric,
) -> Result<u64, LayerError> {
    let mut all: Vec<Layer> = layers.to_vec();
    all.extend(layers.iter().filter_map(|l| ahead_of(shape, l)));
    let mut digest = 0u64;
    for layer in &all {
        for content in [Content::Wdl, Content::Distance(metric)] {
            let file = format::LayerFile::open_in(dir, manifest, manifest.kind, content, layer)?
                .ok_or_else(|| missing(content.path(dir, layer.black, layer.white)))?;
            digest = digest.rotate_left(7) ^ file.fingerprint();
        }
    }
    Ok(digest)
}

/// The verify journal: a first line naming the kind of table, a second
/// naming the directory ([`journal_binding`]), then one line per checked
/// pair, `pair <layer names> files <what was read> positions <n>
/// mismatches <n>`, each flushed to disk before the next pair starts.
struct Journal {
    path: PathBuf,
    file: std::fs::File,
    done: std::collections::HashMap<String, JournalEntry>,
}

impl Journal {
    /// Opens (or starts) the journal at `path` of the check of `kind`'s
    /// tables in the directory `binding` names; a journal longer than
    /// `limit` bytes is refused unread.
    fn open(path: &Path, kind: Kind, binding: &str, limit: u64) -> Result<Journal, LayeredError> {
        use std::io::Write;
        let heading = format!(
            "dodgem verify journal 2 size {} rules {} max-cars {}",
            kind.size,
            kind.rules.name(),
            kind.max_cars
        );
        let bad = |why: String| LayeredError::Journal(path.to_path_buf(), why);
        let io = |e| LayeredError::Io(path.to_path_buf(), e);
        let mut done = std::collections::HashMap::new();
        let existing =
            match crate::files::open_regular(path) {
                Ok(file) => {
                    let length = file.metadata().map_err(io)?.len();
                    if length > limit {
                        return Err(bad(format!(
                            "bad content: {length} bytes, far more than a verify journal of these \
                         tables takes"
                        )));
                    }
                    let mut bytes = Vec::with_capacity(length as usize);
                    std::io::Read::read_to_end(&mut std::io::Read::take(&file, limit), &mut bytes)
                        .map_err(io)?;
                    Some(String::from_utf8(bytes).map_err(|_| {
                        bad("bad content: not text, so not a verify journal".into())
                    })?)
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
                    return Err(bad(
                    "is not a regular file (a journal must be one: a FIFO or device is refused)"
                        .into(),
                ));
                }
                Err(e) => return Err(io(e)),
            };
        if let Some(text) = &existing {
            let mut lines = text.lines();
            let first = lines.next().unwrap_or_default();
            if first != heading {
                return Err(bad(if first.starts_with("dodgem verify journal") {
                    format!(
                        "is the journal of another check (its first line is {first:?}, this \
                         check's {heading:?}): name another journal, or remove it to check again"
                    )
                } else {
                    format!("bad content: not a verify journal (its first line is {first:?})")
                }));
            }
            let second = lines.next().unwrap_or_default();
            if second != binding {
                return Err(bad(format!(
                    "is the journal of the check of other tables (it records {second:?}, this \
                     check is of {binding:?}): name another journal, or remove it to check again"
                )));
            }
            let records: Vec<&str> = lines.collect();
            let cut_short = !text.ends_with('\n');
            for (i, line) in records.iter().enumerate() {
                match parse_journal_line(line) {
                    Some((names, entry)) => {
                        done.insert(names, entry);
                    }
                    // A last line cut short by a kill is not a record:
                    // that pair is checked again.
                    None if cut_short && i + 1 == records.len() => {}
                    None => {
                        return Err(bad(format!(
                            "bad content: line {} is not a record of a checked pair: {:?}",
                            i + 3,
                            line.chars().take(80).collect::<String>()
                        )));
                    }
                }
            }
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        if existing.is_none() {
            writeln!(file, "{heading}\n{binding}").map_err(io)?;
        } else if let Some(text) = existing.as_deref().filter(|t| !t.ends_with('\n')) {
            // A line cut short is dropped, so the next record starts on
            // a line of its own and the journal holds whole lines only.
            let whole = text.rfind('\n').map_or(0, |at| at + 1);
            file.set_len(whole as u64).map_err(io)?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            file,
            done,
        })
    }

    fn record(&mut self, names: &str, entry: JournalEntry) -> Result<(), LayeredError> {
        use std::io::Write;
        let io = |e| LayeredError::Io(self.path.clone(), e);
        writeln!(
            self.file,
            "pair {names} files {:016x} positions {} mismatches {}",
            entry.files, entry.positions, entry.mismatches
        )
        .map_err(io)?;
        self.file.sync_data().map_err(io)?;
        self.done.insert(names.to_string(), entry);
        Ok(())
    }
}

fn parse_journal_line(line: &str) -> Option<(String, JournalEntry)> {
    let rest = line.strip_prefix("pair ")?;
    let (names, rest) = rest.split_once(" files ")?;
    let (files, counts) = rest.split_once(" positions ")?;
    let (positions, mismatches) = counts.split_once(" mismatches ")?;
    (files.len() == 16).then_some(())?;
    Some((
        names.to_string(),
        JournalEntry {
            files: u64::from_str_radix(files, 16).ok()?,
            positions: positions.parse().ok()?,
            mismatches: mismatches.parse().ok()?,
        },
    ))
}

/// White sets a unit of [`Checker::run`]'s work covers.
const WHITE_SETS_A_UNIT: usize = 128;

/// One metric's stored values: of a layer, of its partner and of the
/// layer ahead.
struct Stored<'a> {
    values: &'a Values,
    partner: &'a Values,
    ahead: Option<&'a Values>,
}

impl Stored<'_> {
    /// The value a move to `child` gives the side to move, counted in
    /// `metric` (a forward move is progress; a finish ends the game).
    fn through(&self, metric: Metric, child: Child) -> Dtz {
        let (value, progress) = match child {
            Child::Finish => (Dtz::Loss(0), true),
            Child::Forward(slot) => (
                self.ahead
                    .expect("a forward move has a layer ahead")
                    .get(slot),
                metric == Metric::Dtz,
            ),
            Child::Sideways(slot) => (self.partner.get(slot), false),
        };
        value.through(progress)
    }
}

/// Checks one layer against its successors' stored values.
struct Checker<'a> {
    shape: &'a Shape,
    rules: Rules,
    layer: &'a Layer,
    partner: &'a Layer,
    ahead: Option<&'a Layer>,
    /// The distances to progress, where the tables have them.
    progress: Option<Stored<'a>>,
    /// The distances to the end, where they are checked too: each must
    /// also share its win, draw or loss with the distance to progress.
    end: Option<Stored<'a>>,
}

impl Checker<'_> {
    /// Checks every slot of the layer. The work goes white set by white
    /// set (a column of each block at a time): every child of a position
    /// with white set `w` lies in row `w` of a block of the partner layer
    /// or of the layer ahead, so a run of rows keeps the children's values
    /// in the cache instead of reaching across gigabytes for each move.
    fn run(&self, threads: usize) -> Walked {
        let units: Vec<(&Block, Range<u64>)> = self
            .layer
            .blocks
            .iter()
            .flat_map(|block| {
                (0..block.white_sets)
                    .step_by(WHITE_SETS_A_UNIT)
                    .map(move |w| {
                        (
                            block,
                            w..(w + WHITE_SETS_A_UNIT as u64).min(block.white_sets),
                        )
                    })
            })
            .collect();
        let results = parallel(threads, units.len(), |u, out| {
            let (block, whites) = &units[u];
            let white_sets = self.shape.white_sets(block);
            let mut found = Walked::new(self.end.is_some());
            for (bi, &black) in self.shape.black_sets(block).iter().enumerate() {
                let bi = bi as u64;
                for wi in whites.clone() {
                    let white = white_sets[wi as usize];
                    let slot = block.slot(bi, wi);
                    // A slot that is no position holds whatever coded
                    // shortest.
                    if black & white != 0 {
                        continue;
                    }
                    let describe = |what: &str, stored: u16, expected: u16| {
                        format!(
                            "layer {}{what} slot {slot} (black {black:#x}, white {white:#x}): stored {:?}, successors give {:?}",
                            self.layer.name(),
                            decode(stored),
                            decode(expected)
                        )
                    };
                    let (progress, end) = self.derive(block, bi, black, white, wi);
                    let mut stored = None;
                    if let (Some(values), Some(progress)) = (&self.progress, progress) {
                        let code = values.values.code(slot);
                        let expected = crate::solver::index::value::encode(progress);
                        found.progress.positions += 1;
                        if code != expected {
                            found.progress.mismatch(|| describe("", code, expected));
                        }
                        stored = Some(code);
                    }
                    if let (Some(to_end), Some(end), Some(found)) =
                        (&self.end, end, found.end.as_mut())
                    {
                        let stored_end = to_end.values.code(slot);
                        let expected = crate::solver::index::value::encode(end);
                        found.positions += 1;
                        if stored_end != expected
                            || stored.is_some_and(|s| decode(stored_end).wdl() != decode(s).wdl())
                        {
                            found.mismatch(|| {
                                describe(" (distance to the end)", stored_end, expected)
                            });
                        }
                    }
                }
            }
            out.push(found);
        });
        let mut total = Walked::new(self.end.is_some());
        for found in results {
            total.add(found);
        }
        total
    }

    /// The values the position's successors give it: its distance to
    /// progress and, where checked, its distance to the end.
    fn derive(
        &self,
        block: &Block,
        black_index: u64,
        black: u64,
        white: u64,
        white_index: u64,
    ) -> (Option<Dtz>, Option<Dtz>) {
        let keep = |best: &mut Option<Dtz>, mine: Dtz| {
            if best.is_none_or(|b| mine.preference() > b.preference()) {
                *best = Some(mine);
            }
        };
        let (mut progress, mut end) = (None, None);
        let moves = self.shape.children(
            block,
            black_index,
            black,
            white,
            white_index,
            self.partner,
            self.ahead,
            |child| {
                if let Some(values) = &self.progress {
                    keep(&mut progress, values.through(Metric::Dtz, child));
                }
                if let Some(to_end) = &self.end {
                    keep(&mut end, to_end.through(Metric::Dte, child));
                }
            },
        );
        if moves == 0 {
            let blocked = match self.rules {
                Rules::Textbook => Dtz::Loss(0),
                Rules::Classic => Dtz::Win(0),
            };
            return (
                self.progress.as_ref().map(|_| blocked),
                self.end.as_ref().map(|_| blocked),
            );
        }
        (progress, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! The layered solve of a whole board, from the end of the game back to
//! the start ([`solve`], [`solve_on`]): the pairs handed out as their
//! layers ahead are done, here or to the ranks of an MPI job
//! ([`Ranks`], `serve`), each made by a [`Maker`] (solved, given its
//! distances, or checked) and its files written as soon as it is done, so
//! a run killed at any moment continues from the last finished pair.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::schedule;
use crate::solver::files::format::{self, Content, Kind, LayerError, Metric, read_wdl};
use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::{Tally, WdlBits};

use super::pair::{Ends, Handoff, pass_one_pair, solve_one_pair};
use super::plan::{
    LayeredError, Outcome, PASS_BYTES_PER_SLOT, PASS_SMALLEST_BUDGET, PairDone, Plan,
    SOLVE_BYTES_PER_SLOT, ahead_of, pair_layers, read_as_ahead, shape_of,
};
use crate::solver::checks::journal::journal_name;
use crate::solver::checks::pair_check::{Walked, check_pair, has_dte};

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
    // Where the floor, not the largest pair, sets the budget, the pairs
    // are small: the allocator's own heaps serve their blocks again
    // without a page fault (5 x 5: about a second of CPU), and the peak
    // stays far below the floor. Elsewhere large blocks go back to the
    // system as they are freed, or the heaps would hold far more than
    // the budget.
    if !plan.with_dte || PASS_BYTES_PER_SLOT * largest > PASS_SMALLEST_BUDGET {
        crate::memory::map_large_blocks();
    }
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

/// Where a pass's pairs are made: by this process, or by the workers of
/// an MPI job that this process (rank 0) manages.
#[derive(Clone, Copy, Debug)]
pub enum Ranks<'a> {
    Here,
    #[cfg(feature = "mpi")]
    Mpi(&'a super::cluster::Cluster),
    #[doc(hidden)]
    #[cfg(not(feature = "mpi"))]
    _Never(std::convert::Infallible, std::marker::PhantomData<&'a ()>),
}

/// What making one pair gave.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(in crate::solver) struct Made {
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
    pub(in crate::solver) checked: Option<Walked>,
}

/// How a pass makes one pair's files: solving it (and deriving its
/// distances to the end where the layers ahead have theirs), or deriving
/// the distances of a solved pair; or, making none, how it checks a
/// pair's stored values. In this process or in a worker.
pub(in crate::solver) enum Maker {
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
    pub(super) fn distances(shape: Arc<Shape>, dir: &Path, kind: Kind, keep: u64) -> Maker {
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
    pub(in crate::solver) fn make(
        &self,
        layers: &[Layer],
        threads: usize,
    ) -> Result<Made, LayeredError> {
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
pub fn serve(cluster: &super::cluster::Cluster, threads: usize) {
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
pub(super) struct Pass<'a> {
    pub(super) shape: &'a Shape,
    pub(super) dir: &'a Path,
    pub(super) kind: Kind,
    pub(super) metric: Metric,
    pub(super) threads: usize,
    /// Memory a pair takes while it is made, a slot.
    pub(super) bytes_per_slot: u64,
    /// Memory the pairs being made may take at once.
    pub(super) memory: u64,
    pub(super) stop_after_layers: Option<u64>,
    /// Layers whose files this process wrote (a solve that derived their
    /// distances to the end): found finished, they are not read again.
    pub(super) fresh: &'a HashMap<(u32, u32), (u32, u32)>,
}

/// Works through `pairs` (in the order of [`pair_layers`]): a pair whose
/// `pass.metric` files are all in `dir` already is reported as found there;
/// any other is made by `maker` (here, given the threads it may use, or by
/// a worker of `ranks`) once the pairs its forward moves reach are done,
/// several at a time where they are small enough (see [`schedule`]): each
/// takes about `bytes_per_slot` bytes a slot while it is made. Starts no
/// pair once `stop_after_layers` files have been written or are being
/// written, if given; calls `progress` after each pair, in the order they
/// finish.
pub(super) fn each_pair(
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
                // A run asked to stop part-way stops at the same pair
                // every time.
                in_order: stop_after_layers.is_some(),
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
/// ([`super::cluster::Cluster::manage`]), each as `maker`'s task, and
/// gives `finished` each worker's report read back (with the rank that
/// made it), or why it could not be.
///
/// # Errors
/// Every worker lost with pairs left.
#[cfg(feature = "mpi")]
pub(in crate::solver) fn manage_pairs(
    cluster: &super::cluster::Cluster,
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
pub(super) fn pair_jobs(
    shape: &Shape,
    pairs: &[Vec<Layer>],
    bytes_per_slot: u64,
) -> Vec<schedule::Job> {
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
pub(super) fn memory_budget() -> u64 {
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

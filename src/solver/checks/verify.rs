//! The independent check of a finished directory ([`verify`],
//! `dodgem solve --verify`): every stored value re-derived from its
//! successors' stored values, pair by pair, here or on the ranks of an
//! MPI job, with a journal to resume from.

use std::path::{Path, PathBuf};

use crate::solver::files::format::{self, Content, LayerError, Metric};

use super::journal::{
    Journal, JournalEntry, journal_binding, journal_limit, journal_name, missing, pair_fingerprint,
};
use super::pair_check::{Verified, Walked, has, has_dte};
use crate::solver::run::plan::{LayeredError, pair_layers, shape_of};
#[cfg(feature = "mpi")]
use crate::solver::run::schedule;
#[cfg(feature = "mpi")]
use crate::solver::run::solve::manage_pairs;
use crate::solver::run::solve::{Maker, Ranks};

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

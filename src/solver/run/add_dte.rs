//! The distances to the end added to a directory of the value pass
//! ([`add_dte`], `dodgem solve --dte`), pair by pair in the solve's
//! order.

use std::collections::HashMap;
use std::path::Path;

use crate::solver::files::format::{self, LayerError, Metric, read_header};

use super::plan::{DTE_BYTES_PER_SLOT, LayeredError, Outcome, PairDone, pair_layers, shape_of};
use super::solve::{Maker, Pass, Ranks, each_pair, memory_budget};

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

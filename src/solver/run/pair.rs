//! One pair of layers made: solved by the one pass or the value pass,
//! given its distances to the end by the distance pass, its layers ahead
//! read from their files or taken from memory where the pair before
//! left them ([`Handoff`], [`Ends`]).

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use crate::board::Rules;
use crate::solver::files::format::{self, Content, Kind, LayerError, Metric, read_wdl};
use crate::solver::index::layers::{Layer, Shape};
use crate::solver::index::value::{Tally, Values, WdlBits};
use crate::solver::passes::dte::{self, DteSide};
use crate::solver::passes::pass::{self, PassSide};
use crate::solver::passes::retro::{Side, Solved, solve_pair};
use crate::solver::threads;

use super::plan::{LayeredError, Plan, ahead_of, read_as_ahead};

/// Solves and writes one pair, taking the win/draw/loss of the layers
/// ahead from `wdl` where kept there, else from their files; returns
/// each layer's values and the bytes of its files.
pub(super) fn solve_one_pair(
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
    let written = each_at_once(layers.len(), |i| {
        let (solved, layer) = (&solved[i], &layers[i]);
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
        .map_err(|e| LayeredError::Io(format::layer_path(&plan.dir, layer.black, layer.white), e))
    })?;
    phases[2] = started.elapsed().as_secs_f64() - solving;
    Ok(solved.into_iter().zip(written).collect())
}

/// Solves the layers of one pair by the one pass ([`pass`]), each with the
/// layer its forward moves reach, whose distances to the end `read` gives.
pub(super) fn pass_pair(
    shape: &Shape,
    rules: Rules,
    threads: usize,
    layers: &[Layer],
    read: &(dyn Fn(&Layer) -> Result<Values, LayeredError> + Sync),
    width: pass::Width,
) -> Result<Vec<Solved>, LayeredError> {
    let ahead: Vec<Option<Layer>> = layers.iter().map(|l| ahead_of(shape, l)).collect();
    pass::solve_pair(
        shape,
        rules,
        threads,
        &PassSide::of(layers, &ahead),
        read,
        width,
    )
}

/// Solves one pair by the one pass ([`pass`]) and writes each layer's
/// `.wdl` and `.dte` files, taking the distances to the end of the layers
/// ahead from `ends` where kept there, else from their files; returns
/// each layer's tally and file bytes and its longest win and loss, and
/// fills in the phases' seconds (reading the layers ahead is counted in
/// the solving).
pub(super) fn pass_one_pair(
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
            None => {
                Ok(format::read_values_on(&plan.dir, plan.kind, Metric::Dte, layer, threads)?.0)
            }
        }
    };
    let solved = pass_pair(
        shape,
        plan.kind.rules,
        threads,
        layers,
        &read,
        pass::Width::starting(plan.two_bytes),
    )?;
    phases[1] = started.elapsed().as_secs_f64();
    // Compress and write both layers at once, each its `.wdl` file first:
    // a layer whose `.dte` file is there is finished.
    let written = each_at_once(layers.len(), |i| -> Result<u64, LayeredError> {
        let (solved, layer) = (&solved[i], &layers[i]);
        let computed;
        let positions = match &solved.positions {
            Some(positions) => positions,
            None => {
                computed = format::positions_of(shape, layer);
                &computed
            }
        };
        let mut bytes = 0;
        for content in [Content::Wdl, Content::Distance(Metric::Dte)] {
            bytes += format::write_file(
                &plan.dir,
                plan.kind,
                content,
                layer,
                &solved.values,
                positions,
                solved.tally,
                content.block_slots(),
                1,
            )
            .map_err(|e| LayeredError::Io(content.path(&plan.dir, layer.black, layer.white), e))?;
        }
        Ok(bytes)
    })?;
    phases[2] = started.elapsed().as_secs_f64() - phases[1];
    let mut longest = Vec::new();
    let mut tallies = Vec::new();
    for ((solved, layer), bytes) in solved.into_iter().zip(layers).zip(written) {
        longest.push(((layer.black, layer.white), solved.longest));
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
pub(super) fn solve_pair_from(
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
    let values: Vec<Option<WdlBits>> =
        each_at_once(ahead.len(), |i| ahead[i].as_ref().map(read).transpose())?;
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

/// Derives the distances to the end of the layers of one pair from their
/// solved values `own`, reading the distances to the end of the layers
/// ahead with `read` (both are dropped once the pass has seeded from
/// them); `phases[0..2]` get the seconds spent reading and solving.
pub(super) fn dte_pair_from(
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

/// The distances to the end as they are derived pair by pair: a layer's
/// go from the pair that made them to the one pair that reads them as
/// its layer ahead (in memory while they fit).
pub(in crate::solver) struct Ends {
    handoff: Handoff<Values>,
}

impl Ends {
    pub(super) fn new(most: u64) -> Ends {
        Ends {
            handoff: Handoff::new(most),
        }
    }

    /// Whether the layers ahead of `layers` have their distances to the
    /// end, kept or in their files.
    pub(super) fn ready(
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
    pub(super) fn derive(
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
            longest.push(((layer.black, layer.white), solved.longest));
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
pub(in crate::solver) struct Handoff<T> {
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
    pub(super) fn new(most: u64) -> Handoff<T> {
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
    pub(super) fn has_room(&self, bytes: u64) -> bool {
        self.kept().bytes + bytes <= self.most
    }

    /// Keeps `values` of `layer` (`bytes` of memory) if they fit.
    pub(super) fn give(&self, layer: &Layer, values: T, bytes: u64) {
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

/// `work(i)` for each `i` in `0..n` on a thread of its own, all at once
/// (a pair's layers are read and written side by side; their work
/// borrows from the job's threads, [`threads::spawn`]): the results in
/// order, or the first error.
fn each_at_once<R: Send, E: Send>(
    n: usize,
    work: impl Fn(usize) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E> {
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|i| threads::spawn(scope, move || work(i)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a layer's thread panicked"))
            .collect()
    })
}

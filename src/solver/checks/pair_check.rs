//! The check of one pair of layers against its successors' stored values
//! ([`check_pair`]), and what the checks found ([`Verified`]).

use std::ops::Range;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::board::Rules;
use crate::solver::files::format::{self, Kind, Metric};
use crate::solver::index::layers::{Block, Child, Layer, Shape};
use crate::solver::index::value::{Dtz, Values, decode};
use crate::solver::parallel;

use crate::solver::run::plan::{LayeredError, ahead_of};

/// Mismatches a check describes (it counts them all).
const EXAMPLES: usize = 10;

/// What [`verify`](super::verify::verify) found.
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

/// Whether every layer of the pair has its distances to the end.
pub(in crate::solver) fn has_dte(
    dir: &Path,
    kind: Kind,
    layers: &[Layer],
) -> Result<bool, LayeredError> {
    has(dir, kind, layers, Metric::Dte)
}

/// Whether every layer of the pair has its distances of `metric`.
pub(super) fn has(
    dir: &Path,
    kind: Kind,
    layers: &[Layer],
    metric: Metric,
) -> Result<bool, LayeredError> {
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
    pub(super) fn add_mismatches(&mut self, found: Verified) {
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
pub(in crate::solver) struct Walked {
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

    pub(super) fn of(&self, metric: Metric) -> Option<&Verified> {
        match metric {
            Metric::Dtz => Some(&self.progress),
            Metric::Dte => self.end.as_ref(),
        }
    }
}

/// Checks one pair of layers against their successors' stored values:
/// the distances to progress and, with `end`, the distances to the end,
/// both in one walk over the successors.
pub(in crate::solver) fn check_pair(
    dir: &Path,
    kind: Kind,
    shape: &Shape,
    layers: &[Layer],
    end: bool,
    threads: usize,
) -> Result<Walked, LayeredError> {
    let read = |metric: Metric, layer: &Layer| {
        format::read_values_on(dir, kind, metric, layer, threads).map(|(values, _)| values)
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

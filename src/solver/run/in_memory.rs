//! Whole solves in memory, for the boards that solve in a moment (the
//! built-in 3 x 3 and 4 x 4 tables): [`solve_in_memory`],
//! [`dte_in_memory`] (and, for tests, `pass_in_memory`).

use std::collections::HashMap;

use crate::solver::files::format::Kind;
use crate::solver::index::layers::Layer;
use crate::solver::index::value::{Values, WdlBits};

#[cfg(test)]
use super::pair::pass_pair;
use super::pair::{dte_pair_from, solve_pair_from};
use super::plan::{LayeredError, pair_layers, shape_of};

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
    width: crate::solver::passes::pass::Width,
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
        let pair = pass_pair(&shape, kind.rules, threads, &layers, &read, width)?;
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

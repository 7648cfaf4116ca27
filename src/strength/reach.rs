//! Which positions can arise from the start: a forward walk over the
//! layered index (the one the solved tables use), total progress by total
//! progress, with every reachable position visited exactly once.
//!
//! Every move keeps a side's progress or raises it by one, so a position
//! reachable with total progress `t` is reached from positions of total
//! `t` or `t - 1`. The walk therefore closes total `t` completely (a
//! search over the sideways moves inside it, starting from what the moves
//! of total `t - 1` brought in), visits its positions and forgets them
//! before it moves on: only two totals' bitmaps are held at once.
//!
//! The index stores Black-to-move positions only. A White-to-move position
//! is kept as its mirror image (reflected in the diagonal, colours
//! swapped), which is a Black-to-move slot, so each layer carries two
//! bitmaps: "this slot is reachable with Black to move" and "the mirror of
//! this slot is reachable with White to move". Black's moves from either
//! lead, by [`Shape::children`], to a slot of the other bitmap.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::board::{self, Color, Position};
use crate::solver::{Child, Dtz, Layer, LayerError, Shape, Tables};

/// One layer's two bitmaps: index 0 Black to move, 1 White to move.
struct LayerBits {
    layer: Layer,
    bits: [Vec<AtomicU64>; 2],
}

impl LayerBits {
    fn new(layer: Layer) -> LayerBits {
        let words = layer.slots.div_ceil(64) as usize;
        let bitmap = || (0..words).map(|_| AtomicU64::new(0)).collect();
        LayerBits {
            layer,
            bits: [bitmap(), bitmap()],
        }
    }

    /// Sets a bit; returns whether it was clear.
    fn set(&self, side: usize, slot: u64) -> bool {
        let bit = 1 << (slot % 64);
        self.bits[side][(slot / 64) as usize].fetch_or(bit, Ordering::Relaxed) & bit == 0
    }

    /// The set bits of one bitmap, in slot order.
    fn slots(&self, side: usize) -> impl Iterator<Item = u64> + '_ {
        self.bits[side].iter().enumerate().flat_map(|(i, word)| {
            let mut rest = word.load(Ordering::Relaxed);
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let slot = i as u64 * 64 + u64::from(rest.trailing_zeros());
                    rest &= rest - 1;
                    slot
                })
            })
        })
    }
}

/// The layers of one total progress, by `(black, white)` progress.
type Total = HashMap<(u32, u32), LayerBits>;

/// Every layer with this total progress (empty layers left out).
fn total_layers(shape: &Shape, total: u32) -> Total {
    let (low, high) = (shape.min_progress(), shape.max_progress());
    (low..=high)
        .filter_map(|a| {
            let b = total.checked_sub(a)?;
            (low..=high).contains(&b).then(|| shape.layer(a, b))
        })
        .filter(|layer| layer.slots > 0)
        .map(|layer| ((layer.black, layer.white), LayerBits::new(layer)))
        .collect()
}

/// A reachable position the walk hands to its visitor.
#[derive(Clone, Copy, Debug)]
pub struct Reached {
    pub position: Position,
    /// Its stored value for the side to move.
    pub value: Dtz,
}

/// What the walk counted: reachable positions in which both sides still
/// have a car, by their value for the side to move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReachCounts {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Of those, positions whose side to move has no legal move.
    pub blocked: u64,
}

impl ReachCounts {
    pub fn positions(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    fn add(&mut self, other: ReachCounts) {
        self.wins += other.wins;
        self.draws += other.draws;
        self.losses += other.losses;
        self.blocked += other.blocked;
    }
}

/// The board position of a slot: the slot's own position with Black to
/// move, or its mirror image with White to move. `black` and `white` are
/// the slot's masks (squares `rank * size + file`).
fn position_of(size: usize, black: u64, white: u64, side: Color) -> Position {
    let n = size as u64;
    // With White to move the real cars are the slot's reflected in the
    // diagonal, colours swapped.
    let spread = |mut mask: u64, mirrored: bool| {
        let mut bits = 0u64;
        while mask != 0 {
            let d = u64::from(mask.trailing_zeros());
            let (file, rank) = if mirrored {
                (d / n, d % n)
            } else {
                (d % n, d / n)
            };
            bits |= 1 << board::square(file as usize, rank as usize);
            mask &= mask - 1;
        }
        bits
    };
    match side {
        Color::Black => {
            Position::from_parts(size, spread(black, false), spread(white, false), side)
        }
        Color::White => Position::from_parts(size, spread(white, true), spread(black, true), side),
    }
}

/// Walks every position reachable from the start of the board of
/// `tables` (which must hold every car, not an endgame), calling `visit`
/// once for each in which both sides still have a car, from up to
/// `threads` threads. Returns the counts.
///
/// # Errors
/// A layer file that is missing or damaged.
pub fn walk(
    tables: &Tables,
    threads: usize,
    visit: &(dyn Fn(&Reached) + Sync),
    progress: &mut dyn FnMut(u32, u32),
) -> Result<ReachCounts, LayerError> {
    let shape = tables.shape();
    let size = shape.size();
    let start = Position::start(size);
    let (a0, b0, slot0) = shape
        .locate(&start)
        .expect("tables of a whole board hold the start");
    let last_total = 2 * shape.max_progress();
    let mut current = total_layers(shape, a0 + b0);
    current[&(a0, b0)].set(Color::Black.index(), slot0);
    let mut counts = ReachCounts::default();
    for total in a0 + b0..=last_total {
        progress(total - (a0 + b0), last_total - (a0 + b0));
        let next = if total < last_total {
            total_layers(shape, total + 1)
        } else {
            HashMap::new()
        };
        let pairs: Vec<(u32, u32)> = current.keys().copied().filter(|&(a, b)| a <= b).collect();
        let next_pair = std::sync::atomic::AtomicUsize::new(0);
        let results = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..threads.max(1) {
                scope.spawn(|| {
                    loop {
                        let unit = next_pair.fetch_add(1, Ordering::Relaxed);
                        let Some(&(a, b)) = pairs.get(unit) else {
                            break;
                        };
                        let result = close_pair(shape, tables, &current, &next, (a, b), visit);
                        results
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(result);
                    }
                });
            }
        });
        for result in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
            counts.add(result?);
        }
        current = next;
    }
    Ok(counts)
}

/// Closes the pair of layers `(a, b)`, `(b, a)` of the current total under
/// sideways moves, marks where its forward moves lead in `next`, and
/// visits its reachable positions.
fn close_pair(
    shape: &Shape,
    tables: &Tables,
    current: &Total,
    next: &Total,
    (a, b): (u32, u32),
    visit: &(dyn Fn(&Reached) + Sync),
) -> Result<ReachCounts, LayerError> {
    let ids = if a == b {
        vec![(a, a)]
    } else {
        vec![(a, b), (b, a)]
    };
    let layers: Vec<&LayerBits> = ids.iter().map(|id| &current[id]).collect();
    // Entries: (side index, layer index in `ids`, slot).
    let mut queue: Vec<(usize, usize, u64)> = Vec::new();
    for (which, bits) in layers.iter().enumerate() {
        for side in 0..2 {
            queue.extend(bits.slots(side).map(|slot| (side, which, slot)));
        }
    }
    while let Some((side, which, slot)) = queue.pop() {
        let here = layers[which];
        let partner_which = ids.len() - 1 - which;
        let partner = layers[partner_which];
        let (x, y) = ids[which];
        let ahead = next.get(&(y, x + 1));
        let block = &here.layer.blocks[here.layer.blocks.partition_point(|b| b.offset <= slot) - 1];
        let within = slot - block.offset;
        let (black_index, white_index) = (within / block.white_sets, within % block.white_sets);
        let black = shape.black_set(block, black_index);
        let white = shape.white_set(block, white_index);
        let other = 1 - side;
        shape.children(
            block,
            black_index,
            black,
            white,
            white_index,
            &partner.layer,
            ahead.map(|bits| &bits.layer),
            |child| match child {
                Child::Sideways(to) => {
                    if partner.set(other, to) {
                        queue.push((other, partner_which, to));
                    }
                }
                Child::Forward(to) => {
                    ahead
                        .expect("a forward move has a layer ahead")
                        .set(other, to);
                }
                Child::Finish => {}
            },
        );
    }
    let mut counts = ReachCounts::default();
    for (which, bits) in layers.iter().enumerate() {
        let (x, y) = ids[which];
        let values = tables.layer_values(x, y)?;
        for side in [Color::Black, Color::White] {
            for slot in bits.slots(side.index()) {
                let block =
                    &bits.layer.blocks[bits.layer.blocks.partition_point(|b| b.offset <= slot) - 1];
                let within = slot - block.offset;
                let black = shape.black_set(block, within / block.white_sets);
                let white = shape.white_set(block, within % block.white_sets);
                let position = position_of(shape.size(), black, white, side);
                let value = values.get(slot);
                match value {
                    Dtz::Win(_) => counts.wins += 1,
                    Dtz::Draw => counts.draws += 1,
                    Dtz::Loss(_) => counts.losses += 1,
                }
                if position.count_moves() == 0 {
                    counts.blocked += 1;
                }
                visit(&Reached { position, value });
            }
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_become_their_positions_and_mirrors() {
        // 3 x 3, squares rank * 3 + file: Black on 0 (a1) and 4 (b2),
        // White on 2 (c1).
        let position = position_of(3, 0b1_0001, 0b100, Color::Black);
        assert_eq!(crate::notation::format_position(&position), "3/1B1/B1W b");
        // Mirrored: Black's cars come from White's, reflected (c1 -> a3).
        let mirrored = position_of(3, 0b1_0001, 0b100, Color::White);
        assert_eq!(crate::notation::format_position(&mirrored), "B2/1W1/W2 w");
    }
}

//! Drawing the positions: uniformly from every position reachable from
//! the start, and from the positions of self-play games.
//!
//! Both draw by key: each candidate gets a pseudo-random key from the seed
//! and its Zobrist key, and the `k` smallest keys of each class are kept.
//! That is a uniform sample of `k` without replacement whatever order the
//! candidates come in (the walk over the tables runs on several threads),
//! and the same seed gives the same sample.

use std::collections::{BinaryHeap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::board::{Position, Rules};
use crate::eval::Evaluation;
use crate::game::Game;
use crate::referee::openings;
use crate::search::{self, Limits, Request, Signals};
use crate::solver::{Dtz, LayerError, Tables};

use super::judge::Class;
use super::reach::{self, ReachCounts};

/// The SplitMix64 finaliser: a well-mixed 64-bit hash.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The sampling key of `position` under `seed`: a pseudo-random number
/// that the same seed and position always give.
pub fn sample_key(seed: u64, position: &Position) -> u64 {
    mix(mix(seed.wrapping_add(0x9E37_79B9_7F4A_7C15)) ^ position.key())
}

/// A candidate ordered by its key (then its Zobrist key, to break ties).
#[derive(Clone, Copy, Debug)]
struct Keyed {
    key: u64,
    position: Position,
    value: Dtz,
}

impl Keyed {
    fn order(&self) -> (u64, u64) {
        (self.key, self.position.key())
    }
}

impl PartialEq for Keyed {
    fn eq(&self, other: &Self) -> bool {
        self.order() == other.order()
    }
}

impl Eq for Keyed {}

impl PartialOrd for Keyed {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Keyed {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order().cmp(&other.order())
    }
}

/// How many positions of each class to draw (indexed by [`Class`]).
pub type PerClass = [usize; Class::ALL.len()];

/// The `k` candidates with the smallest keys, for each class (its own
/// `k`); safe to offer to from several threads.
pub struct Smallest {
    k: PerClass,
    seed: u64,
    heaps: [Mutex<BinaryHeap<Keyed>>; Class::ALL.len()],
    /// The largest key a full heap holds (`u64::MAX` until full): most
    /// candidates are turned away without taking the lock.
    bounds: [AtomicU64; Class::ALL.len()],
}

impl Smallest {
    pub fn new(k: PerClass, seed: u64) -> Smallest {
        Smallest {
            k,
            seed,
            heaps: std::array::from_fn(|_| Mutex::new(BinaryHeap::new())),
            bounds: std::array::from_fn(|_| AtomicU64::new(u64::MAX)),
        }
    }

    /// Offers a position with its stored value; positions without a
    /// legal move are not sampled.
    pub fn offer(&self, position: &Position, value: Dtz) {
        let c = Class::of(value) as usize;
        let key = sample_key(self.seed, position);
        if self.k[c] == 0 || key > self.bounds[c].load(Ordering::Relaxed) {
            return;
        }
        if position.count_moves() == 0 {
            return;
        }
        let mut heap = self.heaps[c].lock().unwrap_or_else(|e| e.into_inner());
        let keyed = Keyed {
            key,
            position: *position,
            value,
        };
        if heap.len() < self.k[c] {
            heap.push(keyed);
        } else if heap.peek().is_some_and(|top| keyed < *top) {
            heap.pop();
            heap.push(keyed);
        }
        if heap.len() == self.k[c]
            && let Some(top) = heap.peek()
        {
            self.bounds[c].store(top.key, Ordering::Relaxed);
        }
    }

    /// The sample of `class`, by increasing key.
    pub fn take(&self, class: Class) -> Vec<(Position, Dtz)> {
        let heap = std::mem::take(
            &mut *self.heaps[class as usize]
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        heap.into_sorted_vec()
            .into_iter()
            .map(|keyed| (keyed.position, keyed.value))
            .collect()
    }
}

/// Samples `k[class]` positions of each class uniformly from every
/// position reachable from the start (see [`reach::walk`]).
///
/// # Errors
/// A layer file that is missing or damaged.
pub fn reachable(
    tables: &Tables,
    k: PerClass,
    seed: u64,
    threads: usize,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<(Smallest, ReachCounts), LayerError> {
    let smallest = Smallest::new(k, seed);
    let counts = reach::walk(
        tables,
        threads,
        &|reached| smallest.offer(&reached.position, reached.value),
        progress,
    )?;
    Ok((smallest, counts))
}

/// How the self-play games are played.
#[derive(Clone, Copy, Debug)]
pub struct SelfPlay {
    pub size: usize,
    pub rules: Rules,
    pub games: usize,
    /// Random plies from the start before the engine plays.
    pub opening_plies: u32,
    /// Nodes a move.
    pub nodes: u64,
    pub seed: u64,
    pub threads: usize,
    /// The evaluation the games are played with: the benchmark's
    /// [`SELF_PLAY_EVALUATION`], or another where a fit wants the
    /// positions a stronger player steers into.
    pub evaluation: Evaluation,
}

/// The evaluation the benchmark's self-play games are played with,
/// whatever the default: the sample must not change with the evaluation
/// under test.
pub const SELF_PLAY_EVALUATION: Evaluation = Evaluation::Race;

/// A game ends as a draw after this many plies at the latest.
const MAX_GAME_PLIES: usize = 600;

/// Hash for each self-play game, MB.
const SELF_PLAY_HASH_MB: usize = 16;

/// The distinct positions with a legal move of `plan.games` self-play
/// games (this build's search at `plan.nodes` nodes a move, tables off,
/// `plan.evaluation`), from random openings; in a fixed order.
///
/// # Errors
/// No opening of that many random plies keeps the game going.
pub fn self_play(plan: &SelfPlay, progress: &(dyn Fn() + Sync)) -> Result<Vec<Position>, String> {
    let openings = openings::random(
        plan.size,
        plan.opening_plies,
        plan.games,
        plan.seed,
        plan.rules,
    )?;
    let next = AtomicUsize::new(0);
    let games = Mutex::new(vec![Vec::new(); openings.len()]);
    std::thread::scope(|scope| {
        for _ in 0..plan.threads.max(1) {
            scope.spawn(|| {
                let mut tables = search::Tables::new(SELF_PLAY_HASH_MB);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&opening) = openings.get(index) else {
                        break;
                    };
                    let positions = play_game(plan, opening, &mut tables);
                    games.lock().unwrap_or_else(|e| e.into_inner())[index] = positions;
                    progress();
                }
            });
        }
    });
    let mut seen = HashSet::new();
    Ok(games
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .filter(|position| seen.insert(*position))
        .collect())
}

/// Plays one self-play game from `opening`; its positions with a move.
fn play_game(plan: &SelfPlay, opening: Position, tables: &mut search::Tables) -> Vec<Position> {
    tables.clear();
    let mut game = Game::new(opening);
    let mut positions = Vec::new();
    let signals = Signals::default();
    while game.outcome(plan.rules).is_none() && game.moves().len() < MAX_GAME_PLIES {
        let position = *game.position();
        positions.push(position);
        let request = Request {
            position,
            history: game.history(),
            limits: Limits {
                nodes: Some(plan.nodes),
                ..Limits::default()
            },
            settings: search::Settings {
                rules: plan.rules,
                evaluation: plan.evaluation,
                multipv: 1,
                move_overhead: std::time::Duration::ZERO,
                tablebase: false,
                ..search::Settings::default()
            },
            tablebase: search::TableUse::default(),
        };
        let result = search::search(&request, tables, &signals, &mut |_| {});
        let Some(mv) = result.best_move else {
            break;
        };
        game.play(mv);
    }
    positions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_keys_win_whatever_the_order() {
        let positions: Vec<Position> = {
            let mut all = vec![Position::start(4)];
            for _ in 0..3 {
                let more: Vec<Position> = all
                    .iter()
                    .flat_map(|p| {
                        p.legal_moves()
                            .as_slice()
                            .iter()
                            .map(|&m| p.play(m))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                all.extend(more);
            }
            let mut seen = HashSet::new();
            all.retain(|p| seen.insert(*p));
            all
        };
        assert!(positions.len() > 20);
        let sample = |order: &[Position]| {
            // No lost positions asked for: those offered are turned away.
            let smallest = Smallest::new([5, 5, 0], 7);
            for position in order {
                smallest.offer(position, Dtz::Draw);
                smallest.offer(position, Dtz::Loss(3));
            }
            assert!(smallest.take(Class::Won).is_empty());
            assert!(smallest.take(Class::Lost).is_empty());
            smallest.take(Class::Drawn)
        };
        let forward = sample(&positions);
        let reversed: Vec<Position> = positions.iter().rev().copied().collect();
        assert_eq!(forward.len(), 5);
        assert_eq!(forward, sample(&reversed));
        // Another seed, another sample.
        let other = Smallest::new([5, 5, 2], 8);
        for position in &positions {
            other.offer(position, Dtz::Draw);
            other.offer(position, Dtz::Loss(3));
        }
        assert_ne!(other.take(Class::Drawn), forward);
        assert_eq!(other.take(Class::Lost).len(), 2);
    }
}

//! The play-out check of a table directory (`dodgem solve --playout DIR`):
//! random positions the tables call won or drawn, played to the end by the
//! engine's own search with the tables on, against itself, in this
//! process.
//!
//! A decided position must end with the predicted winner, without any
//! position occurring twice, within the bound the stored distances imply:
//! the first progress move comes within the stored distance, each later
//! one within the longest distance any layer stores, and there can be no
//! more progress moves than the progress both sides have left. Where the
//! tables have the distances to the end, the bound is exact: the winner
//! hurrying and the loser delaying, a decided game ends in exactly its
//! stored distance to the end. A drawn position must never be lost:
//! every position of its game stays drawn until a repetition ends it or
//! a ply limit cuts it off.

use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::board::{self, Color, Outcome, Position};
use crate::game::Game;
use crate::notation::{format_move, format_position};
use crate::search::{Limits, Request, Settings, Signals, TableUse, Tables, search};
use crate::solver::files::format::{Metric, read_values_header};
use crate::solver::index::value::Dtz;
use crate::tablebase::Layered;

/// What a play-out run is asked for.
#[derive(Clone, Debug)]
pub struct PlayoutPlan {
    /// Positions to play: half decided, half drawn (as far as the tables
    /// have both).
    pub positions: usize,
    pub seed: u64,
    /// Search depth of each move (a decided root is played from the
    /// tables without searching; a drawn one searches its drawing moves).
    pub depth: u32,
    /// Plies after which a drawn game is cut off.
    pub draw_plies: usize,
}

/// What a play-out run found.
#[derive(Clone, Debug, Default)]
pub struct Playouts {
    pub decided: usize,
    pub drawn: usize,
    /// Plies played in all.
    pub plies: usize,
    /// The longest decided game, and the bound it had.
    pub longest: (usize, usize),
    /// Decided games that ended in exactly their stored distance to the
    /// end (where the tables have the distances to the end).
    pub to_the_end: usize,
    /// Games that did not end as predicted, described.
    pub failures: Vec<String>,
    pub seconds: f64,
}

impl fmt::Display for Playouts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} decided and {} drawn positions played out, {} plies in {:.1} s; longest decided game {} plies (its bound {}); {} decided ended at exactly their distance to the end; {} not as predicted",
            self.decided,
            self.drawn,
            self.plies,
            self.seconds,
            self.longest.0,
            self.longest.1,
            self.to_the_end,
            self.failures.len()
        )
    }
}

/// A small seeded generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() >> 33) as usize % n
    }
}

/// Plays out positions of the tables in `dir` as `plan` asks, calling
/// `progress(done, of)` after each.
///
/// # Errors
/// A directory that cannot be used.
pub fn playout(
    dir: &Path,
    plan: &PlayoutPlan,
    progress: &dyn Fn(usize, usize),
) -> Result<Playouts, String> {
    let started = Instant::now();
    let table = Arc::new(Layered::open(dir)?);
    let kind = table.kind();
    let longest = longest_distance(dir, &table)?;
    let mut rng = Rng::new(plan.seed);
    let mut found = Playouts::default();
    let mut tables = Tables::new(16);
    // Decided and drawn positions in turn; a kind that does not turn up
    // in many tries (no draws on 3 x 3) is given up.
    let mut misses = 0;
    let mut gave_up = [false; 2];
    while found.decided + found.drawn < plan.positions && !(gave_up[0] && gave_up[1]) {
        let mut want_draw = (found.decided + found.drawn) % 2 == 1;
        if gave_up[usize::from(want_draw)] {
            want_draw = !want_draw;
        }
        let position = random_position(&mut rng, kind.size, kind.max_cars);
        if position.outcome(kind.rules).is_some() {
            continue;
        }
        let Some(value) = table.probe(&position) else {
            return Err(format!(
                "{}: a layer cannot be read: {}",
                dir.display(),
                table.take_errors().join("; ")
            ));
        };
        if (value == Dtz::Draw) != want_draw {
            misses += 1;
            if misses == GIVE_UP {
                gave_up[usize::from(want_draw)] = true;
                misses = 0;
            }
            continue;
        }
        misses = 0;
        tables.clear();
        let game = play(&table, &mut tables, position, value, longest, plan);
        found.plies += game.plies;
        match value {
            Dtz::Draw => found.drawn += 1,
            _ => {
                found.decided += 1;
                found.to_the_end += usize::from(game.to_the_end);
                if game.plies > found.longest.0 {
                    found.longest = (game.plies, game.bound);
                }
            }
        }
        if let Some(failure) = game.failure {
            found.failures.push(failure);
        }
        progress(found.decided + found.drawn, plan.positions);
    }
    let errors = table.take_errors();
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    found.seconds = started.elapsed().as_secs_f64();
    Ok(found)
}

/// Random positions tried for a decided or drawn one before the tables
/// are taken to have none.
const GIVE_UP: usize = 50_000;

/// The longest distance to progress any layer of the tables stores; in
/// tables of the one pass, which store none, the longest distance to the
/// end (which bounds it).
fn longest_distance(dir: &Path, table: &Layered) -> Result<u32, String> {
    let kind = table.kind();
    let shape = crate::solver::shape_of(kind).map_err(|e| e.to_string())?;
    let mut longest = 0;
    for (a, b) in shape.pairs() {
        for (black, white) in [(a, b), (b, a)] {
            let layer = shape.layer(black, white);
            let header = [Metric::Dtz, Metric::Dte]
                .into_iter()
                .map(|metric| read_values_header(dir, kind, metric, &layer))
                .find_map(Result::transpose)
                .transpose()
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("{}: layer {black}-{white} is missing", dir.display()))?;
            longest = longest.max(header.tally.longest);
        }
    }
    Ok(longest)
}

/// A random position with 1 to `max_cars` cars a side anywhere on the
/// board, either side to move.
fn random_position(rng: &mut Rng, size: usize, max_cars: u32) -> Position {
    let mut cars = [0u64; 2];
    let mut taken = 0u64;
    for side in &mut cars {
        for _ in 0..=rng.below(max_cars as usize) {
            loop {
                let square = board::square(rng.below(size), rng.below(size));
                let bit = 1u64 << square;
                if taken & bit == 0 {
                    taken |= bit;
                    *side |= bit;
                    break;
                }
            }
        }
    }
    let side = if rng.below(2) == 0 {
        Color::Black
    } else {
        Color::White
    };
    Position::from_parts(size, cars[0], cars[1], side)
}

/// Progress a side has left to make: `size` for each car still on the
/// board, less the files (ranks for White) it has covered.
fn progress_left(position: &Position, color: Color) -> usize {
    let n = position.size();
    let mut left = 0;
    let mut cars = position.cars(color);
    while cars != 0 {
        let square = cars.trailing_zeros() as board::Square;
        cars &= cars - 1;
        let done = match color {
            Color::Black => board::file_of(square),
            Color::White => board::rank_of(square),
        };
        left += n - done;
    }
    left
}

/// One game's result.
struct Played {
    plies: usize,
    bound: usize,
    /// Whether the game ended in exactly the start's distance to the end
    /// (its bound).
    to_the_end: bool,
    failure: Option<String>,
}

/// Plays `start` (of stored value `value`) out and checks it.
fn play(
    table: &Arc<Layered>,
    tables: &mut Tables,
    start: Position,
    value: Dtz,
    longest: u32,
    plan: &PlayoutPlan,
) -> Played {
    let rules = table.kind().rules;
    let signals = Signals::default();
    let progress_moves = progress_left(&start, Color::Black) + progress_left(&start, Color::White);
    // With the distances to the end, the bound is the start's own.
    let end = match value {
        Dtz::Draw => None,
        Dtz::Win(_) | Dtz::Loss(_) => table.probe_end(&start),
    };
    let bound = match (value, end) {
        (_, Some(Dtz::Win(d) | Dtz::Loss(d))) => d as usize,
        (Dtz::Win(d) | Dtz::Loss(d), _) => d as usize + progress_moves * longest as usize,
        (Dtz::Draw, _) => plan.draw_plies,
    };
    let to_the_end = matches!(end, Some(Dtz::Win(_) | Dtz::Loss(_)));
    let mut game = Game::new(start);
    let mut seen = HashSet::from([start]);
    let describe = |game: &Game, why: String| {
        let moves: Vec<String> = game.moves().iter().map(|&m| format_move(Some(m))).collect();
        format!(
            "{} ({value:?}) {}: {why}",
            format_position(&start),
            moves.join(" ")
        )
    };
    let mut failure = None;
    if let Some(end) = end.filter(|end| end.wdl() != value.wdl()) {
        failure = Some(describe(
            &game,
            format!("its distance to the end says {end:?}"),
        ));
    }
    while failure.is_none() && game.outcome(rules).is_none() && game.moves().len() < bound {
        let position = *game.position();
        if value == Dtz::Draw && table.probe(&position) != Some(Dtz::Draw) {
            failure = Some(describe(
                &game,
                format!("left the draw: {:?}", table.probe(&position)),
            ));
            break;
        }
        let request = Request {
            position,
            history: game.history(),
            limits: Limits {
                depth: Some(plan.depth),
                ..Limits::default()
            },
            settings: Settings {
                rules,
                tablebase: true,
                ..Settings::default()
            },
            tablebase: TableUse {
                root: Some(Arc::clone(table)),
                probes: vec![Arc::clone(table)],
            },
        };
        let Some(mv) = search(&request, tables, &signals, &mut |_| {}).best_move else {
            failure = Some(describe(&game, "no move".into()));
            break;
        };
        game.play(mv);
        if value != Dtz::Draw && !seen.insert(*game.position()) {
            failure = Some(describe(&game, "a position repeats".into()));
            break;
        }
    }
    let plies = game.moves().len();
    if failure.is_none() {
        let ended = game.outcome(rules);
        let mover = start.side_to_move();
        let expected = match value {
            Dtz::Win(_) => Some(mover),
            Dtz::Loss(_) => Some(mover.other()),
            Dtz::Draw => None,
        };
        let winner = ended.and_then(Outcome::winner);
        let good = match expected {
            Some(_) => winner == expected && (!to_the_end || plies == bound),
            None => winner.is_none(),
        };
        if !good {
            let bound = if to_the_end {
                format!("its distance to the end {bound}")
            } else {
                format!("bound {bound}")
            };
            failure = Some(describe(
                &game,
                format!("ended {ended:?} after {plies} plies ({bound})"),
            ));
        }
    }
    Played {
        plies,
        bound,
        to_the_end: to_the_end && failure.is_none(),
        failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_left_counts_files_and_ranks_to_go() {
        let position = crate::notation::parse_position("3/B2/2W b").unwrap();
        // Black on the first file: 3 to go; White on the first rank,
        // last file: 3 to go.
        assert_eq!(progress_left(&position, Color::Black), 3);
        assert_eq!(progress_left(&position, Color::White), 3);
    }
}

//! Measures the parallel search (`Threads`) without a clock, by node
//! counts, so that the machine's load changes the figures only through
//! the threads' timing (which decides which thread finds what first).
//!
//! ```text
//! cargo run --release --example smp -- positions [count] [nodes] [threads] [depth] [size] [seed]
//! cargo run --release --example smp -- match [games] [nodes] [threads] [size] [seed] [which]
//! ```
//!
//! Defaults: 100 positions or 200 games, 50,000 nodes (about one move of
//! a 2+0.02 game on 7 x 7), 2 threads, depth 10, size 7, seed 1.
//!
//! `positions` takes positions from games of the engine against itself
//! at 2,000 nodes a move from openings of 6 random plies, after 0 to 39
//! more plies, and searches each with fresh tables (16 MiB):
//!
//! - one thread with `nodes` and with `threads x nodes` nodes, and
//!   `threads` threads with `threads x nodes` nodes in all (the same
//!   clock if every thread searched as fast as one alone) and with
//!   `nodes` in all (the same work);
//! - one thread and `threads` threads to `depth`.
//!
//! It prints, per search, the mean depth of the deepest completed
//! iteration, and the geometric mean of the speedup to `depth`: `threads` times the
//! nodes one thread needs over the nodes all threads together need (the
//! speedup in time if the threads searched as fast as one alone).
//!
//! `match` plays, from openings of 6 random plies, each played with both
//! colours, `threads` threads with `threads x nodes` nodes a move in all
//! against one thread with `nodes` (the same clock if every thread
//! searched as fast as one alone), and, as the ideal it falls short of,
//! one thread with `threads x nodes` against one with `nodes`; each
//! player keeps its tables through a game, as an engine does. `which` is
//! `both` (the default), `threads` or `ideal` for one of the two.

use dodgem::board::{Color, Rules};
use dodgem::game::Game;
use dodgem::notation::format_move;
use dodgem::search::{Limits, Request, SearchResult, Settings, Signals, Tables, search};
use dodgem::{Move, Position};

/// SplitMix64, for picking the random plies.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

const RULES: Rules = Rules::Textbook;

/// One search with fresh tables: its result and the total node count at
/// each completed depth reported (index = depth).
fn run(
    position: &Position,
    history: &[u64],
    limits: Limits,
    threads: usize,
) -> (SearchResult, Vec<u64>) {
    let request = Request {
        position: *position,
        history: history.to_vec(),
        limits,
        settings: Settings {
            rules: RULES,
            threads,
            tablebase: false,
            ..Settings::default()
        },
        tablebase: Default::default(),
    };
    let mut tables = Tables::new(16);
    let mut at_depth = Vec::new();
    let result = search(&request, &mut tables, &Signals::default(), &mut |info| {
        let depth = info.depth as usize;
        if at_depth.len() <= depth {
            at_depth.resize(depth + 1, 0);
            at_depth[depth] = info.nodes;
        }
    });
    (result, at_depth)
}

fn nodes(limit: u64) -> Limits {
    Limits {
        nodes: Some(limit),
        ..Limits::default()
    }
}

/// Positions from games: `count` of them, each with the game's keys
/// before it (for repetitions).
fn positions(count: usize, size: usize, seed: u64) -> Vec<(Position, Vec<u64>)> {
    let mut rng = Rng(seed);
    let mut found = Vec::new();
    while found.len() < count {
        let mut game = Game::new(Position::start(size));
        let extra = rng.below(40);
        let mut ok = true;
        for ply in 0..6 + extra {
            if game.outcome(RULES).is_some() {
                ok = false;
                break;
            }
            let position = *game.position();
            let mv: Move = if ply < 6 {
                let moves = position.legal_moves();
                moves[rng.below(moves.len())]
            } else {
                let (result, _) = run(&position, &game.history(), nodes(2_000), 1);
                result.best_move.expect("a move in an unfinished game")
            };
            game.play(mv);
        }
        if ok && game.outcome(RULES).is_none() {
            found.push((*game.position(), game.history()));
        }
    }
    found
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |index: usize, default: u64| -> u64 {
        args.get(index)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    match args.first().map(String::as_str) {
        Some("positions") => {
            let (count, budget, threads) =
                (arg(1, 100) as usize, arg(2, 50_000), arg(3, 2) as usize);
            on_positions(
                count,
                budget,
                threads,
                arg(4, 10) as u32,
                arg(5, 7) as usize,
                arg(6, 1),
            );
        }
        Some("match") => {
            let (games, budget, threads) =
                (arg(1, 200) as usize, arg(2, 50_000), arg(3, 2) as usize);
            let which = args.get(6).map_or("both", String::as_str);
            matches(games, budget, threads, arg(4, 7) as usize, arg(5, 1), which);
        }
        _ => eprintln!("usage: smp positions|match [...] (see the source's head)"),
    }
}

/// A player in [`matches`]: threads and nodes a move (in all).
#[derive(Clone, Copy)]
struct Player {
    threads: usize,
    nodes: u64,
}

/// Plays `opening` to its end (or 400 plies, a draw); the winner's colour.
fn play(opening: Position, black: Player, white: Player) -> Option<Color> {
    let mut game = Game::new(opening);
    let mut tables = [Tables::new(16), Tables::new(16)];
    for _ in 0..400 {
        if let Some(outcome) = game.outcome(RULES) {
            return outcome.winner();
        }
        let side = game.position().side_to_move();
        let player = if side == Color::Black { black } else { white };
        let request = Request {
            position: *game.position(),
            history: game.history(),
            limits: nodes(player.nodes),
            settings: Settings {
                rules: RULES,
                threads: player.threads,
                tablebase: false,
                ..Settings::default()
            },
            tablebase: Default::default(),
        };
        let result = search(
            &request,
            &mut tables[side.index()],
            &Signals::default(),
            &mut |_| {},
        );
        game.play(result.best_move.expect("a move in an unfinished game"));
    }
    None
}

/// Score of `first` against `second` over `games` games from random
/// openings (each with both colours): wins, losses, draws.
fn score(first: Player, second: Player, games: usize, size: usize, seed: u64) -> (u32, u32, u32) {
    let mut rng = Rng(seed);
    let (mut wins, mut losses, mut draws) = (0, 0, 0);
    for _ in 0..games.div_ceil(2) {
        let mut opening = Position::start(size);
        for _ in 0..6 {
            let moves = opening.legal_moves();
            opening = opening.play(moves[rng.below(moves.len())]);
        }
        for colour in [Color::Black, Color::White] {
            let (black, white) = match colour {
                Color::Black => (first, second),
                Color::White => (second, first),
            };
            match play(opening, black, white) {
                Some(winner) if winner == colour => wins += 1,
                Some(_) => losses += 1,
                None => draws += 1,
            }
        }
    }
    (wins, losses, draws)
}

/// Elo difference for a score share, with the 95% interval's ends.
fn elo(wins: u32, losses: u32, draws: u32) -> (f64, f64, f64) {
    let n = f64::from(wins + losses + draws);
    let share = (f64::from(wins) + f64::from(draws) / 2.0) / n;
    let variance = (f64::from(wins) * (1.0 - share).powi(2)
        + f64::from(losses) * share.powi(2)
        + f64::from(draws) * (0.5 - share).powi(2))
        / n;
    let margin = 1.96 * (variance / n).sqrt();
    let to_elo = |p: f64| -400.0 * (1.0 / p.clamp(1e-6, 1.0 - 1e-6) - 1.0).log10();
    (
        to_elo(share),
        to_elo(share - margin),
        to_elo(share + margin),
    )
}

fn matches(games: usize, budget: u64, threads: usize, size: usize, seed: u64, which: &str) {
    let wide = budget * threads as u64;
    let one = Player {
        threads: 1,
        nodes: budget,
    };
    let pairs = [
        (
            "threads",
            format!("{threads} threads, {wide} nodes in all"),
            Player {
                threads,
                nodes: wide,
            },
        ),
        (
            "ideal",
            format!("1 thread, {wide} nodes"),
            Player {
                threads: 1,
                nodes: wide,
            },
        ),
    ];
    for (_, name, first) in pairs
        .into_iter()
        .filter(|(kind, _, _)| which == "both" || which == *kind)
    {
        let (wins, losses, draws) = score(first, one, games, size, seed);
        let (mid, low, high) = elo(wins, losses, draws);
        println!(
            "{name} against 1 thread, {budget} nodes ({size} x {size}, {} games): {wins} - {losses} - {draws}, {mid:+.1} Elo [{low:+.1}, {high:+.1}]",
            wins + losses + draws
        );
    }
}

/// The `positions` measure (see the module's documentation).
fn on_positions(count: usize, budget: u64, threads: usize, depth: u32, size: usize, seed: u64) {
    let positions = positions(count, size, seed);
    let wide = budget * threads as u64;
    // (name, threads, node limit)
    let searches = [
        (format!("1 thread, {budget} nodes"), 1, budget),
        (format!("1 thread, {wide} nodes"), 1, wide),
        (
            format!("{threads} threads, {wide} nodes in all"),
            threads,
            wide,
        ),
        (
            format!("{threads} threads, {budget} nodes in all"),
            threads,
            budget,
        ),
    ];
    let mut depth_sum = vec![0u64; searches.len()];
    let mut log_speedup = 0.0;
    for (index, (position, history)) in positions.iter().enumerate() {
        let mut line = format!("{index:3}");
        for (s, (_, search_threads, limit)) in searches.iter().enumerate() {
            let (result, at_depth) = run(position, history, nodes(*limit), *search_threads);
            let completed = at_depth.len().saturating_sub(1) as u64;
            depth_sum[s] += completed;
            line += &format!(" | depth {completed} {}", format_move(result.best_move));
        }
        let to_depth = |search_threads| {
            let limits = Limits {
                depth: Some(depth),
                ..Limits::default()
            };
            run(position, history, limits, search_threads).0.nodes
        };
        let (one, all) = (to_depth(1), to_depth(threads));
        let speedup = threads as f64 * one as f64 / all as f64;
        log_speedup += speedup.ln();
        line += &format!(" | to depth {depth}: {one} vs {all} nodes, x{speedup:.2}");
        eprintln!("{line}");
    }
    let n = positions.len();
    println!("{n} positions of {size} x {size}, the deepest completed iteration:");
    for (s, (name, _, _)) in searches.iter().enumerate() {
        println!(
            "{name:32} mean depth {:5.2}",
            depth_sum[s] as f64 / n as f64
        );
    }
    println!(
        "speedup to depth {depth} ({threads} threads against 1, equal speed a thread): x{:.2}",
        (log_speedup / n as f64).exp()
    );
}

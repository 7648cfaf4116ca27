//! Nodes per second of the search with a directory of solved tables
//! probed inside the tree, against the same search without them.
//!
//! ```text
//! cargo run --release --example probe_nps -- DIR [count] [nodes] [seed]
//! ```
//!
//! For endgame tables (`dodgem solve --max-cars K`). Defaults: 20
//! positions, 1,000,000 nodes, seed 1. The roots come from random games
//! of 10 to 59 plies from the start on the directory's board that stop
//! where a side has `K + 1` cars and the other at most that: the tables
//! do not cover the root, and a car off the board brings the search into
//! them. Each root is searched with fresh hash tables on one thread, once
//! with the directory probed inside the search as the engine probes it,
//! and once without; each search opens the directory afresh, so its
//! cache of blocks starts empty, as in a freshly started engine. It
//! prints each root's nodes per second both ways and the share of nodes
//! a probe answered, then the median ratio.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use dodgem::Position;
use dodgem::board::{Color, Rules};
use dodgem::game::Game;
use dodgem::referee::SplitMix64;
use dodgem::search::{Limits, Request, Settings, Signals, TableUse, Tables, search};
use dodgem::tablebase::Layered;

/// Nodes, seconds and table hits of one search of `root`.
fn measure(
    root: &Position,
    rules: Rules,
    nodes: u64,
    probes: Vec<Arc<Layered>>,
) -> (u64, f64, u64) {
    let request = Request {
        position: *root,
        history: Vec::new(),
        limits: Limits {
            nodes: Some(nodes),
            ..Limits::default()
        },
        settings: Settings {
            rules,
            threads: 1,
            tablebase: true,
            ..Settings::default()
        },
        tablebase: TableUse { root: None, probes },
    };
    let mut tables = Tables::new(64);
    let (mut searched, mut hits) = (0, 0);
    let started = Instant::now();
    search(&request, &mut tables, &Signals::default(), &mut |info| {
        searched = info.nodes;
        hits = info.tbhits;
    });
    (searched, started.elapsed().as_secs_f64(), hits)
}

/// Most and fewest cars a side of `position`.
fn cars(position: &Position) -> (u32, u32) {
    let count = |color| position.cars(color).count_ones();
    let (black, white) = (count(Color::Black), count(Color::White));
    (black.max(white), black.min(white))
}

/// The end of a random game of 10 to 59 plies from the start that has
/// stopped where a side has `max_cars + 1` cars and the other at most
/// `max_cars`; `None` if the game ends or never gets there.
fn root(rng: &mut SplitMix64, size: usize, rules: Rules, max_cars: u32) -> Option<Position> {
    let mut game = Game::new(Position::start(size));
    for _ in 0..10 + rng.below(50) {
        let (most, fewest) = cars(game.position());
        if most <= max_cars + 1 && fewest <= max_cars {
            break;
        }
        let moves = game.position().legal_moves();
        if moves.is_empty() || game.outcome(rules).is_some() {
            return None;
        }
        game.play(moves[rng.below(moves.len())]);
    }
    let (most, fewest) = cars(game.position());
    (game.outcome(rules).is_none() && most == max_cars + 1 && fewest <= max_cars)
        .then(|| *game.position())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: probe_nps DIR [count] [nodes] [seed]");
        std::process::exit(2);
    };
    let arg = |i: usize, default: u64| {
        args.get(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (count, nodes, seed) = (arg(1, 20) as usize, arg(2, 1_000_000), arg(3, 1));
    let table = Layered::open(Path::new(dir)).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let kind = table.kind();
    println!(
        "{}x{} {:?} tables of at most {} cars a side from {dir}, {nodes} nodes a search",
        kind.size, kind.size, kind.rules, kind.max_cars
    );
    let mut rng = SplitMix64::new(seed);
    let mut ratios = Vec::new();
    while ratios.len() < count {
        let Some(root) = root(&mut rng, kind.size, kind.rules, kind.max_cars) else {
            continue;
        };
        let probing = Layered::open(Path::new(dir)).expect("opened once already");
        let (n0, t0, _) = measure(&root, kind.rules, nodes, Vec::new());
        let (n1, t1, hits) = measure(&root, kind.rules, nodes, vec![Arc::new(probing)]);
        let (nps0, nps1) = (n0 as f64 / t0, n1 as f64 / t1);
        println!(
            "{:>3}  without {n0:>8} nodes {:>9.0} nps   with {n1:>8} nodes {:>9.0} nps, {:>5.1}% probe hits   ratio {:.2}",
            ratios.len() + 1,
            nps0,
            nps1,
            100.0 * hits as f64 / n1.max(1) as f64,
            nps1 / nps0
        );
        ratios.push(nps1 / nps0);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "median ratio (with / without): {:.2}",
        ratios[ratios.len() / 2]
    );
}

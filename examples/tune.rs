//! The tuner of the learned evaluations (`Evaluation learned` and
//! `Evaluation net`): fits their weights to the solved results of
//! positions drawn from layered tables, checks them on positions held out
//! of the fit, and writes them to `src/eval/weights.rs` (learned) or
//! `src/eval/net_weights.rs` (net, with `--hidden N`; with `--bound-lead`
//! too, `src/eval/net_large_weights.rs`, the fit for 7 x 7 and 8 x 8).
//!
//! ```text
//! cargo run --release --example tune -- \
//!     --tables 4x4-textbook:1 --tables 4x4-classic:1 \
//!     --tables 5x5-textbook:0.01 --tables 5x5-classic:0.01 \
//!     --write src/eval/weights.rs
//! ```
//!
//! Each `--tables DIR:RATE:GAMES` walks every position reachable from the
//! start of that board (see `dodgem::strength::walk`) and keeps each with
//! probability RATE (0: no walk, for boards too large to walk, such as
//! 6 x 6), and adds the distinct positions of GAMES (by default
//! `--games`) self-play games on that board, probed in the tables layer
//! by layer. A fifth of all positions (chosen by a hash of the position,
//! so the same ones every run) are held out, and every position of the
//! sources `--held-out` names. `--data FILE` keeps the positions in a file
//! (written by the first run, read by the next), so a run that only
//! changes the model skips the walks and the games; several `--data`
//! files are fitted together, less the sources `--skip` names.
//!
//! The model is an ordered logistic regression: a score `s` (the linear
//! features plus the values of the cars' patterns, see
//! `dodgem::eval::learned`, plus with `--hidden N` a network of N
//! rectified linear units over the scaled features, see
//! `dodgem::eval::net`) with two cut points `c1 < c2`, so that the side
//! to move loses with probability `σ(c1 - s)`, wins with `1 - σ(c2 - s)`
//! and draws otherwise. The fit minimises the negative log-likelihood
//! (each source of positions weighted equally, L2 penalties on the
//! pattern values and the network's weights) with Adam over shuffled
//! mini-batches. The evaluation is `s` less the middle of the cut points,
//! times [`SCALE`]: 0 is the middle of the draw band.
//!
//! With `--squares N` the network reads the squares of the cars too
//! (`dodgem::eval::learned::car_squares`, in the side to move's frame), and
//! only the positions of the N x N board are fitted: a network for that
//! board alone (`src/eval/net5_weights.rs` for 5 x 5), which can tell
//! apart positions whose features are the same. With `--pairs` too, it
//! reads every two cars' squares as one input more (a blockade is where
//! two cars stand together).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use clap::Parser;
use dodgem::Position;
use dodgem::board::{Rules, check_size};
use dodgem::eval::{self, Evaluation, learned, net};
use dodgem::notation::{format_position, parse_position};
use dodgem::solver::{Dtz, Tables};
use dodgem::strength::sample::{self, SelfPlay, sample_key};
use dodgem::strength::walk;

const F: usize = learned::FEATURES;
const P: usize = learned::PATTERNS;

/// Evaluation units per unit of the fitted score (a logit).
const SCALE: f64 = 100.0;

#[derive(Parser)]
#[command(about = "Fit the learned evaluation's weights to solved tables")]
struct Args {
    /// A directory of layered tables of a whole board, the share of its
    /// reachable positions to use (RATE, 1 by default; 0 for none) and
    /// the number of self-play games (GAMES, `--games` by default).
    #[arg(long, value_name = "DIR[:RATE[:GAMES]]")]
    tables: Vec<String>,
    /// Self-play games per table directory, whose distinct positions are
    /// used too.
    #[arg(long, default_value_t = 400)]
    games: usize,
    /// Nodes a move in the self-play games.
    #[arg(long, default_value_t = 5_000)]
    game_nodes: u64,
    /// The evaluation the self-play games are played with (`race`, as
    /// the strength benchmark's games; `net` reaches the blockades a
    /// stronger player builds, which `race` games rarely do)
    #[arg(long, default_value = "race", value_parser = parse_evaluation)]
    game_evaluation: Evaluation,
    /// Random plies from the start before each self-play game (a game is
    /// the same whenever its opening is, so this bounds how many distinct
    /// games a board has: on 6 x 6 4 plies give about 36,000 positions
    /// however many games are asked for).
    #[arg(long, default_value_t = 4)]
    opening_plies: u32,
    /// Seed for the samples, the held-out split, the games and the fit.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Keep the positions in this file: read it if it exists (then
    /// `--tables` is not needed), else collect them and write it. Give
    /// it more than once to fit to several files' positions together
    /// (at most one of them new).
    #[arg(long, value_name = "FILE")]
    data: Vec<PathBuf>,
    /// Leave out of the fit every position this file names: each
    /// tab-separated field of each line that reads as a position (such as
    /// a `dodgem strength --details` file, so that the benchmark never
    /// judges positions the evaluation was fitted on). Repeatable.
    #[arg(long, value_name = "FILE")]
    exclude: Vec<PathBuf>,
    /// Leave out the sources whose name contains this text (such as
    /// `5x5`, for a fit that has never seen a 5 x 5 position).
    #[arg(long, value_name = "TEXT")]
    skip: Vec<String>,
    /// Passes over the training positions.
    #[arg(long, default_value_t = 30)]
    epochs: usize,
    /// Positions per optimiser step.
    #[arg(long, default_value_t = 1024)]
    batch: usize,
    /// Adam's step size at the start (it falls linearly to a tenth).
    #[arg(long, default_value_t = 0.01)]
    rate: f64,
    /// L2 penalty on the pattern values.
    #[arg(long, default_value_t = 1e-4)]
    l2: f64,
    /// Fit the linear features only (all pattern values 0).
    #[arg(long)]
    no_patterns: bool,
    /// Add a network to the model: this many hidden units (ReLU) over the
    /// standardised features, on top of the linear terms and the patterns
    /// (0: the linear model of `Evaluation learned`).
    #[arg(long, default_value_t = 0)]
    hidden: usize,
    /// Hold out every position of the sources whose name contains this
    /// text (such as `6x6`): they test the fit and take no part in it.
    #[arg(long, value_name = "TEXT")]
    held_out: Vec<String>,
    /// An experiment: feed the network the raw features, not the scaled
    /// ones the engine computes (`dodgem::eval::net::Network::inputs`); such a fit
    /// cannot be written.
    #[arg(long)]
    raw_inputs: bool,
    /// L2 penalty on the network's weights.
    #[arg(long, default_value_t = 1e-5)]
    net_l2: f64,
    /// Keep the linear weight of every feature whose name contains this
    /// text at 0 (such as `moves to go`: the race then enters the linear
    /// part only as the race lead, whose meaning does not change with the
    /// board).
    #[arg(long, value_name = "TEXT")]
    no_linear: Vec<String>,
    /// Bound the race lead as the network for 7 x 7 and 8 x 8 does
    /// (`net::LEAD_BOUND`), in the linear part and the network alike:
    /// the fit for `src/eval/net_large_weights.rs`.
    #[arg(long)]
    bound_lead: bool,
    /// Feed the network the squares of the cars too
    /// (`learned::car_squares`), for a fit that plays this board size
    /// alone; positions of other sizes are left out.
    #[arg(long, value_name = "SIZE")]
    squares: Option<usize>,
    /// With --squares: feed the network every two cars' squares too, an
    /// input for each pair (`learned::car_inputs`): which cars stand where
    /// together, what a blockade is.
    #[arg(long, requires = "squares")]
    pairs: bool,
    /// Threads for the walks and the games.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Write the fitted weights to this Rust file (`src/eval/weights.rs`
    /// for the linear model, `src/eval/net_weights.rs` with `--hidden`).
    #[arg(long, value_name = "FILE")]
    write: Option<PathBuf>,
}

/// A position of the data: where it came from and its solved result for
/// the side to move (0 loss, 1 draw, 2 win).
struct Record {
    source: usize,
    position: Position,
    y: u8,
}

/// The sources' names and their positions.
struct Data {
    sources: Vec<String>,
    records: Vec<Record>,
}

/// `--game-evaluation`: one of the `Evaluation` option's values.
fn parse_evaluation(name: &str) -> Result<Evaluation, String> {
    Evaluation::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Evaluation::ALL.iter().map(|e| e.name()).collect();
        format!("unknown evaluation {name:?}: one of {}", names.join(", "))
    })
}

fn result_of(value: Dtz) -> u8 {
    match value {
        Dtz::Loss(_) => 0,
        Dtz::Draw => 1,
        Dtz::Win(_) => 2,
    }
}

fn collect(args: &Args) -> Result<Data, String> {
    let mut data = Data {
        sources: Vec::new(),
        records: Vec::new(),
    };
    if args.tables.is_empty() {
        return Err("give --tables (or --data with a file from an earlier run)".into());
    }
    for spec in &args.tables {
        let mut fields = spec.split(':');
        let dir = fields.next().unwrap_or_default();
        let rate = match fields.next() {
            Some(rate) => rate
                .parse::<f64>()
                .map_err(|e| format!("bad rate in {spec}: {e}"))?,
            None => 1.0,
        };
        let games = match fields.next() {
            Some(games) => games
                .parse::<usize>()
                .map_err(|e| format!("bad number of games in {spec}: {e}"))?,
            None => args.games,
        };
        if !(0.0..=1.0).contains(&rate) {
            return Err(format!("the rate in {spec} must be in [0, 1]"));
        }
        let tables = Tables::open(Path::new(dir)).map_err(|e| e.to_string())?;
        let kind = tables.kind();
        let n = kind.size;
        if rate > 0.0 {
            let threshold = (rate * u64::MAX as f64) as u64;
            let source = data.sources.len();
            let found = Mutex::new(Vec::new());
            let seed = args.seed;
            walk(
                &tables,
                args.threads,
                &|reached| {
                    if sample_key(seed, &reached.position) <= threshold
                        && reached.position.count_moves() > 0
                    {
                        found.lock().unwrap().push(Record {
                            source,
                            position: reached.position,
                            y: result_of(reached.value),
                        });
                    }
                },
                &mut |_, _| {},
            )
            .map_err(|e| e.to_string())?;
            let mut records = found.into_inner().unwrap();
            // The walk's threads add in any order: sort for a reproducible fit.
            records.sort_by_key(|r| sample_key(seed, &r.position));
            eprintln!("{dir}: {} reachable positions", records.len());
            data.records.extend(records);
            data.sources
                .push(format!("{n}x{n} {} reachable", kind.rules.name()));
        }
        if games > 0 {
            let plan = SelfPlay {
                size: n,
                rules: kind.rules,
                games,
                opening_plies: args.opening_plies,
                nodes: args.game_nodes,
                seed: args.seed,
                threads: args.threads,
                evaluation: args.game_evaluation,
            };
            let source = data.sources.len();
            // Endgame tables (fewer cars than a side starts with) label the
            // games' positions they cover; whole-board tables cover all.
            let whole = kind.max_cars as usize + 1 >= n;
            let mut positions: Vec<Position> = sample::self_play(&plan, &|| {})?
                .into_iter()
                .filter(|p| p.count_moves() > 0)
                .filter(|p| whole || tables.shape().locate(p).is_some())
                .collect();
            // Layer by layer, so that each layer's file is read once (the
            // 6 x 6 tables hold far more than memory does).
            positions.sort_by_key(|p| tables.shape().locate(p));
            for position in positions {
                let value = tables
                    .probe(&position)
                    .map_err(|e| e.to_string())?
                    .ok_or("a game position is not in the tables")?;
                data.records.push(Record {
                    source,
                    position,
                    y: result_of(value),
                });
            }
            let count = data.records.iter().filter(|r| r.source == source).count();
            eprintln!("{dir}: {count} self-play positions");
            data.sources
                .push(format!("{n}x{n} {} games", kind.rules.name()));
        }
    }
    Ok(data)
}

/// The data file: the sources' names, a blank line, then one position a
/// line: source number, result, position string (tab-separated).
fn write_data(path: &Path, data: &Data) -> Result<(), String> {
    let error = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let mut out = BufWriter::new(std::fs::File::create(path).map_err(error)?);
    for name in &data.sources {
        writeln!(out, "{name}").map_err(error)?;
    }
    writeln!(out).map_err(error)?;
    for r in &data.records {
        writeln!(
            out,
            "{}\t{}\t{}",
            r.source,
            r.y,
            format_position(&r.position)
        )
        .map_err(error)?;
    }
    out.flush().map_err(error)
}

fn read_data(path: &Path) -> Result<Data, String> {
    let error = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let file = std::io::BufReader::new(std::fs::File::open(path).map_err(error)?);
    let mut data = Data {
        sources: Vec::new(),
        records: Vec::new(),
    };
    let mut in_header = true;
    for line in file.lines() {
        let line = line.map_err(error)?;
        if in_header {
            if line.is_empty() {
                in_header = false;
            } else {
                data.sources.push(line);
            }
            continue;
        }
        let bad = || format!("{}: bad line '{line}'", path.display());
        let mut fields = line.split('\t');
        let source = fields.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let y = fields.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let position = fields
            .next()
            .and_then(|s| parse_position(s).ok())
            .ok_or_else(bad)?;
        data.records.push(Record {
            source,
            position,
            y,
        });
    }
    Ok(data)
}

/// A position ready for the fit: standardised features and its cars'
/// patterns (ours below `P`, theirs from `P`).
struct Example {
    z: [f32; F],
    /// The network's inputs (`dodgem::eval::net::Network::inputs`), standardised.
    x: [f32; F],
    patterns: Vec<u16>,
    /// The squares of the cars, with `--squares`.
    squares: Vec<u16>,
    y: u8,
    source: usize,
    weight: f64,
    held_out: bool,
    /// The race evaluation (in hundreds), for comparison.
    race: f32,
}

/// The inputs of the learned model: the standardised features.
fn features_of(e: &Example) -> &[f32] {
    &e.z
}

/// The inputs of the network: its scaled, standardised features.
fn net_inputs_of(e: &Example) -> &[f32] {
    &e.x
}

/// The input of the comparison model: the race evaluation.
fn race_of(e: &Example) -> &[f32] {
    std::slice::from_ref(&e.race)
}

/// Which inputs a model reads from an example.
type InputsOf = fn(&Example) -> &[f32];

/// Salt for the held-out split's hash (different from the sampling's).
const SPLIT_SALT: u64 = 0x5EED_5EED_0000_0001;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Negative log-likelihood of result `y` at score `s` with cut points
/// `c1 < c2`, and its derivatives in `s`, `c1` and `c2`.
fn loss(s: f64, c1: f64, c2: f64, y: u8) -> (f64, f64, f64, f64) {
    let (a, b) = (sigmoid(c1 - s), sigmoid(c2 - s));
    const TINY: f64 = 1e-12;
    match y {
        0 => (-(a.max(TINY)).ln(), 1.0 - a, -(1.0 - a), 0.0),
        2 => (-((1.0 - b).max(TINY)).ln(), -b, 0.0, b),
        _ => {
            let p = (b - a).max(TINY);
            let (da, db) = (a * (1.0 - a), b * (1.0 - b));
            (-p.ln(), (db - da) / p, da / p, -db / p)
        }
    }
}

/// The most likely result at score `s`.
fn predict(s: f64, c1: f64, c2: f64) -> u8 {
    let lose = sigmoid(c1 - s);
    let win = 1.0 - sigmoid(c2 - s);
    let draw = 1.0 - lose - win;
    if lose >= draw && lose >= win {
        0
    } else if win >= draw {
        2
    } else {
        1
    }
}

/// Parameters, in one vector for the optimiser: linear weights on the
/// inputs, the first cut point and the log of the gap to the second, the
/// pattern values (ours, then theirs), then the network's: for each hidden
/// unit its weights on the inputs and its bias, then the output weight of
/// each unit.
#[derive(Clone)]
struct Model {
    inputs: usize,
    /// Square inputs of the network (0 without `--squares`): a hidden
    /// unit's weights on them follow its weights on the inputs.
    squares: usize,
    hidden: usize,
    params: Vec<f64>,
}

impl Model {
    fn new(inputs: usize, squares: usize, hidden: usize, rng: &mut Rng) -> Model {
        let mut model = Model {
            inputs,
            squares,
            hidden,
            params: vec![0.0; inputs + 2 + 2 * P + hidden * (inputs + squares + 2)],
        };
        model.params[inputs] = -1.0;
        model.params[inputs + 1] = 0.7;
        // Hidden weights drawn uniformly with the variance He et al. give
        // ReLU units; output weights start at 0 (the linear model's start).
        let bound = (6.0 / inputs as f64).sqrt();
        let (first, unit_len) = (model.net_start(), model.unit_len());
        for j in 0..hidden {
            for i in 0..inputs + squares {
                let u = rng.below(1 << 20) as f64 / f64::from(1 << 20);
                model.params[first + j * unit_len + i] = bound * (2.0 * u - 1.0);
            }
        }
        model
    }

    fn cuts(&self) -> (f64, f64) {
        let c1 = self.params[self.inputs];
        (c1, c1 + self.params[self.inputs + 1].exp())
    }

    fn pattern_start(&self) -> usize {
        self.inputs + 2
    }

    fn net_start(&self) -> usize {
        self.pattern_start() + 2 * P
    }

    /// A hidden unit's parameters: its weights on the inputs and the
    /// squares, and its bias.
    fn unit_len(&self) -> usize {
        self.inputs + self.squares + 1
    }

    fn output_start(&self) -> usize {
        self.net_start() + self.hidden * self.unit_len()
    }

    fn linear(&self) -> &[f64] {
        &self.params[..self.inputs]
    }

    fn patterns(&self) -> &[f64] {
        &self.params[self.pattern_start()..self.net_start()]
    }

    /// Hidden unit `j`'s weights on the inputs and the squares, then its
    /// bias.
    fn unit(&self, j: usize) -> &[f64] {
        let at = self.net_start() + j * self.unit_len();
        &self.params[at..at + self.unit_len()]
    }

    fn output(&self) -> &[f64] {
        &self.params[self.output_start()..]
    }

    /// The score, and the hidden units' activations into `hidden` (as
    /// many as the model has).
    fn forward(
        &self,
        z: &[f32],
        x: &[f32],
        squares: &[u16],
        patterns: &[u16],
        hidden: &mut [f64],
    ) -> f64 {
        let linear: f64 = self
            .linear()
            .iter()
            .zip(z)
            .map(|(w, &z)| w * f64::from(z))
            .sum();
        let values = self.patterns();
        let cars: f64 = patterns.iter().map(|&p| values[usize::from(p)]).sum();
        let mut net = 0.0;
        for (j, (h, &out)) in hidden.iter_mut().zip(self.output()).enumerate() {
            let unit = self.unit(j);
            let a = unit[self.inputs + self.squares]
                + unit[..self.inputs]
                    .iter()
                    .zip(x)
                    .map(|(w, &x)| w * f64::from(x))
                    .sum::<f64>()
                + squares
                    .iter()
                    .map(|&q| unit[self.inputs + usize::from(q)])
                    .sum::<f64>();
            *h = a.max(0.0);
            net += out * *h;
        }
        linear + cars + net
    }

    fn score(&self, z: &[f32], x: &[f32], squares: &[u16], patterns: &[u16]) -> f64 {
        let mut hidden = vec![0.0; self.hidden];
        self.forward(z, x, squares, patterns, &mut hidden)
    }
}

/// A small deterministic generator for the shuffles (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

/// Adam over mini-batches of the training examples. `use_patterns` false
/// keeps every pattern value at 0; `z_of` gives the inputs; `hidden` units
/// of a network are added to the linear model.
fn fit(
    examples: &[Example],
    inputs: usize,
    squares: usize,
    hidden: usize,
    args: &Args,
    use_patterns: bool,
    z_of: InputsOf,
) -> Model {
    let mut rng = Rng(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut model = Model::new(inputs, squares, hidden, &mut rng);
    let total = model.params.len();
    let (patterns_at, net_at, output_at, unit_len) = (
        model.pattern_start(),
        model.net_start(),
        model.output_start(),
        model.unit_len(),
    );
    let (mut m, mut v) = (vec![0.0; total], vec![0.0; total]);
    let (beta1, beta2, eps) = (0.9, 0.999, 1e-8);
    let mut order: Vec<usize> = (0..examples.len())
        .filter(|&i| !examples[i].held_out)
        .collect();
    let train_weight: f64 = order.iter().map(|&i| examples[i].weight).sum();
    let steps_per_epoch = order.len().div_ceil(args.batch);
    let all_steps = (args.epochs * steps_per_epoch).max(1);
    let mut step: i32 = 0;
    let mut activations = vec![0.0; hidden];
    // Linear weights held at 0 (only for the features' model, not the
    // race comparison's single input).
    let frozen: Vec<usize> = if inputs == F {
        (0..F)
            .filter(|&k| {
                let name = learned::feature_name(k);
                args.no_linear
                    .iter()
                    .any(|text| name.contains(text.as_str()))
            })
            .collect()
    } else {
        Vec::new()
    };
    for _ in 0..args.epochs {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        for batch in order.chunks(args.batch) {
            step += 1;
            let rate = args.rate * (1.0 - 0.9 * step as f64 / all_steps as f64);
            let mut grad = vec![0.0; total];
            let (c1, c2) = model.cuts();
            let gap = model.params[inputs + 1].exp();
            // Each batch stands for its share of the whole training set.
            let batch_weight: f64 = batch.iter().map(|&i| examples[i].weight).sum();
            let norm = 1.0 / batch_weight.max(1e-300);
            for &i in batch {
                let e = &examples[i];
                let patterns: &[u16] = if use_patterns { &e.patterns } else { &[] };
                let (z, x) = (z_of(e), net_inputs_of(e));
                let q: &[u16] = if squares > 0 { &e.squares } else { &[] };
                let s = model.forward(z, x, q, patterns, &mut activations);
                let (_, ds, dc1, dc2) = loss(s, c1, c2, e.y);
                let g = e.weight * norm * ds;
                for (k, &z) in z.iter().enumerate() {
                    grad[k] += g * f64::from(z);
                }
                let gc = e.weight * norm;
                grad[inputs] += gc * (dc1 + dc2);
                grad[inputs + 1] += gc * dc2 * gap;
                for &p in patterns {
                    grad[patterns_at + usize::from(p)] += g;
                }
                for (j, &h) in activations.iter().enumerate() {
                    grad[output_at + j] += g * h;
                    if h > 0.0 {
                        let back = g * model.params[output_at + j];
                        let at = net_at + j * unit_len;
                        for (k, &x) in x.iter().enumerate() {
                            grad[at + k] += back * f64::from(x);
                        }
                        for &square in q {
                            grad[at + inputs + usize::from(square)] += back;
                        }
                        grad[at + inputs + squares] += back;
                    }
                }
            }
            // The penalties, spread over the steps of an epoch.
            let share = batch_weight / train_weight * steps_per_epoch as f64;
            let penalties = [
                (
                    patterns_at..net_at,
                    if use_patterns { args.l2 } else { 0.0 },
                ),
                (net_at..total, args.net_l2),
            ];
            for (range, l2) in penalties {
                for (g, value) in grad[range.clone()].iter_mut().zip(&model.params[range]) {
                    *g += l2 * share * value;
                }
            }
            for &k in &frozen {
                grad[k] = 0.0;
            }
            for k in 0..total {
                if grad[k] == 0.0 && m[k] == 0.0 {
                    continue;
                }
                m[k] = beta1 * m[k] + (1.0 - beta1) * grad[k];
                v[k] = beta2 * v[k] + (1.0 - beta2) * grad[k] * grad[k];
                let mh = m[k] / (1.0 - beta1.powi(step));
                let vh = v[k] / (1.0 - beta2.powi(step));
                model.params[k] -= rate * mh / (vh.sqrt() + eps);
            }
        }
    }
    model
}

/// Mean loss and accuracy per source, on held-out or training examples.
fn measure(
    model: &Model,
    examples: &[Example],
    sources: usize,
    held_out: bool,
    use_patterns: bool,
    z_of: InputsOf,
) -> Vec<(f64, f64, usize)> {
    let (c1, c2) = model.cuts();
    let mut out = vec![(0.0, 0.0, 0usize); sources];
    for e in examples.iter().filter(|e| e.held_out == held_out) {
        let patterns: &[u16] = if use_patterns { &e.patterns } else { &[] };
        let squares: &[u16] = if model.squares > 0 { &e.squares } else { &[] };
        let s = model.score(z_of(e), net_inputs_of(e), squares, patterns);
        let entry = &mut out[e.source];
        entry.0 += loss(s, c1, c2, e.y).0;
        entry.1 += f64::from(u8::from(predict(s, c1, c2) == e.y));
        entry.2 += 1;
    }
    out.into_iter()
        .map(|(loss, right, count)| {
            let n = count.max(1) as f64;
            (loss / n, right / n, count)
        })
        .collect()
}

/// Formats a table of numbers for the weights file.
fn rust_array(values: &[i32], per_line: usize) -> String {
    let mut out = String::new();
    for chunk in values.chunks(per_line) {
        let line: Vec<String> = chunk.iter().map(i32::to_string).collect();
        let _ = writeln!(out, "    {},", line.join(", "));
    }
    out
}

/// The positions of the `--data` files that exist, and those collected
/// from `--tables` (written to the one that does not), less the sources
/// `--skip` names.
fn load(args: &Args) -> Result<Data, String> {
    let missing: Vec<&PathBuf> = args.data.iter().filter(|p| !p.exists()).collect();
    if missing.len() > 1 {
        return Err("at most one --data file can be new".into());
    }
    let mut parts = Vec::new();
    for path in args.data.iter().filter(|p| p.exists()) {
        parts.push(read_data(path)?);
    }
    if !args.tables.is_empty() || parts.is_empty() {
        let data = collect(args)?;
        if let Some(path) = missing.first() {
            write_data(path, &data)?;
        }
        parts.push(data);
    }
    let excluded = excluded_positions(&args.exclude)?;
    let mut data = Data {
        sources: Vec::new(),
        records: Vec::new(),
    };
    let mut dropped = 0usize;
    for part in parts {
        // Each source kept gets the next number; the others none.
        let numbers: Vec<Option<usize>> = part
            .sources
            .iter()
            .map(|name| {
                (!args.skip.iter().any(|s| name.contains(s.as_str()))).then(|| {
                    data.sources.push(name.clone());
                    data.sources.len() - 1
                })
            })
            .collect();
        for mut record in part.records {
            let number = numbers
                .get(record.source)
                .ok_or("a position names a source the file does not list")?;
            let Some(number) = *number else { continue };
            if excluded.contains(&record.position) {
                dropped += 1;
            } else {
                record.source = number;
                data.records.push(record);
            }
        }
    }
    if !args.exclude.is_empty() {
        eprintln!(
            "--exclude: {} positions named, {dropped} of the data's left out",
            excluded.len()
        );
    }
    Ok(data)
}

/// The positions the `--exclude` files name.
fn excluded_positions(paths: &[PathBuf]) -> Result<HashSet<Position>, String> {
    let mut positions = HashSet::new();
    for path in paths {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--exclude {}: {e}", path.display()))?;
        for line in text.lines() {
            positions.extend(line.split('\t').filter_map(|f| parse_position(f).ok()));
        }
    }
    Ok(positions)
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    if args.raw_inputs && args.write.is_some() {
        return Err(
            "the engine scales the network's inputs: --raw-inputs fits cannot be written".into(),
        );
    }
    if let Some(n) = args.squares {
        if args.hidden == 0 {
            return Err("--squares feeds the network: give --hidden too".into());
        }
        check_size(n).map_err(|e| format!("--squares: {e}"))?;
    }
    let mut data = load(&args)?;
    if let Some(n) = args.squares {
        let before = data.records.len();
        data.records.retain(|r| r.position.size() == n);
        eprintln!(
            "--squares {n}: {} positions of other boards left out",
            before - data.records.len()
        );
    }
    let sources = data.sources.len();
    // Sources that only test: every position held out.
    let testing: Vec<bool> = data
        .sources
        .iter()
        .map(|name| args.held_out.iter().any(|t| name.contains(t.as_str())))
        .collect();
    // Whose inputs the fit takes: the bounded race lead of the network
    // for 7 x 7 and 8 x 8, or the unbounded one of the small boards'.
    let network = if args.bound_lead {
        &net::LARGE
    } else {
        &net::SMALL
    };
    let mut per_source = vec![0usize; sources];
    let mut raw = Vec::with_capacity(data.records.len());
    for r in &data.records {
        let held_out =
            testing[r.source] || sample_key(args.seed ^ SPLIT_SALT, &r.position).is_multiple_of(5);
        if !held_out {
            per_source[r.source] += 1;
        }
        let (features, patterns) = learned::analyse(&r.position);
        // The large boards' network reads its features bounded, in the
        // linear part too (`net::Network::bounded`).
        let features = network.bounded(features);
        let inputs = if args.raw_inputs {
            features.map(|f| f as f32)
        } else {
            network.inputs(&features, r.position.size())
        };
        let mut list: Vec<u16> = patterns.ours().to_vec();
        list.extend(patterns.theirs().iter().map(|&p| p + P as u16));
        raw.push((
            features.map(f64::from),
            inputs.map(f64::from),
            list,
            held_out,
        ));
    }
    // Standardise by the training positions (each source weighs the same).
    let weight_of = |source: usize| 1.0 / (per_source[source].max(1) * sources) as f64;
    let standardise = |column: &dyn Fn(usize) -> [f64; F]| {
        let mut mean = [0.0f64; F];
        let mut deviation = [0.0f64; F];
        for (k, (r, row)) in data.records.iter().zip(&raw).enumerate() {
            if !row.3 {
                let values = column(k);
                for i in 0..F {
                    mean[i] += weight_of(r.source) * values[i];
                }
            }
        }
        for (k, (r, row)) in data.records.iter().zip(&raw).enumerate() {
            if !row.3 {
                let values = column(k);
                for i in 0..F {
                    deviation[i] += weight_of(r.source) * (values[i] - mean[i]).powi(2);
                }
            }
        }
        (
            mean,
            deviation.map(|v| if v > 1e-12 { v.sqrt() } else { 1.0 }),
        )
    };
    let (mean, deviation) = standardise(&|k| raw[k].0);
    let (net_mean, net_deviation) = standardise(&|k| raw[k].1);
    let examples: Vec<Example> = data
        .records
        .iter()
        .zip(raw)
        .map(|(r, (features, inputs, patterns, held_out))| Example {
            z: std::array::from_fn(|i| ((features[i] - mean[i]) / deviation[i]) as f32),
            x: std::array::from_fn(|i| ((inputs[i] - net_mean[i]) / net_deviation[i]) as f32),
            patterns,
            squares: match args.squares {
                Some(_) => {
                    let (list, count) = learned::car_inputs(&r.position, args.pairs);
                    list[..count].to_vec()
                }
                None => Vec::new(),
            },
            y: r.y,
            source: r.source,
            weight: weight_of(r.source),
            held_out,
            race: eval::evaluate_for_side_to_move(&r.position, Evaluation::Race, Rules::Textbook)
                as f32
                / 100.0,
        })
        .collect();
    eprintln!("{} positions, fitting", examples.len());

    let use_patterns = !args.no_patterns;
    let squares = args
        .squares
        .map_or(0, |n| learned::car_input_count(n, args.pairs));
    let model = fit(
        &examples,
        F,
        squares,
        args.hidden,
        &args,
        use_patterns,
        features_of,
    );
    let race_model = fit(&examples, 1, 0, 0, &args, false, race_of);
    let held = measure(&model, &examples, sources, true, use_patterns, features_of);
    let trained = measure(&model, &examples, sources, false, use_patterns, features_of);
    let race_held = measure(&race_model, &examples, sources, true, false, race_of);
    let what = if args.hidden > 0 { "net" } else { "learned" };
    println!("held-out positions: loss (nats) and accuracy, {what} (train loss) vs race");
    for (i, name) in data.sources.iter().enumerate() {
        println!(
            "{:<26} {:>7} {what} {:.4} {:.1}% ({:.4}), race {:.4} {:.1}%",
            name,
            held[i].2,
            held[i].0,
            100.0 * held[i].1,
            trained[i].0,
            race_held[i].0,
            100.0 * race_held[i].1,
        );
    }

    // Back to raw features, in evaluation units, centred on the draw band.
    let (c1, c2) = model.cuts();
    let mut offset = -(c1 + c2) / 2.0;
    let mut weights_out = [0i32; F];
    for i in 0..F {
        let w = model.linear()[i] / deviation[i];
        offset -= w * mean[i];
        weights_out[i] = (SCALE * w).round() as i32;
    }
    let patterns_out: Vec<i32> = model
        .patterns()
        .iter()
        .map(|&v| ((SCALE * v).round() as i32).clamp(i32::from(i16::MIN), i32::from(i16::MAX)))
        .collect();
    let bias = (SCALE * offset).round() as i32;
    println!(
        "draw band: +-{:.0} evaluation units; side to move bias {bias}",
        SCALE * (c2 - c1) / 2.0
    );
    for (i, w) in weights_out.iter().enumerate() {
        println!("{:>6}  {}", w, learned::feature_name(i));
    }
    let used = patterns_out.iter().filter(|&&v| v != 0).count();
    println!("pattern values: {used} of {} not zero", 2 * P);
    if let Some(path) = &args.write {
        let mut text = format!(
            "//! Weights of the {} evaluation, written by the tuner\n\
             //! (`cargo run --release --example tune`, see the README); do not\n\
             //! edit by hand.\n\
             //!\n\
             //! Fitted with: {}\n\n",
            if args.hidden > 0 {
                "network"
            } else {
                "learned"
            },
            std::env::args().skip(1).collect::<Vec<_>>().join(" ")
        );
        // The lengths of the arrays are written as numbers, so that the file
        // stands alone (it names nothing of the evaluation it feeds); the
        // engine checks them against its own when it compiles.
        let _ = writeln!(
            text,
            "/// The score, in evaluation units, of a position whose features are all\n\
             /// zero: the side to move's bonus.\n\
             pub const BIAS: i32 = {bias};\n\
             /// Evaluation units per unit of each feature, in the order of\n\
             /// `learned::feature_name`.\n\
             pub const WEIGHTS: [i32; {F}] = ["
        );
        // Padded as rustfmt aligns trailing comments, so that `cargo fmt`
        // leaves the file as written.
        let values: Vec<String> = weights_out.iter().map(|w| format!("{w},")).collect();
        let width = values.iter().map(String::len).max().unwrap_or(0);
        for (i, value) in values.iter().enumerate() {
            let name = learned::feature_name(i);
            let _ = writeln!(text, "    {value:<width$} // {name}");
        }
        text.push_str("];\n");
        for (name, doc, values) in [
            (
                "OUR_PATTERNS",
                "/// The value of each neighbourhood pattern of one of the side to move's\n\
                 /// cars (`learned::pattern`), in evaluation units.",
                &patterns_out[..P],
            ),
            (
                "THEIR_PATTERNS",
                "/// The same for the other side's cars.",
                &patterns_out[P..],
            ),
        ] {
            let _ = writeln!(
                text,
                "{doc}\n#[rustfmt::skip]\npub static {name}: [i16; {P}] = ["
            );
            text.push_str(&rust_array(values, 16));
            text.push_str("];\n");
        }
        if args.hidden > 0 {
            text.push_str(&network_text(&model, &net_mean, &net_deviation));
        }
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The network's part of the weights file: the hidden units' weights on
/// the engine's scaled features, `Network::inputs` (the standardisation
/// folded in; a row per feature, a column per unit, the order the engine
/// adds them in) and their biases, and the output weights in evaluation
/// units.
fn network_text(model: &Model, mean: &[f64; F], deviation: &[f64; F]) -> String {
    let h = model.hidden;
    let mut rows = vec![vec![0.0f64; h]; F];
    let mut square_rows = vec![vec![0.0f64; h]; model.squares];
    let mut biases = vec![0.0f64; h];
    for j in 0..h {
        let unit = model.unit(j);
        biases[j] = unit[F + model.squares];
        for (k, row) in square_rows.iter_mut().enumerate() {
            row[j] = unit[F + k];
        }
        for i in 0..F {
            let w = unit[i] / deviation[i];
            biases[j] -= w * mean[i];
            rows[i][j] = w;
        }
    }
    let floats = |values: &[f64], scale: f64| -> String {
        let list: Vec<String> = values
            .iter()
            .map(|&v| format!("{:e}", (scale * v) as f32))
            .collect();
        list.join(", ")
    };
    let mut text = format!(
        "/// Hidden units of the network.\n\
         pub const HIDDEN: usize = {h};\n\
         /// The hidden units' weights on each scaled feature (`Network::inputs`; a row per feature,\n\
         /// in the order of `learned::feature_name`; a column per unit).\n\
         #[rustfmt::skip]\n\
         pub static HIDDEN_WEIGHTS: [[f32; HIDDEN]; {F}] = [\n"
    );
    for row in &rows {
        let _ = writeln!(text, "    [{}],", floats(row, 1.0));
    }
    let _ = write!(
        text,
        "];\n\
         /// Each hidden unit's bias.\n\
         #[rustfmt::skip]\n\
         pub static HIDDEN_BIASES: [f32; HIDDEN] = [{}];\n\
         /// Each hidden unit's output weight, in evaluation units.\n\
         #[rustfmt::skip]\n\
         pub static OUTPUT_WEIGHTS: [f32; HIDDEN] = [{}];\n",
        floats(&biases, 1.0),
        floats(model.output(), SCALE)
    );
    if model.squares > 0 {
        let _ = write!(
            text,
            "/// The hidden units' weights on the cars (`learned::car_inputs`; a row per\n\
             /// square, ours then theirs, then with pairs a row per two squares; a column per unit).\n\
             #[rustfmt::skip]\n\
             pub static SQUARE_WEIGHTS: [[f32; HIDDEN]; {}] = [\n",
            model.squares
        );
        for row in &square_rows {
            let _ = writeln!(text, "    [{}],", floats(row, 1.0));
        }
        text.push_str("];\n");
    }
    text
}

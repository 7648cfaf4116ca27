//! Fits the win/draw/loss curve of `UCI_ShowWDL` (`src/wdl.rs`) to solved
//! positions, and measures how well it predicts positions it was not fitted
//! on.
//!
//! ```text
//! cargo run --release -- solve --size 5 --out /tmp/t5-textbook
//! cargo run --release -- solve --size 5 --rules classic --out /tmp/t5-classic
//! cargo run --release --example fitwdl -- --tables /tmp/t5-textbook --tables /tmp/t5-classic \
//!     [--check DIR]...
//! ```
//!
//! Positions are taken from games between randomly chosen `Skill Level`s
//! (positions games really reach, good and bad), on 3 x 3 and 4 x 4 (the
//! built-in tables) and on 5 x 5 (the tables given), under both rules.
//! Each is searched at full strength without tables, with a node budget
//! drawn between 1,000 and 100,000 (the curve must serve short and long
//! searches), and its true value is read from the table. Positions the
//! search proves (a mate score) are left out: the engine reports those as
//! exact.
//!
//! The curve is `win = 1 / (1 + exp((a - s) / b))`, `loss = 1 / (1 +
//! exp((a + s) / b))`. Several ways for `a` and `b` to depend on the
//! position are fitted by maximum likelihood on the positions of the
//! even-numbered games and scored on the positions of the odd-numbered
//! games (held out): log loss against the constant prediction (each result
//! at its frequency), and how often the most likely result is the true
//! one. With `--check DIR` (layered tables of other boards, such as the
//! endgame tables with at most 3 cars a side on 7 x 7 and 8 x 8), positions
//! from those boards are scored too, never fitted on. The engine's own
//! curve is scored the same way; the constants to put in `src/wdl.rs` are
//! printed last.

use std::sync::Arc;

use clap::Parser;
use dodgem::board::{Color, Rules};
use dodgem::eval::moves_to_go;
use dodgem::game::Game;
use dodgem::search::TABLE_WIN_BOUND;
use dodgem::search::{Limits, Request, Settings, Signals, Skill, Tables, search};
use dodgem::solver::Dtz;
use dodgem::tablebase::{self, Layered};
use dodgem::wdl::{self, chances};
use dodgem::{Position, notation};

#[derive(Parser)]
struct Args {
    /// Directories of layered 5 x 5 tables (`dodgem solve --size 5 --out`),
    /// one per rule.
    #[arg(long = "tables", required_unless_present_any = ["load", "games_pgn"])]
    tables: Vec<std::path::PathBuf>,
    /// Layered tables of another board to score the curves on (not fitted).
    #[arg(long = "check")]
    check: Vec<std::path::PathBuf>,
    /// Games per board and rule.
    #[arg(long, default_value_t = 400)]
    games: u64,
    /// Games on each --check board (default: --games).
    #[arg(long)]
    check_games: Option<u64>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Save the sampled positions to this file (to fit again without
    /// sampling, with --load).
    #[arg(long)]
    save: Option<std::path::PathBuf>,
    /// Fit and score the positions of a file --save wrote instead of
    /// sampling new ones.
    #[arg(long, conflicts_with = "tables")]
    load: Option<std::path::PathBuf>,
    /// Fit on the --check boards' positions too (half of each board's
    /// games, the other half held out), not only score the curves there.
    #[arg(long)]
    fit_checks: bool,
    /// Game records with scores (`dodgem match --pgn FILE`): every
    /// position a move was scored in, its true result taken to be the
    /// game's. A check set of its own (fitted with --fit-checks, odd
    /// games held out), for boards no table reaches.
    #[arg(long = "games-pgn")]
    games_pgn: Vec<std::path::PathBuf>,
    /// Fit and score the knot curves only (the logistic families take
    /// minutes on many positions).
    #[arg(long)]
    knots_only: bool,
}

/// A position's true result for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Truth {
    Win,
    Draw,
    Loss,
}

/// A board size and a rule: each has a knot curve of its own.
type Board = (usize, Rules);

/// One sampled position: its search score and true result.
#[derive(Clone, Copy, Debug)]
struct Sample {
    position: Position,
    /// The rule its game was played under (the same score means more
    /// wins and fewer draws under `classic`, where a blocked side wins).
    rules: Rules,
    score: f64,
    truth: Truth,
    held_out: bool,
    /// Which game of its set it comes from (positions of one game share
    /// its outcome).
    game: u32,
}

impl Sample {
    /// Moves both sides still need to drive their cars off.
    fn race(&self) -> f64 {
        let moves = |color| f64::from(moves_to_go(&self.position, color));
        moves(Color::Black) + moves(Color::White)
    }

    /// Cars on the board, both sides.
    fn cars(&self) -> f64 {
        self.cars_of(Color::Black) + self.cars_of(Color::White)
    }

    /// `(black - 1) * (white - 1)`, counting cars on the board.
    fn pairs(&self) -> f64 {
        (self.cars_of(Color::Black) - 1.0) * (self.cars_of(Color::White) - 1.0)
    }

    fn cars_of(&self, color: Color) -> f64 {
        f64::from(self.position.cars(color).count_ones())
    }

    /// One line of a samples file: position, score, truth, held out,
    /// game, rule.
    fn line(&self) -> String {
        format!(
            "{}|{}|{:?}|{}|{}|{}",
            notation::format_position(&self.position),
            self.score,
            self.truth,
            self.held_out,
            self.game,
            self.rules.name()
        )
    }

    /// Its board and rule, which have a curve of their own.
    fn board(&self) -> Board {
        (self.position.size(), self.rules)
    }

    fn read(line: &str) -> Option<Sample> {
        let mut fields = line.split('|');
        let position = notation::parse_position(fields.next()?).ok()?;
        let score = fields.next()?.parse().ok()?;
        let truth = match fields.next()? {
            "Win" => Truth::Win,
            "Draw" => Truth::Draw,
            "Loss" => Truth::Loss,
            _ => return None,
        };
        let held_out = fields.next()?.parse().ok()?;
        let game = fields.next()?.parse().ok()?;
        let rules = Rules::from_name(fields.next()?)?;
        Some(Sample {
            position,
            rules,
            score,
            truth,
            held_out,
            game,
        })
    }
}

/// How `a` and `b` may depend on the position: `a = A * x`, `b = B * y`
/// with `(x, y)` from the position and `A`, `B` fitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    /// Constants for each board, fitted on that board alone.
    PerBoard,
    /// Both proportional to the moves left in the race (both sides).
    Race,
    /// `a` proportional to the moves left, `b` to their square root.
    RaceSqrt,
    /// Both proportional to the cars on the board.
    Cars,
    /// `a` proportional to the product of the two sides' cars on the
    /// board (blocking, which makes draws, takes cars of both sides), `b`
    /// to the square root of the moves left.
    Blocking,
    /// As `Blocking`, with one car of each side left out of the product:
    /// a lone car cannot be held up for ever.
    BlockingPairs,
    /// As `BlockingPairs`, `b` proportional to the moves left.
    BlockingPairsRace,
    /// `a` proportional to a power of the share of the race still to run
    /// (the moves left over those at the start), `b` to the square root of
    /// the moves left.
    Phase(i32),
    /// `a` proportional to a power of the share of the cars still on the
    /// board, `b` to the square root of the moves left.
    CarShare(i32),
    /// As `CarShare`, with `A` and `B` fitted on each board alone.
    CarShareEach(i32),
}

impl Family {
    const ALL: [Family; 14] = [
        Family::PerBoard,
        Family::Race,
        Family::RaceSqrt,
        Family::Cars,
        Family::Blocking,
        Family::BlockingPairs,
        Family::BlockingPairsRace,
        Family::Phase(1),
        Family::Phase(2),
        Family::Phase(3),
        Family::CarShare(2),
        Family::CarShare(4),
        Family::CarShare(8),
        Family::CarShareEach(2),
    ];

    fn scales(self, s: &Sample) -> (f64, f64) {
        match self {
            Family::PerBoard => (1.0, 1.0),
            Family::Race => (s.race(), s.race()),
            Family::RaceSqrt => (s.race(), s.race().sqrt()),
            Family::Cars => (s.cars(), s.cars()),
            Family::Blocking => (
                s.cars_of(Color::Black) * s.cars_of(Color::White),
                s.race().sqrt(),
            ),
            Family::BlockingPairs => (s.pairs(), s.race().sqrt()),
            Family::BlockingPairsRace => (s.pairs(), s.race()),
            Family::Phase(p) => {
                let n = s.position.size() as f64;
                ((s.race() / (2.0 * n * (n - 1.0))).powi(p), s.race().sqrt())
            }
            Family::CarShare(p) | Family::CarShareEach(p) => {
                let n = s.position.size() as f64;
                ((s.cars() / (2.0 * (n - 1.0))).powi(p), s.race().sqrt())
            }
        }
    }

    fn curve(self, (big_a, big_b): (f64, f64), s: &Sample) -> (f64, f64) {
        let (x, y) = self.scales(s);
        // 3 x 3 has no drawn position: no draw band there (as in src/wdl.rs).
        let x = if s.position.size() == 3 { 0.0 } else { x };
        (big_a * x, big_b * y)
    }

    /// The win and loss chances of `s` with constants `(A, B)`.
    fn chances(self, constants: (f64, f64), s: &Sample) -> (f64, f64) {
        let (a, b) = self.curve(constants, s);
        chances(s.score, a, b)
    }
}

/// The family `src/wdl.rs` uses (with `a = 0` on 3 x 3).
const ENGINE_FAMILY: Family = Family::CarShareEach(2);

/// Where the truth comes from: solved tables.
struct Oracle(Arc<Layered>);

impl Oracle {
    fn truth(&self, position: &Position, rules: Rules) -> Option<Truth> {
        if !self.0.covers(position, rules) {
            return None;
        }
        self.0.probe(position).map(|value| match value {
            Dtz::Win(_) => Truth::Win,
            Dtz::Draw => Truth::Draw,
            Dtz::Loss(_) => Truth::Loss,
        })
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        (self.next() >> 33) % n
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A search's score for `position` (internal units, side to move), at
/// full strength without tables, within `nodes`.
fn score(position: &Position, rules: Rules, nodes: u64, tables: &mut Tables) -> i32 {
    let request = Request {
        position: *position,
        history: Vec::new(),
        limits: Limits {
            nodes: Some(nodes),
            ..Limits::default()
        },
        settings: Settings {
            rules,
            ..Settings::default()
        },
        tablebase: Default::default(),
    };
    search(&request, tables, &Signals::default(), &mut |_| {}).score
}

/// Samples positions from `games` games on `size` under `rules`, each game
/// between two random levels, about one position in six. Only positions
/// the oracle knows and the search does not prove are kept; `proven`
/// counts the others and how often the table agrees with the proof.
fn sample(
    size: usize,
    rules: Rules,
    oracle: &Oracle,
    games: u64,
    rng: &mut Rng,
    proven: &mut (u64, u64),
) -> Vec<Sample> {
    let mut samples = Vec::new();
    let mut play_tables = Tables::new(4);
    let mut score_tables = Tables::new(16);
    for game_number in 0..games {
        let levels = [rng.below(20) as u8, rng.below(20) as u8];
        let mut game = Game::new(Position::start(size));
        while game.outcome(rules).is_none() && game.moves().len() < 300 {
            let position = *game.position();
            if rng.below(6) == 0
                && let Some(truth) = oracle.truth(&position, rules)
            {
                let nodes = (1000.0 * 100f64.powf(rng.unit())) as u64;
                score_tables.clear();
                let score = score(&position, rules, nodes, &mut score_tables);
                if score.abs() >= TABLE_WIN_BOUND {
                    proven.0 += 1;
                    let said = if score > 0 { Truth::Win } else { Truth::Loss };
                    proven.1 += u64::from(said == truth);
                    if said != truth {
                        eprintln!(
                            "the search proves {said:?} ({score}, {nodes} nodes) where the table says {truth:?}: {} {}",
                            notation::format_position(&position),
                            rules.name()
                        );
                    }
                } else {
                    samples.push(Sample {
                        position,
                        rules,
                        score: f64::from(score),
                        truth,
                        held_out: game_number % 2 == 1,
                        game: game_number as u32,
                    });
                }
            }
            let side = usize::from(position.side_to_move() == Color::White);
            let request = Request {
                position,
                history: game.history(),
                limits: Limits::default(),
                settings: Settings {
                    rules,
                    skill: Skill::new(levels[side]).with_seed(rng.next()),
                    ..Settings::default()
                },
                tablebase: Default::default(),
            };
            let mv = search(&request, &mut play_tables, &Signals::default(), &mut |_| {})
                .best_move
                .expect("a move in a live game");
            game.play(mv);
        }
    }
    samples
}

/// The probability of `truth` given the win and loss chances.
fn probability(truth: Truth, (win, loss): (f64, f64)) -> f64 {
    let p = match truth {
        Truth::Win => win,
        Truth::Loss => loss,
        Truth::Draw => 1.0 - win - loss,
    };
    p.clamp(1e-6, 1.0)
}

/// A prediction for each sample: its win and loss chances.
type Curve<'a> = &'a dyn Fn(&Sample) -> (f64, f64);

/// Mean log loss (nats per position) of `curve` on `samples`.
fn log_loss(samples: &[&Sample], curve: Curve) -> f64 {
    let total: f64 = samples
        .iter()
        .map(|s| -probability(s.truth, curve(s)).ln())
        .sum();
    total / samples.len() as f64
}

/// The constants `(A, B)` of `family` that fit `samples` best: a coarse
/// grid, then finer ones around the best point.
fn fit(samples: &[&Sample], family: Family) -> (f64, f64) {
    let draws = samples.iter().any(|s| s.truth == Truth::Draw);
    // A few hundred evaluation units over each constant's typical scale
    // bound the search (`a` and `b` have scales of their own: a share of
    // the race is at most 1, a count of moves is many).
    let typical = |part: fn((f64, f64)) -> f64| {
        let sum: f64 = samples.iter().map(|s| part(family.scales(s))).sum();
        (sum / samples.len() as f64).max(1e-9)
    };
    let (top_a, top_b) = (800.0 / typical(|x| x.0), 800.0 / typical(|x| x.1));
    let mut best = (0.0, top_b / 10.0);
    let mut best_loss = f64::INFINITY;
    let (mut a_range, mut b_range) = (
        (0.0, if draws { top_a } else { 0.0 }),
        (top_b / 400.0, top_b),
    );
    for fraction in [1.0 / 50.0, 1.0 / 500.0, 1.0 / 5000.0] {
        let (step_a, step_b) = (top_a * fraction, top_b * fraction);
        let mut a = a_range.0;
        while a <= a_range.1 + step_a / 2.0 {
            let mut b = b_range.0;
            while b <= b_range.1 + step_b / 2.0 {
                let loss = log_loss(samples, &|s| family.chances((a, b), s));
                if loss < best_loss {
                    best_loss = loss;
                    best = (a, b);
                }
                b += step_b;
            }
            a += step_a;
        }
        a_range = (
            (best.0 - step_a).max(0.0),
            if draws { best.0 + step_a } else { 0.0 },
        );
        b_range = ((best.1 - step_b).max(step_b / 10.0), best.1 + step_b);
    }
    best
}

fn index(truth: Truth) -> usize {
    match truth {
        Truth::Win => 0,
        Truth::Draw => 1,
        Truth::Loss => 2,
    }
}

/// The constant prediction: each result at its frequency in `train`.
fn frequencies(train: &[&Sample]) -> [f64; 3] {
    let mut counts = [0.0; 3];
    for s in train {
        counts[index(s.truth)] += 1.0;
    }
    counts.map(|c| (c / train.len() as f64).max(1e-6))
}

/// How often the most likely result under `curve` is the true one.
fn hit_rate(test: &[&Sample], curve: Curve) -> f64 {
    let hits = test
        .iter()
        .filter(|s| {
            let p = [Truth::Win, Truth::Draw, Truth::Loss].map(|t| probability(t, curve(s)));
            let guess = (0..3).max_by(|&i, &j| p[i].total_cmp(&p[j])).unwrap_or(1);
            guess == index(s.truth)
        })
        .count();
    100.0 * hits as f64 / test.len() as f64
}

/// The constant prediction's log loss and hit rate on `test`.
fn constant(train: &[&Sample], test: &[&Sample]) -> (f64, f64) {
    let base = frequencies(train);
    let loss = test.iter().map(|s| -base[index(s.truth)].ln()).sum::<f64>() / test.len() as f64;
    let majority = (0..3)
        .max_by(|&i, &j| base[i].total_cmp(&base[j]))
        .unwrap_or(1);
    let hits = test.iter().filter(|s| index(s.truth) == majority).count();
    (loss, 100.0 * hits as f64 / test.len() as f64)
}

/// Positions from game records (`--games-pgn`) are numbered from here
/// on, a million games a file; below it are sampled positions labelled
/// by tables.
const FIRST_RECORD_GAME: u32 = 1_000_000;

/// Score ranges of a calibration table.
const BUCKETS: [f64; 10] = [
    -1e9, -300.0, -150.0, -75.0, -25.0, 25.0, 75.0, 150.0, 300.0, 1e9,
];

/// A calibration table: by score, the mean predicted chances against the
/// observed results, the games the positions come from, and the largest
/// gap in percentage points between a predicted and an observed share.
fn calibration(test: &[&Sample], curve: Curve) {
    println!(
        "    score range       n  games   predicted W/D/L %   observed W/D/L %   gap  chance (95%)"
    );
    for pair in BUCKETS.windows(2) {
        let bin: Vec<&&Sample> = test
            .iter()
            .filter(|s| s.score >= pair[0] && s.score < pair[1])
            .collect();
        if bin.is_empty() {
            continue;
        }
        let n = bin.len() as f64;
        let mut predicted = [0.0; 3];
        let mut observed = [0.0; 3];
        for s in &bin {
            let (w, l) = curve(s);
            predicted[0] += w / n;
            predicted[1] += (1.0 - w - l) / n;
            predicted[2] += l / n;
            observed[index(s.truth)] += 1.0 / n;
        }
        let mut games: Vec<u32> = bin.iter().map(|s| s.game).collect();
        games.sort_unstable();
        games.dedup();
        let gap = (0..3)
            .map(|i| 100.0 * (predicted[i] - observed[i]).abs())
            .fold(0.0, f64::max);
        // How far the observed shares could be from the truth by chance
        // (95%, the largest of the three): positions of one game share its
        // outcome, so a game counts as one draw of chance, not each of its
        // positions (a table's positions are each their own).
        let mut clusters: std::collections::HashMap<(u32, usize), [f64; 3]> = Default::default();
        for (i, s) in bin.iter().enumerate() {
            let key = if s.game >= FIRST_RECORD_GAME {
                (s.game, 0)
            } else {
                (0, i)
            };
            clusters.entry(key).or_default()[index(s.truth)] += 1.0;
        }
        let margin = (0..3)
            .map(|k| {
                let spread: f64 = clusters
                    .values()
                    .map(|c| (c[k] - observed[k] * (c[0] + c[1] + c[2])).powi(2))
                    .sum();
                196.0 * spread.sqrt() / n
            })
            .fold(0.0, f64::max);
        let pct = |p: [f64; 3]| {
            format!(
                "{:>3.0} {:>3.0} {:>3.0}",
                100.0 * p[0],
                100.0 * p[1],
                100.0 * p[2]
            )
        };
        let range = format!("[{}, {})", pair[0].max(-9999.0), pair[1].min(9999.0));
        println!(
            "    {range:<14} {:>5}  {:>5}   {}         {}        {gap:>4.1}  {margin:>4.1}",
            bin.len(),
            games.len(),
            pct(predicted),
            pct(observed)
        );
    }
}

/// Scores a knot curve is read at (symmetric about 0). A score of
/// exactly 0 has a knot of its own: it is mostly a draw the search found
/// (a repetition), which a lead of a few units is not.
const KNOT_SCORES: [i32; 19] = [
    -1000, -600, -400, -300, -200, -150, -100, -50, -1, 0, 1, 50, 100, 150, 200, 300, 400, 600,
    1000,
];

/// Which outcomes a knot table is fitted to.
#[derive(Clone, Copy, PartialEq)]
enum Mirror {
    /// Wins at their score and losses at minus theirs: one table for both
    /// chances (the side to move's score means the same for either
    /// colour).
    Both,
    /// Wins alone: the win table of a curve with a loss table of its own.
    Wins,
    /// Losses alone, at minus their score: that loss table.
    Losses,
}

/// A knot table (`wdl::Knots`) fitted to the outcomes of `train` that
/// `mirror` names: each knot takes the share of wins near it, weighted
/// by how close each score is (linearly, to the next knot either way),
/// and the shares are then made to rise with the score (pooling adjacent
/// knots that do not, weighted by their data).
fn fit_knots(train: &[&Sample], mirror: Mirror) -> Vec<(i32, f64)> {
    let knots = KNOT_SCORES.map(f64::from);
    let last = knots.len() - 1;
    let mut weight = [0.0; KNOT_SCORES.len()];
    let mut wins = [0.0; KNOT_SCORES.len()];
    let mut add = |x: f64, y: f64| {
        let right = knots.partition_point(|&k| k <= x).clamp(1, last);
        let t = ((x - knots[right - 1]) / (knots[right] - knots[right - 1])).clamp(0.0, 1.0);
        for (k, w) in [(right - 1, 1.0 - t), (right, t)] {
            weight[k] += w;
            wins[k] += w * y;
        }
    };
    for s in train {
        if mirror != Mirror::Losses {
            add(s.score, f64::from(u8::from(s.truth == Truth::Win)));
        }
        if mirror != Mirror::Wins {
            add(-s.score, f64::from(u8::from(s.truth == Truth::Loss)));
        }
    }
    // Pool adjacent violators: blocks of (wins, weight, knots).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for k in 0..=last {
        blocks.push((wins[k], weight[k], 1));
        while blocks.len() > 1 {
            let (w1, n1, c1) = blocks[blocks.len() - 1];
            let (w0, n0, c0) = blocks[blocks.len() - 2];
            let falls = n0 > 0.0 && n1 > 0.0 && w1 / n1 < w0 / n0;
            if !(falls || n1 == 0.0) {
                break;
            }
            blocks.pop();
            let merged = blocks.last_mut().expect("two blocks");
            *merged = (w0 + w1, n0 + n1, c0 + c1);
        }
    }
    let mut shares = Vec::new();
    for (w, n, count) in blocks {
        shares.extend(std::iter::repeat_n(
            if n > 0.0 { w / n } else { f64::NAN },
            count,
        ));
    }
    // A leading block without data takes the first share there is.
    let first = shares.iter().copied().find(|p| !p.is_nan()).unwrap_or(0.0);
    KNOT_SCORES
        .iter()
        .zip(shares)
        .map(|(&k, p)| (k, if p.is_nan() { first } else { p }))
        .collect()
}

/// A fitted knot curve: its win table and, where the loss chance has a
/// table of its own, that one.
struct KnotCurve {
    points: Vec<(i32, f64)>,
    loss: Option<Vec<(i32, f64)>>,
}

impl KnotCurve {
    /// One table for both chances.
    fn mirrored(train: &[&Sample]) -> KnotCurve {
        KnotCurve {
            points: fit_knots(train, Mirror::Both),
            loss: None,
        }
    }

    /// A table for each chance.
    fn apart(train: &[&Sample]) -> KnotCurve {
        KnotCurve {
            points: fit_knots(train, Mirror::Wins),
            loss: Some(fit_knots(train, Mirror::Losses)),
        }
    }

    /// The win and loss chances at `score`, as `src/wdl.rs` reads them.
    fn chances(&self, score: f64) -> (f64, f64) {
        wdl::Knots {
            points: &self.points,
            loss: self.loss.as_deref(),
        }
        .chances(score)
    }
}

/// A knot table as `src/wdl.rs` writes it.
fn knot_table(points: &[(i32, f64)]) -> String {
    let table: Vec<String> = points
        .iter()
        .map(|(k, p)| format!("({k}, {p:.4})"))
        .collect();
    format!("[(i32, f64); {}] = [{}]", points.len(), table.join(", "))
}

/// One board's held-out score: log loss and hit rate of `curve` on
/// `test`, and of the constant prediction `train` gives.
fn held_out_line(name: &str, train: &[&Sample], test: &[&Sample], curve: Curve) {
    let base = constant(train, test);
    println!(
        "  {name}: {} held out: {:.3} ({:.1}%), constant {:.3} ({:.1}%)",
        test.len(),
        log_loss(test, curve),
        hit_rate(test, curve),
        base.0,
        base.1
    );
}

/// A family's constants for the board of `s`, from those fitted per
/// board (the largest board's where `s`'s has none).
fn constants_for(constants: &[(usize, (f64, f64))], s: &Sample) -> (f64, f64) {
    constants
        .iter()
        .find(|(n, _)| *n == s.position.size())
        .map_or(constants[constants.len() - 1].1, |&(_, c)| c)
}

/// The samples of the board of `size`.
fn on<'a>(samples: &[&'a Sample], size: usize) -> Vec<&'a Sample> {
    samples
        .iter()
        .copied()
        .filter(|s| s.position.size() == size)
        .collect()
}

/// The samples of one board and rule.
fn under<'a>(samples: &[&'a Sample], board: Board) -> Vec<&'a Sample> {
    samples
        .iter()
        .copied()
        .filter(|s| s.board() == board)
        .collect()
}

/// How a board and rule are named in the output: `5x5 classic`.
fn board_name((n, rules): Board) -> String {
    format!("{n}x{n} {}", rules.name())
}

/// The engine's curve for a sample: the one for the default evaluation
/// (which scored the samples) on its board and rule.
fn engine_curve(s: &Sample) -> (f64, f64) {
    let (size, rules) = s.board();
    wdl::Curve::of(Settings::default().evaluation, size, rules).chances(s.score, &s.position)
}

/// Samples the positions to fit on (3 x 3 to 5 x 5) and to check on.
fn sample_all(args: &Args, rng: &mut Rng) -> (Vec<Sample>, Vec<(String, Vec<Sample>)>) {
    let mut proven = (0, 0);
    let mut fitted_on: Vec<Sample> = Vec::new();
    for size in [3, 4, 5] {
        for rules in Rules::ALL {
            let oracle = if size < 5 {
                Oracle(tablebase::builtin(size, rules).expect("a built-in table"))
            } else {
                let Some(dir) = args.tables.iter().find(|dir| {
                    Layered::open(dir).is_ok_and(|l| l.kind().size == 5 && l.kind().rules == rules)
                }) else {
                    eprintln!("no 5x5 {} tables given: skipped", rules.name());
                    continue;
                };
                Oracle(Arc::new(Layered::open(dir).expect("opened above")))
            };
            fitted_on.extend(sample(size, rules, &oracle, args.games, rng, &mut proven));
        }
    }
    println!(
        "positions the search proved (left out): {}, the table agreeing on {}",
        proven.0, proven.1
    );
    let mut checks: Vec<(String, Vec<Sample>)> = Vec::new();
    for dir in &args.check {
        let layered = Layered::open(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let kind = layered.kind();
        let name = format!(
            "{n}x{n} {}, at most {} cars a side",
            kind.rules.name(),
            kind.max_cars,
            n = kind.size
        );
        let oracle = Oracle(Arc::new(layered));
        let games = args.check_games.unwrap_or(args.games);
        let samples = sample(kind.size, kind.rules, &oracle, games, rng, &mut proven);
        checks.push((name, samples));
    }
    (fitted_on, checks)
}

/// The positions of the game records in `path` whose move has a `cp`
/// score in its comment (the mover's), with the game's result as their
/// truth; positions of odd-numbered games are held out. Games that ended
/// otherwise than by the rules (on time, by a fault, by a move limit) are
/// left out.
fn sample_records(path: &std::path::Path) -> Result<Vec<Sample>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let games =
        dodgem::referee::read_games(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut samples = Vec::new();
    for (number, record) in games.iter().enumerate() {
        // A game lost on time or by a fault says nothing of its positions.
        if record
            .tag("Termination")
            .is_some_and(|t| !["all cars off", "blocked", "threefold repetition"].contains(&t))
        {
            continue;
        }
        let winner = match record.result.as_deref() {
            Some("1-0") => Some(Color::White),
            Some("0-1") => Some(Color::Black),
            Some("1/2-1/2") => None,
            _ => continue,
        };
        let rules = record
            .tag("Rules")
            .map_or(Some(Rules::Textbook), Rules::from_name)
            .ok_or_else(|| format!("{}: game {}: unknown rules", path.display(), number + 1))?;
        let mut game = Game::new(*record.game.start());
        for (&mv, comment) in record.game.moves().iter().zip(&record.comments) {
            let position = *game.position();
            let score = comment
                .as_deref()
                .and_then(|c| c.strip_prefix("cp "))
                .and_then(|c| c.split(['/', ' ']).next())
                .and_then(|cp| cp.parse::<i32>().ok())
                .filter(|cp| cp.abs() < TABLE_WIN_BOUND);
            if let Some(score) = score {
                let truth = match winner {
                    None => Truth::Draw,
                    Some(color) if color == position.side_to_move() => Truth::Win,
                    Some(_) => Truth::Loss,
                };
                samples.push(Sample {
                    position,
                    rules,
                    score: f64::from(score),
                    truth,
                    held_out: number % 2 == 1,
                    game: number as u32,
                });
            }
            game.play(mv);
        }
    }
    Ok(samples)
}

/// Writes the samples: a line `# <name>` before each set of check
/// positions.
fn save(path: &std::path::Path, fitted_on: &[Sample], checks: &[(String, Vec<Sample>)]) {
    let mut text = String::new();
    for sample in fitted_on {
        text.push_str(&sample.line());
        text.push('\n');
    }
    for (name, samples) in checks {
        text.push_str(&format!("# {name}\n"));
        for sample in samples {
            text.push_str(&sample.line());
            text.push('\n');
        }
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Reads what [`save`] wrote.
fn load(path: &std::path::Path) -> (Vec<Sample>, Vec<(String, Vec<Sample>)>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut fitted_on = Vec::new();
    let mut checks: Vec<(String, Vec<Sample>)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("# ") {
            checks.push((name.to_string(), Vec::new()));
            continue;
        }
        let sample =
            Sample::read(line).unwrap_or_else(|| panic!("bad line in {}: {line}", path.display()));
        match checks.last_mut() {
            Some((_, samples)) => samples.push(sample),
            None => fitted_on.push(sample),
        }
    }
    (fitted_on, checks)
}

fn main() {
    let args = Args::parse();
    let mut rng = Rng(0x5EED_F17D ^ args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let (fitted_on, checks) = match &args.load {
        Some(path) => load(path),
        // Game records alone: nothing to sample.
        None if args.tables.is_empty() && args.check.is_empty() => (Vec::new(), Vec::new()),
        None => {
            let sampled = sample_all(&args, &mut rng);
            if let Some(path) = &args.save {
                save(path, &sampled.0, &sampled.1);
            }
            sampled
        }
    };
    let (mut fitted_on, mut checks) = (fitted_on, checks);
    for (file, path) in args.games_pgn.iter().enumerate() {
        let mut samples = sample_records(path).unwrap_or_else(|e| panic!("{e}"));
        // Games of different files are different games.
        for sample in &mut samples {
            sample.game += FIRST_RECORD_GAME * (file as u32 + 1);
        }
        let Some(size) = samples.first().map(|s| s.position.size()) else {
            eprintln!("{}: no scored move", path.display());
            continue;
        };
        checks.push((format!("{size}x{size} games ({})", path.display()), samples));
    }
    if args.fit_checks {
        fitted_on.extend(checks.drain(..).flat_map(|(_, samples)| samples));
    }
    let train: Vec<&Sample> = fitted_on.iter().filter(|s| !s.held_out).collect();
    // The families are fitted on the boards from 4 x 4 up; 3 x 3, which
    // has no drawn position, is scored like the other boards.
    let train45: Vec<&Sample> = train
        .iter()
        .copied()
        .filter(|s| s.position.size() > 3)
        .collect();
    let mut sizes: Vec<usize> = fitted_on.iter().map(|s| s.position.size()).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut boards: Vec<Board> = fitted_on.iter().map(Sample::board).collect();
    boards.sort_unstable_by_key(|&(n, rules)| (n, rules.name()));
    boards.dedup();
    let held_out: Vec<&Sample> = fitted_on.iter().filter(|s| s.held_out).collect();
    println!(
        "fitted on {} positions of the boards from 4 x 4 up (PerBoard, CarShareEach: each board on its own share of {}), \
         held out {}; log loss in nats a position (lower is better), then how often the \
         most likely result is the true one",
        train45.len(),
        train.len(),
        held_out.len()
    );
    let mut results = Vec::new();
    let families: &[Family] = if args.knots_only { &[] } else { &Family::ALL };
    for &family in families {
        let constants: Vec<(usize, (f64, f64))> = match family {
            Family::PerBoard | Family::CarShareEach(_) => sizes
                .iter()
                .map(|&n| (n, fit(&on(&train, n), family)))
                .collect(),
            _ => {
                let all = fit(&train45, family);
                sizes.iter().map(|&n| (n, all)).collect()
            }
        };
        let curve_of = |s: &Sample| family.chances(constants_for(&constants, s), s);
        results.push((family, constants.clone()));
        println!("{family:?}: constants (A, B) {constants:.3?}");
        for &n in &sizes {
            let test = on(&held_out, n);
            if test.is_empty() {
                continue;
            }
            held_out_line(&format!("{n}x{n}"), &on(&train, n), &test, &curve_of);
        }
        for (name, samples) in &checks {
            let test: Vec<&Sample> = samples.iter().collect();
            if test.is_empty() {
                continue;
            }
            let base = constant(&test, &test);
            println!(
                "  {name}: {}: {:.3} ({:.1}%), constant {:.3} ({:.1}%)",
                test.len(),
                log_loss(&test, &curve_of),
                hit_rate(&test, &curve_of),
                base.0,
                base.1
            );
        }
    }
    println!("the engine's curve (src/wdl.rs):");
    for &board in &boards {
        let test = under(&held_out, board);
        if test.is_empty() {
            continue;
        }
        println!(
            "  {}: {} held out: {:.3} ({:.1}%)",
            board_name(board),
            test.len(),
            log_loss(&test, &engine_curve),
            hit_rate(&test, &engine_curve)
        );
        calibration(&test, &engine_curve);
    }
    for (name, samples) in &checks {
        let test: Vec<&Sample> = samples.iter().collect();
        if test.is_empty() {
            continue;
        }
        println!(
            "  {name}: {}: {:.3} ({:.1}%)",
            test.len(),
            log_loss(&test, &engine_curve),
            hit_rate(&test, &engine_curve)
        );
        calibration(&test, &engine_curve);
    }
    if let Some((_, constants)) = results.iter().find(|(f, _)| *f == ENGINE_FAMILY) {
        println!("the refitted curve ({ENGINE_FAMILY:?}), held out:");
        let refitted = |s: &Sample| ENGINE_FAMILY.chances(constants_for(constants, s), s);
        for &n in &sizes {
            let test = on(&held_out, n);
            if !test.is_empty() {
                println!("  {n}x{n}: {} held out", test.len());
                calibration(&test, &refitted);
            }
        }
        for (n, (a, b)) in constants {
            println!(
                "constants for src/wdl.rs ({ENGINE_FAMILY:?}), {n} x {n}: A = {a:.3}, B = {b:.3}"
            );
        }
    }
    // A board and rule takes a loss table of its own where that predicts
    // its held-out positions better (a lower log loss) than the mirror.
    println!("knot curves (wdl::Knots) fitted on each board and rule alone, held out:");
    let mut apart = Vec::new();
    for &board in boards.iter().filter(|&&(n, _)| n > 3) {
        let (train, test) = (under(&train, board), under(&held_out, board));
        if test.is_empty() {
            continue;
        }
        let name = board_name(board);
        let mirrored = KnotCurve::mirrored(&train);
        let mirrored = |s: &Sample| mirrored.chances(s.score);
        let separate = KnotCurve::apart(&train);
        let separate = |s: &Sample| separate.chances(s.score);
        let better = log_loss(&test, &separate) < log_loss(&test, &mirrored);
        held_out_line(
            &format!("{name}, loss = win at minus the score"),
            &train,
            &test,
            &mirrored,
        );
        calibration(&test, &mirrored);
        held_out_line(
            &format!("{name}, a loss table of its own"),
            &train,
            &test,
            &separate,
        );
        calibration(&test, &separate);
        println!(
            "  {name}: {}",
            if better {
                "the loss table of its own predicts better"
            } else {
                "the mirror predicts as well or better"
            }
        );
        if better {
            apart.push(board);
        }
    }
    // What goes into the engine: each board's and rule's knots fitted on
    // all its positions, held out or not, once the held-out ones have
    // shown how well the fit carries over.
    println!("knot curves fitted on all positions (for src/wdl.rs):");
    let every: Vec<&Sample> = fitted_on.iter().collect();
    for &board in boards.iter().filter(|&&(n, _)| n > 3) {
        let samples = under(&every, board);
        let curve = if apart.contains(&board) {
            KnotCurve::apart(&samples)
        } else {
            KnotCurve::mirrored(&samples)
        };
        let (n, rules) = board;
        let name = format!("NET_{n}_{}", rules.name().to_uppercase());
        println!("const {name}: {};", knot_table(&curve.points));
        if let Some(loss) = &curve.loss {
            println!("const {name}_LOSS: {};", knot_table(loss));
        }
    }
}

//! `dodgem strength`: how well an engine plays by search alone, measured
//! against the solved tables.
//!
//! Positions whose value the tables know are drawn from a directory of
//! layered tables ([`crate::solver::Tables`]), won and drawn ones
//! separately, from two sets:
//!
//! - **reachable**: uniformly from every position that can arise from the
//!   start (an exact forward walk over the tables' index, [`reach`]);
//! - **games**: from the distinct positions of self-play games of this
//!   build's search at a small node count from random openings
//!   ([`sample::self_play`]): the positions an engine actually meets.
//!
//! The engine under test (any protocol.md engine, started as the referee
//! starts one, tables switched off) searches each position under a node,
//! depth or time limit, and its move is judged by the tables ([`judge`]):
//! a won position is kept if the move leaves the opponent lost, a drawn
//! one if it leaves the opponent drawn. Kept wins are also measured by how
//! much further from the next progress move they leave the winner than
//! the table's best move (the tables store that distance, not the
//! distance to the end of the game).
//!
//! With `--lost N`, lost positions too: each is played out, the engine
//! moving for the loser and the tables' quickest win for the winner, and
//! the plies it held out are set against the table's distance to the end
//! (the most a loser can hold out against perfect play).
//!
//! Everything is seeded: the same seed, tables and engine give the same
//! positions, and, for an engine whose search is deterministic under a
//! node or depth limit, the same report.

pub mod judge;
use crate::solver::reach;
mod report;
mod runner;
pub mod sample;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::board::Position;
use crate::client::{self, EngineCommand};
use crate::files;
use crate::notation::parse_move;
use crate::referee::clock::Limits;
use crate::referee::game::{Player, Settings};
use crate::referee::{self, EngineArg};
use crate::solver::{self, Tables};
use crate::tablebase::Layered;

pub use judge::{Class, Sample, Set, Tally, Verdict};
pub use reach::{ReachCounts, Reached, walk};
pub use report::Report;
pub use runner::Answer;

/// The `dodgem strength` command line.
#[derive(clap::Args, Debug, Clone)]
#[command(about = "Measure an engine's play by search alone against solved tables")]
pub struct StrengthArgs {
    /// A directory of layered tables of a whole board (`dodgem solve
    /// --size N --rules R --out DIR`): the positions, their values and
    /// the rule played.
    #[arg(long, value_name = "DIR")]
    pub tables: PathBuf,
    /// The engine's command line (split like a shell does, without
    /// expansions); default: this program.
    #[arg(long, value_name = "COMMAND")]
    pub engine: Option<String>,
    /// The engine's name in the report (default: its `id name`).
    #[arg(long)]
    pub name: Option<String>,
    /// An option for the engine, `Name=Value` (`Name` for a button);
    /// repeatable. `Tablebase` is set to false unless given here.
    #[arg(long, value_name = "NAME=VALUE")]
    pub option: Vec<String>,
    /// Node limit per position.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Depth limit per position, plies.
    #[arg(long)]
    pub depth: Option<u32>,
    /// Time per position, milliseconds.
    #[arg(long, value_name = "MS")]
    pub movetime: Option<u64>,
    /// Won and drawn positions drawn from each set (each class; 0 for
    /// lost positions alone).
    #[arg(long, default_value_t = 500)]
    pub positions: usize,
    /// Lost positions drawn from each set, each played out against
    /// perfect play (the tables need their distances to the end, `dodgem
    /// solve --dte`); a play-out takes a search per move of the loser.
    #[arg(long, default_value_t = 0)]
    pub lost: usize,
    /// The sets to draw from: `reachable`, `games`, or both.
    #[arg(long, value_delimiter = ',', default_value = "reachable,games")]
    pub sets: Vec<SetArg>,
    /// Seed for the samples and the self-play openings.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Self-play games for the `games` set.
    #[arg(long, default_value_t = 200)]
    pub games: usize,
    /// Nodes a move in the self-play games.
    #[arg(long, default_value_t = 10_000)]
    pub game_nodes: u64,
    /// Random plies from the start before a self-play game.
    #[arg(long, default_value_t = 4)]
    pub opening_plies: u32,
    /// Engine processes searching at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Threads for the walk over the tables and the self-play games.
    #[arg(long, default_value_t = solver::default_threads())]
    pub threads: usize,
    /// Seconds to wait for `uciok`, `readyok`, and a `bestmove` (after
    /// `go` without a time limit, or after `stop`).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub stall_timeout: f64,
    /// Write every position, the move played and the verdict to this file
    /// (tab-separated).
    #[arg(long, value_name = "FILE")]
    pub details: Option<PathBuf>,
}

/// A set on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetArg {
    Reachable,
    Games,
}

impl From<SetArg> for Set {
    fn from(arg: SetArg) -> Set {
        match arg {
            SetArg::Reachable => Set::Reachable,
            SetArg::Games => Set::Games,
        }
    }
}

/// Why the benchmark could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrengthError(pub String);

impl fmt::Display for StrengthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StrengthError {}

impl From<String> for StrengthError {
    fn from(message: String) -> StrengthError {
        StrengthError(message)
    }
}

/// Most positions a set and class may ask for.
const MAX_POSITIONS: usize = 1_000_000;
/// Most self-play games.
const MAX_GAMES: usize = 100_000;

impl StrengthArgs {
    /// Runs the benchmark, prints its report on stdout and writes the
    /// details file (`--details`).
    ///
    /// # Errors
    /// A bad command line, unusable tables, an engine that cannot be
    /// started or lacks an option, or a file that cannot be written (the
    /// details file is checked before the first position; should it fail
    /// at the end all the same, the report is printed first).
    pub fn run(&self) -> Result<(), StrengthError> {
        let report = run(self)?;
        // The report is printed even when the details cannot be written
        // after all (a full disk): the benchmark's time is not lost.
        let details = match &self.details {
            Some(path) => files::write(path, &report.details()).map_err(StrengthError),
            None => Ok(()),
        };
        let mut out = std::io::stdout().lock();
        use std::io::Write;
        out.write_all(report.to_text().as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| StrengthError(format!("cannot write the report: {e}")))?;
        details
    }
}

/// The search limits the command line gives.
fn limits(args: &StrengthArgs) -> Result<Limits, StrengthError> {
    if args.nodes == Some(0) || args.depth == Some(0) || args.movetime == Some(0) {
        return Err(StrengthError(
            "--nodes, --depth and --movetime must be at least 1".into(),
        ));
    }
    let limits = Limits {
        tc: None,
        movetime: args.movetime.map(Duration::from_millis),
        depth: args.depth,
        nodes: args.nodes,
    };
    if !limits.is_limited() {
        return Err(StrengthError(
            "no limit for the searches: give --nodes, --depth or --movetime".into(),
        ));
    }
    Ok(limits)
}

/// Checks the command line apart from the tables and the engine.
fn check(args: &StrengthArgs) -> Result<(), StrengthError> {
    if args.positions > MAX_POSITIONS || args.lost > MAX_POSITIONS {
        return Err(StrengthError(format!(
            "--positions and --lost must be at most {MAX_POSITIONS}"
        )));
    }
    if args.positions == 0 && args.lost == 0 {
        return Err(StrengthError(
            "nothing to measure: --positions and --lost are both 0".into(),
        ));
    }
    if args.sets.is_empty() {
        return Err(StrengthError("--sets names no set".into()));
    }
    if args.sets.contains(&SetArg::Games) {
        if !(1..=MAX_GAMES).contains(&args.games) {
            return Err(StrengthError(format!(
                "--games must be from 1 to {MAX_GAMES}"
            )));
        }
        if args.game_nodes == 0 {
            return Err(StrengthError("--game-nodes must be at least 1".into()));
        }
        if args.opening_plies > 200 {
            return Err(StrengthError("--opening-plies must be at most 200".into()));
        }
    }
    if args.concurrency == 0 || args.threads == 0 {
        return Err(StrengthError(
            "--concurrency and --threads must be at least 1".into(),
        ));
    }
    if !(args.stall_timeout.is_finite() && args.stall_timeout > 0.0 && args.stall_timeout <= 1e6) {
        return Err(StrengthError(
            "--stall-timeout must be a positive number of seconds".into(),
        ));
    }
    Ok(())
}

/// A progress bar on stderr (shown only on a terminal).
fn bar(length: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::new(length);
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

/// The engine's player: its checked command line and `setoption` lines,
/// with the tables switched off when it has a `Tablebase` option.
fn player(args: &StrengthArgs, tables: &Tables, stall: Duration) -> Result<Player, StrengthError> {
    let command = match &args.engine {
        Some(command) => command.clone(),
        None => {
            let exe = EngineCommand::builtin()
                .map_err(|e| StrengthError(format!("cannot find this program: {e}")))?;
            shlex::try_quote(exe.program())
                .map_err(|e| StrengthError(format!("cannot quote this program's path: {e}")))?
                .into_owned()
        }
    };
    let engine = EngineArg {
        label: "engine",
        option_label: "option",
        command: &command,
        name: args.name.as_deref(),
        options: &args.option,
    };
    let probed = referee::probe(&engine, tables.kind().rules, stall)
        .map_err(|e| StrengthError(e.to_string()))?;
    let mut setup = probed.setup;
    let sets_tablebase = args.option.iter().any(|s| {
        client::split_setting(s)
            .0
            .trim()
            .eq_ignore_ascii_case("Tablebase")
    });
    if !sets_tablebase {
        match client::setoption_line(&probed.options, "Tablebase", Some("false")) {
            Ok(line) => setup.push(line),
            Err(_) => log::warn!(
                "the engine has no Tablebase check option: it is measured as it is set up"
            ),
        }
    }
    let name = args.name.clone().unwrap_or_else(|| {
        crate::protocol::escape(
            &probed
                .id_name
                .unwrap_or_else(|| referee::program_name(&probed.command)),
        )
    });
    Ok(Player {
        name,
        command: probed.command,
        setup,
    })
}

/// Runs the benchmark (see the module docs); the details file, if one is
/// asked for, is checked here but written by [`StrengthArgs::run`].
///
/// # Errors
/// As [`StrengthArgs::run`].
pub fn run(args: &StrengthArgs) -> Result<Report, StrengthError> {
    check(args)?;
    let limits = limits(args)?;
    if let Some(path) = &args.details {
        files::check_writable(path)?;
    }
    let tables = Tables::open(&args.tables).map_err(|e| StrengthError(e.to_string()))?;
    let kind = tables.kind();
    if kind.max_cars as usize != kind.size - 1 {
        return Err(StrengthError(format!(
            "{} holds endgame tables (at most {} cars a side): the benchmark needs a whole board",
            args.tables.display(),
            kind.max_cars
        )));
    }
    let layered = Layered::open(&args.tables)?;
    if args.lost > 0 && !layered.has_dte() {
        return Err(StrengthError(format!(
            "--lost plays lost positions out against the distances to the end, which {} lacks: add them with `dodgem solve --dte {}`",
            args.tables.display(),
            args.tables.display()
        )));
    }
    let per_class: sample::PerClass = [args.positions, args.positions, args.lost];
    let stall = Duration::from_secs_f64(args.stall_timeout);
    let player = player(args, &tables, stall)?;
    let settings = Settings {
        rules: kind.rules,
        limits,
        time_margin: runner::MOVETIME_MARGIN,
        stall_timeout: stall,
        max_plies: None,
        adjudicator: None,
    };
    let mut sets: Vec<Set> = args.sets.iter().map(|&s| Set::from(s)).collect();
    sets.sort();
    sets.dedup();

    let mut report = Report {
        engine: player.name.clone(),
        kind,
        tables: args.tables.clone(),
        go: settings.limits.go_command(None),
        seed: args.seed,
        reachable: None,
        self_play: None,
        samples: Vec::new(),
        answers: Vec::new(),
    };
    for set in sets {
        let drawn = match set {
            Set::Reachable => {
                let walk = bar(
                    1,
                    "reachable positions {bar:30} {pos}/{len} progress sums [{elapsed_precise}]",
                );
                let (smallest, counts) = sample::reachable(
                    &tables,
                    per_class,
                    args.seed,
                    args.threads,
                    &mut |done, total| {
                        walk.set_length(u64::from(total) + 1);
                        walk.set_position(u64::from(done));
                    },
                )
                .map_err(|e| StrengthError(e.to_string()))?;
                walk.finish_and_clear();
                report.reachable = Some(counts);
                smallest
            }
            Set::Games => {
                let plan = sample::SelfPlay {
                    size: kind.size,
                    rules: kind.rules,
                    games: args.games,
                    opening_plies: args.opening_plies,
                    nodes: args.game_nodes,
                    seed: args.seed,
                    threads: args.threads,
                    evaluation: sample::SELF_PLAY_EVALUATION,
                };
                let games = bar(
                    args.games as u64,
                    "self-play games {bar:30} {pos}/{len} [{elapsed_precise}]",
                );
                let positions = sample::self_play(&plan, &|| games.inc(1))?;
                games.finish_and_clear();
                let smallest = sample::Smallest::new(per_class, args.seed);
                let counts = classify(&tables, &positions, &smallest)?;
                report.self_play = Some((plan, counts));
                smallest
            }
        };
        for class in Class::ALL {
            for (position, value) in drawn.take(class) {
                report.samples.push(Sample {
                    set,
                    class,
                    position,
                    value,
                    moves: Vec::new(),
                });
            }
        }
    }
    rank_moves(&tables, &layered, &mut report.samples)?;

    // The winner of a play-out: the tables' quickest win.
    let winner = |position: &Position| {
        layered
            .rank_ends(position)
            .and_then(|moves| moves.first().map(|&(mv, _)| mv))
    };
    let tasks: Vec<runner::Task> = report
        .samples
        .iter()
        .map(|sample| match sample.longest_delay() {
            Some(longest) => runner::Task::PlayOut {
                start: sample.position,
                winner: &winner,
                longest,
            },
            None => runner::Task::Move(sample.position),
        })
        .collect();
    let progress = bar(
        tasks.len() as u64,
        "{bar:30} {pos}/{len} positions  {msg}  [{elapsed_precise}]",
    );
    let kept = std::sync::Mutex::new([[0u64; 2]; Class::ALL.len()]);
    let samples = &report.samples;
    report.answers = runner::run(
        &player,
        &settings,
        &tasks,
        args.concurrency,
        &|index, answer| {
            let sample = &samples[index];
            let verdict = judge::judge(sample, move_of(&sample.position, answer), answer.survived);
            let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
            let c = sample.class as usize;
            kept[c][0] += 1;
            kept[c][1] += u64::from(verdict.is_kept());
            progress.set_message(format!(
                "won kept {}/{}, drawn kept {}/{}, lost held out in full {}/{}",
                kept[0][1], kept[0][0], kept[1][1], kept[1][0], kept[2][1], kept[2][0]
            ));
            progress.inc(1);
        },
    );
    progress.finish_and_clear();
    Ok(report)
}

/// The move an answer names, if it is legal in `position`.
pub fn move_of(position: &Position, answer: &Answer) -> Option<crate::board::Move> {
    parse_move(answer.bestmove.as_deref()?, position).ok()
}

/// Offers each of `positions` with its stored value to `smallest`; returns
/// the counts by value. Probes go layer by layer (the tables keep few
/// layers decompressed).
fn classify(
    tables: &Tables,
    positions: &[Position],
    smallest: &sample::Smallest,
) -> Result<ReachCounts, StrengthError> {
    let mut order: Vec<&Position> = positions.iter().collect();
    order.sort_by_key(|p| tables.shape().locate(p));
    let mut counts = ReachCounts::default();
    for position in order {
        let value = tables
            .probe(position)
            .map_err(|e| StrengthError(e.to_string()))?
            .ok_or_else(|| StrengthError("a self-play position is not in the tables".into()))?;
        match value {
            solver::Dtz::Win(_) => counts.wins += 1,
            solver::Dtz::Draw => counts.draws += 1,
            solver::Dtz::Loss(_) => counts.losses += 1,
        }
        smallest.offer(position, value);
    }
    Ok(counts)
}

/// Fills in every sample's ranked moves, layer by layer.
fn rank_moves(
    tables: &Tables,
    layered: &Layered,
    samples: &mut [Sample],
) -> Result<(), StrengthError> {
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by_key(|&i| tables.shape().locate(&samples[i].position));
    for i in order {
        let sample = &mut samples[i];
        let moves = if sample.class == Class::Lost {
            // A lost sample's value and moves count the plies to the end.
            let ends = layered.probe_end(&sample.position);
            sample.value = ends.unwrap_or(sample.value);
            ends.and(layered.rank_ends(&sample.position))
                .unwrap_or_default()
        } else {
            layered.rank_moves(&sample.position)
        };
        if moves.is_empty() {
            return Err(StrengthError(format!(
                "cannot read the values of the moves of {} from {}",
                crate::notation::format_position(&samples[i].position),
                tables.dir().map_or_else(
                    || "the tables in memory".into(),
                    |d| d.display().to_string()
                )
            )));
        }
        samples[i].moves = moves;
    }
    Ok(())
}

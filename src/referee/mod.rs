//! The referee: `dodgem match` plays timed games between two engines over
//! pipes and reports the score, an Elo estimate and, optionally, a
//! sequential test.
//!
//! - [`handshake`]: starting and ending an engine under deadlines, and its
//!   faults (the process itself is [`crate::client::EngineProcess`]);
//! - [`clock`]: time controls, search limits and clocks;
//! - [`game`]: one game, move by move, faults included, and
//!   [`record`]: what is kept of it;
//! - [`openings`]: openings from a file or random plies;
//! - [`pgn`], [`results`]: the game records as PGN and the JSON results
//!   file; [`resume`]: a stopped match going on from its records;
//! - [`stats`]: Elo, interval, likelihood of superiority, SPRT;
//! - [`adjudication`]: ending decided games from the solved tables;
//! - [`gauntlet`]: one engine against a list of opponents, boards and
//!   clocks, a match a cell.
//!
//! The match itself ([`run`]) checks both engines once before the first
//! game (their command lines, handshakes and the requested options), then
//! plays the games on `--concurrency` worker threads, each game with two
//! fresh engine processes.

pub(crate) mod adjudication;
pub(crate) mod clock;
mod deadline;
pub(crate) mod game;
pub mod gauntlet;
pub(crate) mod handshake;
pub(crate) mod openings;
pub(crate) mod pgn;
pub mod record;
pub(crate) mod results;
mod resume;
pub(crate) mod stats;

/// The seeded generator of the random openings, for tools that want the
/// same kind of randomness (the examples).
pub use openings::SplitMix64;
pub use pgn::{ReadGame, RecordError, read_game, read_games};

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::board::{self, BadSize, Color, MAX_SIZE, MIN_SIZE, Position, Rules};
use crate::client::{self, EngineCommand, EngineProcess, Stderr};
use crate::files;
use crate::protocol::escape;

use clock::{Limits, TimeControl};
use game::{Player, Settings};
use record::{GameRecord, GameResult, Termination};
use stats::{Sprt, SprtDecision, Tally, format_elo};

/// The `dodgem match` command line.
#[derive(clap::Args, Debug, Clone)]
#[command(about = "Play games between two engines and report the score")]
pub struct MatchArgs {
    /// The first engine's command line (split like a shell does, without
    /// expansions), e.g. "target/release/dodgem".
    #[arg(long, value_name = "COMMAND")]
    pub engine1: String,
    /// The second engine's command line.
    #[arg(long, value_name = "COMMAND")]
    pub engine2: String,
    /// The first engine's name in records (default: its `id name`).
    #[arg(long)]
    pub name1: Option<String>,
    /// The second engine's name in records (default: its `id name`).
    #[arg(long)]
    pub name2: Option<String>,
    /// An option for the first engine, `Name=Value` (`Name` for a button);
    /// repeatable. Checked against the options the engine advertises.
    #[arg(long, value_name = "NAME=VALUE")]
    pub option1: Vec<String>,
    /// An option for the second engine; repeatable.
    #[arg(long, value_name = "NAME=VALUE")]
    pub option2: Vec<String>,
    /// Number of games. Each opening is played twice, colours swapped.
    #[arg(long, default_value_t = 2)]
    pub games: u32,
    /// Board size (3..8) for the start position and random openings.
    #[arg(long, default_value_t = 5, conflicts_with = "openings")]
    pub size: usize,
    /// What a blocked side to move gets: `textbook` (it loses) or
    /// `classic` (it wins).
    #[arg(long, default_value = "textbook")]
    pub rules: Rules,
    /// A file of opening positions, one position string per line (blank
    /// lines and lines starting with `#` skipped), used in turn.
    #[arg(long, value_name = "FILE")]
    pub openings: Option<PathBuf>,
    /// Openings of this many random plies from the start position.
    #[arg(long, default_value_t = 0, conflicts_with = "openings")]
    pub random_plies: u32,
    /// Seed for the random openings.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Clock: BASE+INC seconds (`10+0.1`), or MOVES/BASE+INC (`40/60+0`).
    #[arg(long, value_name = "TC")]
    pub tc: Option<TimeControl>,
    /// Fixed time per move, milliseconds.
    #[arg(long, value_name = "MS", conflicts_with = "tc")]
    pub movetime: Option<u64>,
    /// Depth limit per move, plies.
    #[arg(long)]
    pub depth: Option<u32>,
    /// Node limit per move.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// How far below zero a clock may fall before the game is lost on
    /// time, milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5)]
    pub timemargin: u64,
    /// Seconds to wait for `uciok`, `readyok`, a `bestmove` after `stop`
    /// (sent when a move's time is up), and for the `bestmove` of a search
    /// without a time limit; an engine that takes longer has stalled and
    /// loses.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub stall_timeout: f64,
    /// A draw after this many plies.
    #[arg(long, value_name = "N")]
    pub maxplies: Option<u32>,
    /// End a game as soon as the solved table says one side has a forced
    /// win (built-in tables for 3 x 3 and 4 x 4; others need --tablebase).
    #[arg(long)]
    pub adjudicate: bool,
    /// A directory of solved tables (from `dodgem solve --out DIR`) to
    /// adjudicate with.
    #[arg(long, value_name = "DIR", requires = "adjudicate")]
    pub tablebase: Option<PathBuf>,
    /// Write the game records to this file (PGN-style).
    #[arg(long, value_name = "FILE")]
    pub pgn: Option<PathBuf>,
    /// Go on from the games already in the --pgn file (a match stopped
    /// part of the way, run again with the same command): they are checked
    /// to be this match's first rounds, count in the score, and are not
    /// played again.
    #[arg(long, requires = "pgn")]
    pub resume: bool,
    /// Write the totals and every game's result to this file (JSON).
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,
    /// Stop when a sequential probability ratio test decides:
    /// `elo0,elo1,alpha,beta`, e.g. `0,10,0.05,0.05`.
    #[arg(long, value_name = "ELO0,ELO1,ALPHA,BETA")]
    pub sprt: Option<Sprt>,
    /// The `Event` tag of the game records.
    #[arg(long, default_value = "dodgem match")]
    pub event: String,
}

/// The most games in one match (every record is kept for the results).
const MAX_GAMES: u32 = 100_000;
/// The longest random opening, plies.
const MAX_RANDOM_PLIES: u32 = 200;
/// The longest `--movetime` and `--timemargin`, milliseconds (a day).
const MAX_MILLIS: u64 = 86_400_000;

/// Why a match could not be played (or finished).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchError(pub String);

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MatchError {}

impl From<String> for MatchError {
    fn from(message: String) -> MatchError {
        MatchError(message)
    }
}

/// An engine as the command line gives it, before the probe.
pub(crate) struct EngineArg<'a> {
    /// The flags that configure it, for messages: `engine1`, `option1`.
    pub label: &'static str,
    pub option_label: &'static str,
    pub command: &'a str,
    pub name: Option<&'a str>,
    pub options: &'a [String],
}

/// What the probe learnt: the engine's `id name`, its checked setup and
/// the options it advertises.
pub(crate) struct Probed {
    pub command: EngineCommand,
    pub id_name: Option<String>,
    pub setup: Vec<String>,
    pub options: Vec<client::OptionSpec>,
}

/// Starts an engine once, before the match: its command line must start
/// a process that completes the handshake, and every requested option must
/// be one it advertises, with a value that fits.
pub(crate) fn probe(
    engine: &EngineArg,
    rules: Rules,
    stall: Duration,
) -> Result<Probed, MatchError> {
    let label = engine.label;
    let command = EngineCommand::parse(engine.command)
        .map_err(|error| MatchError(format!("--{label}: {error}")))?;
    let mut process = EngineProcess::spawn(&command, Stderr::Discard).map_err(|error| {
        MatchError(format!(
            "--{label}: cannot start '{}': {error}",
            engine.command
        ))
    })?;
    let checked = check_engine(engine, &mut process, rules, stall);
    process.shutdown(handshake::QUIT_GRACE);
    let (info, setup) = checked?;
    Ok(Probed {
        command,
        id_name: info.name,
        setup,
        options: info.options,
    })
}

/// The probe's handshake and option checks: the engine's `id name`, its
/// `setoption` lines and the options it advertises.
fn check_engine(
    engine: &EngineArg,
    process: &mut EngineProcess,
    rules: Rules,
    stall: Duration,
) -> Result<(handshake::EngineInfo, Vec<String>), MatchError> {
    let label = engine.label;
    let info = handshake::handshake(process, stall)
        .map_err(|fault| MatchError(format!("--{label} '{}': {fault}", engine.command)))?;
    let mut setup = Vec::new();
    let advertises_rules = info
        .options
        .iter()
        .any(|o| o.name.eq_ignore_ascii_case("Rules"));
    if advertises_rules {
        let line = client::setoption_line(&info.options, "Rules", Some(rules.name()))
            .map_err(|error| MatchError(format!("--{label}: --rules: {error}")))?;
        setup.push(line);
    } else if rules != Rules::default() {
        return Err(MatchError(format!(
            "--{label}: the engine has no Rules option, so it cannot be told to play the {} rules",
            rules.name()
        )));
    }
    for setting in engine.options {
        let (name, value) = client::split_setting(setting);
        if name.trim().eq_ignore_ascii_case("Rules") {
            return Err(MatchError(format!(
                "--{}: set the rules with --rules, for both engines",
                engine.option_label
            )));
        }
        let line = client::setoption_line(&info.options, name, value)
            .map_err(|error| MatchError(format!("--{} {setting}: {error}", engine.option_label)))?;
        setup.push(line);
    }
    Ok((info, setup))
}

/// The program's file name, for an engine that gives no `id name`.
pub(crate) fn program_name(command: &EngineCommand) -> String {
    let program = command.program();
    Path::new(program).file_name().map_or_else(
        || program.to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// Everything a game needs, shared by the worker threads.
struct Plan {
    players: [Player; 2],
    settings: Settings,
    openings: Vec<Position>,
}

impl Plan {
    /// Game `index` (0-based): opening `index / 2`, the first engine Black
    /// in even games and White in odd ones; the players Black first.
    fn round(&self, index: u32) -> (Position, Color, [&Player; 2]) {
        let opening = self.openings[(index as usize / 2) % self.openings.len()];
        let engine1 = if index.is_multiple_of(2) {
            Color::Black
        } else {
            Color::White
        };
        let [first, second] = &self.players;
        let players = match engine1 {
            Color::Black => [first, second],
            Color::White => [second, first],
        };
        (opening, engine1, players)
    }

    fn play(&self, index: u32) -> GameRecord {
        let (opening, engine1, players) = self.round(index);
        game::play(&self.settings, players, index + 1, opening, engine1)
    }
}

/// Checks every argument of a match that needs no engine started, and
/// makes its settings and openings.
pub(crate) fn prepare(args: &MatchArgs) -> Result<(Settings, Vec<Position>), MatchError> {
    if !(1..=MAX_GAMES).contains(&args.games) {
        return Err(MatchError(format!("--games must be from 1 to {MAX_GAMES}")));
    }
    if args.random_plies > MAX_RANDOM_PLIES {
        return Err(MatchError(format!(
            "--random-plies must be at most {MAX_RANDOM_PLIES}"
        )));
    }
    if args.concurrency == 0 {
        return Err(MatchError("--concurrency must be at least 1".into()));
    }
    board::check_size(args.size).map_err(|BadSize(size)| {
        MatchError(format!("--size {size} is outside {MIN_SIZE}..{MAX_SIZE}"))
    })?;
    if !(args.stall_timeout.is_finite() && args.stall_timeout > 0.0 && args.stall_timeout <= 1e6) {
        return Err(MatchError(
            "--stall-timeout must be a positive number of seconds".into(),
        ));
    }
    if args.movetime == Some(0) || args.depth == Some(0) || args.nodes == Some(0) {
        return Err(MatchError(
            "--movetime, --depth and --nodes must be at least 1".into(),
        ));
    }
    if args.movetime.is_some_and(|ms| ms > MAX_MILLIS) || args.timemargin > MAX_MILLIS {
        return Err(MatchError(format!(
            "--movetime and --timemargin must be at most {MAX_MILLIS} ms (a day)"
        )));
    }
    let limits = Limits {
        tc: args.tc,
        movetime: args.movetime.map(Duration::from_millis),
        depth: args.depth,
        nodes: args.nodes,
    };
    if !limits.is_limited() {
        return Err(MatchError(
            "no limit for the engines' searches: give --tc, --movetime, --depth or --nodes".into(),
        ));
    }
    let openings = match &args.openings {
        Some(path) => openings::from_file(path, args.rules)?,
        None => openings::random(
            args.size,
            args.random_plies,
            args.games.div_ceil(2) as usize,
            args.seed,
            args.rules,
        )?,
    };
    let adjudicator = if args.adjudicate {
        let mut sizes: Vec<usize> = openings.iter().map(Position::size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        Some(adjudication::Adjudicator::new(
            &sizes,
            args.rules,
            args.tablebase.as_deref(),
        )?)
    } else {
        None
    };
    let settings = Settings {
        rules: args.rules,
        limits,
        time_margin: Duration::from_millis(args.timemargin),
        stall_timeout: Duration::from_secs_f64(args.stall_timeout),
        max_plies: args.maxplies,
        adjudicator,
    };
    Ok((settings, openings))
}

/// Checks the command line and the engines, and builds the match's plan.
fn plan(args: &MatchArgs) -> Result<Plan, MatchError> {
    let (settings, openings) = prepare(args)?;
    let engines = [
        EngineArg {
            label: "engine1",
            option_label: "option1",
            command: &args.engine1,
            name: args.name1.as_deref(),
            options: &args.option1,
        },
        EngineArg {
            label: "engine2",
            option_label: "option2",
            command: &args.engine2,
            name: args.name2.as_deref(),
            options: &args.option2,
        },
    ];
    let mut probed = Vec::new();
    for engine in &engines {
        probed.push(probe(engine, args.rules, settings.stall_timeout)?);
    }
    let mut names: Vec<String> = engines
        .iter()
        .zip(&probed)
        .map(|(engine, probed)| {
            // Printed, logged and written to PGN: no control bytes.
            escape(&match engine.name {
                Some(name) => name.to_string(),
                None => probed
                    .id_name
                    .clone()
                    .unwrap_or_else(|| program_name(&probed.command)),
            })
        })
        .collect();
    if names[0] == names[1] {
        names[0].push_str(" (1)");
        names[1].push_str(" (2)");
    }
    let mut players = probed.into_iter().zip(names).map(|(probed, name)| Player {
        name,
        command: probed.command,
        setup: probed.setup,
    });
    let (Some(first), Some(second)) = (players.next(), players.next()) else {
        unreachable!("two engines were probed");
    };
    Ok(Plan {
        players: [first, second],
        settings,
        openings,
    })
}

/// The line printed when a game ends, naming the winner and its colour:
/// `Finished game 1 (Black: a, White: b): b won as White (1-0) {...}`.
fn finished_line(game: &GameRecord) -> String {
    let verdict = match game.result {
        GameResult::Win(color) => {
            let winner = match color {
                Color::Black => &game.black,
                Color::White => &game.white,
            };
            format!("{winner} won as {}", color.name())
        }
        GameResult::Draw => "draw".to_string(),
    };
    format!(
        "Finished game {} (Black: {}, White: {}): {verdict} ({}) {{{}: {}}}",
        game.round,
        game.black,
        game.white,
        game.result.pgn(),
        game.termination,
        game.detail
    )
}

/// Collects finished games: score, progress bar, per-game lines, records.
struct Collector<'a> {
    names: [&'a str; 2],
    tally: Tally,
    games: Vec<GameRecord>,
    pgn: Option<(BufWriter<File>, PathBuf)>,
    header: pgn::Header,
    /// Finished games not yet written, so records appear in round order.
    pending: BTreeMap<u32, GameRecord>,
    next_round: u32,
    bar: ProgressBar,
    error: Option<MatchError>,
    /// The SPRT's decision and the number of games it was made after.
    decided: Option<(SprtDecision, u32)>,
}

impl Collector<'_> {
    fn add(&mut self, game: GameRecord) {
        self.tally.record(game.engine1_points());
        let line = finished_line(&game);
        // A closed stdout (`| head`) must not stop the match: the records
        // and the results file are still written.
        self.bar.suspend(|| {
            let mut out = io::stdout().lock();
            let _ = writeln!(out, "{line}").and_then(|()| out.flush());
        });
        self.bar.inc(1);
        self.show_score();
        self.pending.insert(game.round, game);
        self.write_ready();
    }

    /// Takes the games of an earlier run of the match (rounds 1 and on,
    /// already in the records file) as played.
    fn keep(&mut self, games: Vec<GameRecord>) {
        for game in games {
            self.tally.record(game.engine1_points());
            self.bar.inc(1);
            self.next_round = game.round + 1;
            self.games.push(game);
        }
        self.show_score();
    }

    /// The score so far beside the progress bar.
    fn show_score(&self) {
        self.bar.set_message(format!(
            "{} vs {}: {} - {} - {}",
            self.names[0], self.names[1], self.tally.wins, self.tally.losses, self.tally.draws
        ));
    }

    /// Records the sequential test's decision, the first time it has one.
    fn decide(&mut self, sprt: &Sprt) {
        if self.decided.is_none() {
            let decision = sprt.decision(&self.tally);
            if decision != SprtDecision::Continue {
                self.decided = Some((decision, self.tally.games()));
            }
        }
    }

    /// Writes the records that are next in round order.
    fn write_ready(&mut self) {
        while let Some(game) = self.pending.remove(&self.next_round) {
            self.write(&game);
            self.games.push(game);
            self.next_round += 1;
        }
    }

    fn write(&mut self, game: &GameRecord) {
        if let Some((file, path)) = &mut self.pgn {
            let text = pgn::format_game(&self.header, game);
            if let Err(error) = file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
                self.error.get_or_insert(MatchError(format!(
                    "cannot write to {}: {error}",
                    path.display()
                )));
            }
        }
    }

    /// Writes whatever is left (rounds that never started leave gaps after
    /// an early stop).
    fn finish(&mut self) {
        let rest: Vec<GameRecord> = std::mem::take(&mut self.pending).into_values().collect();
        for game in rest {
            self.write(&game);
            self.games.push(game);
        }
    }
}

impl MatchArgs {
    /// Plays the match (see [`run`]).
    ///
    /// # Errors
    /// As [`run`].
    pub fn run(&self) -> Result<(), MatchError> {
        run(self)
    }
}

/// Runs a match and prints its results on stdout.
///
/// # Errors
/// A bad command line, an engine that cannot be started or does not
/// complete the handshake before the match, an option it does not have,
/// or a file that cannot be written. Faults of engines during games are
/// not errors: they lose the game.
pub fn run(args: &MatchArgs) -> Result<(), MatchError> {
    let started = Instant::now();
    let plan = plan(args)?;
    // Checked before the first game, so that a match is never played for
    // results that cannot be written.
    if let Some(path) = &args.results {
        files::check_writable(path)?;
    }
    let time_control = plan.settings.limits.describe();
    let earlier = match &args.pgn {
        Some(path) if args.resume => resume::played(path, args.games, |index| {
            let (start, engine1, [black, white]) = plan.round(index);
            resume::Expected {
                black: &black.name,
                white: &white.name,
                engine1,
                start,
                rules: plan.settings.rules,
                event: &args.event,
                time_control: &time_control,
            }
        })?,
        _ => resume::Played::default(),
    };
    // Created once the engines have passed their checks, so that a match
    // that cannot start leaves an earlier record file alone; a resumed
    // match writes after the games it keeps.
    let pgn_file = match &args.pgn {
        Some(path) if args.resume => Some((
            BufWriter::new(files::append(path, earlier.bytes)?),
            path.clone(),
        )),
        Some(path) => Some((BufWriter::new(files::create(path)?), path.clone())),
        None => None,
    };
    let names = [plan.players[0].name.as_str(), plan.players[1].name.as_str()];
    let bar = ProgressBar::new(u64::from(args.games));
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} games  {msg}  [{elapsed_precise}]")
    {
        bar.set_style(style);
    }
    bar.set_message(format!("{} vs {}: 0 - 0 - 0", names[0], names[1]));
    let mut collector = Collector {
        names,
        tally: Tally::default(),
        games: Vec::new(),
        pgn: pgn_file,
        header: pgn::Header {
            event: args.event.clone(),
            date: pgn::today(),
            time_control,
        },
        pending: BTreeMap::new(),
        next_round: 1,
        bar,
        error: None,
        decided: None,
    };
    let resumed = earlier.games.len() as u32;
    collector.keep(earlier.games);
    let stop = AtomicBool::new(false);
    if let Some(sprt) = &args.sprt {
        collector.decide(sprt);
        stop.store(collector.decided.is_some(), Ordering::Relaxed);
    }
    // The next game to start; workers take games in order.
    let next_game = AtomicU32::new(resumed);
    let (done, finished) = crossbeam_channel::unbounded::<GameRecord>();
    thread::scope(|scope| -> Result<(), MatchError> {
        for worker in 0..args.concurrency.min(args.games as usize) {
            let (next_game, done, stop, plan) = (&next_game, done.clone(), &stop, &plan);
            thread::Builder::new()
                .name(format!("match worker {worker}"))
                .spawn_scoped(scope, move || {
                    while !stop.load(Ordering::Relaxed) {
                        let index = next_game.fetch_add(1, Ordering::Relaxed);
                        if index >= args.games {
                            break;
                        }
                        if done.send(plan.play(index)).is_err() {
                            break;
                        }
                    }
                })
                .map_err(|error| {
                    stop.store(true, Ordering::Relaxed);
                    MatchError(format!("cannot start a worker thread: {error}"))
                })?;
        }
        drop(done);
        for game in &finished {
            collector.add(game);
            if let Some(sprt) = &args.sprt {
                collector.decide(sprt);
            }
            if collector.decided.is_some() || collector.error.is_some() {
                stop.store(true, Ordering::Relaxed);
            }
        }
        Ok(())
    })?;
    collector.finish();
    collector.bar.finish_and_clear();
    if let Some(error) = collector.error.take() {
        return Err(error);
    }
    let summary = summary(&collector, args.sprt.as_ref(), started.elapsed());
    let mut out = io::stdout().lock();
    out.write_all(summary.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|error| MatchError(format!("cannot write the results: {error}")))?;
    if let Some(path) = &args.results {
        let sprt = args.sprt.as_ref().map(|sprt| {
            let decision = collector.decided.map_or(SprtDecision::Continue, |(d, _)| d);
            (sprt, decision)
        });
        let json = results::to_json(names, &collector.tally, sprt, &collector.games);
        files::write(path, &json)?;
    }
    Ok(())
}

/// The first engine's score in the games it played Black, then in those
/// it played White, from each game's colour and points for it.
pub(crate) fn tally_by_color(games: impl IntoIterator<Item = (Color, f64)>) -> [Tally; 2] {
    let mut tallies = [Tally::default(); 2];
    for (color, points) in games {
        tallies[color.index()].record(points);
    }
    tallies
}

/// Each game's colour and points, as [`tally_by_color`] takes them.
fn colors_and_points(games: &[GameRecord]) -> impl Iterator<Item = (Color, f64)> + '_ {
    games
        .iter()
        .map(|game| (game.engine1, game.engine1_points()))
}

/// The closing report: score line, Elo, terminations, per colour, SPRT.
fn summary(collector: &Collector, sprt: Option<&Sprt>, elapsed: Duration) -> String {
    let tally = &collector.tally;
    let [first, second] = collector.names;
    let mut out = format!("Score of {first} vs {second}: {tally}\n");
    if let (Some(elo), Some((low, high))) = (tally.elo(), tally.elo_interval()) {
        out.push_str(&format!(
            "Elo difference: {}, 95% interval [{}, {}], LOS: {:.1}%, draw ratio: {:.1}%\n",
            format_elo(elo),
            format_elo(low),
            format_elo(high),
            100.0 * tally.los(),
            100.0 * tally.draw_ratio().unwrap_or(0.0)
        ));
    }
    let mut counts: BTreeMap<Termination, u32> = BTreeMap::new();
    for game in &collector.games {
        *counts.entry(game.termination).or_insert(0) += 1;
    }
    let counts: Vec<String> = counts
        .iter()
        .map(|(termination, count)| format!("{termination} {count}"))
        .collect();
    out.push_str(&format!("Terminations: {}\n", counts.join(", ")));
    let [black, white] = tally_by_color(colors_and_points(&collector.games));
    out.push_str(&format!("{first} as Black: {black}; as White: {white}\n"));
    if let Some(sprt) = sprt {
        let (lower, upper) = sprt.bounds();
        let verdict = match collector.decided {
            Some((decision, games)) => format!("{} after {games} games", decision.describe()),
            None => SprtDecision::Continue.describe().to_string(),
        };
        out.push_str(&format!(
            "SPRT (elo0 {}, elo1 {}, alpha {}, beta {}): LLR {:.2}, bounds [{:.2}, {:.2}], {verdict}\n",
            sprt.elo0,
            sprt.elo1,
            sprt.alpha,
            sprt.beta,
            sprt.llr(tally),
            lower,
            upper,
        ));
    }
    let games = tally.games();
    out.push_str(&format!(
        "{games} game{} in {:.1} s\n",
        if games == 1 { "" } else { "s" },
        elapsed.as_secs_f64()
    ));
    out
}

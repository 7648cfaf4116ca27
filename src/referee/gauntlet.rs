//! `dodgem gauntlet`: one engine against a list of opponents (other
//! programs, other builds, the same program with other options), on every
//! board size and clock asked for, so that a change is never judged
//! against one opponent, one board or one clock only.
//!
//! Each cell (opponent, board, clock) is an ordinary match ([`super::run`])
//! whose game records and results file go to the output directory, named
//! for the cell. A cell whose results file is already there with the games
//! asked for is not played again, and one stopped part of the way goes on
//! from the games in its records (`match --resume`): a gauntlet stopped
//! part of the way (a session's end, a reboot) resumes where it was, to
//! the game, by running the same command. Every argument, engine and file is checked before the first
//! game. The table of every cell whose results file is in the directory
//! (this run's and earlier runs'), with the score per colour, is printed
//! at the end and written to `summary.md` there, also when a cell fails.
//! On a cluster each cell can be a task of its own (`--cell K`), all into
//! one directory, and `--summary-only` makes the table once they are done.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::board::{Color, Rules};

use super::clock::TimeControl;
use super::record::Termination;
use super::stats::{Tally, format_elo};
use super::{EngineArg, MatchArgs, MatchError};
use crate::files;

/// The `dodgem gauntlet` command line.
#[derive(clap::Args, Debug, Clone)]
pub struct GauntletArgs {
    /// The engine under test: its command line, as for `match --engine1`.
    #[arg(long, value_name = "COMMAND")]
    pub engine: String,
    /// Its name in the records and the table.
    #[arg(long, default_value = "engine")]
    pub name: String,
    /// An option for the engine under test, `Name=Value`; repeatable.
    #[arg(long, value_name = "NAME=VALUE")]
    pub option: Vec<String>,
    /// An opponent, `NAME=COMMAND` (the name is used in the table and the
    /// file names: letters, digits, `-`, `_`, `.`, `+`); repeatable, at
    /// least one.
    #[arg(long, value_name = "NAME=COMMAND", required = true)]
    pub opponent: Vec<String>,
    /// An option for one opponent, `NAME:Option=Value` (e.g.
    /// `learned:Evaluation=learned`); repeatable.
    #[arg(long, value_name = "NAME:OPTION=VALUE")]
    pub opponent_option: Vec<String>,
    /// A board size to play on; repeatable, at least one.
    #[arg(long, required = true)]
    pub size: Vec<usize>,
    /// A clock to play at, `BASE+INC` seconds; repeatable, at least one.
    #[arg(long, value_name = "TC", required = true)]
    pub tc: Vec<TimeControl>,
    /// Games in each cell (each opening is played with both colours).
    #[arg(long, default_value_t = 160)]
    pub games: u32,
    /// What a blocked side to move gets: `textbook` or `classic`.
    #[arg(long, default_value = "textbook")]
    pub rules: Rules,
    /// Openings of this many random plies from the start position.
    #[arg(long, default_value_t = 6)]
    pub random_plies: u32,
    /// Seed for the random openings (the same openings in every cell of a
    /// board).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// As for `match --timemargin`, milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5)]
    pub timemargin: u64,
    /// The directory for each cell's records and results, and the table
    /// (created if missing; cells already played there are kept).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Play only the K-th cell, counted from 1 in the order opponents,
    /// then sizes, then clocks: one task of a cluster's job array
    /// (`--cell $SLURM_ARRAY_TASK_ID`), the cells played side by side into
    /// one --out; `--summary-only` makes the table at the end.
    #[arg(long, value_name = "K", conflicts_with = "summary_only")]
    pub cell: Option<usize>,
    /// Play nothing: print the table of every cell in --out and write it
    /// to summary.md there (after the tasks of a job array).
    #[arg(long)]
    pub summary_only: bool,
}

/// One opponent: its name and command, and the options it is given.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Opponent {
    name: String,
    command: String,
    options: Vec<String>,
}

/// A name that is safe in a file name and a table.
fn check_name(name: &str) -> Result<(), MatchError> {
    let fine = |c: char| c.is_ascii_alphanumeric() || "-_.+".contains(c);
    if name.is_empty() || !name.chars().all(fine) {
        return Err(MatchError(format!(
            "opponent name '{}' must be letters, digits, '-', '_', '.' or '+'",
            crate::protocol::escape(name)
        )));
    }
    Ok(())
}

/// The opponents of the command line, each with its options.
fn opponents(args: &GauntletArgs) -> Result<Vec<Opponent>, MatchError> {
    let mut out: Vec<Opponent> = Vec::new();
    for spec in &args.opponent {
        let Some((name, command)) = spec.split_once('=') else {
            return Err(MatchError(format!(
                "--opponent '{}': expected NAME=COMMAND",
                crate::protocol::escape(spec)
            )));
        };
        check_name(name)?;
        if out.iter().any(|o| o.name == name) {
            return Err(MatchError(format!("--opponent {name}: named twice")));
        }
        out.push(Opponent {
            name: name.to_string(),
            command: command.to_string(),
            options: Vec::new(),
        });
    }
    for spec in &args.opponent_option {
        let opponent = spec
            .split_once(':')
            .and_then(|(name, setting)| {
                let opponent = out.iter_mut().find(|o| o.name == name)?;
                Some((opponent, setting))
            })
            .ok_or_else(|| {
                MatchError(format!(
                    "--opponent-option '{}': expected NAME:Option=Value with NAME an --opponent's",
                    crate::protocol::escape(spec)
                ))
            })?;
        opponent.0.options.push(opponent.1.to_string());
    }
    Ok(out)
}

/// One cell of the table: the opponent, the board and the clock.
#[derive(Debug, Clone, PartialEq)]
struct Cell {
    opponent: String,
    size: usize,
    tc: TimeControl,
}

impl Cell {
    /// The cell's file name without its extension: `74af0b0_7x7_2+0.02`
    /// (`40per60+0` for `40/60+0`).
    fn stem(&self) -> String {
        let tc = self.tc.to_string().replace('/', "per");
        format!("{}_{}x{}_{tc}", self.opponent, self.size, self.size)
    }

    /// The cell a file name stem names, if it is one [`Cell::stem`] gives.
    fn parse(stem: &str) -> Option<Cell> {
        let (rest, tc) = stem.rsplit_once('_')?;
        let (opponent, board) = rest.rsplit_once('_')?;
        let (rows, columns) = board.split_once('x')?;
        let size: usize = rows.parse().ok()?;
        check_name(opponent).ok()?;
        let cell = Cell {
            opponent: opponent.to_string(),
            size,
            tc: tc.replace("per", "/").parse().ok()?,
        };
        (columns == rows && cell.stem() == stem).then_some(cell)
    }

    /// The table's order: by opponent, board, then clock (base time,
    /// increment, moves per period).
    fn order(&self) -> (&str, usize, Duration, Duration, Option<u32>) {
        (
            &self.opponent,
            self.size,
            self.tc.base,
            self.tc.increment,
            self.tc.moves,
        )
    }
}

/// What the table needs of a game in a results file.
#[derive(Deserialize)]
struct SavedGame {
    engine1_color: String,
    engine1_points: f64,
    termination: String,
}

/// What the table needs of a results file.
#[derive(Deserialize)]
struct Saved {
    games: Vec<SavedGame>,
}

/// The longest results file read: a game's entry takes about 400 bytes,
/// and a match has at most [`super::MAX_GAMES`] games.
const MAX_RESULTS_BYTES: u64 = super::MAX_GAMES as u64 * 1024;

/// The stall timeout of the gauntlet's matches and engine checks, seconds.
const STALL_TIMEOUT: f64 = 10.0;

/// A cell's figures: the score, per colour, and the games the engine
/// under test lost on time.
struct Figures {
    tally: Tally,
    black: Tally,
    white: Tally,
    time_losses: u32,
}

impl Figures {
    fn of(saved: &Saved) -> Figures {
        let color =
            |game: &SavedGame| Color::from_name(&game.engine1_color).unwrap_or(Color::White);
        let [black, white] =
            super::tally_by_color(saved.games.iter().map(|g| (color(g), g.engine1_points)));
        Figures {
            tally: Tally {
                wins: black.wins + white.wins,
                losses: black.losses + white.losses,
                draws: black.draws + white.draws,
            },
            black,
            white,
            time_losses: saved
                .games
                .iter()
                .filter(|g| {
                    g.termination == Termination::TimeForfeit.name() && g.engine1_points == 0.0
                })
                .count() as u32,
        }
    }
}

/// The results in a cell's file, `None` if there is no file. Only a
/// regular file of a sane length is read (a FIFO or a device there is an
/// error, not a hang).
///
/// # Errors
/// A message naming the file: unreadable, or not a results file.
fn read_saved(path: &Path) -> Result<Option<Saved>, MatchError> {
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
        return Ok(None);
    }
    let text = files::read_text(path, MAX_RESULTS_BYTES)?;
    let saved = serde_json::from_str(&text).map_err(|error| {
        MatchError(format!(
            "{} is not a results file of `dodgem match`: {error}",
            files::shown(path)
        ))
    })?;
    Ok(Some(saved))
}

/// `W - L - D`.
fn wld(tally: &Tally) -> String {
    format!("{} - {} - {}", tally.wins, tally.losses, tally.draws)
}

/// The table's row for a cell.
fn row(cell: &Cell, figures: &Figures) -> String {
    let tally = &figures.tally;
    let elo = match (tally.elo(), tally.elo_interval()) {
        (Some(elo), Some((low, high))) => format!(
            "{} [{}, {}]",
            format_elo(elo),
            format_elo(low),
            format_elo(high)
        ),
        _ => "-".into(),
    };
    format!(
        "| {} | {} x {} | {} | {} | {:.3} | {elo} | {} | {} | {} |",
        cell.opponent,
        cell.size,
        cell.size,
        cell.tc,
        wld(tally),
        tally.score().unwrap_or(0.5),
        wld(&figures.black),
        wld(&figures.white),
        figures.time_losses
    )
}

const HEADER: &str = "| opponent | board | clock | score (W - L - D) | fraction | Elo [95%] | as Black | as White | lost on time |\n|---|---|---|---|---|---|---|---|---|\n";

/// The name of the table's file in the output directory.
const SUMMARY: &str = "summary.md";
/// The file in `--out` that says what its cells were played with.
const SETTINGS: &str = "gauntlet.txt";
/// Longest settings file read.
const MAX_SETTINGS_BYTES: u64 = 64 * 1024;

impl GauntletArgs {
    /// Plays the gauntlet (see the module docs).
    ///
    /// # Errors
    /// A bad command line, an engine that fails its checks, an output
    /// directory that cannot be written or holds something other than a
    /// cell's results where they go (all found before the first game), or
    /// a match that cannot be played (see [`super::run`]); the table of
    /// the cells finished is written first.
    pub fn run(&self) -> Result<(), MatchError> {
        let opponents = opponents(self)?;
        let mut cells = Vec::new();
        for opponent in &opponents {
            for &size in &self.size {
                for &tc in &self.tc {
                    let cell = Cell {
                        opponent: opponent.name.clone(),
                        size,
                        tc,
                    };
                    // A size or clock given twice is one cell, played once.
                    if cells.iter().any(|(other, _)| *other == cell) {
                        continue;
                    }
                    let args = self.match_args(opponent, &cell);
                    // Every argument of every cell before the first game.
                    super::prepare(&args)
                        .map_err(|e| MatchError(format!("{}: {e}", cell.stem())))?;
                    cells.push((cell, args));
                }
            }
        }
        if self.summary_only {
            let table = self.write_summary()?;
            print!("{table}");
            return Ok(());
        }
        if let Some(k) = self.cell {
            if k == 0 || k > cells.len() {
                return Err(MatchError(format!(
                    "--cell {k}: this gauntlet has {} cells, 1 to {} (opponents, then sizes, \
                     then clocks)",
                    cells.len(),
                    cells.len()
                )));
            }
            cells = vec![cells.swap_remove(k - 1)];
        }
        self.check_engines(&opponents)?;
        let played = self.check_out(&cells)?;
        for ((cell, args), saved) in cells.iter().zip(played) {
            let stem = cell.stem();
            let saved = match saved {
                Some(saved) => {
                    println!("{stem}: played before, {}", self.results(cell).display());
                    saved
                }
                None => match self.play(cell, args) {
                    Ok(saved) => saved,
                    Err(error) => {
                        // Every cell finished so far stays in the table.
                        return Err(match self.write_summary() {
                            Ok(_) => error,
                            Err(also) => MatchError(format!("{error}; {also}")),
                        });
                    }
                },
            };
            println!("{}", row(cell, &Figures::of(&saved)));
        }
        let table = self.write_summary()?;
        print!("\n{table}");
        Ok(())
    }

    /// The match of a cell.
    fn match_args(&self, opponent: &Opponent, cell: &Cell) -> MatchArgs {
        let stem = cell.stem();
        MatchArgs {
            engine1: self.engine.clone(),
            engine2: opponent.command.clone(),
            name1: Some(self.name.clone()),
            name2: Some(opponent.name.clone()),
            option1: self.option.clone(),
            option2: opponent.options.clone(),
            games: self.games,
            size: cell.size,
            rules: self.rules,
            openings: None,
            random_plies: self.random_plies,
            seed: self.seed,
            concurrency: self.concurrency,
            tc: Some(cell.tc),
            movetime: None,
            depth: None,
            nodes: None,
            timemargin: self.timemargin,
            stall_timeout: STALL_TIMEOUT,
            maxplies: None,
            adjudicate: false,
            tablebase: None,
            pgn: Some(self.out.join(format!("{stem}.pgn"))),
            // A cell stopped part of the way keeps its finished games.
            resume: true,
            results: Some(self.partial(cell)),
            sprt: None,
            event: format!("dodgem gauntlet {stem}"),
        }
    }

    /// A cell's results file.
    fn results(&self, cell: &Cell) -> PathBuf {
        self.out.join(format!("{}.json", cell.stem()))
    }

    /// Where a cell's results go while it is played.
    fn partial(&self, cell: &Cell) -> PathBuf {
        self.out.join(format!("{}.json.partial", cell.stem()))
    }

    /// Starts the engine under test and every opponent once, with their
    /// options, before the first game.
    fn check_engines(&self, opponents: &[Opponent]) -> Result<(), MatchError> {
        let stall = Duration::from_secs_f64(STALL_TIMEOUT);
        let engine = EngineArg {
            label: "engine",
            option_label: "option",
            command: &self.engine,
            name: Some(&self.name),
            options: &self.option,
        };
        super::probe(&engine, self.rules, stall)?;
        for opponent in opponents {
            let arg = EngineArg {
                label: "opponent",
                option_label: "opponent-option",
                command: &opponent.command,
                name: Some(&opponent.name),
                options: &opponent.options,
            };
            super::probe(&arg, self.rules, stall)
                .map_err(|e| MatchError(format!("opponent {}: {e}", opponent.name)))?;
        }
        Ok(())
    }

    /// Creates the output directory and checks it before the first game:
    /// the table can be written there, every cell played before has a
    /// results file with the games asked for, and the files of the cells
    /// to play can be written. Returns the results of the cells played
    /// before.
    fn check_out(&self, cells: &[(Cell, MatchArgs)]) -> Result<Vec<Option<Saved>>, MatchError> {
        std::fs::create_dir_all(&self.out).map_err(|error| {
            MatchError(format!(
                "cannot create {}: {error}",
                files::shown(&self.out)
            ))
        })?;
        files::check_writable(&self.out.join(SUMMARY))?;
        self.check_settings()?;
        let mut played = Vec::new();
        for (cell, args) in cells {
            let results = self.results(cell);
            let saved = read_saved(&results)?;
            match &saved {
                Some(saved) if saved.games.len() != self.games as usize => {
                    return Err(MatchError(format!(
                        "{} holds {} games, not the {} of --games: use another --out, or remove \
                         the file to play the cell again",
                        files::shown(&results),
                        saved.games.len(),
                        self.games
                    )));
                }
                Some(_) => {}
                None => {
                    for path in [&args.pgn, &args.results].into_iter().flatten() {
                        files::check_writable(path)?;
                    }
                }
            }
            played.push(saved);
        }
        Ok(played)
    }

    /// What every cell in `--out` is played with, a line each: the
    /// engine's name and options, the games a cell, the rule and the
    /// openings. (Not the engine's command: a stopped run may go on with
    /// another build of the same engine.)
    fn settings(&self) -> String {
        let mut options = self.option.clone();
        options.sort();
        format!(
            "dodgem gauntlet: the cells in this directory were played with\n\
             engine {}\nengine options {}\ngames {}\nrules {}\nrandom plies {}\nseed {}\n",
            self.name,
            options.join(" "),
            self.games,
            self.rules.name(),
            self.random_plies,
            self.seed
        )
    }

    /// Refuses an `--out` whose cells were played with other settings
    /// (its table would mix them under one heading), and records this
    /// run's settings in one that has none yet.
    fn check_settings(&self) -> Result<(), MatchError> {
        let path = self.out.join(SETTINGS);
        let wanted = self.settings();
        if std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
            return Ok(files::write(&path, &wanted)?);
        }
        let found = files::read_text(&path, MAX_SETTINGS_BYTES)?;
        if found == wanted {
            return Ok(());
        }
        if !found.ends_with('\n') && found.lines().count() <= wanted.lines().count() {
            return Err(MatchError(format!(
                "{} is cut short ({} bytes, its last line unfinished: the run that wrote it \
                 was stopped?): remove it to have it written again, or use another --out",
                files::shown(&path),
                found.len()
            )));
        }
        let differs = wanted
            .lines()
            .zip(found.lines().chain(std::iter::repeat("")))
            .find(|(want, have)| want != have);
        Err(MatchError(match differs {
            Some((want, have)) if !have.is_empty() => format!(
                "{} was played with `{have}`, not `{want}` (see {}): use another --out, or the \
                 same settings",
                files::shown(&self.out),
                files::shown(&path)
            ),
            _ => format!(
                "{} is not a gauntlet's settings file: use another --out",
                files::shown(&path)
            ),
        }))
    }

    /// Plays a cell. Its results file appears only once the cell is whole.
    fn play(&self, cell: &Cell, args: &MatchArgs) -> Result<Saved, MatchError> {
        println!("{}: playing {} games", cell.stem(), self.games);
        super::run(args)?;
        let (partial, results) = (self.partial(cell), self.results(cell));
        std::fs::rename(&partial, &results).map_err(|error| {
            MatchError(format!("cannot write {}: {error}", files::shown(&results)))
        })?;
        read_saved(&results)?
            .ok_or_else(|| MatchError(format!("cannot read back {}", files::shown(&results))))
    }

    /// Writes the table of every cell whose results file is in the output
    /// directory (this run's and earlier runs'), by opponent, board and
    /// clock, to `summary.md` there, and returns it.
    fn write_summary(&self) -> Result<String, MatchError> {
        let entries = std::fs::read_dir(&self.out).map_err(|error| {
            MatchError(format!("cannot read {}: {error}", files::shown(&self.out)))
        })?;
        let mut rows = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(cell) = name
                .to_str()
                .and_then(|name| name.strip_suffix(".json"))
                .and_then(Cell::parse)
            else {
                continue;
            };
            match read_saved(&entry.path()) {
                Ok(Some(saved)) => rows.push((cell, Figures::of(&saved))),
                Ok(None) => {}
                Err(error) => log::warn!("left out of the table: {error}"),
            }
        }
        rows.sort_by(|(a, _), (b, _)| a.order().cmp(&b.order()));
        let mut table = format!(
            "Every cell whose results file is in this directory. The last run: {} against each \
             opponent, {} games a cell, {} rules, {} random plies, seed {}.\n\n{HEADER}",
            self.name,
            self.games,
            self.rules.name(),
            self.random_plies,
            self.seed
        );
        for (cell, figures) in &rows {
            let _ = writeln!(table, "{}", row(cell, figures));
        }
        files::write(&self.out.join(SUMMARY), &table)?;
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: GauntletArgs,
    }

    fn args(line: &[&str]) -> GauntletArgs {
        let mut words = vec!["gauntlet"];
        words.extend_from_slice(line);
        Cli::parse_from(words).args
    }

    #[test]
    fn opponents_take_their_own_options() {
        let a = args(&[
            "--engine",
            "new",
            "--opponent",
            "old=bin/old --flag",
            "--opponent",
            "learned=bin/new",
            "--opponent-option",
            "learned:Evaluation=learned",
            "--size",
            "7",
            "--tc",
            "1+0.01",
            "--out",
            "d",
        ]);
        let list = opponents(&a).unwrap();
        assert_eq!(list[0].command, "bin/old --flag");
        assert!(list[0].options.is_empty());
        assert_eq!(list[1].options, ["Evaluation=learned"]);
        let cell = Cell {
            opponent: list[0].name.clone(),
            size: 7,
            tc: a.tc[0],
        };
        assert_eq!(cell.stem(), "old_7x7_1+0.01");
        assert_eq!(Cell::parse("old_7x7_1+0.01"), Some(cell));
    }

    #[test]
    fn only_the_stems_of_cells_name_cells() {
        let tc = |text: &str| text.parse::<TimeControl>().unwrap();
        let cell = |opponent: &str, size, clock| Cell {
            opponent: opponent.into(),
            size,
            tc: tc(clock),
        };
        for (stem, expected) in [
            ("old_7x7_40per60+0", cell("old", 7, "40/60+0")),
            ("a_b_4x4_5+0.1", cell("a_b", 4, "5+0.1")),
        ] {
            assert_eq!(expected.stem(), stem);
            assert_eq!(Cell::parse(stem), Some(expected), "{stem}");
        }
        for stem in [
            "summary",
            "old_4x5_1+0",
            "old_4x4_5+0.10",
            "a/b_4x4_1+0",
            "old_4x4_x",
        ] {
            assert_eq!(Cell::parse(stem), None, "{stem}");
        }
        let mut cells = [
            cell("b", 4, "1+0"),
            cell("a", 5, "1+0"),
            cell("a", 4, "10+0"),
            cell("a", 4, "2+0.5"),
            cell("a", 4, "2+0"),
        ];
        cells.sort_by(|a, b| a.order().cmp(&b.order()));
        let stems: Vec<String> = cells.iter().map(Cell::stem).collect();
        assert_eq!(
            stems,
            [
                "a_4x4_2+0",
                "a_4x4_2+0.5",
                "a_4x4_10+0",
                "a_5x5_1+0",
                "b_4x4_1+0"
            ]
        );
    }

    #[test]
    fn bad_opponents_are_refused_with_a_reason() {
        let base = ["--engine", "e", "--size", "6", "--tc", "1+0", "--out", "d"];
        let with = |extra: &[&str]| {
            let mut line = base.to_vec();
            line.extend_from_slice(extra);
            opponents(&args(&line)).unwrap_err().0
        };
        assert!(with(&["--opponent", "no-command"]).contains("NAME=COMMAND"));
        assert!(with(&["--opponent", "a/b=x"]).contains("must be letters"));
        assert!(with(&["--opponent", "a=x", "--opponent", "a=y"]).contains("twice"));
        assert!(
            with(&["--opponent", "a=x", "--opponent-option", "b:Hash=1"])
                .contains("an --opponent's")
        );
    }

    #[test]
    fn figures_count_colours_and_time_losses() {
        let saved: Saved = serde_json::from_str(
            r#"{"games": [
                {"engine1_color": "black", "engine1_points": 1.0, "termination": "all cars off"},
                {"engine1_color": "white", "engine1_points": 0.0, "termination": "time forfeit"},
                {"engine1_color": "black", "engine1_points": 0.5, "termination": "threefold repetition"},
                {"engine1_color": "white", "engine1_points": 1.0, "termination": "time forfeit"}
            ]}"#,
        )
        .unwrap();
        let f = Figures::of(&saved);
        assert_eq!((f.tally.wins, f.tally.losses, f.tally.draws), (2, 1, 1));
        assert_eq!((f.black.wins, f.black.draws), (1, 1));
        assert_eq!((f.white.wins, f.white.losses), (1, 1));
        assert_eq!(f.time_losses, 1);
    }
}

//! `dodgem gauntlet`: one engine against a list of opponents (other
//! programs, other builds, the same program with other options), on every
//! board size and clock asked for, so that a change is never judged
//! against one opponent, one board or one clock only.
//!
//! Each cell (opponent, board, clock) is an ordinary match ([`super::run`])
//! whose game records and results file go to the output directory, named
//! for the cell. A cell whose results file is already there with the games
//! asked for is not played again: a gauntlet stopped part of the way (a
//! session's end, a reboot) resumes where it was by running the same
//! command. The table of every cell, with the score per colour, is
//! printed at the end and written to `summary.md` in the directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::board::{Color, Rules};

use super::clock::TimeControl;
use super::record::Termination;
use super::stats::{Tally, format_elo};
use super::{MatchArgs, MatchError};

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
struct Cell<'a> {
    opponent: &'a Opponent,
    size: usize,
    tc: TimeControl,
}

impl Cell<'_> {
    /// The cell's file name without its extension: `74af0b0_7x7_2+0.02`
    /// (`40per60+0` for `40/60+0`).
    fn stem(&self) -> String {
        let tc = self.tc.to_string().replace('/', "per");
        format!("{}_{}x{}_{tc}", self.opponent.name, self.size, self.size)
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

/// The results of a cell played before with `games` games, if its file is
/// there and whole.
fn saved(path: &Path, games: u32) -> Option<Saved> {
    let text = std::fs::read_to_string(path).ok()?;
    let saved: Saved = serde_json::from_str(&text).ok()?;
    (saved.games.len() == games as usize).then_some(saved)
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
        cell.opponent.name,
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

impl GauntletArgs {
    /// Plays the gauntlet (see the module docs).
    ///
    /// # Errors
    /// A bad command line, an output directory that cannot be written,
    /// or a match that cannot be played (see [`super::run`]).
    pub fn run(&self) -> Result<(), MatchError> {
        let opponents = opponents(self)?;
        std::fs::create_dir_all(&self.out).map_err(|error| {
            MatchError(format!("cannot create {}: {error}", self.out.display()))
        })?;
        let mut table = format!(
            "{} against each opponent, {} games a cell, {} rules, {} random plies, seed {}\n\n{HEADER}",
            self.name,
            self.games,
            self.rules.name(),
            self.random_plies,
            self.seed
        );
        for opponent in &opponents {
            for &size in &self.size {
                for &tc in &self.tc {
                    let cell = Cell { opponent, size, tc };
                    let saved = self.cell(&cell)?;
                    let line = row(&cell, &Figures::of(&saved));
                    println!("{line}");
                    let _ = writeln!(table, "{line}");
                }
            }
        }
        let summary = self.out.join("summary.md");
        std::fs::write(&summary, &table)
            .map_err(|error| MatchError(format!("cannot write {}: {error}", summary.display())))?;
        print!("\n{table}");
        Ok(())
    }

    /// A cell's results: from its file if it was played before, else
    /// played now. The results file appears only once the cell is whole.
    fn cell(&self, cell: &Cell) -> Result<Saved, MatchError> {
        let stem = cell.stem();
        let results = self.out.join(format!("{stem}.json"));
        if let Some(saved) = saved(&results, self.games) {
            println!("{stem}: played before, {}", results.display());
            return Ok(saved);
        }
        println!("{stem}: playing {} games", self.games);
        let partial = self.out.join(format!("{stem}.json.partial"));
        let args = MatchArgs {
            engine1: self.engine.clone(),
            engine2: cell.opponent.command.clone(),
            name1: Some(self.name.clone()),
            name2: Some(cell.opponent.name.clone()),
            option1: self.option.clone(),
            option2: cell.opponent.options.clone(),
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
            stall_timeout: 10.0,
            maxplies: None,
            adjudicate: false,
            tablebase: None,
            pgn: Some(self.out.join(format!("{stem}.pgn"))),
            results: Some(partial.clone()),
            sprt: None,
            event: format!("dodgem gauntlet {stem}"),
        };
        super::run(&args)?;
        std::fs::rename(&partial, &results)
            .map_err(|error| MatchError(format!("cannot write {}: {error}", results.display())))?;
        saved(&results, self.games)
            .ok_or_else(|| MatchError(format!("cannot read back {}", results.display())))
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
            opponent: &list[0],
            size: 7,
            tc: a.tc[0],
        };
        assert_eq!(cell.stem(), "old_7x7_1+0.01");
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

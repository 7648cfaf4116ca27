//! `dodgem match --resume`: a match stopped part of the way (a session's
//! end, a reboot, Ctrl-C) goes on from its own game records instead of
//! playing its finished games again.
//!
//! The records file (`--pgn`) is written a game at a time, in round order,
//! so what it holds is the match's first rounds. Each is checked against
//! the game this match would play in that round (the players and their
//! colours, the opening, the rule, the clock, the event): a file of another
//! match is refused with the first difference, never mixed in. The games
//! kept count in the score and the results file as if just played.

use std::path::Path;

use crate::board::{Color, Position, Rules};
use crate::files;
use crate::notation::format_position;
use crate::protocol::quote;

use super::MatchError;
use super::pgn::{self, ReadGame};
use super::record::{GameRecord, GameResult, Termination};

/// The most bytes a record of one game may take on average (an 8 x 8 game
/// of 600 plies with its comments takes about 16 KB).
const RECORD_BYTES: u64 = 64 * 1024;

/// What the game of one round is to be.
pub(crate) struct Expected<'a> {
    pub black: &'a str,
    pub white: &'a str,
    /// The colour the match's first engine plays.
    pub engine1: Color,
    pub start: Position,
    pub rules: Rules,
    pub event: &'a str,
    pub time_control: &'a str,
}

/// The games an earlier run of the match left in its records file (none
/// by default).
#[derive(Default)]
pub(crate) struct Played {
    /// Rounds 1 and on, checked.
    pub games: Vec<GameRecord>,
    /// How many bytes of the file they take: a last record cut short (the
    /// run was stopped while writing it) lies beyond, to be dropped and its
    /// game played again.
    pub bytes: u64,
}

/// The games of the records file at `path` (none if it does not exist),
/// checked to be this match's first rounds: `expected(index)` for the
/// game of round `index + 1`, of `games` in all. A last record that does
/// not parse or has no result was cut short: it is left out (and said so
/// on stderr).
///
/// # Errors
/// The file cannot be read or is not a records file, holds more than
/// `games` games, or a game differs from this match's: the message names
/// the file, the game and the difference.
pub(crate) fn played<'a>(
    path: &Path,
    games: u32,
    expected: impl Fn(u32) -> Expected<'a>,
) -> Result<Played, MatchError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(Played::default());
    }
    let shown = files::shown(path);
    let text = files::read_text(path, u64::from(games) * RECORD_BYTES)
        .map_err(|error| MatchError(format!("--resume: {error}")))?;
    let mut spans = pgn::records(&text);
    let last = spans.len().checked_sub(1);
    let mut kept = Vec::new();
    for (index, span) in spans.iter().enumerate() {
        let read = span.read(&text);
        let finished = read.as_ref().is_ok_and(|game| game.result.is_some());
        if !finished && Some(index) == last {
            log::warn!(
                "{shown}: the record of game {} was cut short: it is played again",
                index + 1
            );
            break;
        }
        let game = read.map_err(|error| {
            MatchError(format!(
                "--resume: {shown}, line {}: {} (remove the file to play the match from the start)",
                error.line, error.message
            ))
        })?;
        if index >= games as usize {
            return Err(MatchError(format!(
                "--resume: {shown} holds more games than the {games} of --games"
            )));
        }
        let wanted = expected(index as u32);
        let record = check(&game, index as u32 + 1, &wanted)
            .and_then(|()| pgn::game_record(&game, wanted.engine1))
            .and_then(|record| check_result(&game, &record).map(|()| record))
            .map_err(|difference| {
                MatchError(format!(
                    "--resume: game {} of {shown} is not this match's: {difference} (play into \
                     another --pgn file, or remove this one to play the match from the start)",
                    index + 1
                ))
            })?;
        kept.push(record);
    }
    spans.truncate(kept.len());
    Ok(Played {
        games: kept,
        bytes: spans.last().map_or(0, |span| span.to as u64),
    })
}

/// The first difference between a record and the game of round `round`.
fn check(game: &ReadGame, round: u32, wanted: &Expected) -> Result<(), String> {
    let round = round.to_string();
    let start = format_position(&wanted.start);
    let fields = [
        ("Round", round.as_str()),
        ("Event", wanted.event),
        ("Black", wanted.black),
        ("White", wanted.white),
        ("Rules", wanted.rules.name()),
        ("FEN", start.as_str()),
        ("TimeControl", wanted.time_control),
    ];
    for (name, value) in fields {
        match game.tag(name) {
            Some(found) if found == value => {}
            Some(found) => {
                return Err(format!(
                    "its {name} is {}, this match's {}",
                    quote(found),
                    quote(value)
                ));
            }
            None => return Err(format!("it has no {name} tag")),
        }
    }
    Ok(())
}

/// Whether a record's result is the one its moves give: a game the rules
/// ended (all cars off, a blocked side, a third repetition) has the result
/// and termination of its last position, whatever its tags say; a game
/// they did not end cannot claim one of those terminations, and one cut
/// at the ply limit is a draw. The `Result` tag and the closing result
/// must agree.
fn check_result(game: &ReadGame, record: &GameRecord) -> Result<(), String> {
    let closing = game.result.as_deref().unwrap_or("*");
    if game.tag("Result") != Some(closing) {
        return Err(format!(
            "its Result tag is {}, its closing result {}",
            quote(game.tag("Result").unwrap_or("(none)")),
            quote(closing)
        ));
    }
    let board_ended = [
        Termination::AllCarsOff,
        Termination::Blocked,
        Termination::Repetition,
    ];
    match game.game.outcome(game.rules) {
        Some(outcome) => {
            let (result, termination) = (GameResult::of(outcome), Termination::of(outcome));
            if (record.result, record.termination) != (result, termination) {
                return Err(format!(
                    "its result is {} ({}), but its moves end the game {} ({}: {outcome})",
                    record.result.pgn(),
                    record.termination.name(),
                    result.pgn(),
                    termination.name()
                ));
            }
        }
        None if board_ended.contains(&record.termination) => {
            return Err(format!(
                "its termination is {}, but its moves do not end the game",
                record.termination.name()
            ));
        }
        None if record.termination == Termination::MaxPlies
            && record.result != GameResult::Draw =>
        {
            return Err(format!(
                "its result is {}, but a game stopped at the ply limit is a draw",
                record.result.pgn()
            ));
        }
        None => {}
    }
    Ok(())
}

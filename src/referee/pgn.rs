//! Game records in a PGN-style text format (see README, "Game records").

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::board::Color;
use crate::notation::format_position;
use crate::protocol::escape;

use super::record::GameRecord;

/// Movetext lines are wrapped before this many characters.
const LINE_WIDTH: usize = 80;

/// The header values every game of a match shares.
#[derive(Clone, Debug)]
pub struct Header {
    pub event: String,
    /// `YYYY.MM.DD`.
    pub date: String,
    /// The `TimeControl` tag.
    pub time_control: String,
}

/// Today's date (UTC) as PGN writes it, `YYYY.MM.DD`.
pub fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0);
    let (year, month, day) = civil_from_days(days as i64);
    format!("{year:04}.{month:02}.{day:02}")
}

/// The Gregorian date of a day number (days since 1970-01-01), by Howard
/// Hinnant's `civil_from_days` algorithm.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A tag value: line breaks made spaces, other control characters
/// written as escapes (see [`escape`]), then `\` and `"` escaped as PGN
/// wants.
fn tag_value(text: &str) -> String {
    escape(&text.replace(['\n', '\r'], " "))
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

/// Comment text cannot hold braces.
fn comment(text: &str) -> String {
    format!("{{{}}}", escape(&text.replace('{', "(").replace('}', ")")))
}

/// The record of one game, ending with a blank line.
pub fn format_game(header: &Header, game: &GameRecord) -> String {
    let mut out = String::new();
    let tags = [
        ("Event", header.event.clone()),
        ("Date", header.date.clone()),
        ("Round", game.round.to_string()),
        ("Black", game.black.clone()),
        ("White", game.white.clone()),
        ("Result", game.result.pgn().to_string()),
        ("BoardSize", game.start.size().to_string()),
        ("Rules", game.rules.name().to_string()),
        ("FEN", format_position(&game.start)),
        ("TimeControl", header.time_control.clone()),
        ("Termination", game.termination.name().to_string()),
        ("PlyCount", game.moves.len().to_string()),
    ];
    for (name, value) in tags {
        let _ = writeln!(out, "[{name} \"{}\"]", tag_value(&value));
    }
    out.push('\n');
    let mut tokens = Vec::new();
    let mut side = game.start.side_to_move();
    let mut number = 1;
    for (i, mv) in game.moves.iter().enumerate() {
        // A move number and its move stay on one line.
        tokens.push(match side {
            Color::Black => format!("{number}. {}", mv.mv),
            Color::White if i == 0 => format!("{number}... {}", mv.mv),
            Color::White => mv.mv.clone(),
        });
        let mut note = String::new();
        if let Some(score) = mv.score {
            note.push_str(&score.to_string());
            if let Some(depth) = mv.depth {
                let _ = write!(note, "/{depth}");
            }
            note.push(' ');
        }
        let _ = write!(note, "{:.3}s", mv.time.as_secs_f64());
        tokens.push(comment(&note));
        if side == Color::White {
            number += 1;
        }
        side = side.other();
    }
    tokens.push(comment(&game.detail));
    tokens.push(game.result.pgn().to_string());
    let mut line = String::new();
    for token in tokens {
        if !line.is_empty() && line.len() + 1 + token.len() > LINE_WIDTH {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&token);
    }
    out.push_str(&line);
    out.push_str("\n\n");
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::board::{Position, Rules};
    use crate::client::Score;
    use crate::notation::parse_position;
    use crate::referee::record::{GameResult, MoveRecord, Termination};

    #[test]
    fn dates_from_day_numbers() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(59), (1970, 3, 1));
        // 2000-02-29: 30 years (7 leap days) and 59 days into 2000.
        assert_eq!(civil_from_days(10_957 + 59), (2000, 2, 29));
        assert_eq!(civil_from_days(20_000), (2024, 10, 4));
        assert_eq!(today().len(), 10);
    }

    fn record(start: Position, moves: &[(&str, u64, Option<Score>)]) -> GameRecord {
        GameRecord {
            round: 3,
            black: "A \"quoted\"".into(),
            white: "B".into(),
            engine1: Color::Black,
            start,
            rules: Rules::Textbook,
            moves: moves
                .iter()
                .map(|&(mv, ms, score)| MoveRecord {
                    mv: mv.into(),
                    time: Duration::from_millis(ms),
                    score,
                    depth: score.map(|_| 4),
                })
                .collect(),
            result: GameResult::Win(Color::White),
            termination: Termination::IllegalMove,
            detail: "Black (A) played {x}".into(),
        }
    }

    #[test]
    fn formats_tags_moves_and_comments() {
        let header = Header {
            event: "test".into(),
            date: "2026.01.02".into(),
            time_control: "2+0.02".into(),
        };
        let game = record(
            Position::start(3),
            &[
                ("a3b3", 153, Some(Score::Cp(38))),
                ("b1b2", 20, Some(Score::Mate(-9))),
                ("a2a1", 1, None),
            ],
        );
        let expected = "\
[Event \"test\"]
[Date \"2026.01.02\"]
[Round \"3\"]
[Black \"A \\\"quoted\\\"\"]
[White \"B\"]
[Result \"1-0\"]
[BoardSize \"3\"]
[Rules \"textbook\"]
[FEN \"B2/B2/1WW b\"]
[TimeControl \"2+0.02\"]
[Termination \"illegal move\"]
[PlyCount \"3\"]

1. a3b3 {cp 38/4 0.153s} b1b2 {mate -9/4 0.020s} 2. a2a1 {0.001s}
{Black (A) played (x)} 1-0

";
        assert_eq!(format_game(&header, &game), expected);
        // White to move first: the first move is numbered `1...`.
        let game = record(
            parse_position("1B1/BW1/2W w").unwrap(),
            &[("b2b3", 5, None)],
        );
        let text = format_game(&header, &game);
        assert!(
            text.contains("\n1... b2b3 {0.005s} {Black (A) played (x)} 1-0\n"),
            "{text}"
        );
    }

    #[test]
    fn control_bytes_never_reach_the_record() {
        let header = Header {
            event: "e\u{7}v".into(),
            date: "2026.01.02".into(),
            time_control: "2+0.02".into(),
        };
        let mut game = record(Position::start(3), &[("a3b3", 1, None)]);
        game.black = "evil\u{1b}[2J\u{0}name".into();
        game.detail = "bell \u{7}".into();
        let text = format_game(&header, &game);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(
            text.contains("[Black \"evil\\\\u{1b}[2J\\\\u{0}name\"]"),
            "{text}"
        );
    }
}

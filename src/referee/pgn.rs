//! Game records in a PGN-style text format (see docs/matches.md, "Game records").

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::board::{Color, MAX_SIZE, MIN_SIZE, Position, Rules, UnknownRules, check_size};
use crate::client::Score;
use crate::game::Game;
use crate::notation::{format_move, format_position, parse_position};
use crate::protocol::{escape, quote};

use super::record::{GameRecord, GameResult, MoveRecord, Termination};

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

/// One move of a record and the comment after it, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordMove {
    /// In protocol notation.
    pub mv: String,
    pub comment: Option<String>,
}

/// What a record says of its game besides the moves, written as its
/// tags in one order (`BoardSize`, `FEN` and `PlyCount` follow from the
/// start and the moves): the same for a match's games and the GUI's.
#[derive(Clone, Copy, Debug)]
pub struct Tags<'a> {
    /// `Event`, `Date` and `TimeControl`.
    pub header: &'a Header,
    pub round: u32,
    pub black: &'a str,
    pub white: &'a str,
    /// The result token: `1-0`, `0-1`, `1/2-1/2`, or `*` for a game still
    /// going on (the `Result` tag and the end of the movetext).
    pub result: &'a str,
    pub start: &'a Position,
    pub rules: Rules,
    pub termination: &'a str,
}

/// The record of one game, ending with a blank line.
pub fn format_game(header: &Header, game: &GameRecord) -> String {
    let tags = Tags {
        header,
        round: game.round,
        black: &game.black,
        white: &game.white,
        result: game.result.pgn(),
        start: &game.start,
        rules: game.rules,
        termination: game.termination.name(),
    };
    let moves: Vec<RecordMove> = game
        .moves
        .iter()
        .map(|mv| RecordMove {
            mv: mv.mv.clone(),
            comment: Some(move_note(mv)),
        })
        .collect();
    write_record(&tags, &moves, Some(&game.detail))
}

/// The comment a match writes after a move: the mover's last score and
/// depth, if it gave them, and the time it took (`cp 38/4 0.153s`,
/// `mate 5/9 0.020s`, `0.001s`).
fn move_note(mv: &MoveRecord) -> String {
    let mut note = String::new();
    if let Some(score) = mv.score {
        note.push_str(&score.to_string());
        if let Some(depth) = mv.depth {
            let _ = write!(note, "/{depth}");
        }
        note.push(' ');
    }
    let _ = write!(note, "{:.3}s", mv.time.as_secs_f64());
    note
}

/// Reads what [`move_note`] wrote: score, depth and time; `None` for any
/// other comment.
fn read_move_note(note: &str) -> Option<(Option<Score>, Option<u32>, Duration)> {
    let words: Vec<&str> = note.split_whitespace().collect();
    let (score, time) = match words[..] {
        [time] => (None, time),
        [kind, value, time] => {
            let (value, depth) = match value.split_once('/') {
                Some((value, depth)) => (value, Some(depth.parse::<u32>().ok()?)),
                None => (value, None),
            };
            let value: i64 = value.parse().ok()?;
            let score = match kind {
                "cp" => Score::Cp(value),
                "mate" => Score::Mate(value),
                _ => return None,
            };
            (Some((score, depth)), time)
        }
        _ => return None,
    };
    // Decimal seconds, read exactly (`0.153s` is 153 ms, not a float's
    // nearest).
    let seconds = time.strip_suffix('s')?;
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let time = Duration::new(whole.parse().ok()?, format!("{fraction:0<9}").parse().ok()?);
    Some((score.map(|(s, _)| s), score.and_then(|(_, d)| d), time))
}

/// A match's game back from its record: every tag [`format_game`] wrote
/// must be there and make sense, and every move's comment be a
/// [`move_note`]. `engine1` is the colour the match's first engine had
/// (the record names players, not which engine came first).
///
/// # Errors
/// What is missing or wrong, in a few words.
pub(crate) fn game_record(read: &ReadGame, engine1: Color) -> Result<GameRecord, String> {
    let tag = |name: &str| read.tag(name).ok_or_else(|| format!("no {name} tag"));
    let round = tag("Round")?;
    let round = round
        .parse()
        .map_err(|_| format!("Round {} is not a game number", quote_text(round)))?;
    let result = match read.result.as_deref() {
        Some("1-0") => GameResult::Win(Color::White),
        Some("0-1") => GameResult::Win(Color::Black),
        Some("1/2-1/2") => GameResult::Draw,
        _ => return Err("the game has no result".into()),
    };
    let termination = Termination::ALL
        .into_iter()
        .find(|t| t.name() == tag("Termination").unwrap_or_default())
        .ok_or_else(|| "no Termination tag that a match writes".to_string())?;
    let moves = read
        .game
        .moves()
        .iter()
        .zip(&read.comments)
        .enumerate()
        .map(|(index, (&mv, comment))| {
            let (score, depth, time) = comment
                .as_deref()
                .and_then(read_move_note)
                .ok_or_else(|| format!("move {} has no score and time comment", index + 1))?;
            Ok(MoveRecord {
                mv: format_move(Some(mv)),
                time,
                score,
                depth,
            })
        })
        .collect::<Result<Vec<MoveRecord>, String>>()?;
    Ok(GameRecord {
        round,
        black: tag("Black")?.to_string(),
        white: tag("White")?.to_string(),
        engine1,
        start: *read.game.start(),
        rules: read.rules,
        moves,
        result,
        termination,
        detail: read.ending.clone().unwrap_or_default(),
    })
}

/// A record from its parts: the tags, the moves from the start (numbered
/// per pair, Black first), a closing comment, and the result token. Ends
/// with a blank line.
pub fn write_record(tags: &Tags, moves: &[RecordMove], ending: Option<&str>) -> String {
    let values = [
        ("Event", tags.header.event.clone()),
        ("Date", tags.header.date.clone()),
        ("Round", tags.round.to_string()),
        ("Black", tags.black.to_string()),
        ("White", tags.white.to_string()),
        ("Result", tags.result.to_string()),
        ("BoardSize", tags.start.size().to_string()),
        ("Rules", tags.rules.name().to_string()),
        ("FEN", format_position(tags.start)),
        ("TimeControl", tags.header.time_control.clone()),
        ("Termination", tags.termination.to_string()),
        ("PlyCount", moves.len().to_string()),
    ];
    let mut out = String::new();
    for (name, value) in values {
        let _ = writeln!(out, "[{name} \"{}\"]", tag_value(&value));
    }
    out.push('\n');
    let mut tokens = Vec::new();
    let mut side = tags.start.side_to_move();
    let mut number = 1;
    for (i, mv) in moves.iter().enumerate() {
        // A move number and its move stay on one line.
        tokens.push(match side {
            Color::Black => format!("{number}. {}", mv.mv),
            Color::White if i == 0 => format!("{number}... {}", mv.mv),
            Color::White => mv.mv.clone(),
        });
        if let Some(note) = &mv.comment {
            tokens.push(comment(note));
        }
        if side == Color::White {
            number += 1;
        }
        side = side.other();
    }
    if let Some(ending) = ending {
        tokens.push(comment(ending));
    }
    tokens.push(tags.result.to_string());
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

/// A game read back from a record ([`read_game`]).
#[derive(Clone, Debug)]
pub struct ReadGame {
    /// Every tag, in order, values unescaped.
    pub tags: Vec<(String, String)>,
    pub rules: Rules,
    /// The start (the `FEN` tag, else the `BoardSize` start) and every
    /// move, checked and played.
    pub game: Game,
    /// The result token (`1-0`, `0-1`, `1/2-1/2`, `*`), if the record has
    /// one.
    pub result: Option<String>,
    /// For each move, the first comment after it (before the next move),
    /// if any: what `dodgem match` writes there is the mover's score,
    /// depth and time (`cp 38/4 0.153s`).
    pub comments: Vec<Option<String>>,
    /// The last comment after the last move's own, if any: where `dodgem
    /// match` says how the game ended.
    pub ending: Option<String>,
}

impl ReadGame {
    /// The value of tag `name` (case-sensitive, as PGN's are).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a record could not be read: what is wrong, and on which line (1
/// is the first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for RecordError {}

/// One token of a record, with its line.
#[derive(Debug)]
enum Token {
    Tag(String, String),
    Comment(String),
    Number,
    Result(String),
    Move(String),
}

/// Splits a record into tokens.
fn tokens(text: &str) -> Result<Vec<(usize, Token)>, RecordError> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    let mut line = 1;
    let error = |line, message: String| Err(RecordError { line, message });
    while let Some(&(at, c)) = chars.peek() {
        match c {
            '\n' => {
                line += 1;
                chars.next();
            }
            c if c.is_whitespace() => {
                chars.next();
            }
            '[' => {
                let end = text[at..].find(['\n', ']']).map(|i| at + i);
                let Some(end) = end.filter(|&end| text[end..].starts_with(']')) else {
                    return error(line, "a tag without its closing `]`".into());
                };
                let inner = text[at + 1..end].trim();
                let (name, value) = inner.split_once(char::is_whitespace).unwrap_or((inner, ""));
                let value = value.trim();
                let unquoted = value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .filter(|_| value.len() >= 2);
                let (Some(unquoted), false) = (unquoted, name.is_empty()) else {
                    return error(
                        line,
                        format!(
                            "a tag is written [Name \"value\"], not [{}]",
                            quote_text(inner)
                        ),
                    );
                };
                out.push((line, Token::Tag(name.to_string(), unescape(unquoted))));
                while chars.peek().is_some_and(|&(i, _)| i <= end) {
                    chars.next();
                }
            }
            '{' => {
                let start = line;
                chars.next();
                let mut comment = String::new();
                loop {
                    match chars.next() {
                        Some((_, '}')) => break,
                        Some((_, '\n')) => {
                            line += 1;
                            comment.push(' ');
                        }
                        Some((_, c)) => comment.push(c),
                        None => return error(start, "a comment `{` that is never closed".into()),
                    }
                }
                out.push((start, Token::Comment(comment.trim().to_string())));
            }
            ';' => {
                while chars.peek().is_some_and(|&(_, c)| c != '\n') {
                    chars.next();
                }
            }
            '}' | ']' => return error(line, format!("a `{c}` with nothing open")),
            _ => {
                let rest = &text[at..];
                let end = rest
                    .find(|c: char| c.is_whitespace() || "[]{};".contains(c))
                    .unwrap_or(rest.len());
                let word = &rest[..end];
                for _ in word.chars() {
                    chars.next();
                }
                // `12.`, `12...`, or a number glued to its move (`12.a3b3`).
                let digits = word.bytes().take_while(u8::is_ascii_digit).count();
                let dots = word[digits..].bytes().take_while(|&b| b == b'.').count();
                let token = match word {
                    "1-0" | "0-1" | "1/2-1/2" | "*" => Token::Result(word.to_string()),
                    _ if digits > 0 && dots > 0 => {
                        out.push((line, Token::Number));
                        let glued = &word[digits + dots..];
                        if glued.is_empty() {
                            continue;
                        }
                        Token::Move(glued.to_string())
                    }
                    _ => Token::Move(word.to_string()),
                };
                out.push((line, token));
            }
        }
    }
    Ok(out)
}

/// A tag value as written, with `\"` and `\\` read back.
fn unescape(value: &str) -> String {
    let mut out = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Text quoted back in a message, control characters escaped and cut
/// short.
fn quote_text(text: &str) -> String {
    let short: String = text.chars().take(60).collect();
    let cut = if short.len() < text.len() { "..." } else { "" };
    format!("{}{cut}", quote(&short))
}

/// Reads one game from a record in the format [`write_record`] writes
/// (as `dodgem match --pgn` and the GUI's export do): tags, then moves
/// with optional numbers and `{comments}`, then a result. The start is the
/// `FEN` tag, else the start of the `BoardSize` board; the rule is the
/// `Rules` tag (textbook when absent). Every move is checked and played;
/// other tags are kept as they are.
///
/// # Errors
/// A [`RecordError`] naming the line and what is wrong: an empty record,
/// malformed tags or comments, a bad `FEN`, `BoardSize` or `Rules`, an
/// illegal move (numbered from 1), a move after the end of the game, or
/// more than one game.
pub fn read_game(text: &str) -> Result<ReadGame, RecordError> {
    let tokens = tokens(text)?;
    if tokens.is_empty() {
        return Err(RecordError {
            line: 1,
            message: "the record is empty".into(),
        });
    }
    let mut tags = Vec::new();
    let mut moves: Vec<(usize, String)> = Vec::new();
    let mut comments: Vec<Option<String>> = Vec::new();
    let mut ending = None;
    let mut result = None;
    for (line, token) in tokens {
        if result.is_some() {
            return Err(RecordError {
                line,
                message: "more than one game: import one game at a time".into(),
            });
        }
        match token {
            Token::Tag(name, value) if moves.is_empty() => tags.push((line, name, value)),
            Token::Tag(name, _) => {
                return Err(RecordError {
                    line,
                    message: format!("tag {} after the moves", quote_text(&name)),
                });
            }
            Token::Comment(text) => match comments.last_mut() {
                Some(last @ None) => *last = Some(text),
                Some(Some(_)) => ending = Some(text),
                None => {}
            },
            Token::Number => {}
            Token::Result(token) => result = Some(token),
            Token::Move(mv) => {
                moves.push((line, mv));
                comments.push(None);
                ending = None;
            }
        }
    }
    let find = |name: &str| tags.iter().find(|(_, n, _)| n == name);
    let size = match find("BoardSize") {
        Some((line, _, value)) => Some(
            value
                .parse::<usize>()
                .ok()
                .and_then(|size| check_size(size).ok())
                .ok_or_else(|| RecordError {
                    line: *line,
                    message: format!(
                        "BoardSize {} is not a board size ({MIN_SIZE} to {MAX_SIZE})",
                        quote_text(value)
                    ),
                })?,
        ),
        None => None,
    };
    let start = match find("FEN") {
        Some((line, _, value)) => {
            let start = parse_position(value).map_err(|error| RecordError {
                line: *line,
                message: format!("FEN {}: {error}", quote_text(value)),
            })?;
            if size.is_some_and(|size| size != start.size()) {
                return Err(RecordError {
                    line: *line,
                    message: format!(
                        "FEN is a {n} x {n} position but BoardSize says {}",
                        size.unwrap_or_default(),
                        n = start.size()
                    ),
                });
            }
            start
        }
        None => match size {
            Some(size) => Position::start(size),
            None => {
                return Err(RecordError {
                    line: 1,
                    message: "no FEN or BoardSize tag: the start position is unknown".into(),
                });
            }
        },
    };
    let rules = match find("Rules") {
        Some((line, _, value)) => value.parse().map_err(|error: UnknownRules| RecordError {
            line: *line,
            message: error.to_string(),
        })?,
        None => Rules::Textbook,
    };
    let mut game = Game::new(start);
    for (index, (line, mv)) in moves.iter().enumerate() {
        game.play_text(mv, rules).map_err(|error| RecordError {
            line: *line,
            message: format!("move {} ({}): {error}", index + 1, quote_text(mv)),
        })?;
    }
    Ok(ReadGame {
        tags: tags.into_iter().map(|(_, n, v)| (n, v)).collect(),
        rules,
        game,
        result,
        comments,
        ending,
    })
}

/// Reads every game of a file of records, one after the other (as
/// `dodgem match --pgn` writes them): a game starts at a tag line after
/// the moves of the one before ([`records`]).
///
/// # Errors
/// The first game that [`read_game`] refuses, its line counted from the
/// start of the file.
pub fn read_games(text: &str) -> Result<Vec<ReadGame>, RecordError> {
    records(text)
        .into_iter()
        .map(|record| record.read(text))
        .collect()
}

/// Where one record of a file of records lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    /// Its first byte and the byte after its last.
    pub from: usize,
    pub to: usize,
    /// Its first line in the file (1 is the first).
    pub first_line: usize,
}

impl Span {
    /// The record's game, an error's line counted from the file's start.
    pub(crate) fn read(self, text: &str) -> Result<ReadGame, RecordError> {
        read_game(&text[self.from..self.to]).map_err(|error| RecordError {
            line: error.line + self.first_line - 1,
            message: error.message,
        })
    }
}

/// The records of a file of records, in order: a record starts at a tag
/// line after the moves of the one before. Blank text is no record.
pub(crate) fn records(text: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    let (mut from, mut first_line, mut moves_seen) = (0, 1, false);
    let mut at = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') && moves_seen {
            spans.push(Span {
                from,
                to: at,
                first_line,
            });
            (from, first_line, moves_seen) = (at, number + 1, false);
        } else if !trimmed.is_empty() && !trimmed.starts_with('[') && !trimmed.starts_with(';') {
            moves_seen = true;
        }
        at += line.len();
    }
    if !text[from..].trim().is_empty() {
        spans.push(Span {
            from,
            to: text.len(),
            first_line,
        });
    }
    spans
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

    fn header(event: &str) -> Header {
        Header {
            event: event.into(),
            date: "2026.01.02".into(),
            time_control: "2+0.02".into(),
        }
    }

    /// A game of three moves from the 3 x 3 start, two with scores.
    fn three_moves() -> GameRecord {
        record(
            Position::start(3),
            &[
                ("a3b3", 153, Some(Score::Cp(38))),
                ("b1b2", 20, Some(Score::Mate(-9))),
                ("a2a1", 1, None),
            ],
        )
    }

    #[test]
    fn formats_tags_moves_and_comments() {
        let header = header("test");
        let game = three_moves();
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
    fn records_read_back() {
        let read = read_game(&format_game(&header("test"), &three_moves())).unwrap();
        assert_eq!(read.tag("Black"), Some("A \"quoted\""));
        assert_eq!(read.rules, Rules::Textbook);
        assert_eq!(read.result.as_deref(), Some("1-0"));
        assert_eq!(
            read.game.position_command(),
            "position fen B2/B2/1WW b moves a3b3 b1b2 a2a1"
        );
        // Each move's own comment: its score, depth and time; the closing
        // comment after the last move's is not the move's.
        assert_eq!(
            read.comments,
            [
                Some("cp 38/4 0.153s".to_string()),
                Some("mate -9/4 0.020s".to_string()),
                Some("0.001s".to_string())
            ]
        );
        // White first, numbers glued to moves, `;` comments, no result.
        let text = "[FEN \"1B1/BW1/2W w\"]\n[Rules \"classic\"]\n; a note\n1...c1c2 {x\ny} 2.b3c3";
        let read = read_game(text).unwrap();
        assert_eq!(read.rules, Rules::Classic);
        assert_eq!(read.game.moves().len(), 2);
        assert_eq!(read.result, None);
        assert_eq!(read.comments, [Some("x y".to_string()), None]);
        // The BoardSize start when there is no FEN.
        let read = read_game("[BoardSize \"4\"] 1. a4b4 *").unwrap();
        assert_eq!(format_position(read.game.start()), "B3/B3/B3/1WWW b");
    }

    #[test]
    fn a_match_record_reads_back_to_its_game() {
        let game = three_moves();
        let read = read_game(&format_game(&header("test"), &game)).unwrap();
        assert_eq!(read.ending.as_deref(), Some("Black (A) played (x)"));
        let back = game_record(&read, Color::Black).unwrap();
        assert_eq!(back.moves, game.moves);
        assert_eq!(
            (back.round, back.black, back.white, back.engine1),
            (3, game.black.clone(), game.white.clone(), Color::Black)
        );
        assert_eq!((back.start, back.rules), (game.start, game.rules));
        assert_eq!(back.result, game.result);
        assert_eq!(back.termination, game.termination);
        // The notes a match writes, and what is not one.
        assert_eq!(
            read_move_note("cp -12/7 1.250s"),
            Some((Some(Score::Cp(-12)), Some(7), Duration::from_millis(1250)))
        );
        assert_eq!(
            read_move_note("mate 3 0.000s"),
            Some((Some(Score::Mate(3)), None, Duration::ZERO))
        );
        for other in ["", "cp 3/x 1s", "ply 3 1s", "1", "cp 3 -1s", "a b c d"] {
            assert_eq!(read_move_note(other), None, "{other}");
        }
        // A game record without what a match writes is refused.
        let bare = read_game("[BoardSize \"3\"] 1. a3b3 {cp 1/1 0.1s} 1-0").unwrap();
        assert_eq!(
            game_record(&bare, Color::Black).unwrap_err(),
            "no Round tag"
        );
        let text = format_game(&header("test"), &game).replace("{0.001s}", "{fast}");
        let error = game_record(&read_game(&text).unwrap(), Color::Black).unwrap_err();
        assert_eq!(error, "move 3 has no score and time comment");
    }

    #[test]
    fn a_file_of_records_reads_game_by_game() {
        let one = format_game(&header("test"), &three_moves());
        let text = format!("{one}{one}");
        let games = read_games(&text).unwrap();
        assert_eq!(games.len(), 2);
        assert!(
            games
                .iter()
                .all(|g| g.game.moves().len() == 3 && g.comments.len() == 3)
        );
        assert!(read_games("").unwrap().is_empty());
        // A bad second game is named by its line in the file.
        let lines = one.lines().count();
        let bad = format!("{one}[BoardSize \"3\"]\n1. a1a1 *\n");
        let error = read_games(&bad).unwrap_err();
        assert_eq!(error.line, lines + 2, "{error}");
    }

    #[test]
    fn bad_records_say_what_and_where() {
        let error = |text: &str| read_game(text).unwrap_err().to_string();
        assert_eq!(error(""), "line 1: the record is empty");
        assert_eq!(error(" \n "), "line 1: the record is empty");
        assert!(error("1. a3b3").contains("no FEN or BoardSize tag"));
        assert!(
            error("[BoardSize \"3\"]\n\n1. a3b3 b1b2 2. a3b3")
                .starts_with("line 3: move 3 ('a3b3'): move a3b3 is illegal")
        );
        assert!(error("[FEN \"B2/B2 b\"]").starts_with("line 1: FEN 'B2/B2 b': "));
        assert!(error("[BoardSize \"9\"]").contains("BoardSize '9' is not a board size (3 to 8)"));
        assert!(error("[BoardSize \"4\"]\n[FEN \"B2/B2/1WW b\"]").contains("BoardSize says 4"));
        assert!(error("[BoardSize \"3\"][Rules \"house\"]").contains("unknown rules 'house'"));
        assert!(error("[BoardSize 3]").contains("a tag is written [Name \"value\"]"));
        assert!(error("[BoardSize \"3\"\n1. a3b3").contains("closing `]`"));
        assert!(error("[BoardSize \"3\"] 1. a3b3 {oops").contains("never closed"));
        assert!(
            error("[BoardSize \"3\"] 1. a3b3 *\n\n[BoardSize \"3\"]")
                .starts_with("line 3: more than one game")
        );
        assert!(error("[BoardSize \"3\"] 1. a3b3 [Rules \"classic\"]").contains("after the moves"));
        assert!(error("[BoardSize \"3\"] 1. zz").contains("move 1 ('zz')"));
        // A move after the end of the game.
        assert!(
            error("[FEN \"2B/3/W2 b\"] 1. c3d3 a1a2").contains("move 2 ('a1a2'): the game is over")
        );
    }

    #[test]
    fn control_bytes_never_reach_the_record() {
        let header = header("e\u{7}v");
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

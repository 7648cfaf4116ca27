//! Parsing protocol lines into [`Command`]s. Pure functions: syntax only;
//! whether a move is legal or an option value in range is the engine's
//! business.

use std::fmt;
use std::time::Duration;

use crate::board::{Color, Move};
use crate::search::{Limits, MAX_DEPTH};
use crate::time::TimeLimit;

/// Longest piece of bad input quoted back in an error message.
const QUOTE_LIMIT: usize = 40;

/// Input echoed whole (a file name, an engine's name): control
/// characters (and backslashes, so the escape cannot be forged) written as
/// Rust escapes (ESC becomes `\u{1b}`), everything else as it is. The one
/// place text from outside is made safe for a terminal or a log line.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || c == '\\' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Quotes a piece of input safely: escaped as by [`escape`], long input
/// cut short.
pub fn quote(text: &str) -> String {
    let escaped = escape(text);
    if escaped.chars().count() > QUOTE_LIMIT {
        let short: String = escaped.chars().take(QUOTE_LIMIT).collect();
        format!("'{short}...'")
    } else {
        format!("'{escaped}'")
    }
}

/// The two dialects of the protocol: UCI (the default) and UGI, which a
/// session chooses with its first handshake (`uci` or `ugi`). They share
/// every command; the dialect decides the handshake's last line, whether
/// `bestmove` names a ponder move, what an illegal move in `position` does,
/// and how much time is kept back from the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Uci,
    Ugi,
}

impl Dialect {
    /// The handshake command (`uci`, `ugi`).
    pub const fn name(self) -> &'static str {
        match self {
            Dialect::Uci => "uci",
            Dialect::Ugi => "ugi",
        }
    }

    /// The new-game command (`ucinewgame`, `uginewgame`).
    pub const fn new_game(self) -> &'static str {
        match self {
            Dialect::Uci => "ucinewgame",
            Dialect::Ugi => "uginewgame",
        }
    }

    /// The name of `side`'s clock in `go` (`btime`, `p1time`, ...). In
    /// UGI, player 1 is the side that moves first from the start: Black.
    pub const fn clock_name(self, side: Color) -> &'static str {
        match (self, side) {
            (Dialect::Uci, Color::Black) => "btime",
            (Dialect::Uci, Color::White) => "wtime",
            (Dialect::Ugi, Color::Black) => "p1time",
            (Dialect::Ugi, Color::White) => "p2time",
        }
    }
}

/// A UGI `query`: a question about the game of the last `position`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    /// `query gameover`: has the game ended?
    GameOver,
    /// `query p1turn`: is it player 1's (Black's) turn?
    P1Turn,
    /// `query result`: who won (`p1win`, `p2win`, `draw`, `none`)?
    Result,
}

/// The questions `query` knows, as the error message lists them.
const QUESTIONS: &str = "gameover, p1turn or result";

/// Where `position` starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// The start position of the `BoardSize` option's board.
    StartPos,
    /// A position string (see `notation`), not yet checked.
    Fen(String),
}

/// The parameters of `go`, as given (any subset). UGI's clocks are read
/// into the same fields: player 1 is Black (`p1time` is `btime`, `p1inc`
/// is `binc`), player 2 White.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Go {
    pub wtime: Option<i64>,
    pub btime: Option<i64>,
    pub winc: Option<i64>,
    pub binc: Option<i64>,
    pub movestogo: Option<u32>,
    pub movetime: Option<u64>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub mate: Option<u32>,
    pub infinite: bool,
    pub ponder: bool,
    /// Moves as written, checked against the position by the engine.
    pub searchmoves: Vec<String>,
}

impl Go {
    /// Whether any clock parameter is given: such a `go` is a timed search,
    /// with a clock it leaves out counting as zero.
    pub fn has_clock(&self) -> bool {
        self.wtime.is_some()
            || self.btime.is_some()
            || self.winc.is_some()
            || self.binc.is_some()
            || self.movestogo.is_some()
    }

    /// Whether this is a timed search without the clock of `side`, the
    /// side to move: the name of the missing parameter in `dialect`.
    pub fn missing_clock(&self, side: Color, dialect: Dialect) -> Option<&'static str> {
        let own = match side {
            Color::White => self.wtime,
            Color::Black => self.btime,
        };
        (self.has_clock() && own.is_none() && self.movetime.is_none() && !self.infinite)
            .then_some(dialect.clock_name(side))
    }

    /// What this `go` asks beyond the search's bounds, and what is done
    /// instead (the depth limit is [`MAX_DEPTH`] plies), one message each.
    pub fn clamped(&self) -> Vec<String> {
        let most = MAX_DEPTH as u64;
        let mut notes = Vec::new();
        match self.depth {
            Some(0) => notes.push("go depth 0 searches 1 ply".to_string()),
            Some(depth) if u64::from(depth) > most => notes.push(format!(
                "go depth {depth} is beyond the depth limit: searching at most {most} plies"
            )),
            _ => {}
        }
        match self.mate {
            Some(0) => notes.push("go mate 0 searches 1 ply".to_string()),
            Some(moves) if 2 * u64::from(moves) > most => notes.push(format!(
                "go mate {moves} needs more than {most} plies: searching at most {most}"
            )),
            _ => {}
        }
        notes
    }

    /// The search limits this `go` sets for `side` to move.
    pub fn limits(&self, side: Color, searchmoves: Vec<Move>) -> Limits {
        let ms = |value: Option<i64>| Duration::from_millis(value.unwrap_or(0).max(0) as u64);
        let time = if self.infinite {
            TimeLimit::None
        } else if let Some(movetime) = self.movetime {
            TimeLimit::MoveTime(Duration::from_millis(movetime))
        } else if self.has_clock() {
            let (remaining, increment) = match side {
                Color::White => (self.wtime, self.winc),
                Color::Black => (self.btime, self.binc),
            };
            TimeLimit::Clock {
                remaining: ms(remaining),
                increment: ms(increment),
                moves_to_go: self.movestogo.filter(|&n| n > 0),
            }
        } else {
            TimeLimit::None
        };
        Limits {
            time,
            depth: self.depth,
            nodes: self.nodes,
            mate: self.mate,
            infinite: self.infinite,
            searchmoves,
        }
    }
}

/// One protocol command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `uci` or `ugi`: the handshake, which also chooses the dialect.
    Hello(Dialect),
    Debug(bool),
    IsReady,
    SetOption {
        name: String,
        value: Option<String>,
    },
    /// `ucinewgame` or `uginewgame`.
    NewGame,
    Position {
        start: Start,
        moves: Vec<String>,
    },
    Go(Go),
    Perft(u32),
    Stop,
    PonderHit,
    Quit,
    Display,
    Eval,
    Bench(Option<u32>),
    /// The solved value of the current position.
    Solve,
    /// A UGI question about the game.
    Query(Query),
    /// A blank line: nothing to do.
    Nothing,
}

/// Why a line is not a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    UnknownCommand(String),
    /// `command` needs a value after `token`.
    MissingValue {
        command: &'static str,
        token: String,
    },
    /// `token`'s value is not a number in range.
    BadNumber {
        command: &'static str,
        token: String,
        value: String,
    },
    /// `command` does not know `token`.
    UnknownToken {
        command: &'static str,
        token: String,
    },
    /// `command` got more arguments than it `takes`.
    UnexpectedArguments {
        command: &'static str,
        takes: &'static str,
    },
    /// `token`'s value is a number, but beyond what the engine takes.
    OutOfRange {
        command: &'static str,
        token: &'static str,
        value: u64,
        max: u64,
    },
    /// A required part is missing (e.g. `position` without `startpos`/`fen`).
    Missing {
        command: &'static str,
        what: &'static str,
    },
    /// `query` asks a question it does not know.
    UnknownQuery(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::UnknownCommand(word) => write!(f, "unknown command {}", quote(word)),
            ParseError::MissingValue { command, token } => {
                write!(f, "{command}: missing value after {}", quote(token))
            }
            ParseError::BadNumber {
                command,
                token,
                value,
            } => write!(
                f,
                "{command}: bad value {} for {token} (expected a whole number in range)",
                quote(value),
            ),
            ParseError::OutOfRange {
                command,
                token,
                value,
                max,
            } => write!(
                f,
                "{command}: {token} {value} is out of range (at most {max}); nothing done"
            ),
            ParseError::UnknownToken { command, token } => {
                write!(f, "{command}: unknown parameter {}", quote(token))
            }
            ParseError::UnexpectedArguments { command, takes } => {
                write!(f, "{command} takes {takes}")
            }
            ParseError::Missing { command, what } => write!(f, "{command}: missing {what}"),
            ParseError::UnknownQuery(question) => write!(
                f,
                "query: unknown question {} (ask {QUESTIONS})",
                quote(question)
            ),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses one line of input.
///
/// # Errors
/// A [`ParseError`] saying what is wrong; nothing has been done.
pub fn parse(line: &str) -> Result<Command, ParseError> {
    let mut tokens = line.split_whitespace();
    let Some(word) = tokens.next() else {
        return Ok(Command::Nothing);
    };
    let rest: Vec<&str> = tokens.collect();
    let no_args = |command: &'static str, done: Command| {
        if rest.is_empty() {
            Ok(done)
        } else {
            Err(ParseError::UnexpectedArguments {
                command,
                takes: "no arguments",
            })
        }
    };
    match word {
        "uci" => no_args("uci", Command::Hello(Dialect::Uci)),
        "ugi" => no_args("ugi", Command::Hello(Dialect::Ugi)),
        "isready" => no_args("isready", Command::IsReady),
        "ucinewgame" => no_args("ucinewgame", Command::NewGame),
        "uginewgame" => no_args("uginewgame", Command::NewGame),
        "stop" => no_args("stop", Command::Stop),
        "ponderhit" => no_args("ponderhit", Command::PonderHit),
        "quit" => no_args("quit", Command::Quit),
        "d" => no_args("d", Command::Display),
        "eval" => no_args("eval", Command::Eval),
        "solve" => no_args("solve", Command::Solve),
        "debug" => match rest.as_slice() {
            ["on"] => Ok(Command::Debug(true)),
            ["off"] => Ok(Command::Debug(false)),
            [] => Err(ParseError::Missing {
                command: "debug",
                what: "'on' or 'off'",
            }),
            [_, _, ..] => Err(ParseError::UnexpectedArguments {
                command: "debug",
                takes: "one argument, 'on' or 'off'",
            }),
            [other] => Err(ParseError::UnknownToken {
                command: "debug",
                token: other.to_string(),
            }),
        },
        "query" => match rest.as_slice() {
            ["gameover"] => Ok(Command::Query(Query::GameOver)),
            ["p1turn"] => Ok(Command::Query(Query::P1Turn)),
            ["result"] => Ok(Command::Query(Query::Result)),
            [other] => Err(ParseError::UnknownQuery(other.to_string())),
            [] => Err(ParseError::Missing {
                command: "query",
                what: "the question (gameover, p1turn or result)",
            }),
            [_, _, ..] => Err(ParseError::UnexpectedArguments {
                command: "query",
                takes: "one argument: gameover, p1turn or result",
            }),
        },
        "setoption" => parse_setoption(line),
        "position" => parse_position(&rest),
        "go" => parse_go(&rest),
        "bench" => match rest.as_slice() {
            [] => Ok(Command::Bench(None)),
            [depth] => Ok(Command::Bench(Some(bounded(
                "bench",
                "depth",
                depth,
                crate::bench::MAX_DEPTH,
            )?))),
            _ => Err(ParseError::UnexpectedArguments {
                command: "bench",
                takes: "at most one argument, the depth",
            }),
        },
        other => Err(ParseError::UnknownCommand(other.to_string())),
    }
}

/// Reads a number with `FromStr`, naming `command` and `token` in the error.
fn number<T: std::str::FromStr>(
    command: &'static str,
    token: &str,
    value: &str,
) -> Result<T, ParseError> {
    value.parse().map_err(|_| ParseError::BadNumber {
        command,
        token: token.to_string(),
        value: value.to_string(),
    })
}

/// Reads a number no larger than `max`, naming `command` and `token` in
/// the error.
fn bounded(
    command: &'static str,
    token: &'static str,
    value: &str,
    max: u32,
) -> Result<u32, ParseError> {
    let number: u64 = number(command, token, value)?;
    u32::try_from(number)
        .ok()
        .filter(|&n| n <= max)
        .ok_or(ParseError::OutOfRange {
            command,
            token,
            value: number,
            max: u64::from(max),
        })
}

/// The words of `line` with the byte offset each starts at.
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let mut start = None;
    for (at, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(from)) => {
                words.push((from, &line[from..at]));
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    if let Some(from) = start {
        words.push((from, &line[from..]));
    }
    words
}

/// `setoption name <name> [value <value>]`: the name's words joined by
/// single spaces, the value exactly as written from its first to its
/// last non-blank character (a file name may hold runs of spaces).
fn parse_setoption(line: &str) -> Result<Command, ParseError> {
    let words = words(line);
    let rest: Vec<&str> = words.iter().skip(1).map(|&(_, word)| word).collect();
    let missing_name = ParseError::Missing {
        command: "setoption",
        what: "'name <option>' (the form is: setoption name <option> [value <value>])",
    };
    match rest.first() {
        Some(&"name") => {}
        Some(_) | None => return Err(missing_name),
    }
    let value_at = rest.iter().position(|&t| t == "value");
    let name_tokens = &rest[1..value_at.unwrap_or(rest.len())];
    if name_tokens.is_empty() {
        return Err(missing_name);
    }
    let value = match value_at {
        Some(at) if at + 1 == rest.len() => {
            return Err(ParseError::MissingValue {
                command: "setoption",
                token: "value".into(),
            });
        }
        Some(at) => {
            let from = words[at + 2].0;
            Some(line[from..].trim_end().to_string())
        }
        None => None,
    };
    Ok(Command::SetOption {
        name: name_tokens.join(" "),
        value,
    })
}

fn parse_position(rest: &[&str]) -> Result<Command, ParseError> {
    let moves_at = rest.iter().position(|&t| t == "moves");
    let head = &rest[..moves_at.unwrap_or(rest.len())];
    let moves = match moves_at {
        Some(at) => rest[at + 1..].iter().map(|m| m.to_string()).collect(),
        None => Vec::new(),
    };
    let start = match head {
        ["startpos"] => Start::StartPos,
        ["startpos", extra, ..] => {
            return Err(ParseError::UnknownToken {
                command: "position",
                token: extra.to_string(),
            });
        }
        ["fen"] => {
            return Err(ParseError::MissingValue {
                command: "position",
                token: "fen".into(),
            });
        }
        ["fen", fen @ ..] => Start::Fen(fen.join(" ")),
        [] => {
            return Err(ParseError::Missing {
                command: "position",
                what: "'startpos' or 'fen <position string>'",
            });
        }
        [other, ..] => {
            return Err(ParseError::UnknownToken {
                command: "position",
                token: other.to_string(),
            });
        }
    };
    Ok(Command::Position { start, moves })
}

fn parse_go(rest: &[&str]) -> Result<Command, ParseError> {
    let mut go = Go::default();
    let mut tokens = rest.iter().copied().peekable();
    while let Some(token) = tokens.next() {
        let mut value = || {
            tokens.next().ok_or_else(|| ParseError::MissingValue {
                command: "go",
                token: token.to_string(),
            })
        };
        match token {
            "wtime" | "p2time" => go.wtime = Some(number("go", token, value()?)?),
            "btime" | "p1time" => go.btime = Some(number("go", token, value()?)?),
            "winc" | "p2inc" => go.winc = Some(number("go", token, value()?)?),
            "binc" | "p1inc" => go.binc = Some(number("go", token, value()?)?),
            "movestogo" => go.movestogo = Some(number("go", token, value()?)?),
            "movetime" => go.movetime = Some(number("go", token, value()?)?),
            "depth" => go.depth = Some(number("go", token, value()?)?),
            "nodes" => go.nodes = Some(number("go", token, value()?)?),
            "mate" => go.mate = Some(number("go", token, value()?)?),
            "perft" => {
                let depth = bounded("go", "perft", value()?, crate::perft::MAX_DEPTH)?;
                return match tokens.next() {
                    None => Ok(Command::Perft(depth)),
                    Some(extra) => Err(ParseError::UnknownToken {
                        command: "go perft",
                        token: extra.to_string(),
                    }),
                };
            }
            "infinite" => go.infinite = true,
            "ponder" => go.ponder = true,
            "searchmoves" => {
                // Moves run until the next keyword.
                while let Some(&next) = tokens.peek() {
                    if GO_KEYWORDS.contains(&next) {
                        break;
                    }
                    go.searchmoves.push(next.to_string());
                    tokens.next();
                }
                if go.searchmoves.is_empty() {
                    return Err(ParseError::MissingValue {
                        command: "go",
                        token: token.to_string(),
                    });
                }
            }
            other => {
                return Err(ParseError::UnknownToken {
                    command: "go",
                    token: other.to_string(),
                });
            }
        }
    }
    Ok(Command::Go(go))
}

const GO_KEYWORDS: [&str; 17] = [
    "wtime",
    "btime",
    "winc",
    "binc",
    "p1time",
    "p2time",
    "p1inc",
    "p2inc",
    "movestogo",
    "movetime",
    "depth",
    "nodes",
    "mate",
    "perft",
    "infinite",
    "ponder",
    "searchmoves",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_simple_commands() {
        assert_eq!(parse("uci"), Ok(Command::Hello(Dialect::Uci)));
        assert_eq!(parse("ugi"), Ok(Command::Hello(Dialect::Ugi)));
        assert_eq!(parse("uginewgame"), Ok(Command::NewGame));
        assert_eq!(parse("  isready  "), Ok(Command::IsReady));
        assert_eq!(parse(""), Ok(Command::Nothing));
        assert_eq!(parse("debug on"), Ok(Command::Debug(true)));
        assert_eq!(parse("bench 5"), Ok(Command::Bench(Some(5))));
        assert_eq!(
            parse("uci now"),
            Err(ParseError::UnexpectedArguments {
                command: "uci",
                takes: "no arguments"
            })
        );
        assert!(
            parse("debug on off")
                .unwrap_err()
                .to_string()
                .contains("one argument")
        );
        assert_eq!(
            parse("hello"),
            Err(ParseError::UnknownCommand("hello".into()))
        );
    }

    #[test]
    fn parses_setoption_with_spaces() {
        assert_eq!(
            parse("setoption name Move Overhead value 30"),
            Ok(Command::SetOption {
                name: "Move Overhead".into(),
                value: Some("30".into())
            })
        );
        assert_eq!(
            parse("setoption name Clear Hash"),
            Ok(Command::SetOption {
                name: "Clear Hash".into(),
                value: None
            })
        );
        assert!(parse("setoption name Hash value").is_err());
        assert!(parse("setoption Hash 3").is_err());
        assert!(parse("setoption name").is_err());
    }

    #[test]
    fn parses_position() {
        assert_eq!(
            parse("position startpos moves a3b3 b1b2"),
            Ok(Command::Position {
                start: Start::StartPos,
                moves: vec!["a3b3".into(), "b1b2".into()]
            })
        );
        assert_eq!(
            parse("position fen B2/B2/1WW b"),
            Ok(Command::Position {
                start: Start::Fen("B2/B2/1WW b".into()),
                moves: vec![]
            })
        );
        assert!(parse("position").is_err());
        assert!(parse("position fen").is_err());
        assert!(parse("position startfoo").is_err());
    }

    #[test]
    fn parses_go() {
        let Ok(Command::Go(go)) = parse(
            "go wtime 1000 btime 900 winc 10 binc 5 movestogo 3 searchmoves a3b3 a2b2 depth 4",
        ) else {
            panic!("go did not parse");
        };
        assert_eq!(go.wtime, Some(1000));
        assert_eq!(go.btime, Some(900));
        assert_eq!(go.movestogo, Some(3));
        assert_eq!(go.depth, Some(4));
        assert_eq!(go.searchmoves, vec!["a3b3".to_string(), "a2b2".to_string()]);
        assert_eq!(parse("go perft 3"), Ok(Command::Perft(3)));
        assert!(matches!(
            parse("go depth"),
            Err(ParseError::MissingValue { .. })
        ));
        assert!(matches!(
            parse("go depth -1"),
            Err(ParseError::BadNumber { .. })
        ));
        assert!(matches!(
            parse("go fast"),
            Err(ParseError::UnknownToken { .. })
        ));
        // Clocks may be negative (an engine that is already over time).
        assert!(matches!(parse("go wtime -5"), Ok(Command::Go(_))));
    }

    #[test]
    fn parses_queries() {
        assert_eq!(parse("query gameover"), Ok(Command::Query(Query::GameOver)));
        assert_eq!(parse("query  p1turn "), Ok(Command::Query(Query::P1Turn)));
        assert_eq!(parse("query result"), Ok(Command::Query(Query::Result)));
        assert_eq!(
            parse("query winner").unwrap_err().to_string(),
            "query: unknown question 'winner' (ask gameover, p1turn or result)"
        );
        assert!(matches!(parse("query"), Err(ParseError::Missing { .. })));
        assert!(matches!(
            parse("query result now"),
            Err(ParseError::UnexpectedArguments { .. })
        ));
    }

    #[test]
    fn reads_ugi_clocks_as_black_and_white() {
        let Ok(Command::Go(go)) = parse("go p1time 1000 p2time 900 p1inc 10 p2inc 5") else {
            panic!("go did not parse");
        };
        assert_eq!(
            (go.btime, go.wtime, go.binc, go.winc),
            (Some(1000), Some(900), Some(10), Some(5))
        );
        let Ok(Command::Go(go)) = parse("go p2time 50") else {
            panic!("go did not parse");
        };
        assert_eq!(go.missing_clock(Color::Black, Dialect::Ugi), Some("p1time"));
        assert_eq!(go.missing_clock(Color::Black, Dialect::Uci), Some("btime"));
        assert_eq!(go.missing_clock(Color::White, Dialect::Ugi), None);
        // searchmoves end at a UGI keyword too
        let Ok(Command::Go(go)) = parse("go searchmoves a3b3 p1time 5") else {
            panic!("go did not parse");
        };
        assert_eq!((go.searchmoves.len(), go.btime), (1, Some(5)));
    }

    #[test]
    fn setoption_keeps_the_values_inner_text() {
        assert_eq!(
            parse("setoption  name   TablebasePath value  /t/a  b\tc.dtb  "),
            Ok(Command::SetOption {
                name: "TablebasePath".into(),
                value: Some("/t/a  b\tc.dtb".into())
            })
        );
    }

    #[test]
    fn depths_beyond_their_bounds_are_refused() {
        assert_eq!(parse("go perft 64"), Ok(Command::Perft(64)));
        for line in ["go perft 65", "go perft 20000", "go perft 4294967296"] {
            let error = parse(line).unwrap_err();
            assert!(
                matches!(error, ParseError::OutOfRange { max: 64, .. }),
                "{line}: {error}"
            );
        }
        assert_eq!(parse("bench 96"), Ok(Command::Bench(Some(96))));
        let error = parse("bench 4294967295").unwrap_err();
        assert_eq!(
            error.to_string(),
            "bench: depth 4294967295 is out of range (at most 96); nothing done"
        );
    }

    #[test]
    fn escapes_control_characters_only() {
        assert_eq!(escape("a b/é"), "a b/é");
        assert_eq!(escape("\u{1b}[31m\u{7}\\"), "\\u{1b}[31m\\u{7}\\\\");
        assert!(!escape("\u{0}\u{9b}\n").chars().any(char::is_control));
    }

    #[test]
    fn quotes_hostile_input() {
        assert_eq!(quote("a\u{0}b"), "'a\\u{0}b'");
        assert!(quote(&"x".repeat(1000)).len() < 60);
    }
}

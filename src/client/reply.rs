//! Every line an engine may print, read in one place: the client's mirror
//! of [`crate::protocol::Command`]. The GUI session and the referee both
//! read engine output through [`parse_reply`].

use std::fmt;

use super::options::{OptionSpec, parse_option_line};
use super::search::{Info, parse_bestmove, parse_info};

/// A line from an engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `id name <name>`.
    IdName(String),
    /// `id author <author>`.
    IdAuthor(String),
    /// `option name ... type ...`.
    Option(OptionSpec),
    UciOk,
    /// `ugiok`: the end of a UGI handshake.
    UgiOk,
    ReadyOk,
    /// `response <answer>`: the answer to a UGI `query` (`true`, `false`,
    /// `p1win`, `p2win`, `draw`, `none`).
    Response(String),
    /// A search `info` line.
    Info(Info),
    /// `info string <text>`.
    InfoString(String),
    /// `bestmove <move> [ponder <move>]`; the move is `(none)` in a
    /// finished game and empty if the engine named none.
    BestMove {
        mv: String,
        ponder: Option<String>,
    },
    /// `solve ...`: the position's value from solved tables.
    Solve(Solved),
}

/// A `solve` answer, for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solved {
    /// It wins: the game ends after `plies` (with `dtz`: `plies` to the
    /// next progress move, from layered tables).
    Win {
        plies: u32,
        dtz: bool,
    },
    /// It loses, putting the end (or with `dtz`, progress) off `plies`.
    Loss {
        plies: u32,
        dtz: bool,
    },
    Draw,
    /// No table covers the position.
    Unknown,
}

impl fmt::Display for Solved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dtz = |dtz: bool| if dtz { "dtz " } else { "" };
        match self {
            Solved::Win { plies, dtz: d } => write!(f, "solve win {}{plies}", dtz(*d)),
            Solved::Loss { plies, dtz: d } => write!(f, "solve loss {}{plies}", dtz(*d)),
            Solved::Draw => f.write_str("solve draw"),
            Solved::Unknown => f.write_str("solve unknown"),
        }
    }
}

/// Reads the words after `solve`.
fn parse_solve<'a>(mut words: impl Iterator<Item = &'a str>) -> Option<Solved> {
    let kind = words.next()?;
    let rest: Vec<&str> = words.collect();
    // `<plies to the end>`, `dtz <plies to progress>`, or both: the
    // distance to the end where given.
    let dtz = rest.first() == Some(&"dtz");
    let plies = || match rest.as_slice() {
        [plies] | ["dtz", plies] => plies.parse().ok(),
        [plies, "dtz", progress] => {
            progress.parse::<u32>().ok()?;
            plies.parse().ok()
        }
        _ => None,
    };
    match kind {
        "win" => Some(Solved::Win {
            plies: plies()?,
            dtz,
        }),
        "loss" => Some(Solved::Loss {
            plies: plies()?,
            dtz,
        }),
        "draw" if rest.is_empty() => Some(Solved::Draw),
        "unknown" if rest.is_empty() => Some(Solved::Unknown),
        _ => None,
    }
}

/// Reads a line an engine printed; `None` for a line that is none of the
/// [`Reply`] kinds (or an `option` line that cannot be read).
pub fn parse_reply(line: &str) -> Option<Reply> {
    let line = line.trim();
    let mut words = line.split_whitespace();
    match words.next()? {
        "id" => {
            let key = words.next()?;
            // `line` starts with the word `id`, and `key` follows it.
            let value = line["id".len()..].trim_start()[key.len()..]
                .trim()
                .to_string();
            match key {
                "name" => Some(Reply::IdName(value)),
                "author" => Some(Reply::IdAuthor(value)),
                _ => None,
            }
        }
        "uciok" if words.next().is_none() => Some(Reply::UciOk),
        "ugiok" if words.next().is_none() => Some(Reply::UgiOk),
        "response" => match (words.next(), words.next()) {
            (Some(answer), None) => Some(Reply::Response(answer.to_string())),
            _ => None,
        },
        "readyok" if words.next().is_none() => Some(Reply::ReadyOk),
        "option" => parse_option_line(line).map(Reply::Option),
        "info" if words.next() == Some("string") => {
            // The first "string" in the line is its second word.
            let text = line.split_once("string").map_or("", |(_, rest)| rest);
            Some(Reply::InfoString(text.trim().to_string()))
        }
        "info" => parse_info(line).map(Reply::Info),
        "bestmove" => {
            let mv = parse_bestmove(line)?.to_string();
            let ponder = match (words.nth(1), words.next()) {
                (Some("ponder"), Some(ponder)) => Some(ponder.to_string()),
                _ => None,
            };
            Some(Reply::BestMove { mv, ponder })
        }
        "solve" => parse_solve(words).map(Reply::Solve),
        _ => None,
    }
}

/// The line as an engine prints it.
impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::IdName(name) => write!(f, "id name {name}"),
            Reply::IdAuthor(author) => write!(f, "id author {author}"),
            Reply::Option(option) => option.fmt(f),
            Reply::UciOk => f.write_str("uciok"),
            Reply::UgiOk => f.write_str("ugiok"),
            Reply::Response(answer) => write!(f, "response {answer}"),
            Reply::ReadyOk => f.write_str("readyok"),
            Reply::Info(info) => info.fmt(f),
            Reply::InfoString(text) => write!(f, "info string {text}"),
            Reply::BestMove { mv, ponder: None } => write!(f, "bestmove {mv}"),
            Reply::BestMove {
                mv,
                ponder: Some(ponder),
            } => write!(f, "bestmove {mv} ponder {ponder}"),
            Reply::Solve(solved) => solved.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{OptionKind, Score};

    #[test]
    fn reads_every_kind_of_reply() {
        assert_eq!(
            parse_reply("id name dodgem 0.1.0"),
            Some(Reply::IdName("dodgem 0.1.0".into()))
        );
        assert_eq!(
            parse_reply(" id author  the authors "),
            Some(Reply::IdAuthor("the authors".into()))
        );
        assert_eq!(parse_reply("uciok"), Some(Reply::UciOk));
        assert_eq!(parse_reply("ugiok"), Some(Reply::UgiOk));
        assert_eq!(
            parse_reply("response p1win"),
            Some(Reply::Response("p1win".into()))
        );
        assert_eq!(parse_reply("readyok\r"), Some(Reply::ReadyOk));
        let Some(Reply::Option(option)) =
            parse_reply("option name Ponder type check default false")
        else {
            panic!("not an option");
        };
        assert_eq!(
            (option.name.as_str(), option.kind),
            ("Ponder", OptionKind::Check)
        );
        assert_eq!(
            parse_reply("info string game over: draw"),
            Some(Reply::InfoString("game over: draw".into()))
        );
        let Some(Reply::Info(info)) = parse_reply("info depth 3 score cp -38 pv a2b2") else {
            panic!("not an info line");
        };
        assert_eq!((info.depth, info.score), (Some(3), Some(Score::Cp(-38))));
        assert_eq!(
            parse_reply("bestmove a3b3 ponder b1b2"),
            Some(Reply::BestMove {
                mv: "a3b3".into(),
                ponder: Some("b1b2".into())
            })
        );
        assert_eq!(
            parse_reply("bestmove (none)"),
            Some(Reply::BestMove {
                mv: "(none)".into(),
                ponder: None
            })
        );
        assert_eq!(
            parse_reply("solve loss dtz 2"),
            Some(Reply::Solve(Solved::Loss {
                plies: 2,
                dtz: true
            }))
        );
        // Both distances: the one to the end is kept.
        assert_eq!(
            parse_reply("solve win 19 dtz 1"),
            Some(Reply::Solve(Solved::Win {
                plies: 19,
                dtz: false
            }))
        );
        assert_eq!(
            parse_reply("bestmove"),
            Some(Reply::BestMove {
                mv: String::new(),
                ponder: None
            })
        );
    }

    #[test]
    fn other_lines_are_none() {
        for line in [
            "",
            "   ",
            "uciok please",
            "response",
            "response true false",
            "id",
            "id colour blue",
            "option name X type weird",
            "copyprotection ok",
            "Info depth 3",
            "solve",
            "solve win",
            "solve win dtz",
            "solve draw 3",
            "solve maybe 3",
            "solve loss 3 4",
            "solve win 19 dtz",
            "solve win 19 dtz x",
            "solve win dtz 1 dtz 2",
        ] {
            assert_eq!(parse_reply(line), None, "{line:?}");
        }
    }

    #[test]
    fn replies_print_as_they_were_read() {
        for line in [
            "id name dodgem 0.1.0",
            "id author the dodgem developers",
            "uciok",
            "ugiok",
            "readyok",
            "response false",
            "option name TablebasePath type string default <empty>",
            "option name MultiPV type spin default 1 min 1 max 21",
            "info depth 5 seldepth 7 multipv 2 score mate -3 nodes 9 nps 90 hashfull 0 tbhits 4 time 100 pv a1a2 c3c4",
            "info string hello  world",
            "bestmove a3b3 ponder b1b2",
            "bestmove (none)",
            "solve win 19",
            "solve loss 0",
            "solve win dtz 3",
            "solve loss dtz 2",
            "solve draw",
            "solve unknown",
        ] {
            let reply = parse_reply(line).unwrap();
            assert_eq!(reply.to_string(), line);
        }
    }
}

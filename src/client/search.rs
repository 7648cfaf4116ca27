//! The lines an engine prints about a search: `info` and `bestmove`.

use std::fmt;

/// A search score as the engine reports it, from the point of view of the
/// side to move in the searched position (the engine's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Evaluation units (a car's move is worth about 30).
    Cp(i64),
    /// The side to move wins (`n > 0`) or loses (`n < 0`) after `|n|` more
    /// moves of its own.
    Mate(i64),
}

/// As in an `info` line: `cp 38`, `mate -9`.
impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Mate(n) => write!(f, "mate {n}"),
        }
    }
}

/// The fields of a search `info` line that clients use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    pub depth: Option<u32>,
    pub seldepth: Option<u32>,
    /// The rank of the line among the engine's best; 1 (or none) is the
    /// principal variation.
    pub multipv: Option<u32>,
    pub score: Option<Score>,
    /// `wdl <win> <draw> <loss>`: the chances in permille, from the same
    /// point of view as the score (with `UCI_ShowWDL`).
    pub wdl: Option<[u32; 3]>,
    pub nodes: Option<u64>,
    pub nps: Option<u64>,
    /// Permille of the hash table in use.
    pub hashfull: Option<u32>,
    /// Probes answered by the solved tables.
    pub tbhits: Option<u64>,
    /// Milliseconds since `go`.
    pub time: Option<u64>,
    pub pv: Vec<String>,
}

impl Info {
    /// Whether the line is about the principal variation (`multipv 1`, or
    /// no `multipv` at all).
    pub fn is_principal(&self) -> bool {
        self.multipv.is_none_or(|rank| rank == 1)
    }
}

/// As an engine prints it: `info`, then the fields present in protocol.md's
/// order (`depth seldepth multipv score wdl nodes nps hashfull tbhits
/// time`), the variation last.
impl fmt::Display for Info {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("info")?;
        let numbers = [
            ("depth", self.depth.map(u64::from)),
            ("seldepth", self.seldepth.map(u64::from)),
            ("multipv", self.multipv.map(u64::from)),
        ];
        for (name, value) in numbers {
            if let Some(value) = value {
                write!(f, " {name} {value}")?;
            }
        }
        if let Some(score) = self.score {
            write!(f, " score {score}")?;
        }
        if let Some([win, draw, loss]) = self.wdl {
            write!(f, " wdl {win} {draw} {loss}")?;
        }
        let numbers = [
            ("nodes", self.nodes),
            ("nps", self.nps),
            ("hashfull", self.hashfull.map(u64::from)),
            ("tbhits", self.tbhits),
            ("time", self.time),
        ];
        for (name, value) in numbers {
            if let Some(value) = value {
                write!(f, " {name} {value}")?;
            }
        }
        if !self.pv.is_empty() {
            write!(f, " pv {}", self.pv.join(" "))?;
        }
        Ok(())
    }
}

/// Reads a search `info` line; `None` for any other line, including
/// `info string`. Unknown fields are skipped; a field with a bad value is
/// left out.
pub fn parse_info(line: &str) -> Option<Info> {
    let mut words = line.split_whitespace().peekable();
    if words.next() != Some("info") || words.peek() == Some(&"string") {
        return None;
    }
    let mut info = Info::default();
    while let Some(word) = words.next() {
        match word {
            "depth" => info.depth = words.next().and_then(|w| w.parse().ok()),
            "seldepth" => info.seldepth = words.next().and_then(|w| w.parse().ok()),
            "multipv" => info.multipv = words.next().and_then(|w| w.parse().ok()),
            "nodes" => info.nodes = words.next().and_then(|w| w.parse().ok()),
            "nps" => info.nps = words.next().and_then(|w| w.parse().ok()),
            "hashfull" => info.hashfull = words.next().and_then(|w| w.parse().ok()),
            "tbhits" => info.tbhits = words.next().and_then(|w| w.parse().ok()),
            "time" => info.time = words.next().and_then(|w| w.parse().ok()),
            "wdl" => {
                let mut number = || words.next().and_then(|w| w.parse().ok());
                info.wdl = match (number(), number(), number()) {
                    (Some(win), Some(draw), Some(loss)) => Some([win, draw, loss]),
                    _ => None,
                };
            }
            "score" => {
                let kind = words.next();
                let value = words.next().and_then(|w| w.parse().ok());
                info.score = match (kind, value) {
                    (Some("cp"), Some(v)) => Some(Score::Cp(v)),
                    (Some("mate"), Some(v)) => Some(Score::Mate(v)),
                    _ => None,
                };
            }
            // UCI puts the variation last (only `string` may follow it).
            "pv" => {
                info.pv = words
                    .by_ref()
                    .take_while(|&w| w != "string")
                    .map(str::to_string)
                    .collect();
            }
            "string" => break,
            _ => {}
        }
    }
    Some(info)
}

/// The move of a `bestmove` line (`(none)` included, `""` if it names
/// none); `None` for other lines.
pub fn parse_bestmove(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace();
    (words.next() == Some("bestmove")).then(|| words.next().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_info_lines() {
        let line = "info depth 19 seldepth 19 multipv 1 score mate 10 nodes 13298 nps 13101477 \
                    hashfull 1 time 1 pv a3b3 b1b2 b3c3";
        let info = parse_info(line).unwrap();
        assert_eq!(info.depth, Some(19));
        assert_eq!(info.seldepth, Some(19));
        assert_eq!(info.multipv, Some(1));
        assert_eq!(info.score, Some(Score::Mate(10)));
        assert_eq!(info.nodes, Some(13298));
        assert_eq!(info.nps, Some(13101477));
        assert_eq!(info.hashfull, Some(1));
        assert_eq!(info.time, Some(1));
        assert_eq!(info.pv, ["a3b3", "b1b2", "b3c3"]);
        assert!(info.is_principal());
        assert_eq!(info.to_string(), line);
        let line = "info depth 7 score cp 12 wdl 250 600 150 nodes 900 pv a2b2";
        let info = parse_info(line).unwrap();
        assert_eq!(info.wdl, Some([250, 600, 150]));
        assert_eq!(info.to_string(), line);
        assert_eq!(parse_info("info wdl 1 2 nodes 5").unwrap().wdl, None);
        let info = parse_info("info score cp -38 lowerbound depth x nodes 5").unwrap();
        assert_eq!(info.score, Some(Score::Cp(-38)));
        assert_eq!(info.depth, None);
        assert_eq!(info.nodes, Some(5));
        assert!(!parse_info("info multipv 2 depth 3").unwrap().is_principal());
        assert_eq!(parse_info("info string game over"), None);
        assert_eq!(parse_info("bestmove a3b3"), None);
        assert_eq!(parse_info("info"), Some(Info::default()));
    }

    #[test]
    fn reads_bestmove_lines() {
        assert_eq!(parse_bestmove("bestmove a3b3 ponder b1b2"), Some("a3b3"));
        assert_eq!(parse_bestmove("bestmove (none)"), Some("(none)"));
        assert_eq!(parse_bestmove("bestmove"), Some(""));
        assert_eq!(parse_bestmove("info depth 1"), None);
    }

    #[test]
    fn scores_print_as_in_info_lines() {
        assert_eq!(Score::Cp(-38).to_string(), "cp -38");
        assert_eq!(Score::Mate(10).to_string(), "mate 10");
    }
}

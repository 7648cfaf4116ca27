//! The engine's options (`uci` lists them, `setoption` sets them).

use std::time::Duration;

use crate::board::{MAX_MOVES, MAX_SIZE, MIN_SIZE, Rules};
use crate::eval::Evaluation;
use crate::protocol::quote;
use crate::tt::TranspositionTable;

/// The current option values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub hash_mb: usize,
    pub board_size: usize,
    pub rules: Rules,
    pub evaluation: Evaluation,
    pub move_overhead: Duration,
    pub ponder: bool,
    pub multipv: usize,
    /// Play from solved tables where they cover the board.
    pub tablebase: bool,
    /// Table files to load (`TablebasePath`), separated as in `PATH`.
    pub tablebase_path: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hash_mb: TranspositionTable::DEFAULT_MB,
            board_size: 3,
            rules: Rules::default(),
            evaluation: Evaluation::default(),
            move_overhead: Duration::from_millis(10),
            ponder: false,
            multipv: 1,
            tablebase: true,
            tablebase_path: String::new(),
        }
    }
}

/// A change `setoption` asks for, checked and ready to apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    Hash(usize),
    ClearHash,
    BoardSize(usize),
    Rules(Rules),
    Evaluation(Evaluation),
    MoveOverhead(Duration),
    Ponder(bool),
    MultiPv(usize),
    Tablebase(bool),
    TablebasePath(String),
}

const MAX_OVERHEAD_MS: u64 = 5000;

/// The `option name ...` lines that `uci` prints.
pub fn option_lines() -> Vec<String> {
    let defaults = Options::default();
    let combo = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!(" var {n}"))
            .collect::<String>()
    };
    vec![
        format!(
            "option name Hash type spin default {} min {} max {}",
            defaults.hash_mb,
            TranspositionTable::MIN_MB,
            TranspositionTable::MAX_MB
        ),
        "option name Clear Hash type button".to_string(),
        format!(
            "option name BoardSize type spin default {} min {MIN_SIZE} max {MAX_SIZE}",
            defaults.board_size
        ),
        format!(
            "option name Rules type combo default {}{}",
            defaults.rules.name(),
            combo(&Rules::ALL.map(Rules::name))
        ),
        format!(
            "option name Evaluation type combo default {}{}",
            defaults.evaluation.name(),
            combo(&Evaluation::ALL.map(Evaluation::name))
        ),
        format!(
            "option name Move Overhead type spin default {} min 0 max {MAX_OVERHEAD_MS}",
            defaults.move_overhead.as_millis()
        ),
        format!("option name Ponder type check default {}", defaults.ponder),
        format!(
            "option name MultiPV type spin default {} min 1 max {MAX_MOVES}",
            defaults.multipv
        ),
        format!(
            "option name Tablebase type check default {}",
            defaults.tablebase
        ),
        "option name TablebasePath type string default <empty>".to_string(),
    ]
}

/// Reads a spin value within `min..=max`.
fn spin(name: &str, value: Option<&str>, min: u64, max: u64) -> Result<u64, String> {
    let value = value.ok_or_else(|| format!("option {name} needs a value ({min} to {max})"))?;
    match value.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "bad value {} for option {name} (expected a whole number from {min} to {max})",
            quote(value)
        )),
    }
}

/// Reads a combo or check value with `read`; `expected` names the choices.
fn choice<T>(
    name: &str,
    value: Option<&str>,
    expected: &str,
    read: impl Fn(&str) -> Option<T>,
) -> Result<T, String> {
    let value = value.ok_or_else(|| format!("option {name} needs a value ({expected})"))?;
    read(value).ok_or_else(|| {
        format!(
            "bad value {} for option {name} (expected {expected})",
            quote(value)
        )
    })
}

/// Reads a check value.
fn check_box(name: &str, value: Option<&str>) -> Result<bool, String> {
    choice(name, value, "true or false", |v| {
        match v.to_ascii_lowercase().as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    })
}

/// Checks a `setoption` (names are case-insensitive, as UCI asks) and
/// returns the change to apply.
///
/// # Errors
/// A message naming the unknown option or the bad value.
pub fn check(name: &str, value: Option<&str>) -> Result<Change, String> {
    let key = name.to_ascii_lowercase();
    match key.as_str() {
        "hash" => spin(
            "Hash",
            value,
            TranspositionTable::MIN_MB as u64,
            TranspositionTable::MAX_MB as u64,
        )
        .map(|mb| Change::Hash(mb as usize)),
        "clear hash" => match value {
            None => Ok(Change::ClearHash),
            Some(_) => Err("option Clear Hash is a button and takes no value".to_string()),
        },
        "boardsize" => spin("BoardSize", value, MIN_SIZE as u64, MAX_SIZE as u64)
            .map(|n| Change::BoardSize(n as usize)),
        "rules" => {
            choice("Rules", value, "textbook or classic", Rules::from_name).map(Change::Rules)
        }
        "evaluation" => choice(
            "Evaluation",
            value,
            "race or textbook",
            Evaluation::from_name,
        )
        .map(Change::Evaluation),
        "move overhead" => spin("Move Overhead", value, 0, MAX_OVERHEAD_MS)
            .map(|ms| Change::MoveOverhead(Duration::from_millis(ms))),
        "ponder" => check_box("Ponder", value).map(Change::Ponder),
        "tablebase" => check_box("Tablebase", value).map(Change::Tablebase),
        "tablebasepath" => Ok(Change::TablebasePath(match value {
            None | Some("<empty>") => String::new(),
            Some(path) => path.to_string(),
        })),
        "multipv" => {
            spin("MultiPV", value, 1, MAX_MOVES as u64).map(|n| Change::MultiPv(n as usize))
        }
        _ => Err(format!("unknown option {}", quote(name))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_values() {
        assert_eq!(check("Hash", Some("64")), Ok(Change::Hash(64)));
        assert_eq!(check("hash", Some("1")), Ok(Change::Hash(1)));
        assert!(check("Hash", Some("0")).is_err());
        assert!(check("Hash", Some("big")).is_err());
        assert!(check("Hash", None).is_err());
        assert_eq!(check("BoardSize", Some("8")), Ok(Change::BoardSize(8)));
        assert!(check("BoardSize", Some("9")).is_err());
        assert_eq!(
            check("Rules", Some("Classic")),
            Ok(Change::Rules(Rules::Classic))
        );
        assert!(check("Rules", Some("chess")).is_err());
        assert_eq!(
            check("Rules", None),
            Err("option Rules needs a value (textbook or classic)".to_string())
        );
        assert_eq!(check("Clear Hash", None), Ok(Change::ClearHash));
        assert_eq!(check("Ponder", Some("true")), Ok(Change::Ponder(true)));
        assert!(check("MultiPV", Some("22")).is_err());
        assert_eq!(
            check("Tablebase", Some("false")),
            Ok(Change::Tablebase(false))
        );
        assert!(check("Tablebase", Some("maybe")).is_err());
        assert_eq!(
            check("TablebasePath", Some("/tmp/a b.dtb")),
            Ok(Change::TablebasePath("/tmp/a b.dtb".to_string()))
        );
        assert_eq!(
            check("TablebasePath", Some("<empty>")),
            Ok(Change::TablebasePath(String::new()))
        );
        assert!(
            check("Threads", Some("2"))
                .unwrap_err()
                .contains("unknown option")
        );
    }

    #[test]
    fn lists_every_option() {
        let lines = option_lines();
        for name in [
            "Hash",
            "Clear Hash",
            "BoardSize",
            "Rules",
            "Evaluation",
            "Move Overhead",
            "Ponder",
            "MultiPV",
            "Tablebase",
            "TablebasePath",
        ] {
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&format!("option name {name} type"))),
                "{name}"
            );
        }
    }
}

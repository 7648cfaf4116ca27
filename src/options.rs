//! The engine's options, each described once in [`TABLE`]: `uci` prints
//! its lines from it, `setoption` is checked against it (and its errors
//! worded from it), and [`Options::default`] takes its values from the
//! same [`defaults`].

use std::fmt;
use std::time::Duration;

use crate::board::{MAX_MOVES, MAX_SIZE, MIN_SIZE, Rules};
use crate::eval::Evaluation;
use crate::protocol::quote;
use crate::search::textbook::Algorithm;
use crate::search::{MAX_THREADS, Settings, Skill};
use crate::tt::TranspositionTable;

/// Every option's default: the one place they are written.
pub mod defaults {
    use super::{Evaluation, Rules, TranspositionTable};

    pub const HASH_MB: usize = TranspositionTable::DEFAULT_MB;
    pub const BOARD_SIZE: usize = 3;
    pub const RULES: Rules = Rules::Textbook;
    pub const EVALUATION: Evaluation = Evaluation::Auto;
    pub const MOVE_OVERHEAD_MS: u64 = 10;
    pub const PONDER: bool = false;
    pub const MULTIPV: usize = 1;
    pub const TABLEBASE: bool = true;
    /// No table files.
    pub const TABLEBASE_PATH: &str = "";
    pub const TABLEBASE_CACHE_MB: usize = crate::solver::DEFAULT_WDL_MB;
    pub const SEARCH_ALGORITHM: super::Algorithm = super::Algorithm::Engine;
    pub const THREADS: usize = 1;
    pub const SHOW_WDL: bool = false;
    /// Full strength.
    pub const SKILL_LEVEL: u8 = crate::search::Skill::MAX_LEVEL;
}

/// Largest `TablebaseCache`, in MiB.
const MAX_TABLEBASE_CACHE_MB: u64 = 65_536;

/// Largest `Move Overhead`, in milliseconds.
const MAX_OVERHEAD_MS: u64 = 5000;

/// How `uci` shows an empty string option (and `setoption` may send it).
const EMPTY: &str = "<empty>";

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
    /// Table directories to load (`TablebasePath`), separated as in `PATH`.
    pub tablebase_path: String,
    /// MiB of decoded win/draw/loss blocks each table directory keeps in
    /// memory for probes inside the search (`TablebaseCache`).
    pub tablebase_cache_mb: usize,
    /// The engine's own search, or a textbook algorithm to watch.
    pub search_algorithm: Algorithm,
    /// Search threads.
    pub threads: usize,
    /// `UCI_ShowWDL`: win/draw/loss chances on `info` lines.
    pub show_wdl: bool,
    /// `Skill Level`: 0 (a beginner) to 20 (full strength).
    pub skill_level: u8,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hash_mb: defaults::HASH_MB,
            board_size: defaults::BOARD_SIZE,
            rules: defaults::RULES,
            evaluation: defaults::EVALUATION,
            move_overhead: Duration::from_millis(defaults::MOVE_OVERHEAD_MS),
            ponder: defaults::PONDER,
            multipv: defaults::MULTIPV,
            tablebase: defaults::TABLEBASE,
            tablebase_path: defaults::TABLEBASE_PATH.to_string(),
            tablebase_cache_mb: defaults::TABLEBASE_CACHE_MB,
            search_algorithm: defaults::SEARCH_ALGORITHM,
            threads: defaults::THREADS,
            show_wdl: defaults::SHOW_WDL,
            skill_level: defaults::SKILL_LEVEL,
        }
    }
}

impl Options {
    /// The options the search reads.
    pub fn settings(&self) -> Settings {
        Settings {
            rules: self.rules,
            evaluation: self.evaluation,
            multipv: self.multipv,
            move_overhead: self.move_overhead,
            tablebase: self.tablebase,
            algorithm: self.search_algorithm,
            threads: self.threads,
            skill: Skill::new(self.skill_level),
        }
    }
}

impl Default for Settings {
    /// The settings of the default options.
    fn default() -> Self {
        Options::default().settings()
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
    TablebaseCache(usize),
    SearchAlgorithm(Algorithm),
    Threads(usize),
    ShowWdl(bool),
    SkillLevel(u8),
}

/// One option: its name, its kind with default and range or choices, and
/// the change a value asks for.
pub struct Spec {
    pub name: &'static str,
    pub kind: Kind,
}

/// An option's type as UCI knows it, with what `setoption` accepts.
pub enum Kind {
    /// A whole number within `min..=max`.
    Spin {
        default: u64,
        min: u64,
        max: u64,
        change: fn(u64) -> Change,
    },
    /// `true` or `false` (case-insensitive).
    Check {
        default: bool,
        change: fn(bool) -> Change,
    },
    /// One of `choices` (case-insensitive); `change` gets its index.
    Combo {
        default: &'static str,
        choices: &'static [&'static str],
        change: fn(usize) -> Change,
    },
    /// No value.
    Button { change: Change },
    /// Any text; none, or [`EMPTY`], is the empty string.
    String {
        default: &'static str,
        change: fn(String) -> Change,
    },
}

const RULE_NAMES: [&str; 2] = [Rules::ALL[0].name(), Rules::ALL[1].name()];
const EVALUATION_NAMES: [&str; 5] = [
    Evaluation::ALL[0].name(),
    Evaluation::ALL[1].name(),
    Evaluation::ALL[2].name(),
    Evaluation::ALL[3].name(),
    Evaluation::ALL[4].name(),
];
const ALGORITHM_NAMES: [&str; 3] = [
    Algorithm::ALL[0].name(),
    Algorithm::ALL[1].name(),
    Algorithm::ALL[2].name(),
];

/// Every option, in the order `uci` lists them.
pub const TABLE: [Spec; 15] = [
    Spec {
        name: "Hash",
        kind: Kind::Spin {
            default: defaults::HASH_MB as u64,
            min: TranspositionTable::MIN_MB as u64,
            max: TranspositionTable::MAX_MB as u64,
            change: |mb| Change::Hash(mb as usize),
        },
    },
    Spec {
        name: "Clear Hash",
        kind: Kind::Button {
            change: Change::ClearHash,
        },
    },
    Spec {
        name: "BoardSize",
        kind: Kind::Spin {
            default: defaults::BOARD_SIZE as u64,
            min: MIN_SIZE as u64,
            max: MAX_SIZE as u64,
            change: |size| Change::BoardSize(size as usize),
        },
    },
    Spec {
        name: "Rules",
        kind: Kind::Combo {
            default: defaults::RULES.name(),
            choices: &RULE_NAMES,
            change: |index| Change::Rules(Rules::ALL[index]),
        },
    },
    Spec {
        name: "Evaluation",
        kind: Kind::Combo {
            default: defaults::EVALUATION.name(),
            choices: &EVALUATION_NAMES,
            change: |index| Change::Evaluation(Evaluation::ALL[index]),
        },
    },
    Spec {
        name: "Move Overhead",
        kind: Kind::Spin {
            default: defaults::MOVE_OVERHEAD_MS,
            min: 0,
            max: MAX_OVERHEAD_MS,
            change: |ms| Change::MoveOverhead(Duration::from_millis(ms)),
        },
    },
    Spec {
        name: "Ponder",
        kind: Kind::Check {
            default: defaults::PONDER,
            change: Change::Ponder,
        },
    },
    Spec {
        name: "MultiPV",
        kind: Kind::Spin {
            default: defaults::MULTIPV as u64,
            min: 1,
            max: MAX_MOVES as u64,
            change: |lines| Change::MultiPv(lines as usize),
        },
    },
    Spec {
        name: "Tablebase",
        kind: Kind::Check {
            default: defaults::TABLEBASE,
            change: Change::Tablebase,
        },
    },
    Spec {
        name: "TablebasePath",
        kind: Kind::String {
            default: defaults::TABLEBASE_PATH,
            change: Change::TablebasePath,
        },
    },
    Spec {
        name: "TablebaseCache",
        kind: Kind::Spin {
            default: defaults::TABLEBASE_CACHE_MB as u64,
            min: 0,
            max: MAX_TABLEBASE_CACHE_MB,
            change: |mb| Change::TablebaseCache(mb as usize),
        },
    },
    // The course's plain algorithms, to watch and count.
    Spec {
        name: "SearchAlgorithm",
        kind: Kind::Combo {
            default: defaults::SEARCH_ALGORITHM.name(),
            choices: &ALGORITHM_NAMES,
            change: |index| Change::SearchAlgorithm(Algorithm::ALL[index]),
        },
    },
    Spec {
        name: "Threads",
        kind: Kind::Spin {
            default: defaults::THREADS as u64,
            min: 1,
            max: MAX_THREADS as u64,
            change: |threads| Change::Threads(threads as usize),
        },
    },
    // For people and GUIs: win/draw/loss chances, weaker play.
    Spec {
        name: "UCI_ShowWDL",
        kind: Kind::Check {
            default: defaults::SHOW_WDL,
            change: Change::ShowWdl,
        },
    },
    Spec {
        name: "Skill Level",
        kind: Kind::Spin {
            default: defaults::SKILL_LEVEL as u64,
            min: 0,
            max: Skill::MAX_LEVEL as u64,
            change: |level| Change::SkillLevel(level as u8),
        },
    },
];

impl Spec {
    /// The `option name ...` line `uci` prints.
    pub fn line(&self) -> String {
        let name = self.name;
        match &self.kind {
            Kind::Spin {
                default, min, max, ..
            } => format!("option name {name} type spin default {default} min {min} max {max}"),
            Kind::Check { default, .. } => {
                format!("option name {name} type check default {default}")
            }
            Kind::Combo {
                default, choices, ..
            } => {
                let vars: String = choices.iter().map(|c| format!(" var {c}")).collect();
                format!("option name {name} type combo default {default}{vars}")
            }
            Kind::Button { .. } => format!("option name {name} type button"),
            Kind::String { default, .. } => {
                let default = if default.is_empty() { EMPTY } else { default };
                format!("option name {name} type string default {default}")
            }
        }
    }

    /// What a value may be, for error messages.
    fn expected(&self) -> Expected {
        match &self.kind {
            Kind::Spin { min, max, .. } => Expected::Range(*min, *max),
            Kind::Check { .. } => Expected::Choices(&["true", "false"]),
            Kind::Combo { choices, .. } => Expected::Choices(choices),
            Kind::Button { .. } => Expected::Nothing,
            Kind::String { .. } => Expected::Text,
        }
    }

    /// Checks `value` for this option and returns the change it asks for.
    ///
    /// # Errors
    /// [`OptionError::NoValue`], [`OptionError::BadValue`] or
    /// [`OptionError::ButtonValue`].
    pub fn read(&self, value: Option<&str>) -> Result<Change, OptionError> {
        let bad = |value: &str| OptionError::BadValue {
            option: self.name,
            value: value.to_string(),
            expected: self.expected(),
        };
        let needed = || OptionError::NoValue {
            option: self.name,
            expected: self.expected(),
        };
        match &self.kind {
            Kind::Spin {
                min, max, change, ..
            } => {
                let value = value.ok_or_else(needed)?;
                match value.parse::<u64>() {
                    Ok(n) if (*min..=*max).contains(&n) => Ok(change(n)),
                    _ => Err(bad(value)),
                }
            }
            Kind::Check { change, .. } => {
                let value = value.ok_or_else(needed)?;
                match value.to_ascii_lowercase().as_str() {
                    "true" => Ok(change(true)),
                    "false" => Ok(change(false)),
                    _ => Err(bad(value)),
                }
            }
            Kind::Combo {
                choices, change, ..
            } => {
                let value = value.ok_or_else(needed)?;
                choices
                    .iter()
                    .position(|choice| choice.eq_ignore_ascii_case(value))
                    .map(change)
                    .ok_or_else(|| bad(value))
            }
            Kind::Button { change } => match value {
                None => Ok(change.clone()),
                Some(_) => Err(OptionError::ButtonValue { option: self.name }),
            },
            Kind::String { change, .. } => Ok(change(match value {
                None | Some(EMPTY) => String::new(),
                Some(text) => text.to_string(),
            })),
        }
    }
}

/// What an option's value may be (for messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    Range(u64, u64),
    Choices(&'static [&'static str]),
    Nothing,
    Text,
}

/// Why a `setoption` was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionError {
    /// No option has this name.
    Unknown(String),
    /// The option needs a value and none was given.
    NoValue {
        option: &'static str,
        expected: Expected,
    },
    /// The value is not one the option takes.
    BadValue {
        option: &'static str,
        value: String,
        expected: Expected,
    },
    /// A value was given to a button.
    ButtonValue { option: &'static str },
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionError::Unknown(name) => write!(f, "unknown option {}", quote(name)),
            OptionError::NoValue { option, expected } => {
                write!(f, "option {option} needs a value (")?;
                match expected {
                    Expected::Range(min, max) => write!(f, "{min} to {max}")?,
                    Expected::Choices(choices) => write!(f, "{}", choices.join(" or "))?,
                    Expected::Nothing | Expected::Text => write!(f, "text")?,
                }
                write!(f, ")")
            }
            OptionError::BadValue {
                option,
                value,
                expected,
            } => {
                write!(
                    f,
                    "bad value {} for option {option} (expected ",
                    quote(value)
                )?;
                match expected {
                    Expected::Range(min, max) => {
                        write!(f, "a whole number from {min} to {max}")?;
                    }
                    Expected::Choices(choices) => write!(f, "{}", choices.join(" or "))?,
                    Expected::Nothing => write!(f, "no value")?,
                    Expected::Text => write!(f, "text")?,
                }
                write!(f, ")")
            }
            OptionError::ButtonValue { option } => {
                write!(f, "option {option} is a button and takes no value")
            }
        }
    }
}

impl std::error::Error for OptionError {}

/// The option called `name` (case-insensitive, as UCI asks).
pub fn find(name: &str) -> Option<&'static Spec> {
    TABLE
        .iter()
        .find(|spec| spec.name.eq_ignore_ascii_case(name))
}

/// The `option name ...` lines that `uci` prints.
pub fn option_lines() -> Vec<String> {
    TABLE.iter().map(Spec::line).collect()
}

/// Checks a `setoption` and returns the change to apply.
///
/// # Errors
/// An [`OptionError`] naming the unknown option or the bad value.
pub fn check(name: &str, value: Option<&str>) -> Result<Change, OptionError> {
    find(name)
        .ok_or_else(|| OptionError::Unknown(name.to_string()))?
        .read(value)
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
            check("Rules", None).unwrap_err().to_string(),
            "option Rules needs a value (textbook or classic)"
        );
        assert_eq!(check("Clear Hash", None), Ok(Change::ClearHash));
        assert_eq!(
            check("Clear Hash", Some("x")),
            Err(OptionError::ButtonValue {
                option: "Clear Hash"
            })
        );
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
        assert_eq!(check("Threads", Some("2")), Ok(Change::Threads(2)));
        assert!(check("Threads", Some("0")).is_err());
        assert!(check("Threads", Some("65")).is_err());
        assert_eq!(
            check("Thread", Some("2")),
            Err(OptionError::Unknown("Thread".to_string()))
        );
        assert_eq!(
            check("uci_showwdl", Some("TRUE")),
            Ok(Change::ShowWdl(true))
        );
        assert_eq!(check("Skill Level", Some("0")), Ok(Change::SkillLevel(0)));
        assert!(check("Skill Level", Some("21")).is_err());
    }

    #[test]
    fn words_errors_from_the_table() {
        let message = |name, value| check(name, value).unwrap_err().to_string();
        assert_eq!(
            message("Hash", Some("0")),
            "bad value '0' for option Hash (expected a whole number from 1 to 16384)"
        );
        assert_eq!(
            message("Move Overhead", None),
            "option Move Overhead needs a value (0 to 5000)"
        );
        assert_eq!(
            message("Evaluation", Some("x")),
            "bad value 'x' for option Evaluation (expected race or textbook or learned or net or auto)"
        );
        assert_eq!(
            message("Ponder", Some("yes")),
            "bad value 'yes' for option Ponder (expected true or false)"
        );
        assert_eq!(message("Thread", None), "unknown option 'Thread'");
        assert_eq!(
            message("Threads", Some("0")),
            "bad value '0' for option Threads (expected a whole number from 1 to 64)"
        );
    }

    /// Every default in the table is a value the table accepts, and it is
    /// the value `Options::default` holds.
    #[test]
    fn defaults_agree_with_the_table() {
        let mut options = Options::default();
        let before = options.clone();
        for spec in &TABLE {
            let default = match &spec.kind {
                Kind::Spin { default, .. } => Some(default.to_string()),
                Kind::Check { default, .. } => Some(default.to_string()),
                Kind::Combo { default, .. } | Kind::String { default, .. } => {
                    Some(default.to_string())
                }
                Kind::Button { .. } => None,
            };
            let Some(default) = default else { continue };
            match spec.read(Some(&default)).unwrap() {
                Change::Hash(mb) => options.hash_mb = mb,
                Change::BoardSize(size) => options.board_size = size,
                Change::Rules(rules) => options.rules = rules,
                Change::Evaluation(evaluation) => options.evaluation = evaluation,
                Change::MoveOverhead(overhead) => options.move_overhead = overhead,
                Change::Ponder(on) => options.ponder = on,
                Change::MultiPv(lines) => options.multipv = lines,
                Change::Tablebase(on) => options.tablebase = on,
                Change::TablebasePath(path) => options.tablebase_path = path,
                Change::TablebaseCache(mb) => options.tablebase_cache_mb = mb,
                Change::SearchAlgorithm(algorithm) => options.search_algorithm = algorithm,
                Change::Threads(threads) => options.threads = threads,
                Change::ShowWdl(on) => options.show_wdl = on,
                Change::SkillLevel(level) => options.skill_level = level,
                Change::ClearHash => unreachable!("a button has no default"),
            }
        }
        assert_eq!(options, before);
        assert_eq!(defaults::EVALUATION, Evaluation::default());
    }

    #[test]
    fn lists_every_option() {
        assert_eq!(
            option_lines(),
            [
                "option name Hash type spin default 16 min 1 max 16384",
                "option name Clear Hash type button",
                "option name BoardSize type spin default 3 min 3 max 8",
                "option name Rules type combo default textbook var textbook var classic",
                "option name Evaluation type combo default auto var race var textbook var learned var net var auto",
                "option name Move Overhead type spin default 10 min 0 max 5000",
                "option name Ponder type check default false",
                "option name MultiPV type spin default 1 min 1 max 21",
                "option name Tablebase type check default true",
                "option name TablebasePath type string default <empty>",
                "option name TablebaseCache type spin default 64 min 0 max 65536",
                "option name SearchAlgorithm type combo default engine var engine var minimax var alphabeta",
                "option name Threads type spin default 1 min 1 max 64",
                "option name UCI_ShowWDL type check default false",
                "option name Skill Level type spin default 20 min 0 max 20",
            ]
        );
    }
}

//! `bench`: a fixed set of positions searched to a fixed depth with fresh
//! tables. The total node count is a signature of the search: it must stay
//! the same from run to run (and changes only when the search does).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::board::Rules;
use crate::notation::parse_position;
use crate::search::{Limits, Request, Settings, Signals, TableUse, Tables, search};

/// Depth used when `bench` is given none.
pub const DEFAULT_DEPTH: u32 = 13;

/// The deepest bench accepted: the search's own depth limit.
pub const MAX_DEPTH: u32 = crate::search::MAX_DEPTH as u32;
/// Table size for bench, fixed so the node count does not depend on `Hash`.
const HASH_MB: usize = 16;

/// The bench positions, several per board size, under both rules.
pub const POSITIONS: [(&str, Rules); 10] = [
    ("B2/B2/1WW b", Rules::Textbook),
    ("1B1/B1W/2W w", Rules::Classic),
    ("B3/B3/B3/1WWW b", Rules::Classic),
    ("B3/1B2/BW2/2WW w", Rules::Textbook),
    ("B4/B4/B4/B4/1WWWW b", Rules::Textbook),
    ("B4/1B3/2BW1/B1W2/1W1W1 b", Rules::Classic),
    ("B5/B5/B5/B5/B5/1WWWWW b", Rules::Classic),
    ("6/B2W2/1B4/2B1W1/B2W2/1W3B w", Rules::Textbook),
    ("B6/B6/B6/B6/B6/B6/1WWWWWW b", Rules::Textbook),
    ("B7/B7/B7/B7/B7/B7/B7/1WWWWWWW b", Rules::Classic),
];

/// One position's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchLine {
    pub position: &'static str,
    pub rules: Rules,
    pub nodes: u64,
    /// Whether `stop` cut this position's search short.
    pub stopped: bool,
}

/// The whole run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchReport {
    pub depth: u32,
    pub lines: Vec<BenchLine>,
    pub elapsed: Duration,
    /// Whether `stop` cut the run short.
    pub stopped: bool,
}

impl BenchReport {
    pub fn nodes(&self) -> u64 {
        self.lines.iter().map(|l| l.nodes).sum()
    }

    pub fn nps(&self) -> u64 {
        let micros = self.elapsed.as_micros().max(1) as u64;
        self.nodes().saturating_mul(1_000_000) / micros
    }

    /// The report as printed: one line per position, then
    /// `<nodes> nodes <nps> nps`.
    pub fn text_lines(&self) -> Vec<String> {
        let count = POSITIONS.len();
        let mut out: Vec<String> = self
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                format!(
                    "Position {}/{count} ({}, depth {}): {} nodes{}  {}",
                    i + 1,
                    l.rules.name(),
                    self.depth,
                    l.nodes,
                    if l.stopped { " (stopped)" } else { "" },
                    l.position
                )
            })
            .collect();
        if self.stopped {
            out.push("Bench stopped before the last position".to_string());
        }
        out.push(format!("{} nodes {} nps", self.nodes(), self.nps()));
        out
    }
}

/// `dodgem bench`: the command line.
#[derive(clap::Args, Clone, Debug)]
pub struct BenchArgs {
    /// Search depth in plies (at most the search's depth limit; 0 means 1).
    #[arg(default_value_t = DEFAULT_DEPTH,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_DEPTH)))]
    pub depth: u32,
}

impl BenchArgs {
    /// Runs the bench and prints its report to stdout.
    ///
    /// # Errors
    /// Only if stdout cannot be written.
    pub fn run(&self) -> std::io::Result<()> {
        use std::io::Write;
        let report = run(self.depth.max(1), &Signals::default());
        let mut out = std::io::stdout().lock();
        for line in report.text_lines() {
            writeln!(out, "{line}")?;
        }
        Ok(())
    }
}

/// Runs the bench to `depth`; the stop flag in `signals` cuts it short.
pub fn run(depth: u32, signals: &Signals) -> BenchReport {
    let start = Instant::now();
    let mut tables = Tables::new(HASH_MB);
    let mut lines = Vec::new();
    let mut stopped = false;
    for (text, rules) in POSITIONS {
        let position = parse_position(text).expect("bench positions are valid");
        tables.clear();
        let request = Request {
            position,
            history: Vec::new(),
            limits: Limits {
                depth: Some(depth),
                ..Limits::default()
            },
            settings: Settings {
                rules,
                ..Settings::default()
            },
            tablebase: TableUse::default(),
        };
        let outcome = search(&request, &mut tables, signals, &mut |_| {});
        stopped = signals.stop.load(Ordering::Relaxed);
        lines.push(BenchLine {
            position: text,
            rules,
            nodes: outcome.nodes,
            stopped,
        });
        if stopped {
            break;
        }
    }
    BenchReport {
        depth,
        lines,
        elapsed: start.elapsed(),
        stopped,
    }
}

//! The benchmark's report: a table of kept shares per set and class, and
//! the per-position details file.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

use crate::notation::{format_move, format_position};
use crate::solver::cli::grouped;
use crate::solver::{Dtz, Kind};

use super::judge::{Class, Sample, Set, Tally, Verdict, judge};
use super::reach::ReachCounts;
use super::runner::Answer;
use super::sample::{SELF_PLAY_EVALUATION, SelfPlay};

/// Everything a run found.
#[derive(Debug)]
pub struct Report {
    pub engine: String,
    pub kind: Kind,
    pub tables: PathBuf,
    /// The `go` command each position got.
    pub go: String,
    pub seed: u64,
    /// Counts from the walk over the reachable positions, if it ran.
    pub reachable: Option<ReachCounts>,
    /// The self-play games and the counts of their distinct positions.
    pub self_play: Option<(SelfPlay, ReachCounts)>,
    pub samples: Vec<Sample>,
    /// One answer per sample, in the same order.
    pub answers: Vec<Answer>,
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "-".into(), |s| format!("{:.1}%", 100.0 * s))
}

fn describe_counts(counts: &ReachCounts) -> String {
    format!(
        "{} (won {}, drawn {}, lost {} for the side to move)",
        grouped(counts.positions()),
        grouped(counts.wins),
        grouped(counts.draws),
        grouped(counts.losses)
    )
}

/// A stored value as the details file shows it: the plies to the next
/// progress move (`dtz`), or for lost samples to the end of the game
/// (`dte`).
fn value_text(value: Dtz, class: Class) -> String {
    let metric = match class {
        Class::Lost => "dte",
        Class::Won | Class::Drawn => "dtz",
    };
    match value {
        Dtz::Win(d) => format!("win {metric} {d}"),
        Dtz::Draw => "draw".into(),
        Dtz::Loss(d) => format!("loss {metric} {d}"),
    }
}

impl Report {
    /// The verdict of each sample.
    pub fn verdicts(&self) -> impl Iterator<Item = (&Sample, &Answer, Verdict)> {
        self.samples
            .iter()
            .zip(&self.answers)
            .map(|(sample, answer)| {
                let verdict = judge(
                    sample,
                    super::move_of(&sample.position, answer),
                    answer.survived,
                );
                (sample, answer, verdict)
            })
    }

    /// The tallies by set and class.
    pub fn tallies(&self) -> BTreeMap<(Set, Class), Tally> {
        let mut tallies = BTreeMap::new();
        for (sample, _, verdict) in self.verdicts() {
            tallies
                .entry((sample.set, sample.class))
                .or_insert_with(Tally::default)
                .add(sample, verdict);
        }
        tallies
    }

    /// The report as printed.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let n = self.kind.size;
        let _ = writeln!(
            out,
            "Strength of {} on {n}x{n} {} (tables {}), `{}` a position, seed {}",
            self.engine,
            self.kind.rules.name(),
            self.tables.display(),
            self.go,
            self.seed
        );
        if let Some(counts) = &self.reachable {
            let _ = writeln!(
                out,
                "reachable: positions reachable from the start with both sides on the board: {}",
                describe_counts(counts)
            );
        }
        if let Some((plan, counts)) = &self.self_play {
            let _ = writeln!(
                out,
                "games: {} self-play games ({} nodes a move, {} evaluation, {} random opening plies): {} distinct positions {}",
                plan.games,
                plan.nodes,
                SELF_PLAY_EVALUATION.name(),
                plan.opening_plies,
                grouped(counts.positions()),
                describe_counts(counts)
                    .split_once(' ')
                    .map_or("", |(_, rest)| rest)
            );
        }
        let _ = writeln!(
            out,
            "{:<10} {:<6} {:>9} {:>7} {:>7} {:>15} {:>9} {:>7} {:>7} {:>8} {:>7}",
            "set",
            "class",
            "positions",
            "kept",
            "share",
            "95% interval",
            "critical",
            "kept",
            "share",
            "fastest",
            "excess"
        );
        for ((set, class), tally) in self.tallies() {
            let interval = tally.interval().map_or_else(
                || "-".into(),
                |(low, high)| format!("[{:.1}, {:.1}]", 100.0 * low, 100.0 * high),
            );
            let (fastest, excess) = match class {
                Class::Won => (
                    percent((tally.kept > 0).then(|| tally.fastest as f64 / tally.kept as f64)),
                    tally
                        .mean_excess()
                        .map_or_else(|| "-".into(), |e| format!("{e:.2}")),
                ),
                Class::Drawn => ("".into(), "".into()),
                Class::Lost => (
                    percent(tally.delay_share()),
                    tally
                        .mean_shortfall()
                        .map_or_else(|| "-".into(), |e| format!("{e:.2}")),
                ),
            };
            let _ = writeln!(
                out,
                "{:<10} {:<6} {:>9} {:>7} {:>7} {:>15} {:>9} {:>7} {:>7} {:>8} {:>7}",
                set.name(),
                class.name(),
                tally.positions,
                tally.kept,
                percent(tally.share()),
                interval,
                tally.critical,
                tally.critical_kept,
                percent(tally.critical_share()),
                fastest,
                excess
            );
            if tally.no_move > 0 {
                let _ = writeln!(
                    out,
                    "  {} positions without a legal move from the engine (faults), counted as not kept",
                    tally.no_move
                );
            }
        }
        let _ = writeln!(
            out,
            "kept: the move leaves the opponent lost (won positions) or drawn (drawn positions); \
             critical: positions where some move gives the result away; \
             fastest: kept wins whose move is as near to the next progress move as the table's best; \
             excess: mean plies by which kept wins are further from it"
        );
        if self.samples.iter().any(|s| s.class == Class::Lost) {
            let _ = writeln!(
                out,
                "lost: played out against the tables' quickest win; kept: held out as long as \
                 perfect play (the table's distance to the end); fastest: the plies held out as a \
                 share of that distance (summed); excess: mean plies short of it"
            );
        }
        out
    }

    /// The details file: a header, then one tab-separated line per
    /// position.
    pub fn details(&self) -> String {
        let mut out = String::from(
            "set\tclass\tposition\tvalue\tmove\tmove value\tverdict\tcritical\tscore\tdepth\tkeeping moves\n",
        );
        for (sample, answer, verdict) in self.verdicts() {
            let played = super::move_of(&sample.position, answer);
            let move_value = played
                .and_then(|mv| sample.moves.iter().find(|(m, _)| *m == mv))
                .map_or_else(|| "-".into(), |&(_, value)| value_text(value, sample.class));
            let verdict = match verdict {
                Verdict::Kept { excess } => format!("kept +{excess}"),
                Verdict::Delayed { survived, longest } => format!(
                    "held {survived} of {longest} plies: {}",
                    answer.line.join(" ")
                ),
                Verdict::Spoilt => "spoilt".into(),
                Verdict::NoMove => format!(
                    "no move ({})",
                    answer
                        .fault
                        .as_deref()
                        .unwrap_or("illegal or unreadable move")
                ),
            };
            // The moves that keep the result (for a lost sample: that hold
            // out longest).
            let keeping: Vec<String> = sample
                .moves
                .iter()
                .filter(|&&(_, value)| sample.keeps(value))
                .map(|&(mv, value)| {
                    format!(
                        "{}:{}",
                        format_move(Some(mv)),
                        value_text(value, sample.class)
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                sample.set.name(),
                sample.class.name(),
                format_position(&sample.position),
                value_text(sample.value, sample.class),
                answer.bestmove.as_deref().unwrap_or("-"),
                move_value,
                verdict,
                sample.is_critical(),
                answer.score.map_or_else(|| "-".into(), |s| s.to_string()),
                answer.depth.map_or_else(|| "-".into(), |d| d.to_string()),
                keeping.join(" ")
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_get_thousands_separators() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(164_308_067), "164,308,067");
    }
}

//! `dodgem solve`: the layered solve of a board into a directory of layer
//! files (resumable, with a progress bar and a summary), the check of such
//! a directory, and the dense single-file tables of sizes 3 to 5 that the
//! engine loads today.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::layered::{self, PairDone, Plan};
use super::store::{Dtz, Kind, Tables, Tally};
use super::{Progress, default_threads};
use crate::board::{Color, Position, Rules};
use crate::notation;
use crate::tablebase::Table;

/// Arguments of `dodgem solve`.
#[derive(Args, Debug, Clone)]
pub struct SolveArgs {
    /// Board size (3 to 8; whole boards up to 6, larger ones with
    /// --max-cars).
    #[arg(long, required_unless_present_any = ["table", "verify"])]
    pub size: Option<usize>,
    /// Rule for a blocked side to move: textbook (it loses) or classic
    /// (it wins).
    #[arg(long, default_value = "textbook")]
    pub rules: Rules,
    /// A directory for the layer files (created if missing; a run killed
    /// part-way continues where it stopped when started again), or a file
    /// ending in `.dtb` for a single dense table of sizes 3 to 5 (what
    /// the TablebasePath option loads).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Solve only the positions with at most this many cars a side on the
    /// board (endgame tables for large boards) [default: all].
    #[arg(long)]
    pub max_cars: Option<u32>,
    /// Stop after writing this many layer files (to test resuming).
    #[arg(long)]
    pub stop_after_layers: Option<u64>,
    /// After the layered solve, solve the board with the dense solver too
    /// and compare every position (sizes 3 to 5).
    #[arg(long, requires = "out")]
    pub check_dense: bool,
    /// Check a directory of layer files: re-derive every stored value from
    /// its successors' stored values.
    #[arg(long, conflicts_with_all = ["size", "out", "table"])]
    pub verify: Option<PathBuf>,
    /// With --verify: record each checked pair of layers in this file, and
    /// skip the pairs it already records (to resume a long check).
    #[arg(long, requires = "verify")]
    pub journal: Option<PathBuf>,
    /// Report on a dense table file instead of solving.
    #[arg(long, conflicts_with_all = ["size", "rules", "out"])]
    pub table: Option<PathBuf>,
    /// Worker threads [default: one per core].
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar and no per-layer lines.
    #[arg(long)]
    pub quiet: bool,
}

impl SolveArgs {
    /// Runs `dodgem solve`.
    ///
    /// # Errors
    /// Bad arguments, an unusable directory or file, a failed check.
    pub fn run(&self) -> Result<(), Box<dyn std::error::Error>> {
        run(self)
    }
}

fn run(args: &SolveArgs) -> Result<(), Box<dyn std::error::Error>> {
    let threads = args.threads.unwrap_or_else(default_threads).max(1);
    if let Some(dir) = &args.verify {
        return verify(dir, threads, args.journal.as_deref(), args.quiet);
    }
    if let Some(path) = &args.table {
        return dense_report(&Table::load(path)?, threads);
    }
    let size = args.size.expect("clap requires --size here");
    let Some(out) = &args.out else {
        return Err(
            "solve needs --out: a directory for the layer files, or FILE.dtb for a \
                    single dense table (sizes 3 to 5)"
                .into(),
        );
    };
    if out.extension().is_some_and(|e| e == "dtb") {
        if args.max_cars.is_some() || args.check_dense || args.stop_after_layers.is_some() {
            return Err(
                "--max-cars, --check-dense and --stop-after-layers need a directory \
                        for --out, not a .dtb file"
                    .into(),
            );
        }
        let table = dense_solve(size, args.rules, threads, args.quiet)?;
        let started = Instant::now();
        table.save(out)?;
        let bytes = std::fs::metadata(out)?.len();
        println!(
            "wrote {} ({bytes} bytes) in {:.1} s",
            out.display(),
            started.elapsed().as_secs_f64()
        );
        return dense_report(&table, threads);
    }
    let kind = Kind {
        size,
        rules: args.rules,
        max_cars: args.max_cars.unwrap_or((size as u32).saturating_sub(1)),
    };
    let plan = Plan {
        kind,
        dir: out.clone(),
        threads,
        stop_after_layers: args.stop_after_layers,
        two_bytes: false,
    };
    let outcome = layered_solve(&plan, args.quiet)?;
    if outcome.stopped {
        println!(
            "stopped after writing {} layer files, as asked; run the same command to continue",
            outcome.layers_written
        );
        return Ok(());
    }
    if args.check_dense {
        check_dense(&plan, args.quiet)?;
    }
    Ok(())
}

/// The layered solve with its bar, per-pair lines and summary.
fn layered_solve(plan: &Plan, quiet: bool) -> Result<layered::Outcome, Box<dyn std::error::Error>> {
    let kind = plan.kind;
    let shape = layered::shape_of(kind)?;
    let total = layered::total_slots(&shape);
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:24}] {percent:>3}% {elapsed_precise} (eta {eta})",
        )
        .expect("the progress template is valid")
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(500));
    let started = Instant::now();
    let n = kind.size;
    let mut solved_slots = 0u64;
    let mut solving_seconds = 0.0;
    let mut disk = 0u64;
    let mut first_solved = true;
    let mut first_line = true;
    let mut on_pair = |pair: &PairDone| {
        disk += pair.bytes;
        bar.inc(pair.slots);
        if !pair.resumed {
            solved_slots += pair.slots;
            solving_seconds += pair.seconds;
            if first_solved {
                // Pairs found on disk went by at once: time from here.
                bar.reset_eta();
                first_solved = false;
            }
        }
        let rate = solved_slots as f64 / solving_seconds.max(1e-9);
        let names: Vec<String> = pair
            .layers
            .iter()
            .map(|(a, b)| format!("{a:03}-{b:03}"))
            .collect();
        bar.set_message(format!(
            "pairs {}/{} | {:.2e} slots/s | mem {} | disk {}",
            pair.done,
            pair.pairs,
            rate,
            resident_memory().unwrap_or_default(),
            mib(disk)
        ));
        if !quiet && !pair.resumed {
            if first_line && pair.done > 1 {
                bar.suspend(|| {
                    eprintln!(
                        "resuming: {} of {} layer pairs already in {}",
                        pair.done - 1,
                        pair.pairs,
                        plan.dir.display()
                    );
                });
            }
            first_line = false;
            let line = format!(
                "solved pair {}/{} layers {}: {} slots, {} positions ({} won, {} drawn, {} lost, longest {}) in {:.1} s (read {:.1}, solve {:.1}, write {:.1}; {:.2e} slots/s), files {} | elapsed {:.0} s, rss {}, disk {}",
                pair.done,
                pair.pairs,
                names.join(" "),
                pair.slots,
                pair.tally.positions(),
                pair.tally.wins,
                pair.tally.draws,
                pair.tally.losses,
                pair.tally.longest,
                pair.seconds,
                pair.phases[0],
                pair.phases[1],
                pair.phases[2],
                pair.slots as f64 / pair.seconds.max(1e-9),
                mib(pair.bytes),
                started.elapsed().as_secs_f64(),
                resident_memory().unwrap_or_default(),
                mib(disk),
            );
            bar.suspend(|| eprintln!("{line}"));
        }
    };
    let outcome = layered::solve(plan, &mut on_pair)?;
    bar.finish_and_clear();
    if outcome.stopped {
        return Ok(outcome);
    }
    println!(
        "{n}x{n} Dodgem, {} rule, at most {} cars a side: {} layers solved in {} ({:.1} s, {} threads)",
        kind.rules.name(),
        kind.max_cars,
        (shape.max_progress() - shape.min_progress() + 1).pow(2),
        plan.dir.display(),
        started.elapsed().as_secs_f64(),
        plan.threads
    );
    print_summary(plan, outcome.tally, disk)?;
    Ok(outcome)
}

/// Counts, the start and its moves, peak memory and disk.
fn print_summary(plan: &Plan, tally: Tally, disk: u64) -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "positions per side to move: {} ({} wins, {} draws, {} losses for the side to move); longest distance to a progress move {} plies",
        grouped(tally.positions()),
        grouped(tally.wins),
        grouped(tally.draws),
        grouped(tally.losses),
        tally.longest
    );
    let tables = Tables::open(&plan.dir)?;
    let start = Position::start(plan.kind.size);
    if let Some(value) = tables.probe(&start)? {
        println!("start (Black to move): {}", describe(value));
        let mut moves = Vec::new();
        for &mv in start.legal_moves().as_slice() {
            let after = start.play(mv);
            let text = match tables.probe(&after)? {
                Some(reply) => describe(flip(reply, mv.is_irreversible(Color::Black))),
                None => "game over".to_string(),
            };
            moves.push(format!("{} {text}", notation::format_move(Some(mv))));
        }
        println!("first moves (value for Black): {}", moves.join(", "));
    }
    println!(
        "peak memory {}; disk {}",
        peak_memory().unwrap_or_else(|| "unknown".into()),
        mib(disk)
    );
    Ok(())
}

/// A child's value seen from the side that moved into it; a progress
/// move is itself the progress its distance counts to.
fn flip(value: Dtz, progress: bool) -> Dtz {
    let plies = |d: u32| if progress { 1 } else { d + 1 };
    match value {
        Dtz::Win(d) => Dtz::Loss(plies(d)),
        Dtz::Loss(d) => Dtz::Win(plies(d)),
        Dtz::Draw => Dtz::Draw,
    }
}

/// `win (3 plies to progress)`, `draw`.
pub fn describe(value: Dtz) -> String {
    match value {
        Dtz::Win(d) => format!("win ({d} plies to progress)"),
        Dtz::Loss(d) => format!("loss ({d} plies to progress)"),
        Dtz::Draw => "draw".to_string(),
    }
}

/// The dense solver on the same board, compared position by position.
fn check_dense(plan: &Plan, quiet: bool) -> Result<(), Box<dyn std::error::Error>> {
    let kind = plan.kind;
    let started = Instant::now();
    let dense = super::solve(kind.size, kind.rules, plan.threads, &|_| {})?;
    let dense_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let compared = layered::compare_with_dense(&plan.dir, &dense)?;
    if !quiet {
        eprintln!(
            "dense solve {dense_seconds:.1} s, comparison {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    println!(
        "agrees with the dense solver on all {} positions (both sides to move)",
        grouped(compared)
    );
    Ok(())
}

fn verify(
    dir: &Path,
    threads: usize,
    journal: Option<&Path>,
    quiet: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
    };
    bar.set_style(
        ProgressStyle::with_template(
            "verify [{bar:32}] {pos}/{len} layers {elapsed_precise} (eta {eta})",
        )
        .expect("the progress template is valid")
        .progress_chars("=> "),
    );
    let verified = layered::verify(dir, threads, journal, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })?;
    bar.finish_and_clear();
    for example in &verified.examples {
        println!("mismatch: {example}");
    }
    if verified.mismatches > 0 {
        return Err(format!(
            "{}: {} of {} stored values disagree with their successors",
            dir.display(),
            verified.mismatches,
            verified.positions
        )
        .into());
    }
    println!(
        "verified {}: all {} positions in {} layers agree with their successors ({:.1} s)",
        dir.display(),
        grouped(verified.positions),
        verified.layers,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The dense in-memory solve, with its progress bar.
fn dense_solve(
    size: usize,
    rules: Rules,
    threads: usize,
    quiet: bool,
) -> Result<Table, Box<dyn std::error::Error>> {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
    };
    bar.set_style(
        ProgressStyle::with_template("{msg:20} [{bar:32}] {percent:>3}% {elapsed_precise}")
            .expect("the progress template is valid")
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let started = Instant::now();
    let progress = |step: Progress| match step {
        Progress::Seed { done, total } => {
            bar.set_length(total);
            bar.set_position(done);
            bar.set_message("counting moves");
        }
        Progress::Level {
            plies,
            decided,
            total,
        } => {
            bar.set_length(total);
            bar.set_position(decided);
            bar.set_message(format!("retreat: ply {plies}"));
        }
    };
    let solution = super::solve(size, rules, threads, &progress)?;
    bar.finish_and_clear();
    println!(
        "solved {size}x{size} {} on {threads} threads in {:.1} s",
        rules.name(),
        started.elapsed().as_secs_f64()
    );
    Ok(Table::from(solution))
}

fn dense_report(table: &Table, threads: usize) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let report = super::report(table, threads);
    println!("{report}");
    println!(
        "report in {:.1} s; peak memory {}",
        started.elapsed().as_secs_f64(),
        peak_memory().unwrap_or_else(|| "unknown".to_string())
    );
    Ok(())
}

fn grouped(n: u64) -> String {
    super::report::grouped(n)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// A line of /proc/self/status in MiB (Linux only).
fn status_mib(field: &str) -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{} MiB", kb / 1024))
}

/// The process's peak resident memory.
fn peak_memory() -> Option<String> {
    status_mib("VmHWM:")
}

/// The process's resident memory now.
fn resident_memory() -> Option<String> {
    status_mib("VmRSS:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_into_a_lost_child_wins() {
        assert_eq!(flip(Dtz::Loss(3), false), Dtz::Win(4));
        assert_eq!(flip(Dtz::Loss(3), true), Dtz::Win(1));
        assert_eq!(flip(Dtz::Draw, false), Dtz::Draw);
    }
}

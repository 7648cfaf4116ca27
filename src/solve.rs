//! `dodgem solve`: solve a board size with a progress bar, report on it,
//! and write the table file.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use dodgem::Rules;
use dodgem::solver::{self, Progress};
use dodgem::tablebase::Table;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Args {
    pub size: usize,
    pub rules: Rules,
    pub out: Option<PathBuf>,
    pub table: Option<PathBuf>,
    pub threads: usize,
    pub quiet: bool,
}

pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let table = match &args.table {
        Some(path) => Table::load(path)?,
        None => solve(&args)?,
    };
    if let Some(path) = &args.out {
        let started = Instant::now();
        table.save(path)?;
        let bytes = std::fs::metadata(path)?.len();
        println!(
            "wrote {} ({bytes} bytes) in {:.1} s",
            path.display(),
            started.elapsed().as_secs_f64()
        );
    }
    let started = Instant::now();
    let report = solver::report(&table, args.threads);
    println!("{report}");
    println!(
        "report in {:.1} s; peak memory {}",
        started.elapsed().as_secs_f64(),
        peak_memory().unwrap_or_else(|| "unknown".to_string())
    );
    Ok(())
}

fn solve(args: &Args) -> Result<Table, Box<dyn std::error::Error>> {
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr())
    };
    let style = |template: &str| {
        ProgressStyle::with_template(template)
            .expect("the progress templates are valid")
            .progress_chars("=> ")
    };
    bar.set_style(style(
        "{msg:20} [{bar:32}] {percent:>3}% {elapsed_precise} (eta {eta})",
    ));
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
            if plies == 0 {
                // The retreat decides positions until only draws are left,
                // so its bar never quite fills and its estimate is an upper
                // bound.
                bar.set_style(style(
                    "{msg:20} [{bar:32}] {percent:>3}% of positions decided, {elapsed_precise} (at most {eta} more)",
                ));
                bar.reset_eta();
            }
            bar.set_length(total);
            bar.set_position(decided);
            bar.set_message(format!("retreat: ply {plies}"));
        }
    };
    let solution = solver::solve(args.size, args.rules, args.threads, &progress)?;
    bar.finish_and_clear();
    let n = args.size;
    println!(
        "solved {n}x{n} {} on {} threads in {:.1} s",
        args.rules.name(),
        args.threads,
        started.elapsed().as_secs_f64()
    );
    Ok(Table::from(solution))
}

/// The process's peak resident memory, from Linux's /proc.
fn peak_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{} MiB", kb / 1024))
}

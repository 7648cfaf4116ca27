//! `dodgem solve`: the layered solve of a board into a directory of layer
//! files (resumable, with a progress bar and a summary), and the check of
//! such a directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::add_dte;
use super::plan::{self, PairDone, Plan};
use super::solve::{self, Ranks};
use crate::board::{Color, Position, Rules};
use crate::solver::checks::playout::PlayoutPlan;
use crate::solver::checks::reach;
use crate::solver::checks::verify;
use crate::solver::default_threads;
use crate::solver::files::format::{Kind, Metric, read_header};
use crate::solver::files::store::Tables;
use crate::solver::index::layers::layer_name;
use crate::solver::index::value::{Dtz, Tally};
use crate::{memory, notation};

/// The modes of `dodgem solve` that read a directory of tables, whose
/// files record what they hold (size, rule, cars): a flag that says what to
/// solve conflicts with them rather than being silently ignored.
const TABLE_MODES: [&str; 5] = ["verify", "playout", "reach", "dte", "convert"];

/// Arguments of `dodgem solve`.
// The flags that go with another require a group holding it
// (`with_playout`, `with_mpi`, `with_verify_or_reach`), not the flag
// itself: clap lets a flag named by `requires` go missing when it
// conflicts with a flag given (clap-rs/clap#4520), so `requires =
// "playout"` let `--size 3 --out DIR --positions 5` through, while a
// required group is satisfied only by one of its members.
#[derive(Args, Debug, Clone)]
pub struct SolveArgs {
    /// Board size (3 to 8; whole boards up to 6, larger ones with
    /// --max-cars).
    #[arg(long, required_unless_present_any = TABLE_MODES)]
    pub size: Option<usize>,
    /// Rule for a blocked side to move: textbook (it loses) or classic
    /// (it wins). Only for a solve or --plan: the other modes read the
    /// rule from the tables.
    #[arg(long, default_value = "textbook", conflicts_with_all = TABLE_MODES)]
    pub rules: Rules,
    /// A directory for the layer files (created if missing; a run killed
    /// part-way continues where it stopped when started again): what the
    /// TablebasePath option loads. One retrograde pass a layer pair gives
    /// the win/draw/loss (`.wdl`) and the distance to the end (`.dte`)
    /// together.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Solve only the positions with at most this many cars a side on the
    /// board (endgame tables for large boards) [default: all].
    #[arg(long, conflicts_with_all = TABLE_MODES)]
    pub max_cars: Option<u32>,
    /// Stop after writing this many layer files (to test resuming), with
    /// --out or --dte.
    #[arg(long, conflicts_with_all = ["verify", "playout", "reach", "convert", "plan"])]
    pub stop_after_layers: Option<u64>,
    /// Add the distance to the end of the game of every position to a
    /// directory solved with --no-distances (a `.dte` file beside each
    /// layer's `.dtz` file; a run killed part-way continues where it
    /// stopped when started again). `--out` gives them in its one pass.
    #[arg(long, conflicts_with_all = ["size", "out", "verify", "playout", "reach"])]
    pub dte: Option<PathBuf>,
    /// With --out: solve by the older value pass, which gives the
    /// win/draw/loss values and the distances to progress (`.dtz`) instead
    /// of the distances to the end (about as fast, under half the disk;
    /// the engine and `dodgem strength` play from such tables without
    /// cycling, `strength --lost` needs the distances). `dodgem solve
    /// --dte DIR` adds them later.
    #[arg(long, conflicts_with_all = ["dte", "verify", "playout", "reach", "convert", "plan"])]
    pub no_distances: bool,
    /// Convert a directory of tables in the old format (each layer one
    /// compressed frame, read whole) into the current one, probed in place:
    /// `--convert OLD NEW`. A directory of the current format has its
    /// win/draw/loss files rewritten in the smallest code (tiles, about half
    /// the size of runs on 6 x 6) and its distance files copied. Every value
    /// is read back and compared with the old one; a run killed part-way
    /// continues when started again.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"],
          conflicts_with_all = ["size", "out", "verify", "playout", "reach", "dte"])]
    pub convert: Option<Vec<PathBuf>>,
    /// Check a directory of layer files: re-derive every stored value from
    /// its successors' stored values (the distances to the end too, where
    /// the `.dte` files are there).
    #[arg(long, group = "with_verify_or_reach", conflicts_with_all = ["size", "out", "playout"])]
    pub verify: Option<PathBuf>,
    /// With --verify: record each checked pair of layers in this file, and
    /// skip the pairs it already records. With --reach: save the walk's
    /// state in this file every ten minutes, and start from the state it
    /// holds. (To resume a long check or count where it stopped.)
    #[arg(long, requires = "with_verify_or_reach")]
    pub journal: Option<PathBuf>,
    /// Check a directory of layer files by play: random won and drawn
    /// positions played to the end by the engine against itself with the
    /// tables on; a won one must end with its winner within the bound the
    /// stored distances imply and never repeat a position, a drawn one
    /// must never be lost.
    #[arg(long, group = "with_playout", conflicts_with_all = ["size", "out"])]
    pub playout: Option<PathBuf>,
    /// Count the positions reachable from the start in a directory of
    /// tables of a whole board, by value and side to move, beside the
    /// whole index's counts.
    #[arg(long, group = "with_verify_or_reach",
          conflicts_with_all = ["size", "out", "verify", "playout"])]
    pub reach: Option<PathBuf>,
    /// Positions to play out (half won, half drawn).
    #[arg(long, default_value_t = 100, requires = "with_playout")]
    pub positions: usize,
    /// Seed of the positions played out.
    #[arg(long, default_value_t = 1, requires = "with_playout")]
    pub seed: u64,
    /// Search depth of each move played out (drawn positions are searched
    /// over their drawing moves; decided ones are played from the tables).
    #[arg(long, default_value_t = 2, requires = "with_playout")]
    pub depth: u32,
    /// Print what a solve of --size (and --max-cars) needs, and solve
    /// nothing: its layer pairs, the slots of all and of the largest pair
    /// (the memory one rank needs), and the heaviest chain of pairs that
    /// wait for one another (what no number of ranks can share out).
    #[arg(long, conflicts_with_all = ["out", "verify", "playout", "reach", "dte", "convert", "mpi"])]
    pub plan: bool,
    /// Worker threads [default: one per core]; with --mpi, of each rank.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Solve (--out), add the distances (--dte) or check (--verify) over
    /// the ranks of an MPI job, in a build with `--features mpi`: `mpirun
    /// -n 3 dodgem solve --mpi --size 5 --out DIR`. Rank 0 hands out the
    /// layer pairs, the others solve (or check) them in the directory,
    /// which every rank must reach at the same path; the files are those
    /// of a solve in one process.
    #[arg(long, group = "with_mpi", conflicts_with_all = ["playout", "reach", "convert"])]
    pub mpi: bool,
    /// With --mpi: seconds of silence after which a working rank is
    /// counted lost and its pair goes to another (with `mpirun
    /// --enable-recovery`; otherwise a lost rank ends the job, and the same
    /// command resumes it).
    #[arg(long, default_value_t = 60, requires = "with_mpi")]
    pub mpi_timeout: u64,
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
    // The solver frees layers of every size: let the system have them
    // back (a solve decides for itself, from the size of its pairs).
    let solving = args.convert.is_none()
        && args.verify.is_none()
        && args.playout.is_none()
        && args.reach.is_none()
        && args.dte.is_none();
    if args.mpi || !solving {
        crate::memory::map_large_blocks();
    }
    if args.mpi {
        return run_mpi(args);
    }
    run_on(args, Ranks::Here)
}

/// `dodgem solve --mpi`: rank 0 runs the solve with the pairs made by the
/// other ranks, which serve it until it ends.
#[cfg(feature = "mpi")]
fn run_mpi(args: &SolveArgs) -> Result<(), Box<dyn std::error::Error>> {
    use super::cluster::Cluster;
    let cluster = Cluster::start(Duration::from_secs(args.mpi_timeout.max(1)))?;
    if !cluster.is_manager() {
        let threads = args.threads.unwrap_or_else(default_threads).max(1);
        solve::serve(&cluster, threads);
        cluster.end();
        return Ok(());
    }
    if !args.quiet {
        eprintln!(
            "MPI: rank 0 hands out the layer pairs to {} workers",
            cluster.ranks() - 1
        );
    }
    let result = run_on(args, Ranks::Mpi(&cluster));
    cluster.end();
    result
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(_: &SolveArgs) -> Result<(), Box<dyn std::error::Error>> {
    Err(
        "this dodgem was built without MPI: build it with `cargo build --release --features mpi` \
         (needs an MPI library such as OpenMPI, and libclang)"
            .into(),
    )
}

/// The solve, a check or a conversion, with a solve's pairs made by `ranks`.
fn run_on(args: &SolveArgs, ranks: Ranks) -> Result<(), Box<dyn std::error::Error>> {
    let threads = args.threads.unwrap_or_else(default_threads).max(1);
    if let Some(dirs) = &args.convert {
        return convert(&dirs[0], &dirs[1], threads, args.quiet);
    }
    if let Some(dir) = &args.verify {
        return verify(dir, threads, args.journal.as_deref(), ranks, args.quiet);
    }
    if let Some(dir) = &args.playout {
        return playout(dir, args);
    }
    if let Some(dir) = &args.reach {
        return reach(dir, threads, args.journal.as_deref(), args.quiet);
    }
    if let Some(dir) = &args.dte {
        return dte_pass(
            dir,
            threads,
            args.stop_after_layers,
            &HashMap::new(),
            ranks,
            args.quiet,
        );
    }
    let size = args.size.expect("clap requires --size here");
    let kind = Kind {
        size,
        rules: args.rules,
        max_cars: args.max_cars.unwrap_or((size as u32).saturating_sub(1)),
    };
    if args.plan {
        return plan(kind);
    }
    let Some(out) = &args.out else {
        return Err("solve needs --out: a directory for the layer files".into());
    };
    if out.extension().is_some_and(|e| e == "dtb") || out.is_file() {
        return Err(format!(
            "--out {}: tables are written to a directory of layer files, not to a single \
             file (the one-file .dtb format is gone); name a directory",
            out.display()
        )
        .into());
    }
    let plan = Plan {
        kind,
        dir: out.clone(),
        threads,
        stop_after_layers: args.stop_after_layers,
        two_bytes: false,
        with_dte: !args.no_distances,
    };
    let outcome = layered_solve(&plan, ranks, args.quiet)?;
    if outcome.stopped {
        println!(
            "stopped after writing {} layer files, as asked; run the same command to continue",
            outcome.layers_written
        );
        return Ok(());
    }
    if args.no_distances {
        println!(
            "without the distances to the end, as asked; run `dodgem solve --dte {}` to add them",
            out.display()
        );
        return Ok(());
    }
    let left = args
        .stop_after_layers
        .map(|limit| limit.saturating_sub(outcome.layers_written));
    // What the solve could not derive pair by pair (layers ahead solved
    // by an earlier run without their distances) is derived now.
    dte_pass(out, threads, left, &outcome.longest_ends, ranks, args.quiet)
}

/// `dodgem solve --plan`: what a solve of `kind` needs.
fn plan(kind: Kind) -> Result<(), Box<dyn std::error::Error>> {
    let census = plan::census(kind)?;
    let (largest, layers) = &census.largest;
    let memory = |slots: u64| bytes(slots.saturating_mul(census.bytes_per_slot));
    println!(
        "{n}x{n} Dodgem, at most {} cars a side (either rule): {} layer pairs, {} index slots per side to move",
        kind.max_cars,
        census.pairs,
        grouped(census.slots),
        n = kind.size
    );
    println!(
        "largest pair: layers {}, {} slots ({:.1}% of all): {} to solve with its distances to the end ({} bytes a slot)",
        layer_names(layers),
        grouped(*largest),
        100.0 * *largest as f64 / census.slots as f64,
        memory(*largest),
        census.bytes_per_slot
    );
    println!(
        "heaviest chain of pairs that wait for one another: {} slots ({:.1}% of all): no number of ranks solves it faster than one rank solves these",
        grouped(census.chain),
        100.0 * census.chain as f64 / census.slots as f64
    );
    Ok(())
}

/// `dodgem solve --convert OLD NEW`: the conversion with a line a file
/// and a summary.
fn convert(
    old: &Path,
    new: &Path,
    threads: usize,
    quiet: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let on_file = |done: &crate::solver::Converted| {
        if quiet || done.skipped {
            return;
        }
        eprintln!(
            "converted layer {} {:?}: {} slots, {} -> {} | elapsed {:.0} s, rss {}",
            layer_name(done.layer.0, done.layer.1),
            done.metric,
            done.slots,
            mib(done.old_bytes),
            mib(done.new_bytes),
            started.elapsed().as_secs_f64(),
            resident_memory().unwrap_or_default(),
        );
    };
    let done = crate::solver::convert(old, new, threads, &on_file)?;
    let kinds = match (done.with_dtz, done.with_dte) {
        (true, true) => ".wdl, .dtz and .dte",
        (true, false) => ".wdl and .dtz (the old directory has no .dte files)",
        (false, _) => ".wdl and .dte (the old directory has no .dtz files)",
    };
    let earlier = match done.files - done.written {
        0 => String::new(),
        n => format!(", {n} of them by an earlier run"),
    };
    println!(
        "converted {} layers from {} to {}: {} files, {kinds} for every layer{earlier}; {} positions compared value for value, all equal; {} -> {} ({:.1} s, peak memory {})",
        done.layers,
        old.display(),
        new.display(),
        done.files,
        done.positions,
        mib(done.old_bytes),
        mib(done.new_bytes),
        started.elapsed().as_secs_f64(),
        peak_memory().unwrap_or_else(|| "unknown".into()),
    );
    Ok(())
}

/// `dodgem solve --dte DIR` (and the last step of `--out`): the distances
/// to the end added to a solved directory, with per-pair lines and a
/// summary.
fn dte_pass(
    dir: &Path,
    threads: usize,
    stop_after_layers: Option<u64>,
    known: &HashMap<(u32, u32), (u32, u32)>,
    ranks: Ranks,
    quiet: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let mut on_pair = |pair: &PairDone| {
        if quiet || pair.resumed {
            return;
        }
        eprintln!(
            "distances to the end: pair {}/{} layers {}: {} slots, longest {} plies, in {:.1} s (read {:.1}, derive {:.1}, write {:.1}), files {} | elapsed {:.0} s, {}",
            pair.done,
            pair.pairs,
            layer_names(&pair.layers),
            pair.slots,
            pair.tally.longest,
            pair.seconds,
            pair.phases[0],
            pair.phases[1],
            pair.phases[2],
            mib(pair.bytes),
            started.elapsed().as_secs_f64(),
            memory_of(pair),
        );
    };
    let done =
        add_dte::add_dte_knowing(dir, threads, stop_after_layers, known, ranks, &mut on_pair)?;
    let outcome = done.outcome;
    if outcome.stopped {
        println!(
            "stopped after writing {} distance-to-the-end files, as asked; run `dodgem solve --dte {}` to continue",
            outcome.layers_written,
            dir.display()
        );
        return Ok(());
    }
    let seconds = started.elapsed().as_secs_f64();
    let peak = peak_memory().unwrap_or_else(|| "unknown".into());
    let tables = Tables::open(dir)?;
    let kind = tables.kind();
    let (win, loss) = (done.longest_win, done.longest_loss);
    let written = if known.is_empty() {
        format!("{} layer files written", outcome.layers_written)
    } else {
        format!(
            "{} layer files written pair by pair with the solve, {} after it",
            known.len(),
            outcome.layers_written
        )
    };
    println!(
        "{n}x{n} Dodgem, {} rule, at most {} cars a side: distances to the end in {} ({written}, {seconds:.1} s, {threads} threads, peak memory {peak}); longest win {win} plies to the end, longest loss {loss}",
        kind.rules.name(),
        kind.max_cars,
        dir.display(),
        n = kind.size
    );
    let start = Position::start(kind.size);
    if let Some(value) = tables.probe_metric(Metric::Dte, &start)? {
        println!("start (Black to move): {}", describe_end(value));
    }
    Ok(())
}

/// `win in 19 plies to the end`, `draw`.
fn describe_end(value: Dtz) -> String {
    match value {
        Dtz::Win(d) => format!("win in {d} plies to the end"),
        Dtz::Loss(d) => format!("loss in {d} plies to the end"),
        Dtz::Draw => "draw".to_string(),
    }
}

/// The layered solve with its bar, per-pair lines and summary.
fn layered_solve(
    plan: &Plan,
    ranks: Ranks,
    quiet: bool,
) -> Result<plan::Outcome, Box<dyn std::error::Error>> {
    let kind = plan.kind;
    let shape = plan::shape_of(kind)?;
    let total = plan::total_slots(&shape);
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
    let mut done_slots = 0u64;
    let mut solving_seconds = 0.0;
    // When this run's first solved pair started: its pace counts from there.
    let mut solving_since = None;
    let mut disk = 0u64;
    let mut first_line = true;
    let mut on_pair = |pair: &PairDone| {
        disk += pair.bytes;
        bar.inc(pair.slots);
        done_slots += pair.slots;
        if !pair.resumed {
            if solving_since.is_none() {
                // Pairs found on disk went by at once: the bar's and the
                // lines' pace count from the start of this run's first pair.
                bar.reset_eta();
                let now = Instant::now();
                solving_since = Some(
                    Duration::try_from_secs_f64(pair.seconds)
                        .ok()
                        .and_then(|spent| now.checked_sub(spent))
                        .unwrap_or(now),
                );
            }
            solved_slots += pair.slots;
            solving_seconds += pair.seconds;
        }
        let rate = solved_slots as f64 / solving_seconds.max(1e-9);
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
                "solved pair {}/{} layers {}: {} slots, {} positions ({} won, {} drawn, {} lost, longest {}) in {:.1} s (read {:.1}, solve {:.1}, write {:.1}{}; {:.2e} slots/s), files {} | elapsed {:.0} s, {}, disk {}, {}",
                pair.done,
                pair.pairs,
                layer_names(&pair.layers),
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
                pair.dte_seconds
                    .map(|s| format!(", distances to the end {s:.1}"))
                    .unwrap_or_default(),
                pair.slots as f64 / pair.seconds.max(1e-9),
                mib(pair.bytes),
                started.elapsed().as_secs_f64(),
                memory_of(pair),
                mib(disk),
                share_done(done_slots, total, solved_slots, solving_since),
            );
            bar.suspend(|| eprintln!("{line}"));
        }
    };
    let outcome = solve::solve_on(plan, ranks, &mut on_pair)?;
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

/// How much of a solve is done, by its slots, and the hours left at the
/// pace of the pairs this run has solved since `since` (pairs found on
/// disk aside): `36.2% of the slots, 2.4 h to go at this run's pace`
/// (minutes or seconds when less is left).
fn share_done(done: u64, total: u64, solved: u64, since: Option<Instant>) -> String {
    // Rounded down, so that 100.0% means done.
    let tenths = (1000 * u128::from(done) / u128::from(total.max(1))) as u64;
    let share = format!("{}.{}% of the slots", tenths / 10, tenths % 10);
    let seconds = since.map_or(0.0, |since| since.elapsed().as_secs_f64());
    if done >= total || solved == 0 || seconds <= 0.0 {
        return share;
    }
    let left = (total - done) as f64 * seconds / solved as f64;
    let left = if left >= 3600.0 {
        format!("{:.1} h", left / 3600.0)
    } else if left >= 60.0 {
        format!("{:.0} min", left / 60.0)
    } else {
        format!("{left:.0} s")
    };
    format!("{share}, {left} to go at this run's pace")
}

/// Counts, the start and its moves, peak memory and disk.
fn print_summary(plan: &Plan, tally: Tally, disk: u64) -> Result<(), Box<dyn std::error::Error>> {
    let tables = Tables::open(&plan.dir)?;
    let metric = if tables.has_dtz() {
        Metric::Dtz
    } else {
        Metric::Dte
    };
    println!(
        "positions per side to move: {} ({} wins, {} draws, {} losses for the side to move); longest {} {} plies",
        grouped(tally.positions()),
        grouped(tally.wins),
        grouped(tally.draws),
        grouped(tally.losses),
        match metric {
            Metric::Dtz => "distance to a progress move",
            Metric::Dte => "win or loss to the end",
        },
        tally.longest
    );
    let start = Position::start(plan.kind.size);
    if let Some(value) = tables.probe(&start)? {
        println!("start (Black to move): {}", describe_in(value, metric));
        let mut moves = Vec::new();
        for &mv in start.legal_moves().as_slice() {
            let after = start.play(mv);
            let progress = metric == Metric::Dtz && mv.is_irreversible(Color::Black);
            let text = match tables.probe(&after)? {
                Some(reply) => describe_in(reply.through(progress), metric),
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

/// `win (3 plies to progress)`, `draw`.
pub fn describe(value: Dtz) -> String {
    describe_in(value, Metric::Dtz)
}

/// `win (3 plies to progress)`, `win (17 plies to the end)`, `draw`:
/// a value whose distance counts `metric`.
pub fn describe_in(value: Dtz, metric: Metric) -> String {
    let to = match metric {
        Metric::Dtz => "progress",
        Metric::Dte => "the end",
    };
    match value {
        Dtz::Win(d) => format!("win ({d} plies to {to})"),
        Dtz::Loss(d) => format!("loss ({d} plies to {to})"),
        Dtz::Draw => "draw".to_string(),
    }
}

fn verify(
    dir: &Path,
    threads: usize,
    journal: Option<&Path>,
    ranks: Ranks,
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
    let verified = verify::verify_on(
        dir,
        threads,
        journal,
        &|done, total| {
            bar.set_length(total);
            bar.set_position(done);
        },
        ranks,
    )?;
    bar.finish_and_clear();
    for example in &verified.examples {
        println!("mismatch: {example}");
    }
    let metrics = if verified.dte_layers > 0 {
        " (and the distances to the end)"
    } else {
        ""
    };
    if verified.mismatches > 0 {
        return Err(format!(
            "{}: {} stored values of {} positions{metrics} disagree with their successors",
            dir.display(),
            verified.mismatches,
            verified.positions
        )
        .into());
    }
    let ends = match verified.dte_layers {
        0 => String::new(),
        n => format!(", and their distances to the end in {n} layers"),
    };
    println!(
        "verified {}: all {} positions in {} layers agree with their successors{ends} ({:.1} s)",
        dir.display(),
        grouped(verified.positions),
        verified.layers,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Plays out positions of the tables in `dir` and reports.
fn playout(dir: &Path, args: &SolveArgs) -> Result<(), Box<dyn std::error::Error>> {
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(args.positions as u64), ProgressDrawTarget::stderr())
    };
    bar.set_style(
        ProgressStyle::with_template(
            "play-out [{bar:32}] {pos}/{len} positions {elapsed_precise} (eta {eta})",
        )
        .expect("the progress template is valid")
        .progress_chars("=> "),
    );
    let plan = PlayoutPlan {
        positions: args.positions,
        seed: args.seed,
        depth: args.depth.max(1),
        draw_plies: DRAW_PLIES,
    };
    let found = crate::solver::checks::playout::playout(dir, &plan, &|done, _| {
        bar.set_position(done as u64)
    })?;
    bar.finish_and_clear();
    for failure in &found.failures {
        println!("not as predicted: {failure}");
    }
    println!("{}: {found}", dir.display());
    if !found.failures.is_empty() {
        return Err(format!(
            "{}: {} of {} positions did not play out as the tables predict",
            dir.display(),
            found.failures.len(),
            found.decided + found.drawn
        )
        .into());
    }
    Ok(())
}

/// Counts the reachable positions of the tables in `dir` and prints them
/// beside the whole index's counts (from the layer headers).
fn reach(
    dir: &Path,
    threads: usize,
    journal: Option<&Path>,
    quiet: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let tables = Tables::open(dir)?;
    let kind = tables.kind();
    let n = kind.size;
    if kind.max_cars + 1 < n as u32 {
        return Err(format!(
            "{}: endgame tables (at most {} cars a side) do not hold the start; \
             reachable counts need tables of the whole board",
            dir.display(),
            kind.max_cars
        )
        .into());
    }
    let shape = tables.shape();
    let mut index = Tally::default();
    for a in shape.min_progress()..=shape.max_progress() {
        for b in shape.min_progress()..=shape.max_progress() {
            let layer = shape.layer(a, b);
            // The counts of the value pass's `.dtz` file, or of the one
            // pass's `.dte` file.
            let header = match read_header(dir, kind, &layer)? {
                Some(header) => Some(header),
                None => crate::solver::files::format::read_values_header(
                    dir,
                    kind,
                    Metric::Dte,
                    &layer,
                )?,
            };
            match header {
                Some(header) => index.merge(header.tally),
                None => {
                    return Err(format!(
                        "{}: layer {} is missing: the solve is not finished",
                        dir.display(),
                        layer.name()
                    )
                    .into());
                }
            }
        }
    }
    let mut progress = |done, all| {
        if !quiet && done > 0 {
            eprintln!(
                "reach: {done}/{all} total progress steps closed | elapsed {:.0} s, rss {}",
                started.elapsed().as_secs_f64(),
                resident_memory().unwrap_or_default()
            );
        }
    };
    let census = match journal {
        None => reach::census(&tables, threads, &mut progress)?,
        Some(path) => {
            let checkpoint = reach::Checkpoint {
                path,
                every: Duration::from_secs(600),
                stop_after: None,
            };
            reach::census_resumable(&tables, threads, &checkpoint, &mut progress)?
                .expect("a census stops early only when asked to")
        }
    };
    println!(
        "{n}x{n} Dodgem, {} rule ({}): {} positions per side to move in the index ({} wins, {} draws, {} losses for the side to move)",
        kind.rules.name(),
        dir.display(),
        grouped(index.positions()),
        grouped(index.wins),
        grouped(index.draws),
        grouped(index.losses)
    );
    let total = census.on_board();
    let finished = census.finished[0] + census.finished[1];
    println!(
        "reachable from the start: {} positions ({} wins, {} draws, {} losses for the side to move, the losses counting {} finished games; {} positions whose side to move is blocked)",
        grouped(census.positions()),
        grouped(total.wins),
        grouped(total.draws),
        grouped(total.losses + finished),
        grouped(finished),
        grouped(total.blocked)
    );
    for color in [Color::Black, Color::White] {
        let side = census.sides[color.index()];
        let over = census.finished[color.index()];
        println!(
            "  {} to move: {} positions ({} wins, {} draws, {} losses, {} of them finished games)",
            color.name(),
            grouped(side.positions() + over),
            grouped(side.wins),
            grouped(side.draws),
            grouped(side.losses + over),
            grouped(over)
        );
    }
    println!(
        "walked in {:.1} s on {threads} threads; peak memory {}",
        started.elapsed().as_secs_f64(),
        peak_memory().unwrap_or_else(|| "unknown".into())
    );
    Ok(())
}

/// Plies after which a drawn play-out is cut off.
const DRAW_PLIES: usize = 200;

/// `1234567` as `1,234,567`.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A size in the unit that shows it best: `812 bytes`, `3.4 KiB`,
/// `17.0 MiB`, `2.3 GiB`.
fn bytes(n: u64) -> String {
    const UNITS: [(&str, u32); 3] = [("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in UNITS {
        if n >= 1 << shift {
            return format!("{:.1} {unit}", n as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{n} bytes")
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// `012-013 013-012`: the layers of a pair, each by Black's and White's
/// progress.
fn layer_names(layers: &[(u32, u32)]) -> String {
    let names: Vec<String> = layers.iter().map(|&(a, b)| layer_name(a, b)).collect();
    names.join(" ")
}

/// Bytes in whole MiB, for memory figures.
fn whole_mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

/// The process's peak resident memory.
fn peak_memory() -> Option<String> {
    memory::peak_bytes().map(whole_mib)
}

/// The memory of what made `pair`: `rss 3644 MiB` of this process, or
/// `rank 2, peak 3644 MiB` of an MPI worker.
fn memory_of(pair: &PairDone) -> String {
    match pair.rank {
        Some((rank, peak)) => format!("rank {rank}, peak {}", whole_mib(peak)),
        None => format!("rss {}", resident_memory().unwrap_or_default()),
    }
}

/// The process's resident memory now.
fn resident_memory() -> Option<String> {
    memory::resident_bytes().map(whole_mib)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_done_rounds_down_and_the_time_left_follows_the_pace() {
        // (A clock that cannot go back 100 s, just after boot, has no
        // such pace to test.)
        let Some(since) = Instant::now().checked_sub(Duration::from_secs(100)) else {
            return;
        };
        let since = Some(since);
        // Half the slots in 100 s: as long again to go.
        assert_eq!(
            share_done(50, 100, 50, since),
            "50.0% of the slots, 2 min to go at this run's pace"
        );
        // Pairs found on disk count as done but set no pace.
        assert_eq!(
            share_done(50, 100, 10, since),
            "50.0% of the slots, 8 min to go at this run's pace"
        );
        assert_eq!(share_done(50, 100, 0, None), "50.0% of the slots");
        assert_eq!(share_done(9_999, 10_000, 1, None), "99.9% of the slots");
        assert_eq!(share_done(100, 100, 100, since), "100.0% of the slots");
    }
}

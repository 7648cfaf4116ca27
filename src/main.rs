//! The `dodgem` binary: the engine on stdin/stdout by default, or a
//! subcommand run from the shell.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};

mod solve;

/// A Dodgem engine speaking a UCI-style protocol on stdin/stdout.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Commands>,
}

#[derive(Subcommand)]
enum Commands {
    /// Run the engine on stdin/stdout (the default).
    Uci,
    /// Search the bench positions to a fixed depth and print nodes and speed.
    Bench {
        /// Search depth in plies (at most the search's depth limit; 0 means 1).
        #[arg(default_value_t = dodgem::bench::DEFAULT_DEPTH,
              value_parser = clap::value_parser!(u32).range(0..=i64::from(dodgem::bench::MAX_DEPTH)))]
        depth: u32,
    },
    /// Count the leaves of the move tree (a move generator check and speed test).
    Perft {
        /// Depth in plies (0 to 64: deeper never finishes).
        #[arg(value_parser = clap::value_parser!(u32).range(0..=i64::from(dodgem::perft::MAX_DEPTH)))]
        depth: u32,
        /// Board size of the start position.
        #[arg(long, default_value_t = 3)]
        size: usize,
        /// A position string instead of the start position.
        #[arg(long, conflicts_with = "size")]
        fen: Option<String>,
    },
    /// Solve every position of a board size by retrograde analysis, print
    /// a report, and optionally write the table to a file.
    Solve {
        /// Board size (3 to 5).
        #[arg(long, default_value_t = 5)]
        size: usize,
        /// Rule for a blocked side to move: textbook (it loses) or classic
        /// (it wins).
        #[arg(long, default_value = "textbook", value_parser = parse_rules)]
        rules: dodgem::Rules,
        /// Write the table here (load it with the TablebasePath option).
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// Report on a table file instead of solving.
        #[arg(long, conflicts_with_all = ["size", "rules", "out"])]
        table: Option<std::path::PathBuf>,
        /// Worker threads [default: one per core].
        #[arg(long)]
        threads: Option<usize>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Play in a web browser: serve a page on 127.0.0.1 and print its address.
    Gui {
        /// Port on 127.0.0.1 (0 picks a free one).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// The engine's command line (split like a shell's, run without one);
        /// the default is this program's own engine.
        #[arg(long)]
        engine: Option<String>,
        /// An engine option, `Name=Value` (`Name` for a button), e.g.
        /// `TablebasePath=5x5-textbook.dtb`; repeatable.
        #[arg(long = "option", value_name = "NAME=VALUE")]
        options: Vec<String>,
    },
    /// Play games between two engines over pipes and report the score.
    Match(Box<dodgem::referee::MatchArgs>),
}

fn parse_rules(name: &str) -> Result<dodgem::Rules, String> {
    dodgem::Rules::from_name(name).ok_or_else(|| "expected textbook or classic".to_string())
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .target(env_logger::Target::Stderr)
        .init();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error)
            if error
                .downcast_ref::<io::Error>()
                .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("dodgem: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    match cli.command.unwrap_or(Commands::Uci) {
        Commands::Uci => {
            let stdin = io::BufReader::new(io::stdin());
            Ok(dodgem::engine::run(stdin, io::stdout().lock())?)
        }
        Commands::Bench { depth } => {
            let report = dodgem::bench::run(depth.max(1), &dodgem::search::Signals::default());
            let mut out = io::stdout().lock();
            for line in report.text_lines() {
                writeln!(out, "{line}")?;
            }
            Ok(())
        }
        Commands::Perft { depth, size, fen } => {
            let position = match fen {
                Some(text) => dodgem::notation::parse_position(&text)?,
                None if (dodgem::board::MIN_SIZE..=dodgem::board::MAX_SIZE).contains(&size) => {
                    dodgem::Position::start(size)
                }
                None => return Err(format!("board size {size} is outside 3..8").into()),
            };
            let start = Instant::now();
            let nodes = dodgem::perft::perft(&position, depth);
            let elapsed = start.elapsed();
            let nps = (nodes as f64 / elapsed.as_secs_f64().max(1e-9)) as u64;
            println!("Nodes searched: {nodes}");
            println!("Time: {} ms, {nps} nodes/s", elapsed.as_millis());
            Ok(())
        }
        Commands::Solve {
            size,
            rules,
            out,
            table,
            threads,
            quiet,
        } => solve::run(solve::Args {
            size,
            rules,
            out,
            table,
            threads: threads
                .unwrap_or_else(dodgem::solver::default_threads)
                .max(1),
            quiet,
        }),
        Commands::Gui {
            port,
            engine,
            options,
        } => dodgem::gui::run(dodgem::gui::GuiOptions {
            port,
            engine,
            options,
        }),
        Commands::Match(args) => Ok(dodgem::referee::run(&args)?),
    }
}

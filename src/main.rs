//! The `dodgem` binary: the engine on stdin/stdout by default, or a
//! subcommand run from the shell.

use std::io;
use std::process::ExitCode;

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
    Uci(dodgem::engine::UciArgs),
    /// Search the bench positions to a fixed depth and print nodes and speed.
    Bench(dodgem::bench::BenchArgs),
    /// Count the leaves of the move tree (a move generator check and speed test).
    Perft(dodgem::perft::PerftArgs),
    /// Solve every position of a board size by retrograde analysis, print
    /// a report, and optionally write the table to a file.
    Solve {
        /// Board size (3 to 5).
        #[arg(long, default_value_t = 5)]
        size: usize,
        /// Rule for a blocked side to move: textbook (it loses) or classic
        /// (it wins).
        #[arg(long, default_value = "textbook")]
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
    Gui(dodgem::gui::GuiOptions),
    /// Play games between two engines over pipes and report the score.
    Match(Box<dodgem::referee::MatchArgs>),
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
    match (cli.command).unwrap_or(Commands::Uci(dodgem::engine::UciArgs::default())) {
        Commands::Uci(args) => Ok(args.run()?),
        Commands::Bench(args) => Ok(args.run()?),
        Commands::Perft(args) => args.run(),
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
        Commands::Gui(args) => args.run(),
        Commands::Match(args) => Ok(args.run()?),
    }
}

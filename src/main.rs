//! The `dodgem` binary: the engine on stdin/stdout by default, or a
//! subcommand run from the shell.

use std::io;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Solve a board by retrograde analysis into a directory of layer
    /// files (resumable), check such a directory, or write a dense table.
    Solve(Box<dodgem::solver::cli::SolveArgs>),
    /// Play in a web browser: serve a page on 127.0.0.1 and print its address.
    Gui(dodgem::gui::GuiOptions),
    /// Play games between two engines over pipes and report the score.
    Match(Box<dodgem::referee::MatchArgs>),
    /// Play one engine against a list of opponents on several boards and
    /// clocks (a match each, resumable) and print the table.
    Gauntlet(Box<dodgem::referee::gauntlet::GauntletArgs>),
    /// Measure an engine's play by search alone against solved tables.
    Strength(Box<dodgem::strength::StrengthArgs>),
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .target(env_logger::Target::Stderr)
        .format_timestamp_micros()
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
        Commands::Solve(args) => args.run(),
        Commands::Gui(args) => args.run(),
        Commands::Match(args) => Ok(args.run()?),
        Commands::Gauntlet(args) => Ok(args.run()?),
        Commands::Strength(args) => Ok(args.run()?),
    }
}

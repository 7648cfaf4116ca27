//! The `dodgem` binary: the engine on stdin/stdout by default, or a
//! subcommand run from the shell.

use std::io::{self, Write};
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
    Uci,
    /// Search the bench positions to a fixed depth and print nodes and speed.
    Bench {
        /// Search depth in plies.
        #[arg(default_value_t = dodgem::bench::DEFAULT_DEPTH)]
        depth: u32,
    },
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .target(env_logger::Target::Stderr)
        .init();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("dodgem: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> io::Result<()> {
    match cli.command.unwrap_or(Commands::Uci) {
        Commands::Uci => {
            let stdin = io::BufReader::new(io::stdin());
            dodgem::engine::run(stdin, io::stdout().lock())
        }
        Commands::Bench { depth } => {
            let report = dodgem::bench::run(depth.max(1), &dodgem::search::Signals::default());
            let mut out = io::stdout().lock();
            for line in report.text_lines() {
                writeln!(out, "{line}")?;
            }
            Ok(())
        }
    }
}

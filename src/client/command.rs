//! An engine's command line: a program and its arguments, split from one
//! line as a POSIX shell would but never run by a shell.

use std::fmt;
use std::io;

/// What to run as an engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineCommand {
    program: String,
    args: Vec<String>,
}

/// Why a command line gives no command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandError {
    /// The quoting does not balance (the line is kept for the message).
    Unbalanced(String),
    /// No words at all.
    Empty,
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::Unbalanced(line) => {
                write!(
                    f,
                    "cannot split the command line '{line}' (unbalanced quotes?)"
                )
            }
            CommandError::Empty => f.write_str("the command line is empty"),
        }
    }
}

impl std::error::Error for CommandError {}

impl EngineCommand {
    /// This executable with no subcommand: the built-in engine.
    ///
    /// # Errors
    /// When the path of the running executable cannot be found.
    pub fn builtin() -> io::Result<EngineCommand> {
        let exe = std::env::current_exe()?;
        Ok(EngineCommand {
            program: exe.to_string_lossy().into_owned(),
            args: Vec::new(),
        })
    }

    /// A command line split as a POSIX shell would (quotes, escapes), but
    /// without expansions: it is run directly, not by a shell.
    ///
    /// # Errors
    /// When the line has no words or its quoting is unbalanced.
    pub fn parse(line: &str) -> Result<EngineCommand, CommandError> {
        let words = shlex::split(line).ok_or_else(|| CommandError::Unbalanced(line.into()))?;
        let mut words = words.into_iter();
        let program = words.next().ok_or(CommandError::Empty)?;
        Ok(EngineCommand {
            program,
            args: words.collect(),
        })
    }

    /// The program, as given (a path or a name looked up in `PATH`).
    pub fn program(&self) -> &str {
        &self.program
    }

    pub fn args(&self) -> &[String] {
        &self.args
    }
}

/// The command quoted back into one line that [`EngineCommand::parse`]
/// reads as the same command.
impl fmt::Display for EngineCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words = std::iter::once(&self.program).chain(&self.args);
        let quoted: Vec<String> = words
            .map(|word| shlex::try_quote(word).map_or_else(|_| word.clone(), |q| q.into_owned()))
            .collect();
        f.write_str(&quoted.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_engine_command_lines() {
        let command = EngineCommand::parse("'my engine' --threads 2 \"a b\"").unwrap();
        assert_eq!(command.program, "my engine");
        assert_eq!(command.args, ["--threads", "2", "a b"]);
        assert_eq!(command.to_string(), "'my engine' --threads 2 'a b'");
        assert_eq!(EngineCommand::parse(""), Err(CommandError::Empty));
        assert_eq!(EngineCommand::parse("   "), Err(CommandError::Empty));
        assert_eq!(
            EngineCommand::parse("engine 'unbalanced"),
            Err(CommandError::Unbalanced("engine 'unbalanced".into()))
        );
    }
}

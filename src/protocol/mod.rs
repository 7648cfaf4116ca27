//! The text protocol: commands in ([`command`]), reply lines out
//! ([`response`]). See `protocol.md` for the specification.

pub mod command;
pub mod response;

pub use command::{Command, Dialect, Go, ParseError, Query, Start, escape, parse, quote};

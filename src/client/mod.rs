//! The client side of protocol.md: running an engine as a child process
//! and reading what it prints. `dodgem gui` and `dodgem match` both drive
//! engines through this module.
//!
//! - [`process`]: the child process over pipes, never blocking its caller
//!   (reader and writer threads, line cap, timestamps, quit then kill).
//! - [`command`]: the engine's command line.
//! - [`search`]: `info` and `bestmove` lines.
//! - [`options`]: `option` lines and checked `setoption` lines.
//! - [`reply`]: every line an engine prints, read in one place
//!   ([`parse_reply`]), built on the two above.
//!
//! ```
//! use dodgem::client::{Reply, Score, parse_reply};
//! let Some(Reply::Info(info)) = parse_reply("info depth 7 score cp 38 pv a3b3 b1b2") else {
//!     panic!("an info line");
//! };
//! assert_eq!((info.depth, info.score), (Some(7), Some(Score::Cp(38))));
//! assert_eq!(parse_reply("readyok"), Some(Reply::ReadyOk));
//! ```

pub mod command;
pub mod options;
pub mod process;
pub mod reply;
pub mod search;

pub use command::{CommandError, EngineCommand};
pub use options::{OptionKind, OptionSpec, parse_option_line, setoption_line, split_setting};
pub use process::{EngineProcess, MAX_LINE, Recv, Stderr, Written};
pub use reply::{Reply, Solved, parse_reply};
pub use search::{Info, Score, parse_bestmove, parse_info};

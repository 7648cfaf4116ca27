//! `dodgem`: an engine for the board game Dodgem (Colin Vout), driven over
//! stdin/stdout by a UCI-style protocol (see `protocol.md`).
//!
//! The library holds the rules ([`Position`]), notation, evaluation,
//! search and the protocol controller ([`engine::run`]); the retrograde
//! [`solver`] and the solved tables in play ([`tablebase`]); and the
//! programs that drive engines over pipes: the referee ([`referee`]) and
//! the browser GUI ([`gui`]), both through [`client`]; and the strength
//! benchmark against the tables ([`strength`]). The `dodgem` binary is a
//! thin shell around them.
//!
//! ```
//! use dodgem::{Position, notation, perft::perft};
//! let start = Position::start(3);
//! assert_eq!(notation::format_position(&start), "B2/B2/1WW b");
//! assert_eq!(perft(&start, 4), 101);
//! ```
#![deny(unsafe_code)]
// The module docs map each room for the people who change it and link its
// private items; `cargo doc --document-private-items` shows those pages.
#![allow(rustdoc::private_intra_doc_links)]

pub mod bench;
pub mod board;
pub mod client;
pub mod engine;
pub mod eval;
pub(crate) mod files;
pub mod game;
pub mod gui;
pub(crate) mod memory;
pub mod notation;
pub(crate) mod options;
pub mod perft;
pub(crate) mod protocol;
pub mod referee;
pub(crate) mod score;
pub mod search;
pub mod solver;
pub mod strength;
pub mod tablebase;
pub(crate) mod time;
pub(crate) mod tt;
pub mod wdl;
mod zobrist;

pub use board::{Color, Move, Outcome, Position, Rules};

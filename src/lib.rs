//! `dodgem`: an engine for the board game Dodgem (Colin Vout), driven over
//! stdin/stdout by a UCI-style protocol (see `protocol.md`).
//!
//! The library holds the rules ([`Position`]), notation, search and the
//! protocol controller; the `dodgem` binary is a thin shell around
//! [`engine::run`] and [`bench::run`].
#![forbid(unsafe_code)]

pub mod board;
pub mod notation;
pub mod perft;
mod zobrist;

pub use board::{Color, Move, Outcome, Position, Rules};
pub mod eval;

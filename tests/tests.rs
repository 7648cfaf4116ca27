//! The integration tests, as modules of one test binary (one link of the
//! library and its dependencies instead of one per file). Each module
//! drives the real `dodgem` binary or the library as a user would; the
//! helpers they share are in [`common`].
//!
//! Run one module with `cargo test --test tests engine::`, one test by
//! (part of) its name as usual.

mod common;

mod clock;
mod dte;
mod engine;
mod format;
mod fuzz_http;
mod fuzz_protocol;
mod fuzz_tables;
mod gui_http;
mod hardening;
mod integrity;
mod layered;
mod movegen;
#[cfg(feature = "mpi")]
mod mpi;
mod perft;
mod referee;
mod reference;
mod replies;
mod search;
mod skill;
mod strength;
mod tablebase;
mod textbook;
mod threads;
mod transcripts;
mod ugi;
mod wdl;

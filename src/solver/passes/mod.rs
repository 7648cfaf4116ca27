//! The retrograde passes over one pair of layers, `(a, b)` and `(b, a)`,
//! given the values of the layers their forward moves reach:
//!
//! - [`pass`]: the one pass, win/draw/loss and the distance to the end
//!   together, at one byte a slot (what `dodgem solve` runs);
//! - [`retro`]: the older value pass, win/draw/loss and the distance to
//!   the next progress move (`solve --no-distances`);
//! - [`dte`]: the distance pass, the distances to the end derived from
//!   the value pass's win/draw/loss (`solve --dte`);
//! - [`marks`]: where each level's positions are, for the passes that go
//!   level by level ([`pass`], [`dte`]).

pub(super) mod dte;
pub(super) mod marks;
pub(super) mod pass;
pub(super) mod retro;

//! The checks of a finished table directory, besides the checksums its
//! files carry: the play-out of random decided positions by the engine's
//! own search ([`playout`]), and the positions reachable from the start
//! with their census ([`reach`]), whose walk saves its state to go on
//! after a stop ([`checkpoint`]).

mod checkpoint;
pub(super) mod journal;
pub(super) mod pair_check;
pub(super) mod playout;
pub mod reach;
pub(super) mod verify;

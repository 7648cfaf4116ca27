//! Where the positions are: the layered index (progress layers, their
//! blocks of car counts, and Black's moves between them, [`layers`]) and
//! the values a table stores for each slot, with their one-number codes
//! and in-memory forms ([`value`]). Nothing here reads or writes files.

pub(super) mod layers;
pub(super) mod value;

//! The runners: `dodgem solve` ([`cli`]), which pair of layers is made
//! when and on how many threads ([`schedule`]), and the pairs handed to
//! the ranks of an MPI job (`cluster`, with the `mpi` feature).

pub(super) mod add_dte;
pub mod cli;
#[cfg(feature = "mpi")]
pub mod cluster;
pub(super) mod in_memory;
pub(super) mod pair;
pub(super) mod plan;
pub(super) mod schedule;
pub(super) mod solve;

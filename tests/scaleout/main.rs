//! The matrix over several hosts: GNU parallel over real ssh logins, Slurm, resume after a kill.
//! One at a time (`serial`).
//! One test binary per need (see tests/README.md): each file below was a binary of its own.

#[path = "../serial_support/mod.rs"]
mod serial_support;
pub use serial_support::serial;

mod matrix_hosts;
mod matrix_jobs;
mod matrix_resume;
mod matrix_slurm;
#[path = "../matrix_support/mod.rs"]
mod matrix_support;

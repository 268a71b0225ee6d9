//! End-to-end runs through the real Docker engine and k6: runs, fits, compares, pauses, the host
//! tools, interrupts at every phase. One at a time (`serial`): they measure.
//! One test binary per need (see tests/README.md): each file below was a binary of its own.

#[path = "../serial_support/mod.rs"]
mod serial_support;
pub use serial_support::serial;

mod compare_e2e;
mod drop_day_e2e;
mod fit_e2e;
#[path = "../fit_support/mod.rs"]
mod fit_support;
mod generators_e2e;
mod node_modes_e2e;
mod pause_e2e;
mod pgbouncer_e2e;
mod remedies_e2e;
mod run_e2e;
#[path = "../run_support/mod.rs"]
mod run_support;
mod shared_host_phases;
mod tools_cpr;
mod tools_host;
mod turns_e2e;
mod verify_e2e;

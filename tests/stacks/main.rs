//! Tests on the real Docker engine that bring lab stacks up and down (no load generator):
//! lifecycle, placement, owners on a shared host. The CLI tests, which take the host lock, run
//! one at a time (`serial`, timed); the `stack_*` tests, each on its own labels, run beside them.
//! One test binary per need (see tests/README.md): each file below was a binary of its own.

#[path = "../serial_support/mod.rs"]
mod serial_support;
pub use serial_support::serial;

mod build_refresh;
mod generators_cli;
mod shared_host_cli;
mod shared_host_fpm;
mod shared_host_owners;
mod stack_demo;
mod stack_lifecycle;
mod stack_node;
mod stack_php;
#[path = "../stack_support/mod.rs"]
mod stack_support;

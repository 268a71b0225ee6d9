//! cargo fuzz target: see `fuzz/entries.rs`, `entries::hosts_file`.
#![no_main]
#[path = "../entries.rs"]
mod entries;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entries::hosts_file(data));

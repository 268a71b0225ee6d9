//! cargo fuzz target: see `fuzz/entries.rs`, `entries::cli_strings`.
#![no_main]
#[path = "../entries.rs"]
mod entries;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entries::cli_strings(data));

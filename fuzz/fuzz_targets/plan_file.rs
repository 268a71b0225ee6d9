//! cargo fuzz target: see `fuzz/entries.rs`, `entries::plan_file`.
#![no_main]
#[path = "../entries.rs"]
mod entries;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entries::plan_file(data));

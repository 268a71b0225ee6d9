//! cargo fuzz target: see `fuzz/entries.rs`, `entries::k6_csv`.
#![no_main]
#[path = "../entries.rs"]
mod entries;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entries::k6_csv(data));

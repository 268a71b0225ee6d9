//! cargo fuzz target: see `fuzz/entries.rs`, `entries::catalog`.
#![no_main]
#[path = "../entries.rs"]
mod entries;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entries::catalog(data));

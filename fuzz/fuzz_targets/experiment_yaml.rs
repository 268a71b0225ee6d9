//! cargo fuzz target: see `fuzz/entries.rs`, `entries::experiment_yaml`.
#![no_main]
#[path = "../entries.rs"]
mod entries;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entries::experiment_yaml(data));

//! Analysis of a run (pure: no I/O, no clock): k6 requests, k6 summary, server samples ->
//! per-step figures, verdicts by the written criteria, the knee, and checks on the measurement.
//!
//! The caller opens the files and hands over readers/texts: `k6csv::read_k6_csv(reader)`,
//! `summary::parse_summary(text)`, `samples::parse_jsonl(text)`, then `analyze_run(Inputs)`.
pub mod access;
pub mod actions;
pub mod bounds;
pub mod changepoint;
pub mod checks;
pub mod fit;
pub mod hist;
pub mod k6csv;
pub mod logs;
pub mod merge;
pub mod model;
pub mod omission;
pub mod recovery;
pub mod refine;
pub mod run;
pub mod samples;
pub mod stats;
pub mod student;
pub mod summary;
pub mod trigger;
pub mod usl;

pub use model::{AnalyzeJson, LoadModel, Params, Report, Verdict};
pub use run::{AnalyzeError, Inputs, analyze_run, fmt_ms};

//! perflab: reproduces the PHP and Node.js breaking-point labs of the k6 article on any Docker host.
//!
//! Pipeline: `experiment` (YAML schema, validation) -> `plan` (steps, alignment, CPU layout)
//! -> `docker` (the only module that imports bollard) -> `images` / `stack` (the labs'
//! containers) -> `load` (k6) -> `sample` (server-side samplers) -> `analyze` (pure) ->
//! `report` (renderers), with `rundir`, `lock` and `host` beside them; `tools` holds the
//! article's methodology tools (noise-check, calib, cpu-per-request).

pub mod analyze;
pub mod cli;
pub mod docker;
pub mod error;
pub mod experiment;
pub mod host;
pub mod images;
pub mod load;
pub mod lock;
pub mod plan;
pub mod report;
pub mod run;
pub mod rundir;
pub mod sample;
pub mod stack;
pub mod tools;
pub mod verify;

/// `eprintln!` that never panics: progress and warnings go to stderr and are dropped when stderr
/// is closed (the terminal or the pipe reader is gone), so a run still stops k6, tears its
/// containers down and marks its directory.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that never panics: tables and `--json` go to stdout; when the reader is gone
/// (`perflab verify all | head -3`) the rest is dropped instead of killing the process with
/// "failed printing to stdout" (a run still finishes its rounds and tears down).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

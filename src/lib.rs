//! perflab: reproduces the PHP and Node.js breaking-point labs of the k6 article on any Docker host.
//!
//! Pipeline: `claim` (the claims' language) -> `experiment` (YAML schema, validation) -> `plan`
//! (steps, alignment, CPU layout) -> `lab` (one descriptor per lab, the one container `Role`)
//! -> `docker` (the only module that imports bollard) -> `images` / `stack` (the labs'
//! containers, as their descriptors declare them) -> `load` (k6) -> `sample` (server-side
//! samplers) -> `analyze` (pure) -> `rundir` (the run directory's typed files) -> `report`
//! (renderers) -> `verify` -> `html` (report.html, out/index.html) -> `session` (the measurement session's phases behind an `Engine`
//! trait) -> `rig` (the Docker half: `DockerEngine`) -> `run` / `tools` -> `export` / `matrix`, with `lock`, `owner`, `host`, `atomic` and `output` beside them; `tools` holds the
//! article's methodology tools (noise-check, calib, cpu-per-request).

pub mod analyze;
pub mod atomic;
pub mod claim;
pub mod cli;
pub mod docker;
pub mod error;
pub mod experiment;
pub mod export;
pub mod history;
pub mod host;
pub mod html;
pub mod images;
pub mod lab;
pub mod live;
pub mod load;
pub mod lock;
pub mod matrix;
pub mod output;
pub mod owner;
pub mod plan;
pub mod report;
pub(crate) mod rig;
pub mod run;
pub mod rundir;
pub mod sample;
pub mod session;
pub mod stack;
pub mod tools;
pub mod verify;

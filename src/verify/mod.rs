//! `perflab verify`, `compare`, `capacity`: the article's findings as claims checked on
//! recorded runs. Pure (no I/O, no clock): `quantities` (the registry of the names claims use,
//! each with its reader), `eval` (one claim, compiled by `claim`, on one run), `refuted` (the
//! verdict of a claim the catalog marks refuted), `findings`,
//! `compare`, `capacity` (over rounds `consistent` accepts), `render` (text, md, json, the
//! `--quantities` list), `side` (the sides of `compare EXP --a --b`), `matrix` (one row per
//! experiment of two sides). `load` reads run directories, `targets` picks what `verify`
//! judges and the rounds `--run-missing` lacks (through `load`), and `gather` judges them into
//! the findings and writes the findings report.
pub mod capacity;
pub(crate) mod capacity_runs;
pub mod compare;
pub mod config;
pub(crate) mod consistent;
pub mod eval;
pub mod findings;
pub(crate) mod gather;
mod leaves;
pub mod load;
pub mod map;
pub mod matrix;
pub mod quantities;
pub(crate) mod refuted;
pub mod render;
pub mod rounds;
pub mod side;
pub(crate) mod targets;

pub use eval::{ClaimResult, ClaimVerdict, RunView, evaluate};

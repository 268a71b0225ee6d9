//! `perflab verify`, `compare`, `capacity`: the article's findings as claims checked on
//! recorded runs. Pure (no I/O, no clock): `quantity` (the values of the names that
//! `claim::quantities` lists), `eval` (one claim, compiled by `claim`, on one run), `findings`,
//! `compare`, `capacity` (over rounds `consistent` accepts), `render` (text, md, json), `side`
//! (the sides of `compare EXP --a --b`), `matrix` (one row per experiment of two sides); `load`
//! is the only part that reads files.
pub mod capacity;
pub mod compare;
pub mod config;
pub mod consistent;
pub mod eval;
pub mod findings;
pub mod load;
pub mod matrix;
pub mod quantity;
pub mod render;
pub mod rounds;
pub mod side;

pub use eval::{ClaimResult, ClaimVerdict, RunView, evaluate};

//! Experiment catalog: the YAML schema (`schema`), loading and validation of `experiments/*.yaml`.
pub mod schema;

pub use schema::*;

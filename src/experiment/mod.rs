//! Experiment catalog: the YAML schema (`schema`), loading (`catalog`), group expansion counted
//! (`groups`), semantic checks
//! (`validate`, the claims' in `claims`), input bounds (`bounds`), diagnostics (`diag`) and `--set`
//! overrides (`overrides`).
mod actions;
pub mod bounds;
pub mod catalog;
pub(crate) mod check_files;
mod claims;
pub mod diag;
mod drop;
pub mod fit;
pub mod groups;
pub(crate) mod keys;
pub mod map_check;
pub mod overrides;
pub mod pause;
pub mod reach;
pub mod schema;
pub mod validate;

pub use catalog::{Catalog, CatalogFile};
pub use diag::{Diagnostic, Severity};
pub use schema::*;

/// Turn error diagnostics into the invalid-input error (exit code 2).
pub(crate) fn invalid(diags: &[Diagnostic]) -> crate::error::InvalidInput {
    let errs: Vec<Diagnostic> = diags.iter().filter(|d| d.is_error()).cloned().collect();
    let n = errs.len();
    let head = if n == 1 {
        "1 problem".to_string()
    } else {
        format!("{n} problems")
    };
    crate::error::InvalidInput(format!(
        "{head} in the experiment input (nothing was started):\n{}",
        diag::render(&errs)
    ))
}

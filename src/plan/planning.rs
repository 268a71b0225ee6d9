//! The flags that shape a plan as a command is given them (`--quick --set --cpus
//! --force-cpus --no-align`) and the catalog they are read against, before any check.
use std::path::PathBuf;

use super::PlanOptions;

/// The flags that shape a plan, as given: `--quick --set --cpus --force-cpus --no-align`, and
/// the catalog they are read against.
#[derive(Debug, Clone, Default)]
pub(crate) struct Planning {
    pub quick: bool,
    pub set: Vec<String>,
    pub cpus: Option<String>,
    pub force_cpus: bool,
    pub no_align: bool,
    pub catalog_dir: PathBuf,
}

impl Planning {
    pub(crate) fn options(&self) -> PlanOptions {
        PlanOptions { quick: self.quick }
    }
}

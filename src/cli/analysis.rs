//! CLI commands for the analysis area (owned by the analysis work): argument structs and handlers.
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct AnalyzeArgs {}

pub fn analyze(_args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`perflab analyze` is not built yet")
}

#[derive(Debug, Args)]
pub struct ReportArgs {}

pub fn report(_args: ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`perflab report` is not built yet")
}

//! CLI commands for the catalog area (owned by the catalog work): argument structs and handlers.
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ListArgs {}

pub fn list(_args: ListArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`perflab list` is not built yet")
}

#[derive(Debug, Args)]
pub struct ShowArgs {}

pub fn show(_args: ShowArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`perflab show` is not built yet")
}

#[derive(Debug, Args)]
pub struct ValidateArgs {}

pub fn validate(_args: ValidateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`perflab validate` is not built yet")
}

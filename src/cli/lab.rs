//! CLI commands for the lab area (owned by the lab work): argument structs and handlers.
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct BuildArgs {}

pub fn build(_args: BuildArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`perflab build` is not built yet")
}

#[derive(Debug, Args)]
pub struct UpArgs {}

pub fn up(_args: UpArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`perflab up` is not built yet")
}

#[derive(Debug, Args)]
pub struct DownArgs {}

pub fn down(_args: DownArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`perflab down` is not built yet")
}

#[derive(Debug, Args)]
pub struct CleanupArgs {}

pub fn cleanup(_args: CleanupArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`perflab cleanup` is not built yet")
}

#[derive(Debug, Args)]
pub struct SmokeArgs {}

pub fn smoke(_args: SmokeArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`perflab smoke` is not built yet")
}

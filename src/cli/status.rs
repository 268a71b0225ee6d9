//! `perflab status`: its flag; what it prints is `run::status`'s.
use std::process::ExitCode;

use clap::Args;

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print `{"lock": {...}, "stacks": [...]}` as JSON on stdout
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn status(a: StatusArgs) -> anyhow::Result<ExitCode> {
    crate::output::emit(&crate::run::status::render(a.json)?);
    Ok(ExitCode::SUCCESS)
}

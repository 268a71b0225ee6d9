//! `perflab export k8s EXP --dir DIR`: arguments; the checks (bad input: exit 2, nothing
//! written) and the manifests are `crate::export`'s.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::catalog::{CatalogArg, PlanArgs};

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(subcommand)]
    pub command: ExportCommand,
}

#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// Kubernetes manifests: a k6-operator TestRun for the load, an Indexed Job per lab slot
    /// (Guaranteed pods, integer CPUs), Services and ConfigMaps; validate them offline with
    /// scripts/validate-k8s.sh DIR
    #[command(after_help = "Example:\n  perflab export k8s exp1 --dir k8s/exp1 --generators 2")]
    K8s(K8sArgs),
}

#[derive(Debug, Args)]
pub struct K8sArgs {
    /// Experiment id (`perflab list`)
    pub experiment: String,
    /// A new (or empty) folder for the YAML files
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// k6 runners: the TestRun's parallelism (execution segments, as `run --generators`)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub generators: u32,
    /// Registry prefix of the images (push perflab's images there): <registry>/<image>:<suite>
    #[arg(long, default_value = "perflab")]
    pub registry: String,
    /// Debian suite of the images
    #[arg(long, default_value = "trixie", value_parser = super::catalog::suites(false))]
    pub suite: String,
    /// Whole CPUs of each slot (requests = limits): loadgen=1,db=1,app=2
    #[arg(
        long = "k8s-cpus",
        default_value = "loadgen=1,db=1,app=2",
        value_name = "SLOT=N,..."
    )]
    pub k8s_cpus: String,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub catalog: CatalogArg,
}

pub(crate) fn export(a: ExportArgs) -> anyhow::Result<ExitCode> {
    let ExportCommand::K8s(a) = a.command;
    crate::export::k8s_files(&crate::export::K8sInput {
        experiment: a.experiment,
        dir: a.dir,
        generators: a.generators,
        registry: a.registry,
        suite: a.suite,
        k8s_cpus: a.k8s_cpus,
        planning: a.plan.planning(&a.catalog),
    })?;
    Ok(ExitCode::SUCCESS)
}

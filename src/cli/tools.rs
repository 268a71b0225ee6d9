//! CLI of the methodology tools: `noise-check`, `calib`, `cpu-per-request` (see `crate::tools`;
//! `tools::start` checks their input: exit 2, nothing started), and `host-speed`
//! (`crate::host::speed`).
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::lab::Lab;
use crate::tools::{Common, start};

/// Options of every tool.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Print the report as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Fail at once when another perflab process holds the host lock
    #[arg(long)]
    pub no_wait: bool,
    /// Where run directories go
    #[arg(long, default_value = "out", env = "PERFLAB_OUT")]
    pub out: PathBuf,
}

impl CommonArgs {
    fn common(&self, quiet: bool) -> Common {
        Common::new(self.out.clone(), self.no_wait, quiet, self.json)
    }
}

#[derive(Debug, Args)]
pub struct NoiseCheckArgs {
    /// CPU to pin the sleep loop to [default: the layout's first app CPU]
    #[arg(long)]
    pub cpu: Option<u32>,
    /// How long to run
    #[arg(long, default_value_t = 130.0)]
    pub seconds: f64,
    /// Report wake-ups later than this
    #[arg(long, default_value_t = 30.0)]
    pub threshold_ms: f64,
    /// Requested sleep per iteration
    #[arg(long, default_value_t = 1.0)]
    pub sleep_ms: f64,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct CalibArgs {
    /// CPU to run the loop on [default: the layout's first app CPU]
    #[arg(long)]
    pub cpu: Option<u32>,
    /// Timed repeats of the loop
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub repeats: u32,
    /// Target duration of one repeat (the loop is sized once to take about this long)
    #[arg(long, default_value_t = 200.0)]
    pub work_ms: f64,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct CprArgs {
    /// The lab (the labs `cpu-per-request` measures, from the registry)
    #[arg(help = format!("The lab: {}", Lab::list_or(Lab::with_cpu_per_request())))]
    pub lab: String,
    /// Sequential requests per endpoint (the old spelling `--n` is still accepted)
    #[arg(long = "repeats", alias = "n", default_value_t = 300, value_name = "N")]
    pub n: u32,
    /// Debian suite of the images
    #[arg(long, default_value = "trixie", value_parser = super::catalog::suites(false))]
    pub suite: String,
    /// Endpoint to measure (repeatable) [default: php /api/ping /api/db /api/slow; node /cpu /db /dbsleep]
    #[arg(long = "endpoint", value_name = "PATH")]
    pub endpoints: Vec<String>,
    /// Sequential warm-up requests per endpoint before its counters are read
    #[arg(long, default_value_t = 20)]
    pub warmup: u32,
    /// Seconds of idle baseline (no requests) measured first; 0 to skip
    #[arg(long, default_value_t = 3.0)]
    pub idle_s: f64,
    /// Open a new connection for every request (the article's wget did) instead of keep-alive
    #[arg(long)]
    pub fresh_connections: bool,
    /// CPU pinning, e.g. loadgen=0,db=1,app=2-3 [default: from the host's online CPUs]
    #[arg(long, value_name = "ROLE=CPUS,...")]
    pub cpus: Option<String>,
    /// Allow the app's CPUs to overlap the load generator's or the database's
    #[arg(long)]
    pub force_cpus: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

pub(crate) fn noise_check(a: NoiseCheckArgs, quiet: bool) -> Result<ExitCode> {
    let n = start::Noise {
        cpu: a.cpu,
        seconds: a.seconds,
        threshold_ms: a.threshold_ms,
        sleep_ms: a.sleep_ms,
    };
    start::noise_check(n, a.common.common(quiet))
}

pub(crate) fn calib(a: CalibArgs, quiet: bool) -> Result<ExitCode> {
    let c = start::Calib {
        cpu: a.cpu,
        repeats: a.repeats,
        work_ms: a.work_ms,
    };
    start::calib(c, a.common.common(quiet))
}

pub(crate) fn cpu_per_request(a: CprArgs, quiet: bool) -> Result<ExitCode> {
    let common = a.common.common(quiet);
    let c = start::Cpr {
        lab: a.lab,
        n: a.n,
        suite: a.suite,
        endpoints: a.endpoints,
        warmup: a.warmup,
        idle_s: a.idle_s,
        fresh_connections: a.fresh_connections,
        cpus: a.cpus,
        force_cpus: a.force_cpus,
    };
    start::cpu_per_request(c, common)
}

#[derive(Debug, Args)]
pub struct HostSpeedArgs {
    /// CPUs to measure, e.g. 0-1 [default: every online CPU]
    #[arg(long)]
    pub cpus: Option<String>,
    /// Readings one after the other, to see the probe's own spread (the old spelling
    /// `--repeat` is still accepted)
    #[arg(
        long = "repeats",
        alias = "repeat",
        default_value_t = 1,
        value_name = "N"
    )]
    pub repeat: u32,
    /// Print the readings as JSON lines
    #[arg(long)]
    pub json: bool,
}

/// `perflab host-speed`: the probe's readings, one a line.
pub(crate) fn host_speed(a: HostSpeedArgs) -> Result<ExitCode> {
    crate::host::speed::print_readings(a.cpus.as_deref(), a.repeat, a.json)?;
    Ok(ExitCode::SUCCESS)
}

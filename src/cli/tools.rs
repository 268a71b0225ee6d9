//! CLI of the methodology tools: `noise-check`, `calib`, `cpu-per-request` (see `crate::tools`),
//! and `host-speed` (`crate::host::speed`).
//! Input is checked here (exit 2, nothing started); the work happens in `crate::tools`.
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::error::InvalidInput;
use crate::experiment::Lab;
use crate::images::Suite;
use crate::lock::Wait;
use crate::tools::calib_report::CalibSettings;
use crate::tools::cpr_report::CprSettings;
use crate::tools::noise_report::NoiseSettings;
use crate::tools::{self, Common};

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
        Common {
            out_root: self.out.clone(),
            wait: if self.no_wait {
                Wait::NoWait
            } else {
                Wait::Block
            },
            quiet,
            json: self.json,
        }
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
    #[arg(from_global)]
    pub quiet: bool,
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
    #[arg(from_global)]
    pub quiet: bool,
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
    #[arg(long, default_value = "trixie", value_parser = super::suite::values(false))]
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
    #[arg(from_global)]
    pub quiet: bool,
}

fn positive(flag: &str, v: f64, hint: &str) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(InvalidInput(format!("{flag} {v}: must be a positive number ({hint})")).into())
    }
}

pub(crate) fn noise_check(a: NoiseCheckArgs) -> Result<ExitCode> {
    positive("--seconds", a.seconds, "e.g. --seconds 130")?;
    positive("--threshold-ms", a.threshold_ms, "e.g. --threshold-ms 30")?;
    positive("--sleep-ms", a.sleep_ms, "e.g. --sleep-ms 1")?;
    let (cpu, _) = tools::measured_cpu(a.cpu)?;
    let settings = NoiseSettings {
        cpu,
        seconds: a.seconds,
        threshold_ms: a.threshold_ms,
        sleep_ms: a.sleep_ms,
    };
    let common = a.common.common(a.quiet);
    super::lab::runtime()?.block_on(tools::noise::run(settings, common))
}

pub(crate) fn calib(a: CalibArgs) -> Result<ExitCode> {
    if a.repeats == 0 {
        return Err(InvalidInput("--repeats 0: give at least 1 repeat".into()).into());
    }
    positive("--work-ms", a.work_ms, "e.g. --work-ms 200")?;
    let (cpu, _) = tools::measured_cpu(a.cpu)?;
    let settings = CalibSettings {
        cpu,
        repeats: a.repeats,
        work_ms: a.work_ms,
    };
    let common = a.common.common(a.quiet);
    super::lab::runtime()?.block_on(tools::calib::run(settings, common))
}

pub(crate) fn cpu_per_request(a: CprArgs) -> Result<ExitCode> {
    let Some(lab) = Lab::with_cpu_per_request().find(|l| l.as_str() == a.lab) else {
        return Err(InvalidInput(format!(
            "unknown lab `{}`: cpu-per-request measures {}",
            a.lab,
            Lab::list_or(Lab::with_cpu_per_request())
        ))
        .into());
    };
    if a.n == 0 {
        return Err(
            InvalidInput("--repeats 0: give at least 1 request per endpoint".into()).into(),
        );
    }
    if !(a.idle_s.is_finite() && a.idle_s >= 0.0) {
        return Err(InvalidInput(format!("--idle-s {}: must be 0 or more", a.idle_s)).into());
    }
    if let Some(bad) = a.endpoints.iter().find(|e| !e.starts_with('/')) {
        return Err(InvalidInput(format!(
            "--endpoint `{bad}`: give a path starting with `/`, e.g. --endpoint /api/db"
        ))
        .into());
    }
    let suite: Suite = a.suite.parse()?;
    let online = crate::plan::layout::online_cpus().map_err(|e| anyhow::anyhow!("{e}"))?;
    let layout = crate::plan::layout::resolve(&online, a.cpus.as_deref(), a.force_cpus)?;
    let endpoints = if a.endpoints.is_empty() {
        tools::cpr::default_endpoints(lab)
    } else {
        a.endpoints.clone()
    };
    let settings = CprSettings {
        lab: lab.as_str().into(),
        n: a.n,
        endpoints,
        warmup: a.warmup,
        idle_s: a.idle_s,
        fresh_connections: a.fresh_connections,
        suite: suite.as_str().into(),
    };
    let common = a.common.common(a.quiet);
    super::lab::runtime()?.block_on(tools::cpr::run(lab, settings, layout, suite, common))
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
    let cpus = match &a.cpus {
        Some(s) => {
            crate::host::parse_cpu_list(s).map_err(|e| InvalidInput(format!("--cpus {s}: {e}")))?
        }
        None => crate::host::online_cpus().map_err(anyhow::Error::msg)?,
    };
    if !(1..=100).contains(&a.repeat) {
        return Err(InvalidInput(format!("--repeats {}: between 1 and 100", a.repeat)).into());
    }
    for _ in 0..a.repeat {
        let r = crate::host::speed::measure(&cpus);
        if a.json {
            println!("{}", serde_json::to_string(&r)?);
        } else {
            println!("{}  {}", r.at.format("%H:%M:%S"), r.text());
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! The tools' input checked before anything starts (bad input: exit 2, nothing started), then
//! each tool run on its own runtime.
use std::process::ExitCode;

use anyhow::Result;

use super::Common;
use super::calib_report::CalibSettings;
use super::cpr_report::CprSettings;
use super::noise_report::NoiseSettings;
use crate::error::InvalidInput;
use crate::experiment::Lab;
use crate::images::Suite;
use crate::run::lifecycle::runtime;

/// `noise-check`'s input as given.
pub(crate) struct Noise {
    pub cpu: Option<u32>,
    pub seconds: f64,
    pub threshold_ms: f64,
    pub sleep_ms: f64,
}

/// `calib`'s input as given.
pub(crate) struct Calib {
    pub cpu: Option<u32>,
    pub repeats: u32,
    pub work_ms: f64,
}

/// `cpu-per-request`'s input as given.
pub(crate) struct Cpr {
    pub lab: String,
    pub n: u32,
    pub suite: String,
    pub endpoints: Vec<String>,
    pub warmup: u32,
    pub idle_s: f64,
    pub fresh_connections: bool,
    pub cpus: Option<String>,
    pub force_cpus: bool,
}

fn positive(flag: &str, v: f64, hint: &str) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(InvalidInput(format!("{flag} {v}: must be a positive number ({hint})")).into())
    }
}

pub(crate) fn noise_check(a: Noise, common: Common) -> Result<ExitCode> {
    positive("--seconds", a.seconds, "e.g. --seconds 130")?;
    positive("--threshold-ms", a.threshold_ms, "e.g. --threshold-ms 30")?;
    positive("--sleep-ms", a.sleep_ms, "e.g. --sleep-ms 1")?;
    let (cpu, _) = super::measured_cpu(a.cpu)?;
    let settings = NoiseSettings {
        cpu,
        seconds: a.seconds,
        threshold_ms: a.threshold_ms,
        sleep_ms: a.sleep_ms,
    };
    runtime()?.block_on(super::noise::run(settings, common))
}

pub(crate) fn calib(a: Calib, common: Common) -> Result<ExitCode> {
    if a.repeats == 0 {
        return Err(InvalidInput("--repeats 0: give at least 1 repeat".into()).into());
    }
    positive("--work-ms", a.work_ms, "e.g. --work-ms 200")?;
    let (cpu, _) = super::measured_cpu(a.cpu)?;
    let settings = CalibSettings {
        cpu,
        repeats: a.repeats,
        work_ms: a.work_ms,
    };
    runtime()?.block_on(super::calib::run(settings, common))
}

pub(crate) fn cpu_per_request(a: Cpr, common: Common) -> Result<ExitCode> {
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
    let layout = crate::run::resolve::layout(a.cpus.as_deref(), a.force_cpus)?;
    let endpoints = if a.endpoints.is_empty() {
        super::cpr::default_endpoints(lab)
    } else {
        a.endpoints
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
    runtime()?.block_on(super::cpr::run(lab, settings, layout, suite, common))
}

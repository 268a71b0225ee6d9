//! The values of the claims' named quantities on a recorded run: per-step figures of
//! `report.json`, per-run figures, the run's recorded config and CPU layout, and the functions
//! reading logs and steps, one exhaustive `match` per kind of `claim::quantities`' registry, so
//! every name there has a reader here. Pure.
use crate::analyze::model::{Report, StepReport, Verdict};
use crate::analyze::omission::Omission;
use crate::analyze::samples::WindowServer;
use crate::claim::quantities::{ClosedQ, ConfigQ, FpmQ, LittleQ, NodeQ, PgQ, RunQ, StepId, StepQ};
use crate::experiment::Lab;
use crate::rundir::Manifest;

/// Why a value could not be read.
pub(crate) type Missing = String;

fn b(x: bool) -> f64 {
    if x { 1.0 } else { 0.0 }
}

fn need<T>(v: Option<T>, what: impl FnOnce() -> String) -> Result<T, Missing> {
    v.ok_or_else(what)
}

/// A step quantity of `s` (a step of `r`); `path` names a family's member (`cpu.pg`).
pub(crate) fn step_value(
    r: &Report,
    s: &StepReport,
    q: StepId,
    path: &str,
) -> Result<f64, Missing> {
    let step = format!("step {}", s.target);
    let server = || need(s.server.as_ref(), || format!("no server samples in {step}"));
    match q {
        StepId::Plain(q) => plain_value(r, s, q, path, &step, server),
        StepId::Fpm(q) => fpm_value(server()?, q, &step),
        StepId::Pg(q) => pg_value(server()?, q, &step),
        StepId::Node(q) => node_value(server()?, q, &step),
        StepId::Little(q) => little_value(r, s, q, &step),
        StepId::Closed(q) => closed_value(r, s, q, &step),
    }
}

fn plain_value<'s>(
    r: &Report,
    s: &'s StepReport,
    q: StepQ,
    path: &str,
    step: &str,
    server: impl Fn() -> Result<&'s WindowServer, Missing>,
) -> Result<f64, Missing> {
    let member = || path.split_once('.').map(|(_, m)| m).unwrap_or("");
    let failed = (s.failed_rate * s.requests as f64).round();
    Ok(match q {
        StepQ::Target => s.target as f64,
        StepQ::Index => r.steps.iter().position(|x| x.name == s.name).unwrap_or(0) as f64,
        StepQ::Requests => s.requests as f64,
        StepQ::P50Ms => s.p50_ms,
        StepQ::P95Ms => s.p95_ms,
        StepQ::P99Ms => s.p99_ms,
        StepQ::MaxMs => s.max_ms,
        StepQ::AvgMs => s.avg_ms,
        StepQ::OkP50Ms => s.ok_p50_ms,
        StepQ::OkP95Ms => s.ok_p95_ms,
        StepQ::FailedRate => s.failed_rate,
        StepQ::Failed => failed,
        StepQ::SentPerS => s.sent_per_s,
        StepQ::OkPerS => s.ok_per_s,
        StepQ::Dropped => s.dropped as f64,
        StepQ::LostShare => {
            let offered = s.requests as f64 + s.dropped as f64;
            if offered > 0.0 {
                (failed + s.dropped as f64) / offered
            } else {
                0.0
            }
        }
        StepQ::MaxVus => need(s.max_vus, || format!("no VU samples in {}", step))?,
        StepQ::MeanVus => need(s.mean_vus, || format!("no VU samples in {}", step))?,
        StepQ::WindowS => s.window_s,
        StepQ::Truncated => b(s.truncated),
        StepQ::Passed => b(s.verdict == Verdict::Pass),
        StepQ::Stable => {
            let row = r.checks.stability.iter().find(|x| x.step == s.name);
            let row = need(row, || format!("no stability row for {}", step))?;
            b(row.verdict == crate::analyze::model::Stability::Stable)
        }
        // `non200` sums every status; `non200.500` is one status's count.
        StepQ::Non200 if path.contains('.') => s.non200.get(member()).copied().unwrap_or(0) as f64,
        StepQ::Non200 => s.non200.values().sum::<u64>() as f64,
        StepQ::MsCpuPerOk => need(s.ms_cpu_per_ok, || {
            format!("no app CPU samples in {}", step)
        })?,
        StepQ::Cpu if !path.contains('.') => {
            return Err(format!("`{path}` is not a step quantity"));
        }
        StepQ::Cpu => *need(server()?.cpu_pct.get(member()), || {
            format!("no CPU samples of `{}` in {}", member(), step)
        })?,
        StepQ::AppCpu => need(server()?.app_cores(), || {
            format!("no app-box CPU samples in {}", step)
        })?,
        StepQ::PsiPct => need(server()?.psi_pct, || format!("no PSI in {}", step))?,
        StepQ::HostCpuMaxPct => need(server()?.host_cpu_max_pct, || {
            format!("no host CPU samples in {}", step)
        })?,
        StepQ::DbCoreBusyPct => need(server()?.db_core_busy_pct, || {
            format!("no host CPU samples or CPU layout in {}", step)
        })?,
        StepQ::K6CpuMaxPct => need(server()?.k6_cpu_max_pct, || {
            format!("no k6 CPU samples in {}", step)
        })?,
        StepQ::DockerdPct => need(server()?.dockerd_pct, || {
            format!("no dockerd samples in {}", step)
        })?,
    })
}

/// `fpm.*`: php-fpm's status samples of one step's window.
fn fpm_value(server: &WindowServer, q: FpmQ, step: &str) -> Result<f64, Missing> {
    let f = need(server.fpm.as_ref(), || {
        format!("no php-fpm status samples in {step}")
    })?;
    Ok(match q {
        FpmQ::Samples => f.samples as f64,
        FpmQ::IdleMin => f.idle_min as f64,
        FpmQ::Total => f.total as f64,
        FpmQ::ListenQueueMax => f.listen_queue_max as f64,
        FpmQ::ListenQueueLen => f.listen_queue_len as f64,
        FpmQ::SaturatedShare => f.saturated_share,
        FpmQ::AcceptedPerS => need(f.accepted_per_s, || {
            format!("fewer than 2 php-fpm samples in {step}")
        })?,
    })
}

/// `pg.*`: `pg_stat_activity` and commit samples of one step's window.
fn pg_value(server: &WindowServer, q: PgQ, step: &str) -> Result<f64, Missing> {
    let p = need(server.pg.as_ref(), || {
        format!("no pg_stat_activity samples in {step}")
    })?;
    Ok(match q {
        PgQ::CommitsPerS => need(p.commits_per_s, || {
            format!("fewer than 2 pg samples in {step}")
        })?,
        PgQ::WaitsForClient => b(p.waits_for_client),
    })
}

/// `node.*`: the Node app's metrics of one step's window.
fn node_value(server: &WindowServer, q: NodeQ, step: &str) -> Result<f64, Missing> {
    let n = need(server.node.as_ref(), || {
        format!("no Node app metrics in {step}")
    })?;
    Ok(match q {
        NodeQ::EluMax => n.elu_max,
        NodeQ::EldP99MaxMs => n.eld_p99_max_ms,
        NodeQ::PoolWaitingMax => n.pool_waiting_max as f64,
        NodeQ::PoolWaitingShare => n.pool_waiting_share,
        NodeQ::InflightMax => n.inflight_max as f64,
        NodeQ::InflightMean => n.inflight_mean,
        NodeQ::Err5xx => n.err5xx as f64,
    })
}

/// `little.*`: the step's Little's-law row.
fn little_value(r: &Report, s: &StepReport, q: LittleQ, step: &str) -> Result<f64, Missing> {
    let l = r.checks.little.iter().find(|x| x.step == s.name);
    let l = need(l, || format!("no Little's-law row for {step}"))?;
    Ok(match q {
        LittleQ::LambdaPerS => l.lambda_per_s,
        LittleQ::WS => l.w_s,
        LittleQ::LInflight => l.l_inflight,
        LittleQ::LVus => need(l.l_vus, || format!("no VU samples in {step}"))?,
        LittleQ::WFromVusS => need(l.w_from_vus_s, || format!("no VU samples in {step}"))?,
        LittleQ::Diff => l.diff,
    })
}

/// `closed.*`: the step's closed-model row.
fn closed_value(r: &Report, s: &StepReport, q: ClosedQ, step: &str) -> Result<f64, Missing> {
    let c = r.checks.closed.iter().find(|x| x.step == s.name);
    let c = need(c, || {
        format!("no closed-model row for {step} (open-model run?)")
    })?;
    Ok(match q {
        ClosedQ::NominalPerS => c.nominal_per_s,
        ClosedQ::AchievedPerS => c.achieved_per_s,
        ClosedQ::Missing => c.missing,
        ClosedQ::ImpliedRMs => c.implied_r_ms,
    })
}

/// A run quantity.
pub(crate) fn run_value(r: &Report, q: RunQ) -> Result<f64, Missing> {
    let no_knee = || "no knee: no step failed for good in the steps run".to_string();
    let no_pass = || "no step passed".to_string();
    let index_of = |t: Option<u32>| {
        t.and_then(|t| r.steps.iter().position(|s| s.target == t))
            .map(|i| i as f64)
    };
    let pause = |f: fn(&Omission) -> f64| {
        r.omission
            .as_ref()
            .map(f)
            .ok_or_else(|| "no pause in this run (`load.pause` with its closed twin)".to_string())
    };
    let pool = || {
        need(r.checks.pool_ceiling.as_ref(), || {
            "no pool ceiling in the report".into()
        })
    };
    Ok(match q {
        RunQ::Knee => need(r.knee, no_knee)? as f64,
        RunQ::LastPassing => need(r.last_passing, no_pass)? as f64,
        RunQ::MaxSustainable => need(
            r.refine
                .as_ref()
                .and_then(|f| f.max_sustainable)
                .or(r.last_passing),
            no_pass,
        )? as f64,
        RunQ::BelowKnee => need(r.passing_below_knee, || {
            "no passing step below the knee".to_string()
        })? as f64,
        RunQ::KneeIndex => need(index_of(r.knee), no_knee)?,
        RunQ::LastPassingIndex => need(index_of(r.last_passing), no_pass)?,
        RunQ::Steps => r.steps.len() as f64,
        RunQ::LowestStep => need(r.steps.first(), || "no steps".to_string())?.target as f64,
        RunQ::TopStep => need(r.steps.last(), || "no steps".to_string())?.target as f64,
        RunQ::MaxOkPerS => r.steps.iter().map(|s| s.ok_per_s).fold(0.0, f64::max),
        RunQ::DroppedIterations => r.dropped_iterations as f64,
        RunQ::PauseOpenP99Ms => pause(|o| o.open.p99_ms)?,
        RunQ::PauseClosedP99Ms => pause(|o| o.closed.p99_ms)?,
        RunQ::PauseCorrectedP99Ms => pause(|o| o.corrected_p99_ms)?,
        RunQ::PauseExpectedP99Ms => pause(|o| o.expected_p99_ms)?,
        RunQ::PauseOpenDropped => pause(|o| o.open.dropped as f64)?,
        RunQ::PauseClosedRequests => pause(|o| o.closed.requests as f64)?,
        RunQ::PauseCorrectedRequests => pause(|o| o.corrected_requests as f64)?,
        RunQ::PauseClosedMissing => {
            pause(|o| o.corrected_requests.saturating_sub(o.closed.requests) as f64)?
        }
        RunQ::PauseS => pause(|o| o.pause_s)?,
        RunQ::PauseRate => pause(|o| f64::from(o.rate))?,
        RunQ::PoolCeiling => pool()?.ceiling_per_s,
        RunQ::PoolWMs => pool()?.w_s * 1000.0,
        RunQ::CpuCeiling => {
            need(r.checks.cpu_ceiling.as_ref(), || {
                "no CPU ceiling in the report".into()
            })?
            .cpu_ceiling_per_s
        }
        RunQ::DrainS => need(r.checks.drain_s, || "no drain time".to_string())?,
        RunQ::Aborted => b(need(r.params.aborted, || {
            "the k6 log was not read".to_string()
        })?),
        RunQ::InsufficientVus => b(r.params.insufficient_vus),
    })
}

/// A lab's own setting, read by the lab's descriptor from the run's stack section.
pub(crate) fn lab_value(m: &Manifest, lab: Lab, name: &str) -> Result<f64, Missing> {
    crate::lab::descriptor(lab).quantity(&m.experiment.stack, name)
}

/// A config quantity from the run's manifest (the experiment as resolved, the CPU layout).
pub fn config_value(m: &Manifest, q: ConfigQ) -> Result<f64, Missing> {
    let e = &m.experiment;
    let st = &e.stack;
    let l = &m.cpu_layout;
    Ok(match q {
        ConfigQ::MaxConnections => st.postgres.max_connections as f64,
        ConfigQ::PgUsable => match &m.measurements.postgres_slots {
            Some(slots) => slots.usable as f64,
            // Runs recorded before perflab read the slots: PostgreSQL's defaults
            // (3 superuser-reserved, 0 reserved) and the harness's one connection.
            None => (st.postgres.max_connections as f64 - 3.0 - 1.0).max(0.0),
        },
        ConfigQ::Slots => crate::lab::descriptor(e.lab).slots(st)?,
        ConfigQ::SloP95Ms => e.load.slo_p95_ms,
        ConfigQ::ErrorBudget => e.load.error_budget,
        // The hold the run used (the plan's: `--quick` scales it), as the report does.
        ConfigQ::HoldS => m.plan.hold_s as f64,
        ConfigQ::VuCap => e.load.max_vus as f64,
        ConfigQ::TimeoutS => e.load.timeout_s as f64,
        ConfigQ::ThinkTimeS => need(e.load.think_time_s, || "no think time (open model)".into())?,
        ConfigQ::AppCpus => l.app.len() as f64,
        ConfigQ::DbCpus => l.db.len() as f64,
        ConfigQ::LoadgenCpus => l.loadgen.len() as f64,
        ConfigQ::OnlineCpus => l.online.len() as f64,
        ConfigQ::DbSharesLoadgen => b(l.db.overlaps(&l.loadgen)),
    })
}

/// `log(name, text)`: lines of log `name` whose digested message contains `text`.
pub(crate) fn log_count(r: &Report, log: &str, text: &str) -> Result<f64, Missing> {
    let d = need(r.logs.get(log), || {
        let have: Vec<&str> = r.logs.keys().map(String::as_str).collect();
        format!("no log `{log}` in the run (logs: {})", have.join(", "))
    })?;
    let t = text.to_lowercase();
    Ok(d.messages
        .iter()
        .filter(|(m, _)| m.to_lowercase().contains(&t))
        .map(|(_, c)| *c)
        .sum::<u64>() as f64)
}

/// `log_lines(name)`.
pub(crate) fn log_lines(r: &Report, log: &str) -> Result<f64, Missing> {
    Ok(need(r.logs.get(log), || format!("no log `{log}` in the run"))?.lines as f64)
}

/// `saturated(text)` on a step.
pub(crate) fn saturated(s: &StepReport, text: &str) -> Result<f64, Missing> {
    let w = need(s.server.as_ref(), || {
        format!("no server samples in step {}", s.target)
    })?;
    let t = text.to_lowercase();
    Ok(b(w.saturated.iter().any(|x| x.to_lowercase().contains(&t))))
}

/// `node_error(text)` on a step.
pub(crate) fn node_error(s: &StepReport, text: &str) -> Result<f64, Missing> {
    let n = s
        .server
        .as_ref()
        .and_then(|w| w.node.as_ref())
        .ok_or_else(|| format!("no Node app metrics in step {}", s.target))?;
    let t = text.to_lowercase();
    Ok(n.errors
        .iter()
        .filter(|(m, _)| m.to_lowercase().contains(&t))
        .map(|(_, c)| *c)
        .sum::<u64>() as f64)
}

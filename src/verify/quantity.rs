//! The values of the claims' named quantities on a recorded run: per-step figures of
//! `report.json`, per-run figures, the run's recorded config and CPU layout, and the functions
//! reading logs and steps. Which names exist is `claim::quantities`'s. Pure.
use crate::analyze::model::{Report, StepReport, Verdict};
use crate::experiment::Lab;
use crate::rundir::Manifest;

/// Why a value could not be read.
pub type Missing = String;

fn b(x: bool) -> f64 {
    if x { 1.0 } else { 0.0 }
}

fn need<T>(v: Option<T>, what: impl FnOnce() -> String) -> Result<T, Missing> {
    v.ok_or_else(what)
}

/// A step quantity of `s` (a step of `r`).
pub fn step_value(r: &Report, s: &StepReport, path: &str) -> Result<f64, Missing> {
    let step = || format!("step {}", s.target);
    let server = || {
        need(s.server.as_ref(), || {
            format!("no server samples in {}", step())
        })
    };
    let failed = (s.failed_rate * s.requests as f64).round();
    Ok(match path {
        "target" => s.target as f64,
        "index" => r.steps.iter().position(|x| x.name == s.name).unwrap_or(0) as f64,
        "requests" => s.requests as f64,
        "p50_ms" => s.p50_ms,
        "p95_ms" => s.p95_ms,
        "p99_ms" => s.p99_ms,
        "max_ms" => s.max_ms,
        "avg_ms" => s.avg_ms,
        "ok_p50_ms" => s.ok_p50_ms,
        "ok_p95_ms" => s.ok_p95_ms,
        "failed_rate" => s.failed_rate,
        "failed" => failed,
        "sent_per_s" => s.sent_per_s,
        "ok_per_s" => s.ok_per_s,
        "dropped" => s.dropped as f64,
        "lost_share" => {
            let offered = s.requests as f64 + s.dropped as f64;
            if offered > 0.0 {
                (failed + s.dropped as f64) / offered
            } else {
                0.0
            }
        }
        "max_vus" => need(s.max_vus, || format!("no VU samples in {}", step()))?,
        "mean_vus" => need(s.mean_vus, || format!("no VU samples in {}", step()))?,
        "window_s" => s.window_s,
        "truncated" => b(s.truncated),
        "passed" => b(s.verdict == Verdict::Pass),
        "stable" => {
            let row = r.checks.stability.iter().find(|x| x.step == s.name);
            let row = need(row, || format!("no stability row for {}", step()))?;
            b(row.verdict == crate::analyze::model::Stability::Stable)
        }
        "non200" => s.non200.values().sum::<u64>() as f64,
        "ms_cpu_per_ok" => need(s.ms_cpu_per_ok, || {
            format!("no app CPU samples in {}", step())
        })?,
        "app_cpu" => need(server()?.app_cores(), || {
            format!("no app-box CPU samples in {}", step())
        })?,
        "psi_pct" => need(server()?.psi_pct, || format!("no PSI in {}", step()))?,
        "db_core_busy_pct" => need(server()?.db_core_busy_pct, || {
            format!("no host CPU samples or CPU layout in {}", step())
        })?,
        "host_cpu_max_pct" => need(server()?.host_cpu_max_pct, || {
            format!("no host CPU samples in {}", step())
        })?,
        "k6_cpu_max_pct" => need(server()?.k6_cpu_max_pct, || {
            format!("no k6 CPU samples in {}", step())
        })?,
        "dockerd_pct" => need(server()?.dockerd_pct, || {
            format!("no dockerd samples in {}", step())
        })?,
        p => return family_value(r, s, p, server),
    })
}

fn family_value<'s>(
    r: &Report,
    s: &'s StepReport,
    path: &str,
    server: impl Fn() -> Result<&'s crate::analyze::samples::WindowServer, Missing>,
) -> Result<f64, Missing> {
    let step = format!("step {}", s.target);
    let Some((family, member)) = path.split_once('.') else {
        return Err(format!("`{path}` is not a step quantity"));
    };
    Ok(match family {
        "non200" => s.non200.get(member).copied().unwrap_or(0) as f64,
        "cpu" => *need(server()?.cpu_pct.get(member), || {
            format!("no CPU samples of `{member}` in {step}")
        })?,
        "fpm" | "pg" | "node" => server_family(family, member, path, &step, server()?)?,
        "little" => {
            let l = r.checks.little.iter().find(|x| x.step == s.name);
            let l = need(l, || format!("no Little's-law row for {step}"))?;
            match member {
                "lambda_per_s" => l.lambda_per_s,
                "w_s" => l.w_s,
                "l_inflight" => l.l_inflight,
                "l_vus" => need(l.l_vus, || format!("no VU samples in {step}"))?,
                "w_from_vus_s" => need(l.w_from_vus_s, || format!("no VU samples in {step}"))?,
                "diff" => l.diff,
                _ => return Err(format!("unknown `{path}`")),
            }
        }
        "closed" => {
            let c = r.checks.closed.iter().find(|x| x.step == s.name);
            let c = need(c, || {
                format!("no closed-model row for {step} (open-model run?)")
            })?;
            match member {
                "nominal_per_s" => c.nominal_per_s,
                "achieved_per_s" => c.achieved_per_s,
                "missing" => c.missing,
                "implied_r_ms" => c.implied_r_ms,
                _ => return Err(format!("unknown `{path}`")),
            }
        }
        _ => return Err(format!("`{path}` is not a step quantity")),
    })
}

/// `fpm.*`, `pg.*` and `node.*`: the server-side samples of one step's window.
fn server_family(
    family: &str,
    member: &str,
    path: &str,
    step: &str,
    server: &crate::analyze::samples::WindowServer,
) -> Result<f64, Missing> {
    Ok(match family {
        "fpm" => {
            let f = need(server.fpm.as_ref(), || {
                format!("no php-fpm status samples in {step}")
            })?;
            match member {
                "samples" => f.samples as f64,
                "idle_min" => f.idle_min as f64,
                "total" => f.total as f64,
                "listen_queue_max" => f.listen_queue_max as f64,
                "listen_queue_len" => f.listen_queue_len as f64,
                "saturated_share" => f.saturated_share,
                "accepted_per_s" => need(f.accepted_per_s, || {
                    format!("fewer than 2 php-fpm samples in {step}")
                })?,
                _ => return Err(format!("unknown `{path}`")),
            }
        }
        "pg" => {
            let p = need(server.pg.as_ref(), || {
                format!("no pg_stat_activity samples in {step}")
            })?;
            match member {
                "commits_per_s" => need(p.commits_per_s, || {
                    format!("fewer than 2 pg samples in {step}")
                })?,
                "waits_for_client" => b(p.waits_for_client),
                _ => return Err(format!("unknown `{path}`")),
            }
        }
        "node" => {
            let n = need(server.node.as_ref(), || {
                format!("no Node app metrics in {step}")
            })?;
            match member {
                "elu_max" => n.elu_max,
                "eld_p99_max_ms" => n.eld_p99_max_ms,
                "pool_waiting_max" => n.pool_waiting_max as f64,
                "pool_waiting_share" => n.pool_waiting_share,
                "inflight_max" => n.inflight_max as f64,
                "inflight_mean" => n.inflight_mean,
                "err5xx" => n.err5xx as f64,
                _ => return Err(format!("unknown `{path}`")),
            }
        }
        _ => return Err(format!("`{path}` is not a step quantity")),
    })
}

/// A run quantity.
pub fn run_value(r: &Report, path: &str) -> Result<f64, Missing> {
    let no_knee = || "no knee: no step failed for good in the steps run".to_string();
    let index_of = |t: Option<u32>| {
        t.and_then(|t| r.steps.iter().position(|s| s.target == t))
            .map(|i| i as f64)
    };
    Ok(match path {
        "knee" => need(r.knee, no_knee)? as f64,
        "last_passing" => need(r.last_passing, || "no step passed".to_string())? as f64,
        "max_sustainable" => need(
            r.refine
                .as_ref()
                .and_then(|f| f.max_sustainable)
                .or(r.last_passing),
            || "no step passed".to_string(),
        )? as f64,
        "below_knee" => need(r.passing_below_knee, || {
            "no passing step below the knee".to_string()
        })? as f64,
        "knee_index" => need(index_of(r.knee), no_knee)?,
        "last_passing_index" => need(index_of(r.last_passing), || "no step passed".to_string())?,
        "steps" => r.steps.len() as f64,
        "lowest_step" => need(r.steps.first(), || "no steps".to_string())?.target as f64,
        "top_step" => need(r.steps.last(), || "no steps".to_string())?.target as f64,
        "max_ok_per_s" => r.steps.iter().map(|s| s.ok_per_s).fold(0.0, f64::max),
        "dropped_iterations" => r.dropped_iterations as f64,
        "pool_ceiling" => {
            need(r.checks.pool_ceiling.as_ref(), || {
                "no pool ceiling in the report".into()
            })?
            .ceiling_per_s
        }
        "pool_w_ms" => {
            need(r.checks.pool_ceiling.as_ref(), || {
                "no pool ceiling in the report".into()
            })?
            .w_s * 1000.0
        }
        "cpu_ceiling" => {
            need(r.checks.cpu_ceiling.as_ref(), || {
                "no CPU ceiling in the report".into()
            })?
            .cpu_ceiling_per_s
        }
        "drain_s" => need(r.checks.drain_s, || "no drain time".to_string())?,
        "aborted" => b(need(r.params.aborted, || {
            "the k6 log was not read".to_string()
        })?),
        "insufficient_vus" => b(r.params.insufficient_vus),
        p if p.starts_with("pause_") => {
            let o = need(r.omission.as_ref(), || {
                "no pause in this run (`load.pause` with its closed twin)".into()
            })?;
            need(crate::analyze::omission::quantity(o, p), || {
                format!("`{p}` is not a run quantity")
            })?
        }
        _ => return Err(format!("`{path}` is not a run quantity")),
    })
}

/// A config quantity from the run's manifest (the experiment as resolved, the CPU layout).
pub fn config_value(m: &Manifest, path: &str) -> Result<f64, Missing> {
    let e = &m.experiment;
    let st = &e.stack;
    let l = &m.cpu_layout;
    if let Some(q) = crate::claim::quantities::QUANTITIES
        .iter()
        .find(|q| q.name == path)
        && let Some(lab) = q
            .lab
            .and_then(|tag| Lab::ALL.into_iter().find(|l| l.as_str() == tag))
    {
        return crate::lab::descriptor(lab).quantity(st, path);
    }
    Ok(match path {
        "max_connections" => st.postgres.max_connections as f64,
        "pg_usable" => match &m.measurements.postgres_slots {
            Some(slots) => slots.usable as f64,
            // Runs recorded before perflab read the slots: PostgreSQL's defaults
            // (3 superuser-reserved, 0 reserved) and the harness's one connection.
            None => (st.postgres.max_connections as f64 - 3.0 - 1.0).max(0.0),
        },
        "slots" => crate::lab::descriptor(e.lab).slots(st)?,
        "slo_p95_ms" => e.load.slo_p95_ms,
        "error_budget" => e.load.error_budget,
        // The hold the run used (the plan's: `--quick` scales it), as the report does.
        "hold_s" => m.plan.hold_s as f64,
        "vu_cap" => e.load.max_vus as f64,
        "timeout_s" => e.load.timeout_s as f64,
        "think_time_s" => need(e.load.think_time_s, || "no think time (open model)".into())?,
        "app_cpus" => l.app.len() as f64,
        "db_cpus" => l.db.len() as f64,
        "loadgen_cpus" => l.loadgen.len() as f64,
        "online_cpus" => l.online.len() as f64,
        "db_shares_loadgen" => b(l.db.overlaps(&l.loadgen)),
        _ => return Err(format!("`{path}` is not a config quantity")),
    })
}

/// `log(name, text)`: lines of log `name` whose digested message contains `text`.
pub fn log_count(r: &Report, log: &str, text: &str) -> Result<f64, Missing> {
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
pub fn log_lines(r: &Report, log: &str) -> Result<f64, Missing> {
    Ok(need(r.logs.get(log), || format!("no log `{log}` in the run"))?.lines as f64)
}

/// `saturated(text)` on a step.
pub fn saturated(s: &StepReport, text: &str) -> Result<f64, Missing> {
    let w = need(s.server.as_ref(), || {
        format!("no server samples in step {}", s.target)
    })?;
    let t = text.to_lowercase();
    Ok(b(w.saturated.iter().any(|x| x.to_lowercase().contains(&t))))
}

/// `node_error(text)` on a step.
pub fn node_error(s: &StepReport, text: &str) -> Result<f64, Missing> {
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

//! The named quantities claims can use: per-step figures of `report.json` (`failed_rate`,
//! `cpu.pg`, `fpm.idle_min`, ...), per-run figures (`knee`, `max_ok_per_s`, ...), the run's
//! recorded config and CPU layout (`max_children`, `app_cpus`, ...), and the functions.
//! Adding a claim on these needs no Rust change. Pure.
use crate::analyze::model::{Report, StepReport, Verdict};
use crate::experiment::Lab;
use crate::rundir::Manifest;

/// Where a quantity is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One step of `report.json` (needs `at:` or a selector like `knee.`).
    Step,
    /// The whole run's report.
    Run,
    /// The run's recorded config or CPU layout (manifest.json).
    Config,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Step => "step",
            Scope::Run => "run",
            Scope::Config => "config",
        }
    }
}

/// One named quantity.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    pub name: &'static str,
    pub scope: Scope,
    /// Only meaningful on this lab (config values of one lab's stack section).
    pub lab: Option<Lab>,
    pub help: &'static str,
}

const fn q(name: &'static str, scope: Scope, help: &'static str) -> Quantity {
    Quantity {
        name,
        scope,
        lab: None,
        help,
    }
}
/// Every fixed name (plus the families `cpu.<role>` and `non200.<status>`): the measured
/// quantities, each lab's config quantities (`lab::LabDescriptor::quantities`), the others.
pub static QUANTITIES: std::sync::LazyLock<Vec<Quantity>> = std::sync::LazyLock::new(|| {
    let own = Lab::ALL.into_iter().flat_map(|lab| {
        crate::lab::descriptor(lab)
            .info()
            .quantities
            .iter()
            .map(move |(name, help)| Quantity {
                name,
                scope: Scope::Config,
                lab: Some(lab),
                help,
            })
    });
    MEASURED
        .iter()
        .copied()
        .chain(own)
        .chain(CONFIG.iter().copied())
        .collect()
});

use Scope::{Config as C, Run as R, Step as S};

/// The step and run quantities.
const MEASURED: &[Quantity] = &[
    q(
        "target",
        S,
        "offered load of the step (rps, or VUs in the closed model)",
    ),
    q("index", S, "position of the step, 0 = lowest"),
    q("requests", S, "requests started in the step"),
    q("p50_ms", S, "median latency"),
    q("p95_ms", S, "p95 latency"),
    q("p99_ms", S, "p99 latency"),
    q("max_ms", S, "slowest request"),
    q("avg_ms", S, "mean latency"),
    q("ok_p50_ms", S, "median latency of successful requests"),
    q("ok_p95_ms", S, "p95 latency of successful requests"),
    q(
        "failed_rate",
        S,
        "failed share of the step's requests (0.2 = 20 %)",
    ),
    q("failed", S, "failed requests (count)"),
    q("sent_per_s", S, "requests started per second"),
    q("ok_per_s", S, "successful responses per second (goodput)"),
    q("dropped", S, "iterations k6 dropped in the step"),
    q(
        "lost_share",
        S,
        "(failed + dropped) / (requests + dropped): offered load lost",
    ),
    q("max_vus", S, "most VUs in use"),
    q(
        "mean_vus",
        S,
        "mean VUs in use (requests in flight at the generator)",
    ),
    q("window_s", S, "length of the step's window (s)"),
    q("truncated", S, "1 when the step was cut short (abort)"),
    q("passed", S, "1 when the step passes every criterion"),
    q(
        "stable",
        S,
        "1 when in-flight did not grow within the step (seed 003)",
    ),
    q(
        "non200",
        S,
        "non-200 responses (count); non200.500 = HTTP 500s, non200.0 = no response",
    ),
    q("ms_cpu_per_ok", S, "app-box CPU ms per successful response"),
    q(
        "cpu",
        S,
        "cpu.<role>: mean CPU of a role, % of one core (fpm, nginx, pg, app, k6, demo)",
    ),
    q(
        "app_cpu",
        S,
        "app-box CPU in cores (fpm + nginx, or the Node app)",
    ),
    q("psi_pct", S, "CPU pressure (PSI some avg10), %"),
    q("host_cpu_max_pct", S, "busiest host CPU, %"),
    q("k6_cpu_max_pct", S, "highest k6 CPU, % of one core"),
    q("dockerd_pct", S, "dockerd CPU, % of one core"),
    q("fpm.samples", S, "php-fpm status samples in the step"),
    q("fpm.idle_min", S, "fewest idle php-fpm workers"),
    q("fpm.total", S, "php-fpm workers"),
    q("fpm.listen_queue_max", S, "longest php-fpm `listen queue`"),
    q(
        "fpm.listen_queue_len",
        S,
        "php-fpm `listen queue len` (the backlog the kernel reports)",
    ),
    q(
        "fpm.saturated_share",
        S,
        "share of samples with idle = 0 and listen queue > 0",
    ),
    q(
        "fpm.accepted_per_s",
        S,
        "php-fpm `accepted conn` per second",
    ),
    q("pg.commits_per_s", S, "PostgreSQL commits per second"),
    q(
        "pg.waits_for_client",
        S,
        "1 when pg connections sit idle in ClientRead (the DB waits for the app)",
    ),
    q("node.elu_max", S, "highest event-loop utilisation"),
    q(
        "node.eld_p99_max_ms",
        S,
        "highest event-loop delay p99 (ms)",
    ),
    q(
        "node.pool_waiting_max",
        S,
        "most requests waiting for a pg pool connection",
    ),
    q(
        "node.pool_waiting_share",
        S,
        "share of samples with pool waiting > 0",
    ),
    q("node.inflight_max", S, "most requests in flight in the app"),
    q(
        "node.inflight_mean",
        S,
        "mean requests in flight in the app",
    ),
    q("node.err5xx", S, "HTTP 5xx the app counted"),
    q("little.lambda_per_s", S, "Little's law: arrival rate"),
    q("little.w_s", S, "Little's law: mean latency (s)"),
    q(
        "little.l_inflight",
        S,
        "Little's law: in-flight counted from requests",
    ),
    q("little.l_vus", S, "Little's law: mean VUs"),
    q(
        "little.w_from_vus_s",
        S,
        "Little's law: W = max VUs / arrival rate (s)",
    ),
    q("little.diff", S, "Little's law: |L - λW| / λW"),
    q("closed.nominal_per_s", S, "closed model: VUs / (R0 + Z)"),
    q(
        "closed.achieved_per_s",
        S,
        "closed model: requests sent per second",
    ),
    q(
        "closed.missing",
        S,
        "closed model: requests real users would have sent",
    ),
    q("closed.implied_r_ms", S, "closed model: R = N / X - Z (ms)"),
    q(
        "knee",
        R,
        "target of the first failing step that is not transient",
    ),
    q(
        "last_passing",
        R,
        "target of the last step passing with every earlier step passing",
    ),
    q(
        "below_knee",
        R,
        "target of the passing step right below the knee",
    ),
    q(
        "knee_index",
        R,
        "position of the knee in the steps, 0 = lowest",
    ),
    q("last_passing_index", R, "position of the last passing step"),
    q("steps", R, "steps recorded"),
    q("lowest_step", R, "target of the lowest step"),
    q("top_step", R, "target of the highest step recorded"),
    q(
        "max_ok_per_s",
        R,
        "highest goodput of any step (the plateau)",
    ),
    q(
        "dropped_iterations",
        R,
        "iterations dropped outside the warm-up",
    ),
    q(
        "pool_ceiling",
        R,
        "N / W with W the mean latency of the lowest step (rps)",
    ),
    q(
        "pool_w_ms",
        R,
        "W of the pool ceiling: mean latency of the lowest step (ms)",
    ),
    q(
        "cpu_ceiling",
        R,
        "cores x 1000 / CPU ms per ok at the last passing step (rps)",
    ),
    q(
        "drain_s",
        R,
        "seconds from the end of the last window to the last response",
    ),
    q(
        "aborted",
        R,
        "1 when k6 stopped the test itself (abort threshold)",
    ),
    q("insufficient_vus", R, "1 when k6 logged `Insufficient VUs`"),
];

/// The fixed config quantities (the labs' own come from their descriptors).
const CONFIG: &[Quantity] = &[
    q("max_connections", C, "PostgreSQL max_connections"),
    q(
        "pg_usable",
        C,
        "connections the app can open: max_connections - reserved slots - the harness's own (measured)",
    ),
    q(
        "slots",
        C,
        "concurrency slots of the app: max_children, pool_max x processes, or demo workers",
    ),
    q("slo_p95_ms", C, "the SLO on p95 (ms)"),
    q("error_budget", C, "the error budget (0.01 = 1 %)"),
    q("hold_s", C, "seconds each step is held"),
    q("vu_cap", C, "k6 maxVUs"),
    q("timeout_s", C, "client timeout (s)"),
    q("think_time_s", C, "closed-model think time (s)"),
    q("app_cpus", C, "CPUs of the app box in the run's layout"),
    q("db_cpus", C, "CPUs of PostgreSQL in the run's layout"),
    q(
        "loadgen_cpus",
        C,
        "CPUs of the load generator in the run's layout",
    ),
    q("online_cpus", C, "online CPUs of the host"),
    q(
        "db_shares_loadgen",
        C,
        "1 when PostgreSQL and k6 share a CPU",
    ),
];

/// Functions: (name, scope, argument kinds `s` string / `n` number / `n+` numbers, help).
pub const FUNCTIONS: &[(&str, Scope, &str, &str)] = &[
    (
        "log",
        R,
        "ss",
        "log(\"laravel\", \"too many clients\"): count of log lines whose message contains the text (case-insensitive)",
    ),
    (
        "log_lines",
        R,
        "s",
        "log_lines(\"php-fpm\"): lines in that log",
    ),
    (
        "saturated",
        S,
        "s",
        "saturated(\"pg core\"): 1 when the step's saturated resources mention the text",
    ),
    (
        "node_error",
        S,
        "s",
        "node_error(\"timeout exceeded\"): errors the Node app counted whose message contains the text",
    ),
    ("min", R, "n+", "min(a, b, ...)"),
    ("max", R, "n+", "max(a, b, ...)"),
    ("abs", R, "n", "abs(x)"),
];

/// Roles of `cpu.<role>`: the sampler columns of every sampled role (all but the base image).
pub fn cpu_roles() -> impl Iterator<Item = &'static str> {
    crate::lab::Role::ALL
        .into_iter()
        .filter(|r| *r != crate::lab::Role::Base)
        .map(|r| r.column())
}

/// Look up a quantity path (`cpu.pg` and `non200.500` included).
pub fn lookup(path: &str) -> Option<Quantity> {
    if let Some(q) = QUANTITIES.iter().find(|q| q.name == path) {
        return Some(*q);
    }
    let (family, member) = path.split_once('.')?;
    let ok = match family {
        "cpu" => cpu_roles().any(|r| r == member),
        "non200" => member.parse::<u16>().is_ok(),
        _ => false,
    };
    ok.then(|| {
        *QUANTITIES
            .iter()
            .find(|q| q.name == family)
            .expect("family")
    })
}

/// Every name, for did-you-mean.
pub fn all_names() -> Vec<String> {
    let mut v: Vec<String> = QUANTITIES.iter().map(|q| q.name.to_string()).collect();
    v.extend(cpu_roles().map(|r| format!("cpu.{r}")));
    v.push("non200.500".into());
    v
}

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
        "fpm" => {
            let f = need(server()?.fpm.as_ref(), || {
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
            let p = need(server()?.pg.as_ref(), || {
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
            let n = need(server()?.node.as_ref(), || {
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
        _ => return Err(format!("`{path}` is not a run quantity")),
    })
}

/// A config quantity from the run's manifest (the experiment as resolved, the CPU layout).
pub fn config_value(m: &Manifest, path: &str) -> Result<f64, Missing> {
    let e = &m.experiment;
    let st = &e.stack;
    let l = &m.cpu_layout;
    if let Some(q) = QUANTITIES.iter().find(|q| q.name == path)
        && let Some(lab) = q.lab
    {
        return crate::lab::descriptor(lab).quantity(st, path);
    }
    Ok(match path {
        "max_connections" => st.postgres.max_connections as f64,
        "pg_usable" => match m
            .measurements
            .get("postgres_slots")
            .and_then(|v| v.get("usable"))
            .and_then(|v| v.as_f64())
        {
            Some(u) => u,
            // Runs recorded before perflab read the slots: PostgreSQL's defaults
            // (3 superuser-reserved, 0 reserved) and the harness's one connection.
            None => (st.postgres.max_connections as f64 - 3.0 - 1.0).max(0.0),
        },
        "slots" => crate::lab::descriptor(e.lab).slots(st)?,
        "slo_p95_ms" => e.load.slo_p95_ms,
        "error_budget" => e.load.error_budget,
        "hold_s" => e.load.hold_s as f64,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_and_unknown_names() {
        assert_eq!(lookup("cpu.pg").unwrap().scope, Scope::Step);
        assert_eq!(lookup("non200.500").unwrap().scope, Scope::Step);
        assert!(lookup("cpu.gpu").is_none());
        assert!(lookup("non200.abc").is_none());
        assert_eq!(lookup("knee").unwrap().scope, Scope::Run);
        assert_eq!(lookup("max_children").unwrap().lab, Some(Lab::Php));
        assert!(lookup("fpm.nope").is_none());
    }

    #[test]
    fn names_are_unique() {
        let mut n: Vec<&str> = QUANTITIES.iter().map(|q| q.name).collect();
        n.sort();
        let len = n.len();
        n.dedup();
        assert_eq!(n.len(), len);
    }
}

//! The names a claim can use: per-step figures of `report.json` (`failed_rate`, `cpu.pg`,
//! `fpm.idle_min`, ...), per-run figures (`knee`, `max_ok_per_s`, ...), the run's recorded
//! config and CPU layout (`max_children`, `app_cpus`, ...), and the functions; with the scope
//! each is read in. Adding a claim on these needs no Rust change. What the values are on a run
//! is `verify::quantity`'s job.

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
    pub lab: Option<&'static str>,
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
const fn ql(name: &'static str, lab: &'static str, help: &'static str) -> Quantity {
    Quantity {
        name,
        scope: Scope::Config,
        lab: Some(lab),
        help,
    }
}

use Scope::{Config as C, Run as R, Step as S};

/// Every fixed name (plus the families `cpu.<role>` and `non200.<status>`).
pub const QUANTITIES: &[Quantity] = &[
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
    q(
        "db_core_busy_pct",
        S,
        "busy % of PostgreSQL's CPUs, whoever used them (the generator shares them on 2 CPUs)",
    ),
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
        "max_sustainable",
        R,
        "the refined max sustainable rate (`run --refine`), else the last passing step",
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
        "pause_open_p99_ms",
        R,
        "`load.pause`: p99 of the open load with the app frozen (ms)",
    ),
    q(
        "pause_closed_p99_ms",
        R,
        "`load.pause`: p99 of the closed twin, uncorrected (ms)",
    ),
    q(
        "pause_corrected_p99_ms",
        R,
        "`load.pause`: p99 of the closed twin corrected from its intended schedule (ms)",
    ),
    q(
        "pause_expected_p99_ms",
        R,
        "`load.pause`: P - 0.01 D, the open load's expected p99 (ms)",
    ),
    q(
        "pause_open_dropped",
        R,
        "`load.pause`: iterations the open load dropped",
    ),
    q(
        "pause_closed_requests",
        R,
        "`load.pause`: requests the closed twin sent in the step",
    ),
    q(
        "pause_corrected_requests",
        R,
        "`load.pause`: the closed twin's requests with the corrected ones",
    ),
    q(
        "pause_closed_missing",
        R,
        "`load.pause`: requests the closed twin did not send while it waited (corrected less sent)",
    ),
    q(
        "pause_s",
        R,
        "`load.pause`: P, how long the app was frozen (s)",
    ),
    q("pause_rate", R, "`load.pause`: the open load's rate (rps)"),
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
    ql("max_children", "php", "php-fpm pm.max_children"),
    ql("backlog", "php", "php-fpm listen.backlog"),
    ql("persistent", "php", "1 with persistent PDO connections"),
    ql(
        "unix_socket",
        "php",
        "1 when nginx reaches php-fpm over a unix socket",
    ),
    ql("pool_max", "node", "pg Pool max per process"),
    ql("processes", "node", "Node processes (cluster workers)"),
    ql("pg_conn_timeout_ms", "node", "PG_CONN_TIMEOUT_MS"),
    ql("workers", "demo", "demo server workers"),
    ql("service_ms", "demo", "demo server service time (ms)"),
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

/// Roles of `cpu.<role>`.
pub const ROLES: [&str; 6] = ["fpm", "nginx", "pg", "app", "k6", "demo"];

/// Look up a quantity path (`cpu.pg` and `non200.500` included).
pub fn lookup(path: &str) -> Option<Quantity> {
    if let Some(q) = QUANTITIES.iter().find(|q| q.name == path) {
        return Some(*q);
    }
    let (family, member) = path.split_once('.')?;
    let ok = match family {
        "cpu" => ROLES.contains(&member),
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
    v.extend(ROLES.iter().map(|r| format!("cpu.{r}")));
    v.push("non200.500".into());
    v
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
        assert_eq!(lookup("max_children").unwrap().lab, Some("php"));
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

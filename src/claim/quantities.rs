//! The one registry of the names a claim can use: per-step figures of `report.json`
//! (`failed_rate`, `cpu.pg`, `fpm.idle_min`, ...), per-run figures (`knee`, `max_ok_per_s`,
//! ...), the run's recorded config and CPU layout (`max_children`, `app_cpus`, ...), and the
//! functions; each row gives a quantity's name, scope and help. Every quantity is a variant of
//! a scope's enum, and `verify::quantity` reads each with an exhaustive `match`: a name without
//! a reader, or a reader without a name, does not compile. Adding a claim on these needs no Rust
//! change; adding a quantity is one row here and its reader's arm. A lab's own settings
//! (`max_children`, `pool_max`, ...) are not rows here: its descriptor declares and reads them
//! (`lab::LabInfo::quantities`), and `all` lists them.
use crate::lab::{Lab, Role};

/// Where a quantity is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// One step of `report.json` (needs `at:` or a selector like `knee.`).
    Step,
    /// The whole run's report.
    Run,
    /// The run's recorded config or CPU layout (manifest.json).
    Config,
}

impl Scope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scope::Step => "step",
            Scope::Run => "run",
            Scope::Config => "config",
        }
    }
}

/// Declares one scope's (or family's) quantities, one row each:
/// `Variant "name" => "help"`; the family's prefix (`fpm.`) is prepended to names.
macro_rules! quantities {
    ($(#[$doc:meta])* $ty:ident, $prefix:literal {
        $($var:ident $name:literal => $help:literal,)*
    }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $ty {
            $($var,)*
        }

        impl $ty {
            /// Every quantity of this kind, in the order `verify --quantities` lists them.
            pub(crate) const ALL: &'static [$ty] = &[$($ty::$var,)*];

            /// The name claims use.
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    $($ty::$var => concat!($prefix, $name),)*
                }
            }

            /// One line on what it is.
            pub(crate) const fn help(self) -> &'static str {
                match self {
                    $($ty::$var => $help,)*
                }
            }
        }
    };
}

quantities! {
    /// A figure of one step of `report.json`.
    StepQ, "" {
        Target "target" => "offered load of the step (rps, or VUs in the closed model)",
        Index "index" => "position of the step, 0 = lowest",
        Requests "requests" => "requests started in the step",
        P50Ms "p50_ms" => "median latency",
        P95Ms "p95_ms" => "p95 latency",
        P99Ms "p99_ms" => "p99 latency",
        MaxMs "max_ms" => "slowest request",
        AvgMs "avg_ms" => "mean latency",
        OkP50Ms "ok_p50_ms" => "median latency of successful requests",
        OkP95Ms "ok_p95_ms" => "p95 latency of successful requests",
        FailedRate "failed_rate" => "failed share of the step's requests (0.2 = 20 %)",
        Failed "failed" => "failed requests (count)",
        SentPerS "sent_per_s" => "requests started per second",
        OkPerS "ok_per_s" => "successful responses per second (goodput)",
        Dropped "dropped" => "iterations k6 dropped in the step",
        LostShare "lost_share" => "(failed + dropped) / (requests + dropped): offered load lost",
        MaxVus "max_vus" => "most VUs in use",
        MeanVus "mean_vus" => "mean VUs in use (requests in flight at the generator)",
        WindowS "window_s" => "length of the step's window (s)",
        Truncated "truncated" => "1 when the step was cut short (abort)",
        Passed "passed" => "1 when the step passes every criterion",
        Stable "stable" => "1 when in-flight did not grow within the step (seed 003)",
        Non200 "non200" => "non-200 responses (count); non200.500 = HTTP 500s, non200.0 = no response",
        MsCpuPerOk "ms_cpu_per_ok" => "app-box CPU ms per successful response",
        Cpu "cpu" => "cpu.<role>: mean CPU of a role, % of one core (fpm, nginx, pg, app, k6, demo)",
        AppCpu "app_cpu" => "app-box CPU in cores (fpm + nginx, or the Node app)",
        PsiPct "psi_pct" => "CPU pressure (PSI some avg10), %",
        HostCpuMaxPct "host_cpu_max_pct" => "busiest host CPU, %",
        DbCoreBusyPct "db_core_busy_pct" => "busy % of PostgreSQL's CPUs, whoever used them (the generator shares them on 2 CPUs)",
        K6CpuMaxPct "k6_cpu_max_pct" => "highest k6 CPU, % of one core",
        DockerdPct "dockerd_pct" => "dockerd CPU, % of one core",
    }
}

quantities! {
    /// `fpm.*`: php-fpm's status samples in a step's window.
    FpmQ, "fpm." {
        Samples "samples" => "php-fpm status samples in the step",
        IdleMin "idle_min" => "fewest idle php-fpm workers",
        Total "total" => "php-fpm workers",
        ListenQueueMax "listen_queue_max" => "longest php-fpm `listen queue`",
        ListenQueueLen "listen_queue_len" => "php-fpm `listen queue len` (the backlog the kernel reports)",
        SaturatedShare "saturated_share" => "share of samples with idle = 0 and listen queue > 0",
        AcceptedPerS "accepted_per_s" => "php-fpm `accepted conn` per second",
    }
}

quantities! {
    /// `pg.*`: PostgreSQL's samples in a step's window.
    PgQ, "pg." {
        CommitsPerS "commits_per_s" => "PostgreSQL commits per second",
        WaitsForClient "waits_for_client" => "1 when pg connections sit idle in ClientRead (the DB waits for the app)",
    }
}

quantities! {
    /// `node.*`: the Node app's metrics in a step's window.
    NodeQ, "node." {
        EluMax "elu_max" => "highest event-loop utilisation",
        EldP99MaxMs "eld_p99_max_ms" => "highest event-loop delay p99 (ms)",
        PoolWaitingMax "pool_waiting_max" => "most requests waiting for a pg pool connection",
        PoolWaitingShare "pool_waiting_share" => "share of samples with pool waiting > 0",
        InflightMax "inflight_max" => "most requests in flight in the app",
        InflightMean "inflight_mean" => "mean requests in flight in the app",
        Err5xx "err5xx" => "HTTP 5xx the app counted",
    }
}

quantities! {
    /// `little.*`: the step's Little's-law row.
    LittleQ, "little." {
        LambdaPerS "lambda_per_s" => "Little's law: arrival rate",
        WS "w_s" => "Little's law: mean latency (s)",
        LInflight "l_inflight" => "Little's law: in-flight counted from requests",
        LVus "l_vus" => "Little's law: mean VUs",
        WFromVusS "w_from_vus_s" => "Little's law: W = max VUs / arrival rate (s)",
        Diff "diff" => "Little's law: |L - λW| / λW",
    }
}

quantities! {
    /// `closed.*`: the step's closed-model row.
    ClosedQ, "closed." {
        NominalPerS "nominal_per_s" => "closed model: VUs / (R0 + Z)",
        AchievedPerS "achieved_per_s" => "closed model: requests sent per second",
        Missing "missing" => "closed model: requests real users would have sent",
        ImpliedRMs "implied_r_ms" => "closed model: R = N / X - Z (ms)",
    }
}

quantities! {
    /// A figure of the whole run's report.
    RunQ, "" {
        Knee "knee" => "target of the first failing step that is not transient",
        MaxSustainable "max_sustainable" => "the refined max sustainable rate (`run --refine`), else the last passing step",
        LastPassing "last_passing" => "target of the last step passing with every earlier step passing",
        BelowKnee "below_knee" => "target of the passing step right below the knee",
        KneeIndex "knee_index" => "position of the knee in the steps, 0 = lowest",
        LastPassingIndex "last_passing_index" => "position of the last passing step",
        Steps "steps" => "steps recorded",
        LowestStep "lowest_step" => "target of the lowest step",
        TopStep "top_step" => "target of the highest step recorded",
        MaxOkPerS "max_ok_per_s" => "highest goodput of any step (the plateau)",
        DroppedIterations "dropped_iterations" => "iterations dropped outside the warm-up",
        PauseOpenP99Ms "pause_open_p99_ms" => "`load.pause`: p99 of the open load with the app frozen (ms)",
        PauseClosedP99Ms "pause_closed_p99_ms" => "`load.pause`: p99 of the closed twin, uncorrected (ms)",
        PauseCorrectedP99Ms "pause_corrected_p99_ms" => "`load.pause`: p99 of the closed twin corrected from its intended schedule (ms)",
        PauseExpectedP99Ms "pause_expected_p99_ms" => "`load.pause`: P - 0.01 D, the open load's expected p99 (ms)",
        PauseOpenDropped "pause_open_dropped" => "`load.pause`: iterations the open load dropped",
        PauseClosedRequests "pause_closed_requests" => "`load.pause`: requests the closed twin sent in the step",
        PauseCorrectedRequests "pause_corrected_requests" => "`load.pause`: the closed twin's requests with the corrected ones",
        PauseClosedMissing "pause_closed_missing" => "`load.pause`: requests the closed twin did not send while it waited (corrected less sent)",
        PauseS "pause_s" => "`load.pause`: P, how long the app was frozen (s)",
        PauseRate "pause_rate" => "`load.pause`: the open load's rate (rps)",
        PoolCeiling "pool_ceiling" => "N / W with W the mean latency of the lowest step (rps)",
        PoolWMs "pool_w_ms" => "W of the pool ceiling: mean latency of the lowest step (ms)",
        CpuCeiling "cpu_ceiling" => "cores x 1000 / CPU ms per ok at the last passing step (rps)",
        DrainS "drain_s" => "seconds from the end of the last window to the last response",
        Aborted "aborted" => "1 when k6 stopped the test itself (abort threshold)",
        InsufficientVus "insufficient_vus" => "1 when k6 logged `Insufficient VUs`",
    }
}

quantities! {
    /// The run's recorded config or CPU layout (manifest.json).
    ConfigQ, "" {
        MaxConnections "max_connections" => "PostgreSQL max_connections",
        PgUsable "pg_usable" => "connections the app can open: max_connections - reserved slots - the harness's own (measured)",
        Slots "slots" => "concurrency slots of the app: max_children, pool_max x processes, or demo workers",
        SloP95Ms "slo_p95_ms" => "the SLO on p95 (ms)",
        ErrorBudget "error_budget" => "the error budget (0.01 = 1 %)",
        HoldS "hold_s" => "seconds each step is held",
        VuCap "vu_cap" => "k6 maxVUs",
        TimeoutS "timeout_s" => "client timeout (s)",
        ThinkTimeS "think_time_s" => "closed-model think time (s)",
        AppCpus "app_cpus" => "CPUs of the app box in the run's layout",
        DbCpus "db_cpus" => "CPUs of PostgreSQL in the run's layout",
        LoadgenCpus "loadgen_cpus" => "CPUs of the load generator in the run's layout",
        OnlineCpus "online_cpus" => "online CPUs of the host",
        DbSharesLoadgen "db_shares_loadgen" => "1 when PostgreSQL and k6 share a CPU",
    }
}

/// A step quantity: a figure of the step, or one of a family of the step's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StepId {
    Plain(StepQ),
    Fpm(FpmQ),
    Pg(PgQ),
    Node(NodeQ),
    Little(LittleQ),
    Closed(ClosedQ),
}

/// Which quantity a name is; its scope is the variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Id {
    Step(StepId),
    Run(RunQ),
    Config(ConfigQ),
    /// A lab's own setting (config scope): one of its descriptor's `info().quantities`, which
    /// the descriptor reads.
    Lab(Lab, &'static str),
}

/// One named quantity, as the claims' checks and `verify --quantities` see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quantity {
    pub id: Id,
    pub name: &'static str,
    pub help: &'static str,
}

impl Quantity {
    /// Where it is read: its `Id`'s kind.
    pub(crate) fn scope(&self) -> Scope {
        match self.id {
            Id::Step(_) => Scope::Step,
            Id::Run(_) => Scope::Run,
            Id::Config(_) | Id::Lab(..) => Scope::Config,
        }
    }

    /// Only meaningful on this lab (a setting of one lab's stack section).
    pub(crate) fn lab(&self) -> Option<Lab> {
        match self.id {
            Id::Lab(lab, _) => Some(lab),
            Id::Step(_) | Id::Run(_) | Id::Config(_) => None,
        }
    }
}

/// One kind's rows as [`Quantity`]s, each wrapped into its [`Id`] by `$id`.
macro_rules! rows {
    ($ty:ident, $id:expr) => {
        $ty::ALL.iter().map(|&q| Quantity {
            id: $id(q),
            name: q.name(),
            help: q.help(),
        })
    };
}

/// The labs' own settings, as their descriptors declare them, in `Lab::ALL`'s order.
fn lab_rows() -> impl Iterator<Item = Quantity> {
    Lab::ALL.into_iter().flat_map(|lab| {
        let declared = crate::lab::descriptor(lab).info().quantities;
        declared.iter().map(move |&(name, help)| Quantity {
            id: Id::Lab(lab, name),
            name,
            help,
        })
    })
}

/// Every quantity (the families `cpu.<role>` and `non200.<status>` once each), in order:
/// step, its families, run, the labs' settings, config.
pub(crate) fn all() -> impl Iterator<Item = Quantity> {
    rows!(StepQ, |q| Id::Step(StepId::Plain(q)))
        .chain(rows!(FpmQ, |q| Id::Step(StepId::Fpm(q))))
        .chain(rows!(PgQ, |q| Id::Step(StepId::Pg(q))))
        .chain(rows!(NodeQ, |q| Id::Step(StepId::Node(q))))
        .chain(rows!(LittleQ, |q| Id::Step(StepId::Little(q))))
        .chain(rows!(ClosedQ, |q| Id::Step(StepId::Closed(q))))
        .chain(rows!(RunQ, Id::Run))
        .chain(lab_rows())
        .chain(rows!(ConfigQ, Id::Config))
}

use Scope::{Run as R, Step as S};

/// Functions: (name, scope, argument kinds `s` string / `n` number / `n+` numbers, help).
pub(crate) const FUNCTIONS: &[(&str, Scope, &str, &str)] = &[
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

/// Look up a quantity path (`cpu.pg` and `non200.500` included: their family's row).
pub(crate) fn lookup(path: &str) -> Option<Quantity> {
    if let Some(q) = all().find(|q| q.name == path) {
        return Some(q);
    }
    let (family, member) = path.split_once('.')?;
    let ok = match family {
        "cpu" => Role::container_columns().any(|r| r == member),
        "non200" => member.parse::<u16>().is_ok(),
        _ => false,
    };
    if ok {
        all().find(|q| q.name == family)
    } else {
        None
    }
}

/// Every name, for did-you-mean.
pub(crate) fn all_names() -> Vec<String> {
    let mut v: Vec<String> = all().map(|q| q.name.to_string()).collect();
    v.extend(Role::container_columns().map(|r| format!("cpu.{r}")));
    v.push("non200.500".into());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_and_unknown_names() {
        assert_eq!(lookup("cpu.pg").unwrap().scope(), Scope::Step);
        assert_eq!(
            lookup("cpu.pg").unwrap().id,
            Id::Step(StepId::Plain(StepQ::Cpu))
        );
        assert_eq!(lookup("non200.500").unwrap().scope(), Scope::Step);
        assert!(lookup("cpu.gpu").is_none());
        assert!(lookup("non200.abc").is_none());
        assert_eq!(lookup("knee").unwrap().scope(), Scope::Run);
        assert_eq!(lookup("max_children").unwrap().lab(), Some(Lab::Php));
        assert_eq!(
            lookup("fpm.idle_min").unwrap().id,
            Id::Step(StepId::Fpm(FpmQ::IdleMin))
        );
        assert!(lookup("fpm.nope").is_none());
    }

    #[test]
    fn names_are_unique_and_scopes_follow_the_kind() {
        let mut n: Vec<&str> = all().map(|q| q.name).collect();
        assert_eq!(
            n.len(),
            107,
            "a row was lost or added: update this count with it"
        );
        n.sort();
        let len = n.len();
        n.dedup();
        assert_eq!(n.len(), len);
        for q in all() {
            assert_eq!(q.lab().is_some(), matches!(q.id, Id::Lab(..)), "{}", q.name);
            assert_eq!(lookup(q.name).map(|l| l.id), Some(q.id), "{}", q.name);
        }
    }
}

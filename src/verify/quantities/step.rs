//! The step quantities, one row each (name, help, reader): the figures of one step of
//! `report.json`, and the families of its window (`fpm.*`, `pg.*`, `node.*`) and checks
//! (`little.*`, `closed.*`), read from a [`StepCtx`].
use super::value::{Missing, b, need};
use crate::analyze::access::AccessRow;
use crate::analyze::model::{ClosedRow, LittleRow, Report, Stability, StepReport, Verdict};
use crate::analyze::samples::{FpmWindow, MemWindow, NodeWindow, PgWindow, WindowServer};

/// One step of a run, as its quantities read it; `path` may name a family's member
/// (`cpu.pg`, `non200.500`).
pub(crate) struct StepCtx<'a> {
    pub r: &'a Report,
    pub s: &'a StepReport,
    pub path: &'a str,
    /// `step <target>`, for the reasons a value is missing.
    step: String,
}

impl<'a> StepCtx<'a> {
    pub(crate) fn new(r: &'a Report, s: &'a StepReport, path: &'a str) -> StepCtx<'a> {
        let step = format!("step {}", s.target);
        StepCtx { r, s, path, step }
    }

    /// `v`, or "`what` in step N".
    fn need<T>(&self, v: Option<T>, what: &str) -> Result<T, Missing> {
        need(v, || format!("{what} in {}", self.step))
    }

    /// The family's member named by the path (`pg` of `cpu.pg`), if any.
    fn member(&self) -> Option<&'a str> {
        self.path.split_once('.').map(|(_, m)| m)
    }

    /// Failed requests (count).
    fn failed(&self) -> f64 {
        (self.s.failed_rate * self.s.requests as f64).round()
    }

    fn lost_share(&self) -> f64 {
        let offered = self.s.requests as f64 + self.s.dropped as f64;
        if offered > 0.0 {
            (self.failed() + self.s.dropped as f64) / offered
        } else {
            0.0
        }
    }

    fn stable(&self) -> Result<f64, Missing> {
        let row = self
            .r
            .checks
            .stability
            .iter()
            .find(|x| x.step == self.s.name);
        let row = need(row, || format!("no stability row for {}", self.step))?;
        Ok(b(row.verdict == Stability::Stable))
    }

    /// `non200` sums every status; `non200.500` is one status's count.
    fn non200(&self) -> f64 {
        match self.member() {
            Some(status) => self.s.non200.get(status).copied().unwrap_or(0) as f64,
            None => self.s.non200.values().sum::<u64>() as f64,
        }
    }

    /// `cpu.<role>`: a role's mean CPU.
    fn cpu(&self) -> Result<f64, Missing> {
        let Some(role) = self.member() else {
            return Err(format!("`{}` is not a step quantity", self.path));
        };
        let v = self.server()?.cpu_pct.get(role).copied();
        self.need(v, &format!("no CPU samples of `{role}`"))
    }

    /// Whether a quantity (`worker_pss_mib.fpm`) reads the memory sampler (`mem`): a run
    /// recorded before perflab sampled memory has none in any step, and a claim on it is
    /// n/a there (`eval`), not a fail.
    pub(crate) fn reads_memory(path: &str) -> bool {
        let base = path.split('.').next().unwrap_or(path);
        [
            StepQ::PssMib,
            StepQ::WorkerPssTotalMib,
            StepQ::WorkerPssMib,
            StepQ::WorkerPrivateMib,
            StepQ::MemWorkers,
        ]
        .iter()
        .any(|q| q.name() == base)
    }

    /// A figure of the memory of the role the path names (`pss_mib.fpm`).
    fn mem(&self, f: fn(&MemWindow) -> f64) -> Result<f64, Missing> {
        let Some(role) = self.member() else {
            return Err(format!("`{}` needs a role: `{}.fpm`", self.path, self.path));
        };
        let m = self.server()?.memory.get(role);
        self.need(m, &format!("no memory samples of `{role}`"))
            .map(f)
    }

    fn server(&self) -> Result<&'a WindowServer, Missing> {
        self.need(self.s.server.as_ref(), "no server samples")
    }

    /// A declared source's figure (`nginx.active_max`): the step's, or why it has none.
    pub(crate) fn source(&self, name: &str) -> Result<f64, Missing> {
        let w = self.server()?;
        if let Some(v) = w.sources.get(name) {
            return Ok(*v);
        }
        let why = w.unusable.get(name).map_or("no samples", String::as_str);
        let source = name.split('.').next().unwrap_or(name);
        Err(format!("`{name}`: {source} {why} in {}", self.step))
    }

    fn fpm(&self) -> Result<&'a FpmWindow, Missing> {
        self.need(self.server()?.fpm.as_ref(), "no php-fpm status samples")
    }

    fn pg(&self) -> Result<&'a PgWindow, Missing> {
        self.need(self.server()?.pg.as_ref(), "no pg_stat_activity samples")
    }

    fn node(&self) -> Result<&'a NodeWindow, Missing> {
        self.need(self.server()?.node.as_ref(), "no Node app metrics")
    }

    fn little(&self) -> Result<&'a LittleRow, Missing> {
        let l = self.r.checks.little.iter().find(|x| x.step == self.s.name);
        need(l, || format!("no Little's-law row for {}", self.step))
    }

    /// The step's access-log row (`stack.php.access_log`), one of its figures.
    fn access(&self, f: fn(&AccessRow) -> Option<f64>) -> Result<f64, Missing> {
        let row = self.r.access.iter().find(|x| x.step == self.s.name);
        let row = need(row, || {
            format!("no access-log row for {} (access_log off?)", self.step)
        })?;
        need(f(row), || {
            format!("too few access-log lines in {}", self.step)
        })
    }

    fn closed(&self) -> Result<&'a ClosedRow, Missing> {
        let c = self.r.checks.closed.iter().find(|x| x.step == self.s.name);
        need(c, || {
            format!("no closed-model row for {} (open-model run?)", self.step)
        })
    }
}

quantities! {
    /// A figure of one step of `report.json`, or of a family of the step's window and checks.
    StepQ, |c: &StepCtx<'_>| {
        Target "target" => "offered load of the step (rps, or VUs in the closed model)"
            => c.s.target as f64,
        Index "index" => "position of the step, 0 = lowest"
            => c.r.steps.iter().position(|x| x.name == c.s.name).unwrap_or(0) as f64,
        Requests "requests" => "requests started in the step" => c.s.requests as f64,
        P50Ms "p50_ms" => "median latency" => c.s.p50_ms,
        P95Ms "p95_ms" => "p95 latency" => c.s.p95_ms,
        P99Ms "p99_ms" => "p99 latency" => c.s.p99_ms,
        MaxMs "max_ms" => "slowest request" => c.s.max_ms,
        AvgMs "avg_ms" => "mean latency" => c.s.avg_ms,
        OkP50Ms "ok_p50_ms" => "median latency of successful requests" => c.s.ok_p50_ms,
        OkP95Ms "ok_p95_ms" => "p95 latency of successful requests" => c.s.ok_p95_ms,
        FailedRate "failed_rate" => "failed share of the step's requests (0.2 = 20 %)"
            => c.s.failed_rate,
        Failed "failed" => "failed requests (count)" => c.failed(),
        SentPerS "sent_per_s" => "requests started per second" => c.s.sent_per_s,
        OkPerS "ok_per_s" => "successful responses per second (goodput)" => c.s.ok_per_s,
        Dropped "dropped" => "iterations k6 dropped in the step" => c.s.dropped as f64,
        LostShare "lost_share" => "(failed + dropped) / (requests + dropped): offered load lost"
            => c.lost_share(),
        MaxVus "max_vus" => "most VUs in use" => c.need(c.s.max_vus, "no VU samples")?,
        MeanVus "mean_vus" => "mean VUs in use (requests in flight at the generator)"
            => c.need(c.s.mean_vus, "no VU samples")?,
        WindowS "window_s" => "length of the step's window (s)" => c.s.window_s,
        Truncated "truncated" => "1 when the step was cut short (abort)" => b(c.s.truncated),
        Passed "passed" => "1 when the step passes every criterion"
            => b(c.s.verdict == Verdict::Pass),
        Stable "stable" => "1 when in-flight did not grow within the step (seed 003)"
            => c.stable()?,
        Non200 "non200"
            => "non-200 responses (count); non200.500 = HTTP 500s, non200.0 = no response"
            => c.non200(),
        MsCpuPerOk "ms_cpu_per_ok" => "app-box CPU ms per successful response"
            => c.need(c.s.ms_cpu_per_ok, "no app CPU samples")?,
        Cpu "cpu"
            => "cpu.<role>: mean CPU of a role, % of one core (fpm, nginx, pg, app, k6, demo)"
            => c.cpu()?,
        PssMib "pss_mib"
            => "pss_mib.<role>: mean PSS of a role's processes, MiB (fpm: the master and its workers)"
            => c.mem(|m| m.pss_mib)?,
        WorkerPssTotalMib "worker_pss_total_mib"
            => "worker_pss_total_mib.<role>: the workers' PSS summed, MiB (fpm: the pool's total)"
            => c.mem(|m| m.worker_pss_total_mib)?,
        WorkerPssMib "worker_pss_mib"
            => "worker_pss_mib.<role>: one worker's PSS, MiB (the pool's total over its workers)"
            => c.mem(|m| m.worker_pss_mib)?,
        WorkerPrivateMib "worker_private_mib"
            => "worker_private_mib.<role>: one worker's private pages, MiB (what one more adds)"
            => c.mem(|m| m.worker_private_mib)?,
        MemWorkers "mem_workers"
            => "mem_workers.<role>: the workers the memory figures count (most seen)"
            => c.mem(|m| m.workers as f64)?,
        AppCpu "app_cpu" => "app-box CPU in cores (fpm + nginx, or the Node app)"
            => c.need(c.server()?.app_cores(), "no app-box CPU samples")?,
        PsiPct "psi_pct" => "CPU pressure (PSI some avg10), %"
            => c.need(c.server()?.psi_pct, "no PSI")?,
        HostCpuMaxPct "host_cpu_max_pct" => "busiest host CPU, %"
            => c.need(c.server()?.host_cpu_max_pct, "no host CPU samples")?,
        DbCoreBusyPct "db_core_busy_pct"
            => "busy % of PostgreSQL's CPUs, whoever used them (the generator shares them on 2 CPUs)"
            => c.need(c.server()?.db_core_busy_pct, "no host CPU samples or CPU layout")?,
        K6CpuMaxPct "k6_cpu_max_pct" => "highest k6 CPU, % of one core"
            => c.need(c.server()?.k6_cpu_max_pct, "no k6 CPU samples")?,
        DockerdPct "dockerd_pct" => "dockerd CPU, % of one core"
            => c.need(c.server()?.dockerd_pct, "no dockerd samples")?,

        // `fpm.*`: php-fpm's status samples in the step's window.
        FpmSamples "fpm.samples" => "php-fpm status samples in the step"
            => c.fpm()?.samples as f64,
        FpmIdleMin "fpm.idle_min" => "fewest idle php-fpm workers" => c.fpm()?.idle_min as f64,
        FpmTotal "fpm.total" => "php-fpm workers" => c.fpm()?.total as f64,
        FpmListenQueueMax "fpm.listen_queue_max" => "longest php-fpm `listen queue`"
            => c.fpm()?.listen_queue_max as f64,
        FpmListenQueueLen "fpm.listen_queue_len"
            => "php-fpm `listen queue len` (the backlog the kernel reports)"
            => c.fpm()?.listen_queue_len as f64,
        FpmSaturatedShare "fpm.saturated_share"
            => "share of samples with idle = 0 and listen queue > 0"
            => c.fpm()?.saturated_share,
        FpmAcceptedPerS "fpm.accepted_per_s" => "php-fpm `accepted conn` per second"
            => c.need(c.fpm()?.accepted_per_s, "fewer than 2 php-fpm samples")?,
        FpmMaxChildrenReached "fpm.max_children_reached"
            => "times php-fpm wanted a worker past max_children in the step (0 under pm = static)"
            => c.fpm()?.max_children_reached as f64,

        // `pg.*`: PostgreSQL's samples in the step's window.
        PgCommitsPerS "pg.commits_per_s" => "PostgreSQL commits per second"
            => c.need(c.pg()?.commits_per_s, "fewer than 2 pg samples")?,
        PgWaitsForClient "pg.waits_for_client"
            => "1 when pg connections sit idle in ClientRead (the DB waits for the app)"
            => b(c.pg()?.waits_for_client),

        // `node.*`: the Node app's metrics in the step's window.
        NodeEluMax "node.elu_max" => "highest event-loop utilisation" => c.node()?.elu_max,
        NodeEldP99MaxMs "node.eld_p99_max_ms" => "highest event-loop delay p99 (ms)"
            => c.node()?.eld_p99_max_ms,
        NodePoolWaitingMax "node.pool_waiting_max"
            => "most requests waiting for a pg pool connection"
            => c.node()?.pool_waiting_max as f64,
        NodePoolWaitingShare "node.pool_waiting_share" => "share of samples with pool waiting > 0"
            => c.node()?.pool_waiting_share,
        NodeInflightMax "node.inflight_max" => "most requests in flight in the app"
            => c.node()?.inflight_max as f64,
        NodeInflightMean "node.inflight_mean" => "mean requests in flight in the app"
            => c.node()?.inflight_mean,
        NodeErr5xx "node.err5xx" => "HTTP 5xx the app counted" => c.node()?.err5xx as f64,

        // `little.*`: the step's Little's-law row.
        LittleLambdaPerS "little.lambda_per_s" => "Little's law: arrival rate"
            => c.little()?.lambda_per_s,
        LittleWS "little.w_s" => "Little's law: mean latency (s)" => c.little()?.w_s,
        LittleLInflight "little.l_inflight" => "Little's law: in-flight counted from requests"
            => c.little()?.l_inflight,
        LittleLVus "little.l_vus" => "Little's law: mean VUs"
            => c.need(c.little()?.l_vus, "no VU samples")?,
        LittleWFromVusS "little.w_from_vus_s" => "Little's law: W = max VUs / arrival rate (s)"
            => c.need(c.little()?.w_from_vus_s, "no VU samples")?,
        LittleDiff "little.diff" => "Little's law: |L - λW| / λW" => c.little()?.diff,

        // `access.*`: the step's access-log row (php-fpm `%d`, nginx `$request_time`).
        AccessFpmP50Ms "access.fpm_p50_ms" => "php-fpm access log: p50 request duration %d (ms)"
            => c.access(|a| a.fpm_duration_p50_ms)?,
        AccessNginxP50Ms "access.nginx_p50_ms" => "nginx access log: p50 $request_time (ms)"
            => c.access(|a| a.nginx_request_p50_ms)?,
        AccessConnectP50Ms "access.upstream_connect_p50_ms"
            => "nginx access log: p50 $upstream_connect_time (ms)"
            => c.access(|a| a.upstream_connect_p50_ms)?,
        AccessBacklogP50Ms "access.backlog_p50_ms"
            => "nginx p50 - php-fpm p50: the wait before PHP took the request (ms)"
            => c.access(|a| a.backlog_p50_ms)?,
        AccessWorkers "access.workers" => "php-fpm workers that served a request (access log %p)"
            => c.access(|a| a.workers.as_ref().map(|w| w.served as f64))?,
        AccessWorkersFailing "access.workers_failing"
            => "php-fpm workers every one of whose requests failed (>= 500)"
            => c.access(|a| a.workers.as_ref().map(|w| w.always_failed as f64))?,
        AccessWorkersMixed "access.workers_mixed"
            => "php-fpm workers with both failed and successful requests"
            => c.access(|a| a.workers.as_ref().map(|w| w.mixed as f64))?,
        AccessFailingShare "access.failing_share"
            => "share of the requests served by the workers that failed every one"
            => c.access(|a| a.workers.as_ref().map(|w| w.failing_share))?,
        AccessSteals "access.steals"
            => "requests a php-fpm worker took out of the accept queue's turn (served again with under half the workers between)"
            => c.access(|a| a.workers.as_ref()?.turns.as_ref().map(|t| t.steals as f64))?,
        AccessFailingSteals "access.failing_steals"
            => "of those, taken by a worker that failed every request: one failure more than the turn gives"
            => c.access(|a| a.workers.as_ref()?.turns.as_ref().map(|t| t.failing_steals as f64))?,
        AccessFailingRobbed "access.failing_robbed"
            => "always-failing workers a steal sent to the end of the queue: one failure fewer, at most"
            => c.access(|a| a.workers.as_ref()?.turns.as_ref().map(|t| t.failing_robbed as f64))?,

        // `closed.*`: the step's closed-model row.
        ClosedNominalPerS "closed.nominal_per_s" => "closed model: VUs / (R0 + Z)"
            => c.closed()?.nominal_per_s,
        ClosedAchievedPerS "closed.achieved_per_s" => "closed model: requests sent per second"
            => c.closed()?.achieved_per_s,
        ClosedMissing "closed.missing" => "closed model: requests real users would have sent"
            => c.closed()?.missing,
        ClosedImpliedRMs "closed.implied_r_ms" => "closed model: R = N / X - Z (ms)"
            => c.closed()?.implied_r_ms,
    }
}

//! What the live page shows, built from what the run already has (pure: no I/O, no clock):
//! k6's snapshots as the progress line polls them (`load::live::Snapshot`), the samplers'
//! records as they land in `samples/`, and the plan's steps, each judged by the analysis'
//! own criteria (`analyze::run::judge_live`) once its window closed. `LiveData` is `/data`.

use serde::Serialize;

use crate::analyze::run::{LiveStep, judge_live};
use crate::analyze::samples::{Samples, Span};
use crate::analyze::{LoadModel, Params};
use crate::load::live::Snapshot;
use crate::plan::{CpuLayout, Plan};
use crate::sample::records::{CgroupSample, FpmSample, HostSample, PgSample};

/// How long after a step's window ends its verdict is taken: k6's sub-metrics then hold the
/// responses that were still in flight at the window's end (up to this long).
pub(crate) const CLOSE_AFTER_S: f64 = 2.0;
/// At most this many points per series (an hour at one per second).
pub(crate) const MAX_POINTS: usize = 3600;

/// One poll of k6, as the page plots it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientPoint {
    /// Seconds since k6's start.
    pub t: f64,
    /// The plan's target at that moment (rps or VUs).
    pub offered: u32,
    /// Per second since the previous answered poll (none on the first).
    pub sent_per_s: Option<f64>,
    pub ok_per_s: Option<f64>,
    pub failed_per_s: Option<f64>,
    /// Mean duration of the requests completed since the previous poll (ms).
    pub mean_ms: Option<f64>,
    /// The current step's p50 and p95 so far (k6's per-step sub-metric, ms).
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub failed: u64,
    pub dropped: u64,
    pub vus: u64,
}

/// One server-side quantity over time, from one sampler file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// The plot it goes in: `cpu`, `fpm`, `pg`, `host`.
    pub chart: &'static str,
    /// Its name in the legend, and its Prometheus name after `perflab_` (`live::prom`).
    pub name: &'static str,
    /// The container role (`fpm`, `pg`, ...) or `host`.
    pub role: String,
    /// Its ceiling when it has one (a role's cores).
    pub ceiling: Option<f64>,
    /// (seconds since k6's start, value).
    pub points: Vec<(f64, f64)>,
}

/// One step of the plan, its window and, once closed, its verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepView {
    /// 1-based.
    pub step: usize,
    pub target: u32,
    pub start_s: f64,
    pub hold_start_s: f64,
    pub hold_end_s: f64,
    /// `pass`, `fail`, `transient` once the window closed.
    pub verdict: Option<&'static str>,
    pub failures: Vec<String>,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub sent_per_s: Option<f64>,
    pub ok_per_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KneeView {
    pub target: u32,
    pub why: String,
}

/// The state `/data` serves.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveData {
    pub run: String,
    pub experiment: String,
    /// `rps` (open model) or `VUs` (closed).
    pub unit: &'static str,
    /// `waiting` (before k6 starts), `running`, `finished`.
    pub status: &'static str,
    /// k6's start (unix ms): every `t` here is seconds after it.
    pub k6_start_ms: i64,
    /// Seconds since k6's start at the last poll, and the plan's length.
    pub now_s: f64,
    pub total_s: f64,
    /// Where the last poll fell: `warm-up`, `ramp`, `hold`, ...
    pub phase: &'static str,
    pub step: usize,
    pub steps: Vec<StepView>,
    pub knee: Option<KneeView>,
    pub client: Vec<ClientPoint>,
    pub server: Vec<Series>,
    /// Where report.html is, relative to the page, once the run wrote it.
    pub report: Option<String>,
    /// Say what the page cannot show (e.g. a source only read after the run).
    pub notes: Vec<String>,
    /// `/data?since=T`: only the points after T (the server's from `SERVER_OVERLAP_S` before:
    /// a sampler line can land after the poll that followed its time); none: every point.
    pub since: Option<f64>,
}

/// How far before `since` the server series are sent again (the page keeps each point once).
pub(crate) const SERVER_OVERLAP_S: f64 = 5.0;

impl LiveData {
    pub(crate) fn waiting(run: &str) -> LiveData {
        LiveData {
            run: run.to_owned(),
            experiment: String::new(),
            unit: "rps",
            status: "waiting",
            k6_start_ms: 0,
            now_s: 0.0,
            total_s: 0.0,
            phase: "starting",
            step: 0,
            steps: Vec::new(),
            knee: None,
            client: Vec::new(),
            server: Vec::new(),
            report: None,
            notes: Vec::new(),
            since: None,
        }
    }

    /// The state with only the points after `t` (the page's refresh: what it lacks, so each
    /// request costs what a second adds, not what the run holds).
    pub(crate) fn since(&self, t: f64) -> LiveData {
        let tail = |n: usize, at: &dyn Fn(usize) -> f64, after: f64| {
            let mut i = n;
            while i > 0 && at(i - 1) > after {
                i -= 1;
            }
            i
        };
        let c = tail(self.client.len(), &|i| self.client[i].t, t);
        LiveData {
            client: self.client[c..].to_vec(),
            server: self
                .server
                .iter()
                .map(|s| {
                    let from = tail(s.points.len(), &|i| s.points[i].0, t - SERVER_OVERLAP_S);
                    Series {
                        points: s.points[from..].to_vec(),
                        ..s.clone_empty()
                    }
                })
                .collect(),
            since: Some(t),
            steps: self.steps.clone(),
            knee: self.knee.clone(),
            notes: self.notes.clone(),
            run: self.run.clone(),
            experiment: self.experiment.clone(),
            report: self.report.clone(),
            ..*self
        }
    }
}

impl Series {
    fn clone_empty(&self) -> Series {
        Series {
            chart: self.chart,
            name: self.name,
            role: self.role.clone(),
            ceiling: self.ceiling,
            points: Vec::new(),
        }
    }
}

/// One load's state: the page's data and what building it needs.
pub(crate) struct Building {
    pub data: LiveData,
    plan: Plan,
    params: Params,
    model: LoadModel,
    layout: CpuLayout,
    k6_start_ms: i64,
    last: Option<(f64, Snapshot)>,
    /// Per step: dropped and max VUs seen inside its window.
    window_dropped: Vec<(Option<u64>, u64)>,
    window_vus: Vec<f64>,
    /// The steps closed so far, each judged once on its figures at its close.
    closed: Vec<LiveStep>,
    /// The samplers' lines read so far: each closed step's server window
    /// (`analyze::samples::window`, the report's reduction).
    samples: Samples,
}

impl Building {
    pub(crate) fn new(
        run: &str,
        plan: &Plan,
        layout: &CpuLayout,
        k6_start_ms: i64,
        notes: Vec<String>,
    ) -> Building {
        let mut params = Params::new(plan.slo_p95_ms);
        crate::rundir::inputs::params_from_plan(plan, &mut params);
        params.app_cores = Some(layout.app.len() as f64);
        params.app_cpus = layout.app.cpus().to_vec();
        params.db_cpus = layout.db.cpus().to_vec();
        params.loadgen_cpus = layout.loadgen.cpus().to_vec();
        let model = params.model.unwrap_or(LoadModel::Open);
        let mut data = LiveData::waiting(run);
        data.experiment = plan.experiment_id.clone();
        data.unit = match model {
            LoadModel::Open => "rps",
            LoadModel::Closed => "VUs",
        };
        data.total_s = plan.total_s as f64;
        data.k6_start_ms = k6_start_ms;
        data.notes = notes;
        data.steps = plan
            .steps
            .iter()
            .map(|s| StepView {
                step: s.index + 1,
                target: s.target,
                start_s: s.start_s as f64,
                hold_start_s: s.hold_start_s as f64,
                hold_end_s: s.hold_end_s as f64,
                verdict: None,
                failures: Vec::new(),
                p50_ms: None,
                p95_ms: None,
                sent_per_s: None,
                ok_per_s: None,
            })
            .collect();
        let n = plan.steps.len();
        Building {
            data,
            plan: plan.clone(),
            params,
            model,
            layout: layout.clone(),
            k6_start_ms,
            last: None,
            window_dropped: vec![(None, 0); n],
            window_vus: vec![0.0; n],
            closed: Vec::new(),
            samples: Samples::default(),
        }
    }

    /// Seconds since k6's start of a unix-ms time.
    fn offset(&self, t_ms: i64) -> f64 {
        (t_ms - self.k6_start_ms) as f64 / 1000.0
    }

    /// A poll of k6 at `t_ms`: `None` when a generator did not answer.
    pub(crate) fn poll(&mut self, t_ms: i64, snap: Option<Snapshot>) {
        let t = self.offset(t_ms);
        let pos = crate::load::live::position(&self.plan, t);
        self.data.status = "running";
        self.data.now_s = t;
        self.data.phase = pos.phase;
        self.data.step = pos.step;
        let Some(snap) = snap else {
            return;
        };
        let cur = self.plan.steps.get(pos.step.wrapping_sub(1));
        let step_fig = cur
            .and_then(|s| snap.steps.get(&s.tag))
            .filter(|f| f.requests > 0);
        let mut p = ClientPoint {
            t,
            offered: if pos.step == 0 && pos.phase == "warm-up" {
                self.plan.warmup_rps
            } else {
                pos.target
            },
            sent_per_s: None,
            ok_per_s: None,
            failed_per_s: None,
            mean_ms: None,
            p50_ms: step_fig.map(|f| f.p50_ms),
            p95_ms: step_fig.map(|f| f.p95_ms),
            failed: snap.totals.failed,
            dropped: snap.totals.dropped,
            vus: snap.totals.vus,
        };
        if let Some((t0, prev)) = &self.last
            && t > *t0
        {
            let dt = t - t0;
            let (a, b) = (&prev.totals, &snap.totals);
            let sent = b.requests.saturating_sub(a.requests);
            let failed = b.failed.saturating_sub(a.failed);
            p.sent_per_s = Some(sent as f64 / dt);
            p.ok_per_s = Some(sent.saturating_sub(failed) as f64 / dt);
            p.failed_per_s = Some(failed as f64 / dt);
            if sent > 0 {
                let sum = |s: &Snapshot| s.avg_ms * s.totals.requests as f64;
                p.mean_ms = Some(((sum(&snap) - sum(prev)) / sent as f64).max(0.0));
            }
        }
        self.track_windows(t, &snap);
        push_bounded(&mut self.data.client, p);
        self.last = Some((t, snap));
        self.close_steps(t);
    }

    /// k6 stopped: every step left is judged on the last poll's figures.
    pub(crate) fn load_ended(&mut self) {
        self.close_steps(f64::INFINITY);
    }

    /// Dropped iterations at each window's start, max VUs inside it.
    fn track_windows(&mut self, t: f64, snap: &Snapshot) {
        for (i, s) in self.plan.steps.iter().enumerate() {
            let (from, to) = (s.hold_start_s as f64, s.hold_end_s as f64);
            if t >= from - 1.0 && t <= to && self.window_dropped[i].0.is_none() {
                self.window_dropped[i].0 = Some(snap.totals.dropped);
            }
            if t >= from && t <= to + 1.0 {
                self.window_vus[i] = self.window_vus[i].max(snap.totals.vus as f64);
                self.window_dropped[i].1 = snap.totals.dropped;
            }
        }
    }

    /// Judge every step whose window closed `CLOSE_AFTER_S` ago, with the analysis' criteria.
    fn close_steps(&mut self, t: f64) {
        let Some((_, snap)) = &self.last else { return };
        let before = self.closed.len();
        for (i, s) in self.plan.steps.iter().enumerate().skip(before) {
            if t < s.hold_end_s as f64 + CLOSE_AFTER_S {
                break;
            }
            // a step k6 never ran (it aborted) is not judged: no figures, no verdict
            let Some(fig) = snap.steps.get(&s.tag).copied().filter(|f| f.requests > 0) else {
                break;
            };
            let window_s = (s.hold_end_s - s.hold_start_s).max(1) as f64;
            let failed = (fig.failed_rate * fig.requests as f64).round() as u64;
            let (d0, d1) = self.window_dropped[i];
            let start_ms = self.k6_start_ms + s.hold_start_s as i64 * 1000;
            let p = &self.params;
            let server = (!self.samples.cgroup.is_empty()).then(|| {
                let span = Span::step(start_ms, self.k6_start_ms + s.hold_end_s as i64 * 1000);
                crate::analyze::samples::window(
                    &self.samples,
                    span,
                    p.app_cores,
                    &p.pinning(),
                    &p.rules,
                )
            });
            self.closed.push(LiveStep {
                target: s.target,
                requests: fig.requests,
                failed,
                p50_ms: fig.p50_ms,
                p95_ms: fig.p95_ms,
                p99_ms: fig.p99_ms.unwrap_or(fig.p95_ms),
                sent_per_s: fig.requests as f64 / window_s,
                ok_per_s: fig.requests.saturating_sub(failed) as f64 / window_s,
                dropped: d1.saturating_sub(d0.unwrap_or(d1)),
                max_vus: Some(self.window_vus[i]),
                start_ms,
                window_s,
                server,
            });
        }
        if self.closed.len() == before {
            return;
        }
        let live = &self.closed;
        let j = judge_live(live, &self.params, self.model);
        for ((view, l), (verdict, failures)) in self.data.steps.iter_mut().zip(live).zip(j.verdicts)
        {
            view.verdict = Some(verdict.as_str());
            view.failures = failures;
            view.p50_ms = Some(l.p50_ms);
            view.p95_ms = Some(l.p95_ms);
            view.sent_per_s = Some(l.sent_per_s);
            view.ok_per_s = Some(l.ok_per_s);
        }
        self.data.knee = j
            .knee
            .zip(j.why)
            .map(|(target, why)| KneeView { target, why });
    }

    /// The series a role's cgroup line feeds: its CPU against its slot's cores.
    pub(crate) fn cgroup(&mut self, s: &CgroupSample) {
        self.samples.cgroup.push(s.clone());
        let ceiling = self.layout.get(s.role.slot()).len() as f64;
        let t = self.offset(s.t);
        self.add(
            "cpu",
            "container_cpu_cores",
            s.role.column(),
            Some(ceiling),
            t,
            s.cpu_cores,
        );
    }

    pub(crate) fn fpm(&mut self, s: &FpmSample) {
        self.samples.fpm.push(s.clone());
        let t = self.offset(s.t);
        let st = &s.status;
        self.add(
            "fpm",
            "fpm_busy_workers",
            "fpm",
            Some(st.total_processes as f64),
            t,
            st.active_processes as f64,
        );
        self.add(
            "fpm",
            "fpm_listen_queue",
            "fpm",
            None,
            t,
            st.listen_queue as f64,
        );
    }

    pub(crate) fn pg(&mut self, s: &PgSample) {
        self.samples.pg.push(s.clone());
        let t = self.offset(s.t);
        let count = |f: &dyn Fn(&crate::sample::records::PgActivity) -> bool| {
            s.activity
                .iter()
                .filter(|a| f(a))
                .map(|a| a.count)
                .sum::<u64>() as f64
        };
        let active = count(&|a| a.state == "active");
        let client_read =
            count(&|a| a.state == "idle" && a.wait_event.as_deref() == Some("ClientRead"));
        self.add("pg", "pg_active_connections", "pg", None, t, active);
        self.add(
            "pg",
            "pg_idle_client_read_connections",
            "pg",
            None,
            t,
            client_read,
        );
    }

    /// Steal and the busy share of the app's CPUs (busy includes the app's own work).
    pub(crate) fn host(&mut self, s: &HostSample) {
        self.samples.host.push(s.clone());
        let t = self.offset(s.t);
        let app = self.layout.app.cpus().to_vec();
        let pick = |v: &[f64]| -> Option<f64> {
            let vals: Vec<f64> = v
                .iter()
                .enumerate()
                .filter(|(i, _)| {
                    let cpu = s.cpus.get(*i).copied().unwrap_or(*i as u32);
                    app.contains(&cpu)
                })
                .map(|(_, x)| *x)
                .collect();
            (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
        };
        if let Some(steal) = pick(&s.cpu_steal_pct) {
            self.add(
                "host",
                "app_cpu_steal_ratio",
                "app",
                Some(1.0),
                t,
                steal / 100.0,
            );
        }
        if let Some(busy) = pick(&s.cpu_busy_pct) {
            self.add(
                "host",
                "app_cpu_busy_ratio",
                "app",
                Some(1.0),
                t,
                busy / 100.0,
            );
        }
    }

    fn add(
        &mut self,
        chart: &'static str,
        name: &'static str,
        role: &str,
        ceiling: Option<f64>,
        t: f64,
        v: f64,
    ) {
        let i = match self
            .data
            .server
            .iter()
            .position(|s| s.name == name && s.role == role)
        {
            Some(i) => i,
            None => {
                self.data.server.push(Series {
                    chart,
                    name,
                    role: role.to_owned(),
                    ceiling,
                    points: Vec::new(),
                });
                self.data.server.len() - 1
            }
        };
        let s = &mut self.data.server[i];
        s.ceiling = ceiling.or(s.ceiling);
        push_bounded(&mut s.points, (t, v));
    }
}

fn push_bounded<T>(v: &mut Vec<T>, x: T) {
    if v.len() >= MAX_POINTS {
        v.remove(0);
    }
    v.push(x);
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;

//! The physical bounds of a step's figures: a CPU share at most the cores its role is pinned
//! to (plus [`CPU_JITTER_PCT`]), shares and rates in [0, 1] (or [0, 100] %), counts and
//! latencies at least 0, latencies ordered p50 <= p95 <= p99 <= max. A figure outside is not
//! shown as if it were true: an optional one is taken out of the step (the table prints `-`),
//! every one is listed in `Report::unusable` with why (a caveat says so, and claims judged on
//! it are n/a), and a figure the window could not measure (too few samples inside) is listed
//! the same way. Pure.
use super::model::{Params, Report, StepReport};
use super::samples::WindowServer;
use crate::lab::{Role, Slot};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Sampling jitter allowed above a CPU share's ceiling, in % of one core per pinned core: a
/// window's CPU is the cgroup counter's increase across it, so only the few ms by which a
/// reading lags its tick at each edge (up to 17 ms in the recorded runs, over windows of 2 s
/// and more: under 2 %) can carry it past the cores it may use.
pub const CPU_JITTER_PCT: f64 = 5.0;

/// Criterion 5's phrases that cite a CPU figure, by their start, and that figure: a phrase is
/// taken out with its figure, and a claim on it (`saturated("pg core")`) is n/a.
const CITING: [(&str, &str); 2] = [("app CPU ", "app_cpu"), ("pg core at", "cpu.pg")];

/// The figure a criterion 5 phrase mentioning `text` cites (`"pg core"` -> `cpu.pg`), if any.
pub fn cited_figure(text: &str) -> Option<&'static str> {
    let t = text.trim().to_lowercase();
    CITING
        .iter()
        .find(|(start, _)| !t.is_empty() && start.to_lowercase().contains(&t))
        .map(|(_, figure)| *figure)
}

/// One figure of a step that is not shown as measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unusable {
    pub step: String,
    /// Its name in claims: `cpu.app`, `app_cpu`, `ms_cpu_per_ok`, `p95_ms`, `psi_pct`.
    pub figure: String,
    /// The value it read (`None`: the window could not measure it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    pub why: String,
}

impl Unusable {
    /// The caveat: "step 06_rps257: cpu.app read 119.9, outside its bounds (> 105 % for the 1
    /// CPU the app box is pinned to): not shown, claims on it are n/a".
    pub fn caveat(&self) -> String {
        match self.value {
            Some(v) if self.why.starts_with("derived from") => format!(
                "step {}: {} read {}, {}: not shown, claims on it are n/a",
                self.step,
                self.figure,
                fmt(v),
                self.why
            ),
            Some(v) => format!(
                "step {}: {} read {}, outside its physical bounds ({}): not shown, claims on it are n/a",
                self.step,
                self.figure,
                fmt(v),
                self.why
            ),
            None => format!(
                "step {}: {} not usable ({}): claims on it are n/a",
                self.step, self.figure, self.why
            ),
        }
    }
}

/// The caveats of `list`: one per figure that read a value it is not shown with, and per step
/// one for the figures it has no value for, grouped by why ("step 04_rps150: not usable: cpu.app,
/// cpu.k6 (had 1 sample(s) inside its 0.69 s window (2 needed)); app_cpu (derived from cpu.app,
/// ...): claims on them are n/a").
pub fn caveats(list: &[Unusable]) -> Vec<String> {
    let mut out: Vec<String> = list
        .iter()
        .filter(|u| u.value.is_some())
        .map(Unusable::caveat)
        .collect();
    // per step in order of appearance: (why, its figures) in order of appearance
    let mut steps: Vec<(&str, Vec<(&str, Vec<&str>)>)> = Vec::new();
    let mut at: HashMap<(&str, &str), (usize, usize)> = HashMap::new();
    let mut step_at: HashMap<&str, usize> = HashMap::new();
    for u in list.iter().filter(|u| u.value.is_none()) {
        let si = *step_at.entry(&u.step).or_insert_with(|| {
            steps.push((&u.step, Vec::new()));
            steps.len() - 1
        });
        let (si, wi) = *at.entry((&u.step, &u.why)).or_insert_with(|| {
            steps[si].1.push((&u.why, Vec::new()));
            (si, steps[si].1.len() - 1)
        });
        steps[si].1[wi].1.push(&u.figure);
    }
    for (step, by_why) in steps {
        let parts: Vec<String> = by_why
            .iter()
            .map(|(why, figures)| format!("{} ({why})", figures.join(", ")))
            .collect();
        out.push(format!(
            "step {step}: not usable: {}: claims on them are n/a",
            parts.join("; ")
        ));
    }
    out
}

fn fmt(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}")
    } else {
        v.to_string()
    }
}

/// The report's steps checked: out-of-bounds figures taken out of each step, the window's
/// unmeasured figures listed, every one returned.
pub fn steps(steps: &mut [StepReport], p: &Params) -> Vec<Unusable> {
    let mut out = Vec::new();
    for s in steps {
        let mut found = Vec::new();
        latencies(s, &mut found);
        step_rates(s, &mut found);
        if let Some(w) = s.server.as_mut() {
            server(w, p, &mut found);
            let seen: HashSet<String> = found.iter().map(|f| f.0.clone()).collect();
            for (figure, why) in &w.unusable {
                if !seen.contains(figure) {
                    found.push((figure.clone(), None, why.clone()));
                }
            }
        }
        app_derived(s, &mut found);
        out.extend(found.into_iter().map(|(figure, value, why)| Unusable {
            step: s.name.clone(),
            figure,
            value,
            why,
        }));
    }
    out
}

/// The app box's CPU and the CPU per response, when one of the app box's roles has no usable
/// CPU figure (taken out, or not measured): not usable either.
fn app_derived(s: &mut StepReport, found: &mut Found) {
    let Some(w) = s.server.as_ref() else { return };
    let Some(role) = Role::all()
        .iter()
        .filter(|r| r.is_app_box())
        .map(|r| format!("cpu.{}", r.column()))
        .find(|f| w.unusable.contains_key(f))
    else {
        if let Some(v) = s.ms_cpu_per_ok.filter(|v| bad(*v)) {
            s.ms_cpu_per_ok = None;
            found.push(("ms_cpu_per_ok".into(), Some(v), "below 0".into()));
        }
        return;
    };
    let why = format!("derived from {role}, which {}", w.unusable[&role]);
    for (figure, value) in [("app_cpu", None), ("ms_cpu_per_ok", s.ms_cpu_per_ok.take())] {
        if !found.iter().any(|(f, _, _)| f == figure) {
            found.push((figure.into(), value, why.clone()));
        }
    }
}

/// [`steps`] on a whole report (a recorded `report.json` read back): the figures it finds
/// are added to `unusable` and its caveats to `warnings`, each once.
pub fn apply(r: &mut Report) {
    let params = r.params.clone();
    let mut listed: HashSet<(String, String)> = r
        .unusable
        .iter()
        .map(|u| (u.step.clone(), u.figure.clone()))
        .collect();
    for u in steps(&mut r.steps, &params) {
        if listed.insert((u.step.clone(), u.figure.clone())) {
            r.unusable.push(u);
        }
    }
    let mut said: HashSet<String> = r.warnings.iter().cloned().collect();
    for c in caveats(&r.unusable) {
        if said.insert(c.clone()) {
            r.warnings.push(c);
        }
    }
}

type Found = Vec<(String, Option<f64>, String)>;

fn bad(v: f64) -> bool {
    !v.is_finite() || v < 0.0
}

/// Latencies at least 0 and ordered: p50 <= p95 <= p99 <= max, and the same over the
/// successful requests (whose slowest is at most the step's).
fn latencies(s: &StepReport, found: &mut Found) {
    let all = [
        ("p50_ms", s.p50_ms),
        ("p95_ms", s.p95_ms),
        ("p99_ms", s.p99_ms),
        ("max_ms", s.max_ms),
    ];
    let ok = [
        ("ok_p50_ms", s.ok_p50_ms),
        ("ok_p95_ms", s.ok_p95_ms),
        ("ok_p99_ms", s.ok_p99_ms),
        ("max_ms", s.max_ms),
    ];
    for (name, v) in all.iter().chain(&ok[..3]).chain([&("avg_ms", s.avg_ms)]) {
        if bad(*v) {
            found.push((name.to_string(), Some(*v), "a latency below 0".into()));
        }
    }
    for chain in [all, ok] {
        for pair in chain.windows(2) {
            let ((a, x), (b, y)) = (pair[0], pair[1]);
            if x > y * (1.0 + 1e-9) {
                for (n, v) in [(a, x), (b, y)] {
                    if !found.iter().any(|(f, _, _)| f == n) {
                        let why =
                            format!("{a} {} > {b} {}: percentiles out of order", fmt(x), fmt(y));
                        found.push((n.to_string(), Some(v), why));
                    }
                }
            }
        }
    }
}

/// The failed share in [0, 1]; requests per second at least 0.
fn step_rates(s: &StepReport, found: &mut Found) {
    if !(0.0..=1.0).contains(&s.failed_rate) {
        found.push((
            "failed_rate".into(),
            Some(s.failed_rate),
            "a share outside [0, 1]".into(),
        ));
    }
    for (name, v) in [
        ("sent_per_s", s.sent_per_s),
        ("ok_per_s", s.ok_per_s),
        ("mean_vus", s.mean_vus.unwrap_or(0.0)),
        ("max_vus", s.max_vus.unwrap_or(0.0)),
    ] {
        if bad(v) {
            found.push((name.into(), Some(v), "a count below 0".into()));
        }
    }
}

/// The cores a role may use: its slot's pinned CPUs (the app box: the cores it may use).
fn role_cores(role: Role, p: &Params) -> Option<f64> {
    let pinned = |cpus: &[u32]| (!cpus.is_empty()).then_some(cpus.len() as f64);
    match role.slot() {
        Slot::App => p.app_cores.or_else(|| pinned(&p.app_cpus)),
        Slot::Db => pinned(&p.db_cpus),
        Slot::Loadgen => pinned(&p.loadgen_cpus),
    }
}

/// A CPU share's ceiling for `cores` pinned cores, in % of one core, and why.
fn ceiling(cores: f64, whose: &str) -> (f64, String) {
    let max = cores * (100.0 + CPU_JITTER_PCT);
    let why = format!(
        "> {max:.0} %: 100 % of one core for each of the {cores} CPU(s) {whose} may use, + {CPU_JITTER_PCT} for sampling jitter"
    );
    (max, why)
}

/// The window's figures: CPU per role and of the app box, percentages, shares, counts.
fn server(w: &mut WindowServer, p: &Params, found: &mut Found) {
    let mut gone: Vec<String> = Vec::new();
    for (column, v) in &w.cpu_pct {
        let role = Role::named(column);
        let limit = role
            .and_then(|r| role_cores(r, p))
            .map(|c| ceiling(c, column));
        let why = if bad(*v) {
            Some("a CPU share below 0".to_string())
        } else {
            limit.filter(|(max, _)| v > max).map(|(_, why)| why)
        };
        if let Some(why) = why {
            found.push((format!("cpu.{column}"), Some(*v), why));
            gone.push(column.clone());
        }
    }
    let app_roles: Vec<&str> = Role::all()
        .iter()
        .filter(|r| r.is_app_box())
        .map(|r| r.column())
        .collect();
    if let (Some(cores), Some(app), true) = (p.app_cores, w.app_cores(), gone.is_empty()) {
        let (max, why) = ceiling(cores, "the app box");
        if app * 100.0 > max {
            found.push(("app_cpu".into(), Some(app), why));
            gone.extend(
                app_roles
                    .iter()
                    .filter(|c| w.cpu_pct.contains_key(**c))
                    .map(|c| c.to_string()),
            );
        }
    }
    for column in &gone {
        if let Some(v) = w.cpu_pct.remove(column) {
            let why = format!("read {}, outside its physical bounds", fmt(v));
            w.unusable.insert(format!("cpu.{column}"), why);
        }
    }
    let app_gone = gone.iter().any(|c| app_roles.contains(&c.as_str()));
    for (start, figure) in CITING {
        let cited_gone = match figure {
            "app_cpu" => app_gone,
            _ => gone.iter().any(|c| format!("cpu.{c}") == figure),
        };
        if cited_gone {
            w.saturated.retain(|x| !x.starts_with(start));
        }
    }
    percents(w, found);
    shares(w, found);
}

/// Percentages of a whole (PSI, the busiest host CPU, the database's CPUs) in [0, 100];
/// dockerd's and k6's CPU at least 0 (k6's at most its cores is [`server`]'s rule for roles).
fn percents(w: &mut WindowServer, found: &mut Found) {
    let whole = |v: f64| (0.0..=100.0 + CPU_JITTER_PCT).contains(&v);
    for (name, slot, full) in [
        ("psi_pct", &mut w.psi_pct, true),
        ("host_cpu_max_pct", &mut w.host_cpu_max_pct, true),
        ("db_core_busy_pct", &mut w.db_core_busy_pct, true),
        ("dockerd_pct", &mut w.dockerd_pct, false),
        ("k6_cpu_max_pct", &mut w.k6_cpu_max_pct, false),
    ] {
        if let Some(v) = *slot {
            let out = if full { !whole(v) } else { bad(v) };
            if out {
                let why = if full {
                    "a share outside [0, 100] %"
                } else {
                    "below 0"
                };
                found.push((name.into(), Some(v), why.into()));
                *slot = None;
            }
        }
    }
    for (whose, split) in [("app_cpus", &mut w.app_cpus), ("db_cpus", &mut w.db_cpus)] {
        let Some(s) = split.as_ref() else { continue };
        let parts = [
            s.busy_pct,
            s.lab_pct,
            s.other_pct,
            s.steal_pct.unwrap_or(0.0),
        ];
        if parts.iter().any(|v| !whole(*v)) || !(0.0..=1.0).contains(&s.busy_share) {
            let why = "a part outside [0, 100] % of those CPUs".to_string();
            found.push((format!("{whose}.busy_pct"), Some(s.busy_pct), why));
            *split = None;
        }
    }
}

/// Shares in [0, 1] (php-fpm's saturated samples, ELU, pool waiting), rates and counts at
/// least 0 (php-fpm's accepted and pg's commits per second, in-flight, event-loop delay).
fn shares(w: &mut WindowServer, found: &mut Found) {
    let mut share = |name: &str, v: f64| {
        if !(0.0..=1.0).contains(&v) {
            found.push((name.into(), Some(v), "a share outside [0, 1]".into()));
        }
    };
    if let Some(f) = &w.fpm {
        share("fpm.saturated_share", f.saturated_share);
    }
    if let Some(n) = &w.node {
        share("node.elu_max", n.elu_max);
        share("node.pool_waiting_share", n.pool_waiting_share);
        for (name, v) in [
            ("node.inflight_mean", n.inflight_mean),
            ("node.eld_p99_max_ms", n.eld_p99_max_ms),
        ] {
            if bad(v) {
                found.push((name.into(), Some(v), "below 0".into()));
            }
        }
    }
    if let Some(f) = w.fpm.as_mut()
        && let Some(v) = f.accepted_per_s.filter(|v| bad(*v))
    {
        found.push(("fpm.accepted_per_s".into(), Some(v), "below 0".into()));
        f.accepted_per_s = None;
    }
    if let Some(pg) = w.pg.as_mut()
        && let Some(v) = pg.commits_per_s.filter(|v| bad(*v))
    {
        found.push(("pg.commits_per_s".into(), Some(v), "below 0".into()));
        pg.commits_per_s = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A passing step with the issue's reading: the app 119.94 % of its one core.
    fn issue_step() -> (StepReport, Params) {
        let mut s = crate::analyze::run::test_row(257, 0);
        let mut w = WindowServer::default();
        w.cpu_pct.insert("app".into(), 119.94);
        w.cpu_pct.insert("pg".into(), 0.1);
        w.saturated.push("app CPU 120 % of 100 %".into());
        s.server = Some(w);
        s.ms_cpu_per_ok = Some(5.0);
        let mut p = Params::new(100.0);
        p.app_cores = Some(1.0);
        p.db_cpus = vec![0];
        (s, p)
    }

    #[test]
    fn a_cpu_beyond_its_cores_is_taken_out_with_what_derives_from_it() {
        let (s, p) = issue_step();
        let mut rows = [s];
        let found = steps(&mut rows, &p);
        let names: Vec<&str> = found.iter().map(|u| u.figure.as_str()).collect();
        assert_eq!(names, ["cpu.app", "app_cpu", "ms_cpu_per_ok"]);
        assert_eq!(found[0].value, Some(119.94));
        assert!(found[0].why.starts_with("> 105 %"), "{}", found[0].why);
        assert_eq!(
            found[0].caveat(),
            "step r0257: cpu.app read 119.9, outside its physical bounds (> 105 %: 100 % of one core for each of the 1 CPU(s) app may use, + 5 for sampling jitter): not shown, claims on it are n/a"
        );
        let w = rows[0].server.as_ref().unwrap();
        assert_eq!(w.cpu_pct.get("app"), None);
        assert_eq!(w.cpu_pct.get("pg"), Some(&0.1), "pg is within its core");
        assert!(w.saturated.is_empty(), "{:?}", w.saturated);
        assert_eq!((w.app_cores(), rows[0].ms_cpu_per_ok), (None, None));
        // within the jitter: shown as measured
        let (mut s, p) = issue_step();
        s.server
            .as_mut()
            .unwrap()
            .cpu_pct
            .insert("app".into(), 104.9);
        assert!(steps(&mut [s], &p).is_empty());
        // the role's cores unknown (loose files): no bound to hold it to
        let (s, mut p) = issue_step();
        p.app_cores = None;
        assert!(steps(&mut [s], &p).is_empty());
    }

    #[test]
    fn shares_counts_and_latencies_out_of_order_are_named() {
        let (mut s, p) = issue_step();
        s.server = None;
        s.ms_cpu_per_ok = None;
        s.failed_rate = 1.5;
        s.p95_ms = 31.0; // above the p99 of 30
        s.sent_per_s = -1.0;
        let found = steps(&mut [s], &p);
        let got: Vec<(&str, Option<f64>)> =
            found.iter().map(|u| (u.figure.as_str(), u.value)).collect();
        assert_eq!(
            got,
            [
                ("p95_ms", Some(31.0)),
                ("p99_ms", Some(30.0)),
                ("failed_rate", Some(1.5)),
                ("sent_per_s", Some(-1.0)),
            ]
        );
        assert!(
            found[0].why.contains("p95_ms 31.0 > p99_ms 30.0"),
            "{}",
            found[0].why
        );
    }

    #[test]
    fn a_recorded_report_gets_each_caveat_once() {
        let (s, p) = issue_step();
        let mut r = crate::analyze::run::test_report(vec![s], p);
        apply(&mut r);
        apply(&mut r);
        assert_eq!(r.unusable.len(), 3);
        let caveats = r
            .warnings
            .iter()
            .filter(|w| w.starts_with("step r0257:"))
            .count();
        assert_eq!(caveats, 3);
        assert!(r.unusable("r0257", "cpu.app").is_some());
    }
}

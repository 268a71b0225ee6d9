//! SVG plots (plotters): latency and goodput against the offered step, and the per-second timeline.
//! The panels are chosen here; `plots/draw.rs` draws them.
mod draw;

use crate::analyze::model::*;
use crate::lab::{Role, Slot};
use draw::*;
use plotters::prelude::SeriesLabelPosition;

/// Latency (p50/p95/p99) and goodput against the offered step, SLO line and knee marked: the
/// measured steps as markers, no line between them (nothing was measured there).
pub fn steps_svg(r: &Report) -> Result<String, String> {
    let probes = r
        .refine
        .as_ref()
        .map(|f| f.probes.as_slice())
        .unwrap_or(&[]);
    let xs: Vec<f64> = (r.steps.iter().map(|s| s.target as f64))
        .chain(probes.iter().map(|p| f64::from(p.target)))
        .collect();
    let x = (
        xs.iter().copied().fold(f64::MAX, f64::min),
        xs.iter().copied().fold(0.0, f64::max),
    );
    let pad = ((x.1 - x.0) * 0.05).max(1.0);
    let x = (x.0 - pad, x.1 + pad);
    let mut marks: Vec<(f64, String)> = r
        .knee
        .map(|k| (k as f64, format!(" knee {k}")))
        .into_iter()
        .collect();
    if let Some(m) = r.refine.as_ref().and_then(|f| f.max_sustainable) {
        marks.push((f64::from(m), format!(" max sustainable {m}")));
    }
    let mut lat = step_latency_panel(r, x, marks.clone());
    let mut goodput = step_throughput_panel(r, x, marks);
    if !probes.is_empty() {
        let at = |f: fn(&crate::analyze::refine::Probe) -> f64| -> Vec<(f64, f64)> {
            probes.iter().map(|p| (f64::from(p.target), f(p))).collect()
        };
        lat.series.push(Series::markers(
            "p95 (refine probes)",
            ORANGE,
            at(|p| p.p95_ms),
        ));
        goodput.series.push(Series::markers(
            "ok/s (refine probes)",
            GREEN,
            at(|p| p.ok_per_s),
        ));
    }
    render(760, &[lat, goodput])
}

/// (target, figure) per step.
fn per_step(r: &Report, f: impl Fn(&StepReport) -> f64) -> Vec<(f64, f64)> {
    r.steps.iter().map(|s| (s.target as f64, f(s))).collect()
}

fn step_x_label(r: &Report) -> &'static str {
    if r.unit() == "VUs" {
        "VUs"
    } else {
        "offered rps"
    }
}

fn step_latency_panel(r: &Report, x: (f64, f64), knee: Vec<(f64, String)>) -> Panel {
    Panel {
        title: format!(
            "Latency per step (requests started in the step), SLO p95 {} ms",
            r.params.slo_p95_ms
        ),
        x_label: step_x_label(r),
        y_label: "ms",
        x,
        series: vec![
            Series::dots("p50", BLUE, per_step(r, |s| s.p50_ms)),
            Series::dots("p95", ORANGE, per_step(r, |s| s.p95_ms)),
            Series::triangles("p99", PURPLE, per_step(r, |s| s.p99_ms)),
        ],
        hlines: vec![slo_line(r)],
        vlines: knee,
        legend: SeriesLabelPosition::UpperLeft,
    }
}

fn step_throughput_panel(r: &Report, x: (f64, f64), knee: Vec<(f64, String)>) -> Panel {
    let mut tput = vec![
        Series::triangles("sent/s", GREY, per_step(r, |s| s.sent_per_s)),
        Series::dots("ok/s (goodput)", GREEN, per_step(r, |s| s.ok_per_s)),
    ];
    if r.unit() == "rps" {
        tput.insert(
            0,
            Series::triangles("offered", BROWN, per_step(r, |s| s.target as f64)),
        );
    }
    Panel {
        title: "Throughput per step".into(),
        x_label: step_x_label(r),
        y_label: "requests/s",
        x,
        series: tput,
        hlines: vec![],
        vlines: knee,
        legend: SeriesLabelPosition::UpperLeft,
    }
}

/// The SLO as a reference line.
fn slo_line(r: &Report) -> (f64, String) {
    (
        r.params.slo_p95_ms,
        format!("SLO {} ms", r.params.slo_p95_ms),
    )
}

const SINCE_FIRST_STEP: &str = "seconds since the first step";

/// The run second by second: done/s, p95, in-flight and CPU per role, with step boundaries.
pub fn timeline_svg(r: &Report) -> Result<String, String> {
    let t = &r.timeline;
    let x = (
        t.first().map_or(0.0, |s| s.rel as f64),
        t.last().map_or(1.0, |s| s.rel as f64 + 1.0),
    );
    let first_start = r.steps.first().map_or(0, |s| s.start_ms);
    let marks: Vec<(f64, String)> = r
        .steps
        .iter()
        .map(|s| {
            (
                (s.start_ms - first_start) as f64 / 1000.0,
                format!(" {}", s.target),
            )
        })
        .collect();
    let unlabelled: Vec<(f64, String)> = marks.iter().map(|v| (v.0, String::new())).collect();
    let roles = super::content::order_roles(t.iter().flat_map(|s| s.cpu_pct.keys()));
    let panels = [
        rate_panel(t, x, marks),
        second_latency_panel(r, x, unlabelled.clone()),
        if roles.is_empty() {
            inflight_panel(t, x, unlabelled)
        } else {
            let mut p = cpu_panel(t, x, &roles, unlabelled);
            p.hlines = core_ceilings(&r.params, &roles);
            p
        },
    ];
    render(1000, &panels)
}

/// (second since the first step, figure) per second.
fn per_second(t: &[SecondRow], f: impl Fn(&SecondRow) -> f64) -> Vec<(f64, f64)> {
    t.iter().map(|s| (s.rel as f64, f(s))).collect()
}

fn rate_panel(t: &[SecondRow], x: (f64, f64), marks: Vec<(f64, String)>) -> Panel {
    Panel {
        title: "Requests per second (step starts marked with the target)".into(),
        x_label: SINCE_FIRST_STEP,
        y_label: "requests/s",
        x,
        series: vec![
            Series::dashed("started/s", GREY, per_second(t, |s| s.started as f64)),
            Series::solid("done/s", BLUE, per_second(t, |s| s.done as f64)),
            Series::solid("ok/s", GREEN, per_second(t, |s| s.ok as f64)),
        ],
        hlines: vec![],
        vlines: marks,
        legend: SeriesLabelPosition::LowerRight,
    }
}

fn second_latency_panel(r: &Report, x: (f64, f64), marks: Vec<(f64, String)>) -> Panel {
    let t = &r.timeline;
    Panel {
        title: "Latency of the responses completed each second".into(),
        x_label: SINCE_FIRST_STEP,
        y_label: "ms",
        x,
        series: vec![
            Series::solid("p50", BLUE, per_second(t, |s| s.p50_ms)),
            Series::solid("p95", ORANGE, per_second(t, |s| s.p95_ms)),
        ],
        hlines: vec![slo_line(r)],
        vlines: marks,
        legend: SeriesLabelPosition::UpperLeft,
    }
}

/// Without server samples: the requests in flight.
fn inflight_panel(t: &[SecondRow], x: (f64, f64), marks: Vec<(f64, String)>) -> Panel {
    Panel {
        title: "Requests in flight (time-averaged per second)".into(),
        x_label: SINCE_FIRST_STEP,
        y_label: "in flight",
        x,
        series: vec![Series::solid(
            "in flight",
            PURPLE,
            per_second(t, |s| s.inflight),
        )],
        hlines: vec![],
        vlines: marks,
        legend: SeriesLabelPosition::UpperLeft,
    }
}

/// Each role's core ceiling from the run's pinning: 100 % per CPU of the role's set (the app
/// box's for fpm, nginx, app and demo; the database's for pg; the generator's for k6), one
/// line per distinct ceiling naming its roles. Roles whose CPUs are unknown have none.
pub fn core_ceilings(p: &Params, roles: &[String]) -> Vec<(f64, String)> {
    let mut lines: Vec<(usize, Vec<&str>)> = Vec::new();
    for role in roles {
        let cpus = match Role::named(role).map(Role::slot) {
            Some(Slot::Db) => p.db_cpus.len(),
            Some(Slot::Loadgen) => p.loadgen_cpus.len(),
            Some(Slot::App) | None => p.app_cpus.len(),
        };
        if cpus == 0 {
            continue;
        }
        match lines.iter_mut().find(|l| l.0 == cpus) {
            Some(l) => l.1.push(role),
            None => lines.push((cpus, vec![role])),
        }
    }
    lines
        .into_iter()
        .map(|(n, who)| {
            let cores = if n == 1 { "core" } else { "cores" };
            (
                n as f64 * 100.0,
                format!("{} ceiling: {n} {cores}", who.join(", ")),
            )
        })
        .collect()
}

/// With server samples: CPU per role, one colour each.
fn cpu_panel(t: &[SecondRow], x: (f64, f64), roles: &[String], marks: Vec<(f64, String)>) -> Panel {
    Panel {
        title: "CPU per role (% of one core)".into(),
        x_label: SINCE_FIRST_STEP,
        y_label: "% of one core",
        x,
        series: roles
            .iter()
            .enumerate()
            .map(|(i, role)| {
                let points = t
                    .iter()
                    .filter_map(|s| Some((s.rel as f64, *s.cpu_pct.get(role)?)))
                    .collect();
                Series::solid(role, PALETTE[i % PALETTE.len()], points)
            })
            .collect(),
        hlines: vec![],
        vlines: marks,
        legend: SeriesLabelPosition::UpperLeft,
    }
}

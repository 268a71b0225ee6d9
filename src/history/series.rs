//! A series: the points of one experiment × suite × configuration, oldest first, and what
//! moved in them: each numeric figure's change points (`analyze::changepoint`) with the
//! versions that changed between the points around each, and the claims whose verdict went
//! from pass to fail. Pure.
use super::model::{Change, Flip, Metric, Request, Series};
use super::points::{self, FIGURES, Point, Steps};
use crate::analyze::changepoint::{self, Options};
use crate::experiment::Experiment;
use crate::verify::config::Config;
use crate::verify::load::LoadedRun;

/// The configuration a series is of: what `Config` compares but the suite and the build.
fn config_key(c: &Config) -> String {
    c.aspects()
        .into_iter()
        .filter(|(k, _)| !matches!(*k, "suite" | "images" | "versions" | "stack" | "load"))
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The series of experiment `id`'s runs (oldest first), one per suite and configuration.
pub fn build(
    id: &str,
    runs: &[LoadedRun],
    claims: Option<&Experiment>,
    req: &Request,
) -> Vec<Series> {
    let mut groups: Vec<((String, String), Vec<&LoadedRun>)> = Vec::new();
    for r in runs {
        let c = Config::of(&r.manifest);
        let key = (c.suite.clone(), config_key(&c));
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups
        .into_iter()
        .map(|((suite, config), runs)| {
            let claims = claims.or(Some(&runs[runs.len() - 1].manifest.experiment));
            one(id, suite, config, &runs, claims, req)
        })
        .collect()
}

/// The batch a run belongs to: its `compare` batch and side, else itself.
fn unit_key(r: &LoadedRun) -> String {
    match &r.manifest.measurements.compare {
        Some(t) => format!("{} {}", t.batch, t.side),
        None => r.manifest.run_id.clone(),
    }
}

fn one(
    id: &str,
    suite: String,
    config: String,
    runs: &[&LoadedRun],
    claims: Option<&Experiment>,
    req: &Request,
) -> Series {
    let steps = Steps::of(runs);
    let mut units: Vec<(String, Vec<&LoadedRun>)> = Vec::new();
    for r in runs {
        let k = unit_key(r);
        match units.iter_mut().find(|(u, _)| *u == k) {
            Some((_, v)) => v.push(r),
            None => units.push((k, vec![r])),
        }
    }
    let mut pts: Vec<Point> = units
        .iter()
        .map(|(_, v)| points::point(v, &steps, claims))
        .collect();
    pts.sort_by_key(|p| p.created);
    points::flag_slowed(&mut pts);
    let mut s = Series {
        experiment: id.to_string(),
        suite,
        config,
        steps,
        metrics: metrics(&pts),
        judged: 0,
        too_short: false,
        changes: Vec::new(),
        flips: flips(&pts),
        points: pts,
    };
    detect(&mut s, req.all_points, &req.options);
    s
}

/// The figures' series and each claim value's, in order.
fn metrics(pts: &[Point]) -> Vec<Metric> {
    let mut out: Vec<Metric> = FIGURES
        .iter()
        .map(|(name, _)| Metric {
            name: name.to_string(),
            values: pts
                .iter()
                .map(|p| p.values.get(*name).copied().flatten())
                .collect(),
        })
        .collect();
    let mut names: Vec<&str> = Vec::new();
    for p in pts {
        for c in &p.claims {
            if !names.contains(&c.claim.as_str()) {
                names.push(&c.claim);
            }
        }
    }
    for n in names {
        out.push(Metric {
            name: format!("claim.{n}"),
            values: pts
                .iter()
                .map(|p| p.claims.iter().find(|c| c.claim == n).and_then(|c| c.value))
                .collect(),
        });
    }
    out
}

/// Change points of every metric over the judged points.
fn detect(s: &mut Series, all_points: bool, o: &Options) {
    let judged: Vec<usize> = (0..s.points.len())
        .filter(|i| all_points || s.points[*i].flagged.is_none())
        .collect();
    s.judged = judged.len();
    s.too_short = judged.len() < o.window;
    if s.too_short {
        return;
    }
    for m in &s.metrics {
        let vals: Vec<Option<f64>> = judged.iter().map(|i| m.values[*i]).collect();
        let Some(filled) = changepoint::fill_missing(&vals) else {
            continue;
        };
        let worse_up = FIGURES.iter().find(|(n, _)| *n == m.name).map(|f| f.1);
        for cp in changepoint::detect(&filled, o) {
            let (at, before) = (judged[cp.index], judged[cp.index - 1]);
            let st = cp.stats;
            let up = st.mean_after > st.mean_before;
            s.changes.push(Change {
                metric: m.name.clone(),
                index: at,
                run: s.points[at].run.clone(),
                created: s.points[at].created,
                mean_before: st.mean_before,
                mean_after: st.mean_after,
                change_pct: st.forward_rel_change() * 100.0,
                pvalue: st.pvalue,
                regression: worse_up.map(|w| w == up),
                changed: points::components_diff(
                    &s.points[before].components,
                    &s.points[at].components,
                ),
            });
        }
    }
}

/// Each claim's pass-to-fail transitions: its last pass and the first fail after it.
fn flips(pts: &[Point]) -> Vec<Flip> {
    let mut out = Vec::new();
    let mut last_pass: Vec<(String, usize)> = Vec::new();
    for (i, p) in pts.iter().enumerate() {
        for c in &p.claims {
            let slot = last_pass.iter().position(|(n, _)| *n == c.claim);
            match (c.verdict.as_str(), slot) {
                ("pass", Some(k)) => last_pass[k].1 = i,
                ("pass", None) => last_pass.push((c.claim.clone(), i)),
                ("fail", Some(k)) => {
                    let (_, lp) = last_pass.remove(k);
                    out.push(Flip {
                        claim: c.claim.clone(),
                        last_pass: pts[lp].run.clone(),
                        last_pass_at: pts[lp].created,
                        first_fail: p.run.clone(),
                        first_fail_at: p.created,
                        index: i,
                    });
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::ClaimPoint;
    use chrono::TimeZone;

    fn pt(i: u32, verdict: &str, speed: f64) -> Point {
        Point {
            run: format!("exp1/r{i}"),
            runs: vec![format!("exp1/r{i}")],
            created: chrono::Utc
                .with_ymd_and_hms(2027, 1, i + 1, 3, 0, 0)
                .unwrap(),
            values: Default::default(),
            claims: vec![ClaimPoint {
                claim: "knee-at".into(),
                value: Some(1.0),
                verdict: verdict.into(),
            }],
            components: Default::default(),
            host: None,
            speed_mops: Some(speed),
            steal_pct: None,
            flagged: None,
        }
    }

    #[test]
    fn a_flip_is_the_first_fail_after_a_pass_with_that_pass() {
        let v = [
            "fail", "pass", "pass", "fail", "fail", "n/a", "pass", "fail",
        ];
        let pts: Vec<Point> = v
            .iter()
            .enumerate()
            .map(|(i, x)| pt(i as u32, x, 1.0))
            .collect();
        let f = flips(&pts);
        let got: Vec<(&str, &str, usize)> = f
            .iter()
            .map(|f| (f.last_pass.as_str(), f.first_fail.as_str(), f.index))
            .collect();
        assert_eq!(got, [("exp1/r2", "exp1/r3", 3), ("exp1/r6", "exp1/r7", 7)]);
    }

    #[test]
    fn a_point_on_a_slowed_host_is_flagged_and_left_out() {
        let mut pts: Vec<Point> = [100.0, 99.0, 80.0, 86.0]
            .iter()
            .enumerate()
            .map(|(i, s)| pt(i as u32, "pass", *s))
            .collect();
        points::flag_slowed(&mut pts);
        let flagged: Vec<bool> = pts.iter().map(|p| p.flagged.is_some()).collect();
        assert_eq!(
            flagged,
            [false, false, true, false],
            "15 % below the fastest"
        );
        assert!(
            pts[2]
                .flagged
                .as_deref()
                .unwrap()
                .starts_with("slowed host: 20 %")
        );
        let mut s = Series {
            experiment: "exp1".into(),
            suite: "trixie".into(),
            config: String::new(),
            steps: Default::default(),
            metrics: metrics(&pts),
            judged: 0,
            too_short: false,
            changes: Vec::new(),
            flips: Vec::new(),
            points: pts,
        };
        let o = Options {
            window: 3,
            ..Options::default()
        };
        detect(&mut s, false, &o);
        assert_eq!((s.judged, s.too_short), (3, false));
        detect(&mut s, true, &o);
        assert_eq!(s.judged, 4, "--all-points keeps it");
    }
}

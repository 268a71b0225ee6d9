//! What `perflab history` prints: the text (per series its points, change points, flipped
//! claims) and the CSV Apache Otava reads as it is (one row per judged point, a `branch` column
//! per series: `otava analyze` with `--branch`). Pure.
use super::model::{History, Series};
use std::fmt::Write;

fn num(v: Option<f64>) -> String {
    match v {
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.3}"),
        None => "-".into(),
    }
}

/// The text of `history`.
pub fn text(h: &History) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "history of {} (E-divisive means, window {}, p {}): {} series",
        h.out_root,
        h.options.window,
        h.options.max_pvalue,
        h.series.len()
    );
    for s in &h.series {
        series_text(&mut o, s, h.options.window);
    }
    for s in &h.skipped {
        let _ = writeln!(o, "skipped {s}");
    }
    o
}

fn series_text(o: &mut String, s: &Series, window: usize) {
    let _ = writeln!(o, "\n{} on {} ({})", s.experiment, s.suite, s.config);
    let flagged = s.points.iter().filter(|p| p.flagged.is_some()).count();
    let cpu = crate::verify::compare::rounds::steps_text(&s.steps.cpu, "rps");
    let p95 = s
        .steps
        .p95
        .map_or("no step every point passed".into(), |t| format!("{t} rps"));
    let _ = writeln!(
        o,
        "  {} points ({} judged, {flagged} flagged); CPU per ok request {cpu}; p95 at {p95}",
        s.points.len(),
        s.judged
    );
    let _ = writeln!(
        o,
        "  {:<34} {:<10} {:>9} {:>7} {:>6} {:>8} {:>7} {:>6}  flag",
        "point", "date", "CPU ms/ok", "max rps", "knee", "p95 ms", "speed", "steal%"
    );
    for p in &s.points {
        let v = |k: &str| p.values.get(k).copied().flatten();
        let _ = writeln!(
            o,
            "  {:<34} {:<10} {:>9} {:>7} {:>6} {:>8} {:>7} {:>6}  {}",
            p.run,
            p.created.format("%Y-%m-%d"),
            num(v("cpu_ms_per_ok")),
            num(v("max_sustainable")),
            num(v("knee")),
            num(v("p95_ms")),
            num(p.speed_mops),
            p.steal_pct.map_or("-".into(), |s| format!("{s:.1}")),
            p.flagged.as_deref().unwrap_or("")
        );
    }
    claims_text(o, s);
    if s.too_short {
        let _ = writeln!(
            o,
            "  too short to judge: {} judged points, the window is {}",
            s.judged, window
        );
    } else if s.changes.is_empty() {
        let _ = writeln!(o, "  no change point");
    }
    for c in &s.changes {
        let tag = match c.regression {
            Some(true) => " [regression]",
            Some(false) => " [improvement]",
            None => "",
        };
        let _ = writeln!(
            o,
            "  change: {} {:+.1} % ({} → {}) at {} ({}), p {:.1e}{tag}: {}",
            c.metric,
            c.change_pct,
            num(Some(c.mean_before)),
            num(Some(c.mean_after)),
            c.run,
            c.created.format("%Y-%m-%d"),
            c.pvalue,
            c.cause()
        );
    }
    for f in &s.flips {
        let _ = writeln!(
            o,
            "  claim {} flipped: last pass {} ({}), first fail {} ({})",
            f.claim,
            f.last_pass,
            f.last_pass_at.format("%Y-%m-%d"),
            f.first_fail,
            f.first_fail_at.format("%Y-%m-%d")
        );
    }
}

/// The CSV Otava reads: `time`, `branch` (`<experiment>/<suite>/<n>`, the series' number
/// counted from 1 in `history`'s order), `run`, `components` (`name=version` by spaces), and
/// every metric that has a value in every series; one row per judged point, a missing value
/// filled as Otava fills it (`fill_missing`), so Otava judges the same numbers.
pub fn csv(h: &History) -> anyhow::Result<String> {
    let has = |s: &Series, m: &str| {
        s.metrics
            .iter()
            .any(|x| x.name == m && x.values.iter().any(Option::is_some))
    };
    let names: Vec<String> = h.series.first().map_or(Vec::new(), |s| {
        s.metrics
            .iter()
            .map(|m| m.name.clone())
            .filter(|m| h.series.iter().all(|s| has(s, m)))
            .collect()
    });
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head = vec!["time", "branch", "run", "components"];
    head.extend(names.iter().map(String::as_str));
    w.write_record(&head)?;
    for (n, s) in h.series.iter().enumerate() {
        let judged: Vec<usize> = (0..s.points.len())
            .filter(|i| s.judged == s.points.len() || s.points[*i].flagged.is_none())
            .collect();
        let cols: Vec<Vec<f64>> = names
            .iter()
            .map(|m| {
                let m = s
                    .metrics
                    .iter()
                    .find(|x| x.name == *m)
                    .expect("a metric of every series");
                let v: Vec<Option<f64>> = judged.iter().map(|i| m.values[*i]).collect();
                crate::analyze::changepoint::fill_missing(&v).unwrap_or_default()
            })
            .collect();
        for (k, i) in judged.iter().enumerate() {
            let p = &s.points[*i];
            let comps: Vec<String> = p
                .components
                .iter()
                .map(|(a, b)| format!("{a}={b}"))
                .collect();
            let mut row = vec![
                p.created.to_rfc3339(),
                format!("{}/{}/{}", s.experiment, s.suite, n + 1),
                p.run.clone(),
                comps.join(" "),
            ];
            row.extend(cols.iter().map(|c| format!("{}", c[k])));
            w.write_record(&row)?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// One line per claim: its verdicts over the points, oldest first (P pass, F fail, R refuted as
/// the catalog records, - n/a).
fn claims_text(o: &mut String, s: &Series) {
    let mut names: Vec<&str> = Vec::new();
    for c in s.points.iter().flat_map(|p| &p.claims) {
        if !names.contains(&c.claim.as_str()) {
            names.push(&c.claim);
        }
    }
    for n in names {
        let marks: String = s
            .points
            .iter()
            .map(|p| {
                match p
                    .claims
                    .iter()
                    .find(|c| c.claim == n)
                    .map(|c| c.verdict.as_str())
                {
                    Some("pass") => 'P',
                    Some("fail") => 'F',
                    Some("refuted") => 'R',
                    _ => '-',
                }
            })
            .collect();
        let _ = writeln!(o, "  claim {n}: {marks}");
    }
}

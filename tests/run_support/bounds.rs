//! The physical-bounds check of a report, written apart from the analysis' own rule
//! (`analyze::bounds`) so that it can catch it out: it walks `report.json` as JSON, finds every
//! step figure beyond what the hardware or arithmetic allows, and each must carry a caveat that
//! names its step and figure. Used on every recorded fixture (offline) and on every run the
//! shared run helpers make (the Docker tests).
#![allow(dead_code)]
use serde_json::Value;
use std::path::Path;

/// Slack on a CPU ceiling for sampling jitter, % of one core per core (the rule's stated 5).
const JITTER: f64 = 5.0;

/// (step, figure, value) of every figure of `report` (report.json as JSON) outside its bounds.
pub fn breaches(report: &Value) -> Vec<(String, String, f64)> {
    let params = &report["params"];
    let count = |k: &str| params[k].as_array().map_or(0, |a| a.len()) as f64;
    let app_cores = params["app_cores"].as_f64().unwrap_or(count("app_cpus"));
    let mut out = Vec::new();
    for s in report["steps"].as_array().into_iter().flatten() {
        let name = s["name"].as_str().unwrap_or("?").to_string();
        let mut push = |fig: &str, v: f64| out.push((name.clone(), fig.to_string(), v));
        let num = |v: &Value, k: &str| v[k].as_f64();
        for k in [
            "p50_ms",
            "p95_ms",
            "p99_ms",
            "max_ms",
            "avg_ms",
            "ok_p50_ms",
            "ok_p95_ms",
        ] {
            if let Some(v) = num(s, k).filter(|v| *v < 0.0) {
                push(k, v);
            }
        }
        for chain in [
            ["p50_ms", "p95_ms", "p99_ms", "max_ms"],
            ["ok_p50_ms", "ok_p95_ms", "ok_p99_ms", "max_ms"],
        ] {
            let v: Vec<f64> = chain.iter().filter_map(|k| num(s, k)).collect();
            for (i, w) in v.windows(2).enumerate() {
                if w[0] > w[1] {
                    push(chain[i], w[0]);
                }
            }
        }
        if let Some(v) = num(s, "failed_rate").filter(|v| !(0.0..=1.0).contains(v)) {
            push("failed_rate", v);
        }
        for k in ["sent_per_s", "ok_per_s", "ms_cpu_per_ok", "mean_vus"] {
            if let Some(v) = num(s, k).filter(|v| *v < 0.0) {
                push(k, v);
            }
        }
        let w = &s["server"];
        let mut app_box = 0.0;
        for (col, v) in w["cpu_pct"].as_object().into_iter().flatten() {
            let v = v.as_f64().unwrap_or(f64::NAN);
            let cores = match col.as_str() {
                "fpm" | "nginx" | "app" | "demo" => {
                    app_box += v;
                    app_cores
                }
                "pg" => count("db_cpus"),
                "k6" => count("loadgen_cpus"),
                _ => 0.0,
            };
            if v.is_nan() || v < 0.0 || (cores > 0.0 && v > cores * (100.0 + JITTER)) {
                push(&format!("cpu.{col}"), v);
            }
        }
        if app_cores > 0.0 && app_box > app_cores * (100.0 + JITTER) {
            push("app_cpu", app_box / 100.0);
        }
        for k in ["psi_pct", "host_cpu_max_pct", "db_core_busy_pct"] {
            if let Some(v) = num(w, k).filter(|v| !(0.0..=100.0 + JITTER).contains(v)) {
                push(k, v);
            }
        }
        for (fam, k) in [
            ("fpm", "saturated_share"),
            ("node", "elu_max"),
            ("node", "pool_waiting_share"),
        ] {
            if let Some(v) = num(&w[fam], k).filter(|v| !(0.0..=1.0).contains(v)) {
                push(&format!("{fam}.{k}"), v);
            }
        }
    }
    out
}

/// Every breach of `report` has a caveat naming its step and figure; `what` names the report.
pub fn assert_caveated(report: &Value, what: &str) {
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for (step, fig, v) in breaches(report) {
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(&format!("step {step}: {fig} "))),
            "{what}: step {step}'s {fig} = {v} is outside its physical bounds with no caveat naming it: {warnings:#?}"
        );
    }
}

/// [`assert_caveated`] on a run directory's report.json as perflab reads it back.
pub fn assert_run_within_bounds(dir: &Path) {
    let path = dir.join("report.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return; // no report (an interrupted run): nothing shown, nothing to hold
    };
    let r = perflab::rundir::report::parse(&text)
        .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    let v = serde_json::to_value(&r).unwrap();
    assert_caveated(&v, &path.display().to_string());
    // as written, too: the analysis put the caveats there itself
    let written: Value = serde_json::from_str(&text).unwrap();
    assert_caveated(&written, &path.display().to_string());
}

//! The live state as OpenMetrics text (`/metrics`, `--prometheus`): the latest value of each
//! series the page plots, every name `perflab_`, every sample labelled `run`, `experiment`,
//! `step` (the current step, 1-based; 0 before the first) and `role`, label values escaped as
//! the OpenMetrics text format says. All gauges (the text also parses as Prometheus' format).
use std::fmt::Write;

use super::state::LiveData;

pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Every series this endpoint exports (after `perflab_`), and its help. The Grafana dashboard
/// in docs/ may query only these (its test checks).
pub const SERIES: &[(&str, &str)] = &[
    (
        "offered_load",
        "The plan's target now (requests per second, or VUs in a closed model).",
    ),
    (
        "sent_requests_per_second",
        "Requests k6 completed per second since its previous poll.",
    ),
    (
        "ok_responses_per_second",
        "Successful responses per second since k6's previous poll.",
    ),
    (
        "failed_requests_per_second",
        "Failed requests per second since k6's previous poll.",
    ),
    (
        "request_duration_mean_seconds",
        "Mean duration of the requests completed since k6's previous poll.",
    ),
    (
        "step_duration_p50_seconds",
        "The current step's median duration so far (k6's per-step sub-metric).",
    ),
    (
        "step_duration_p95_seconds",
        "The current step's p95 duration so far (k6's per-step sub-metric).",
    ),
    ("failed_requests", "Failed requests since k6's start."),
    (
        "dropped_iterations",
        "Iterations k6 dropped since its start (no free VU at the planned instant).",
    ),
    ("vus", "k6's active VUs."),
    (
        "container_cpu_cores",
        "A container's CPU over the last sampler interval, in cores.",
    ),
    (
        "container_cpu_ceiling_cores",
        "The cores a container's CPU slot has.",
    ),
    ("fpm_busy_workers", "php-fpm's active processes."),
    (
        "fpm_listen_queue",
        "Connections waiting in php-fpm's listen queue.",
    ),
    (
        "pg_active_connections",
        "PostgreSQL backends in state active.",
    ),
    (
        "pg_idle_client_read_connections",
        "PostgreSQL backends idle in ClientRead (waiting for the app).",
    ),
    (
        "app_cpu_steal_ratio",
        "Share of the app's CPUs the hypervisor stole.",
    ),
    (
        "app_cpu_busy_ratio",
        "Busy share of the app's CPUs (the app's own work included).",
    ),
    (
        "step_passed",
        "A closed step's live verdict: 1 pass, 0 fail or transient (label step: that step).",
    ),
    ("knee_target", "The knee's target once found (rps or VUs)."),
    ("run_elapsed_seconds", "Seconds since k6's start."),
    ("run_finished", "1 once the run ended."),
];

/// A label value escaped: backslash, double quote and newline (OpenMetrics' three).
pub(crate) fn escape_label(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

struct Out<'a> {
    text: String,
    d: &'a LiveData,
}

impl Out<'_> {
    /// One sample of `name` (declared in [`SERIES`]) for `role` at `step`.
    fn sample(&mut self, name: &str, role: &str, step: usize, v: f64) {
        debug_assert!(SERIES.iter().any(|(n, _)| *n == name), "{name}");
        if !v.is_finite() {
            return;
        }
        let _ = writeln!(
            self.text,
            "perflab_{name}{{run=\"{}\",experiment=\"{}\",step=\"{step}\",role=\"{}\"}} {v}",
            escape_label(&self.d.run),
            escape_label(&self.d.experiment),
            escape_label(role)
        );
    }
}

/// The OpenMetrics text of the state, families in [`SERIES`]' order, ending `# EOF`.
pub(crate) fn render(d: &LiveData) -> String {
    let mut o = Out {
        text: String::new(),
        d,
    };
    let step = d.step;
    let last = d.client.last();
    for (name, help) in SERIES {
        let _ = writeln!(o.text, "# TYPE perflab_{name} gauge");
        let _ = writeln!(o.text, "# HELP perflab_{name} {help}");
        let secs = |ms: Option<f64>| ms.map(|m| m / 1000.0);
        let client: Option<Option<f64>> = last.map(|p| match *name {
            "offered_load" => Some(p.offered as f64),
            "sent_requests_per_second" => p.sent_per_s,
            "ok_responses_per_second" => p.ok_per_s,
            "failed_requests_per_second" => p.failed_per_s,
            "request_duration_mean_seconds" => secs(p.mean_ms),
            "step_duration_p50_seconds" => secs(p.p50_ms),
            "step_duration_p95_seconds" => secs(p.p95_ms),
            "failed_requests" => Some(p.failed as f64),
            "dropped_iterations" => Some(p.dropped as f64),
            "vus" => Some(p.vus as f64),
            _ => None,
        });
        if let Some(Some(v)) = client {
            o.sample(name, "k6", step, v);
        }
        for s in &d.server {
            if s.name == *name
                && let Some((_, v)) = s.points.last()
            {
                o.sample(name, &s.role, step, *v);
            }
            if *name == "container_cpu_ceiling_cores"
                && s.name == "container_cpu_cores"
                && let Some(c) = s.ceiling
            {
                o.sample(name, &s.role, step, c);
            }
        }
        match *name {
            "step_passed" => {
                for v in &d.steps {
                    if let Some(verdict) = v.verdict {
                        o.sample(name, "k6", v.step, f64::from(u8::from(verdict == "pass")));
                    }
                }
            }
            "knee_target" => {
                if let Some(k) = &d.knee {
                    o.sample(name, "k6", step, k.target as f64);
                }
            }
            "run_elapsed_seconds" => o.sample(name, "perflab", step, d.now_s),
            "run_finished" => o.sample(
                name,
                "perflab",
                step,
                f64::from(u8::from(d.status == "finished")),
            ),
            _ => {}
        }
    }
    o.text.push_str("# EOF\n");
    o.text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped_as_openmetrics_says() {
        assert_eq!(escape_label(r#"a"b\c"#), r#"a\"b\\c"#);
        assert_eq!(escape_label("x\ny"), "x\\ny");
        assert_eq!(escape_label("<script>"), "<script>");
    }

    #[test]
    fn a_hostile_run_name_cannot_break_out_of_its_label() {
        let mut d = LiveData::waiting("r\"}\nperflab_evil 1\n#");
        d.experiment = "e\\".into();
        let t = render(&d);
        assert!(t.ends_with("# EOF\n"));
        for line in t.lines() {
            assert!(
                line.starts_with("# ") || line.starts_with("perflab_run_"),
                "{line}"
            );
        }
        assert!(
            t.contains(r#"run="r\"}\nperflab_evil 1\n#",experiment="e\\""#),
            "{t}"
        );
        // every family is declared once, and only the declared ones
        let types = t.lines().filter(|l| l.starts_with("# TYPE")).count();
        assert_eq!(types, SERIES.len());
    }
}

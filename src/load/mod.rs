//! The load generator: how k6 is invoked for an experiment (script, environment, outputs)
//! and what it reports live through its REST API while it runs (`live`).
pub mod live;

use std::collections::BTreeMap;

use crate::experiment::{LoadSettings, Model, Script};

/// Where the k6 container sees the scripts and writes its outputs.
pub const SCRIPTS_DIR: &str = "/scripts";
pub const OUT_DIR: &str = "/out";
/// Port of k6's REST API inside its container (polled for the live progress line).
pub const API_PORT: u16 = 6565;

/// Everything needed to start k6 for one experiment: command line and environment.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct K6Invocation {
    /// Script file name under `labs/k6/`.
    pub script: &'static str,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

impl K6Invocation {
    /// The environment as `KEY=VALUE` strings (Docker's form).
    pub fn env_list(&self) -> Vec<String> {
        self.env.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    /// A shell line that reproduces the run with a local k6 (for the manifest and the README).
    pub fn shell_line(&self) -> String {
        let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{} k6 {}", env.join(" "), self.args.join(" "))
    }
}

fn join_steps(steps: &[u32]) -> String {
    steps
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Build the k6 invocation. `base_url` is how the k6 container reaches the lab's entry point
/// (e.g. `http://perflab-php-nginx-<run>:80`), without the endpoint path.
pub fn invocation(load: &LoadSettings, base_url: &str) -> K6Invocation {
    let mut env = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        env.insert(k.to_owned(), v);
    };
    put("K6_CSV_TIME_FORMAT", "unix_milli".into());
    put("STEPS", join_steps(&load.steps));
    put("HOLD", load.hold_s.to_string());
    put("TIMEOUT", format!("{}s", load.timeout_s));
    let script = match load.script {
        Script::Stepped => {
            put(
                "URL",
                format!("{}{}", base_url.trim_end_matches('/'), load.endpoint),
            );
            put("SLO_MS", num(load.slo_p95_ms));
            put("VUS", load.max_vus.to_string());
            put("PRE_VUS", load.pre_vus.to_string());
            if let Some(a) = load.abort_p95_ms {
                put("ABORT_P95_MS", num(a));
            }
            if !load.abort {
                put("ABORT", "0".into());
            }
            "stepped.js"
        }
        Script::Breakpoint => {
            put("BASE", base_url.trim_end_matches('/').to_owned());
            put("ENDPOINT", load.endpoint.clone());
            put(
                "MODEL",
                match load.model {
                    Model::Open => "open",
                    Model::Closed => "closed",
                }
                .into(),
            );
            put("RAMP", load.ramp_s.to_string());
            put("WARMUP", load.warmup_s.to_string());
            put("WARMUP_RPS", load.warmup_rps.to_string());
            put("SLO_P95", num(load.slo_p95_ms));
            put("PRE_VUS", load.pre_vus.to_string());
            put("MAX_VUS", load.max_vus.to_string());
            if let Some(z) = load.think_time_s {
                put("SLEEP", num(z));
            }
            if !load.abort {
                put("NOABORT", "1".into());
            }
            "breakpoint.js"
        }
    };
    if let Some(p99) = load.slo_p99_ms {
        put("SLO_P99", num(p99));
    }
    let args = vec![
        "run".into(),
        "--quiet".into(),
        "--no-color".into(),
        format!("--address=0.0.0.0:{API_PORT}"),
        "--summary-mode=full".into(),
        "--summary-trend-stats=avg,med,p(90),p(95),p(99),max,count".into(),
        format!("--summary-export={OUT_DIR}/summary.json"),
        format!("--out=csv={OUT_DIR}/requests.csv.gz"),
        format!("{SCRIPTS_DIR}/{script}"),
    ];
    K6Invocation { script, args, env }
}

/// k6 exits 99 when a threshold crossed (and with abortOnFail when it aborted the test):
/// for a breaking-point run that is an outcome, not a harness failure.
pub fn exit_is_outcome(code: i64) -> bool {
    code == 0 || code == 99
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(script: Script) -> LoadSettings {
        LoadSettings {
            script,
            model: Model::Open,
            endpoint: "/cpu".into(),
            steps: vec![50, 100, 125],
            hold_s: 22,
            ramp_s: 8,
            warmup_s: 20,
            warmup_rps: 20,
            slo_p95_ms: 100.0,
            slo_p99_ms: None,
            error_budget: 0.01,
            abort: true,
            abort_p95_ms: None,
            pre_vus: 100,
            max_vus: 400,
            timeout_s: 5,
            think_time_s: None,
        }
    }

    #[test]
    fn breakpoint_env_matches_the_article_command() {
        let inv = invocation(&load(Script::Breakpoint), "http://app:3000/");
        assert_eq!(inv.script, "breakpoint.js");
        let e = &inv.env;
        assert_eq!(e["BASE"], "http://app:3000");
        assert_eq!(e["ENDPOINT"], "/cpu");
        assert_eq!(e["MODEL"], "open");
        assert_eq!(e["STEPS"], "50,100,125");
        assert_eq!(e["SLO_P95"], "100");
        assert_eq!(
            (e["PRE_VUS"].as_str(), e["MAX_VUS"].as_str()),
            ("100", "400")
        );
        assert_eq!(
            (e["RAMP"].as_str(), e["HOLD"].as_str(), e["WARMUP"].as_str()),
            ("8", "22", "20")
        );
        assert!(!e.contains_key("NOABORT"));
        assert!(inv.args.iter().any(|a| a == "/scripts/breakpoint.js"));
        assert!(inv.args.iter().any(|a| a.contains("p(99)")));
    }

    #[test]
    fn stepped_env_and_abort_switch() {
        let mut l = load(Script::Stepped);
        l.endpoint = "/api/db".into();
        l.abort = false;
        l.slo_p95_ms = 200.0;
        l.max_vus = 600;
        let inv = invocation(&l, "http://nginx");
        assert_eq!(inv.env["URL"], "http://nginx/api/db");
        assert_eq!(inv.env["SLO_MS"], "200");
        assert_eq!(inv.env["VUS"], "600");
        assert_eq!(inv.env["ABORT"], "0");
        assert_eq!(inv.env["K6_CSV_TIME_FORMAT"], "unix_milli");
        assert!(inv.shell_line().contains("URL=http://nginx/api/db"));
    }

    #[test]
    fn closed_model_passes_think_time() {
        let mut l = load(Script::Breakpoint);
        l.model = Model::Closed;
        l.think_time_s = Some(0.2);
        l.abort = false;
        let inv = invocation(&l, "http://app:3000");
        assert_eq!(inv.env["MODEL"], "closed");
        assert_eq!(inv.env["SLEEP"], "0.2");
        assert_eq!(inv.env["NOABORT"], "1");
    }

    #[test]
    fn exit_codes() {
        assert!(exit_is_outcome(0));
        assert!(exit_is_outcome(99));
        assert!(!exit_is_outcome(107));
        assert!(!exit_is_outcome(1));
    }
}

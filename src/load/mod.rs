//! The load generator: how k6 is invoked for an experiment (script, environment, outputs)
//! and what it reports live through its REST API while it runs (`live`).
pub mod control;
pub mod live;
pub mod segments;

use std::collections::BTreeMap;

use crate::experiment::Script;
use crate::plan::Plan;

/// Where the k6 container sees the scripts and writes its outputs.
pub(crate) const SCRIPTS_DIR: &str = "/scripts";
pub(crate) const OUT_DIR: &str = "/out";
/// Port of k6's REST API inside its container (polled for the live progress line).
pub(crate) const API_PORT: u16 = 6565;
/// File k6's web dashboard exports into each generator's output folder (`--k6-dashboard`).
pub(crate) const DASHBOARD_FILE: &str = "dashboard.html";
/// File k6's `--summary-export` writes into each generator's output folder.
pub(crate) const SUMMARY_FILE: &str = "summary.json";
/// File k6's per-request CSV (`--out csv=`) goes to in each generator's output folder.
pub(crate) const CSV_FILE: &str = "requests.csv.gz";
// The run directory's layout (`rundir::layout::K6Dir`, above this module) names the generator
// folders' files with these constants: k6 writes them here, the readers find them there.

/// Everything needed to start k6 for one experiment: command line and environment.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct K6Invocation {
    /// Script file name under `labs/k6/`.
    pub script: &'static str,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

impl K6Invocation {
    /// A shell line that reproduces the run with a local k6 (for the manifest).
    pub(crate) fn shell_line(&self) -> String {
        let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{} k6 {}", env.join(" "), self.args.join(" "))
    }
}

/// Build the k6 invocation from a plan (its `k6_env` already carries the quick-scaled values).
/// `base_url` is how the k6 container reaches the lab's entry point (e.g. `http://nginx:80`),
/// without the endpoint path.
pub(crate) fn invocation(plan: &Plan, base_url: &str) -> K6Invocation {
    invocation_for(
        plan,
        base_url,
        &segments::segments(1)[0],
        &format!("0.0.0.0:{API_PORT}"),
        true,
    )
}

/// The invocation of one of several generators: its execution segment (no flags for a single
/// generator) and the address of its REST API (`0.0.0.0:6565` in a bridged container,
/// `127.0.0.1:<port>` with host networking). `paused`: k6 initialises (script, pre-allocated
/// VUs) and waits for the orchestrator to resume it through that API on the second; without
/// it (an API this machine cannot reach) the container's start gate times the start.
pub(crate) fn invocation_for(
    plan: &Plan,
    base_url: &str,
    seg: &segments::Segment,
    api_address: &str,
    paused: bool,
) -> K6Invocation {
    let mut env = plan.k6_env.clone();
    let base = base_url.trim_end_matches('/');
    env.insert("K6_CSV_TIME_FORMAT".into(), "unix_milli".into());
    let script = match plan.script {
        Script::Stepped if plan.drop.is_some() => {
            // the drop profile's journeys pick their pages below the base
            env.insert("BASE".into(), base.to_owned());
            "drop.js"
        }
        Script::Stepped => {
            env.insert("URL".into(), format!("{base}{}", plan.endpoint));
            "stepped.js"
        }
        Script::Breakpoint => {
            env.insert("BASE".into(), base.to_owned());
            "breakpoint.js"
        }
    };
    let mut args: Vec<String> = vec!["run".into(), "--quiet".into(), "--no-color".into()];
    if paused {
        // init (script, pre-allocated VUs) happens now; the run resumes it on the second
        args.push("--paused".into());
    }
    args.extend([
        format!("--address={api_address}"),
        "--summary-mode=full".into(),
        "--summary-trend-stats=avg,med,p(90),p(95),p(99),max,count".into(),
        format!("--summary-export={OUT_DIR}/{SUMMARY_FILE}"),
        format!("--out=csv={OUT_DIR}/{CSV_FILE}"),
    ]);
    args.extend(seg.k6_args());
    args.push(format!("{SCRIPTS_DIR}/{script}"));
    K6Invocation { script, args, env }
}

/// Turn on k6's own web dashboard for this invocation, exported at the end of the run as one
/// self-contained HTML file beside the CSV. Its HTTP server is off (port -1): nothing listens,
/// in the container or on the host, and k6 does not wait for a browser before it exits.
pub(crate) fn with_dashboard(inv: &mut K6Invocation) {
    for (k, v) in [
        ("K6_WEB_DASHBOARD", "true".to_string()),
        ("K6_WEB_DASHBOARD_PORT", "-1".to_string()),
        ("K6_WEB_DASHBOARD_OPEN", "false".to_string()),
        (
            "K6_WEB_DASHBOARD_EXPORT",
            format!("{OUT_DIR}/{DASHBOARD_FILE}"),
        ),
    ] {
        inv.env.insert(k.into(), v);
    }
}

/// k6 exits 99 when a threshold crossed (and with abortOnFail when it aborted the test):
/// for a breaking-point run that is an outcome, not a harness failure.
pub(crate) fn exit_is_outcome(code: i64) -> bool {
    code == 0 || code == 99
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Catalog, Model};
    use crate::plan::{PlanOptions, build};

    fn plan_of(id: &str) -> Plan {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let cat =
            Catalog::load(&dir, &crate::verify::quantities::Quantities).expect("catalog loads");
        let e = cat.expand(id).unwrap()[0].clone();
        build(&e, PlanOptions::default())
    }

    #[test]
    fn breakpoint_env_matches_the_article_command_for_2a() {
        let inv = invocation(&plan_of("2a"), "http://app:3000/");
        assert_eq!(inv.script, "breakpoint.js");
        let e = &inv.env;
        assert_eq!(e["BASE"], "http://app:3000");
        assert_eq!(e["ENDPOINT"], "/cpu");
        assert_eq!(e["MODEL"], "open");
        assert_eq!(e["STEPS"], "50,100,125,150,175,200,250");
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
        assert!(!e.contains_key("URL"));
        assert!(inv.args.iter().any(|a| a == "/scripts/breakpoint.js"));
        assert!(inv.args.iter().any(|a| a.contains("p(99)")));
    }

    #[test]
    fn stepped_env_for_exp2_pgconn_has_no_abort() {
        let inv = invocation(&plan_of("exp2-pgconn"), "http://nginx");
        assert_eq!(inv.script, "stepped.js");
        assert_eq!(inv.env["URL"], "http://nginx/api/db");
        assert_eq!(inv.env["SLO_MS"], "200");
        assert_eq!(inv.env["ABORT"], "0");
        assert_eq!(inv.env["K6_CSV_TIME_FORMAT"], "unix_milli");
        assert!(inv.shell_line().contains("URL=http://nginx/api/db"));
    }

    #[test]
    fn closed_model_passes_think_time() {
        let p = plan_of("3c");
        assert_eq!(p.model, Model::Closed);
        let inv = invocation(&p, "http://app:3000");
        assert_eq!(inv.env["MODEL"], "closed");
        assert_eq!(inv.env["SLEEP"], "0.2");
        assert_eq!(inv.env["NOABORT"], "1");
    }

    #[test]
    fn second_of_two_generators_gets_its_segment() {
        let p = plan_of("demo-open");
        let seg = &segments::segments(2)[1];
        let inv = invocation_for(&p, "http://127.0.0.1:8080", seg, "127.0.0.1:6566", false);
        assert!(!inv.args.iter().any(|a| a == "--paused"));
        assert!(inv.args.contains(&"--execution-segment=1/2:1".to_string()));
        assert!(
            inv.args
                .contains(&"--execution-segment-sequence=0,1/2,1".to_string())
        );
        assert!(inv.args.contains(&"--address=127.0.0.1:6566".to_string()));
        assert_eq!(inv.args.last().unwrap(), "/scripts/stepped.js");
        assert_eq!(inv.env["URL"], "http://127.0.0.1:8080/work");
        // A single generator's command line is the one the N=1 runs always had.
        let one = invocation(&p, "http://app:3000");
        assert!(!one.args.iter().any(|a| a.contains("segment")));
        assert!(one.args.contains(&"--address=0.0.0.0:6565".to_string()));
    }

    #[test]
    fn dashboard_exports_a_file_and_listens_nowhere() {
        let mut inv = invocation(&plan_of("demo-open"), "http://app:3000");
        let before = inv.args.clone();
        with_dashboard(&mut inv);
        assert_eq!(inv.env["K6_WEB_DASHBOARD"], "true");
        assert_eq!(inv.env["K6_WEB_DASHBOARD_PORT"], "-1");
        assert_eq!(inv.env["K6_WEB_DASHBOARD_EXPORT"], "/out/dashboard.html");
        assert_eq!(inv.args, before, "the command line itself is unchanged");
        assert!(inv.shell_line().contains("K6_WEB_DASHBOARD=true"));
    }

    #[test]
    fn exit_codes() {
        assert!(exit_is_outcome(0));
        assert!(exit_is_outcome(99));
        assert!(!exit_is_outcome(107));
        assert!(!exit_is_outcome(1));
    }
}

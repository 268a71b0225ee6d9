//! diag-acc fitted to the host's pool (docs/remedies.md, "diag-acc fitted to the pool"), on the
//! runs made after the rule (2026-12-07, 16:50-17:05 UTC, the project's 2-CPU VM, nothing else
//! running): the peak probe at 1.1x the working point's N/W saturates the pool without
//! collapsing, the steps are the article's fractions of what it served, `php-time-flat` holds at
//! every step, and diag-acc-stall runs the same steps from diag-acc's calibration, its convoy
//! read as the refuted mark records.
use crate::verify_fixes_dec07::{out_root, run, verify_json};

/// The two pairs kept as fixtures: (diag-acc, diag-acc-stall, steps, the probe's ok/s).
const PAIRS: [(&str, &str, [u32; 4], f64); 2] = [
    (
        "20261207T165012Z-r1",
        "20261207T165333Z-r1",
        [16, 31, 47, 63],
        69.6,
    ),
    (
        "20261207T170009Z-r1",
        "20261207T170329Z-r1",
        [15, 29, 44, 59],
        65.13,
    ),
];

/// Each claim's verdict in `perflab verify <id> --fit --json` over `out`.
pub(crate) fn verdicts(out: &std::path::Path, id: &str) -> Vec<(String, String)> {
    let v = verify_json(out, id);
    v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["claim"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn diag_acc_steps_are_the_article_s_fractions_of_what_a_saturated_pool_served() {
    for (acc, _, steps, served) in PAIRS {
        let r = run("diag-acc", acc);
        let fit = r.manifest.measurements.fit.as_ref().unwrap();
        let q = &fit.quantities;
        let peak = fit.peak.as_ref().unwrap();
        // the probe: 1.1x the working point's N/W, below the collapse of a probe far past it
        assert_eq!(peak.rate as f64, (1.1 * q["pool_rps"]).round(), "{acc}");
        assert!(
            (peak.ok_per_s - served).abs() < 0.05,
            "{acc}: {}",
            peak.ok_per_s
        );
        // it saturated the pool (served well under the rate, the queue growing) without the
        // collapse of a probe far past it (no failed share in its verdict: 68-71 % there)
        assert!(peak.ok_per_s < 0.85 * peak.rate as f64, "{acc}: {peak:?}");
        assert!(!peak.why.contains("failed"), "{acc}: {}", peak.why);
        assert_eq!(r.manifest.experiment.load.steps, steps, "{acc}");
        for (x, s) in [20.0, 40.0, 60.0, 80.0].into_iter().zip(steps) {
            assert_eq!((x * served / 89.0).round() as u32, s, "{acc}");
        }
        let out = out_root(&[("diag-acc", acc)]);
        let v = verdicts(out.path(), "diag-acc");
        assert_eq!(
            v,
            [
                ("php-time-flat".to_string(), "pass".to_string()),
                ("connect-instant".to_string(), "pass".to_string())
            ],
            "{acc}"
        );
    }
}

#[test]
fn the_stall_runs_diag_acc_s_steps_and_its_convoy_reads_refuted() {
    for (acc, stall, steps, _) in PAIRS {
        let s = run("diag-acc-stall", stall);
        let fit = s.manifest.measurements.fit.as_ref().unwrap();
        assert_eq!(
            fit.twin_run.as_deref(),
            Some(format!("diag-acc/{acc}").as_str())
        );
        assert_eq!(s.manifest.experiment.load.steps, steps, "{stall}");
        let out = out_root(&[("diag-acc", acc), ("diag-acc-stall", stall)]);
        for (claim, verdict) in verdicts(out.path(), "diag-acc-stall") {
            let want = if claim == "php-time-convoy" {
                "refuted"
            } else {
                "pass"
            };
            assert_eq!(verdict, want, "{stall}: {claim}");
        }
    }
}

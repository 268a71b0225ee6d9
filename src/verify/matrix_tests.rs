//! The matrix on the recorded rounds of tests/fixtures/compare (quick rounds of 2a and exp1
//! made on this project's 2-CPU host, clean and with `burn_us` injected).
use super::*;
use crate::experiment::{Catalog, CatalogEntry};
use crate::verify::load;
use std::path::Path;

fn exp(id: &str) -> Experiment {
    let c = Catalog::load(
        Path::new("experiments"),
        &crate::verify::quantities::Quantities,
    )
    .unwrap();
    let CatalogEntry::Experiment(e) = &c.get(id).unwrap().entry else {
        panic!("{id} is an experiment")
    };
    e.clone()
}

/// The rounds of a recorded batch, oldest first.
fn batch(name: &str) -> Vec<LoadedRun> {
    let root = Path::new("tests/fixtures/compare").join(name);
    let exp_dir = std::fs::read_dir(&root).unwrap().flatten().next().unwrap();
    let mut dirs: Vec<_> = std::fs::read_dir(exp_dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.iter().map(|d| load::load_run(d).unwrap()).collect()
}

fn row_of(id: &str, a: &[LoadedRun], b: &[LoadedRun]) -> Row {
    row_with(id, a, b, &Settings::default())
}

fn row_with(id: &str, a: &[LoadedRun], b: &[LoadedRun], settings: &Settings) -> Row {
    let none = BTreeMap::new();
    let side = |rounds| Side {
        rounds,
        against: &none,
    };
    row(&exp(id), side(a), side(b), settings)
}

#[test]
fn an_injected_burn_is_a_row_with_its_interval_naming_the_process_that_moved() {
    // 2a's burn is decided at 3 rounds a side; exp1's (noisier rounds) is not yet.
    for (id, base, burn, process, decided) in [
        ("2a", "2a-base", "2a-burn", "node", true),
        ("exp1", "exp1-base", "exp1-burn", "fpm", false),
    ] {
        let r = row_of(id, &batch(base), &batch(burn));
        assert_eq!((r.rounds_a, r.rounds_b), (3, 3));
        let c = r.comparison.as_ref().unwrap();
        // B/A and its interval are the test's
        let (ratio, [lo, hi]) = (r.cpu_ratio.unwrap(), r.cpu_interval.unwrap());
        let t = c.cpu.test.as_ref().unwrap();
        assert_eq!((ratio, lo, hi), (t.ratio, t.low, t.high));
        assert!(
            lo < ratio && ratio < hi && ratio > 1.1,
            "{id}: {ratio} {lo}-{hi}"
        );
        assert!(ratio_text(&r).contains(&format!("[{lo:.3}, {hi:.3}]")));
        assert_eq!((r.decided, r.verdict), (c.decided, c.verdict), "{id}");
        if decided {
            assert_eq!(r.verdict, Verdict::Regressed, "{id}: {}", r.why);
            assert!(
                r.decided && r.rounds_needed.is_none() && lo > 1.0,
                "{id}: {r:?}"
            );
        } else {
            assert_eq!(r.verdict, Verdict::Inconclusive, "{id}: {}", r.why);
            assert!(!r.decided && r.rounds_needed.is_some_and(|n| n > 3), "{id}");
        }
        assert_eq!(r.cpu_step, c.cpu.step);
        // The burn is in the app process: it moved most, by about the whole change.
        let moved = &r.processes[0];
        assert_eq!(moved.process, process, "{id}: {:?}", r.processes);
        assert!(moved.change_pct > 10.0, "{id}: {moved:?}");
        assert!(r.moved().unwrap().starts_with(process));
        // The load generator is not a lab process.
        assert!(r.processes.iter().all(|p| p.process != "k6"));
        // The capacity figures are the comparison's.
        assert_eq!(r.max_sustainable_a, c.capacity.a_median);
        assert_eq!(r.max_sustainable_b, c.capacity.b_median);
    }
}

#[test]
fn per_process_cpu_reads_the_cgroup_share_per_ok_response() {
    let a = batch("exp1-base");
    let r = row_of("exp1", &a, &batch("exp1-clean"));
    let step = r.cpu_step.unwrap();
    let names: Vec<&str> = r.processes.iter().map(|p| p.process.as_str()).collect();
    for p in ["fpm", "nginx", "pg"] {
        assert!(names.contains(&p), "{names:?}");
    }
    // fpm's figure is the median over A's rounds of its CPU % x 10 / ok per second.
    let mut per_round: Vec<f64> = a
        .iter()
        .map(|run| {
            let s = run.report.steps.iter().find(|s| s.target == step).unwrap();
            s.server.as_ref().unwrap().cpu_pct["fpm"] * 10.0 / s.ok_per_s
        })
        .collect();
    per_round.sort_by(f64::total_cmp);
    let fpm = r.processes.iter().find(|p| p.process == "fpm").unwrap();
    assert!(
        (fpm.a_ms - per_round[1]).abs() < 1e-9,
        "{fpm:?} {per_round:?}"
    );
    // sorted by the absolute change in ms
    let d: Vec<f64> = r
        .processes
        .iter()
        .map(|p| (p.b_ms - p.a_ms).abs())
        .collect();
    assert!(d.windows(2).all(|w| w[0] >= w[1]), "{d:?}");
}

#[test]
fn a_claim_whose_verdict_flips_is_listed_with_both_readings() {
    let a = batch("2a-base");
    let same = row_of("2a", &a, &a);
    assert!(same.claims_changed.is_empty(), "{:?}", same.claims_changed);
    // B: the event loop busy half the time at the top step in every round, so
    // `loop-saturated` (ELU >= 0.95 at the top step) cannot hold on B (it passes on A).
    let mut b = a.clone();
    for run in &mut b {
        let top = run.report.steps.last_mut().unwrap();
        top.server.as_mut().unwrap().node.as_mut().unwrap().elu_max = 0.5;
    }
    let r = row_of("2a", &a, &b);
    assert_eq!(r.claims_changed.len(), 1, "{:?}", r.claims_changed);
    let c = &r.claims_changed[0];
    assert_eq!(c.claim, "loop-saturated");
    assert_eq!(
        (c.a, c.b),
        (ClaimVerdict::Pass, ClaimVerdict::Fail),
        "{c:?}"
    );
    assert!(c.b_measured.contains("0.5"), "{c:?}");
    assert_eq!(claims_text(&r), "loop-saturated: pass -> fail");
}

#[test]
fn a_side_without_rounds_is_an_inconclusive_row_saying_which() {
    let r = row_of("2a", &batch("2a-base"), &[]);
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert!(r.why.contains("side B"), "{}", r.why);
    assert!(r.comparison.is_none() && r.cpu_ratio.is_none());
    let r = row_of("2a", &[], &[]);
    assert!(r.why.contains("side A nor B"), "{}", r.why);
}

#[test]
fn the_summary_counts_rows_and_the_exit_code_follows_the_worst() {
    let (settings, family) = Settings::default().family(2);
    let rows = vec![
        row_with("2a", &batch("2a-base"), &batch("2a-burn"), &settings),
        row_with("exp1", &batch("exp1-base"), &[], &settings),
    ];
    let m = matrix(
        "all",
        "A (published, trixie)",
        "B (burn_us=1000)",
        rows,
        family,
    );
    assert_eq!(m.summary.regressed, ["2a"]);
    assert_eq!(m.summary.inconclusive, ["exp1"]);
    assert_eq!(m.summary.exit_code, 1);
    assert!(
        m.summary
            .line
            .contains("2 experiment(s), B (burn_us=1000) against A (published, trixie): 1 regressed (2a), 0 improved, 0 same, 1 inconclusive (exp1); confidence 99 % over 2 rows (each row at 99.5 %, each of its 2 signals at 99.75 %); exit 1"),
        "{}",
        m.summary.line
    );
    // the row was judged at the split level: its interval is wider than alone
    let alone = row_of("2a", &batch("2a-base"), &batch("2a-burn"));
    let [lo, hi] = m.rows[0].cpu_interval.unwrap();
    let [lo1, hi1] = alone.cpu_interval.unwrap();
    assert!(lo < lo1 && hi > hi1, "{lo}-{hi} within {lo1}-{hi1}");
    let text = render_text(&m);
    assert!(text.contains("CPU moved most"), "{text}");
    assert!(
        text.contains("  exp1: no complete round of side B"),
        "{text}"
    );
    assert!(text.ends_with(&format!("{}\n", m.summary.line)), "{text}");
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["rows"][0]["verdict"], "regressed");
    assert_eq!(json["rows"][0]["processes"][0]["process"], "node");
    assert_eq!(json["summary"]["exit_code"], 1);
    assert!(json["rows"][1].get("comparison").is_none());
}

//! The power and false alarms of `compare`'s paired test measured on data it was not tuned on:
//! whole pairs resampled from the held-out A/A batches (tests/fixtures/compare/*/HELD-OUT.md,
//! recorded after the rule was set and left out of every pool the rule and its other tables
//! were made from), a change injected on B, judged by the paired sequential test the CLI ships
//! (`resample::pairs_resampled`). The table is docs/regression.md's "Power on held-out pairs";
//! this test fails when the page and the simulation disagree. Seeded.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use perflab::analyze::model::Report;
use perflab::rundir::batch::CompareSide;
use perflab::verify::compare::resample;
use perflab::verify::compare::sequential::Settings;
use perflab::verify::compare::signals;

const FIX: &str = "tests/fixtures/compare";

/// Each held-out batch of `exp` by whole rounds: its name and its pairs' differences of the
/// signal's logs (B - A), by pair number.
fn held_out(exp: &str) -> Vec<(String, Vec<f64>)> {
    held_out_all(exp)
        .into_iter()
        .filter(|(n, _)| !n.contains(TOGETHER))
        .collect()
}

/// The held-out batches whose pairs were loaded together (`--design together`) carry this in
/// their folder's name.
const TOGETHER: &str = "together";

fn held_out_all(exp: &str) -> Vec<(String, Vec<f64>)> {
    let mut batches: Vec<PathBuf> = std::fs::read_dir(FIX)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("HELD-OUT.md").exists() && p.join(exp).is_dir())
        .collect();
    batches.sort();
    batches
        .iter()
        .map(|b| (name(b), diffs(&b.join(exp))))
        .collect()
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

fn diffs(dir: &Path) -> Vec<f64> {
    let mut rounds: Vec<(String, Report, (CompareSide, u32))> = Vec::new();
    for d in std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()) {
        let report = perflab::rundir::read_report(&d).unwrap();
        let tag = perflab::rundir::read_manifest(&d)
            .unwrap()
            .measurements
            .compare
            .unwrap();
        rounds.push((name(&d), report, (tag.side, tag.pair)));
    }
    let ins: Vec<(&str, &Report)> = rounds.iter().map(|r| (r.0.as_str(), &r.1)).collect();
    let values = signals::primary(&ins);
    let mut pairs: BTreeMap<u32, [Option<f64>; 2]> = BTreeMap::new();
    for (r, v) in rounds.iter().zip(values) {
        let (side, pair) = r.2;
        pairs.entry(pair).or_default()[usize::from(side == CompareSide::B)] = v.map(f64::ln);
    }
    pairs
        .values()
        .map(|[a, b]| b.unwrap() - a.unwrap())
        .collect()
}

fn sd_pct(d: &[f64]) -> f64 {
    let m = d.iter().sum::<f64>() / d.len() as f64;
    let v = d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (d.len() - 1) as f64;
    100.0 * v.sqrt()
}

#[test]
fn power_on_held_out_pairs_is_what_the_page_says() {
    let batches = held_out("2a");
    assert!(batches.len() >= 2, "the held-out A/A batches: {batches:?}");
    table(batches, "both, pooled");
}

/// The same table for the pairs loaded together (docs/regression.md, "Pairs loaded together").
#[test]
fn power_on_held_out_pairs_loaded_together_is_what_the_page_says() {
    let batches: Vec<(String, Vec<f64>)> = held_out_all("2a")
        .into_iter()
        .filter(|(n, _)| n.contains(TOGETHER))
        .collect();
    assert!(
        batches.len() >= 2,
        "the held-out A/A batches together: {batches:?}"
    );
    table(batches, "together, pooled");
}

/// Resample each batch and the batches pooled (`pooled_name`); every row must be on the page.
fn table(batches: Vec<(String, Vec<f64>)>, pooled_name: &str) {
    // the CPU signal's share of the budget, as it ships beside the latency signal
    let s = Settings::default().per_signal();
    let pooled: Vec<f64> = batches.iter().flat_map(|(_, d)| d.clone()).collect();
    let mut rows = Vec::new();
    let all = std::iter::once((pooled_name.to_string(), pooled));
    for (name, d) in batches.into_iter().chain(all) {
        let mut cells = vec![format!("{} pairs, SD {:.1} %", d.len(), sd_pct(&d))];
        let mut detected = Vec::new();
        for e in [0.0, 5.0, 10.0, 15.0, 20.0] {
            let t = resample::pairs_resampled(&d, e, &s, (4000, 7));
            if e == 0.0 {
                // a batch alone is 6 or 10 values: its resamples repeat a pair often enough
                // that the t reads ties as certainty (the page says so); the pooled 16 hold
                // the level
                if name == pooled_name {
                    let nominal = 1.0 - s.confidence;
                    assert!(t.alarms() <= 1.5 * nominal, "{name}: false alarms {t:?}");
                }
                let same = t.share(t.within);
                cells.push(format!(
                    "{:.2} %, same {:.1} %",
                    t.alarms() * 100.0,
                    same * 100.0
                ));
            } else {
                detected.push(t.detected(e));
                cells.push(format!(
                    "{:.1} % ({:.1})",
                    t.detected(e) * 100.0,
                    t.mean_rounds()
                ));
            }
        }
        assert!(
            detected.windows(2).all(|w| w[1] >= w[0]),
            "{name}: {detected:?}"
        );
        rows.push(format!("| {name} | {} |", cells.join(" | ")));
        println!("{}", rows.last().unwrap());
    }
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/regression.md"))
            .unwrap();
    let stale: Vec<&String> = rows.iter().filter(|r| !page.contains(r.as_str())).collect();
    assert!(
        stale.is_empty(),
        "docs/regression.md lacks these rows (paste them in): {stale:#?}"
    );
}

/// The differences read here are the pairs the CLI judged: their SD is the paired noise its
/// calibration printed for each batch (6.81 % and 5.98 %, tests/offline/compare_batches.rs).
#[test]
fn the_resampled_pairs_are_the_ones_the_calibration_read() {
    let got: Vec<(String, f64)> = held_out("2a")
        .into_iter()
        .map(|(n, d)| (n, (sd_pct(&d) * 100.0).round() / 100.0))
        .collect();
    assert_eq!(
        got,
        [
            ("2a-aa-dec05".to_string(), 6.81),
            ("2a-aa-dec05-quiet".to_string(), 5.98)
        ]
    );
}

/// Both deciding signals as the verdict joins them (`simulate::two_signal_tally`: a look after
/// every pair, the batch ending at the first decided look; `same` when the CPU is within
/// ±--margin and the latency within its own ±20 %, `latency::LATENCY_MARGIN_PCT`) on whole
/// pairs of the held-out batches loaded together, pooled: under no change the verdict's false
/// alarms (either signal) and its `same`; +5 % CPU and +20 % latency at unchanged CPU found.
/// The margin was set from the issue's +20 % latency change, not from these batches (whose
/// latency was recorded under the ±5 % rule); the row must be on docs/regression.md.
#[test]
fn both_signals_on_held_out_pairs_loaded_together() {
    use perflab::verify::compare::simulate;
    let names: Vec<String> = held_out_all("2a")
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.contains(TOGETHER))
        .collect();
    assert!(names.len() >= 2, "{names:?}");
    let batches: Vec<Vec<(f64, f64)>> = names
        .iter()
        .map(|n| crate::compare_power::batch_pairs(n))
        .collect();
    let pairs = simulate::RecordedPairs::new(&batches);
    let (sd_cpu, sd_lat) = pairs.sd_pct();
    let s = Settings::default();
    let none = simulate::two_signal_tally(&pairs, (0.0, 0.0), &s, (4000, 51));
    let cpu5 = simulate::two_signal_tally(&pairs, (5.0, 0.0), &s, (4000, 52));
    let lat20 = simulate::two_signal_tally(&pairs, (0.0, 20.0), &s, (4000, 53));
    let pct = |x: f64| format!("{:.1} %", x * 100.0);
    let row = format!(
        "| together, both signals ({} batches) | {} | {sd_cpu:.1} % | {sd_lat:.1} % | {} | {} ({:.1}) | {} ({:.1}) | {} ({:.1}) |",
        names.len(),
        pairs.pairs.len(),
        pct(none.share(none.any_moved)),
        pct(none.share(none.same)),
        none.cpu.mean_rounds(),
        pct(cpu5.cpu.detected(5.0)),
        cpu5.cpu.mean_rounds(),
        pct(lat20.latency.detected(20.0)),
        lat20.latency.mean_rounds(),
    );
    println!("{row}");
    assert!(none.share(none.any_moved) <= 0.015, "{none:?}");
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/regression.md"))
            .unwrap();
    assert!(
        page.contains(&row),
        "docs/regression.md lacks this row (paste it in): {row}"
    );
}

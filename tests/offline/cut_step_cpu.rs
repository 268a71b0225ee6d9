//! Issue 45: a cut knee step read 120 % of the one core its app is pinned to. The step here is
//! built from recorded parts: k6's requests of a run whose knee step k6 cut short
//! (tests/fixtures/k6/stepped-abort: 40, 80, then 120 rps cut after the abort, capacity ~100
//! ok/s), the CPU layout of a recorded 2a run (the app pinned to one CPU), and the app's cgroup
//! lines written as the fast sampler writes them: each line the CPU used since the line before
//! divided by the time since it (`sample::cgroup::cores_between`), at the tick times the fast
//! sampler recorded in that 2a run (tests/fixtures/hostcpu/2a-shared, its jitter of -1..+16 ms
//! kept), with the ticks' phase at the clock's second boundary, as in the run. The app
//! uses the same CPU per successful response at every step, so its core is full at the knee.
use perflab::analyze::{self, Report};
use perflab::rundir::inputs as load;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The tick offsets (ms, against whole seconds from the first tick) the fast sampler recorded
/// for the 2a app's container.
fn recorded_tick_offsets() -> Vec<i64> {
    let text = std::fs::read_to_string(
        root().join("tests/fixtures/hostcpu/2a-shared/samples/cgroup.jsonl"),
    )
    .unwrap();
    let ts: Vec<i64> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["role"] == "app")
        .map(|v| v["t"].as_i64().unwrap())
        .collect();
    ts.iter()
        .enumerate()
        .map(|(i, t)| t - ts[0] - 1000 * i as i64)
        .collect()
}

/// Where in the recorded ticks the built ones start: from the 5th on, two of the four ticks
/// inside the cut knee step's 3.26 s window (at .003 and .999 ms past the same second) fall in
/// one clock second, and the old mean of per-second sums read that second twice: app 127 % of
/// 100 % at the knee and 12.8 ms CPU per ok against 10.3 and 11.6 in the steps before (the
/// 80 rps step read 92 % for 80 % used: its window too held a doubled second).
const PHASE: usize = 4;

/// A run directory of the stepped-abort requests with the 2a run's manifest (app on CPU 1).
fn run_dir(dir: &Path) {
    let k6 = root().join("tests/fixtures/k6");
    std::fs::create_dir_all(dir.join("k6")).unwrap();
    for (from, to) in [
        ("stepped-abort.csv.gz", "k6/requests.csv.gz"),
        ("stepped-abort.summary.json", "k6/summary.json"),
        ("stepped-abort.log", "k6/k6.log"),
    ] {
        std::fs::copy(k6.join(from), dir.join(to)).unwrap();
    }
    let manifest = root().join("tests/fixtures/hostcpu/2a-shared/manifest.json");
    std::fs::copy(manifest, dir.join("manifest.json")).unwrap();
}

/// The app's cgroup lines: its CPU counter advances, in each second of the run, by `ms_per_ok`
/// per successful response completed in that second; each tick reads it as the sampler does.
fn cgroup_lines(r: &Report, ms_per_ok: f64, offsets: &[i64]) -> String {
    let first = r.timeline.first().unwrap().t - 6;
    let last = r.timeline.last().unwrap().t + 4;
    let rate = |s: i64| -> f64 {
        let ok = r.timeline.iter().find(|x| x.t == s).map_or(0, |x| x.ok);
        ok as f64 * ms_per_ok / 1000.0
    };
    // the counter in core-seconds at `x` ms: whole seconds, then the part of the last one
    let counter = |x: i64| -> f64 {
        let s = x.div_euclid(1000);
        let whole: f64 = (first..s).map(rate).sum();
        whole + rate(s) * (x - s * 1000) as f64 / 1000.0
    };
    let mut out = String::new();
    let mut prev: Option<i64> = None;
    for k in 0..(last - first) {
        let t = (first + k) * 1000 + offsets[(k as usize + PHASE) % offsets.len()];
        if let Some(p) = prev {
            let cores = (counter(t) - counter(p)) / ((t - p) as f64 / 1000.0);
            out.push_str(&format!(
                "{{\"t\":{t},\"role\":\"app\",\"container\":\"cut-app\",\"cpu_cores\":{cores},\"mem_bytes\":0,\"throttled_ms\":0.0,\"psi_some_avg10\":null}}\n"
            ));
        }
        prev = Some(t);
    }
    out
}

#[test]
fn a_cut_knee_step_reads_at_most_its_core_and_the_cpu_per_request_of_the_steps_before() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cut");
    run_dir(&dir);
    let bare = analyze::analyze_run(load::run_dir(&dir).unwrap()).unwrap();
    // The busiest second fills the app's one core: that many ms of CPU per response.
    let max_ok = bare.timeline.iter().map(|x| x.ok).max().unwrap();
    let ms_per_ok = 1000.0 / max_ok as f64;
    std::fs::create_dir_all(dir.join("samples")).unwrap();
    let lines = cgroup_lines(&bare, ms_per_ok, &recorded_tick_offsets());
    std::fs::write(dir.join("samples/cgroup.jsonl"), lines).unwrap();
    let r = analyze::analyze_run(load::run_dir(&dir).unwrap()).unwrap();
    assert_eq!((r.knee, r.params.app_cores), (Some(120), Some(1.0)));
    let knee = r.steps.iter().find(|s| Some(s.target) == r.knee).unwrap();
    assert!(knee.truncated, "the knee step was cut");
    let app = knee.server.as_ref().unwrap().cpu_pct["app"];
    let tolerance = analyze::bounds::CPU_JITTER_PCT;
    assert!(
        app <= 100.0 + tolerance,
        "{}: app {app:.2} % of its one core",
        knee.name
    );
    let before: Vec<f64> = r
        .steps
        .iter()
        .filter(|s| s.target < 120 && !s.truncated)
        .map(|s| s.ms_cpu_per_ok.unwrap())
        .collect();
    let (lo, hi) = before
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    let got = knee.ms_cpu_per_ok.unwrap();
    // within the whole steps' spread, widened by the CPU reading's stated jitter
    let slack = (hi + lo) / 2.0 * tolerance / 100.0;
    assert!(
        got >= lo - slack && got <= hi + slack,
        "knee {got:.3} ms CPU per ok vs {before:?} before it (built with {ms_per_ok:.3})"
    );
    assert!(
        r.unusable.is_empty(),
        "every figure within its bounds: {:?}",
        r.unusable
    );
}

//! `perflab compare` on recorded rounds (tests/fixtures/compare: quick rounds of 2a and exp1
//! made on this project's shared 2-CPU host by scripts/make-compare-fixtures.sh): the `--json`
//! verdict of the injected regressions and of clean reruns against the same baseline, the
//! per-side lists, the text of one run against one run, `--html`, and bad input.
use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

const FIX: &str = "tests/fixtures/compare";

fn perflab() -> Command {
    let mut c = Command::cargo_bin("perflab").unwrap();
    c.env_remove("PERFLAB_CATALOG")
        .env_remove("PERFLAB_OUT")
        .env("NO_COLOR", "1");
    c
}

/// The run directories of a recorded batch, oldest first.
fn rounds(batch: &str) -> Vec<PathBuf> {
    let exp_dir = std::fs::read_dir(Path::new(FIX).join(batch))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let mut v: Vec<PathBuf> = std::fs::read_dir(exp_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("manifest.json").exists())
        .collect();
    v.sort();
    v
}

fn list(batch: &str) -> String {
    let v: Vec<String> = rounds(batch)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    v.join(",")
}

/// `compare A B --json`, checking the exit code against the verdict (0 same / improved, 1
/// regressed, 3 inconclusive).
fn compare_json(a: &str, b: &str) -> Value {
    let out = perflab()
        .args(["compare", a, b, "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).expect("compare --json prints JSON");
    let want = match v["verdict"].as_str().unwrap() {
        "regressed" => 1,
        "inconclusive" => 3,
        _ => 0,
    };
    assert_eq!(out.status.code(), Some(want), "{}", v["why"]);
    v
}

/// `compare A B`'s text, its exit code checked.
fn compare_text(a: &str, b: &str, code: i32) -> String {
    let out = perflab().args(["compare", a, b]).assert().code(code);
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn verdict(v: &Value) -> &str {
    v["verdict"].as_str().unwrap()
}

#[test]
fn injected_burn_is_a_regression_with_both_sides_listed() {
    for (base, burn, key) in [
        ("2a-base", "2a-burn", "experiment.stack.node.burn_us"),
        ("exp1-base", "exp1-burn", "experiment.stack.php.burn_us"),
    ] {
        let v = compare_json(&list(base), &list(burn));
        for side in ["rounds_a", "rounds_b"] {
            assert_eq!(v[side]["runs"].as_array().unwrap().len(), 3);
            assert_eq!(v[side]["max_sustainable"].as_array().unwrap().len(), 3);
            assert_eq!(v[side]["cpu_ms_per_ok"].as_array().unwrap().len(), 3);
            assert_eq!(v[side]["steal_pct"].as_array().unwrap().len(), 3);
        }
        assert!(v["cpu"]["step"].as_u64().is_some());
        let t = &v["cpu"]["test"];
        let (low, ratio, high) = (
            t["low"].as_f64().unwrap(),
            t["ratio"].as_f64().unwrap(),
            t["high"].as_f64().unwrap(),
        );
        assert!(low < ratio && ratio < high && ratio > 1.1, "{t}");
        assert_eq!(v["settings"]["confidence"], 0.99);
        assert_eq!(v["boundary"]["planned_rounds"], 10);
        assert_eq!(v["boundary"]["df"], 4.0);
        let config = v["config"].as_array().unwrap();
        assert!(config.iter().any(|d| d["key"] == key), "{config:?}");
        assert_eq!(v["versions"].as_array().unwrap().len(), 0);
        assert!(
            v["rounds_b"]["injected"][0]
                .as_str()
                .unwrap()
                .contains("burn_us")
        );
        if base == "2a-base" {
            // +12.9 %, rounds within 2 %: the interval lies above 1
            assert_eq!(verdict(&v), "regressed", "{}", v["why"]);
            assert!(low > 1.03, "{t}");
            assert_eq!(v["decided"], true);
        } else {
            // +29.5 %, but one burn round read 8.16 ms (B's rounds spread 21 %): 3 rounds a
            // side do not decide it, and the verdict says how many would
            assert_eq!(verdict(&v), "inconclusive", "{}", v["why"]);
            assert!(low < 1.0, "{t}");
            assert_eq!(v["decided"], false);
            let n = v["rounds_needed"].as_u64().unwrap();
            assert_eq!(v["more_rounds"].as_u64().unwrap(), n - 3);
            assert!(v["why"].as_str().unwrap().contains("more round(s) a side"));
        }
        // the other way round (the burn removed) is never a regression; 2a's is an improvement
        let back = compare_json(&list(burn), &list(base));
        assert_ne!(verdict(&back), "regressed", "{}", back["why"]);
        if base == "2a-base" {
            assert_eq!(verdict(&back), "improved", "{}", back["why"]);
        }
    }
}

#[test]
fn clean_reruns_are_not_a_regression() {
    for (base, clean) in [
        ("2a-base", "2a-clean"),
        ("2a-base", "2a-clean2"),
        ("2a-clean", "2a-clean2"),
        ("exp1-base", "exp1-clean"),
        ("exp1-base", "exp1-clean2"),
        ("exp1-clean", "exp1-clean2"),
    ] {
        let v = compare_json(&list(base), &list(clean));
        // 3 rounds a side of 2-5 % noise: never regressed, and "same" only with a narrow
        // interval, which 3 rounds do not give
        assert_eq!(
            verdict(&v),
            "inconclusive",
            "{base} vs {clean}: {}",
            v["why"]
        );
        assert_eq!(v["config"].as_array().unwrap().len(), 0, "{}", v["config"]);
    }
}

/// The 16 interleaved clean rounds of each experiment split into their odd and even rounds (8
/// a side, recorded while compilers used most of the host): never regressed or improved.
#[test]
fn interleaved_clean_halves_are_not_a_change() {
    for batch in ["2a-shared", "exp1-shared"] {
        let all = rounds(batch);
        let half = |odd: usize| -> String {
            let v: Vec<String> = all
                .iter()
                .skip(odd)
                .step_by(2)
                .map(|p| p.display().to_string())
                .collect();
            v.join(",")
        };
        let v = compare_json(&half(0), &half(1));
        let why = v["why"].as_str().unwrap();
        assert!(
            ["same", "inconclusive"].contains(&verdict(&v)),
            "{batch}: {why}"
        );
        assert_eq!(v["boundary"]["df"], 14.0);
        println!("{batch}: {} ({why})", verdict(&v));
    }
}

#[test]
fn one_run_a_side_keeps_the_steps_and_is_inconclusive() {
    let (a, b) = (&rounds("2a-base")[0], &rounds("2a-burn")[0]);
    perflab()
        .args(["compare"])
        .arg(a)
        .arg(b)
        .assert()
        .code(3)
        .stdout(predicates::str::contains("verdict A"))
        .stdout(predicates::str::contains("knee: A "))
        .stdout(predicates::str::contains(
            "experiment.stack.node.burn_us: (absent) -> 1000",
        ))
        .stdout(predicates::str::contains("verdict: INCONCLUSIVE"));
}

#[test]
fn html_page_is_self_contained_and_leads_with_the_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("cmp.html");
    perflab()
        .args(["compare", &list("2a-base"), &list("2a-burn"), "--html"])
        .arg(&page)
        .assert()
        .code(1);
    let html = std::fs::read_to_string(&page).unwrap();
    let verdict_at = html.find("Verdict: REGRESSED").expect("verdict");
    assert!(verdict_at < html.find("id=\"rounds\"").unwrap());
    assert!(html.contains("INJECTED, not a clean run: in B: stack.node.burn_us=1000"));
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"));
    // runs link to their report.html, relative to the page
    assert!(html.contains("/report.html\">2a/"), "no run links");
}

#[test]
fn bad_lists_are_bad_input() {
    let a = list("2a-base");
    perflab()
        .args(["compare", &format!("{a},"), &a])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("empty run in the list"));
    perflab()
        .args(["compare", &a, "tests/fixtures/compare/nope"])
        .assert()
        .code(2);
}

/// The burn knob heads every report of an injected run, and no report of a clean one.
#[test]
fn injected_runs_say_so_in_every_report_header() {
    let read = |dir: &Path| perflab::rundir::read_report(dir).unwrap();
    let burn = read(&rounds("2a-burn")[0]);
    let clean = read(&rounds("2a-base")[0]);
    let line = "INJECTED (not a clean run): stack.node.burn_us=1000 (1000 µs of CPU burnt per request in the app)";
    assert!(perflab::report::text::render(&burn, None).contains(line));
    assert!(perflab::report::markdown::render(&burn, None, &[]).contains(line));
    let tmp = tempfile::tempdir().unwrap();
    for (r, injected) in [(&burn, true), (&clean, false)] {
        perflab::html::write_html(r, tmp.path(), Err("-".into()), Err("-".into())).unwrap();
        let html = std::fs::read_to_string(tmp.path().join("report.html")).unwrap();
        assert_eq!(html.contains("<p class=\"injected\">INJECTED"), injected);
        assert_eq!(
            perflab::report::text::render(r, None).contains("INJECTED"),
            injected
        );
    }
}

/// Copy a recorded batch into `to/<batch>`, each round's `file` (JSON) changed by `edit`;
/// returns the list argument.
fn copy_batch(batch: &str, to: &Path, file: &str, edit: &dyn Fn(&mut Value)) -> String {
    let mut out = Vec::new();
    for src in rounds(batch) {
        let dst = to.join(batch).join(src.file_name().unwrap());
        std::fs::create_dir_all(&dst).unwrap();
        for f in std::fs::read_dir(&src).unwrap().flatten() {
            if f.path().is_file() {
                std::fs::copy(f.path(), dst.join(f.file_name())).unwrap();
            }
        }
        let path = dst.join(file);
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        edit(&mut v);
        std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
        out.push(dst.display().to_string());
    }
    out.join(",")
}

/// Copy a recorded batch into `to`, each round's manifest given a host speed reading (compute
/// Mops/s and memory M loads/s on both CPUs, before the loads); returns the list argument.
fn with_speed(batch: &str, to: &Path, compute: f64, memory: f64) -> String {
    copy_batch(batch, to, "manifest.json", &|m| {
        let cpu = |n: u32| {
            serde_json::json!({"cpu": n, "compute_mops": compute, "memory_msteps": memory,
                "compute_spread_pct": 1.0, "memory_spread_pct": 1.5})
        };
        m["measurements"]["host_speed"] = serde_json::json!({
            "before": {"at": "2026-12-01T08:00:00Z", "cpus": [cpu(0), cpu(1)]}
        });
    })
}

/// A regression measured while the host itself ran slower is not called a regression: the
/// host speed probe's change explains more CPU per request; on an equally fast host the same
/// rounds still say `regressed`.
#[test]
fn a_regression_on_a_slower_host_is_inconclusive() {
    let tmp = tempfile::tempdir().unwrap();
    let base = with_speed("2a-base", &tmp.path().join("a"), 400.0, 10.0);
    let same_host = with_speed("2a-burn", &tmp.path().join("b"), 396.0, 10.3);
    let v = compare_json(&base, &same_host);
    assert_eq!(verdict(&v), "regressed", "{}", v["why"]);
    assert_eq!(v["host_speed"]["a_compute_mops"], 400.0);
    assert_eq!(v["host_speed"]["unmeasured_rounds"], 0);
    let slower = with_speed("2a-burn", &tmp.path().join("c"), 300.0, 10.0);
    let v = compare_json(&base, &slower);
    assert_eq!(verdict(&v), "inconclusive", "{}", v["why"]);
    let why = v["why"].as_str().unwrap();
    assert!(
        why.contains("B's host ran slower than A's (compute -25 %"),
        "{why}"
    );
    assert!(why.contains("would have been regressed"), "{why}");
    let text = compare_text(&base, &slower, 3);
    assert!(
        text.contains("host speed (probe before each round's loads): compute A 400 B 300 Mops/s"),
        "{text}"
    );
    // Recorded rounds without a reading keep their verdicts, and say they have none.
    let v = compare_json(&list("2a-base"), &list("2a-burn"));
    assert_eq!(verdict(&v), "regressed");
    assert_eq!(v["host_speed"]["unmeasured_rounds"], 6);
}

/// `compare --help` documents the exit codes.
#[test]
fn help_lists_the_exit_codes() {
    let out = perflab().args(["compare", "--help"]).assert().code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for line in [
        "Exit codes:",
        "  0  no regression (same or improved)",
        "  1  regressed",
        "  2  bad input",
        "  3  inconclusive, and nothing regressed",
        "--confidence",
        "--min-effect",
        "--margin",
        "--max-rounds",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
}

/// Sides that are not the same experiment and configuration but for the declared difference
/// are refused with exit 2, naming the runs; so are settings out of range.
#[test]
fn duplicated_runs_mixed_experiments_and_mixed_sides_are_refused() {
    let r1 = rounds("2a-base")[0].display().to_string();
    let twice = format!("{r1},{r1},{r1}");
    let exp1 = rounds("exp1-base")[0].display().to_string();
    let two_a: Vec<String> = rounds("2a-clean")
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let burn = rounds("2a-burn")[0].display().to_string();
    for (a, b, says) in [
        (
            twice.clone(),
            list("2a-clean"),
            "the run 2a/20261130T222220Z-r1 is twice in side A (2a/20261130T222220Z-r1,2a/20261130T222220Z-r1,2a/20261130T222220Z-r1): each round must be a different run",
        ),
        (
            list("2a-clean"),
            list("2a-base") + "," + &two_a[0],
            "the run 2a/20261130T222840Z-r1 is on both sides (A: 2a/20261130T222840Z-r1, B: 2a/20261130T222840Z-r1)",
        ),
        (
            list("2a-base"),
            format!("{},{exp1}", two_a[..2].join(",")),
            "side B's run exp1/20261130T222725Z-r1 is experiment exp1, but 2a/20261130T222840Z-r1 is 2a: a side's rounds must be of one experiment",
        ),
        (
            list("2a-base"),
            list("exp1-base"),
            "A is experiment 2a (2a/20261130T222220Z-r1) and B is exp1 (exp1/20261130T222725Z-r1): a verdict compares rounds of one experiment",
        ),
        (
            format!("{},{burn}", two_a[..2].join(",")),
            list("2a-base"),
            "side A mixes configurations: 2a/20261130T222840Z-r1 and 2a/20261130T222517Z-r1 differ in --set overrides, stack (2a/20261130T222840Z-r1 has suite trixie, no --set, --quick, 2a/20261130T222517Z-r1 has suite trixie, --set stack.node.burn_us=1000, --quick)",
        ),
    ] {
        perflab()
            .args(["compare", &a, &b])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
    for (flag, value, says) in [
        (
            "--confidence",
            "1.5",
            "--confidence 1.5: give a chance between 0.8 and 0.999",
        ),
        (
            "--max-rounds",
            "1",
            "--max-rounds 1: give a number of rounds a side from 2 to 50",
        ),
        ("--margin", "0", "--margin 0:"),
        (
            "--min-effect",
            "60",
            "--min-effect 60: give a change in % between 0 and 50",
        ),
    ] {
        perflab()
            .args(["compare", &list("2a-base"), &list("2a-burn"), flag, value])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}

/// The settings reach the verdict: a confidence of 0.8 narrows the interval; the text shows
/// the interval, the boundary and what would decide.
#[test]
fn the_settings_and_the_boundary_are_shown() {
    let v = compare_json(&list("exp1-base"), &list("exp1-burn"));
    let out = perflab()
        .args(["compare", &list("exp1-base"), &list("exp1-burn"), "--json"])
        .args(["--confidence", "0.8", "--max-rounds", "3"])
        .output()
        .unwrap();
    let loose: Value = serde_json::from_slice(&out.stdout).unwrap();
    let width = |v: &Value| {
        v["cpu"]["test"]["high"].as_f64().unwrap() - v["cpu"]["test"]["low"].as_f64().unwrap()
    };
    assert!(
        width(&loose) < width(&v) / 2.0,
        "{} vs {}",
        width(&loose),
        width(&v)
    );
    assert!(
        loose["boundary"]["nominal_alpha"].as_f64().unwrap()
            > v["boundary"]["nominal_alpha"].as_f64().unwrap()
    );
    let text = compare_text(&list("exp1-base"), &list("exp1-burn"), 3);
    for s in [
        "verdict: INCONCLUSIVE (the CPU interval is too wide to decide: about",
        "B/A 1.295 (+29.5 %), 99.92 % interval",
        "rule: 99 % confidence over a plan of 10 rounds a side, split over the 2 deciding signals (cpu, latency: each at 99.5 %)",
        "latency: no step passed below its knee in every round of both sides",
        "boundary: 9 looks, each at α' = 0.0",
        "decided: no; about",
        "steal on the app's and database's CPUs (hypervisor, mean over the steps): A 1.5 %, B 1.8 %",
        "steal %",
    ] {
        assert!(text.contains(s), "{s:?} not in:\n{text}");
    }
}

/// Copy a recorded batch into `to` with each round's steal (cores, host-wide) set in its
/// report; returns the list argument.
fn with_steal(batch: &str, to: &Path, steal_cores: f64) -> String {
    copy_batch(batch, to, "report.json", &|r| {
        r["checks"]["host_share"]["steal_cores"] = serde_json::json!(steal_cores);
    })
}

/// A regression whose B rounds ran with the hypervisor stealing far more is inconclusive, and
/// the rounds over 10 % are flagged.
#[test]
fn a_regression_with_more_steal_on_b_is_inconclusive() {
    let tmp = tempfile::tempdir().unwrap();
    let base = list("2a-base");
    let stolen = with_steal("2a-burn", tmp.path(), 0.3);
    let v = compare_json(&base, &stolen);
    assert_eq!(verdict(&v), "inconclusive", "{}", v["why"]);
    let why = v["why"].as_str().unwrap();
    assert!(
        why.contains(
            "in B's (+13.3 points, beyond the rounds' spread and what B's CPU per request explains)"
        ),
        "{why}"
    );
    assert!(why.contains("would have been regressed"), "{why}");
    assert_eq!(v["steal"]["differs"], true);
    assert_eq!(v["rounds_b"]["steal_flagged"].as_array().unwrap().len(), 3);
    assert_eq!(v["rounds_b"]["steal_pct"][0], 15.0);
    // the same steal on both sides keeps the verdict
    let both = with_steal("2a-base", &tmp.path().join("a"), 0.3);
    assert_eq!(verdict(&compare_json(&both, &stolen)), "regressed");
}

/// 2a-slowed: three interleaved pairs of 2a (B: `burn_us=630`) recorded on 2026-12-03 while the
/// host slowed after the first pair (the compute probe fell from 190 to 128-165 Mops/s, the
/// memory probe from 35 to 9-25 M loads/s, and the app's CPU per ok from 4.5 to 7.7-8.2 ms;
/// the hypervisor's steal read 0-4 %). The rounds run on the slowed host are named, and the
/// undecided verdict says its noise may be the host's.
#[test]
fn rounds_on_a_slowed_host_are_named_and_an_undecided_verdict_says_so() {
    let all = rounds("2a-slowed");
    let side = |burn: bool| -> String {
        let v: Vec<String> = all
            .iter()
            .filter(|p| {
                let m = std::fs::read_to_string(p.join("manifest.json")).unwrap();
                m.contains("burn_us=630") == burn
            })
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(v.len(), 3);
        v.join(",")
    };
    let v = compare_json(&side(false), &side(true));
    let slowed: Vec<&str> = v["host_speed"]["slowed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[0].as_str().unwrap())
        .collect();
    assert_eq!(
        slowed,
        [
            "2a/20261203T122602Z-r2",
            "2a/20261203T122706Z-r3",
            "2a/20261203T122432Z-r2",
            "2a/20261203T122752Z-r3"
        ]
    );
    let top = v["host_speed"]["fastest_mops"].as_f64().unwrap();
    assert!((185.0..195.0).contains(&top), "{top}");
    assert_eq!(v["verdict"], "inconclusive");
    let why = v["why"].as_str().unwrap();
    assert!(
        why.contains("4 round(s) ran on a slowed host (compute probe over 15 % below the fastest round's 190 Mops/s): 2a/20261203T122602Z-r2 -"),
        "{why}"
    );
    assert!(why.contains("the noise may be the host's"), "{why}");
    // the text names them on the host speed line too
    let out = perflab()
        .args(["compare", &side(false), &side(true)])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("host speed")).unwrap();
    assert!(line.contains("; 4 round(s) ran on a slowed host"), "{line}");
}

/// The sides of an interleaved batch, by the side in each round's compare tag.
fn batch_sides(batch: &str) -> (String, String) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for p in rounds(batch) {
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(p.join("manifest.json")).unwrap())
                .unwrap();
        let side = m["measurements"]["compare"]["side"]
            .as_str()
            .unwrap()
            .to_string();
        let v = if side == "a" { &mut a } else { &mut b };
        v.push(p.display().to_string());
    }
    (a.join(","), b.join(","))
}

/// 2a-dec04-burn: ten interleaved pairs of 2a (B: `burn_us=800`, +15 % of the 5.3 ms measured)
/// recorded on 2026-12-04 on a quiet host (steal 0) whose CPU per request at the lowest step
/// spread 12 % between rounds. Every round passed 50-175 rps below its knee: over those steps
/// the pairs spread 5-6 %, and the verdict is `regressed` (at the lowest step alone, the
/// signal the verdict read until then, it was inconclusive: B/A 1.103 [0.910, 1.336]).
#[test]
fn a_regression_hidden_by_the_lowest_steps_noise_is_found_over_the_passing_steps() {
    let (a, b) = batch_sides("2a-dec04-burn");
    let v = compare_json(&a, &b);
    assert_eq!(verdict(&v), "regressed", "{}", v["why"]);
    assert_eq!(
        v["cpu"]["steps"],
        serde_json::json!([50, 100, 125, 150, 175])
    );
    assert_eq!(v["cpu"]["step"], 50);
    let t = &v["cpu"]["test"];
    let (ratio, low) = (t["ratio"].as_f64().unwrap(), t["low"].as_f64().unwrap());
    assert!((1.10..1.25).contains(&ratio) && low > 1.03, "{t}");
    assert_eq!(t["pairs"], 10);
    let text = compare_text(&a, &b, 1);
    assert!(
        text.contains(
            "CPU per ok request over 50-175 rps (the 5 steps every round passed; geometric mean)"
        ),
        "{text}"
    );
    assert!(text.contains("CPU ms/ok @50-175"), "{text}");
}

/// 2a-dec04: side A of the clean-against-clean batch of the same host (10 rounds). Against the
/// first half of itself nothing moved: not regressed, not improved.
#[test]
fn the_clean_rounds_of_that_host_are_not_a_change() {
    let all = rounds("2a-dec04");
    let half = |r: std::ops::Range<usize>| -> String {
        all[r]
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let v = compare_json(&half(0..5), &half(5..10));
    assert!(
        !matches!(verdict(&v), "regressed" | "improved"),
        "{}",
        v["why"]
    );
}

//! Hostile and careless input to the real `perflab` binary, one table row per case: the
//! expected exit code, what stderr (or stdout) must name (file, line, field), and bounds on
//! time (20 s) and peak RSS (256 MiB, from `wait4`, the figure `/usr/bin/time -v` prints; the
//! address space is capped at 1.5 GiB too), so unbounded allocation or quadratic work fails
//! the case. `run` and `compare` cases also check that nothing was started (no `out/`, no
//! Docker: the engine address points nowhere, which would exit 1, not 2). A case may build run
//! directories and links first (`setup`), name text the output must not hold (`lacks`: raw
//! control characters) and check what the command left (`after`: links in pages, files it
//! must not touch); a case still running after 40 s is killed (an older build reading a FIFO
//! hangs). Every case runs; the failures are listed together with a table of exit code, time
//! and peak RSS per case.
//!
//! `PERFLAB_BIN=path` runs the table against another binary (an older build, a release
//! build); `PERFLAB_HOSTILE_ONLY='a|b'` runs only the cases whose name holds `a` or `b`;
//! `PERFLAB_HOSTILE_KEEP=dir` keeps each case's directory there;
//! `PERFLAB_HOSTILE_TIMEV=1` runs each case under `/usr/bin/time -v` and takes its figure.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Links, terminal text, Markdown and output paths (issue 21, part A).
#[path = "hostile_input/links.rs"]
mod links;
use links::links_and_output_cases;
/// Plan and hosts files of the matrix, `--run-name`, the export (issue 26).
#[path = "hostile_input/matrix.rs"]
mod matrix;
/// Output flags and the matrix's readers and script (issue 38).
#[path = "hostile_input/outputs.rs"]
mod outputs;
/// Run-directory files and aggregates over rounds (issue 21, part C).
#[path = "hostile_input/rundir.rs"]
mod rundir;

const CSV_HEAD: &str = "metric_name,timestamp,metric_value,expected_response,status,extra_tags\n";

/// A k6 CSV of 20 good rows in step r0010, then `extra` (line 22 on).
fn csv(extra: &str) -> Vec<u8> {
    let mut s = CSV_HEAD.to_string();
    for i in 0..20 {
        let t = 1_700_000_000_000i64 + i * 100;
        s += &format!("http_req_duration,{t},20,true,200,stage=r0010\n");
    }
    (s + extra).into_bytes()
}

fn row(ts: &str, dur: &str) -> String {
    format!("http_req_duration,{ts},{dur},true,200,stage=r0010\n")
}

/// `experiments/1a.yaml` with one `load:` line replaced.
fn exp_1a(key: &str, value: &str) -> Vec<u8> {
    exp_line("1a", &format!("  {key}"), value)
}

/// `experiments/demo-pause.yaml` with one `load.pause:` line replaced.
fn exp_pause(key: &str, value: &str) -> Vec<u8> {
    exp_line("demo-pause", &format!("    {key}"), value)
}

/// `experiments/<id>.yaml` with the line `<key>: ...` (indented as given) replaced.
fn exp_line(id: &str, key: &str, value: &str) -> Vec<u8> {
    let path = format!("{}/experiments/{id}.yaml", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).unwrap();
    let out: Vec<String> = src
        .lines()
        .map(|l| match l.strip_prefix(&format!("{key}:")) {
            Some(_) => format!("{key}: {value}"),
            None => l.to_string(),
        })
        .collect();
    assert!(
        out.iter().any(|l| l == &format!("{key}: {value}")),
        "{key} not in {id}.yaml"
    );
    (out.join("\n") + "\n").into_bytes()
}

/// `load.pause.for_s` out of (0, D): exit 2 naming the field, from the file as given.
fn pause_cases() -> Vec<Case> {
    let bad = [
        ("30", "shorter than the step D"),
        ("0", ""),
        ("-1.4", ""),
        (".nan", ""),
    ];
    (bad.into_iter())
        .map(|(v, why)| {
            let name: &'static str = format!("pause P = {v}").leak();
            let says = ["demo-pause.yaml", "load.pause.for_s", "must be > 0", why];
            case(
                name,
                Some(("demo-pause.yaml", exp_pause("for_s", v))),
                &["validate", "demo-pause.yaml"],
                2,
                &says,
            )
        })
        .collect()
}

struct Case {
    name: &'static str,
    /// File written into the case's directory before the command (name, bytes).
    file: Option<(&'static str, Vec<u8>)>,
    /// A second file, for commands that read two.
    extra: Option<(&'static str, Vec<u8>)>,
    /// Files added to (or replacing) a copy of the catalog in `cat/`, the case's
    /// `PERFLAB_CATALOG`; none: the repository's catalog.
    catalog: Vec<(&'static str, Vec<u8>)>,
    args: Vec<&'static str>,
    code: i32,
    /// Substrings of stderr + stdout.
    says: Vec<&'static str>,
    /// Substrings stderr + stdout must not hold (raw control characters).
    lacks: Vec<&'static str>,
    /// Builds what the command reads in the case's directory (run directories, links).
    setup: Option<fn(&Path)>,
    /// Checks what the command left in the case's directory (pages, files it must not touch).
    after: Option<AfterCheck>,
}

/// What a case's command must have left in its directory: `Err` says what is wrong.
type AfterCheck = fn(&Path) -> Result<(), String>;

fn case(
    name: &'static str,
    file: Option<(&'static str, Vec<u8>)>,
    args: &[&'static str],
    code: i32,
    says: &[&'static str],
) -> Case {
    Case {
        name,
        file,
        extra: None,
        catalog: Vec::new(),
        args: args.to_vec(),
        code,
        says: says.to_vec(),
        lacks: Vec::new(),
        setup: None,
        after: None,
    }
}

fn cases() -> Vec<Case> {
    let slo = ["--slo-ms", "100"];
    let an = |f: &'static str| [&["analyze", f][..], &slo[..]].concat();
    let big_line = [CSV_HEAD.as_bytes(), &vec![b'a'; 1 << 20]].concat();
    let deep = format!(
        "kind: experiment\nid: 1a\nlab: php\nload: {}{}\n",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    let deep_set: &'static str =
        format!("steps={}{}", "[".repeat(50_000), "]".repeat(50_000)).leak();
    let huge = [b"kind: experiment\n".as_slice(), &vec![b'#'; 2 << 20]].concat();
    vec![
        case(
            "duration inf",
            Some(("d.csv", csv(&row("1700000005000", "inf")))),
            &an("d.csv"),
            2,
            &["d.csv", "line 22", "metric_value"],
        ),
        case(
            "duration 1e15",
            Some(("d.csv", csv(&row("1700000005000", "1e15")))),
            &an("d.csv"),
            2,
            &["d.csv", "line 22", "metric_value"],
        ),
        case(
            "duration 1e10",
            Some(("d.csv", csv(&row("1700000005000", "1e10")))),
            &an("d.csv"),
            2,
            &["d.csv", "line 22", "metric_value"],
        ),
        case(
            "duration NaN",
            Some(("d.csv", csv(&row("1700000005000", "NaN")))),
            &an("d.csv"),
            2,
            &["d.csv", "line 22", "metric_value"],
        ),
        case(
            "duration negative",
            Some(("d.csv", csv(&row("1700000005000", "-50")))),
            &an("d.csv"),
            2,
            &["d.csv", "line 22", "metric_value"],
        ),
        case(
            "vus 1e300",
            Some(("d.csv", csv("vus,1700000005000,1e300,,,\n"))),
            &an("d.csv"),
            2,
            &["d.csv", "line 22", "metric_value"],
        ),
        case(
            "bad timestamp",
            Some(("d.csv", csv(&row("yesterday", "20")))),
            &an("d.csv"),
            2,
            &["d.csv", "line 22", "timestamp"],
        ),
        case(
            "stray timestamp skipped",
            Some(("d.csv", csv(&row("1000", "20")))),
            &an("d.csv"),
            0,
            &["1 row(s) skipped (first on line 22)"],
        ),
        case(
            "1 MiB line",
            Some(("d.csv", big_line)),
            &an("d.csv"),
            2,
            &["d.csv", "line 2", "longer than 65536 bytes"],
        ),
        case(
            "--hold-s -5",
            Some(("d.csv", csv(""))),
            &[&an("d.csv")[..], &["--hold-s=-5"]].concat(),
            2,
            &["--hold-s -5"],
        ),
        case(
            "--hold-s inf",
            Some(("d.csv", csv(""))),
            &[&an("d.csv")[..], &["--hold-s", "inf"]].concat(),
            2,
            &["--hold-s inf"],
        ),
        case(
            "--slo-ms NaN",
            Some(("d.csv", csv(""))),
            &["analyze", "d.csv", "--slo-ms", "NaN"],
            2,
            &["--slo-ms NaN"],
        ),
        case(
            "--max-vus -1",
            Some(("d.csv", csv(""))),
            &[&an("d.csv")[..], &["--max-vus=-1"]].concat(),
            2,
            &["--max-vus -1"],
        ),
        case(
            "hold_s 1e9",
            Some(("1a.yaml", exp_1a("hold_s", "1000000000"))),
            &["validate", "1a.yaml"],
            2,
            &["1a.yaml:22", "load.hold_s", "1000000000 is above 86400"],
        ),
        case(
            "slo_p95_ms .inf",
            Some(("1a.yaml", exp_1a("slo_p95_ms", ".inf"))),
            &["validate", "1a.yaml"],
            2,
            &["1a.yaml:25", "load.slo_p95_ms", "not a finite number"],
        ),
        case(
            "steps past 1e6",
            Some(("1a.yaml", exp_1a("steps", "[1, 4000000000]"))),
            &["validate", "1a.yaml"],
            2,
            &["1a.yaml", "load.steps[1]"],
        ),
        case(
            "50k nested brackets",
            Some(("1a.yaml", deep.into_bytes())),
            &["validate", "1a.yaml"],
            2,
            &["1a.yaml:4", "nested deeper than 32 levels"],
        ),
        case(
            "2 MiB catalog file",
            Some(("1a.yaml", huge)),
            &["validate", "1a.yaml"],
            2,
            &["1a.yaml", "larger than 1048576 bytes"],
        ),
        case(
            "show --cpus 1-4294967295",
            None,
            &["show", "1a", "--cpus", "app=1-4294967295"],
            2,
            &["--cpus app=1-4294967295", "CPU 4294967295 is above 8191"],
        ),
        case(
            "run --cpus 1-4294967295",
            None,
            &["run", "1a", "--cpus", "app=1-4294967295"],
            2,
            &["--cpus app=1-4294967295"],
        ),
        case(
            "show --set with 50k nested brackets",
            None,
            &["show", "1a", "--set", deep_set],
            2,
            &["load.steps", "nested deeper than 32 levels"],
        ),
        case(
            "run --set hold_s=1e9",
            None,
            &["run", "1a", "--set", "hold_s=1000000000"],
            2,
            &["--set", "load.hold_s", "nothing was started"],
        ),
        case(
            "run demo-pause with D below P",
            None,
            &["run", "demo-pause", "--set", "hold_s=1"],
            2,
            &["load.pause.for_s", "nothing was started"],
        ),
        case(
            "stray first row (a year earlier)",
            Some(("d.csv", stray_first())),
            &an("d.csv"),
            0,
            &["1 row(s) skipped (first on line 2)"],
        ),
        case(
            "60k rows, timestamps backwards",
            Some(("d.csv", backwards(60_000))),
            &an("d.csv"),
            0,
            &["r0010"],
        ),
        case(
            "257 distinct steps",
            Some(("d.csv", csv(&many_steps(257)))),
            &an("d.csv"),
            2,
            &["d.csv", "line 278", "past 256 distinct steps", "stage"],
        ),
        case(
            "257 steps in the plan",
            Some(("1a.yaml", exp_1a("steps", steps_list(257)))),
            &["validate", "1a.yaml"],
            2,
            &["1a.yaml", "load.steps", "257 steps: at most 256"],
        ),
        Case {
            extra: Some(("s.json", nan_threshold_summary())),
            ..case(
                "summary threshold p(95)<NaN",
                Some(("d.csv", csv(""))),
                &["analyze", "d.csv", "--summary", "s.json"],
                2,
                &["s.json", "p95 threshold NaN"],
            )
        },
        case(
            "compare: one run three times",
            None,
            &["compare", cmp_r1_thrice(), cmp_batch("2a-clean")],
            2,
            &["the run 2a/20261130T222220Z-r1 is twice in side A"],
        ),
        case(
            "compare: --confidence NaN",
            None,
            &[
                "compare",
                cmp_batch("2a-base"),
                cmp_batch("2a-burn"),
                "--confidence",
                "NaN",
            ],
            2,
            &["--confidence NaN: give a chance between 0.8 and 0.999"],
        ),
        case(
            "compare: --max-rounds 2^64-1",
            None,
            &[
                "compare",
                cmp_batch("2a-base"),
                cmp_batch("2a-burn"),
                "--max-rounds",
                "18446744073709551615",
            ],
            2,
            &["--max-rounds 18446744073709551615: give a number of rounds a side from 2 to 50"],
        ),
        // the longest plan at the strictest confidence: its calibration stays in bounds
        case(
            "compare: --max-rounds 50 --confidence 0.999",
            None,
            &[
                "compare",
                cmp_batch("2a-base"),
                cmp_batch("2a-burn"),
                "--max-rounds",
                "50",
                "--confidence",
                "0.999",
            ],
            3,
            &[
                "verdict: INCONCLUSIVE",
                "a plan of 50 rounds a side",
                "49 looks",
            ],
        ),
        case(
            "compare --b without =",
            None,
            &["compare", "2a", "--b", "burn_us"],
            2,
            &["--b: `burn_us` is not KEY=VALUE", "suite=forky"],
        ),
        case(
            "compare --b unknown key",
            None,
            &["compare", "2a", "--b", "stack.node.burn=1"],
            2,
            &["side B (stack.node.burn=1) of 2a", "stack.node.burn"],
        ),
        case(
            "compare --a a php key on node",
            None,
            &["compare", "2a", "--a", "stack.php.max_children=4"],
            2,
            &["side A", "the node lab has no `php` settings"],
        ),
        case(
            "compare one configuration",
            None,
            &["compare", "2a", "--quick"],
            2,
            &["both sides are the same configuration of 2a"],
        ),
        case(
            "compare same override spelt twice",
            None,
            &[
                "compare",
                "2a",
                "--a",
                "burn_us=10",
                "--b",
                "stack.node.burn_us=10",
            ],
            2,
            &["both sides are the same configuration of 2a"],
        ),
        case(
            "compare --b suite=sid",
            None,
            &["compare", "node", "--b", "suite=sid"],
            2,
            &["--b: unknown Debian suite `sid`"],
        ),
        case(
            "compare --b suite twice",
            None,
            &["compare", "2a", "--b", "suite=forky", "--b", "suite=trixie"],
            2,
            &["--b: `suite` given twice"],
        ),
        case(
            "compare --max-rounds 1",
            None,
            &["compare", "2a", "--b", "suite=forky", "--max-rounds", "1"],
            2,
            &["--max-rounds 1: give a number of rounds a side from 2 to 50"],
        ),
        case(
            "compare --max-rounds 4294967295",
            None,
            &[
                "compare",
                "2a",
                "--b",
                "suite=forky",
                "--max-rounds",
                "4294967295",
            ],
            2,
            &["--max-rounds 4294967295"],
        ),
        case(
            "compare --set hold_s=1e9",
            None,
            &[
                "compare",
                "2a",
                "--b",
                "suite=forky",
                "--set",
                "hold_s=1000000000",
            ],
            2,
            &["load.hold_s", "1000000000"],
        ),
        case(
            "compare 65 pairs a side",
            None,
            &many_pairs(65),
            2,
            &["--b: 65 pairs; give at most 64"],
        ),
        case(
            "compare unknown group",
            None,
            &["compare", "nosuch", "--b", "suite=forky"],
            2,
            &["nosuch"],
        ),
        case(
            "compare --resume without a batch",
            None,
            &["compare", "2a", "--b", "suite=forky", "--resume"],
            2,
            &["--resume: no comparison batch of 2a"],
        ),
        Case {
            setup: Some(|d| {
                std::os::unix::fs::symlink("/etc/hostname", d.join("m-2a.html")).unwrap()
            }),
            after: Some(|d| match d.join("m.html").exists() {
                true => Err("wrote the matrix page".into()),
                false => Ok(()),
            }),
            ..case(
                "compare --html: a row's page is a link",
                None,
                &[
                    "compare",
                    "2a",
                    "--b",
                    "suite=forky",
                    "--no-run",
                    "--html",
                    "m.html",
                ],
                2,
                &["--html m-2a.html: a symbolic link"],
            )
        },
        case(
            "compare RUN RUN with --b",
            None,
            &["compare", "a", "b", "--b", "suite=forky"],
            2,
            &["give either two RUN arguments or one TARGET"],
        ),
    ]
    .into_iter()
    .chain(pause_cases())
    .chain(links_and_output_cases())
    .chain(rundir::run_dir_cases())
    .chain(rundir::capacity_cases())
    .chain(matrix::matrix_cases())
    .chain(outputs::output_and_matrix_cases())
    .chain(catalog_cases())
    .chain(expression_cases())
    .collect()
}

/// The recorded rounds of a compare batch (tests/fixtures/compare), as a RUN,RUN,RUN list.
fn cmp_batch(batch: &str) -> &'static str {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compare")
        .join(batch);
    let exp = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let mut runs: Vec<String> = std::fs::read_dir(exp)
        .unwrap()
        .flatten()
        .map(|e| e.path().display().to_string())
        .collect();
    runs.sort();
    runs.join(",").leak()
}

/// 2a-base's first round three times.
fn cmp_r1_thrice() -> &'static str {
    let r1 = cmp_batch("2a-base").split(',').next().unwrap();
    [r1, r1, r1].join(",").leak()
}

/// A case run over a copy of the catalog with `files` added.
fn with_catalog(
    files: Vec<(&'static str, Vec<u8>)>,
    name: &'static str,
    args: &[&'static str],
    code: i32,
    says: &[&'static str],
) -> Case {
    Case {
        catalog: files,
        ..case(name, None, args, code, says)
    }
}

/// A group file.
fn group(id: &str, members: &[&str]) -> (&'static str, Vec<u8>) {
    let text = format!(
        "kind: group\nid: {id}\ndescription: x\nmembers: [{}]\n",
        members.join(", ")
    );
    (format!("{id}.yaml").leak(), text.into_bytes())
}

/// g1 runs 1a 10 times, g2 g1 10 times, ..., g`n` 10^n experiments (700 bytes for 9).
fn group_bomb(n: usize) -> Vec<(&'static str, Vec<u8>)> {
    let ids: Vec<String> = (0..=n).map(|i| format!("g{i}")).collect();
    (1..=n)
        .map(|i| {
            let below = if i == 1 { "1a" } else { ids[i - 1].as_str() };
            group(&ids[i], &[below; 10])
        })
        .collect()
}

/// The group bomb for every command that loads the catalog, and a wide catalog of groups just
/// within the bound.
fn catalog_cases() -> Vec<Case> {
    let bomb_says: &[&'static str] = &[
        "g9.yaml:4",
        "members",
        "more than 10000 experiments: g9 -> g8 -> g7 -> g6 -> g5",
    ];
    let mut wide = group_bomb(4);
    wide.extend((0..500).map(|i| group(&format!("w{i:03}"), &["g4"])));
    vec![
        with_catalog(group_bomb(9), "group bomb: list", &["list"], 2, bomb_says),
        with_catalog(
            group_bomb(9),
            "group bomb: show 1a",
            &["show", "1a"],
            2,
            bomb_says,
        ),
        with_catalog(
            group_bomb(9),
            "group bomb: validate",
            &["validate"],
            2,
            bomb_says,
        ),
        Case {
            file: Some(("out/.gitkeep", Vec::new())),
            ..with_catalog(
                group_bomb(9),
                "group bomb: index",
                &["index", "--out", "out"],
                0,
                &["index of 0 runs"],
            )
        },
        with_catalog(
            wide.clone(),
            "500 groups of 10,000: list",
            &["list"],
            0,
            &["w499"],
        ),
        with_catalog(
            wide,
            "500 groups of 10,000: show 1a",
            &["show", "1a"],
            0,
            &["1a"],
        ),
    ]
}

/// `experiments/exp1.yaml` with its first fit rule's `to:` (line 34) replaced by `to`.
fn exp1_fit(to: &str) -> Vec<u8> {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/experiments/exp1.yaml"
    ));
    let old = "      to: \"x * app_ceiling / 225\"\n";
    let src = src.unwrap();
    assert!(src.contains(old), "exp1.yaml's first rule changed");
    src.replacen(old, &format!("      to: \"{to}\"\n"), 1)
        .into_bytes()
}

/// Fit rules and claims that overflowed the stack, a constant division by zero, `--set` past
/// its bound.
fn expression_cases() -> Vec<Case> {
    let nest = |open: &str, n: usize| format!("{}x{}", open.repeat(n), ")".repeat(n));
    let product = format!("x{}", "*x".repeat(100_000));
    let fit = |name: &'static str, to: String, says: &[&'static str]| {
        let says = [&["exp1.yaml:34", "fit.rules[0].to"][..], says].concat();
        case(
            name,
            Some(("exp1.yaml", exp1_fit(&to))),
            &["validate", "exp1.yaml"],
            2,
            &says,
        )
    };
    let long = ["bytes long: at most 4096"];
    let claim = {
        let src = String::from_utf8(exp1_fit("x * app_ceiling / 225")).unwrap();
        let deep = nest("(", 5_000).replace('x', "knee");
        src.replacen(
            "value: pg.waits_for_client",
            &format!("value: \"{deep}\""),
            1,
        )
    };
    vec![
        fit("fit: 5,000 nested parentheses", nest("(", 5_000), &long),
        fit(
            "fit: 65 nested parentheses",
            nest("(", 65),
            &["nested deeper than 64 levels"],
        ),
        fit(
            "fit: 100k unary minus",
            format!("{}x", "-".repeat(100_000)),
            &long,
        ),
        fit("fit: 5k nested min(", nest("min(1, ", 5_000), &long),
        fit("fit: 100k-term product", product.clone(), &long),
        fit(
            "fit: 600 tokens",
            format!("x{}", " + x".repeat(300)),
            &["more than 512 tokens"],
        ),
        fit("fit: x / 0", "x / 0".into(), &["`(x / 0)` divides by zero"]),
        fit(
            "fit: x + 1e308 * 10",
            "x + 1e308 * 10".into(),
            &["is inf, not a finite number"],
        ),
        with_catalog(
            vec![("exp1.yaml", exp1_fit(&product))],
            "fit: 100k-term product, show --fit",
            &["show", "exp1", "--fit"],
            2,
            &[
                "exp1.yaml:34",
                "fit.rules[0].to",
                "bytes long: at most 4096",
            ],
        ),
        case(
            "claim: 5,000 nested parentheses",
            Some(("exp1.yaml", claim.into_bytes())),
            &["validate", "exp1.yaml"],
            2,
            &[
                "exp1.yaml:39",
                "expect[0].value",
                "bytes long: at most 4096",
            ],
        ),
        case(
            "show --set burn_us=4294967295",
            None,
            &["show", "exp1", "--set", "stack.php.burn_us=4294967295"],
            2,
            &[
                "--set stack.php.burn_us=4294967295",
                "4294967295 is above 1000000",
                "at most 1000000 µs",
            ],
        ),
        case(
            "run --set burn_us=4294967295",
            None,
            &["run", "exp1", "--set", "burn_us=4294967295"],
            2,
            &[
                "stack.php.burn_us",
                "4294967295 is above 1000000",
                "nothing was started",
            ],
        ),
    ]
}

/// `compare 2a` with `n` pairs on side B.
fn many_pairs(n: usize) -> Vec<&'static str> {
    let mut v = vec!["compare", "2a"];
    for i in 0..n {
        v.push("--b");
        v.push(format!("k{i}=1").leak());
    }
    v
}

/// A k6 summary whose per-step p95 threshold is `NaN` (k6 would not run it; a hand edit can).
fn nan_threshold_summary() -> Vec<u8> {
    let m = r#"{"metrics":{"http_req_duration{stage:r0010}":{"count":20,"p(95)":20,"thresholds":{"p(95)<NaN":{"ok":true}}}}}"#;
    m.as_bytes().to_vec()
}

/// A row from a year before the run on line 2, then 100 rows of the run.
fn stray_first() -> Vec<u8> {
    let mut s = CSV_HEAD.to_string() + &row("1668464000000", "20");
    for i in 0..100 {
        s += &row(&(1_700_000_000_000i64 + i * 100).to_string(), "20");
    }
    s.into_bytes()
}

/// `n` rows one second apart, last second first.
fn backwards(n: i64) -> Vec<u8> {
    let mut s = CSV_HEAD.to_string();
    for i in (0..n).rev() {
        s += &row(&(1_700_000_000_000 + i * 1000).to_string(), "20");
    }
    s.into_bytes()
}

/// One row in each of `n` steps r0001, r0002, ...
fn many_steps(n: usize) -> String {
    (1..=n)
        .map(|i| format!("http_req_duration,1700000005000,20,true,200,stage=r{i:04}\n"))
        .collect()
}

fn steps_list(n: usize) -> &'static str {
    let v: Vec<String> = (1..=n).map(|i| (i * 10).to_string()).collect();
    format!("[{}]", v.join(", ")).leak()
}

/// What one case did.
struct Outcome {
    code: Option<i32>,
    text: String,
    took: Duration,
    max_rss_kib: i64,
    out_created: bool,
}

fn bin() -> PathBuf {
    std::env::var_os("PERFLAB_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_perflab")))
}

/// Run the case's command in its own directory, and wait for it with `wait4` for its peak RSS.
fn run_case(c: &Case, dir: &Path) -> Outcome {
    for (name, bytes) in c.file.iter().chain(&c.extra) {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    if let Some(setup) = c.setup {
        setup(dir);
    }
    let repo_catalog = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/experiments"));
    let catalog = match c.catalog.is_empty() {
        true => repo_catalog.to_path_buf(),
        false => copy_catalog(repo_catalog, &dir.join("cat"), &c.catalog),
    };
    let quoted: Vec<String> = c
        .args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let (out_path, err_path) = (dir.join(".stdout"), dir.join(".stderr"));
    let t = Instant::now();
    #[allow(
        clippy::zombie_processes,
        reason = "waited for with wait4 below, for its rusage"
    )]
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1572864; exec timeout -s KILL 40 {}'{}' {}",
            if timev() { "/usr/bin/time -v " } else { "" },
            bin().display(),
            quoted.join(" ")
        ))
        .current_dir(dir)
        .env("PERFLAB_CATALOG", &catalog)
        .env(
            "DOCKER_HOST",
            "unix:///nonexistent/perflab-hostile-test.sock",
        )
        .env_remove("PERFLAB_OUT")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let w = crate::out_scale::wait_peak(child);
    let (code, rss_kib) = (w.code, w.rss_kib);
    let took = t.elapsed();
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    let text = read(&err_path) + &read(&out_path);
    let max_rss_kib = match timev() {
        true => timev_rss_kib(&text).expect("/usr/bin/time -v printed no maximum RSS"),
        false => rss_kib,
    };
    Outcome {
        code,
        text,
        took,
        max_rss_kib,
        out_created: dir.join("out").exists(),
    }
}

/// A copy of the catalog `from` in `to`, with `files` added or replaced.
fn copy_catalog(from: &Path, to: &Path, files: &[(&'static str, Vec<u8>)]) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    for f in std::fs::read_dir(from).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
    }
    for (name, bytes) in files {
        std::fs::write(to.join(name), bytes).unwrap();
    }
    to.to_path_buf()
}

fn timev() -> bool {
    std::env::var_os("PERFLAB_HOSTILE_TIMEV").is_some()
}

/// `Maximum resident set size (kbytes): N` of `/usr/bin/time -v`.
fn timev_rss_kib(text: &str) -> Option<i64> {
    let line = text
        .lines()
        .find(|l| l.contains("Maximum resident set size"))?;
    line.rsplit(':').next()?.trim().parse().ok()
}

/// What is wrong with the outcome of `c` (run in `dir`), if anything.
fn problems(c: &Case, o: &Outcome, dir: &Path) -> Vec<String> {
    let mut p = Vec::new();
    if o.code != Some(c.code) {
        p.push(format!("exit {:?}, want {}", o.code, c.code));
    }
    for s in c.says.iter().filter(|s| !o.text.contains(**s)) {
        p.push(format!("output lacks {s:?}"));
    }
    for s in c.lacks.iter().filter(|s| o.text.contains(**s)) {
        p.push(format!("output holds {s:?}"));
    }
    if let Some(Err(e)) = c.after.map(|f| f(dir)) {
        p.push(e);
    }
    if o.took > Duration::from_secs(20) {
        p.push(format!("took {:?}", o.took));
    }
    if o.max_rss_kib > 256 * 1024 {
        p.push(format!("peak RSS {} MiB", o.max_rss_kib / 1024));
    }
    if matches!(c.args[0], "run" | "compare") && o.out_created {
        p.push("created out/".into());
    }
    p
}

#[test]
fn hostile_inputs_exit_as_tabled_naming_file_and_field() {
    let keep = std::env::var_os("PERFLAB_HOSTILE_KEEP").map(PathBuf::from);
    let mut failed = Vec::new();
    println!(
        "{:<36} {:>4} {:>8} {:>9}",
        "case", "exit", "time s", "RSS MiB"
    );
    let only = std::env::var("PERFLAB_HOSTILE_ONLY").unwrap_or_default();
    for (i, c) in cases().iter().enumerate() {
        if !only.split('|').any(|o| c.name.contains(o)) {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = match &keep {
            Some(k) => k.join(format!("{i:02}")),
            None => tmp.path().to_path_buf(),
        };
        std::fs::create_dir_all(&dir).unwrap();
        let o = run_case(c, &dir);
        println!(
            "{:<36} {:>4} {:>8.2} {:>9.1}",
            c.name,
            o.code.map_or("sig".into(), |c| c.to_string()),
            o.took.as_secs_f64(),
            o.max_rss_kib as f64 / 1024.0
        );
        let p = problems(c, &o, &dir);
        if !p.is_empty() {
            failed.push(format!("{}: {}\n{}", c.name, p.join("; "), o.text));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n---\n"));
}

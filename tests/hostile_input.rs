//! Hostile and careless input to the real `perflab` binary, one table row per case: the
//! expected exit code, what stderr (or stdout) must name (file, line, field), and a bound on
//! address space (1.5 GiB, `ulimit -v`) and time, so unbounded allocation or quadratic work
//! fails the case. `run` cases also check that nothing was started (no `out/`, no Docker: the
//! engine address points nowhere, which would exit 1, not 2).
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

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
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/1a.yaml"));
    let src = src.unwrap();
    let out: Vec<String> = src
        .lines()
        .map(|l| match l.strip_prefix(&format!("  {key}:")) {
            Some(_) => format!("  {key}: {value}"),
            None => l.to_string(),
        })
        .collect();
    assert!(
        out.iter().any(|l| l == &format!("  {key}: {value}")),
        "{key} not in 1a.yaml"
    );
    (out.join("\n") + "\n").into_bytes()
}

struct Case {
    name: &'static str,
    /// File written into the case's directory before the command (name, bytes).
    file: Option<(&'static str, Vec<u8>)>,
    args: Vec<&'static str>,
    code: i32,
    /// Substrings of stderr + stdout.
    says: Vec<&'static str>,
}

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
        args: args.to_vec(),
        code,
        says: says.to_vec(),
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
    ]
}

fn run_case(c: &Case) {
    let dir = tempfile::tempdir().unwrap();
    if let Some((name, bytes)) = &c.file {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let bin = env!("CARGO_BIN_EXE_perflab");
    let quoted: Vec<String> = c.args.iter().map(|a| format!("'{a}'")).collect();
    let t = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1572864; exec '{bin}' {}",
            quoted.join(" ")
        ))
        .current_dir(dir.path())
        .env(
            "PERFLAB_CATALOG",
            concat!(env!("CARGO_MANIFEST_DIR"), "/experiments"),
        )
        .env(
            "DOCKER_HOST",
            "unix:///nonexistent/perflab-hostile-test.sock",
        )
        .env_remove("PERFLAB_OUT")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let took = t.elapsed();
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(c.code),
        "{}: {:?}\n{text}",
        c.name,
        out.status
    );
    for s in &c.says {
        assert!(text.contains(s), "{}: output lacks {s:?}:\n{text}", c.name);
    }
    assert!(took < Duration::from_secs(20), "{}: took {took:?}", c.name);
    if c.args[0] == "run" {
        assert!(
            !Path::new(&dir.path().join("out")).exists(),
            "{}: created out/",
            c.name
        );
    }
}

#[test]
fn hostile_inputs_exit_as_tabled_naming_file_and_field() {
    for c in cases() {
        run_case(&c);
    }
}

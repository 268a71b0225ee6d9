//! Runs that several tests read. A quick run's time is its load's timeline (docs/ci-time.md), so
//! the tests that check different outcomes of the same command share one run of it: the first
//! test that asks makes it, the others read its directory. Each test still asserts on its own;
//! a failure to make the run fails every test that reads it, each naming the command.
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::OnceLock;

use super::perflab;

/// One command's run: where it wrote, what it printed, how it exited.
pub struct SharedRun {
    /// The out root the command wrote into (kept until the next test process).
    pub out: PathBuf,
    /// The run directory it made (`OUT/ID/latest`, resolved).
    pub dir: PathBuf,
    pub output: Output,
}

/// The out root of this test process's shared runs, under cargo's `target/tmp`; the folders of
/// earlier processes that have ended are removed first.
fn out_root(name: &str) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shared-runs");
    if let Ok(entries) = std::fs::read_dir(&base) {
        for e in entries.flatten() {
            let pid = e.file_name().to_string_lossy().parse::<u32>().ok();
            if pid.is_some_and(|p| {
                p != std::process::id() && !Path::new(&format!("/proc/{p}")).exists()
            }) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let out = base.join(std::process::id().to_string()).join(name);
    std::fs::create_dir_all(&out).unwrap();
    out
}

/// How the shared command's stderr is read.
#[derive(Clone, Copy)]
enum Stderr {
    /// Kept, in [`SharedRun::output`].
    Piped,
    /// Closed at once: every progress line meets EPIPE (a closed terminal, `| head` that exited).
    Closed,
}

/// Run `perflab ARGS --out OUT` once and find `OUT/ID/latest`.
fn make(name: &str, id: &str, args: &[&str], stderr: Stderr) -> SharedRun {
    let out = out_root(name);
    let mut cmd = perflab();
    cmd.env_remove("PERFLAB_CATALOG").env_remove("PERFLAB_OUT");
    cmd.args(args).arg("--out").arg(&out);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Stderr::Closed = stderr {
        drop(child.stderr.take());
    }
    let output = child.wait_with_output().unwrap();
    let dir = out
        .join(id)
        .join("latest")
        .canonicalize()
        .unwrap_or_else(|e| {
            panic!(
                "perflab {args:?} ({}) made no {id}/latest: {e}",
                output.status
            )
        });
    super::bounds::assert_run_within_bounds(&dir);
    SharedRun { out, dir, output }
}

/// `perflab run demo-open --quick --no-align --refine` with its stderr closed at once, which
/// must have succeeded (every reader asserts it here). Read by the tests of the knee, of
/// `--refine`, of a closed stderr, and by the generators' test as its one-generator side.
pub fn demo_open_refined() -> &'static SharedRun {
    static RUN: OnceLock<SharedRun> = OnceLock::new();
    let run = RUN.get_or_init(|| {
        let args = ["run", "demo-open", "--quick", "--no-align", "--refine"];
        make("demo-open-refined", "demo-open", &args, Stderr::Closed)
    });
    assert!(
        run.output.status.success(),
        "perflab run demo-open --refine (stderr closed) exited with {}",
        run.output.status
    );
    run
}

/// `perflab --quiet verify demo-open --run-missing --fit --quick --no-align --json`: the
/// experiment has claims and no run, so verify runs it fitted to this host and judges its claims
/// on that run. Read by the tests of `verify --run-missing` and of the demo's fit.
pub fn demo_open_fitted_by_verify() -> &'static SharedRun {
    static RUN: OnceLock<SharedRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let args = [
            "--quiet",
            "verify",
            "demo-open",
            "--run-missing",
            "--fit",
            "--quick",
            "--no-align",
            "--json",
        ];
        make("demo-open-fitted", "demo-open", &args, Stderr::Piped)
    })
}

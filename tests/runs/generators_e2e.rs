//! Several load generators and a load generator on a second engine endpoint, end to end through
//! the real Docker engine, real k6 and the demo lab (`--quick`, steps below the ~400 rps knee).
use std::io;
use std::net::{Shutdown, TcpListener};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;

use perflab::rundir::{self, measurements::GeneratorStart};
use serde_json::Value;

use crate::run_support;
use run_support::{json, perflab, run_quick_into};

/// Steps below the demo server's 400 rps capacity; quick = 5 s holds.
const STEPS: &str = "load.steps=100,200,300";
const HOLD_S: f64 = 5.0;

fn run_demo(out: &Path, steps: &str, extra: &[&str]) -> PathBuf {
    let args: Vec<&str> = ["--set", steps].iter().chain(extra).copied().collect();
    run_quick_into(out, "demo-open", &args)
}

fn step(r: &Value, target: u64) -> &Value {
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["target"] == target)
        .unwrap_or_else(|| panic!("no step {target} in {}", r["steps"]))
}

#[test]
fn two_generators_split_the_schedule_and_merge_like_one() {
    let _serial = crate::serial();
    // One generator: the shared quick demo-open run (its steps 100-300 are these; it goes on to
    // 600 and refines, which this test does not read).
    let one = &run_support::shared::demo_open_refined().dir;
    let out2 = tempfile::tempdir().unwrap();
    let two = run_demo(out2.path(), STEPS, &["--generators", "2"]);
    assert_eq!(json(&two.join("status.json"))["state"], "complete");
    // The N=1 layout is unchanged; N=2 writes one folder per instance.
    assert!(one.join("k6/requests.csv.gz").exists());
    for g in ["g0", "g1"] {
        for f in ["requests.csv.gz", "summary.json", "k6.log"] {
            assert!(two.join("k6").join(g).join(f).exists(), "k6/{g}/{f}");
        }
    }
    let (r1, r2) = (
        json(&one.join("report.json")),
        json(&two.join("report.json")),
    );
    for target in [100u64, 200, 300] {
        let (s1, s2) = (step(&r1, target), step(&r2, target));
        let (n1, n2) = (
            s1["requests"].as_f64().unwrap(),
            s2["requests"].as_f64().unwrap(),
        );
        let expected = target as f64 * HOLD_S;
        eprintln!("step {target}: expected {expected}, 1 generator {n1}, 2 generators {n2}");
        assert!(
            (n2 - expected).abs() <= expected * 0.01,
            "step {target}: {n2} vs {expected}"
        );
        assert!(
            (n2 - n1).abs() <= n1 * 0.01,
            "step {target}: {n2} vs one generator's {n1}"
        );
        // Merged percentiles keep the single run's shape below the knee (40 ms service time).
        let (p1, p2) = (
            s1["p50_ms"].as_f64().unwrap(),
            s2["p50_ms"].as_f64().unwrap(),
        );
        eprintln!("step {target}: p50 1 generator {p1:.1} ms, 2 generators {p2:.1} ms");
        assert!(
            p2 > 35.0 && p2 < p1 * 2.0 && p2 > p1 / 2.0,
            "p50 {p2} vs {p1}"
        );
    }
    // Each instance carries half of the schedule.
    let gens = r2["source"]["generators"]
        .as_array()
        .expect("per-instance sources");
    assert_eq!(gens.len(), 2);
    let total: f64 = gens.iter().map(|g| g["requests"].as_f64().unwrap()).sum();
    for g in gens {
        let share = g["requests"].as_f64().unwrap() / total;
        assert!((share - 0.5).abs() < 0.02, "share {share}: {g}");
    }
    // The merged counts agree with the sum of the instances' k6 summaries.
    assert_eq!(r2["checks"]["cross_checked_steps"].as_u64(), Some(3));
    let rows = r2["checks"]["cross_check"].as_array().unwrap();
    assert!(
        !rows
            .iter()
            .any(|c| c["field"] == "requests" || c["field"] == "failed_rate"),
        "{rows:?}"
    );
    // One resume for both (paused k6s on this machine), segments as planned, first requests
    // close together.
    let m = rundir::read_manifest(&two).unwrap().measurements;
    let g = m.generators.as_ref().expect("generators");
    assert_eq!((g.count, g.start), (2, GeneratorStart::Resume));
    let resume = m.k6_resume.as_ref().expect("k6_resume");
    eprintln!("resume of both generators: {resume:?}");
    let segs: Vec<&str> = g.instances.iter().map(|i| i.segment.as_str()).collect();
    assert_eq!(segs, ["0:1/2", "1/2:1"]);
    assert!(
        g.instances[1]
            .command
            .contains("--execution-segment-sequence=0,1/2,1")
    );
    let firsts: Vec<i64> = m
        .k6_first_request_ms
        .as_ref()
        .unwrap()
        .iter()
        .map(|v| v.expect("a first request per instance"))
        .collect();
    let spread = m.k6_first_request_spread_ms.unwrap();
    eprintln!("first requests {firsts:?}, spread {spread} ms");
    assert_eq!(
        spread,
        firsts.iter().max().unwrap() - firsts.iter().min().unwrap()
    );
    assert!(spread < 1000, "instances started {spread} ms apart");
    // Both instances were sampled as k6 on the shared loadgen CPU.
    let cg = std::fs::read_to_string(two.join("samples/cgroup.jsonl")).unwrap();
    for i in 0..2 {
        assert!(
            cg.contains(&format!("-k6-g{i}\"")),
            "no cgroup samples of k6-g{i}"
        );
    }
}

/// A second endpoint to the same engine: TCP on loopback forwarded to the docker socket (what
/// `socat TCP-LISTEN:…,fork UNIX-CONNECT:/var/run/docker.sock` does), on an ephemeral port.
fn forward_docker_socket() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(tcp) = c else { continue };
            std::thread::spawn(move || {
                let Ok(unix) = UnixStream::connect("/var/run/docker.sock") else {
                    return;
                };
                let (mut t_in, mut u_out) = (tcp.try_clone().unwrap(), unix.try_clone().unwrap());
                let up = std::thread::spawn(move || {
                    let _ = io::copy(&mut t_in, &mut u_out);
                    let _ = u_out.shutdown(Shutdown::Write);
                });
                let (mut u_in, mut t_out) = (unix, tcp);
                let _ = io::copy(&mut u_in, &mut t_out);
                let _ = t_out.shutdown(Shutdown::Write);
                let _ = up.join();
            });
        }
    });
    port
}

fn containers_of(run_id: &str, host: Option<&str>) -> Vec<String> {
    let mut c = Command::new("docker");
    if let Some(h) = host {
        c.args(["-H", h]);
    }
    let o = c
        .args(["ps", "-a", "--filter"])
        .arg(format!("label=perflab.run={run_id}"))
        .args(["--format", "{{.Names}}"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Docker runs whose figures nothing here judges (lifecycle, interrupts, bookkeeping):
/// `scripts/test.sh` runs them beside the offline tests (docs/ci-time.md).
mod bookkeeping {
    use super::*;

    #[test]
    fn load_generator_on_a_second_engine_endpoint() {
        let _serial = crate::serial();
        let port = forward_docker_socket();
        let endpoint = format!("tcp://127.0.0.1:{port}");
        let out = tempfile::tempdir().unwrap();
        let dir = run_demo(
            out.path(),
            "load.steps=100,200",
            &["--host", &format!("loadgen={endpoint}")],
        );
        assert_eq!(json(&dir.join("status.json"))["state"], "complete");
        let meas = rundir::read_manifest(&dir).unwrap().measurements;
        let pl = meas.placement.as_ref().expect("placement");
        assert_eq!(pl.loadgen, endpoint, "{pl:?}");
        assert!(pl.loadgen_remote);
        assert_eq!(pl.published_entry.ip, "127.0.0.1");
        assert!(pl.published_entry.port > 0);
        assert_eq!(pl.same_daemon_as_stack, Some(true), "{pl:?}");
        let offset = meas.loadgen_clock_offset_ms.expect("clock offset");
        eprintln!(
            "clock offset of {endpoint}: {offset:.3} ms (rtt {:?} ms)",
            pl.loadgen_clock_offset.map(|c| c.rtt_ms)
        );
        assert!(offset.abs() < 50.0, "same machine, offset {offset} ms");
        // k6 reached the app through the published address, with host networking.
        let g = meas.generators.as_ref().expect("generators");
        let cmd = &g.instances[0].command;
        assert!(
            cmd.contains(&format!(
                "URL=http://127.0.0.1:{}/work",
                pl.published_entry.port
            )),
            "{cmd}"
        );
        assert!(g.remote);
        // The report has the generator's CPU, sampled by the agent on that engine.
        assert!(
            meas.sampler_agent_cgroup_lines
                .get("loadgen")
                .is_some_and(|n| *n > 0),
            "{meas:?}"
        );
        let r = json(&dir.join("report.json"));
        let k6 = r["checks"]["k6_cpu_max_pct"]
            .as_f64()
            .expect("k6 CPU in the report");
        assert!(k6 > 0.0, "k6 CPU {k6}");
        let n = step(&r, 100)["requests"].as_f64().unwrap();
        assert!((n - 500.0).abs() <= 5.0, "100 rps x 5 s: {n}");
        assert!(dir.join("samples/host-loadgen.jsonl").exists());
        // Nothing left on either endpoint.
        let run_id = meas.stack.run_id.as_deref().unwrap();
        assert!(
            containers_of(run_id, None).is_empty(),
            "{:?}",
            containers_of(run_id, None)
        );
        assert!(containers_of(run_id, Some(&endpoint)).is_empty());
    }

    #[test]
    fn stack_on_a_second_engine_endpoint() {
        let _serial = crate::serial();
        let port = forward_docker_socket();
        let endpoint = format!("tcp://127.0.0.1:{port}");
        let out = tempfile::tempdir().unwrap();
        // node-smoke: the Node app and PostgreSQL on the second endpoint, k6 on the local engine.
        let st = perflab()
            .args([
                "--quiet",
                "run",
                "node-smoke",
                "--quick",
                "--no-align",
                "--out",
            ])
            .arg(out.path())
            .args([
                "--host",
                &format!("app={endpoint}"),
                "--host",
                &format!("db={endpoint}"),
            ])
            .status()
            .unwrap();
        assert!(st.success(), "perflab run node-smoke exited with {st}");
        let dir = out.path().join("node-smoke/latest").canonicalize().unwrap();
        assert_eq!(json(&dir.join("status.json"))["state"], "complete");
        let meas = rundir::read_manifest(&dir).unwrap().measurements;
        let pl = meas.placement.as_ref().expect("placement");
        assert_eq!(pl.app, endpoint, "{pl:?}");
        assert_eq!(pl.db, endpoint, "{pl:?}");
        assert_eq!(pl.loadgen, "local");
        assert!(pl.stack_clock_offset.is_some(), "{pl:?}");
        // The app and PostgreSQL were sampled by the agent on their engine, k6 locally.
        assert!(
            meas.sampler_agent_cgroup_lines
                .get("stack")
                .is_some_and(|n| *n > 0),
            "{meas:?}"
        );
        let cg = std::fs::read_to_string(dir.join("samples/cgroup.jsonl")).unwrap();
        for role in ["app", "pg", "k6"] {
            assert!(
                cg.contains(&format!("\"role\":\"{role}\"")),
                "no {role} samples"
            );
        }
        // The orchestrator reached PostgreSQL on its published address (pg sampler).
        let pg = std::fs::read_to_string(dir.join("samples/pg.jsonl")).unwrap_or_default();
        assert!(pg.lines().count() > 0, "no pg samples");
        let r = json(&dir.join("report.json"));
        for s in r["steps"].as_array().unwrap() {
            assert_eq!(s["failed_rate"].as_f64(), Some(0.0), "{s}");
            assert!(s["requests"].as_u64().unwrap() > 0);
        }
        let run_id = meas.stack.run_id.as_deref().unwrap();
        assert!(containers_of(run_id, None).is_empty());
        assert!(containers_of(run_id, Some(&endpoint)).is_empty());
    }
}

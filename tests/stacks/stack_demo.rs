//! Demo lab and one-off containers: the capacity server answers and reports its queue; k6 runs
//! in its own pinned container on the lab network against the in-network URL, files go in and
//! out as tar.
use crate::stack_support;
use perflab::docker::{ContainerSpec, ExitStatus};
use perflab::experiment::Lab;
use perflab::lab::Role;
use perflab::stack::{self, smoke};
use stack_support::*;

const SCRIPT: &str = r#"
import http from 'k6/http';
export const options = {
  scenarios: { s: { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', duration: '2s',
                    preAllocatedVUs: 10, maxVUs: 20 } },
};
export default function () { http.get(`${__ENV.BASE}/work`); }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_smoke_and_k6_oneoff_on_the_lab_network() {
    let d = docker().await;
    let set = images(&d).await;
    let exp = experiment(Lab::Demo, &[]);
    let id = run_id("demo");
    let s = start(&d, &set, &exp, &id).await.expect("demo stack starts");
    let report = smoke::run(&d, &s, &exp).await;

    let mut spec = s.k6_spec(&set, "k6");
    spec.cmd = Some(vec![
        "run".into(),
        "--quiet".into(),
        "--summary-export".into(),
        "/work/summary.json".into(),
        "/work/script.js".into(),
    ]);
    spec.env = vec![("BASE".into(), s.target_url.clone())];
    assert_eq!(spec.cpuset.as_deref(), Some(s.pinning.loadgen.as_str()));
    assert_eq!(spec.memory_bytes, Some(1 << 30));
    let files = vec![(
        "/work/script.js".to_string(),
        SCRIPT.as_bytes().to_vec(),
        0o644,
    )];
    let run = d
        .run_oneoff(&spec, &files, std::future::pending())
        .await
        .unwrap();
    let logs = d.logs(&run.id, None).await.unwrap();
    let summary = d.read_file(&run.id, "/work/summary.json").await;
    s.teardown(&d).await.unwrap();

    assert_passed(&report.unwrap());
    assert_eq!(run.status, ExitStatus::Exited(0), "k6 logs:\n{logs}");
    let v: serde_json::Value = serde_json::from_slice(&summary.unwrap()).unwrap();
    let reqs = v["metrics"]["http_reqs"]["count"].as_f64().unwrap();
    assert!(reqs >= 90.0, "k6 sent {reqs} requests");
    assert_eq!(v["metrics"]["http_req_failed"]["value"].as_f64(), Some(0.0));
    assert!(leftovers(&d, &id).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oneoff_cancellation_kills_the_container() {
    let d = docker().await;
    let set = images(&d).await;
    let id = run_id("cancel");
    let spec = ContainerSpec {
        name: format!("perflab-{id}-sleeper"),
        image: set.get(Role::BASE).tag.clone(),
        cmd: Some(vec!["sleep".into(), "60".into()]),
        labels: stack::stack_labels(&id, Lab::Demo, "sleeper"),
        init: true,
        ..Default::default()
    };
    let t0 = std::time::Instant::now();
    let run = d
        .run_oneoff(
            &spec,
            &[],
            tokio::time::sleep(std::time::Duration::from_millis(500)),
        )
        .await
        .unwrap();
    assert_eq!(run.status, ExitStatus::Cancelled);
    assert!(t0.elapsed().as_secs() < 20);
    d.remove_container(&run.id).await.unwrap();
    assert!(leftovers(&d, &id).await.is_empty());
}

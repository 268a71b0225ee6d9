//! Shared hosts, real PHP stack: nothing is published, and php-fpm's status page and nginx's
//! `stub_status` answer only perflab's sampler (the host, through the lab network's gateway),
//! not k6 or any other container on the lab network.
use crate::stack_support;
use perflab::docker::ExitStatus;
use perflab::experiment::Lab;
use stack_support::*;

const SCRIPT: &str = r#"
import http from 'k6/http';
export default function () {
  console.log('STATUS=' + http.get('http://nginx:80/fpm-status?json').status);
  console.log('STUB=' + http.get('http://nginx:80/nginx-status').status);
  console.log('PING=' + http.get('http://nginx:80/api/ping').status);
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fpm_status_answers_the_sampler_only() {
    let d = docker().await;
    let set = images(&d).await;
    let exp = experiment(Lab::Php, &[]);
    let id = run_id("shfpm");
    let s = start(&d, &set, &exp, &id).await.expect("php stack starts");

    let from_host = reqwest::get(s.source_url("fpm").unwrap()).await;
    let stub_from_host = reqwest::get(s.source_url("nginx").unwrap()).await;
    let mut spec = s.k6_spec(&set, "k6");
    spec.cmd = Some(vec![
        "run".into(),
        "--quiet".into(),
        "--iterations".into(),
        "1".into(),
        "/work/script.js".into(),
    ]);
    let files = vec![(
        "/work/script.js".to_string(),
        SCRIPT.as_bytes().to_vec(),
        0o644,
    )];
    let run = d.run_oneoff(&spec, &files, std::future::pending()).await;
    let logs = match &run {
        Ok(r) => d.logs(&r.id, None).await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    let published: Vec<_> = s
        .containers
        .values()
        .filter(|c| !c.host_ports.is_empty())
        .map(|c| c.name.clone())
        .collect();
    s.teardown(&d).await.unwrap();

    let from_host = from_host.expect("the host reaches nginx at its lab address");
    assert_eq!(from_host.status().as_u16(), 200);
    assert!(from_host.text().await.unwrap().contains("active processes"));
    let stub = stub_from_host.expect("the host reaches nginx's stub_status");
    assert_eq!(stub.status().as_u16(), 200);
    assert!(stub.text().await.unwrap().contains("Active connections:"));
    assert_eq!(run.unwrap().status, ExitStatus::Exited(0), "{logs}");
    // k6 reaches the app, not the status page (nginx answers 403 to any other address).
    assert!(logs.contains("PING=200"), "{logs}");
    assert!(logs.contains("STATUS=403"), "{logs}");
    assert!(logs.contains("STUB=403"), "{logs}");
    assert!(published.is_empty(), "published: {published:?}");
    assert!(leftovers(&d, &id).await.is_empty());
}

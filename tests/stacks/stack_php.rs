//! PHP lab on the real engine: nginx + php-fpm + Laravel + PostgreSQL start pinned and labelled,
//! pass the smoke (incl. the fpm status page answering while every worker is busy), and a
//! misconfiguration that turns endpoints into HTTP 500 fails the smoke.
use crate::stack_support;
use perflab::experiment::Lab;
use perflab::lab::Role;
use perflab::stack::smoke;
use stack_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn php_stack_tcp_persistent_passes_smoke() {
    let d = docker().await;
    let set = images(&d).await;
    let exp = experiment(Lab::Php, &["php.max_children=8"]);
    let id = run_id("php");
    let s = start(&d, &set, &exp, &id).await.expect("php stack starts");
    let report = smoke::run(&d, &s, &exp).await;
    // Pinning, limits and labels as the spec says.
    let fpm = s.container(Role::named("fpm").unwrap()).unwrap().clone();
    let info = d.inspect_container(&fpm.id).await.unwrap();
    let fpm_log = s.logs(&d, Role::named("fpm").unwrap()).await.unwrap();
    // Read before teardown: the cgroup goes with the container.
    let cg_cpu_ns =
        match perflab::sample::stack::cgroup_of(&s, &d, Role::named("fpm").unwrap()).await {
            Ok(p) => p.read().map(|r| r.cpu_ns).map_err(anyhow::Error::from),
            Err(e) => Err(e),
        };
    s.teardown(&d).await.unwrap();
    let report = report.unwrap();
    assert_passed(&report);
    assert_eq!(fpm.cpuset, s.pinning.app);
    assert_eq!(fpm.memory_bytes, 768 << 20);
    assert_eq!(info.labels.get("perflab.run"), Some(&id));
    assert_eq!(
        info.labels.get("perflab.role").map(String::as_str),
        Some("php-fpm")
    );
    assert_eq!(
        info.labels.get("perflab.lab").map(String::as_str),
        Some("php")
    );
    assert!(
        fpm_log.contains("ready to handle connections"),
        "php-fpm log: {fpm_log}"
    );
    assert_eq!(fpm.id.len(), 64);
    let cpu_ns = cg_cpu_ns.expect("cgroup counters of a running container");
    assert!(cpu_ns > 0, "php-fpm used no CPU according to its cgroup");
    // Read from the host at nginx's address on the lab network: nothing is published.
    let nginx = s.container(Role::named("nginx").unwrap()).unwrap();
    let addr = nginx.address.as_deref().expect("nginx has a lab address");
    assert_eq!(
        s.source_url("fpm").as_deref(),
        Some(format!("http://{addr}:80/fpm-status?json").as_str())
    );
    assert!(
        s.containers.values().all(|c| c.host_ports.is_empty()),
        "{:?}",
        s.containers
    );
    assert_eq!(s.target_url, "http://nginx:80");
    assert!(leftovers(&d, &id).await.is_empty(), "teardown left objects");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn php_unix_socket_non_persistent_passes_smoke() {
    let d = docker().await;
    let set = images(&d).await;
    let exp = experiment(
        Lab::Php,
        &[
            "php.max_children=5",
            "php.listen=unix",
            "php.persistent=false",
        ],
    );
    let id = run_id("php-unix");
    let s = start(&d, &set, &exp, &id).await.expect("php stack starts");
    let report = smoke::run(&d, &s, &exp).await;
    s.teardown(&d).await.unwrap();
    assert_passed(&report.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_500_from_a_broken_database_fails_the_smoke() {
    let d = docker().await;
    let set = images(&d).await;
    let exp = experiment(Lab::Php, &["php.max_children=4", "php.persistent=false"]);
    let id = run_id("php-broken");
    let s = start(&d, &set, &exp, &id).await.expect("php stack starts");
    // Take the database away: every new PDO connection fails -> Laravel answers 500, which a
    // smoke must not mistake for a fast app.
    let pg = s.container(Role::PG).unwrap().id.clone();
    d.kill_container(&pg, "SIGKILL").await.unwrap();
    let report = smoke::run(&d, &s, &exp).await;
    s.teardown(&d).await.unwrap();
    let report = report.unwrap();
    assert!(!report.passed(), "a 500-returning app must fail the smoke");
    let db = report
        .checks
        .iter()
        .find(|c| c.name == "GET /api/db")
        .unwrap();
    assert!(!db.ok && db.detail.contains("HTTP 500"), "{db:?}");
    let ping = report
        .checks
        .iter()
        .find(|c| c.name == "GET /api/ping")
        .unwrap();
    assert!(ping.ok, "framework-only endpoint still answers: {ping:?}");
}

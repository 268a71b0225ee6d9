//! Node lab on the real engine: Express + pg start pinned, pre-open the pool, print the
//! 2-second metrics line with every field, and pass the smoke (single process and cluster).
use crate::stack_support;
use perflab::experiment::Lab;
use perflab::lab::Role;
use perflab::stack::smoke;
use stack_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_stack_passes_smoke() {
    let d = docker().await;
    let set = images(&d).await;
    let exp = experiment(Lab::Node, &[]);
    let id = run_id("node");
    let s = start(&d, &set, &exp, &id).await.expect("node stack starts");
    let report = smoke::run(&d, &s, &exp).await;
    let app = s.container(Role::named("app").unwrap()).unwrap().clone();
    s.teardown(&d).await.unwrap();
    assert_passed(&report.unwrap());
    assert_eq!(app.cpuset, s.pinning.app);
    assert_eq!(s.target_url, "http://app:3000");
    assert!(leftovers(&d, &id).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_cluster_two_workers_each_with_a_pool() {
    let d = docker().await;
    let set = images(&d).await;
    let exp = experiment(Lab::Node, &["node.processes=2", "node.pool_max=4"]);
    let id = run_id("node-cluster");
    let s = start(&d, &set, &exp, &id)
        .await
        .expect("node cluster starts");
    let report = smoke::run(&d, &s, &exp).await;
    let logs = s.logs(&d, Role::named("app").unwrap()).await.unwrap();
    s.teardown(&d).await.unwrap();
    assert_passed(&report.unwrap());
    let pids: std::collections::BTreeSet<i64> = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["pid"].as_i64())
        .collect();
    assert_eq!(pids.len(), 2, "two worker processes print metrics: {logs}");
}

//! Start-up failures and cleanup on the real engine: a container killed mid-start is reported
//! with its logs and nothing of the run is left; `perflab cleanup` removes labelled objects.
use crate::stack_support;
use perflab::docker::{self, ContainerSpec};
use perflab::experiment::Lab;
use perflab::lab::Role;
use perflab::stack;
use stack_support::*;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn container_killed_mid_start_is_reported_and_cleaned_up() {
    let d = docker().await;
    let set = images(&d).await;
    let exp = experiment(Lab::Node, &[]);
    let id = run_id("killed");
    let killer = {
        let d = d.clone();
        let id = id.clone();
        tokio::spawn(async move {
            // Kill PostgreSQL as soon as it exists and runs: the node app waits for it.
            for _ in 0..400 {
                let objs = d
                    .list_labelled(&[format!("perflab.run={id}"), "perflab.role=pg".into()])
                    .await
                    .unwrap();
                if let Some(pg) = objs
                    .iter()
                    .find(|o| o.kind == docker::ObjectKind::Container)
                    && d.inspect_container(&pg.id)
                        .await
                        .map(|i| i.running)
                        .unwrap_or(false)
                {
                    d.kill_container(&pg.id, "SIGKILL").await.unwrap();
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            false
        })
    };
    let r = start(&d, &set, &exp, &id).await;
    assert!(killer.await.unwrap(), "the killer saw the pg container");
    let err = format!("{:#}", r.expect_err("start must fail when pg dies"));
    assert!(err.contains("pg container"), "{err}");
    assert!(err.contains("exited during start-up"), "{err}");
    assert!(
        leftovers(&d, &id).await.is_empty(),
        "a failed start removes what it created"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_removes_labelled_objects_and_nothing_else() {
    let d = docker().await;
    let set = images(&d).await;
    let id = run_id("cleanup");
    let mut labels = stack::stack_labels(&id, Lab::Demo, "leftover");
    // Leftovers of a killed perflab: their owner is gone (a live owner's are never removed).
    let mut owner = std::process::Command::new("true").spawn().unwrap();
    let gone = perflab::owner::Owner {
        pid: owner.id(),
        ..perflab::owner::Owner::me().clone()
    };
    owner.wait().unwrap();
    labels.extend(gone.labels());
    d.create_network(&format!("perflab-{id}-net"), &labels)
        .await
        .unwrap();
    d.create_volume(&format!("perflab-{id}-vol"), &labels)
        .await
        .unwrap();
    let c = d
        .create_container(&ContainerSpec {
            name: format!("perflab-{id}-c"),
            image: set.get(Role::BASE).tag.clone(),
            cmd: Some(vec!["sleep".into(), "300".into()]),
            labels: labels.clone(),
            network: Some(format!("perflab-{id}-net")),
            init: true,
            ..Default::default()
        })
        .await
        .unwrap();
    d.start_container(&c).await.unwrap();
    // An unlabelled network must survive.
    let bystander = format!("bystander-{}", stack::random_token(6));
    d.create_network(&bystander, &Default::default())
        .await
        .unwrap();
    assert_eq!(leftovers(&d, &id).await.len(), 3);

    let out = assert_cmd::Command::cargo_bin("perflab")
        .unwrap()
        .args(["cleanup", "--run", &id])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(leftovers(&d, &id).await.is_empty());
    let still = d.network_exists(&bystander).await.unwrap();
    d.remove_network(&bystander).await.unwrap();
    assert!(still, "cleanup removed an unlabelled network");
    let _ = docker::LABEL_PERFLAB;
}

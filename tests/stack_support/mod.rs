//! Shared helpers of the stack integration tests (real Docker engine, real images).
#![allow(dead_code)]
use perflab::docker::{self, Docker};
use perflab::experiment::{Experiment, Lab};
use perflab::images::{self, ImageSet, Suite};
use perflab::stack::{self, LabStack, Pinning, StartOptions, defaults};

pub async fn docker() -> Docker {
    Docker::connect().await.expect("Docker engine reachable")
}

/// The default suite's images (built by `.ci/run` before the tests; built here if missing).
pub async fn images(d: &Docker) -> ImageSet {
    images::ensure_built(d, Suite::Trixie, &mut |_| {})
        .await
        .expect("images build")
}

/// A unique run id for one test.
pub fn run_id(test: &str) -> String {
    format!("test-{test}-{}", stack::random_token(6))
}

pub fn experiment(lab: Lab, sets: &[&str]) -> Experiment {
    let e = defaults::lab_experiment(lab);
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    perflab::experiment::overrides::apply(&e, &sets)
        .unwrap_or_else(|d| panic!("{sets:?}: {d:?}"))
        .0
}

pub async fn start(
    d: &Docker,
    set: &ImageSet,
    exp: &Experiment,
    run_id: &str,
) -> anyhow::Result<LabStack> {
    LabStack::start(
        d,
        exp,
        &host_pinning(),
        run_id,
        set,
        &StartOptions::default(),
    )
    .await
}

/// The automatic CPU layout of this host, as the stack takes it.
pub fn host_pinning() -> Pinning {
    let online = perflab::plan::layout::online_cpus().expect("online CPUs");
    Pinning::from(&perflab::plan::layout::auto(&online).expect("a CPU layout"))
}

/// Labelled objects of one run still present.
pub async fn leftovers(d: &Docker, run_id: &str) -> Vec<docker::LabelledObject> {
    d.list_labelled(&[format!("{}={run_id}", docker::LABEL_RUN)])
        .await
        .unwrap()
}

/// Assert a smoke passed, printing every check otherwise.
pub fn assert_passed(report: &stack::smoke::SmokeReport) {
    assert!(
        report.passed(),
        "smoke failed:\n{}",
        report
            .checks
            .iter()
            .map(|c| format!(
                "{} {} {}",
                if c.ok { "ok  " } else { "FAIL" },
                c.name,
                c.detail
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

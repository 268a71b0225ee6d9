//! The host's CPU on a recorded run (tests/fixtures/hostcpu/exp1: a quick exp1 on the shared
//! 2-core dev host, its samples/{cgroup,host,hostprocs}.jsonl and report.json): the split of
//! the other cores by source per step, the caveat naming the largest consumers, and the
//! "Host CPU" block of the text and HTML reports (snapshot).
use perflab::analyze::Report;
use perflab::analyze::model::{Checks, Consumer, StepHostShare};
use perflab::analyze::samples::{ProcSource, host_share};
use perflab::report::{content, load};
use std::path::PathBuf;

fn recorded() -> (Report, Checks) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostcpu/exp1");
    let r: Report =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let s = load::samples(&dir).unwrap();
    assert!(s.hostprocs.len() >= 30, "{} procs lines", s.hostprocs.len());
    let end =
        |st: &perflab::analyze::model::StepReport| st.start_ms + (st.window_s * 1000.0) as i64;
    let mut c = Checks {
        host_share: host_share(&s, r.steps[0].start_ms, end(r.steps.last().unwrap())),
        ..Default::default()
    };
    for st in &r.steps {
        c.host_steps.push(StepHostShare {
            step: st.name.clone(),
            share: host_share(&s, st.start_ms, end(st)).unwrap(),
        });
    }
    (r, c)
}

#[test]
fn recorded_exp1_other_cores_split_by_source() {
    let (_, c) = recorded();
    for st in &c.host_steps {
        let h = &st.share;
        let sum: f64 = h.outside.iter().map(|x| x.cores).sum();
        // what the list leaves out is below 0.005 cores each
        assert!(
            (sum - h.other_cores).abs() < 0.02,
            "{}: {sum} vs {}",
            st.step,
            h.other_cores
        );
        let un = h.outside.iter().find(|x| x.who == Consumer::Unattributed);
        assert!(
            un.is_none_or(|u| u.cores.abs() < 0.05),
            "{}: the recorded processes explain the other cores: {un:?}",
            st.step
        );
    }
    // php-fpm's storage process worked for the lab from 150 rps on: > 0.1 core per step
    for st in c.host_steps.iter().filter(|s| s.step.as_str() >= "r0150") {
        let fuse = st
            .share
            .outside_cores(|w| w == Consumer::Process(ProcSource::LabStorage));
        assert!(fuse > 0.1, "{}: fuse-overlayfs {fuse}", st.step);
        assert_eq!(
            st.share
                .top_processes
                .iter()
                .filter(|n| n.name == "fuse-overlayfs:fpm")
                .count(),
            1
        );
    }
    let all = c.host_share.as_ref().unwrap();
    let w = perflab::analyze::run::host_share_warnings(all);
    assert!(
        w.iter()
            .any(|x| x.starts_with("other users' processes used") && x.contains("run_json")),
        "the shared-host caveat names the other agent's test binary: {w:#?}"
    );
    assert!(
        w.iter()
            .any(|x| x.starts_with("Docker's plumbing") && x.contains("fuse-overlayfs")),
        "{w:#?}"
    );
}

#[test]
fn recorded_exp1_host_block() {
    let (mut r, c) = recorded();
    r.checks.host_share = c.host_share;
    r.checks.host_steps = c.host_steps;
    let blocks = content::checks_blocks(&r);
    let b = blocks.iter().find(|b| b.title == "Host CPU").unwrap();
    insta::assert_snapshot!(b.body_text());
    // the HTML report shows the same block
    let page = perflab::html::report::render(
        &r,
        &perflab::html::report::Extras {
            manifest: None,
            claims: Vec::new(),
            plots: Vec::new(),
        },
    );
    assert!(page.contains("Host CPU") && page.contains("fuse-overlayfs"));
}

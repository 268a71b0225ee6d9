//! The host's CPU on a recorded run (tests/fixtures/hostcpu/exp1: a quick exp1 on the shared
//! 2-core dev host, its samples/{cgroup,host,hostprocs}.jsonl and report.json): the split of
//! the other cores by source per step, the caveat naming the largest consumers, and the
//! "Host CPU" block of the text and HTML reports (snapshot).
use perflab::analyze::Report;
use perflab::analyze::model::{Checks, Consumer, StepHostShare};
use perflab::analyze::samples::{ProcSource, host_share};
use perflab::report::content;
use perflab::rundir::inputs as load;
use std::path::PathBuf;

fn recorded() -> (Report, Checks) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostcpu/exp1");
    let r: Report =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let s = load::samples(&dir, &mut Vec::new()).unwrap();
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

/// A quick 2a round recorded on this 2-core host while compilers took 1.7 of its cores
/// (tests/fixtures/hostcpu/2a-shared: the whole run directory but its reports). The Node app
/// used 21 % of its core: its own CPU names nothing, yet the core was busy all the time. The
/// verdict must say who had it (criterion 5 counts the app's CPUs busy or stolen), every step
/// is host-limited, and a claim judged on such a step says so.
#[test]
fn recorded_2a_on_a_shared_host_names_who_took_the_app_core() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostcpu/2a-shared");
    let r = perflab::analyze::analyze_run(load::run_dir(&dir).unwrap()).unwrap();
    let why = r.knee_why.as_deref().unwrap();
    assert!(
        why.starts_with(
            "knee 50 rps: p95 187 ms > 100; app CPU bound (21 % app + 79 % other processes)"
        ),
        "{why}"
    );
    assert!(
        why.contains("host-limited: processes outside the lab took 79 % of the app's CPU"),
        "{why}"
    );
    assert!(!why.contains("no server resource saturated"), "{why}");
    for s in &r.steps {
        let h = s
            .host_limited
            .as_deref()
            .unwrap_or_else(|| panic!("{} not host-limited", s.name));
        assert!(h.contains("of the app's CPU"), "{}: {h}", s.name);
    }
    let text = perflab::report::text::render(&r, None);
    assert!(text.contains("fail [1] (host)"), "{text}");
    assert!(
        text.contains("01_rps50 host-limited: processes outside the lab took"),
        "{text}"
    );
    // verify: 2a's loop-saturated is judged at the top step, which the host limited
    let manifest = perflab::rundir::read_manifest(&dir).unwrap();
    let cat = perflab::experiment::Catalog::load(
        &dir.join("../../../../experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let perflab::experiment::CatalogEntry::Experiment(e) = &cat.get("2a").unwrap().entry else {
        panic!("2a is a group")
    };
    let claim = e
        .expect
        .iter()
        .find(|c| c.name == "loop-saturated")
        .unwrap();
    let view = perflab::verify::eval::RunView {
        label: "2a-shared",
        report: &r,
        manifest: &manifest,
    };
    let res = perflab::verify::evaluate("2a", claim, view, None);
    let h = res
        .host_limited
        .as_deref()
        .expect("the claim names the host-limited step");
    assert!(
        h.starts_with("judged on host-limited 04_rps150 (processes outside the lab"),
        "{h}"
    );
    let out = perflab::verify::render::text(&[res], &[]);
    assert!(out.contains("-> judged on host-limited 04_rps150"), "{out}");
}

/// A process named to inject markup and terminal escapes (any local user can name one so) is
/// shown as text: no HTML in report.md, no control character in report.txt.
#[test]
fn a_hostile_process_name_is_text_in_markdown_and_plain_text() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostcpu/exp1");
    let json = std::fs::read_to_string(dir.join("report.json")).unwrap();
    let evil = r#""<script>alert(1)</script><img src=x onerror=alert(2)>\u001b]0;PWNED\u0007""#;
    assert!(json.contains("\"run_json\""));
    let r = perflab::rundir::report::parse(&json.replace("\"run_json\"", evil)).unwrap();
    let md = perflab::report::markdown::render(&r, None, &[]);
    assert!(
        md.contains("&lt;script>alert(1)&lt;/script>&lt;img src=x"),
        "{md}"
    );
    assert!(!md.contains("<script") && !md.contains("<img") && !md.contains('\u{1b}'));
    let text = perflab::report::text::render(&r, None);
    assert!(text.contains("\\u001b]0;PWNED\\u0007"), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'));
}

/// A quiet host: the processes file was read and nothing outside the lab reached 0.005 cores
/// (1b's fitted run of 2026-12-04: kernel threads 0.0046, containerd 0.0014 cores). The block
/// says so, and says "has no samples/hostprocs.jsonl" only when the attribution had none.
#[test]
fn a_quiet_host_is_not_a_missing_processes_file() {
    let (mut r, _) = recorded();
    let quiet = perflab::analyze::model::HostShare {
        busy_cores: 0.80,
        lab_cores: 0.79,
        harness_cores: 0.01,
        steal_cores: Some(0.0),
        other_cores: 0.0,
        samples: 184,
        outside: Vec::new(),
        top_processes: Vec::new(),
        irq_cores: Some(0.004),
    };
    let text = |r: &Report| {
        let blocks = content::checks_blocks(r);
        blocks
            .iter()
            .find(|b| b.title == "Host CPU")
            .unwrap()
            .body_text()
    };
    r.checks.host_share = Some(quiet.clone());
    r.checks.host_steps = Vec::new();
    let t = text(&r);
    assert!(
        t.contains("outside the lab: no process and no interrupt time above 0.005 cores"),
        "{t}"
    );
    assert!(!t.contains("has no samples/hostprocs.jsonl"), "{t}");
    // No attribution (no processes file, or too few of its lines): the old sentence.
    r.checks.host_share = Some(perflab::analyze::model::HostShare {
        irq_cores: None,
        ..quiet
    });
    let t = text(&r);
    assert!(
        t.contains("other processes not broken down: the run has no samples/hostprocs.jsonl"),
        "{t}"
    );
}

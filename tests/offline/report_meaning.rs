//! The report's reading aids: "What this means" (its commands chosen from the run's state, each
//! a command the CLI parses), the glossary (every table header explained), the claims'
//! sentences on report.html, the plots' markers and core ceilings, the narrow layout's CSS.
use crate::report_support::{copy_dir, copy_run, report_of};
use clap::Parser;
use perflab::analyze::Report;
use perflab::cli::Cli;
use perflab::report::{content, glossary, meaning, plots};
use perflab::rundir::Manifest;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The recorded exp1 run (tests/fixtures/verify/exp1): its report and manifest.
fn exp1() -> (Report, Manifest) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_run("exp1", tmp.path());
    let r =
        perflab::rundir::report::parse(&std::fs::read_to_string(dir.join("report.json")).unwrap())
            .unwrap();
    (r, perflab::rundir::read_manifest(&dir).unwrap())
}

fn commands(m: &meaning::Meaning) -> Vec<String> {
    m.next.iter().map(|n| n.command.clone()).collect()
}

/// Every suggested command parses with the real CLI, and its `--set` overrides apply to the
/// run's experiment.
fn assert_real(m: &meaning::Meaning, man: &Manifest) {
    assert!(!m.next.is_empty());
    for n in &m.next {
        let words: Vec<&str> = n.command.split_whitespace().collect();
        assert_eq!(words[0], "perflab", "{}", n.command);
        if let Err(e) = Cli::try_parse_from(&words) {
            panic!("`{}` does not parse: {e}", n.command);
        }
        let sets: Vec<String> = words
            .windows(2)
            .filter(|w| w[0] == "--set")
            .map(|w| w[1].to_string())
            .collect();
        if let Err(e) = perflab::experiment::overrides::apply(&man.experiment, &sets) {
            panic!("`{}`: the overrides do not apply: {e:?}", n.command);
        }
    }
}

#[test]
fn a_knee_on_a_first_round_suggests_rounds_verify_and_compare() {
    let (r, m) = exp1();
    let x = meaning::meaning(&r, Some(&m));
    assert!(x.knee.starts_with("knee here: 210 rps"), "{}", x.knee);
    assert!(x.knee.contains("the article: "), "{}", x.knee);
    let cpus = m.host.online_cpu_count;
    assert!(
        x.differ.contains(&format!("{cpus} CPUs")) && x.differ.contains("no --fit"),
        "{}",
        x.differ
    );
    // The app box's CPU per request over the passing steps against the article's under load
    // (issue 41: this host's knee is twice the article's because a request costs half).
    let ours: Vec<f64> = r
        .steps
        .iter()
        .filter(|s| s.verdict == perflab::analyze::model::Verdict::Pass)
        .filter_map(|s| s.ms_cpu_per_ok)
        .collect();
    let (lo, hi) = (
        ours.iter().copied().fold(f64::MAX, f64::min),
        ours.iter().copied().fold(f64::MIN, f64::max),
    );
    assert!(ours.len() >= 2 && hi - lo > 0.05, "{ours:?}");
    let want = format!(
        "CPU per request {lo:.1}-{hi:.1} ms on /api/db (app box, passing steps) against the article's 8.5-12.0 ms"
    );
    assert!(x.differ.contains(&want), "{}\nwant: {want}", x.differ);
    let c = commands(&x);
    assert!(
        c.contains(&"perflab run exp1 --rounds 3".to_string()),
        "{c:?}"
    );
    assert!(c.contains(&"perflab verify exp1".to_string()), "{c:?}");
    assert!(c.iter().any(|c| c.starts_with("perflab compare exp1 --a ")));
    assert!(!c.iter().any(|c| c.contains("load.steps")), "{c:?}");
    assert_real(&x, &m);
    // At most 8 lines in report.txt.
    assert!(x.block().body_text().lines().count() <= 8);
}

#[test]
fn no_knee_suggests_fit_and_higher_steps_and_a_later_round_no_rounds() {
    let (mut r, mut m) = exp1();
    r.knee = None;
    m.round = 2;
    // Every planned step measured (the recorded run stopped at its knee, 210).
    m.experiment.load.steps = r.steps.iter().map(|s| s.target).collect();
    // The recorded manifest predates exp1's fit rules: no --fit to suggest.
    let c = commands(&meaning::meaning(&r, Some(&m)));
    assert!(
        c[0].starts_with("perflab run exp1 --set load.steps="),
        "{c:?}"
    );
    let cat = perflab::experiment::catalog::Catalog::load(
        &root().join("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    m.experiment.fit = cat.expand("exp1").unwrap()[0].fit.clone();
    assert!(m.experiment.fit.is_some());
    let x = meaning::meaning(&r, Some(&m));
    assert!(x.knee.starts_with("no knee here"), "{}", x.knee);
    let c = commands(&x);
    assert_eq!(c[0], "perflab run exp1 --fit", "{c:?}");
    assert_eq!(
        c[1], "perflab run exp1 --set load.steps=60,90,120,150,180,210,265,315",
        "{c:?}"
    );
    assert!(!c.iter().any(|c| c.contains("--rounds")), "{c:?}");
    assert_real(&x, &m);
    // Fitted already: only the higher steps.
    r.fit = fit_of(&m);
    let c = commands(&meaning::meaning(&r, Some(&m)));
    assert!(!c.iter().any(|c| c.ends_with("--fit")), "{c:?}");
    assert!(meaning::meaning(&r, Some(&m)).differ.contains("(--fit)"));
}

/// A fit record of the run (`--fit`): a calibration, no rule, the manifest's plan as published.
fn fit_of(m: &Manifest) -> Option<perflab::analyze::fit::FitRecord> {
    let calibration = serde_json::json!({"rate": 60, "hold_s": 10, "ok_per_s": 60.0,
        "w_ms": 20.0, "p95_ms": 40.0, "app_ms": 5.0, "db_ms": 1.0, "pass": true, "why": "ok"});
    serde_json::from_value(
        serde_json::json!({"calibration": calibration, "quantities": {},
        "rules": [], "article_plan": m.plan, "restacked": false}),
    )
    .unwrap()
}

#[test]
fn a_run_stopped_early_suggests_the_rerun_and_a_shared_host_noise_check() {
    let (mut r, m) = exp1();
    r.knee = None;
    r.steps.truncate(3);
    let x = meaning::meaning(&r, Some(&m));
    assert_eq!(x.next[0].command, "perflab run exp1");
    assert!(
        x.next[0].why.contains("3 of its 8 steps"),
        "{}",
        x.next[0].why
    );
    assert!(!commands(&x).iter().any(|c| c.contains("noise-check")));
    // The host shared during the steps (the 2a-shared fixture's host block): noise-check.
    let shared = shared_2a();
    r.checks.host_share = shared.checks.host_share.clone();
    let x = meaning::meaning(&r, Some(&m));
    assert!(meaning::noisy(&r));
    assert!(commands(&x).contains(&"perflab noise-check".to_string()));
    assert!(
        x.differ.contains("other processes 1.71 cores"),
        "{}",
        x.differ
    );
    assert_real(&x, &m);
}

/// The 2a run recorded on a shared host, analysed from its files.
fn shared_2a() -> Report {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("2a/20261201T000000Z-r1");
    copy_dir(&root().join("tests/fixtures/hostcpu/2a-shared"), &dst);
    perflab::report::analyse_run_dir(&dst).unwrap()
}

#[test]
fn without_a_manifest_the_block_says_so_and_names_no_experiment() {
    let r = report_of("stepped-open", |_| {});
    let x = meaning::meaning(&r, None);
    assert!(x.knee.contains("unknown (no run manifest)"), "{}", x.knee);
    assert!(x.next.iter().all(|n| n.command == "perflab noise-check"));
    let text = perflab::report::text::render(&r, None);
    let first = text.lines().nth(2).unwrap();
    assert_eq!(first, "## What this means", "{text}");
}

/// The headers of every table of every report the fixtures make.
fn fixture_headers() -> Vec<String> {
    let mut reports: Vec<Report> = [
        "stepped-open",
        "stepped-abort",
        "stepped-errors",
        "breakpoint-closed",
        "breakpoint-open-drops",
    ]
    .iter()
    .map(|n| report_of(n, |p| p.think_time_s = Some(0.05)))
    .collect();
    for d in std::fs::read_dir(root().join("tests/fixtures/verify")).unwrap() {
        for run in std::fs::read_dir(d.unwrap().path()).unwrap().flatten() {
            let j = run.path().join("report.json");
            if let Ok(t) = std::fs::read_to_string(j) {
                reports.push(perflab::rundir::report::parse(&t).unwrap());
            }
        }
    }
    let t = std::fs::read_to_string(root().join("tests/fixtures/hostcpu/exp1/report.json"));
    reports.push(perflab::rundir::report::parse(&t.unwrap()).unwrap());
    reports.push(shared_2a());
    reports
        .iter()
        .flat_map(|r| content::blocks(r, None))
        .filter(|b| b.title != "Glossary")
        .flat_map(|b| b.table.map(|t| t.headers).unwrap_or_default())
        .collect()
}

/// The header lists written in the report's content code (`Table::new([...])`): the tables the
/// fixtures do not reach (refine, omission, access logs) too.
fn source_headers() -> Vec<String> {
    let dir = root().join("src/report");
    let mut files = vec![dir.join("content.rs")];
    files.extend(
        std::fs::read_dir(dir.join("content"))
            .unwrap()
            .flatten()
            .map(|e| e.path()),
    );
    let mut out = Vec::new();
    for f in files {
        let src = std::fs::read_to_string(f).unwrap();
        for (at, _) in src.match_indices("Table::new([") {
            let list = &src[at..at + src[at..].find("])").unwrap()];
            out.extend(list.split('"').skip(1).step_by(2).map(String::from));
        }
    }
    assert!(out.len() > 40, "{out:?}");
    out
}

#[test]
fn every_table_header_has_a_glossary_entry() {
    let mut missing: Vec<String> = fixture_headers()
        .into_iter()
        .chain(source_headers())
        .filter(|h| glossary::lookup(h).is_none())
        .collect();
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "no glossary entry for {missing:?}");
}

#[test]
fn the_glossary_closes_text_and_markdown_once_with_the_terms_used() {
    let (r, m) = exp1();
    let text = perflab::report::text::render(&r, Some(&m));
    let md = perflab::report::markdown::render(&r, Some(&m), &[]);
    for doc in [&text, &md] {
        assert_eq!(doc.matches("## Glossary").count(), 1);
        let g = &doc[doc.find("## Glossary").unwrap()..];
        for term in [
            "knee",
            "msCPU/ok",
            "psi%",
            "p50/p95/p99",
            "ok/s",
            "W=Lmax/λ",
        ] {
            assert!(g.contains(term), "{term} not in the glossary:\n{g}");
        }
    }
    // A term the report never uses is not listed (exp1 is PHP: no event-loop delay).
    let g = &text[text.find("## Glossary").unwrap()..];
    assert!(g.contains("\nELU ") && !g.contains("\nELD "), "{g}");
}

#[test]
fn report_html_explains_headers_shows_claim_sentences_and_the_block() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_run("exp1", tmp.path());
    let page = std::fs::read_to_string(perflab::html::rerender_html(&dir).unwrap()).unwrap();
    let m = perflab::rundir::read_manifest(&dir).unwrap();
    let esc = perflab::html::report_page::esc;
    // Tooltips on the headers, escaped.
    let p95 = glossary::lookup("p95").unwrap();
    assert!(page.contains(&format!(
        "<th class=\"r\" title=\"{}: {}\">p95</th>",
        esc(p95.term),
        esc(p95.text)
    )));
    assert!(
        page.contains("title=\"&lt;role&gt;%: "),
        "role columns explained"
    );
    // Each claim's sentence beside its id.
    for c in &m.experiment.expect {
        assert!(
            page.contains(&format!(
                "<td class=\"l\">{}</td><td class=\"l\">{}</td>",
                esc(&c.name),
                esc(&c.claim)
            )),
            "claim {} without its sentence",
            c.name
        );
    }
    // What this means: before the verdict, its commands as code.
    let (a, b) = (
        page.find("id=\"meaning\"").unwrap(),
        page.find("id=\"verdict\"").unwrap(),
    );
    assert!(a < b);
    assert!(page.contains("<li><code>perflab verify exp1</code> "));
    assert!(page.contains("id=\"glossary\""));
}

#[test]
fn step_plots_mark_the_steps_without_lines_and_the_cpu_plot_draws_ceilings() {
    let r = report_of("stepped-errors", |_| {});
    let svg = plots::steps_svg(&r).unwrap();
    // The series' colours (blue, orange, purple, green, brown) draw no polyline: markers only.
    for c in ["#1F77B4", "#FF7F0E", "#9467BD", "#2CA02C", "#8C564B"] {
        assert!(
            !svg.contains(&format!(
                "<polyline fill=\"none\" opacity=\"1\" stroke=\"{c}\""
            )),
            "a line in {c}"
        );
    }
    assert!(
        svg.matches("<circle").count() >= 3 * r.steps.len(),
        "dots per step"
    );
    assert!(
        svg.matches("<polygon").count() >= 3 * r.steps.len(),
        "triangles per step"
    );
    // The CPU panel: a red line at each role's cores (app 2 CPUs, pg 1).
    let mut shared = shared_2a();
    shared.params.app_cpus = vec![1, 2];
    let svg = plots::timeline_svg(&shared).unwrap();
    assert!(svg.contains("app ceiling: 2 cores"), "app ceiling");
    assert!(svg.contains("pg, k6 ceiling: 1 core"), "pg/k6 ceiling");
    assert!(svg.contains("stroke=\"#D62728\""), "the ceilings' red line");
    let roles: Vec<String> = ["app", "pg"].iter().map(|s| s.to_string()).collect();
    let c = plots::core_ceilings(&shared.params, &roles);
    assert_eq!(c[0].0, 200.0);
    assert_eq!(c[1].0, 100.0);
}

#[test]
fn the_narrow_layout_scales_plots_and_scrolls_the_steps_table() {
    let (r, m) = exp1();
    let x = perflab::html::report::Extras {
        manifest: Some(&m),
        claims: Vec::new(),
        plots: Vec::new(),
    };
    let page = perflab::html::report::render(&r, &x);
    assert!(page.contains("figure.plot svg,figure.hist svg{display:block;width:100%;height:auto}"));
    let narrow = &page[page
        .find("@media (max-width:420px)")
        .expect("a 360 px rule")..];
    assert!(narrow.contains("#steps .scroll{max-width:calc(100vw - 16px);overflow-x:scroll"));
    // at 360 px a 960 px plot scaled to the width has 5 px labels: it keeps 640 px and scrolls
    assert!(narrow.contains("figure.plot{overflow-x:auto;"));
    assert!(narrow.contains("figure.plot svg{width:640px;max-width:none}"));
    assert!(page.contains("<section id=\"steps\">\n<h2>Steps</h2>\n<div class=\"scroll\"><table>"));
}

/// A knee after a transient stall: the step right under the knee passed although an earlier
/// one failed; the block says both, as the verdict does, instead of only the earlier one.
#[test]
fn a_knee_after_a_transient_stall_names_both_passing_steps() {
    let (mut r, m) = exp1();
    let plain = meaning::meaning(&r, Some(&m)).knee;
    assert!(plain.contains("(last passing "), "{plain}");
    (r.knee, r.last_passing, r.passing_below_knee) = (Some(240), Some(150), Some(210));
    let k = meaning::meaning(&r, Some(&m)).knee;
    assert!(
        k.starts_with(
            "knee here: 240 rps (every step passed up to 150 rps; 210 rps passed after a transient stall)"
        ),
        "{k}"
    );
}

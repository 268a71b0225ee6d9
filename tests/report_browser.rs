//! report.html and out/index.html in a real browser: headless Chromium (Debian's `chromium`,
//! installed by scripts/prereqs.sh) loads pages built from recorded runs of two suites. It
//! checks that nothing but the file itself is requested (Chromium's net log), that the console
//! stays empty, that the knee sentence and the step table are in the rendered DOM, that the
//! index's suite filter (read from `#suite=`) hides the other suite's rows, that the compare
//! page the index links (recorded rounds of 2a, then 2a with 1,000 µs burnt per request) shows
//! its verdict, and that the screenshots at 360 and 1280 px are not blank.
mod browser_support;
mod report_support;
use browser_support::{chromium, load, page_requests, png_colours, screenshot};
use report_support::{copy_run, set_suite};
use std::path::{Path, PathBuf};

#[test]
fn report_and_index_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let a = copy_run("exp1", &out);
    let b = copy_run("1b", &out);
    set_suite(&b, "forky");
    let report = perflab::html::rerender_html(&a).unwrap();
    perflab::html::rerender_html(&b).unwrap();
    let index = perflab::html::index::write(&out).unwrap().path;

    let dom = load(&report, "", tmp.path());
    assert!(dom.contains("<p class=\"lead knee\">knee 210 rps: p95 1,181 ms &gt; 200"));
    let steps = &dom[dom.find("<section id=\"steps\">").expect("step table")..];
    assert!(
        steps.contains("<td class=\"l\">r0060</td>")
            && steps.contains("<td class=\"l fail\">r0210</td>")
    );
    assert!(steps.contains("fail [1,3]"));

    let all = load(&index, "", tmp.path());
    assert_eq!(all.matches("<tr data-suite=").count(), 2);
    assert!(
        !all.contains(" hidden=\"\"><td"),
        "rows hidden with no filter"
    );
    let forky = load(&index, "#suite=forky", tmp.path());
    let row = |suite: &str| {
        let at = forky
            .find(&format!("<tr data-suite=\"{suite}\""))
            .unwrap_or_else(|| panic!("{suite} row"));
        forky[at..].split('>').next().unwrap().to_string()
    };
    assert!(row("trixie").contains("hidden"), "{}", row("trixie"));
    assert!(!row("forky").contains("hidden"), "{}", row("forky"));
    assert!(forky.contains("<span id=\"shown\">1</span>"));

    for w in [360, 1280] {
        let png = screenshot(&report, w, tmp.path());
        let n = png_colours(&png);
        assert!(n > 16, "screenshot at {w} px has {n} colours: blank?");
        if let Some(keep) = std::env::var_os("PERFLAB_KEEP_SCREENSHOTS") {
            std::fs::copy(&png, Path::new(&keep).join(format!("report-{w}.png"))).unwrap();
        }
    }
}

/// Copy the recorded rounds of `batch` (tests/fixtures/compare) into `out`.
fn copy_batch(batch: &str, out: &Path) {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compare")
        .join(batch);
    for exp in std::fs::read_dir(&src).unwrap().flatten() {
        for run in std::fs::read_dir(exp.path()).unwrap().flatten() {
            let dst = out.join(exp.file_name()).join(run.file_name());
            std::fs::create_dir_all(&dst).unwrap();
            for f in ["manifest.json", "report.json", "status.json"] {
                std::fs::copy(run.path().join(f), dst.join(f)).unwrap();
            }
        }
    }
}

#[test]
fn compare_page_from_the_index_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    copy_batch("2a-base", &out);
    copy_batch("2a-burn", &out);
    let index = perflab::html::index::write(&out).unwrap().path;
    let all = load(&index, "", tmp.path());
    let at = all
        .find("\">compare</a>")
        .expect("a compare link in the index");
    let link = all[..at].rsplit("href=\"").next().unwrap();
    let href = link.split('"').next().unwrap().to_string();
    assert!(href.starts_with("compare/2a/"), "{href}");
    let page = out.join(&href);
    let dom = load(&page, "", tmp.path());
    assert!(
        dom.contains("<p class=\"lead\">Verdict: REGRESSED</p>"),
        "no verdict in {}",
        page.display()
    );
    assert!(dom.contains("INJECTED, not a clean run"));
    assert!(dom.contains("<section id=\"rounds\">"));
    for w in [360, 1920] {
        let n = png_colours(&screenshot(&page, w, tmp.path()));
        assert!(n > 16, "compare page at {w} px has {n} colours: blank?");
    }
}

/// The detectors themselves: a page that fetches an image and logs an error is caught.
#[test]
fn chromium_checks_catch_a_fetch_and_a_console_message() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("bad.html");
    std::fs::write(
        &page,
        "<html><body><img src=\"http://example.invalid/x.png\"><script>console.error('boom')</script></body></html>",
    )
    .unwrap();
    let netlog = tmp.path().join("netlog.json");
    let (_, err) = chromium(
        &format!("file://{}", page.display()),
        &["--dump-dom", &format!("--log-net-log={}", netlog.display())],
        &tmp.path().join("profile"),
    );
    assert!(err.contains(":CONSOLE") && err.contains("boom"), "{err}");
    assert_eq!(page_requests(&netlog), ["http://example.invalid/x.png"]);
}

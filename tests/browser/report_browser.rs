//! report.html and out/index.html in a real browser: headless Chromium (Debian's `chromium`,
//! installed by scripts/prereqs.sh) loads pages built from recorded runs of two suites. It
//! checks that nothing but the file itself is requested (Chromium's net log), that the console
//! stays empty, that the knee sentence and the step table are in the rendered DOM, that the
//! index's suite filter (read from `#suite=`) hides the other suite's rows, that the compare
//! page the index links (recorded rounds of 2a, then 2a with 1,000 µs burnt per request) shows
//! its verdict, and that the screenshots at 360 and 1280 px are not blank. Folders named to
//! inject script (a `javascript:` folder, quotes, markup, `%`, `#`, `?`, spaces, unicode) give
//! an index and a compare page whose every link, clicked, stays a relative file link and runs
//! nothing.
use crate::browser_support;
use crate::report_support;
use browser_support::{chromium, inspect_links, load, page_requests, png_colours, screenshot};
use report_support::{copy_run, set_suite};
use std::path::{Path, PathBuf};

#[test]
fn report_and_index_in_headless_chromium() {
    let _serial = crate::serial();
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
    let _serial = crate::serial();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    copy_batch("2a-base", &out);
    copy_batch("2a-burn", &out);
    let index = perflab::html::index::write(&out).unwrap().path;
    let all = load(&index, "", tmp.path());
    let at = all
        .find("class=\"cv cv-")
        .expect("a compare link in the index");
    let link = all[at..].split("href=\"").nth(1).unwrap();
    let href = link.split('"').next().unwrap().to_string();
    assert!(href.starts_with("./compare/2a/"), "{href}");
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
    let _serial = crate::serial();
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

/// Sets `data-pwned` on the page's body: what an injected script would do.
const PWN: &str = "document.body.setAttribute('data-pwned','yes')";

/// Folder names a hostile user of a shared out/ could pick (no `/`: a name cannot hold one).
fn hostile_names() -> Vec<String> {
    vec![
        format!("javascript:{PWN}%2F%2F"),
        "exp\"quoted'".into(),
        format!("<img src=x onerror={PWN}>"),
        "100% done".into(),
        "a#frag".into(),
        "q?x=1&y=2".into(),
        "with space".into(),
        "日本語-ü".into(),
    ]
}

/// The path a `file://` URL names (percent-decoded).
fn url_path(url: &str) -> PathBuf {
    let b = url.strip_prefix("file://").unwrap_or(url).as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (b[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    PathBuf::from(String::from_utf8(out).unwrap())
}

/// Links clicked on `page` ran nothing, injected nothing, and each names a file that exists.
fn assert_links_safe(page: &Path, tmp: &Path) -> Vec<String> {
    let r = inspect_links(page, tmp);
    assert_eq!(r.pwned, None, "a link ran script: {:?}", r.hrefs);
    assert!(
        r.handlers.is_empty(),
        "injected attributes: {:?}",
        r.handlers
    );
    assert!(
        r.outside.is_empty(),
        "links not relative file links: {:?}",
        r.outside
    );
    for t in ["img", "iframe", "object", "embed", "base", "link", "form"] {
        assert!(!r.tags.contains_key(t), "injected <{t}>: {:?}", r.tags);
    }
    assert!(
        r.tags.get("script").copied().unwrap_or(0) <= 1,
        "{:?}",
        r.tags
    );
    for (h, u) in r.hrefs.iter().zip(&r.resolved) {
        assert!(h.starts_with("./"), "{h}");
        assert!(url_path(u).is_file(), "{h} resolves to {u}, no such file");
    }
    r.hrefs
}

#[test]
fn index_over_hostile_folder_names_links_nothing_that_runs() {
    let _serial = crate::serial();
    let tmp = tempfile::tempdir().unwrap();
    let (out, stage) = (tmp.path().join("out"), tmp.path().join("stage"));
    let place = |exp: &str, run: &str| {
        let src = copy_run("exp1", &stage);
        let dst = out.join(exp).join(run);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::rename(&src, &dst).unwrap();
        // A report.html in every folder: what an unchecked index would link.
        perflab::html::rerender_html(&dst).unwrap();
    };
    let run = "20261130T035648Z-r1";
    for name in hostile_names() {
        place(&name, run);
    }
    place("exp1", run);
    let bad_run = format!("{run}-x\" onmouseover=\"{PWN}\" b=\"<img src=x onerror={PWN}>");
    place("exp1", &bad_run);
    let index = perflab::html::index::write(&out).unwrap();
    assert_eq!(index.runs, hostile_names().len() + 2);

    let hrefs = assert_links_safe(&index.path, tmp.path());
    assert_eq!(
        hrefs,
        [format!("./exp1/{run}/report.html")],
        "only the run folder is linked"
    );
    // The other folders are listed, as text.
    let dom = load(&index.path, "", tmp.path());
    for name in [
        "with space",
        "日本語-ü",
        "a#frag",
        "100% done",
        "q?x=1&amp;y=2",
    ] {
        assert!(dom.contains(&format!(">{name} <span")), "{name} not listed");
    }
    assert!(dom.contains(&format!(">javascript:{PWN}%2F%2F <span")));
    assert!(
        dom.contains(&format!("{run}-x\" onmouseover=")),
        "hostile run not listed"
    );
}

#[test]
fn compare_page_links_through_hostile_folder_names_are_encoded() {
    let _serial = crate::serial();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("runs #1 \"50%\" <b>?日本").join("out");
    copy_batch("2a-base", &out);
    copy_batch("2a-burn", &out);
    let side = |start: &str| -> String {
        let mut runs: Vec<PathBuf> = std::fs::read_dir(out.join("2a"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        runs.sort();
        for r in &runs {
            perflab::html::rerender_html(r).unwrap();
        }
        let pick: Vec<String> = runs
            .iter()
            .filter(|r| r.file_name().unwrap().to_string_lossy().as_ref() >= start)
            .take(3)
            .map(|r| r.display().to_string())
            .collect();
        pick.join(",")
    };
    let (a, b) = (side("20261130T222220Z"), side("20261130T222517Z"));
    let page = tmp.path().join("pages").join("cmp.html");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["compare", &a, &b, "--html"])
        .arg(&page)
        .output()
        .unwrap();
    // a verdict's exit code (0 same/improved, 1 regressed: this burn, 3 inconclusive), not 2
    assert!(
        matches!(st.status.code(), Some(0 | 1 | 3)),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let hrefs = assert_links_safe(&page, tmp.path());
    assert_eq!(hrefs.len(), 6, "{hrefs:?}");
    for h in &hrefs {
        assert!(
            h.starts_with("./../runs%20%231%20%2250%25%22%20%3Cb%3E%3F%E6%97%A5%E6%9C%AC/out/2a/"),
            "{h}"
        );
    }
}

/// The link inspection itself: a `javascript:` link that sets `data-pwned` when clicked and an
/// injected event handler are caught.
#[test]
fn link_inspection_catches_a_script_link_and_an_injected_handler() {
    let _serial = crate::serial();
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("bad.html");
    std::fs::write(
        &page,
        format!(
            "<html><body><a href=\"javascript:{PWN}\">x</a> <a href=\"ok.html\">ok</a>\
             <b onclick=\"void 0\">b</b></body></html>"
        ),
    )
    .unwrap();
    let r = inspect_links(&page, tmp.path());
    assert_eq!(r.pwned.as_deref(), Some("yes"));
    assert_eq!(
        r.outside,
        [format!("javascript:{PWN}"), "ok.html".to_string()]
    );
    assert_eq!(r.handlers, ["b onclick"]);
}

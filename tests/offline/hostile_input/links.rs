//! The table's cases of links, terminal text, Markdown and output paths: folders under out/
//! named to inject script, data carrying terminal escapes or HTML, and output paths through a
//! symbolic link or into a run directory. Each case builds its run directories from the
//! recorded fixtures in its own directory.
use super::{Case, case, csv};
use std::path::Path;

/// A folder name that, linked as it is, runs script when clicked.
macro_rules! js {
    () => {
        "javascript:document.body.setAttribute('data-pwned','yes')%2F%2F"
    };
}
/// The same without a comma (compare splits its arguments at commas).
macro_rules! js_no_comma {
    () => {
        "javascript:document.body.dataset.pwned='yes'%2F%2F"
    };
}
/// The recorded runs of 2a (tests/fixtures/compare): a clean one and one burning 1,000 µs.
macro_rules! run_a {
    () => {
        "20261130T222220Z-r1"
    };
}
macro_rules! run_b {
    () => {
        "20261130T222517Z-r1"
    };
}
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
/// The recorded exp1 run of tests/fixtures/verify.
const EXP1_RUN: &str = "20261130T035648Z-r1";
/// Terminal escapes: set the window title, clear the screen.
const TITLE_CLEAR: &str = "\u{1b}]0;PWNED\u{7}\u{1b}[2J";

/// Copy a recorded run's manifest, report and status from `src` (under tests/fixtures) to `dst`.
fn copy_run(src: &str, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for f in ["manifest.json", "report.json", "status.json"] {
        std::fs::copy(Path::new(FIXTURES).join(src).join(f), dst.join(f)).unwrap();
    }
}

/// exp1's recorded run at `out/<exp>/<run>`, with a report.html (what the index links).
fn exp1_at(dir: &Path, exp: &str, run: &str) {
    let d = dir.join("out").join(exp).join(run);
    copy_run(&format!("verify/exp1/{EXP1_RUN}"), &d);
    std::fs::write(d.join("report.html"), "<p>report</p>").unwrap();
}

/// 2a's first clean and first burning rounds at `<parent>/<run>`.
pub(super) fn two_runs(dir: &Path, parent: &str) {
    copy_run(
        concat!("compare/2a-base/2a/", run_a!()),
        &dir.join(parent).join(run_a!()),
    );
    copy_run(
        concat!("compare/2a-burn/2a/", run_b!()),
        &dir.join(parent).join(run_b!()),
    );
}

/// Every `href` of `page`: relative (`./`), percent-encoded, no scheme.
fn links_safe(page: &Path) -> Result<(), String> {
    let html = std::fs::read_to_string(page).map_err(|e| format!("{}: {e}", page.display()))?;
    let ok = |b: u8| b.is_ascii_alphanumeric() || b"-._~%/".contains(&b);
    for h in html
        .split("href=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap_or(""))
    {
        if !h.starts_with("./") || !h.bytes().all(ok) {
            return Err(format!("{}: unsafe link {h:?}", page.display()));
        }
    }
    Ok(())
}

fn index_links_safe(dir: &Path) -> Result<(), String> {
    links_safe(&dir.join("out/index.html"))
}

fn setup_js_folder(dir: &Path) {
    exp1_at(dir, js!(), EXP1_RUN);
}

/// The javascript: folder is listed, as text, and linked nowhere.
fn js_folder_is_text(dir: &Path) -> Result<(), String> {
    index_links_safe(dir)?;
    let html = std::fs::read_to_string(dir.join("out/index.html")).unwrap();
    let listed = "javascript:document.body.setAttribute(&#39;data-pwned&#39;,&#39;yes&#39;)%2F%2F";
    match html.contains(listed) {
        true => Ok(()),
        false => Err("the javascript: folder is not listed".into()),
    }
}

fn setup_odd_folders(dir: &Path) {
    for exp in [
        "exp\"q'",
        "<b>x",
        "100% done",
        "a#b",
        "q?x=1&y",
        "with space",
        "日本語",
    ] {
        exp1_at(dir, exp, EXP1_RUN);
    }
    exp1_at(dir, "exp1", EXP1_RUN);
    let run = format!("{EXP1_RUN}-x\" onmouseover=\"alert(1)\" b=\"<img src=x onerror=alert(2)>");
    exp1_at(dir, "exp1", &run);
}

/// Only the one run whose folders are an experiment id and a run name is linked.
fn one_link(dir: &Path) -> Result<(), String> {
    index_links_safe(dir)?;
    let html = std::fs::read_to_string(dir.join("out/index.html")).unwrap();
    match html.matches("<a href=").count() {
        1 if html.contains(&format!("<a href=\"./exp1/{EXP1_RUN}/report.html\">")) => Ok(()),
        n => Err(format!("{n} links, want the one to exp1/{EXP1_RUN}")),
    }
}

fn setup_js_runs(dir: &Path) {
    two_runs(dir, js_no_comma!());
}

fn page_links_safe(dir: &Path) -> Result<(), String> {
    links_safe(&dir.join("cmp.html"))
}

fn setup_cursor_override(dir: &Path) {
    two_runs(dir, "2a");
    let p = dir.join(concat!("2a/", run_b!(), "/manifest.json"));
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    m["overrides"] = serde_json::json!([
        "stack.node.burn_us=1000\u{1b}[12A\u{1b}[2K\rverdict: SAME (no change)\u{1b}[12B"
    ]);
    std::fs::write(&p, m.to_string()).unwrap();
}

fn setup_log_markup(dir: &Path) {
    let (k6, logs) = (dir.join("r/k6"), dir.join("r/logs"));
    std::fs::create_dir_all(&k6).unwrap();
    std::fs::create_dir_all(&logs).unwrap();
    let src = Path::new(FIXTURES).join("k6");
    std::fs::copy(src.join("stepped-open.csv.gz"), k6.join("requests.csv.gz")).unwrap();
    std::fs::copy(
        src.join("stepped-open.summary.json"),
        k6.join("summary.json"),
    )
    .unwrap();
    let line = format!(
        "[2026-10-30 11:20:05] production.ERROR: <script>alert(1)</script> \
         <img src=x onerror=alert(2)> [x](javascript:alert(3)) {TITLE_CLEAR}\n"
    );
    std::fs::write(logs.join("app.log"), line).unwrap();
}

/// report.md shows the log line as text (no HTML, no link), report.txt without escapes.
fn reports_plain(dir: &Path) -> Result<(), String> {
    let md = std::fs::read_to_string(dir.join("r/report.md")).map_err(|e| e.to_string())?;
    let txt = std::fs::read_to_string(dir.join("r/report.txt")).map_err(|e| e.to_string())?;
    for bad in ["<script", "<img", "[x](javascript:", "\u{1b}"] {
        if md.contains(bad) {
            return Err(format!("report.md holds {bad:?}"));
        }
    }
    if !md.contains("&lt;script>alert(N)&lt;/script>") {
        return Err("report.md lacks the log line, as text".into());
    }
    match txt.contains('\u{1b}') {
        true => Err("report.txt holds ESC".into()),
        false => Ok(()),
    }
}

fn setup_compare_link(dir: &Path) {
    two_runs(dir, "out/2a");
    copy_run(
        "compare/2a-base/2a/20261130T222301Z-r2",
        &dir.join("out/2a/20261130T222301Z-r2"),
    );
    copy_run(
        "compare/2a-burn/2a/20261130T222600Z-r2",
        &dir.join("out/2a/20261130T222600Z-r2"),
    );
    std::fs::create_dir(dir.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", dir.join("out/compare")).unwrap();
}

fn nothing_elsewhere(dir: &Path) -> Result<(), String> {
    match std::fs::read_dir(dir.join("elsewhere")).unwrap().count() {
        0 => Ok(()),
        n => Err(format!("{n} file(s) written through out/compare")),
    }
}

fn setup_run_link(dir: &Path) {
    std::fs::create_dir_all(dir.join("o")).unwrap();
    std::fs::create_dir(dir.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", dir.join("o/1a")).unwrap();
}

fn manifest_intact(dir: &Path) -> Result<(), String> {
    let p = dir.join(concat!("2a/", run_a!(), "/manifest.json"));
    let text = std::fs::read_to_string(&p).unwrap();
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(_) => Ok(()),
        Err(_) => Err(format!("{} was overwritten", p.display())),
    }
}

fn setup_page_link(dir: &Path) {
    two_runs(dir, "2a");
    std::fs::write(dir.join("victim.txt"), "keep").unwrap();
    std::os::unix::fs::symlink("victim.txt", dir.join("page.html")).unwrap();
}

fn victim_intact(dir: &Path) -> Result<(), String> {
    match std::fs::read_to_string(dir.join("victim.txt"))
        .unwrap()
        .as_str()
    {
        "keep" => Ok(()),
        _ => Err("victim.txt was written through page.html".into()),
    }
}

/// A k6 CSV whose 20 rows carry a step tag with terminal escapes.
fn escaped_tag_csv() -> Vec<u8> {
    let body = String::from_utf8(csv("")).unwrap();
    body.replace("stage=r0010", &format!("stage=r0010{TITLE_CLEAR}"))
        .into_bytes()
}

pub fn links_and_output_cases() -> Vec<Case> {
    let a = concat!("2a/", run_a!());
    let b = concat!("2a/", run_b!());
    vec![
        Case {
            setup: Some(setup_js_folder),
            after: Some(js_folder_is_text),
            ..case(
                "index: javascript: folder",
                None,
                &["index", "--out", "out"],
                0,
                &["out/index.html"],
            )
        },
        Case {
            setup: Some(setup_odd_folders),
            after: Some(one_link),
            ..case(
                "index: quotes < % # ? space unicode",
                None,
                &["index", "--out", "out"],
                0,
                &["index of 9 runs"],
            )
        },
        Case {
            setup: Some(setup_js_runs),
            after: Some(page_links_safe),
            ..case(
                "compare --html: javascript: folder",
                None,
                &[
                    "compare",
                    concat!(js_no_comma!(), "/", run_a!()),
                    concat!(js_no_comma!(), "/", run_b!()),
                    "--html",
                    "cmp.html",
                ],
                // one run a side: shown side by side, no verdict (inconclusive: exit 3)
                3,
                &["wrote cmp.html"],
            )
        },
        Case {
            lacks: vec!["\u{1b}"],
            ..case(
                "analyze: k6 tag with escapes",
                Some(("d.csv", escaped_tag_csv())),
                &["analyze", "d.csv", "--slo-ms", "100"],
                2,
                &["d.csv", "r0010\\u001b]0;PWNED\\u0007\\u001b[2J"],
            )
        },
        Case {
            setup: Some(setup_cursor_override),
            lacks: vec!["\u{1b}", "\r"],
            ..case(
                "compare: manifest value moves cursor",
                None,
                &["compare", a, b],
                3,
                &["\\u001b[12A\\u001b[2K\\u000dverdict: SAME (no change)"],
            )
        },
        Case {
            setup: Some(setup_log_markup),
            after: Some(reports_plain),
            lacks: vec!["\u{1b}"],
            ..case(
                "report: <script>, escapes in a log",
                None,
                &["report", "r"],
                0,
                &["wrote report.txt", "\\u001b]N;PWNED\\u0007"],
            )
        },
        Case {
            setup: Some(setup_compare_link),
            after: Some(nothing_elsewhere),
            ..case(
                "index: out/compare is a symlink",
                None,
                &["index", "--out", "out"],
                2,
                &[
                    "out/compare: a symbolic link (to ../elsewhere)",
                    "rm out/compare",
                ],
            )
        },
        Case {
            setup: Some(setup_run_link),
            after: Some(nothing_elsewhere),
            ..case(
                "run: out/<experiment> is a symlink",
                None,
                &["run", "1a", "--out", "o"],
                2,
                &["o/1a: a symbolic link (to ../elsewhere)", "rm o/1a"],
            )
        },
        Case {
            setup: Some(|d| two_runs(d, "2a")),
            after: Some(manifest_intact),
            ..case(
                "compare --html RUN/manifest.json",
                None,
                &[
                    "compare",
                    a,
                    b,
                    "--html",
                    concat!("2a/", run_a!(), "/manifest.json"),
                ],
                2,
                &[
                    concat!("--html 2a/", run_a!(), "/manifest.json"),
                    "holds manifest.json",
                    "outside run directories",
                ],
            )
        },
        Case {
            setup: Some(setup_page_link),
            after: Some(victim_intact),
            ..case(
                "compare --html: a symlink",
                None,
                &["compare", a, b, "--html", "page.html"],
                2,
                &["--html page.html: a symbolic link"],
            )
        },
    ]
}

//! report.html and out/index.html in a real browser: headless Chromium (Debian's `chromium`,
//! installed by scripts/prereqs.sh) loads pages built from recorded runs of two suites. It
//! checks that nothing but the file itself is requested (Chromium's net log), that the console
//! stays empty, that the knee sentence and the step table are in the rendered DOM, that the
//! index's suite filter (read from `#suite=`) hides the other suite's rows, that the compare
//! page the index links (recorded rounds of 2a, then 2a with 1,000 µs burnt per request) shows
//! its verdict, and that the screenshots at 360 and 1280 px are not blank.
mod report_support;
use report_support::{copy_run, set_suite};
use std::path::{Path, PathBuf};
use std::process::Command;

const CHROMIUM: &str = "chromium";

/// Run headless Chromium on `url` with `args`; returns (stdout, stderr). The profile is a
/// fresh temp dir; every host name resolves to nothing, so a fetch could not leave the machine.
fn chromium(url: &str, args: &[&str], profile: &Path) -> (String, String) {
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .unwrap_or_else(|e| {
            panic!("{CHROMIUM}: {e}; install Debian's chromium (scripts/prereqs.sh does)")
        });
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{CHROMIUM} {url}: {e}");
    (o, e)
}

/// The URLs the page requested (Chromium's net log: requests made for a `file://` document,
/// which carry its network isolation key; the browser's own background requests do not).
fn page_requests(netlog: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(netlog).unwrap();
    let log: serde_json::Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(','))))
        .expect("net log is JSON");
    let mut urls: Vec<String> = log["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let p = &e["params"];
            let key = p["network_isolation_key"].as_str()?;
            let url = p["url"].as_str()?;
            key.contains("file://").then(|| url.to_string())
        })
        .collect();
    urls.sort();
    urls.dedup();
    urls
}

/// No console message at all: the pages log nothing, so any line is an error or a warning
/// (Chromium writes page console messages as `CONSOLE` lines on stderr).
fn assert_no_console_message(stderr: &str, what: &str) {
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(lines.is_empty(), "{what}: console: {lines:#?}");
}

/// Load `page` (a file) and return its DOM after scripts ran; checks the net log too.
fn load(page: &Path, fragment: &str, tmp: &Path) -> String {
    let netlog = tmp.join(
        format!("netlog-{fragment}.json")
            .replace('#', "")
            .replace('=', "-"),
    );
    let url = format!("file://{}{fragment}", page.display());
    let (dom, err) = chromium(
        &url,
        &["--dump-dom", &format!("--log-net-log={}", netlog.display())],
        &tmp.join(format!("profile-{}", fragment.len())),
    );
    assert_no_console_message(&err, &url);
    let urls = page_requests(&netlog);
    let outside: Vec<&String> = urls.iter().filter(|u| !u.starts_with("file://")).collect();
    assert!(outside.is_empty(), "{url} requested {outside:?}");
    dom
}

/// Distinct colours of a PNG screenshot (8-bit RGB or RGBA, non-interlaced).
fn png_colours(path: &Path) -> usize {
    use std::io::Read;
    let b = std::fs::read(path).unwrap();
    assert_eq!(
        &b[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
    let (mut pos, mut idat) = (8, Vec::new());
    let (mut w, mut h, mut bpp) = (0usize, 0usize, 0usize);
    while pos + 8 <= b.len() {
        let len = u32::from_be_bytes(b[pos..pos + 4].try_into().unwrap()) as usize;
        let kind = &b[pos + 4..pos + 8];
        let data = &b[pos + 8..pos + 8 + len];
        match kind {
            b"IHDR" => {
                w = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                h = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                assert_eq!(data[8], 8, "8-bit channels");
                bpp = match data[9] {
                    2 => 3,
                    6 => 4,
                    t => panic!("colour type {t}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        pos += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .unwrap();
    let stride = w * bpp;
    let mut prev = vec![0u8; stride];
    let mut colours = std::collections::HashSet::new();
    for y in 0..h {
        let line = &raw[y * (stride + 1)..(y + 1) * (stride + 1)];
        let mut cur = line[1..].to_vec();
        for i in 0..stride {
            let a = if i >= bpp { cur[i - bpp] as i16 } else { 0 };
            let (up, c) = (
                prev[i] as i16,
                if i >= bpp { prev[i - bpp] as i16 } else { 0 },
            );
            let pred = match line[0] {
                0 => 0,
                1 => a,
                2 => up,
                3 => (a + up) / 2,
                4 => {
                    let p = a + up - c;
                    let (pa, pb, pc) = ((p - a).abs(), (p - up).abs(), (p - c).abs());
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        up
                    } else {
                        c
                    }
                }
                f => panic!("filter {f}"),
            };
            cur[i] = cur[i].wrapping_add(pred as u8);
        }
        for px in cur.chunks(bpp) {
            colours.insert(px[..3].to_vec());
        }
        prev = cur;
    }
    colours.len()
}

fn screenshot(page: &Path, width: u32, tmp: &Path) -> PathBuf {
    let png = tmp.join(format!("shot-{width}.png"));
    chromium(
        &format!("file://{}", page.display()),
        &[
            &format!("--window-size={width},1600"),
            &format!("--screenshot={}", png.display()),
        ],
        &tmp.join(format!("profile-shot-{width}")),
    );
    png
}

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
            && steps.contains("<td class=\"l\">r0210</td>")
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

//! Headless Chromium for the browser tests (Debian's `chromium`, installed by
//! scripts/prereqs.sh): load a page with every host name resolving to nothing, read the
//! requests it made from the net log and its console messages from stderr, dump its DOM, take
//! screenshots and count their colours.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

pub const CHROMIUM: &str = "chromium";

/// Run headless Chromium on `url` with `args`; returns (stdout, stderr). The profile is a
/// fresh temp dir; every host name resolves to nothing, so a fetch could not leave the machine.
pub fn chromium(url: &str, args: &[&str], profile: &Path) -> (String, String) {
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
pub fn page_requests(netlog: &Path) -> Vec<String> {
    requests_of_site(netlog, "file://")
}

/// The URLs requested for a document whose site (its network isolation key) contains `site`.
pub fn requests_of_site(netlog: &Path, site: &str) -> Vec<String> {
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
            key.contains(site).then(|| url.to_string())
        })
        .collect();
    urls.sort();
    urls.dedup();
    urls
}

/// No console message at all: the pages log nothing, so any line is an error or a warning
/// (Chromium writes page console messages as `CONSOLE` lines on stderr).
pub fn assert_no_console_message(stderr: &str, what: &str) {
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(lines.is_empty(), "{what}: console: {lines:#?}");
}

/// Load `page` (a file) and return its DOM after scripts ran; checks the net log too.
pub fn load(page: &Path, fragment: &str, tmp: &Path) -> String {
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
pub fn png_colours(path: &Path) -> usize {
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

pub fn screenshot(page: &Path, width: u32, tmp: &Path) -> PathBuf {
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

/// `file://` URL of the absolute `path`, each name percent-encoded (`perflab::html::href`).
pub fn file_url(path: &Path) -> String {
    let names = path
        .iter()
        .skip(1)
        .map(|n| n.to_string_lossy().into_owned());
    format!("file:///{}", &perflab::html::href(names)[2..])
}

/// What [`inspect_links`] found on a page.
#[derive(Debug)]
pub struct LinkReport {
    /// Every `<a>`'s href attribute as written.
    pub hrefs: Vec<String>,
    /// Every `<a>`'s href as the browser resolved it.
    pub resolved: Vec<String>,
    /// Links not `file:` or not starting `./`.
    pub outside: Vec<String>,
    /// `data-pwned` on the page's body after every link was clicked (a `javascript:` link ran).
    pub pwned: Option<String>,
    /// `tag attribute` of every event-handler (`on*`) or `data-pwned` attribute in the page.
    pub handlers: Vec<String>,
    /// How many elements of each tag the page has.
    pub tags: std::collections::BTreeMap<String, u64>,
}

const LINK_HARNESS: &str = r#"<!DOCTYPE html><html><body><pre id="result">pending</pre>
<iframe id="f" src="PAGE" width="1000" height="800"></iframe>
<script>
var f = document.getElementById('f');
f.addEventListener('load', function () {
  var r = {hrefs: [], resolved: [], outside: [], pwned: null, handlers: [], tags: {}};
  var d = f.contentDocument;
  // Links to files stay put (the page is inspected, not left); any other link is followed.
  d.addEventListener('click', function (e) {
    var a = e.target.closest('a');
    if (a && a.protocol === 'file:') e.preventDefault();
  }, true);
  d.querySelectorAll('*').forEach(function (el) {
    var t = el.tagName.toLowerCase();
    r.tags[t] = (r.tags[t] || 0) + 1;
    for (var i = 0; i < el.attributes.length; i++) {
      var n = el.attributes[i].name;
      if (/^on/i.test(n) || n === 'data-pwned') r.handlers.push(t + ' ' + n);
    }
  });
  d.querySelectorAll('a').forEach(function (a) {
    var raw = a.getAttribute('href') || '';
    r.hrefs.push(raw);
    r.resolved.push(a.href);
    if (a.protocol !== 'file:' || raw.indexOf('./') !== 0) r.outside.push(raw);
    a.click();
  });
  setTimeout(function () {
    r.pwned = f.contentDocument.body.getAttribute('data-pwned');
    document.getElementById('result').textContent = 'RESULT' + JSON.stringify(r) + 'END';
  }, 500);
});
</script></body></html>
"#;

/// Load `page` in a frame of a harness page, list its elements' tags and event-handler
/// attributes, then click every link: links to files are stopped (and their targets kept),
/// any other (`javascript:`, `http:`) is followed, and `data-pwned` on the body afterwards
/// says a script ran. File URLs may read each other here (`--allow-file-access-from-files`).
pub fn inspect_links(page: &Path, tmp: &Path) -> LinkReport {
    let harness = tmp.join("link-harness.html");
    std::fs::write(&harness, LINK_HARNESS.replace("PAGE", &file_url(page))).unwrap();
    let (dom, err) = chromium(
        &file_url(&harness),
        &["--dump-dom", "--allow-file-access-from-files"],
        &tmp.join("profile-links"),
    );
    assert_no_console_message(&err, &page.display().to_string());
    let json = dom
        .split("RESULT")
        .nth(1)
        .and_then(|s| s.split("END").next())
        .unwrap_or_else(|| panic!("no result from the link harness: {dom}"));
    // The dump escapes the text of <pre>: undo it, `&amp;` last.
    let json = json
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let strings = |k: &str| -> Vec<String> {
        v[k].as_array()
            .into_iter()
            .flatten()
            .map(|s| s.as_str().unwrap_or_default().to_string())
            .collect()
    };
    LinkReport {
        hrefs: strings("hrefs"),
        resolved: strings("resolved"),
        outside: strings("outside"),
        pwned: v["pwned"].as_str().map(str::to_string),
        handlers: strings("handlers"),
        tags: v["tags"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
            .collect(),
    }
}

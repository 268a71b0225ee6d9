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

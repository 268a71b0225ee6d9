//! The table's cases of run-directory files and aggregates (issue 21, part C): a run directory
//! built from the recorded fixtures with one file made hostile (a FIFO, a link to /dev/zero,
//! a bad byte, a cut or doubled gzip, a BOM, a multibyte commit), and out/ roots of recorded
//! rounds mixing configurations, holding a copied round or unreadable runs.
use super::{Case, case, csv};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
/// The run directory the run-directory cases build (the demo-open v1 fixture's name).
const RUN: &str = "out/demo-open/20261130T193727Z-r1";

/// A run directory at `dir/RUN`: the stepped-open k6 files, the demo-open v1 manifest and
/// status, host samples; a stale report.html that `report` must replace.
fn run_dir(dir: &Path) -> PathBuf {
    let r = dir.join(RUN);
    for sub in ["k6", "logs", "samples"] {
        std::fs::create_dir_all(r.join(sub)).unwrap();
    }
    let fx = Path::new(FIXTURES);
    let v1 = fx.join("rundir-v1/demo-open/20261130T193727Z-r1");
    for (from, to) in [
        (fx.join("k6/stepped-open.csv.gz"), "k6/requests.csv.gz"),
        (fx.join("k6/stepped-open.summary.json"), "k6/summary.json"),
        (fx.join("k6/stepped-open.log"), "k6/k6.log"),
        (v1.join("manifest.json"), "manifest.json"),
        (v1.join("status.json"), "status.json"),
        (
            fx.join("hostcpu/exp1/samples/host.jsonl"),
            "samples/host.jsonl",
        ),
    ] {
        std::fs::copy(&from, r.join(to)).unwrap();
    }
    std::fs::write(r.join("report.html"), "STALE").unwrap();
    r
}

fn fifo(p: &Path) {
    let _ = std::fs::remove_file(p);
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

fn link_dev_zero(p: &Path) {
    let _ = std::fs::remove_file(p);
    std::os::unix::fs::symlink("/dev/zero", p).unwrap();
}

/// `rel` of the run directory with `edit` applied to its bytes.
fn edit(dir: &Path, rel: &str, edit: impl FnOnce(Vec<u8>) -> Vec<u8>) {
    let p = dir.join(RUN).join(rel);
    std::fs::write(&p, edit(std::fs::read(&p).unwrap())).unwrap();
}

/// The report's pages were all rewritten: report.html is not the stale one `run_dir` left.
fn html_fresh(dir: &Path) -> Result<(), String> {
    let page = std::fs::read_to_string(dir.join(RUN).join("report.html")).unwrap_or_default();
    match page == "STALE" {
        true => Err("report.html left stale".into()),
        false => Ok(()),
    }
}

/// The run's report.html was rewritten and holds `text` (from the manifest).
fn page_holds(dir: &Path, text: &str) -> Result<(), String> {
    html_fresh(dir)?;
    let page = std::fs::read_to_string(dir.join(RUN).join("report.html")).unwrap_or_default();
    match page.contains(text) {
        true => Ok(()),
        false => Err(format!("report.html lacks {text:?}")),
    }
}

/// A run directory whose `k6/requests.csv.gz` is `f` of the fixture's.
fn gz_dir(dir: &Path, f: fn(Vec<u8>) -> Vec<u8>) {
    run_dir(dir);
    edit(dir, "k6/requests.csv.gz", f);
}

pub fn run_dir_cases() -> Vec<Case> {
    let report = ["report", RUN];
    let index = ["index", "--out", "out"];
    vec![
        Case {
            setup: Some(|d| link_dev_zero(&run_dir(d).join("logs/app.log"))),
            after: Some(html_fresh),
            ..case(
                "logs/app.log -> /dev/zero (report)",
                None,
                &report,
                0,
                &[
                    "logs/app.log: not a regular file (a character device)",
                    "left out",
                ],
            )
        },
        Case {
            setup: Some(|d| link_dev_zero(&run_dir(d).join("status.json"))),
            ..case(
                "status.json -> /dev/zero (index)",
                None,
                &index,
                0,
                &["index of 1 runs"],
            )
        },
        Case {
            setup: Some(|d| fifo(&run_dir(d).join("manifest.json"))),
            ..case(
                "FIFO manifest.json (index)",
                None,
                &index,
                0,
                &["index of 1 runs"],
            )
        },
        Case {
            // a sparse 2 GiB file: no disk, but 2 GiB of text to whoever reads it whole
            setup: Some(|d| {
                let f = std::fs::File::create(run_dir(d).join("report.json")).unwrap();
                f.set_len(2 << 30).unwrap();
            }),
            ..case(
                "2 GiB report.json (index)",
                None,
                &index,
                0,
                &["index of 1 runs"],
            )
        },
        Case {
            setup: Some(|d| {
                run_dir(d);
                edit(d, "samples/host.jsonl", |b| {
                    [vec![b'x'; 3 << 20], b"\n".to_vec(), b].concat()
                });
            }),
            ..case(
                "3 MiB line in host.jsonl",
                None,
                &report,
                0,
                &[
                    "samples/host.jsonl: 1 line(s) longer than 1048576 bytes left out (first: line 1)",
                ],
            )
        },
        Case {
            setup: Some(|d| fifo(&run_dir(d).join("manifest.json"))),
            after: Some(html_fresh),
            ..case(
                "FIFO manifest.json (report)",
                None,
                &report,
                0,
                &["manifest.json", "not a regular file (a FIFO)"],
            )
        },
        Case {
            setup: Some(|d| {
                run_dir(d);
                edit(d, "k6/k6.log", |b| {
                    let warn = "level=warning msg=\"Insufficient VUs, reached 6 active VUs\"\n";
                    [b"\xFF\n".as_slice(), &b, warn.as_bytes()].concat()
                });
            }),
            ..case(
                "invalid UTF-8 in k6.log",
                None,
                &report,
                0,
                &[
                    "1 invalid UTF-8 byte replaced in k6/k6.log",
                    "k6 logged `Insufficient VUs`",
                ],
            )
        },
        Case {
            setup: Some(|d| {
                run_dir(d);
                edit(d, "samples/host.jsonl", |b| {
                    let i = b.iter().position(|c| *c == b'1').unwrap();
                    [&b[..i], b"\xFF".as_slice(), &b[i..]].concat()
                });
            }),
            after: Some(html_fresh),
            ..case(
                "invalid UTF-8 in host.jsonl",
                None,
                &report,
                0,
                &[
                    "1 invalid UTF-8 byte replaced in samples/host.jsonl",
                    "r0120",
                ],
            )
        },
        Case {
            setup: Some(|d| gz_dir(d, |b| b[..70_000].to_vec())),
            after: Some(html_fresh),
            ..case(
                "requests.csv.gz cut at 70 KB",
                None,
                &report,
                0,
                &[
                    "k6/requests.csv.gz: its gzip stream breaks at byte 70000 of 70000",
                    "r0060",
                ],
            )
        },
        Case {
            setup: Some(|d| gz_dir(d, |b| [b.clone(), b].concat())),
            ..case(
                "requests.csv.gz concatenated twice",
                None,
                &report,
                2,
                &[
                    "k6/requests.csv.gz: a second gzip member starts at byte 137420",
                    "concatenated",
                ],
            )
        },
        Case {
            setup: Some(|d| {
                run_dir(d);
                edit(d, "manifest.json", |b| {
                    let s = String::from_utf8(b).unwrap();
                    let s = s.replace(
                        "8202575cedf8e40e85fb13c1ac083a3b7dc1b187",
                        "abcdefghijk\u{e9}\u{e9}",
                    );
                    s.into_bytes()
                });
            }),
            after: Some(|d| page_holds(d, "commit abcdefghijk")),
            ..case("multibyte perflab.git_commit", None, &report, 0, &["r0120"])
        },
        case(
            "BOM in a k6 CSV",
            Some(("d.csv", [b"\xEF\xBB\xBF".as_slice(), &csv("")].concat())),
            &["analyze", "d.csv", "--slo-ms", "100"],
            0,
            &["r0010"],
        ),
        Case {
            extra: Some((
                "s.json",
                [b"\xEF\xBB\xBF".as_slice(), br#"{"metrics":{}}"#].concat(),
            )),
            ..case(
                "BOM in a k6 summary",
                Some(("d.csv", csv(""))),
                &["analyze", "d.csv", "--summary", "s.json", "--slo-ms", "100"],
                0,
                &["r0010"],
            )
        },
        Case {
            setup: Some(|d| {
                run_dir(d);
                edit(d, "manifest.json", |b| {
                    [b"\xEF\xBB\xBF".as_slice(), &b].concat()
                });
            }),
            after: Some(|d| page_holds(d, "commit 8202575cedf8")),
            ..case("BOM in manifest.json", None, &report, 0, &["r0120"])
        },
    ]
}

/// Copy the recorded rounds `fixtures/compare/<set>/exp1/<run>` into `dir/out/exp1/<as_name>`.
fn round(dir: &Path, set: &str, run: &str, as_name: &str) -> PathBuf {
    let from = Path::new(FIXTURES)
        .join("compare")
        .join(set)
        .join("exp1")
        .join(run);
    let to = dir.join("out/exp1").join(as_name);
    std::fs::create_dir_all(&to).unwrap();
    for f in ["manifest.json", "status.json", "report.json"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
    to
}

/// The three clean rounds of exp1.
fn clean_rounds(dir: &Path) {
    for r in [
        "20261130T223353Z-r1",
        "20261130T223414Z-r2",
        "20261130T223437Z-r3",
    ] {
        round(dir, "exp1-clean", r, r);
    }
}

/// The three clean rounds of exp1 and a newer complete one whose report.json is cut short.
fn clean_rounds_and_a_corrupt_one(dir: &Path) {
    clean_rounds(dir);
    let bad = round(
        dir,
        "exp1-clean",
        "20261130T223437Z-r3",
        "20261201T000000Z-r4",
    );
    std::fs::write(bad.join("report.json"), "{").unwrap();
}

pub fn capacity_cases() -> Vec<Case> {
    let cap = ["capacity", "exp1", "--out", "out"];
    vec![
        Case {
            // two burn_us=1700 rounds and one clean, the newest three
            setup: Some(|d| {
                for r in ["20261130T223214Z-r2", "20261130T223236Z-r3"] {
                    round(d, "exp1-burn", r, r);
                }
                round(
                    d,
                    "exp1-clean",
                    "20261130T223353Z-r1",
                    "20261130T223353Z-r1",
                );
            }),
            ..case(
                "capacity over mixed configurations",
                None,
                &cap,
                2,
                &[
                    "the rounds differ in --set overrides",
                    "stack.php.burn_us=1700: exp1/20261130T223236Z-r3",
                    "none: exp1/20261130T223353Z-r1",
                ],
            )
        },
        Case {
            setup: Some(|d| {
                clean_rounds(d);
                let r3 = "20261130T223437Z-r3";
                round(d, "exp1-clean", r3, &format!("{r3}-2"));
            }),
            ..case(
                "capacity over a copied round counts it once",
                None,
                &cap,
                0,
                &[
                    "capacity of exp1 over 3 rounds",
                    "skipped out/exp1/20261130T223437Z-r3-2: a copy of out/exp1/20261130T223437Z-r3 (run id 20261130T223437Z-r3), counted once",
                ],
            )
        },
        Case {
            setup: Some(|d| {
                clean_rounds_and_a_corrupt_one(d);
                let failed = round(
                    d,
                    "exp1-clean",
                    "20261130T223437Z-r3",
                    "20261201T010000Z-r5",
                );
                let status = std::fs::read_to_string(failed.join("status.json")).unwrap();
                std::fs::write(
                    failed.join("status.json"),
                    status.replace("complete", "failed"),
                )
                .unwrap();
            }),
            ..case(
                "capacity with unreadable runs",
                None,
                &cap,
                0,
                &[
                    "capacity of exp1 over 3 rounds",
                    "skipped out/exp1/20261201T000000Z-r4: out/exp1/20261201T000000Z-r4/report.json: EOF",
                    "skipped out/exp1/20261201T010000Z-r5: not complete: failed",
                ],
            )
        },
        Case {
            setup: Some(clean_rounds_and_a_corrupt_one),
            after: Some(|d| {
                let text = std::fs::read_to_string(d.join(".stderr")).unwrap();
                match text.matches("skipped unreadable run").count() {
                    1 => Ok(()),
                    n => Err(format!("the skipped run is said {n} times")),
                }
            }),
            ..case(
                "verify all says a skipped run once",
                None,
                &["verify", "all", "--out", "out"],
                1,
                &["skipped unreadable run: out/exp1/20261201T000000Z-r4"],
            )
        },
    ]
}

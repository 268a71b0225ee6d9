use super::lines::{jsonl_within, lines_within};
use super::*;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

fn file(dir: &Path, rel: &str, bytes: &[u8], kind: FileKind) -> RunFile {
    std::fs::write(dir.join(rel), bytes).unwrap();
    RunFile::at(dir, rel, kind)
}

fn gzip(text: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

fn all_lines(f: &RunFile, caps: (u64, usize)) -> (Vec<String>, ReadNotes) {
    let mut v = Vec::new();
    let notes = lines_within(f, caps, |l| v.push(l.to_string())).unwrap();
    (v, notes)
}

#[test]
fn a_fifo_a_device_and_a_directory_are_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    super::mkfifo(&d.path().join("manifest.json"));
    std::os::unix::fs::symlink("/dev/zero", d.path().join("status.json")).unwrap();
    std::fs::create_dir(d.path().join("plan.json")).unwrap();
    let t = Instant::now();
    for (name, kind, what) in [
        ("manifest.json", FileKind::Manifest, "a FIFO"),
        ("status.json", FileKind::Status, "a character device"),
        ("plan.json", FileKind::Plan, "a directory"),
    ] {
        let e = doc(&RunFile::at(d.path(), name, kind)).unwrap_err();
        let m = e.to_string();
        assert!(m.contains(name) && m.contains(what), "{m}");
        assert!(matches!(e, ReadError::NotRegular { .. }), "{m}");
        let e = e.into_anyhow();
        assert_eq!(crate::error::exit_code_for(&e), 2, "{e:#}");
    }
    let f = RunFile::at(d.path(), "status.json", FileKind::Log);
    assert!(lines(&f, |_| {}).is_err());
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // a symlink to a regular file is read
    std::fs::write(d.path().join("real.json"), "{}").unwrap();
    std::os::unix::fs::symlink("real.json", d.path().join("link.json")).unwrap();
    assert_eq!(
        doc(&RunFile::at(d.path(), "link.json", FileKind::Report))
            .unwrap()
            .text,
        "{}"
    );
    let missing = doc(&RunFile::at(d.path(), "none.json", FileKind::Report)).unwrap_err();
    assert!(missing.is_missing());
}

#[test]
fn a_document_past_its_cap_is_refused_naming_the_cap() {
    let d = tempfile::tempdir().unwrap();
    let cap = FileKind::Status.max_bytes();
    let f = file(
        d.path(),
        "status.json",
        &vec![b' '; cap as usize + 1],
        FileKind::Status,
    );
    let m = doc(&f).unwrap_err().to_string();
    assert!(m.contains(&format!("more than the {cap} bytes")), "{m}");
    let f = file(
        d.path(),
        "status.json",
        &vec![b' '; cap as usize],
        FileKind::Status,
    );
    assert_eq!(doc(&f).unwrap().text.len(), cap as usize);
}

#[test]
fn a_bom_is_skipped_and_invalid_utf8_replaced_and_counted() {
    let d = tempfile::tempdir().unwrap();
    let f = file(
        d.path(),
        "r.json",
        b"\xEF\xBB\xBF{\"a\":\"x\xFF\xFEy\"}",
        FileKind::Report,
    );
    let r = doc(&f).unwrap();
    assert_eq!(r.text, "{\"a\":\"x\u{FFFD}\u{FFFD}y\"}");
    assert_eq!(r.notes.invalid_utf8, 2);
    assert_eq!(
        r.notes.caveats(),
        ["2 invalid UTF-8 bytes replaced in r.json"]
    );
    let clean = file(d.path(), "c.json", b"{}", FileKind::Report);
    assert!(doc(&clean).unwrap().notes.caveats().is_empty());
}

#[test]
fn log_lines_are_cut_at_the_cap_and_a_big_log_is_read_from_its_tail() {
    let d = tempfile::tempdir().unwrap();
    let mut bytes = format!("\u{FEFF}one\r\n{}\nthree \u{e9}", "b".repeat(100)).into_bytes();
    bytes.push(0xFF);
    let f = file(d.path(), "app.log", &bytes, FileKind::Log);
    let (v, notes) = all_lines(&f, (1 << 20, 10));
    assert_eq!(v, ["one", "bbbbbbbbbb", "three \u{e9}\u{FFFD}"]);
    assert_eq!((notes.long_lines, notes.first_long_line), (1, Some(2)));
    assert_eq!(notes.invalid_utf8, 1);
    // 10 lines of 10 bytes; a 35-byte tail starts at the first whole line in it
    let body: String = (0..10).map(|i| format!("line {i:04}\n")).collect();
    let f = file(d.path(), "big.log", body.as_bytes(), FileKind::Log);
    let (v, notes) = all_lines(&f, (35, 64));
    assert_eq!(v, ["line 0007", "line 0008", "line 0009"]);
    assert_eq!(notes.capped, Some((100, 35, Over::Tail)));
    assert!(
        notes.caveats()[0].contains("big.log is 100 bytes: only its last 35 bytes"),
        "{:?}",
        notes.caveats()
    );
    // a tail that starts on a line's first byte keeps that line
    let (v, _) = all_lines(&f, (30, 64));
    assert_eq!(v, ["line 0007", "line 0008", "line 0009"]);
}

#[test]
fn a_line_without_newline_is_bounded() {
    let mut r = LineReader::new(std::io::Cursor::new(vec![b'x'; 1 << 20]), 100);
    let l = r.next_line().unwrap().unwrap();
    assert_eq!((l.bytes.len(), l.cut, l.ended, l.no), (100, true, false, 1));
    assert!(r.next_line().unwrap().is_none());
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Rec {
    t: i64,
}

#[test]
fn json_lines_keep_what_parses_and_count_what_does_not() {
    let d = tempfile::tempdir().unwrap();
    let body = b"\xEF\xBB\xBF{\"t\":1}\n{\"t\":2\xFF}\n{\"t\":3}\n{\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}\n{\"t\":4}\n{\"t\":";
    let f = file(d.path(), "host.jsonl", body, FileKind::Samples);
    let (v, notes, torn): (Vec<Rec>, _, _) = jsonl_within(&f, (1 << 20, 24)).unwrap();
    assert_eq!(v, [Rec { t: 1 }, Rec { t: 3 }, Rec { t: 4 }]);
    assert!(torn, "the last line has no newline");
    assert_eq!(
        (notes.garbled_lines, notes.first_garbled_line),
        (1, Some(2))
    );
    assert_eq!((notes.long_lines, notes.invalid_utf8), (1, 1));
    let c = notes.caveats().join("\n");
    assert!(
        c.contains("1 invalid UTF-8 byte replaced in host.jsonl"),
        "{c}"
    );
    assert!(
        c.contains("line(s) longer than 24 bytes left out (first: line 4)"),
        "{c}"
    );
    // a bad line with no invalid byte, not the last, is bad input naming file and line
    let f = file(
        d.path(),
        "pg.jsonl",
        b"{\"t\":1}\n{\"t\":x}\n{\"t\":3}\n",
        FileKind::Samples,
    );
    let e = jsonl_within::<Rec>(&f, (1 << 20, 1024)).unwrap_err();
    assert_eq!(crate::error::exit_code_for(&e), 2);
    assert!(format!("{e:#}").contains("pg.jsonl: line 2:"), "{e:#}");
    // a missing file has no records
    let none = RunFile::at(d.path(), "node.jsonl", FileKind::Samples);
    assert!(jsonl::<Rec>(&none).unwrap().0.is_empty());
}

fn csv_text(rows: usize) -> Vec<u8> {
    let mut s = String::from("metric_name,timestamp,metric_value\n");
    for i in 0..rows {
        s += &format!(
            "http_req_duration,{},{}\n",
            1_700_000_000_000u64 + i as u64,
            i % 97
        );
    }
    s.into_bytes()
}

fn read_csv(f: &RunFile) -> (Vec<u8>, anyhow::Result<Vec<String>>) {
    let (mut s, w) = k6_csv(f).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    (out, w.finish())
}

#[test]
fn a_whole_gzip_csv_reads_as_its_text() {
    let d = tempfile::tempdir().unwrap();
    let text = csv_text(50_000);
    let f = file(d.path(), "requests.csv.gz", &gzip(&text), FileKind::K6Csv);
    let (out, c) = read_csv(&f);
    assert!(out == text && c.unwrap().is_empty());
    let plain = file(d.path(), "requests.csv", &text, FileKind::K6Csv);
    let (out, c) = read_csv(&plain);
    assert!(out == text && c.unwrap().is_empty());
}

#[test]
fn a_cut_gzip_csv_reads_up_to_its_last_whole_line_and_says_where_it_broke() {
    let d = tempfile::tempdir().unwrap();
    let text = csv_text(200_000);
    let gz = gzip(&text);
    let cut = gz.len() / 2;
    let f = file(d.path(), "requests.csv.gz", &gz[..cut], FileKind::K6Csv);
    let (out, c) = read_csv(&f);
    assert!(
        out.len() > text.len() / 4 && out.len() < text.len(),
        "{}",
        out.len()
    );
    assert!(text.starts_with(&out) && out.ends_with(b"\n"));
    let c = c.unwrap();
    assert_eq!(c.len(), 1, "{c:?}");
    assert!(
        c[0].contains(&format!(
            "requests.csv.gz: its gzip stream breaks at byte {cut} of {cut}"
        )) && c[0].contains(&format!("the {} bytes of CSV", out.len())),
        "{c:?}"
    );
}

#[test]
fn a_second_gzip_member_is_refused_and_trailing_bytes_are_said() {
    let d = tempfile::tempdir().unwrap();
    let gz = gzip(&csv_text(1000));
    let twice = [gz.clone(), gz.clone()].concat();
    let f = file(d.path(), "requests.csv.gz", &twice, FileKind::K6Csv);
    let (out, c) = read_csv(&f);
    assert_eq!(out, csv_text(1000), "the first member only");
    let e = c.unwrap_err();
    assert_eq!(crate::error::exit_code_for(&e), 2);
    let m = e.to_string();
    assert!(
        m.contains(&format!("a second gzip member starts at byte {}", gz.len())),
        "{m}"
    );
    let padded = [gz.clone(), vec![0; 7]].concat();
    let f = file(d.path(), "requests.csv.gz", &padded, FileKind::K6Csv);
    let (_, c) = read_csv(&f);
    let c = c.unwrap();
    assert!(
        c[0].contains(&format!(
            "7 bytes after its gzip stream (from byte {})",
            gz.len()
        )),
        "{c:?}"
    );
}

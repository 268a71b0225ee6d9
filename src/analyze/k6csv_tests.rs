//! Unit tests of the k6 CSV reader (`k6csv`): tags, columns, bounds on hostile rows.
use super::*;

#[test]
fn step_tags() {
    assert_eq!(parse_step_tag("stage", "r0150").unwrap().target, 150);
    let t = parse_step_tag("step", "04_rps150").unwrap();
    assert_eq!((t.order, t.target, t.unit), (4, 150, StepUnit::Rps));
    let t = parse_step_tag("step", "06_vus60").unwrap();
    assert_eq!((t.order, t.target, t.unit), (6, 60, StepUnit::Vus));
    assert!(parse_step_tag("step", "ramp").is_none());
    assert!(parse_step_tag("step", "warmup").is_none());
    assert!(parse_step_tag("stage", "rxx").is_none());
}

#[test]
fn tiny_csv_plain() {
    let csv = "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n\
http_reqs,1700000000100,1.000000,,,,true,,GET,u,HTTP/1.1,step,,200,,,u,stage=r0010,\n\
http_req_duration,1700000000100,40.5,,,,true,,GET,u,HTTP/1.1,step,,200,,,u,stage=r0010,\n\
http_req_duration,1700000001200,1000.0,,request timeout,1050,false,,GET,u,HTTP/1.1,step,,0,,,u,stage=r0010,\n\
http_req_duration,1700000001300,20.0,,,,false,,GET,u,HTTP/1.1,step,,500,,,u,\"stage=r0020\",\n\
http_req_duration,1700000001300,20.0,,,,true,,GET,u,HTTP/1.1,breakpoint,,200,,,u,phase=ramp&step=ramp,\n\
vus,1700000001000,3.000000,,,,,,,,,,,,,,,,\n\
dropped_iterations,1700000001500,1.000000,,,,,,,,,step,,,,,,,\n";
    let d = read_k6_csv(std::io::Cursor::new(csv.as_bytes().to_vec())).unwrap();
    assert_eq!(d.steps.len(), 2);
    assert_eq!(d.steps[0].requests, 2);
    assert_eq!(d.steps[0].ok_count, 1);
    assert_eq!(d.steps[0].statuses.get(&0), Some(&1));
    assert_eq!(d.steps[0].error_codes.get("1050"), Some(&1));
    assert_eq!(d.steps[1].tag.target, 20);
    assert_eq!(d.excluded.get("ramp"), Some(&1));
    assert_eq!(d.dropped_total, 1);
    assert_eq!(d.vus, vec![(1_700_000_001_000, 3.0)]);
    assert_eq!(d.requests, 4);
    // The 1 s timeout started at ...0200 and ended at ...1200: 800 ms in second 0, 200 ms in second 1.
    assert!((d.timeline.get(1_700_000_000).unwrap().busy_ms - (40.0 + 800.0)).abs() < 1.5);
}

const HEAD: &str = "metric_name,timestamp,metric_value,expected_response,status,extra_tags\n";

fn rows_then(extra: &str) -> Result<K6Data, CsvError> {
    let mut csv = HEAD.to_string();
    for i in 0..20 {
        csv += &format!(
            "http_req_duration,{},20,true,200,stage=r0010\n",
            1_700_000_000_000i64 + i * 100
        );
    }
    csv += extra;
    read_k6_csv(std::io::Cursor::new(csv.into_bytes()))
}

#[test]
fn impossible_durations_are_errors_naming_line_and_field() {
    for v in ["inf", "NaN", "-50", "1e15", "1e10", "600001"] {
        let e = rows_then(&format!(
            "http_req_duration,1700000005000,{v},true,200,stage=r0010\n"
        ))
        .err()
        .unwrap_or_else(|| panic!("{v} accepted"));
        let m = e.to_string();
        assert!(m.contains("line 22") && m.contains("metric_value"), "{m}");
    }
    let e = rows_then("vus,1700000005000,1e300,,,\n").err().unwrap();
    assert!(e.to_string().contains("line 22"), "{e}");
    assert!(rows_then("http_req_duration,1700000005000,600000,true,200,stage=r0010\n").is_ok());
}

#[test]
fn stray_timestamps_are_skipped_and_counted() {
    let d = rows_then(
        "http_req_duration,1000,20,true,200,stage=r0010\n\
         http_req_duration,1700999999000,20,true,200,stage=r0010\n\
         http_req_duration,1700000002000,20,true,200,stage=r0010\n",
    )
    .unwrap();
    assert_eq!((d.skipped_rows, d.first_skipped_line), (2, Some(22)));
    assert_eq!(d.requests, 21);
    assert_eq!(d.timeline.secs.len(), 4);
}

#[test]
fn a_line_without_newline_is_bounded() {
    let mut csv = HEAD.as_bytes().to_vec();
    csv.extend(std::iter::repeat_n(b'a', 3 * MAX_LINE));
    let e = read_k6_csv(std::io::Cursor::new(csv)).err().unwrap();
    assert!(matches!(e, CsvError::LineTooLong { line: 2 }), "{e}");
    // a long line that ends in time is fine
    let long = format!(
        "http_req_duration,1700000005000,20,true,200,stage=r0010{}\n",
        ",".repeat(MAX_LINE / 2)
    );
    assert!(rows_then(&long).is_ok());
}

#[test]
fn backwards_timestamps_give_the_same_timeline() {
    let mut fwd = HEAD.to_string();
    let mut back = HEAD.to_string();
    for i in 0..3000i64 {
        fwd += &format!(
            "http_req_duration,{},20,true,200,stage=r0010\n",
            1_700_000_000_000 + i * 1000
        );
        back += &format!(
            "http_req_duration,{},20,true,200,stage=r0010\n",
            1_700_000_000_000 + (2999 - i) * 1000
        );
    }
    let f = read_k6_csv(std::io::Cursor::new(fwd.into_bytes())).unwrap();
    let b = read_k6_csv(std::io::Cursor::new(back.into_bytes())).unwrap();
    assert_eq!(
        (f.timeline.base_s, f.timeline.secs.len()),
        (b.timeline.base_s, b.timeline.secs.len())
    );
    assert_eq!(
        (f.timeline.fine_base, f.timeline.fine.len()),
        (b.timeline.fine_base, b.timeline.fine.len())
    );
}

#[test]
fn missing_column_is_named() {
    let e = read_k6_csv(std::io::Cursor::new(b"a,b\n1,2\n".to_vec()))
        .err()
        .unwrap();
    assert!(e.to_string().contains("metric_name"), "{e}");
}

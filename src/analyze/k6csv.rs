//! Streaming reader of k6's per-request CSV (`--out csv`, plain or gzip): one pass, constant
//! memory in the request count (HDR histograms per step, a per-second timeline).
//!
//! Parts in `k6csv/`: what it reads into, its limits and errors (`data`), the CSV's shape
//! (`fields`), the pass itself (`ingest`), the per-second timeline (`timeline`), decompression
//! on its own thread (`pipe`).
mod data;
mod fields;
mod ingest;
mod pipe;
mod timeline;
mod window;

use std::io::{BufRead, BufReader, Read};

pub(crate) use data::MAX_LINE;
#[cfg(test)]
use data::parse_step_tag;
pub use data::{Convention, CsvError, K6Data, StepAgg, StepTag, StepUnit};
pub(crate) use timeline::{SecondAgg, Timeline};

/// Read a k6 CSV (gzip detected by its magic bytes). Decompression runs on its own thread.
pub fn read_k6_csv<R: Read + Send + 'static>(reader: R) -> Result<K6Data, CsvError> {
    let mut br = BufReader::with_capacity(1 << 16, reader);
    let gz = {
        let head = br.fill_buf()?;
        head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b
    };
    if gz {
        let dec = flate2::bufread::MultiGzDecoder::new(br);
        ingest::parse(pipe::ChunkPipe::spawn(dec))
    } else {
        ingest::parse(br)
    }
}

/// Read a k6 CSV's text (already decoded: `rundir::read::k6_csv`), on a thread of its own when
/// `piped` (decoding gzip is work worth a second core).
pub(crate) fn read_k6_text<R: Read + Send + 'static>(
    reader: R,
    piped: bool,
) -> Result<K6Data, CsvError> {
    if piped {
        ingest::parse(pipe::ChunkPipe::spawn(reader))
    } else {
        ingest::parse(BufReader::with_capacity(1 << 16, reader))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::bounds::MAX_STEPS;

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

    /// 20 good rows in step r0010 (lines 2-21), then `extra` (line 22 on).
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
    fn impossible_values_are_errors_naming_line_and_field() {
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
        assert_eq!(
            (d.timeline.base_s, d.timeline.secs.len()),
            (1_699_999_999, 4)
        );
        assert!(
            !d.second_resolution,
            "the stray row's whole seconds count too"
        );
        // a stray first row does not become the anchor
        let mut csv =
            HEAD.to_string() + "http_req_duration,1600000000000,20,true,200,stage=r0010\n";
        for i in 0..100 {
            let t = 1_700_000_000_000i64 + i * 100;
            csv += &format!("http_req_duration,{t},20,true,200,stage=r0010\n");
        }
        let d = read_k6_csv(std::io::Cursor::new(csv.into_bytes())).unwrap();
        assert_eq!(
            (d.skipped_rows, d.first_skipped_line, d.requests),
            (1, Some(2), 100)
        );
    }

    #[test]
    fn too_many_distinct_steps_is_an_error() {
        let rows: String = (1..=MAX_STEPS + 1)
            .map(|i| format!("http_req_duration,1700000005000,20,true,200,stage=r{i:04}\n"))
            .collect();
        let e = rows_then(&rows).err().unwrap();
        let line = 22 + MAX_STEPS; // r0010 is the first row's step
        assert!(
            e.to_string()
                .starts_with(&format!("line {line}: step `r0257`")),
            "{e}"
        );
        // ever-new tags that are no step are counted under a bounded number of labels
        let rows: String = (0..5000)
            .map(|i| format!("http_req_duration,1700000005000,20,true,200,stage=x{i}\n"))
            .collect();
        let d = rows_then(&rows).unwrap();
        assert!(d.excluded.len() <= 257 && d.excluded["(other)"] > 4000);
    }

    #[test]
    fn vus_rows_are_bounded() {
        let n = ingest::MAX_VUS_SAMPLES;
        let rows: String = (0..=n as i64)
            .map(|i| format!("vus,{},3,,,\n", 1_700_000_000_000 + i % 1000))
            .collect();
        let e = rows_then(&rows).err().unwrap();
        let line = 22 + n;
        assert!(
            e.to_string()
                .starts_with(&format!("line {line}: more than")),
            "{e}"
        );
    }

    #[test]
    fn a_line_without_newline_is_bounded() {
        let mut csv = HEAD.as_bytes().to_vec();
        csv.extend(std::iter::repeat_n(b'a', 3 * MAX_LINE));
        let e = read_k6_csv(std::io::Cursor::new(csv)).err().unwrap();
        assert!(matches!(e, CsvError::LineTooLong { line: 2 }), "{e}");
        let long = format!(
            "http_req_duration,1700000005000,20,true,200,stage=r0010{}\n",
            ",".repeat(MAX_LINE / 2)
        );
        assert!(rows_then(&long).is_ok());
        let e = rows_then(&format!("{}\n", "b".repeat(MAX_LINE + 1)))
            .err()
            .unwrap();
        assert!(matches!(e, CsvError::LineTooLong { line: 22 }), "{e}");
    }

    #[test]
    fn backwards_timestamps_give_the_same_timeline() {
        let (mut fwd, mut back) = (HEAD.to_string(), HEAD.to_string());
        for i in 0..3000i64 {
            let row = |k: i64| {
                format!(
                    "http_req_duration,{},20,true,200,stage=r0010\n",
                    1_700_000_000_000 + k * 1000
                )
            };
            fwd += &row(i);
            back += &row(2999 - i);
        }
        let f = read_k6_csv(std::io::Cursor::new(fwd.into_bytes())).unwrap();
        let b = read_k6_csv(std::io::Cursor::new(back.into_bytes())).unwrap();
        let shape = |d: &K6Data| {
            let t = &d.timeline;
            (t.base_s, t.secs.len(), t.fine_base, t.fine.len())
        };
        assert_eq!(shape(&f), shape(&b));
        assert_eq!(shape(&f), (1_699_999_999, 3001, 17_000_000_000, 29_991));
    }

    #[test]
    fn missing_column_is_named() {
        let e = read_k6_csv(std::io::Cursor::new(b"a,b\n1,2\n".to_vec()))
            .err()
            .unwrap();
        assert!(e.to_string().contains("metric_name"), "{e}");
    }
}

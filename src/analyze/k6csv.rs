//! Streaming reader of k6's per-request CSV (`--out csv`, plain or gzip): one pass, constant
//! memory in the request count (HDR histograms per step, a per-second timeline).
//!
//! Parts in `k6csv/`: the CSV's shape (`fields`), the pass itself (`ingest`), the per-second
//! timeline (`timeline`), decompression on its own thread (`pipe`).
mod fields;
mod ingest;
mod pipe;
mod timeline;

use super::hist::LatencyHist;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};

pub use timeline::{SecondAgg, Timeline};

/// Which tag convention names the steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Convention {
    /// stepped.js: `stage:rNNNN` (rps).
    Stage,
    /// breakpoint.js: `step:NN_rpsX` / `step:NN_vusX` (hold windows only).
    Step,
}

/// What a step's number means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepUnit {
    Rps,
    Vus,
}

impl StepUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            StepUnit::Rps => "rps",
            StepUnit::Vus => "VUs",
        }
    }
}

/// A step tag value parsed: `r0150` or `04_rps150` / `06_vus60`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepTag {
    pub convention: Convention,
    pub order: u32,
    pub target: u32,
    pub unit: StepUnit,
}

/// Parse a tag (key, value) into a step; `None` for ramp, warm-up and anything else.
pub fn parse_step_tag(key: &str, value: &str) -> Option<StepTag> {
    match key {
        "stage" => {
            let n = value.strip_prefix('r')?;
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let target = n.parse().ok()?;
            Some(StepTag {
                convention: Convention::Stage,
                order: target,
                target,
                unit: StepUnit::Rps,
            })
        }
        "step" => {
            let (nn, rest) = value.split_once('_')?;
            let order = nn.parse().ok()?;
            let (unit, num) = if let Some(n) = rest.strip_prefix("rps") {
                (StepUnit::Rps, n)
            } else if let Some(n) = rest.strip_prefix("vus") {
                (StepUnit::Vus, n)
            } else {
                return None;
            };
            let target = num.parse().ok()?;
            Some(StepTag {
                convention: Convention::Step,
                order,
                target,
                unit,
            })
        }
        _ => None,
    }
}

/// Everything measured about the requests that started in one step.
#[derive(Debug, Clone)]
pub struct StepAgg {
    pub name: String,
    pub tag: StepTag,
    pub all: LatencyHist,
    pub ok: LatencyHist,
    pub requests: u64,
    pub ok_count: u64,
    /// Responses by HTTP status (0 = no response: timeout, reset, refused).
    pub statuses: BTreeMap<u16, u64>,
    /// k6 `error_code` counts (e.g. 1050 = request timeout).
    pub error_codes: BTreeMap<String, u64>,
    pub first_start_ms: i64,
    pub last_start_ms: i64,
    pub last_end_ms: i64,
}

/// The result of one pass over a k6 CSV.
#[derive(Clone, Default)]
pub struct K6Data {
    pub convention: Option<Convention>,
    /// Steps in step order.
    pub steps: Vec<StepAgg>,
    pub timeline: Timeline,
    /// `vus` samples (unix ms, active VUs).
    pub vus: Vec<(i64, f64)>,
    pub vus_max: f64,
    pub dropped_total: u64,
    /// Drops in the warm-up scenario (not counted against the system).
    pub dropped_warmup: u64,
    /// Drop timestamps per scenario are folded into the timeline; this keeps the first one.
    pub first_drop_ms: Option<i64>,
    /// Requests not in any step: `ramp`, `warmup`, `(untagged)`.
    pub excluded: BTreeMap<String, u64>,
    pub rows: u64,
    pub requests: u64,
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
    /// Start (unix ms) of the earliest request, any tag: when this generator began sending.
    pub first_request_ms: Option<i64>,
    /// True when timestamps were whole seconds (k6's default CSV time format).
    pub second_resolution: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    #[error("reading the k6 CSV failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the k6 CSV has no header line (empty file?)")]
    Empty,
    #[error("the k6 CSV header lacks column `{0}`: is this k6's `--out csv` output?")]
    MissingColumn(&'static str),
    #[error("line {line}: {what} (field `{field}`)")]
    BadField {
        line: u64,
        field: &'static str,
        what: String,
    },
}

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

#[cfg(test)]
mod tests {
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

    #[test]
    fn missing_column_is_named() {
        let e = read_k6_csv(std::io::Cursor::new(b"a,b\n1,2\n".to_vec()))
            .err()
            .unwrap();
        assert!(e.to_string().contains("metric_name"), "{e}");
    }
}

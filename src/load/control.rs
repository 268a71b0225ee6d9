//! Starting k6 on the second: k6 runs with `--paused` (script parsed, VUs pre-allocated), and
//! the orchestrator resumes it through k6's REST API (`PATCH /v1/status`) at the aligned instant.
use serde::Deserialize;
use std::time::{Duration, Instant};

/// The part of `GET /v1/status` the harness reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) struct K6Status {
    pub paused: bool,
    #[serde(default)]
    pub running: bool,
    #[serde(default)]
    pub stopped: bool,
    #[serde(default, rename = "vus-max")]
    pub vus_max: u64,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ControlError {
    #[error("k6's API answered something else than a status: {0}")]
    Parse(#[from] serde_json::Error),
    #[error("k6's API at {url}: {source}")]
    Http {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error(
        "k6 did not reach its initialised, paused state (it exited, or took longer than {0:?}): see k6/k6.log and logs/"
    )]
    NotReady(Duration),
    #[error("k6 did not resume: its API still reports paused")]
    StillPaused,
}

/// Parse the body of `GET`/`PATCH /v1/status`.
pub(crate) fn parse_status(body: &str) -> Result<K6Status, serde_json::Error> {
    #[derive(Deserialize)]
    struct Data {
        attributes: K6Status,
    }
    #[derive(Deserialize)]
    struct Doc {
        data: Data,
    }
    Ok(serde_json::from_str::<Doc>(body)?.data.attributes)
}

/// The JSON:API body that resumes a paused test.
pub(crate) fn resume_body() -> &'static str {
    r#"{"data":{"type":"status","id":"default","attributes":{"paused":false}}}"#
}

/// `addr` is `host:port` as this machine reaches k6's API (its lab address, or a published
/// port on 127.0.0.1).
fn status_url(addr: &str) -> String {
    format!("http://{addr}/v1/status")
}

/// Send a request to k6's status endpoint and parse the answer.
async fn call(req: reqwest::RequestBuilder, url: &str) -> Result<K6Status, ControlError> {
    let http = |source| ControlError::Http {
        url: url.to_string(),
        source,
    };
    let body = req
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(http)?
        .text()
        .await
        .map_err(http)?;
    Ok(parse_status(&body)?)
}

async fn get_status(client: &reqwest::Client, addr: &str) -> Result<K6Status, ControlError> {
    let url = status_url(addr);
    call(client.get(&url), &url).await
}

/// Poll until k6 reports `paused` (its init is done). `alive` is asked between polls so a k6
/// that exited (bad script) fails fast instead of waiting for the timeout.
pub(crate) async fn wait_paused<F, Fut>(
    client: &reqwest::Client,
    addr: &str,
    timeout: Duration,
    mut alive: F,
) -> Result<K6Status, ControlError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let t0 = Instant::now();
    while t0.elapsed() < timeout {
        if let Ok(s) = get_status(client, addr).await
            && s.paused
        {
            return Ok(s);
        }
        if !alive().await {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(ControlError::NotReady(timeout))
}

/// Resume a paused k6; returns the status k6 answered.
pub(crate) async fn resume(client: &reqwest::Client, addr: &str) -> Result<K6Status, ControlError> {
    let url = status_url(addr);
    let req = client
        .patch(&url)
        .header("Content-Type", "application/json")
        .body(resume_body());
    let s = call(req, &url).await?;
    if s.paused {
        return Err(ControlError::StillPaused);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_real_k6_status_answers() {
        // k6 1.1.0, `k6 run --paused`, before and after the PATCH
        let paused = r#"{"data":{"type":"status","id":"default","attributes":{"status":4,"paused":true,"vus":0,"vus-max":2,"stopped":false,"running":false,"tainted":false}}}"#;
        let s = parse_status(paused).unwrap();
        assert!(s.paused && !s.running && !s.stopped);
        assert_eq!(s.vus_max, 2);
        let resumed = paused.replace("\"paused\":true", "\"paused\":false");
        assert!(!parse_status(&resumed).unwrap().paused);
        assert!(parse_status("{}").is_err());
        assert!(parse_status("not json").is_err());
    }

    #[test]
    fn resume_body_unpauses() {
        let v: serde_json::Value = serde_json::from_str(resume_body()).unwrap();
        assert_eq!(v["data"]["attributes"]["paused"], false);
        assert_eq!(v["data"]["type"], "status");
    }
}

//! The php-fpm sampler: the status page of the hidden status pool (through nginx), as JSON,
//! every slow tick into `samples/fpm.jsonl`.
use std::time::Duration;

use serde::Serialize;

use super::SampleFile;
use super::sampler::Sampler;

/// One line of `samples/fpm.jsonl`: php-fpm's status as it answered.
#[derive(Serialize)]
pub(crate) struct FpmLine {
    t: i64,
    status: serde_json::Value,
}

/// Reads `url` (e.g. `http://127.0.0.1:PORT/fpm-status?json`).
pub(crate) struct FpmSampler {
    client: reqwest::Client,
    url: String,
}

impl FpmSampler {
    pub(crate) fn new(url: String) -> Result<FpmSampler, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(1500))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(FpmSampler { client, url })
    }
}

impl Sampler for FpmSampler {
    const FILE: SampleFile = SampleFile::Fpm;
    type Line = FpmLine;

    async fn read(&mut self, t: i64) -> Result<FpmLine, String> {
        let status = async {
            self.client
                .get(&self.url)
                .send()
                .await?
                .error_for_status()?
                .json::<serde_json::Value>()
                .await
        }
        .await
        .map_err(|e| e.to_string())?;
        Ok(FpmLine { t, status })
    }
}

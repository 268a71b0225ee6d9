//! The trainer's room (`perflab status --live`): who holds the host lock and who waits, with
//! their expected ends, each one's live page (the URL their `perflab run --live` recorded in the
//! lock's records) and, for the one running, its experiment and step read from its own `/data`
//! (`?since=` far ahead: the steps and the position, no points). Refreshed every 2 s by one task
//! (one file read per participant, one small request to the runner); each request only reads
//! the refreshed state.
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::lock::queue::{self, QueueStatus};

/// How often the room is read again.
pub(crate) const REFRESH: Duration = Duration::from_secs(2);

/// One participant of the room.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Participant {
    /// `running` (holds the lock) or `waiting`.
    pub state: &'static str,
    pub user: String,
    pub experiment: String,
    pub since: DateTime<Utc>,
    pub expected_start: Option<DateTime<Utc>>,
    pub expected_end: Option<DateTime<Utc>>,
    /// Their live page, only an `http://` URL (a record could hold anything).
    pub live: Option<String>,
    /// Where their run is, from their live page: `step 3/6 (hold), 21 of 30 s`.
    pub now: Option<String>,
    /// The knee their page found, in words.
    pub knee: Option<String>,
}

/// The room as `/data` serves it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RoomData {
    pub lock: String,
    pub updated: Option<DateTime<Utc>>,
    pub participants: Vec<Participant>,
    /// The rounds that held the lock and ended today (UTC), oldest first (`lock::done`).
    pub finished: Vec<crate::lock::done::Finished>,
    /// How long the last refresh took (ms).
    pub refresh_ms: f64,
}

/// A live page's URL as a record gives it, kept only when it is plain `http://host:port/`.
pub(crate) fn safe_url(u: Option<&str>) -> Option<String> {
    let u = u?;
    let rest = u.strip_prefix("http://")?;
    let ok = rest.len() < 200
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:[]/".contains(&b));
    ok.then(|| u.to_owned())
}

/// The room from the lock's queue (pure).
pub(crate) fn participants(q: &QueueStatus) -> Vec<Participant> {
    let mut v = Vec::new();
    if let Some(h) = &q.holder {
        v.push(Participant {
            state: "running",
            user: h.user.clone(),
            experiment: h.experiment.clone(),
            since: h.since,
            expected_start: Some(h.since),
            expected_end: h.expected_end,
            live: safe_url(h.live.as_deref()),
            now: None,
            knee: None,
        });
    }
    for w in &q.waiters {
        v.push(Participant {
            state: "waiting",
            user: w.waiter.user.clone(),
            experiment: w.waiter.experiment.clone(),
            since: w.waiter.since,
            expected_start: w.expected_start,
            expected_end: w.expected_end,
            live: safe_url(w.waiter.live.as_deref()),
            now: None,
            knee: None,
        });
    }
    v
}

/// What the runner's live `/data` says of where it is.
pub(crate) fn position(d: &serde_json::Value) -> (Option<String>, Option<String>) {
    let steps = d["steps"].as_array().map_or(0, Vec::len);
    let now = d["status"].as_str().map(|st| {
        format!(
            "{st}: step {}/{steps} ({}), {:.0} of {:.0} s",
            d["step"].as_u64().unwrap_or(0),
            d["phase"].as_str().unwrap_or("?"),
            d["now_s"].as_f64().unwrap_or(0.0),
            d["total_s"].as_f64().unwrap_or(0.0)
        )
    });
    (now, d["knee"]["why"].as_str().map(str::to_owned))
}

/// The shared room state and the task that refreshes it.
#[derive(Clone, Default)]
pub struct Room {
    data: Arc<Mutex<RoomData>>,
}

impl Room {
    /// Read the room once: the queue, then the runner's live page (500 ms at most).
    pub async fn refresh(&self, lock: &std::path::Path, client: &reqwest::Client) {
        let t0 = std::time::Instant::now();
        let q = queue::status(lock, Utc::now());
        let mut people = participants(&q);
        for p in people.iter_mut().filter(|p| p.state == "running") {
            let Some(url) = &p.live else { continue };
            let got = client.get(format!("{url}data?since=1e15")).send().await;
            if let Ok(r) = got
                && let Ok(d) = r.json::<serde_json::Value>().await
            {
                (p.now, p.knee) = position(&d);
            }
        }
        let mut g = self.data.lock().unwrap_or_else(|e| e.into_inner());
        *g = RoomData {
            lock: lock.display().to_string(),
            updated: Some(Utc::now()),
            participants: people,
            finished: crate::lock::done::today(lock, Utc::now()),
            refresh_ms: t0.elapsed().as_secs_f64() * 1000.0,
        };
    }

    /// Refresh every [`REFRESH`] until the task is dropped.
    pub(crate) fn spawn_refresh(&self, lock: std::path::PathBuf) -> tokio::task::JoinHandle<()> {
        let room = self.clone();
        tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .timeout(Duration::from_millis(500))
                .build()
                .unwrap_or_default();
            let mut tick = tokio::time::interval(REFRESH);
            loop {
                tick.tick().await;
                room.refresh(&lock, &client).await;
            }
        })
    }

    pub(crate) fn json(&self) -> Vec<u8> {
        let g = self.data.lock().unwrap_or_else(|e| e.into_inner());
        serde_json::to_vec(&*g).unwrap_or_default()
    }

    /// The room as it was last read.
    pub fn data(&self) -> RoomData {
        self.data.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The room's page: a table drawn from `/data` every 2 s, every text through `textContent`,
/// links only to the `http://` pages the server kept.
pub(crate) const PAGE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>perflab: the room</title>
<style>
body{font:16px/1.4 system-ui,sans-serif;margin:1em 2em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 10px;text-align:left}
.running{background:#d9f2d9}.note{color:#666}
</style></head><body>
<h1>perflab: the room</h1>
<div id="lock" class="note"></div>
<table><thead><tr><th>state</th><th>user</th><th>experiment</th><th>since</th><th>expected start</th><th>expected end</th><th>now</th><th>live page</th></tr></thead><tbody id="rows"></tbody></table>
<p id="knees"></p>
<h2>Finished today (UTC)</h2>
<table><thead><tr><th>ended</th><th>user</th><th>experiment</th><th>run</th><th>state</th><th>verdict</th></tr></thead><tbody id="done"></tbody></table>
<script>
"use strict";
function el(tag, attrs, parent, text) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  parent.appendChild(e);
  return e;
}
const hm = t => t ? new Date(t).toISOString().slice(11, 19) + "Z" : "?";
async function tick() {
  try {
    const r = await fetch("data" + location.search, {cache: "no-store"});
    if (r.ok) {
      const d = await r.json();
      document.getElementById("lock").textContent = `host lock ${d.lock}, read ${hm(d.updated)} in ${d.refresh_ms.toFixed(1)} ms`;
      const rows = document.getElementById("rows");
      rows.replaceChildren();
      const knees = document.getElementById("knees");
      knees.replaceChildren();
      for (const p of d.participants) {
        const tr = el("tr", {class: p.state}, rows);
        for (const v of [p.state, p.user, p.experiment, hm(p.since), hm(p.expected_start), hm(p.expected_end), p.now || ""]) el("td", {}, tr, v);
        const td = el("td", {}, tr);
        if (p.live && p.live.startsWith("http://")) el("a", {href: p.live}, td, p.live);
        if (p.knee) el("div", {}, knees, `${p.user}: ${p.knee}`);
      }
      if (!d.participants.length) el("tr", {}, rows).appendChild(document.createElement("td")).textContent = "nobody holds the lock or waits";
      const done = document.getElementById("done");
      done.replaceChildren();
      for (const f of d.finished.slice().reverse()) {
        const tr = el("tr", {}, done);
        for (const v of [hm(f.ended), f.user, f.experiment, f.run, f.state, f.verdict]) el("td", {}, tr, v);
      }
    }
  } catch (e) {}
  setTimeout(tick, 2000);
}
tick();
</script></body></html>
"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_urls_are_kept_from_the_records() {
        assert_eq!(
            safe_url(Some("http://127.0.0.1:4000/")).as_deref(),
            Some("http://127.0.0.1:4000/")
        );
        for bad in [
            "javascript:alert(1)",
            "https://x/",
            "http://a/\"><script>",
            "http://a b/",
            "file:///etc/passwd",
        ] {
            assert_eq!(safe_url(Some(bad)), None, "{bad}");
        }
    }

    #[test]
    fn the_runners_position_in_words() {
        let d = serde_json::json!({"status": "running", "step": 3, "phase": "hold",
            "now_s": 21.2, "total_s": 30.0, "steps": [{}, {}, {}, {}, {}, {}],
            "knee": {"target": 400, "why": "knee 400 rps: p95 > 200"}});
        let (now, knee) = position(&d);
        assert_eq!(now.as_deref(), Some("running: step 3/6 (hold), 21 of 30 s"));
        assert_eq!(knee.as_deref(), Some("knee 400 rps: p95 > 200"));
    }
}

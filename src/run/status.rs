//! `perflab status`: who holds the host lock (user, experiment, since, expected end), who waits
//! for it (user, experiment, expected end, first come first served) and the lab stacks on the
//! engine with their owners (kept by `perflab up` or `smoke --keep`, measuring, or left by a
//! gone owner), as text or JSON. The lock part needs no Docker: an engine that cannot be
//! reached is said, not an error.
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::lock::queue::{self, QueueStatus};
use crate::run::lifecycle::{self, StackRow};
use crate::run::outline::duration;

#[derive(Debug, Serialize)]
struct StatusJson<'a> {
    lock: &'a QueueStatus,
    stacks: Option<&'a [StackRow]>,
    stacks_error: Option<&'a str>,
}

/// The lock's queue and the engine's lab stacks now, as `perflab status` prints them (`json`:
/// `{"lock": {...}, "stacks": [...]}`).
pub(crate) fn render(json: bool) -> anyhow::Result<String> {
    let now = Utc::now();
    let q = queue::status(&crate::lock::lock_path(), now);
    let stacks = lifecycle::runtime()?.block_on(lifecycle::stacks());
    let mut out = String::new();
    if json {
        let (rows, err) = match &stacks {
            Ok(r) => (Some(r.as_slice()), None),
            Err(e) => (None, Some(e.as_str())),
        };
        let j = StatusJson {
            lock: &q,
            stacks: rows,
            stacks_error: err,
        };
        out = serde_json::to_string_pretty(&j)? + "\n";
    } else {
        render_lock(&mut out, &q, now);
        render_stacks(&mut out, &stacks);
    }
    Ok(out)
}

/// An instant of the lock's queue for people: its UTC time and how far off it is.
fn when(t: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    match t {
        Some(t) if t > now => format!(
            "{} (in {})",
            t.format("%H:%M:%SZ"),
            duration((t - now).num_seconds() as f64)
        ),
        Some(t) => format!("{} (overdue)", t.format("%H:%M:%SZ")),
        None => "unknown".into(),
    }
}

fn render_lock(out: &mut String, q: &QueueStatus, now: DateTime<Utc>) {
    out.push_str(&format!("host lock {}\n", q.lock.display()));
    let user = |u: &str| {
        if u.is_empty() {
            "?".to_string()
        } else {
            u.to_string()
        }
    };
    // the lock (a flock test) first, then what the records say
    match (&q.holder, q.held) {
        (Some(h), _) => out.push_str(&format!(
            "  held by {} (pid {}): {}, since {}, expected end {}\n",
            user(&h.user),
            h.pid,
            h.experiment,
            h.since.format("%H:%M:%SZ"),
            when(h.expected_end, now)
        )),
        (None, Some(true)) => out.push_str(&match q.held_by_pid {
            Some(p) => format!(
                "  held by pid {p}, which left no holder record (a tool, or an older perflab)\n"
            ),
            None => "  held, holder unknown (no record names the process holding it)\n".into(),
        }),
        (None, Some(false)) => out.push_str("  free\n"),
        (None, None) => out.push_str("  unknown: the lock file cannot be opened\n"),
    }
    for h in &q.stale_holders {
        out.push_str(&format!(
            "  recorded holder {} (pid {}): {}, since {}: not holding the lock, ignored\n",
            user(&h.user),
            h.pid,
            h.experiment,
            h.since.format("%Y-%m-%dT%H:%M:%SZ"),
        ));
    }
    render_stale_waiters(out, q);
    if q.waiters.is_empty() {
        out.push_str("  nobody waiting\n");
        return;
    }
    out.push_str(&format!(
        "  {} waiting, first come first served:\n",
        q.waiters.len()
    ));
    for (i, w) in q.waiters.iter().enumerate() {
        let holds = w
            .waiter
            .expected_s
            .map(|s| format!(", holds it about {}", duration(s as f64)))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {:>3}. {} (pid {}): {}, waiting since {}{holds}, expected end {}\n",
            i + 1,
            w.waiter.user,
            w.waiter.pid,
            w.waiter.experiment,
            w.waiter.since.format("%H:%M:%SZ"),
            when(w.expected_end, now)
        ));
    }
}

/// The queue's entries nobody waits for, with why.
fn render_stale_waiters(out: &mut String, q: &QueueStatus) {
    for s in &q.stale_waiters {
        let w = &s.waiter;
        out.push_str(&format!(
            "  stale queue entry {} (pid {} on {}): {}, since {}: {}; not waited for\n",
            w.user,
            w.pid,
            w.host,
            w.experiment,
            w.since.format("%Y-%m-%dT%H:%M:%SZ"),
            s.why
        ));
    }
}

fn render_stacks(out: &mut String, stacks: &Result<Vec<StackRow>, String>) {
    match stacks {
        Err(e) => out.push_str(&format!("lab stacks: unknown ({e})\n")),
        Ok(rows) if rows.is_empty() => out.push_str("lab stacks: none\n"),
        Ok(rows) => {
            out.push_str("lab stacks:\n");
            for r in rows {
                out.push_str(&format!(
                    "  {:<24} {:<5} {:<10} {:<12} {} object(s){}\n",
                    r.run_id,
                    r.lab,
                    r.state,
                    if r.user.is_empty() { "?" } else { &r.user },
                    r.objects,
                    match r.state {
                        "kept" => format!("; perflab down {} (its user)", r.run_id),
                        _ => String::new(),
                    }
                ));
            }
        }
    }
}

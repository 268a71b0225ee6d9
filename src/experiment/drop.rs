//! `load.drop:` (the drop profile's journeys and retrying clients, `drop.js`) and
//! `load.trigger:` (a CPU cut or a cache flush in one step): their checks. A weight table that
//! does not sum to 100, a retry budget outside 0-1, a trigger longer than its step: each an
//! error naming its field, with the fix.
use super::diag::Diagnostic;
use super::schema::{Experiment, Model, RetryPolicy, Script, TriggerKind};
use std::path::Path;

/// Most retries of one journey `load.drop.max_retries` takes.
const MAX_RETRIES: u32 = 100;

/// `load.drop`'s checks.
pub(crate) fn check_drop(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    let Some(p) = &e.load.drop else { return };
    let err = |field: &str, msg: String| Diagnostic::error(file, format!("load.drop.{field}"), msg);
    let pages: Vec<&str> = e
        .lab
        .endpoints()
        .iter()
        .map(|p| p.trim_start_matches('/'))
        .collect();
    for page in p.journeys.keys() {
        if !pages.contains(&page.as_str()) {
            d.push(
                err(
                    &format!("journeys.{page}"),
                    format!("`{page}` is not a page of the {} lab", e.lab),
                )
                .help(format!("journeys go to one of: {}", pages.join(", "))),
            );
        }
    }
    let sum: u64 = p.journeys.values().map(|w| u64::from(*w)).sum();
    if sum != 100 {
        d.push(
            err("journeys", format!("the journeys' weights sum to {sum}, not 100"))
                .help("give each page its percent of the journeys, e.g. the seed's home 40, landing 20, gacha 15, raffle 15, catalog 10"),
        );
    }
    if let Some(b) = p.retry_budget
        && !(0.0..=1.0).contains(&b)
    {
        d.push(
            err(
                "retry_budget",
                format!("{b}: a retry budget is a share of the requests, 0 to 1"),
            )
            .help("e.g. `retry_budget: 0.1`: at most one retry per ten first attempts"),
        );
    }
    if p.retry == RetryPolicy::None && p.retry_budget.is_some() {
        d.push(
            Diagnostic::warning(
                file,
                "load.drop.retry_budget",
                "has no effect: the clients do not retry (`retry: none`)",
            )
            .help("set `retry: immediate` or `retry: backoff`, or remove retry_budget"),
        );
    }
    if p.max_retries > MAX_RETRIES {
        d.push(err(
            "max_retries",
            format!("{}: at most {MAX_RETRIES}", p.max_retries),
        ));
    }
    if p.backoff_base_ms == 0 || p.backoff_cap_ms < p.backoff_base_ms {
        d.push(
            err(
                "backoff_cap_ms",
                format!(
                    "base {} ms, cap {} ms: the base must be > 0 and the cap at least the base",
                    p.backoff_base_ms, p.backoff_cap_ms
                ),
            )
            .help("e.g. base 100 ms, cap 2000 ms"),
        );
    }
    if p.items == 0 {
        d.push(
            err("items", "must be > 0".into())
                .help("the ids a cold page's journey picks from, e.g. 50"),
        );
    }
    if e.load.script != Script::Stepped || e.load.model != Model::Open {
        d.push(
            Diagnostic::error(file, "load.script", "the drop profile is an open load of arrivals with `script: stepped` (it runs drop.js)")
                .help("set `script: stepped` and `model: open`"),
        );
    }
}

/// `load.trigger`'s checks: it fits in its step with room to judge the recovery after it.
pub(crate) fn check_trigger(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    let Some(t) = &e.load.trigger else { return };
    let err =
        |field: &str, msg: String| Diagnostic::error(file, format!("load.trigger.{field}"), msg);
    let hold = f64::from(e.load.hold_s);
    if let Some(s) = t.step
        && (s == 0 || s as usize > e.load.steps.len())
    {
        d.push(
            err(
                "step",
                format!(
                    "{s}: the load has {} step(s), numbered from 1",
                    e.load.steps.len()
                ),
            )
            .help("remove `step` to put the trigger in the last step"),
        );
    }
    let finite = [t.at_s, t.for_s, t.recover_within_s]
        .iter()
        .all(|v| v.is_finite() && *v >= 0.0);
    if !finite {
        d.push(err(
            "at_s",
            "at_s, for_s and recover_within_s must be numbers >= 0".into(),
        ));
    } else if t.for_s >= hold {
        d.push(
            err("for_s", format!("{} s: the trigger is longer than its step (hold_s = {} s)", t.for_s, e.load.hold_s))
                .help("a trigger is short against its step: the goodput before it and after it are measured in the same step"),
        );
    } else if t.at_s + t.for_s > hold {
        d.push(
            err(
                "at_s",
                format!(
                    "{} s: the trigger must end within its step ({} s at most)",
                    t.at_s,
                    hold - t.for_s
                ),
            )
            .help("start it a third of the way into the step"),
        );
    } else if t.at_s + t.for_s + t.recover_within_s > hold {
        d.push(
            err(
                "recover_within_s",
                format!(
                    "{} s: past the step's end ({} s left after the trigger)",
                    t.recover_within_s,
                    hold - t.at_s - t.for_s
                ),
            )
            .help("lengthen hold_s, or state a shorter time to recover within"),
        );
    }
    if t.recover_within_s <= 0.0 {
        d.push(err(
            "recover_within_s",
            "must be > 0: the time goodput has to come back within".into(),
        ));
    }
    check_kind(file, e, d);
}

/// A CPU cut needs its share (0 to 1, not 0) and a length; a flush has neither; the role is one
/// of the lab's.
fn check_kind(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    let Some(t) = &e.load.trigger else { return };
    let err =
        |field: &str, msg: String| Diagnostic::error(file, format!("load.trigger.{field}"), msg);
    match t.kind {
        TriggerKind::Cpu => {
            match t.cut {
                Some(c) if c > 0.0 && c < 1.0 => {}
                c => d.push(
                    err(
                        "cut",
                        format!(
                            "{c:?}: a CPU cut takes away a share of the CPU, above 0 and below 1"
                        ),
                    )
                    .help("e.g. `cut: 0.9` leaves the container 10 % of its CPU"),
                ),
            }
            if t.for_s <= 0.0 {
                d.push(err(
                    "for_s",
                    "a CPU cut lasts some seconds: must be > 0".into(),
                ));
            }
        }
        TriggerKind::Flush => {
            if t.for_s != 0.0 || t.cut.is_some() {
                d.push(
                    err(
                        "kind",
                        "a flush is instant: it has no `for_s` or `cut`".into(),
                    )
                    .help("remove for_s and cut, or set `kind: cpu`"),
                );
            }
        }
    }
    let roles = crate::lab::descriptor(e.lab).info().roles;
    let role = t
        .role
        .as_deref()
        .unwrap_or(super::schema::DEFAULT_TRIGGER_ROLE);
    if t.kind == TriggerKind::Cpu && !roles.iter().any(|r| r.column() == role) {
        let names: Vec<_> = roles.iter().map(|r| r.column()).collect();
        d.push(
            err(
                "role",
                format!("`{role}` is not a container of the {} lab", e.lab),
            )
            .help(format!("one of: {}", names.join(", "))),
        );
    }
}

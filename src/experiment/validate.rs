//! Semantic checks on a parsed experiment or group, beyond what the types enforce.
use super::diag::{Diagnostic, did_you_mean};
pub(crate) use super::schema::valid_id;
use super::schema::*;
use crate::claim::quantities::Names;
use std::path::Path;

/// Little's-law VU need at the SLO for the largest open-model step: `max step x SLO`.
pub(crate) fn vus_needed_at_slo(load: &LoadSettings) -> u32 {
    let max = load.steps.iter().copied().max().unwrap_or(0) as f64;
    (max * load.slo_p95_ms / 1000.0).ceil() as u32
}

/// VUs needed so that no iteration is dropped before the client timeout: `max step x timeout`.
pub(crate) fn vus_needed_at_timeout(load: &LoadSettings) -> u32 {
    let max = load.steps.iter().copied().max().unwrap_or(0);
    max.saturating_mul(load.timeout_s)
}

/// The checks of a catalog file's experiment: [`check_experiment`]'s, and that a fitted plan
/// whose claims need a knee reaches past its ceiling (a property of the published steps and
/// rules, so not re-checked on `--set` or fitted values).
pub(crate) fn check_file(file: &Path, e: &Experiment, names: &dyn Names) -> Vec<Diagnostic> {
    let mut d = checks(file, e, Some(names));
    if let Some(fit) = &e.fit {
        super::reach::check_reach(file, e, fit, &mut d);
    }
    d
}

/// The checks of one experiment (errors and warnings) after `--set`: all but the claims' name
/// lookups, which `--set` cannot change (`claims::check_claims`). `file` names the source in
/// messages.
pub fn check_experiment(file: &Path, e: &Experiment) -> Vec<Diagnostic> {
    checks(file, e, None)
}

/// All checks of one experiment; the claims' names are looked up in `names` when given.
fn checks(file: &Path, e: &Experiment, names: Option<&dyn Names>) -> Vec<Diagnostic> {
    let mut d = Vec::new();
    let err = |field: &str, msg: String| Diagnostic::error(file, field, msg);
    if !valid_id(&e.id) {
        d.push(
            err("id", format!("`{}` is not a valid id", e.id))
                .help("use lowercase letters, digits and `-` (e.g. `exp2-mc80`)"),
        );
    }
    check_stack(file, e, &mut d);
    super::bounds::check_bounds(file, e, &mut d);
    check_load(file, e, &mut d);
    super::pause::check_pause(file, e, &mut d);
    super::actions::check_actions(file, e, &mut d);
    super::drop::check_drop(file, e, &mut d);
    super::drop::check_trigger(file, e, &mut d);
    super::claims::check_claims(file, e, names, &mut d);
    super::fit::check_fit(file, e, &mut d);
    d
}

/// Exactly the lab's own section under `stack:`.
fn check_sections(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    let s = &e.stack;
    for (lab, there) in s.sections() {
        if lab != e.lab && there {
            d.push(
                Diagnostic::error(
                    file,
                    format!("stack.{lab}"),
                    format!("does not apply to `lab: {}`", e.lab),
                )
                .help(format!(
                    "remove it; the settings of this lab go under `stack.{}`",
                    e.lab
                )),
            );
        }
        if lab == e.lab && !there {
            d.push(
                Diagnostic::error(
                    file,
                    "stack",
                    format!("missing section `{lab}` for `lab: {lab}`"),
                )
                .help(format!("add `stack.{lab}:` with the app's settings")),
            );
        }
    }
}

/// The name of a claim saying that no request fails (`failed_rate` or `failed` with `max: 0` or
/// `equals: 0`), if the experiment has one.
fn claims_no_errors(e: &Experiment) -> Option<&str> {
    use crate::claim::schema::Bound;
    let zero = |b: &Option<Bound>| matches!(b, Some(Bound::Num(v)) if *v == 0.0);
    e.expect
        .iter()
        .find(|c| {
            matches!(c.value.trim(), "failed_rate" | "failed") && (zero(&c.max) || zero(&c.equals))
        })
        .map(|c| c.name.as_str())
}

/// The lab's own section, then every section's checks as its type declares them
/// (`lab::settings::Section::check`).
fn check_stack(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    check_sections(file, e, d);
    let no_errors = claims_no_errors(e);
    for i in e.stack.issues() {
        let fatal = i.fatal_if_no_errors_claimed && no_errors.is_some();
        let diag = match i.warning && !fatal {
            false if fatal => {
                let why = no_errors.unwrap_or_default();
                let msg = format!("{} while claim `{why}` says no request fails", i.message);
                Diagnostic::error(file, i.field, msg)
            }
            false => Diagnostic::error(file, i.field, i.message),
            true => Diagnostic::warning(file, i.field, i.message),
        };
        d.push(Diagnostic {
            help: i.help,
            ..diag
        });
    }
}

fn check_load(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    let l = &e.load;
    let err = |field: &str, msg: String| Diagnostic::error(file, field, msg);
    let allowed = e.lab.endpoints();
    if !allowed.contains(&l.endpoint.as_str()) {
        let mut help = format!("the {} lab serves {}", e.lab, allowed.join(", "));
        if let Some(s) = did_you_mean(&l.endpoint, allowed.iter().copied()) {
            help = format!("did you mean `{s}`? {help}");
        }
        d.push(
            err(
                "load.endpoint",
                format!("`{}` is not an endpoint of the {} lab", l.endpoint, e.lab),
            )
            .help(help),
        );
    }
    if l.steps.is_empty() {
        d.push(
            err("load.steps", "is empty".into())
                .help("list the offered load per step, e.g. [60, 90, 120]"),
        );
    }
    for (i, w) in l.steps.windows(2).enumerate() {
        if w[1] <= w[0] {
            d.push(
                err(
                    &format!("load.steps[{}]", i + 1),
                    format!(
                        "steps must be strictly increasing: {} follows {}",
                        w[1], w[0]
                    ),
                )
                .help("sort the steps and remove duplicates"),
            );
        }
    }
    if l.steps.first() == Some(&0) {
        d.push(err("load.steps[0]", "steps must be > 0".into()));
    }
    check_limits(file, l, d);
    check_script(file, l, d);
    check_recover(file, l, d);
    match l.model {
        Model::Closed => check_closed(file, l, d),
        Model::Open => check_open(file, l, d),
    }
}

/// Durations, SLOs and the error budget.
fn check_limits(file: &Path, l: &LoadSettings, d: &mut Vec<Diagnostic>) {
    let err = |field: &str, msg: String| Diagnostic::error(file, field, msg);
    if l.hold_s == 0 {
        d.push(err(
            "load.hold_s",
            "must be > 0 (the measured window of each step)".into(),
        ));
    }
    if l.timeout_s == 0 {
        d.push(err("load.timeout_s", "must be > 0".into()));
    }
    if l.slo_p95_ms.is_nan() || l.slo_p95_ms <= 0.0 {
        d.push(err("load.slo_p95_ms", "must be > 0".into()));
    }
    if let Some(p99) = l.slo_p99_ms
        && p99 < l.slo_p95_ms
    {
        d.push(err(
            "load.slo_p99_ms",
            format!("{p99} is below slo_p95_ms {}", l.slo_p95_ms),
        ));
    }
    if !(l.error_budget > 0.0 && l.error_budget < 1.0) {
        d.push(err(
            "load.error_budget",
            "must be a fraction in (0, 1), e.g. 0.01 = 1 %".into(),
        ));
    }
}

/// The abort guard, the script's constraints, warm-up and VU settings.
fn check_script(file: &Path, l: &LoadSettings, d: &mut Vec<Diagnostic>) {
    let err = |field: &str, msg: String| Diagnostic::error(file, field, msg);
    if let Some(a) = l.abort_p95_ms {
        if a < l.slo_p95_ms {
            d.push(err("load.abort_p95_ms", format!("{a} is below the SLO {}", l.slo_p95_ms)).help(
                "the abort guard is a loose safety brake on the cumulative p95 (default 2.5 x SLO)",
            ));
        }
        if l.script == Script::Breakpoint {
            d.push(
                err(
                    "load.abort_p95_ms",
                    "only stepped.js has ABORT_P95_MS".into(),
                )
                .help(
                    "breakpoint.js aborts on p95 of hold windows against the SLO; remove this key",
                ),
            );
        }
    }
    if l.script == Script::Stepped {
        if l.ramp_s != 0 || l.warmup_s != 0 {
            d.push(
                err(
                    "load.script",
                    "stepped.js jumps to each rate and has no warm-up scenario".into(),
                )
                .help("set ramp_s and warmup_s to 0, or use `script: breakpoint`"),
            );
        }
        if l.model == Model::Closed {
            d.push(
                err(
                    "load.model",
                    "stepped.js is open-model only (ramping-arrival-rate)".into(),
                )
                .help("use `script: breakpoint` for the closed model"),
            );
        }
    }
    if l.warmup_s > 0 && l.warmup_rps == 0 {
        d.push(err(
            "load.warmup_rps",
            "must be > 0 when warmup_s > 0".into(),
        ));
    }
    if l.pre_vus > l.max_vus {
        d.push(err(
            "load.pre_vus",
            format!("{} exceeds max_vus {}", l.pre_vus, l.max_vus),
        ));
    }
}

/// The recovery phase: both keys or neither, stepped.js open load without abort guards (they
/// would stop the load before it drops), and a drop below the peak (the top step; the fitted
/// knee is `plan::fit`'s to check).
fn check_recover(file: &Path, l: &LoadSettings, d: &mut Vec<Diagnostic>) {
    let err = |field: &str, msg: String| Diagnostic::error(file, field, msg);
    let (rps, secs) = match (l.recover_rps, l.recover_s) {
        (None, None) => return,
        (Some(r), Some(s)) => (r, s),
        (Some(_), None) => {
            d.push(
                err("load.recover_s", "is missing: recover_rps needs it".into())
                    .help("add `recover_s: 60` (how long the drop is held), or remove recover_rps"),
            );
            return;
        }
        (None, Some(_)) => {
            d.push(
                err("load.recover_rps", "is missing: recover_s needs it".into())
                    .help("add `recover_rps:` (half the knee), or remove recover_s"),
            );
            return;
        }
    };
    if rps == 0 {
        d.push(
            err("load.recover_rps", "must be > 0 requests/s".into())
                .help("half the knee, as seed 002's stress test ends"),
        );
    }
    let peak = l.steps.iter().copied().max().unwrap_or(0);
    if rps >= peak && peak > 0 {
        d.push(
            err(
                "load.recover_rps",
                format!("{rps} is not below the peak (top step {peak}): the load never drops"),
            )
            .help(format!(
                "a rate below the knee: half of it (e.g. {})",
                peak / 3
            )),
        );
    }
    if secs == 0 {
        d.push(err("load.recover_s", "must be > 0 seconds".into()));
    }
    if l.script != Script::Stepped || l.model != Model::Open {
        d.push(
            err(
                "load.recover_rps",
                "only stepped.js's open load has a recovery phase".into(),
            )
            .help("use `script: stepped` and `model: open`, or remove recover_rps"),
        );
    }
    if l.abort {
        d.push(
            err("load.abort", "must be false with a recovery phase".into()).help(
                "the abort guards stop the load past the knee, before it drops: `abort: false`",
            ),
        );
    }
}

fn check_closed(file: &Path, l: &LoadSettings, d: &mut Vec<Diagnostic>) {
    match l.think_time_s {
        None => d.push(
            Diagnostic::error(
                file,
                "load.think_time_s",
                "the closed model needs a think time",
            )
            .help("add `think_time_s: 0.2` (the article's SLEEP) to `load:`"),
        ),
        Some(z) if z.is_nan() || z <= 0.0 => {
            d.push(Diagnostic::error(file, "load.think_time_s", "must be > 0"))
        }
        _ => {}
    }
    let max = l.steps.iter().copied().max().unwrap_or(0);
    if l.max_vus < max {
        d.push(
            Diagnostic::error(
                file,
                "load.max_vus",
                format!("{} is below the largest VU step {max}", l.max_vus),
            )
            .help("closed model: the steps are VUs; set max_vus to the largest step"),
        );
    }
}

fn check_open(file: &Path, l: &LoadSettings, d: &mut Vec<Diagnostic>) {
    if l.think_time_s.is_some() {
        d.push(
            Diagnostic::error(
                file,
                "load.think_time_s",
                "think time applies only to `model: closed`",
            )
            .help("remove it: in the open model the arrival rate sets the pace"),
        );
    }
    check_vu_cap(file, l, d);
}

/// The VU cap of an open load against what its top step needs: Little's law at the SLO (below
/// it, an error) and at the client timeout (below it, a warning: k6 drops iterations before
/// requests time out). A cap kept on purpose (the article's harness values, a demo of the cap)
/// states why in `load.vu_cap_reason`, which accepts both; a reason for a cap that covers both
/// needs is stale.
fn check_vu_cap(file: &Path, l: &LoadSettings, d: &mut Vec<Diagnostic>) {
    let max = l.steps.iter().copied().max().unwrap_or(0);
    let (at_slo, at_timeout) = (vus_needed_at_slo(l), vus_needed_at_timeout(l));
    let why = "or state why the cap is intended in `load.vu_cap_reason`";
    match &l.vu_cap_reason {
        Some(_) if l.max_vus >= at_slo && (l.max_vus >= at_timeout || max == 0) => d.push(
            Diagnostic::warning(
                file,
                "load.vu_cap_reason",
                format!(
                    "max_vus {} already covers what the top step needs (Little's law {at_slo} at the SLO, {at_timeout} at the timeout)",
                    l.max_vus
                ),
            )
            .help("remove vu_cap_reason"),
        ),
        Some(_) => {}
        None if l.max_vus < at_slo => d.push(
            Diagnostic::error(
                file,
                "load.max_vus",
                format!(
                    "{} VUs cannot hold {max} rps at the SLO: Little's law needs {max} x {} s = {at_slo}",
                    l.max_vus,
                    l.slo_p95_ms / 1000.0
                ),
            )
            .help(format!("raise max_vus to >= {at_slo}, {why}")),
        ),
        None if l.max_vus < at_timeout && max > 0 => d.push(
            Diagnostic::warning(
                file,
                "load.max_vus",
                format!(
                    "{} < {max} rps x {} s timeout = {at_timeout}: at {max} rps k6 drops iterations \
                     (Insufficient VUs) once latency passes {:.2} s, before the client timeout",
                    l.max_vus,
                    l.timeout_s,
                    l.max_vus as f64 / max as f64
                ),
            )
            .help(format!("raise max_vus to >= {at_timeout}, lower timeout_s, {why}")),
        ),
        None => {}
    }
}

/// Checks of one group that need no catalog (the catalog checks members and cycles).
pub(crate) fn check_group(file: &Path, g: &Group) -> Vec<Diagnostic> {
    let mut d = Vec::new();
    if !valid_id(&g.id) {
        d.push(
            Diagnostic::error(file, "id", format!("`{}` is not a valid id", g.id))
                .help("use lowercase letters, digits and `-`"),
        );
    }
    if g.members.is_empty() {
        d.push(Diagnostic::error(
            file,
            "members",
            "a group needs at least one member",
        ));
    }
    if g.members.iter().any(|m| m == &g.id) {
        d.push(Diagnostic::error(
            file,
            "members",
            "a group cannot contain itself",
        ));
    }
    d
}

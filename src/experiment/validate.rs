//! Semantic checks on a parsed experiment or group, beyond what the types enforce.
use super::diag::{Diagnostic, did_you_mean};
use super::schema::*;
use std::path::Path;

/// Little's-law VU need at the SLO for the largest open-model step: `max step x SLO`.
pub fn vus_needed_at_slo(load: &LoadSettings) -> u32 {
    let max = load.steps.iter().copied().max().unwrap_or(0) as f64;
    (max * load.slo_p95_ms / 1000.0).ceil() as u32
}

/// VUs needed so that no iteration is dropped before the client timeout: `max step x timeout`.
pub fn vus_needed_at_timeout(load: &LoadSettings) -> u32 {
    load.steps
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .saturating_mul(load.timeout_s)
}

/// Is `id` a valid catalog id (lowercase letters, digits, `-`)?
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// All checks of one experiment (errors and warnings). `file` names the source in messages.
pub fn check_experiment(file: &Path, e: &Experiment) -> Vec<Diagnostic> {
    let mut d = Vec::new();
    let err = |field: &str, msg: String| Diagnostic::error(file, field, msg);
    if !valid_id(&e.id) {
        d.push(
            err("id", format!("`{}` is not a valid id", e.id))
                .help("use lowercase letters, digits and `-` (e.g. `exp2-mc80`)"),
        );
    }
    check_stack(file, e, &mut d);
    super::bounds::check_load_bounds(file, &e.load, &mut d);
    check_load(file, e, &mut d);
    check_claims(file, e, &mut d);
    d
}

fn check_stack(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    let s = &e.stack;
    let present = [
        (Lab::Php, s.php.is_some()),
        (Lab::Node, s.node.is_some()),
        (Lab::Demo, s.demo.is_some()),
    ];
    for (lab, there) in present {
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
    if s.postgres.max_connections == 0 {
        d.push(Diagnostic::error(
            file,
            "stack.postgres.max_connections",
            "must be > 0",
        ));
    }
    if let Some(p) = &s.php {
        if p.max_children == 0 {
            d.push(Diagnostic::error(
                file,
                "stack.php.max_children",
                "must be > 0",
            ));
        }
        if p.backlog == 0 {
            d.push(Diagnostic::error(
                file,
                "stack.php.backlog",
                "must be > 0 (article: 511)",
            ));
        }
        if p.persistent && p.max_children > s.postgres.max_connections {
            d.push(Diagnostic::warning(
                file,
                "stack.php.max_children",
                format!(
                    "{} persistent workers > postgres max_connections {}: {} workers will get \
                     `too many clients` (intended only in exp2-pgconn)",
                    p.max_children,
                    s.postgres.max_connections,
                    p.max_children - s.postgres.max_connections
                ),
            ));
        }
    }
    if let Some(n) = &s.node {
        for (f, v) in [
            ("processes", n.processes),
            ("pool_max", n.pool_max),
            ("pg_conn_timeout_ms", n.pg_conn_timeout_ms),
        ] {
            if v == 0 {
                d.push(Diagnostic::error(
                    file,
                    format!("stack.node.{f}"),
                    "must be > 0",
                ));
            }
        }
    }
    if let Some(m) = &s.demo
        && (m.workers == 0 || m.service_ms == 0)
    {
        d.push(Diagnostic::error(
            file,
            "stack.demo",
            "workers and service_ms must be > 0",
        ));
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
    match l.model {
        Model::Closed => check_closed(file, l, d),
        Model::Open => check_open(file, l, d),
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
    let max = l.steps.iter().copied().max().unwrap_or(0);
    let need = vus_needed_at_slo(l);
    if l.max_vus < need {
        match &l.vu_cap_reason {
            None => d.push(
                Diagnostic::error(
                    file,
                    "load.max_vus",
                    format!(
                        "{} VUs cannot hold {max} rps at the SLO: Little's law needs {max} x {} s = {need}",
                        l.max_vus,
                        l.slo_p95_ms / 1000.0
                    ),
                )
                .help(format!(
                    "raise max_vus to >= {need}, or state why the cap is intended in `load.vu_cap_reason`"
                )),
            ),
            Some(_) => d.push(Diagnostic::warning(
                file,
                "load.max_vus",
                format!("{} VUs are below the Little's-law need {need} on purpose (vu_cap_reason)", l.max_vus),
            )),
        }
    } else if l.vu_cap_reason.is_some() {
        d.push(
            Diagnostic::warning(
                file,
                "load.vu_cap_reason",
                "max_vus already covers the Little's-law need",
            )
            .help("remove vu_cap_reason"),
        );
    }
    let at_timeout = vus_needed_at_timeout(l);
    if l.max_vus < at_timeout && max > 0 {
        d.push(Diagnostic::warning(
            file,
            "load.max_vus",
            format!(
                "{} < {max} rps x {} s timeout = {at_timeout}: at {max} rps k6 drops iterations \
                 (Insufficient VUs) once latency passes {:.2} s, before the client timeout",
                l.max_vus,
                l.timeout_s,
                l.max_vus as f64 / max as f64
            ),
        ));
    }
}

/// The `expect:` claims: names unique, expressions parse, every name is a known quantity that
/// the claim can read (step quantities need `at:` or a selector, config values of the lab), one
/// comparison, `needs` on config only. `against` ids are checked by the catalog.
fn check_claims(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    use crate::verify::{eval, expr};
    let mut names: Vec<&str> = Vec::new();
    for (i, c) in e.expect.iter().enumerate() {
        let f = |sub: &str| {
            if sub.is_empty() {
                format!("expect[{i}]")
            } else {
                format!("expect[{i}].{sub}")
            }
        };
        if !valid_id(&c.name) {
            d.push(
                Diagnostic::error(
                    file,
                    f("name"),
                    format!("`{}` is not a valid claim name", c.name),
                )
                .help("use lowercase letters, digits and `-` (e.g. `error-rate`)"),
            );
        }
        if names.contains(&c.name.as_str()) {
            d.push(Diagnostic::error(
                file,
                f("name"),
                format!("duplicate claim name `{}`", c.name),
            ));
        }
        names.push(&c.name);
        if c.claim.trim().is_empty() {
            d.push(
                Diagnostic::error(file, f("claim"), "is empty")
                    .help("state the finding in one sentence"),
            );
        }
        if let Some(a) = &c.against
            && (!valid_id(a) || a == &e.id)
        {
            d.push(
                Diagnostic::error(
                    file,
                    f("against"),
                    format!("`{a}` cannot be compared against"),
                )
                .help("name another experiment of the catalog"),
            );
        }
        if let Some(at) = &c.at
            && let Err(m) = eval::parse_at(at)
        {
            let word = match at {
                StepAt::Name(n) => n.as_str(),
                StepAt::Target(_) => "",
            };
            let allowed = [
                "every",
                "lowest",
                "top",
                "knee",
                "last_passing",
                "below_knee",
            ];
            let mut help = format!(
                "allowed values: {}, or a step's target from load.steps",
                allowed.join(", ")
            );
            if let Some(s) = did_you_mean(word, allowed) {
                help = format!("did you mean `{s}`? {help}");
            }
            d.push(Diagnostic::error(file, f("at"), m).help(help));
        }
        if let Some(StepAt::Target(t)) = &c.at
            && !e.load.steps.contains(t)
        {
            d.push(
                Diagnostic::error(file, f("at"), format!("step {t} is not in load.steps"))
                    .help(format!("steps: {:?}", e.load.steps)),
            );
        }
        let compiled = match eval::compile(c) {
            Ok(x) => x,
            Err(errs) => {
                // `at` was reported above with its allowed values
                for (field, m) in errs.into_iter().filter(|(f, _)| f != "at") {
                    d.push(Diagnostic::error(file, f(&field), m));
                }
                continue;
            }
        };
        let mut exprs: Vec<(String, &expr::Expr, bool)> =
            vec![("value".into(), &compiled.value, false)];
        match &compiled.cmp {
            eval::Comparison::Range { min, max } => {
                if let Some((_, x)) = min {
                    exprs.push(("min".into(), x, false));
                }
                if let Some((_, x)) = max {
                    exprs.push(("max".into(), x, false));
                }
            }
            eval::Comparison::Equals(_, x) => exprs.push(("equals".into(), x, false)),
            eval::Comparison::Near(_, x, _) => exprs.push(("near".into(), x, false)),
        }
        for (k, (_, x)) in compiled.needs.iter().enumerate() {
            exprs.push((format!("needs[{k}]"), x, true));
        }
        for (field, x, config_only) in exprs {
            for m in check_expr(e, c, x, compiled.at.is_some(), config_only) {
                let (msg, help) = m;
                let mut diag = Diagnostic::error(file, f(&field), msg);
                if let Some(h) = help {
                    diag = diag.help(h);
                }
                d.push(diag);
            }
        }
    }
}

/// Problems with the names and functions of one expression: (message, help).
fn check_expr(
    e: &Experiment,
    c: &Claim,
    x: &crate::verify::expr::Expr,
    has_at: bool,
    config_only: bool,
) -> Vec<(String, Option<String>)> {
    use crate::verify::expr::Selector;
    use crate::verify::quantity::{self, Scope};
    let mut out = Vec::new();
    for n in x.names() {
        let Some(q) = quantity::lookup(&n.path) else {
            let all = quantity::all_names();
            let mut help = "`perflab verify --quantities` lists the names".to_string();
            if let Some(s) = did_you_mean(&n.path, all.iter().map(String::as_str)) {
                help = format!("did you mean `{s}`? {help}");
            }
            out.push((format!("unknown quantity `{}`", n.path), Some(help)));
            continue;
        };
        if n.against && c.against.is_none() {
            out.push((
                format!(
                    "`{}` reads another run but the claim has no `against:`",
                    n.text
                ),
                Some("add `against: <experiment id>`".into()),
            ));
        }
        if config_only && q.scope != Scope::Config {
            out.push((
                format!("`{}` is a measured {} quantity; `needs` reads only the run's config and CPU layout", n.text, q.scope.as_str()),
                Some("e.g. `app_cpus >= 2`, `max_children > max_connections`".into()),
            ));
            continue;
        }
        if let Some(lab) = q.lab
            && !n.against
            && lab != e.lab
        {
            out.push((
                format!(
                    "`{}` is a {lab} setting; this is a {} experiment",
                    n.path, e.lab
                ),
                None,
            ));
        }
        match (q.scope, n.selector) {
            (Scope::Step, None) if !has_at => out.push((
                format!("`{}` is a step quantity and the claim has no `at:`", n.text),
                Some(format!(
                    "add `at: every|lowest|top|knee|last_passing|below_knee|<step>` or qualify it: `knee.{}`",
                    n.path
                )),
            )),
            (Scope::Run | Scope::Config, Some(sel)) => out.push((
                format!("`{}`: `{}` is a {} quantity, not a step's", n.text, n.path, q.scope.as_str()),
                Some(format!("drop `{sel}.`")),
            )),
            (Scope::Step, Some(Selector::Target(t))) if !n.against && !e.load.steps.contains(&t) => {
                out.push((
                    format!("`{}`: step {t} is not in load.steps", n.text),
                    Some(format!("steps: {:?}", e.load.steps)),
                ))
            }
            _ => {}
        }
    }
    for (f, args) in x.calls() {
        let Some((_, scope, kinds, help)) = quantity::FUNCTIONS.iter().find(|x| x.0 == f) else {
            let names: Vec<&str> = quantity::FUNCTIONS.iter().map(|x| x.0).collect();
            let mut help = format!("functions: {}", names.join(", "));
            if let Some(s) = did_you_mean(f, names.iter().copied()) {
                help = format!("did you mean `{s}`? {help}");
            }
            out.push((format!("unknown function `{f}`"), Some(help)));
            continue;
        };
        use crate::verify::expr::Arg;
        let ok = match *kinds {
            "n+" => !args.is_empty() && args.iter().all(|a| matches!(a, Arg::Expr(_))),
            k => {
                k.len() == args.len()
                    && k.chars().zip(args).all(|(c, a)| match c {
                        's' => matches!(a, Arg::Str(_)),
                        _ => matches!(a, Arg::Expr(_)),
                    })
            }
        };
        if !ok {
            out.push((format!("wrong arguments to `{f}`"), Some(help.to_string())));
        }
        if config_only && matches!(f, "log" | "log_lines" | "saturated" | "node_error") {
            out.push((
                format!("`{f}` reads measurements; `needs` reads only the config"),
                None,
            ));
        } else if *scope == Scope::Step && !has_at {
            out.push((
                format!("`{f}()` reads a step and the claim has no `at:`"),
                Some("add `at: knee` (or every, top, ...)".into()),
            ));
        }
    }
    out
}

/// Checks of one group that need no catalog (the catalog checks members and cycles).
pub fn check_group(file: &Path, g: &Group) -> Vec<Diagnostic> {
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

//! Checks of an experiment's `expect:` claims: names unique, expressions parse (`claim`), every
//! name a known quantity the claim can read, one comparison, `needs` on config only.
use super::diag::{Diagnostic, did_you_mean};
use super::schema::valid_id;
use super::schema::{Claim, Experiment, StepAt};
use crate::claim::expr::{Arg, Expr, Name};
use crate::claim::quantities::{Names, Scope};
use crate::claim::{Comparison, Compiled, Selector, compile, parse_at};
use std::path::Path;

/// A problem with one expression: (message, help).
type Problem = (String, Option<String>);

/// The `expect:` claims: names unique, expressions parse, every name is a known quantity that
/// the claim can read (step quantities need `at:` or a selector, config values of the lab), one
/// comparison, `needs` on config only. `against` ids are checked by the catalog.
///
/// `registry` holds the quantities (`verify::quantities::Quantities`, handed down by
/// whoever loads the catalog). Without it (`--set` re-checking a catalog experiment, whose
/// claims, lab and names `--set` cannot change) the names are not looked up again; a step
/// selector is still checked against the new `load.steps`.
pub(super) fn check_claims(
    file: &Path,
    e: &Experiment,
    registry: Option<&dyn Names>,
    d: &mut Vec<Diagnostic>,
) {
    let mut names: Vec<&str> = Vec::new();
    for (i, c) in e.expect.iter().enumerate() {
        let f = |sub: &str| {
            if sub.is_empty() {
                format!("expect[{i}]")
            } else {
                format!("expect[{i}].{sub}")
            }
        };
        check_written(file, e, c, &names, &f, d);
        names.push(&c.name);
        check_at(file, e, c, &f, d);
        let compiled = match compile(c) {
            Ok(x) => x,
            Err(errs) => {
                // `at` was reported above with its allowed values
                for (field, m) in errs.into_iter().filter(|(f, _)| f != "at") {
                    d.push(Diagnostic::error(file, f(&field), m));
                }
                continue;
            }
        };
        for (field, x, config_only) in claim_exprs(&compiled) {
            let at = compiled.at.is_some();
            for (msg, help) in check_expr(e, c, x, registry, at, config_only) {
                let mut diag = Diagnostic::error(file, f(&field), msg);
                if let Some(h) = help {
                    diag = diag.help(h);
                }
                d.push(diag);
            }
        }
    }
}

/// The claim's name (valid, not in `seen`), sentence and `against` id.
fn check_written(
    file: &Path,
    e: &Experiment,
    c: &Claim,
    seen: &[&str],
    f: &dyn Fn(&str) -> String,
    d: &mut Vec<Diagnostic>,
) {
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
    if seen.contains(&c.name.as_str()) {
        d.push(Diagnostic::error(
            file,
            f("name"),
            format!("duplicate claim name `{}`", c.name),
        ));
    }
    if c.claim.trim().is_empty() {
        d.push(
            Diagnostic::error(file, f("claim"), "is empty")
                .help("state the finding in one sentence"),
        );
    }
    if let Some(r) = &c.refuted {
        check_refuted(file, r, f, d);
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
}

/// `refuted:` says why with something to read (bounded) and points at a docs page's section.
/// Whether that page and section exist is the docs tests' to check (the catalog may be read
/// without the repository's docs beside it).
fn check_refuted(
    file: &Path,
    r: &crate::claim::Refuted,
    f: &dyn Fn(&str) -> String,
    d: &mut Vec<Diagnostic>,
) {
    let len = r.why.chars().count();
    if r.why.trim().is_empty() || len > crate::claim::Refuted::MAX_WHY {
        d.push(
            Diagnostic::error(
                file,
                f("refuted.why"),
                format!(
                    "is {len} characters; a refutation says what was measured in 1-{}",
                    crate::claim::Refuted::MAX_WHY
                ),
            )
            .help("the numbers against the claim in a sentence or two; the journal goes in docs/"),
        );
    }
    if !r.is_docs_section() {
        d.push(
            Diagnostic::error(
                file,
                f("refuted.evidence"),
                format!("`{}` is not a docs section", r.evidence),
            )
            .help("write `docs/<page>.md#<anchor>`, e.g. `docs/remedies.md#one-full-round-2026-12-07`"),
        );
    }
}

/// `at:` a known selector, or a step of `load.steps`.
fn check_at(
    file: &Path,
    e: &Experiment,
    c: &Claim,
    f: &dyn Fn(&str) -> String,
    d: &mut Vec<Diagnostic>,
) {
    if let Some(at) = &c.at
        && let Err(m) = parse_at(at)
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
}

/// The compiled claim's expressions: (field, expression, reads only the config).
fn claim_exprs(c: &Compiled) -> Vec<(String, &Expr, bool)> {
    let mut exprs: Vec<(String, &Expr, bool)> = vec![("value".into(), &c.value, false)];
    match &c.cmp {
        Comparison::Range { min, max } => {
            if let Some((_, x)) = min {
                exprs.push(("min".into(), x, false));
            }
            if let Some((_, x)) = max {
                exprs.push(("max".into(), x, false));
            }
        }
        Comparison::Equals(_, x) => exprs.push(("equals".into(), x, false)),
        Comparison::Near(_, x, _) => exprs.push(("near".into(), x, false)),
    }
    for (k, (_, x)) in c.needs.iter().enumerate() {
        exprs.push((format!("needs[{k}]"), x, true));
    }
    exprs
}

/// Problems with the names and functions of one expression.
fn check_expr(
    e: &Experiment,
    c: &Claim,
    x: &Expr,
    names: Option<&dyn Names>,
    has_at: bool,
    config_only: bool,
) -> Vec<Problem> {
    let mut out = Vec::new();
    if let Some(m) = x.constant_fault() {
        out.push((m, Some("a claim compares finite numbers".into())));
    }
    let Some(names) = names else {
        for n in x.names() {
            check_selector_step(e, n, &mut out);
        }
        return out;
    };
    for n in x.names() {
        check_name(e, c, n, names, has_at, config_only, &mut out);
    }
    for (f, args) in x.calls() {
        let (f, against) = match f.strip_prefix("against.") {
            Some(g) => (g, true),
            None => (f, false),
        };
        if against {
            check_against_call(c, f, names, &mut out);
        }
        check_call(f, args, names, has_at, config_only, &mut out);
    }
    out
}

/// A name's step selector (`step550.p50_ms`) names a step of `load.steps`.
fn check_selector_step(e: &Experiment, n: &Name, out: &mut Vec<Problem>) {
    if let Some(Selector::Target(t)) = n.selector
        && !n.against
        && !e.load.steps.contains(&t)
    {
        out.push((
            format!("`{}`: step {t} is not in load.steps", n.text),
            Some(format!("steps: {:?}", e.load.steps)),
        ))
    }
}

/// One name: a known quantity, of this lab, read where its scope allows.
fn check_name(
    e: &Experiment,
    c: &Claim,
    n: &Name,
    names: &dyn Names,
    has_at: bool,
    config_only: bool,
    out: &mut Vec<Problem>,
) {
    let Some(q) = names.quantity(&n.path) else {
        let all = names.names();
        let mut help = "`perflab verify --quantities` lists the names".to_string();
        if let Some(s) = did_you_mean(&n.path, all.iter().map(String::as_str)) {
            help = format!("did you mean `{s}`? {help}");
        }
        out.push((format!("unknown quantity `{}`", n.path), Some(help)));
        return;
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
        return;
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
        (Scope::Step, Some(Selector::Target(_))) => check_selector_step(e, n, out),
        _ => {}
    }
}

/// One function call: a known function, its arguments of the right kinds, readable here.
fn check_call(
    f: &str,
    args: &[Arg],
    registry: &dyn Names,
    has_at: bool,
    config_only: bool,
    out: &mut Vec<Problem>,
) {
    let Some(func) = registry.function(f) else {
        let names = registry.function_names();
        let mut help = format!("functions: {}", names.join(", "));
        if let Some(s) = did_you_mean(f, names.iter().copied()) {
            help = format!("did you mean `{s}`? {help}");
        }
        out.push((format!("unknown function `{f}`"), Some(help)));
        return;
    };
    let ok = match func.args {
        "n+" => !args.is_empty() && args.iter().all(|a| matches!(a, Arg::Expr(_))),
        k => {
            k.len() == args.len()
                && k.chars().zip(args).all(|(c, a)| match c {
                    's' | 'q' => matches!(a, Arg::Str(_)),
                    _ => matches!(a, Arg::Expr(_)),
                })
        }
    };
    check_quantity_args(f, func.args, args, registry, out);
    if !ok {
        out.push((
            format!("wrong arguments to `{f}`"),
            Some(func.help.to_string()),
        ));
    }
    if config_only && func.measured {
        out.push((
            format!("`{f}` reads measurements; `needs` reads only the config"),
            None,
        ));
    } else if func.scope == Scope::Step && !has_at {
        out.push((
            format!("`{f}()` reads a step and the claim has no `at:`"),
            Some("add `at: knee` (or every, top, ...)".into()),
        ));
    }
}

/// `against.f(...)`: the claim names the other experiment, and `f` reads a whole run.
fn check_against_call(c: &Claim, f: &str, registry: &dyn Names, out: &mut Vec<Problem>) {
    if c.against.is_none() {
        out.push((
            format!("`against.{f}()` reads another run but the claim has no `against:`"),
            Some("add `against: <experiment id>`".into()),
        ));
    }
    if registry
        .function(f)
        .is_some_and(|func| func.scope == Scope::Step)
    {
        out.push((
            format!("`{f}()` reads a step of this run; `against.` takes a run-wide function"),
            Some("e.g. `against.first_step_over(\"node.eld_p99_max_ms\", 50)`".into()),
        ));
    }
}

/// A function's `q` arguments name step quantities (`first_step_over("node.eld_p99_max_ms", 50)`).
fn check_quantity_args(
    f: &str,
    kinds: &str,
    args: &[Arg],
    registry: &dyn Names,
    out: &mut Vec<Problem>,
) {
    for (k, a) in kinds.chars().zip(args) {
        let Arg::Str(q) = a else { continue };
        if k != 'q' || registry.quantity(q).is_some_and(|n| n.scope == Scope::Step) {
            continue;
        }
        out.push((
            format!("`{f}()`: `{q}` is not a step quantity"),
            Some("`perflab verify --quantities` lists the step quantities".into()),
        ));
    }
}

//! Evaluating one claim on a recorded run (and, for `against:`, another experiment's run):
//! requirements first (n/a when the run cannot test the claim), then the value at the chosen
//! step(s) against its comparison. Pure: the runs come in as parsed `Report` + `Manifest`.
use super::quantities::{self, Call, FUNCTIONS, Missing, Reader, StepCtx};
use crate::analyze::bounds::cited_figure;
use crate::analyze::model::{Report, StepReport};
use crate::claim::compile::{At, Comparison, Compiled, compile};
use crate::claim::expr::{Arg, ArgValue, Expr, Name, Resolve, Selector};
use crate::claim::{Claim, Tol, fmt_num};
use crate::rundir::Manifest;
use serde::{Deserialize, Serialize};

/// A recorded run as the evaluator sees it.
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    /// Where it came from (run directory), for the report.
    pub label: &'a str,
    pub report: &'a Report,
    pub manifest: &'a Manifest,
}

/// pass, fail, n/a (the run cannot test the claim: its `needs` do not hold) or refuted (it
/// fails as the catalog's `refuted:` says it does where perflab measured it: known, not a
/// regression; see `verify::refuted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClaimVerdict {
    #[serde(rename = "pass")]
    Pass,
    #[serde(rename = "fail")]
    Fail,
    #[serde(rename = "n/a")]
    NotApplicable,
    #[serde(rename = "refuted")]
    Refuted,
}

impl ClaimVerdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ClaimVerdict::Pass => "pass",
            ClaimVerdict::Fail => "fail",
            ClaimVerdict::NotApplicable => "n/a",
            ClaimVerdict::Refuted => "refuted",
        }
    }
}

/// `measured` of a claim whose value could not be read (invalid, n/a, data missing).
pub(crate) const UNREAD: &str = "-";

/// One row of `perflab verify`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimResult {
    pub experiment: String,
    /// The claim's short name.
    pub claim: String,
    /// The claim's sentence.
    pub text: String,
    pub measured: String,
    pub expected: String,
    pub verdict: ClaimVerdict,
    /// Why it failed or is n/a (missing data, the failing step, the unmet requirement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub run: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against_run: Option<String>,
    /// The claim's value when it reads one point (not `at: every`): what rounds are judged on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Judged over several rounds: the median round's verdict, with the spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundsSummary>,
    /// The claim was judged on steps whose app or database CPUs the host took (steal, other
    /// processes): which, and why. The threshold does not change; the verdict says less.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_limited: Option<String>,
}

/// What a verdict over rounds rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundsSummary {
    /// Rounds with a value.
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// The median round's run.
    pub median_run: String,
    /// Every round's verdict, as pass / fail / n/a counts.
    pub pass: usize,
    pub fail: usize,
    pub not_applicable: usize,
}

/// Find the step a selector names.
pub(crate) fn select<'r>(r: &'r Report, sel: Selector) -> Result<&'r StepReport, Missing> {
    let by_target = |t: Option<u32>, what: &str| -> Result<&'r StepReport, Missing> {
        let t = t.ok_or_else(|| what.to_string())?;
        r.steps
            .iter()
            .find(|s| s.target == t)
            .ok_or_else(|| format!("no step {t} in this run"))
    };
    match sel {
        Selector::Lowest => r.steps.first().ok_or_else(|| "no steps".to_string()),
        Selector::Top => r.steps.last().ok_or_else(|| "no steps".to_string()),
        Selector::Knee => by_target(r.knee, "no knee in this run: no step failed for good"),
        Selector::LastPassing => by_target(r.last_passing, "no step passed in this run"),
        Selector::BelowKnee => by_target(r.passing_below_knee, "no passing step below the knee"),
        Selector::Target(t) => r.steps.iter().find(|s| s.target == t).ok_or_else(|| {
            let have: Vec<String> = r.steps.iter().map(|s| s.target.to_string()).collect();
            format!("no step {t} in this run (steps: {})", have.join(", "))
        }),
    }
}

struct Ctx<'a> {
    run: RunView<'a>,
    against: Option<RunView<'a>>,
    at: Option<At>,
    step: Option<&'a StepReport>,
}

impl<'a> Ctx<'a> {
    fn step_for(&self, n: &Name, run: RunView<'a>) -> Result<&'a StepReport, Missing> {
        if let Some(sel) = n.selector {
            return select(run.report, sel);
        }
        if !n.against {
            return self.step.ok_or_else(|| {
                format!(
                    "`{}` is a step quantity: give `at:` or a selector (`knee.{}`)",
                    n.text, n.path
                )
            });
        }
        match (self.at, self.step) {
            (Some(At::One(sel)), _) => select(run.report, sel),
            (Some(At::Every), Some(own)) => run
                .report
                .steps
                .iter()
                .find(|s| s.target == own.target)
                .ok_or_else(|| format!("no step {} in the other run", own.target)),
            _ => Err(format!(
                "`{}` is a step quantity: give `at:` or a selector",
                n.text
            )),
        }
    }
}

impl Resolve for Ctx<'_> {
    type Err = Missing;
    fn name(&mut self, n: &Name) -> Result<f64, Missing> {
        let run = if n.against {
            self.against
                .ok_or_else(|| format!("`{}` needs `against:`", n.text))?
        } else {
            self.run
        };
        let q =
            quantities::lookup(&n.path).ok_or_else(|| format!("unknown quantity `{}`", n.path))?;
        match q.reader {
            Reader::Config(c) => c.read(run.manifest),
            Reader::Lab(lab, name) => quantities::lab_value(run.manifest, lab, name),
            Reader::Run(r) if n.selector.is_none() => r.read(run.report),
            Reader::Run(_) => Err(format!("`{}` is not a step quantity", n.path)),
            Reader::Step(q) => {
                let s = self.step_for(n, run)?;
                q.read(&StepCtx::new(run.report, s, &n.path))
            }
            Reader::Source(name) => {
                let s = self.step_for(n, run)?;
                StepCtx::new(run.report, s, &n.path).source(name)
            }
        }
    }

    /// `against.f(...)` reads the other run, at no step.
    fn call(&mut self, f: &str, args: &[ArgValue<'_>]) -> Result<f64, Missing> {
        let (f, run, step) = match f.strip_prefix("against.") {
            Some(g) => (g, self.against.ok_or("`against.` needs `against:`")?, None),
            None => (f, self.run, self.step),
        };
        let row = FUNCTIONS.iter().find(|r| r.info.name == f);
        let row = row.ok_or_else(|| format!("unknown function or arguments: {f}()"))?;
        let (report, read_step) = (run.report, quantities::step_value);
        (row.read)(&Call {
            f,
            args,
            report,
            step,
            read_step,
        })
    }
}

/// One evaluation at one step (or none).
struct Point {
    step: Option<u32>,
    value: f64,
    ok: bool,
    expected: String,
}

fn check(cmp: &Comparison, v: f64, ctx: &mut Ctx<'_>) -> Result<(bool, String), Missing> {
    let show = |text: &str, val: f64| {
        if crate::claim::parse(text)
            .ok()
            .and_then(|e| e.as_number())
            .is_some()
        {
            fmt_num(val)
        } else {
            format!("{text} = {}", fmt_num(val))
        }
    };
    Ok(match cmp {
        Comparison::Range { min, max } => {
            let lo = min
                .as_ref()
                .map(|(t, e)| e.eval(ctx).map(|x| (t, x)))
                .transpose()?;
            let hi = max
                .as_ref()
                .map(|(t, e)| e.eval(ctx).map(|x| (t, x)))
                .transpose()?;
            let ok = lo.is_none_or(|(_, l)| v >= l) && hi.is_none_or(|(_, h)| v <= h);
            let text = match (lo, hi) {
                (Some((lt, l)), Some((ht, h))) => {
                    format!("between {} and {}", show(lt, l), show(ht, h))
                }
                (Some((lt, l)), None) => format!(">= {}", show(lt, l)),
                (None, Some((ht, h))) => format!("<= {}", show(ht, h)),
                (None, None) => "anything".into(),
            };
            (ok, text)
        }
        Comparison::Equals(t, e) => {
            let x = e.eval(ctx)?;
            let ok = (v - x).abs() <= 1e-9 * x.abs().max(1.0);
            (ok, format!("= {}", show(t, x)))
        }
        Comparison::Near(t, e, tol) => {
            let x = e.eval(ctx)?;
            let (ok, w) = match tol {
                Tol::Abs(a) => ((v - x).abs() <= *a, fmt_num(*a)),
                Tol::Rel(r) => (
                    (v - x).abs() <= r * x.abs(),
                    format!("{}%", fmt_num(r * 100.0)),
                ),
            };
            (ok, format!("within ±{w} of {}", show(t, x)))
        }
    })
}

/// The comparison as written, for rows that could not be evaluated.
fn written(cmp: &Comparison) -> String {
    match cmp {
        Comparison::Range { min, max } => match (min, max) {
            (Some((l, _)), Some((h, _))) => format!("between {l} and {h}"),
            (Some((l, _)), None) => format!(">= {l}"),
            (None, Some((h, _))) => format!("<= {h}"),
            (None, None) => "anything".into(),
        },
        Comparison::Equals(t, _) => format!("= {t}"),
        Comparison::Near(t, _, Tol::Abs(a)) => format!("within ±{} of {t}", fmt_num(*a)),
        Comparison::Near(t, _, Tol::Rel(r)) => format!("within ±{}% of {t}", fmt_num(r * 100.0)),
    }
}

/// Evaluate one claim of experiment `experiment` on `run`; `against` is the newest complete
/// run of `claim.against`, if any.
pub fn evaluate(
    experiment: &str,
    claim: &Claim,
    run: RunView<'_>,
    against: Option<RunView<'_>>,
) -> ClaimResult {
    let mut out = ClaimResult {
        experiment: experiment.to_string(),
        claim: claim.name.clone(),
        text: claim.claim.clone(),
        measured: UNREAD.into(),
        expected: "-".into(),
        verdict: ClaimVerdict::Fail,
        reason: None,
        run: run.label.to_string(),
        against_run: against.map(|a| a.label.to_string()),
        value: None,
        rounds: None,
        host_limited: None,
    };
    let c = match compile(claim) {
        Ok(c) => c,
        Err(errs) => {
            let e: Vec<String> = errs.iter().map(|(f, m)| format!("{f}: {m}")).collect();
            out.reason = Some(format!("invalid claim: {}", e.join("; ")));
            return out;
        }
    };
    out.expected = written(&c.cmp);
    let mut ctx = Ctx {
        run,
        against,
        at: c.at,
        step: None,
    };
    if let Err((verdict, reason)) = requirements(claim, &c, &mut ctx) {
        out.verdict = verdict;
        out.reason = Some(reason);
        return out;
    }
    if let Some(why) = unusable_figure(&c, &ctx) {
        out.verdict = ClaimVerdict::NotApplicable;
        out.reason = Some(why);
        return out;
    }
    let points = match points(&c, &mut ctx) {
        Ok(p) => p,
        Err(m) => {
            out.reason = Some(m);
            return out;
        }
    };
    out.measured = measured(&c, &points, &mut ctx);
    if let [p] = points.as_slice() {
        out.value = Some(p.value);
    }
    out.expected = expected(&points);
    (out.verdict, out.reason) = verdict(&c, &points);
    out.host_limited = host_limited(&points, run.report);
    out
}

/// A step figure the claim reads that the analysis did not show as measured (outside its
/// physical bounds, or too few samples in the window: `analyze::bounds`): the claim is n/a,
/// with the figure's caveat as why.
/// Whether any step of the run has memory samples of any role.
fn sampled_memory(r: &crate::analyze::model::Report) -> bool {
    r.steps
        .iter()
        .any(|s| s.server.as_ref().is_some_and(|w| !w.memory.is_empty()))
}

fn unusable_figure(c: &Compiled, ctx: &Ctx<'_>) -> Option<String> {
    let mut exprs: Vec<&Expr> = vec![&c.value];
    match &c.cmp {
        Comparison::Range { min, max } => exprs.extend(min.iter().chain(max).map(|(_, e)| e)),
        Comparison::Equals(_, e) | Comparison::Near(_, e, _) => exprs.push(e),
    }
    // (run, selector, figure) of each step figure the claim reads
    let mut read: Vec<(RunView<'_>, Option<Selector>, &str)> = Vec::new();
    for n in exprs.iter().flat_map(|e| e.names()) {
        let run = if n.against {
            ctx.against
        } else {
            Some(ctx.run)
        };
        let reader = quantities::lookup(&n.path).map(|q| q.reader);
        if let (Some(Reader::Step(_) | Reader::Source(_)), Some(run)) = (reader, run) {
            read.push((run, n.selector, n.path.as_str()));
        }
    }
    // `saturated("pg core")` reads criterion 5's phrase, which cites a CPU figure
    for (f, args) in exprs.iter().flat_map(|e| e.calls()) {
        if let ("saturated", [Arg::Str(text)]) = (f, args)
            && let Some(figure) = cited_figure(text)
        {
            read.push((ctx.run, None, figure));
        }
    }
    if let Some((run, _, figure)) = read
        .iter()
        .find(|(run, _, f)| StepCtx::reads_memory(f) && !sampled_memory(run.report))
    {
        return Some(format!(
            "`{figure}`: {} has no memory samples in any step (recorded before perflab sampled PSS)",
            run.label
        ));
    }
    read.iter().find_map(|(run, sel, figure)| {
        let names: std::collections::HashSet<&str> = steps_at(run.report, *sel, ctx.at)
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        let r = run.report;
        let u = r
            .unusable
            .iter()
            .find(|u| u.figure == *figure && names.contains(u.step.as_str()));
        u.map(|u| u.caveat())
    })
}

/// The steps a claim reads a step figure at: the name's selector, else the claim's `at:`.
fn steps_at(r: &Report, sel: Option<Selector>, at: Option<At>) -> Vec<&StepReport> {
    match (sel, at) {
        (Some(sel), _) | (None, Some(At::One(sel))) => select(r, sel).into_iter().collect(),
        (None, Some(At::Every)) => r.steps.iter().collect(),
        (None, None) => Vec::new(),
    }
}

/// "judged on host-limited r0060 (the hypervisor stole 31 % of the app's CPU)".
fn host_limited(points: &[Point], r: &Report) -> Option<String> {
    let v: Vec<String> = points
        .iter()
        .filter_map(|p| {
            let s = r.steps.iter().find(|s| Some(s.target) == p.step)?;
            Some(format!("{} ({})", s.name, s.host_limited.as_deref()?))
        })
        .collect();
    (!v.is_empty()).then(|| format!("judged on host-limited {}", v.join(", ")))
}

/// `needs` (n/a when the run's layout or config cannot test the claim), then the `against:`
/// run (a failure when there is none).
fn requirements(
    claim: &Claim,
    c: &Compiled,
    ctx: &mut Ctx<'_>,
) -> Result<(), (ClaimVerdict, String)> {
    for (text, e) in &c.needs {
        match e.eval(ctx) {
            Ok(v) if v != 0.0 => {}
            Ok(_) => {
                let why = hardware_need(e, ctx).unwrap_or_else(|| {
                    format!("needs {text}; this run has {}", leaves_all(e, ctx))
                });
                return Err((ClaimVerdict::NotApplicable, why));
            }
            Err(m) => return Err((ClaimVerdict::NotApplicable, format!("needs {text}: {m}"))),
        }
    }
    if let Some(a) = &claim.against
        && ctx.against.is_none()
    {
        return Err((
            ClaimVerdict::Fail,
            format!("no complete run of `{a}` to compare against (perflab run {a})"),
        ));
    }
    Ok(())
}

/// The value and its check at each step the claim reads (one point without `at:`).
fn points(c: &Compiled, ctx: &mut Ctx<'_>) -> Result<Vec<Point>, Missing> {
    let report = ctx.run.report;
    let steps: Vec<Option<&StepReport>> = match c.at {
        None => vec![None],
        Some(At::Every) => report.steps.iter().map(Some).collect(),
        Some(At::One(sel)) => vec![Some(select(report, sel)?)],
    };
    let mut points = Vec::new();
    for s in steps {
        ctx.step = s;
        let v = match c.value.eval(ctx)? {
            v if v.is_finite() => v,
            v => return Err(format!("value is {v} (division by zero?)")),
        };
        let (ok, expected) = check(&c.cmp, v, ctx)?;
        points.push(Point {
            step: s.map(|s| s.target),
            value: v,
            ok,
            expected,
        });
    }
    Ok(points)
}

/// The measured column: one value with the names it was computed from, or every step's.
fn measured(c: &Compiled, points: &[Point], ctx: &mut Ctx<'_>) -> String {
    let single = points.len() == 1 && points[0].step.is_none_or(|_| c.at != Some(At::Every));
    if single {
        ctx.step = steps_last(points, ctx.run.report);
        let at = match (c.at, points[0].step) {
            (Some(At::One(_)), Some(t)) => format!(" at {t}"),
            _ => String::new(),
        };
        format!(
            "{}{at}{}",
            fmt_num(points[0].value),
            super::leaves::leaves(&c.value, ctx)
        )
    } else {
        points
            .iter()
            .map(|p| {
                format!(
                    "{}: {}{}",
                    p.step.unwrap_or(0),
                    fmt_num(p.value),
                    if p.ok { "" } else { " ✗" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The expected column: the comparison with its bounds' values, per step when they differ.
fn expected(points: &[Point]) -> String {
    let mut expected: Vec<&str> = points.iter().map(|p| p.expected.as_str()).collect();
    expected.dedup();
    if expected.len() == 1 {
        expected[0].to_string()
    } else {
        format!("{} (per step)", expected.join("; "))
    }
}

/// pass when every point holds; else fail, with the failing steps of `at: every`.
fn verdict(c: &Compiled, points: &[Point]) -> (ClaimVerdict, Option<String>) {
    let bad: Vec<&Point> = points.iter().filter(|p| !p.ok).collect();
    if points.is_empty() {
        (ClaimVerdict::Fail, Some("no steps in the run".into()))
    } else if bad.is_empty() {
        (ClaimVerdict::Pass, None)
    } else if c.at == Some(At::Every) {
        let at: Vec<String> = bad
            .iter()
            .map(|p| p.step.unwrap_or(0).to_string())
            .collect();
        (
            ClaimVerdict::Fail,
            Some(format!("fails at step {}", at.join(", "))),
        )
    } else {
        (ClaimVerdict::Fail, None)
    }
}

fn steps_last<'r>(points: &[Point], r: &'r Report) -> Option<&'r StepReport> {
    let t = points.last()?.step?;
    r.steps.iter().find(|s| s.target == t)
}

/// An unmet need on the CPU layout in the hardware's words: `app_cpus >= 2` reads "needs >= 2
/// app CPUs; this host gives the app 1 (of 2 online)".
fn hardware_need(e: &Expr, ctx: &mut Ctx<'_>) -> Option<String> {
    let Expr::Bin(op, l, r) = e else { return None };
    let (Expr::Name(n), Some(want)) = (l.as_ref(), r.as_number()) else {
        return None;
    };
    let role = match n.path.as_str() {
        "app_cpus" => "app",
        "db_cpus" => "database",
        "loadgen_cpus" => "load generator",
        "online_cpus" => {
            return Some(format!(
                "needs {op} {} online CPUs; this host has {}",
                fmt_num(want),
                fmt_num(ctx.name(n).ok()?)
            ));
        }
        _ => return None,
    };
    let have = ctx.name(n).ok()?;
    let online = ctx.run.manifest.cpu_layout.online.len();
    Some(format!(
        "needs {op} {} {role} CPUs; this host gives the {role} {} (of {online} online)",
        fmt_num(want),
        fmt_num(have)
    ))
}

/// Every name's value, for an unmet requirement (`app_cpus = 1`).
fn leaves_all(e: &Expr, ctx: &mut Ctx<'_>) -> String {
    let mut parts = Vec::new();
    for n in e.names() {
        let v = ctx
            .name(n)
            .map(fmt_num)
            .unwrap_or_else(|m| format!("? ({m})"));
        let p = format!("{} = {v}", n.text);
        if !parts.contains(&p) {
            parts.push(p);
        }
    }
    parts.join(", ")
}

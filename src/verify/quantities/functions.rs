//! The functions claims may call, one row each (name, scope, arguments, help, reader): reading
//! logs (`log`, `log_lines`), a step (`saturated`, `node_error`), the steps (`first_step_over`,
//! `at_first_step_over`, `median_where`), or numbers (`min`, `max`, `abs`). A run-wide function may read the other
//! experiment's run: `against.first_step_over(...)`.
use super::value::{Missing, b, need};
use crate::analyze::model::{Report, StepReport};
use crate::claim::expr::ArgValue;
use crate::claim::quantities::{Function, Scope};
use std::collections::BTreeMap;

/// One call, as its reader sees it.
pub(crate) struct Call<'a> {
    pub f: &'a str,
    pub args: &'a [ArgValue<'a>],
    pub report: &'a Report,
    /// The step the claim is at, if any.
    pub step: Option<&'a StepReport>,
    /// A step quantity of `report` at one of its steps, by name (`quantities::step_value`).
    pub read_step: StepReader,
}

/// How a function reads a step quantity by name.
pub(crate) type StepReader = fn(&Report, &StepReport, &str) -> Result<f64, Missing>;

impl<'a> Call<'a> {
    /// Argument `i` as a string.
    fn text(&self, i: usize) -> Result<&'a str, Missing> {
        match self.args.get(i) {
            Some(ArgValue::Str(s)) => Ok(s),
            _ => Err(format!("{}(): argument {} must be a string", self.f, i + 1)),
        }
    }

    /// The numbers among the arguments.
    fn nums(&self) -> Vec<f64> {
        self.args
            .iter()
            .filter_map(|a| match a {
                ArgValue::Num(n) => Some(*n),
                ArgValue::Str(_) => None,
            })
            .collect()
    }

    fn step(&self) -> Result<&'a StepReport, Missing> {
        self.step
            .ok_or_else(|| format!("{}() reads a step: give `at:`", self.f))
    }

    /// The numbers, when they are as many as `ok` wants.
    fn nums_if(&self, ok: fn(usize) -> bool) -> Result<Vec<f64>, Missing> {
        let n = self.nums();
        if ok(n.len()) {
            Ok(n)
        } else {
            Err(format!("unknown function or arguments: {}()", self.f))
        }
    }
}

/// A function: what the checks see, and its reader.
pub(crate) struct FunctionRow {
    pub info: Function,
    pub read: fn(&Call<'_>) -> Result<f64, Missing>,
}

/// One row: name, scope, argument kinds, reads measurements, help, reader.
macro_rules! function {
    ($name:literal, $scope:ident, $args:literal, $measured:literal, $help:literal, $read:expr) => {
        FunctionRow {
            info: Function {
                name: $name,
                scope: Scope::$scope,
                args: $args,
                measured: $measured,
                help: $help,
            },
            read: $read,
        }
    };
}

/// Every function, in the order `verify --quantities` lists them.
pub(crate) const FUNCTIONS: &[FunctionRow] = &[
    function!(
        "log",
        Run,
        "ss",
        true,
        "log(\"laravel\", \"too many clients\"): count of log lines whose message contains the text (case-insensitive)",
        |c| log_count(c.report, c.text(0)?, c.text(1)?)
    ),
    function!(
        "log_lines",
        Run,
        "s",
        true,
        "log_lines(\"php-fpm\"): lines in that log",
        |c| log_lines(c.report, c.text(0)?)
    ),
    function!(
        "saturated",
        Step,
        "s",
        true,
        "saturated(\"pg core\"): 1 when the step's saturated resources mention the text",
        |c| saturated(c.step()?, c.text(0)?)
    ),
    function!(
        "node_error",
        Step,
        "s",
        true,
        "node_error(\"timeout exceeded\"): errors the Node app counted whose message contains the text",
        |c| node_error(c.step()?, c.text(0)?)
    ),
    function!(
        "first_step_over",
        Run,
        "qn",
        true,
        "first_step_over(\"node.eld_p99_max_ms\", 50): the target of the run's first step whose step quantity is over the bound (steps without a reading are skipped); `against.first_step_over(...)` reads the other run",
        |c| at_first_step_over(c, "target", c.text(0)?, c.nums_if(|n| n == 1)?[0])
    ),
    function!(
        "at_first_step_over",
        Run,
        "qqn",
        true,
        "at_first_step_over(\"app_cpu\", \"node.eld_p99_max_ms\", 50): the first step quantity at the run's first step whose second is over the bound (steps without the second's reading are skipped; a first step without the first's reading fails the claim); `against.` reads the other run",
        |c| at_first_step_over(c, c.text(0)?, c.text(1)?, c.nums_if(|n| n == 1)?[0])
    ),
    function!(
        "median_where",
        Run,
        "qqn",
        true,
        "median_where(\"ok_per_s\", \"app_cpu\", 0.95): the median of the first step quantity over the run's steps whose second reads at least the bound (steps without both readings are skipped); a plateau that one fast or slow step does not move",
        |c| median_where(c, c.text(0)?, c.text(1)?, c.nums_if(|n| n == 1)?[0])
    ),
    function!("min", Run, "n+", false, "min(a, b, ...)", |c| {
        Ok(c.nums_if(|n| n > 0)?
            .into_iter()
            .fold(f64::INFINITY, f64::min))
    }),
    function!("max", Run, "n+", false, "max(a, b, ...)", |c| {
        Ok(c.nums_if(|n| n > 0)?
            .into_iter()
            .fold(f64::NEG_INFINITY, f64::max))
    }),
    function!("abs", Run, "n", false, "abs(x)", |c| Ok(c
        .nums_if(|n| n == 1)?[0]
        .abs())),
    function!(
        "floor",
        Run,
        "n",
        false,
        "floor(x): the largest whole number <= x",
        |c| Ok(c.nums_if(|n| n == 1)?[0].floor())
    ),
];

/// `log(name, text)`: lines of log `name` whose digested message contains `text`.
fn log_count(r: &Report, log: &str, text: &str) -> Result<f64, Missing> {
    let d = need(r.logs.get(log), || {
        let have: Vec<&str> = r.logs.keys().map(String::as_str).collect();
        format!("no log `{log}` in the run (logs: {})", have.join(", "))
    })?;
    Ok(containing(&d.messages, text))
}

/// The counts of the messages that contain `text` (case-insensitive), summed.
fn containing(counts: &BTreeMap<String, u64>, text: &str) -> f64 {
    let t = text.to_lowercase();
    counts
        .iter()
        .filter(|(m, _)| m.to_lowercase().contains(&t))
        .map(|(_, c)| *c)
        .sum::<u64>() as f64
}

/// `at_first_step_over(quantity, cond, bound)`: `quantity` at `r`'s first step whose `cond` reads
/// over `bound` (`first_step_over` is this with `quantity` = "target"); a step where `cond` has
/// no reading is skipped, and that first step must read `quantity`.
fn at_first_step_over(
    c: &Call<'_>,
    quantity: &str,
    cond: &str,
    bound: f64,
) -> Result<f64, Missing> {
    for s in &c.report.steps {
        let v = (c.read_step)(c.report, s, cond);
        if v.is_ok_and(|v| v > bound) {
            return (c.read_step)(c.report, s, quantity).map_err(|e| {
                format!(
                    "{quantity} at {} (the first step with {cond} over {bound}): {e}",
                    s.name
                )
            });
        }
    }
    Err(format!("no step of the run reads {cond} over {bound}"))
}

/// `median_where(quantity, condition, bound)`: the median of `quantity` over `r`'s steps whose
/// `condition` reads at least `bound` (the mean of the middle two when they are even).
fn median_where(c: &Call<'_>, quantity: &str, cond: &str, bound: f64) -> Result<f64, Missing> {
    let mut v: Vec<f64> = c
        .report
        .steps
        .iter()
        .filter(|s| (c.read_step)(c.report, s, cond).is_ok_and(|x| x >= bound))
        .filter_map(|s| (c.read_step)(c.report, s, quantity).ok())
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        return Err(format!(
            "no step of the run reads {cond} >= {bound} and {quantity}"
        ));
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Ok(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

/// `log_lines(name)`.
fn log_lines(r: &Report, log: &str) -> Result<f64, Missing> {
    Ok(need(r.logs.get(log), || format!("no log `{log}` in the run"))?.lines as f64)
}

/// `saturated(text)` on a step.
fn saturated(s: &StepReport, text: &str) -> Result<f64, Missing> {
    let w = need(s.server.as_ref(), || {
        format!("no server samples in step {}", s.target)
    })?;
    let t = text.to_lowercase();
    Ok(b(w.saturated.iter().any(|x| x.to_lowercase().contains(&t))))
}

/// `node_error(text)` on a step.
fn node_error(s: &StepReport, text: &str) -> Result<f64, Missing> {
    let n = s
        .server
        .as_ref()
        .and_then(|w| w.node.as_ref())
        .ok_or_else(|| format!("no Node app metrics in step {}", s.target))?;
    Ok(containing(&n.errors, text))
}

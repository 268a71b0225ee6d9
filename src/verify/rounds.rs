//! Judging a claim over rounds: a knee or a max sustainable rate moves by a step from run to
//! run, so a claim that reads one is evaluated on every round of the experiment's configuration
//! and judged by the median round (the lower median for an even count), with the spread and
//! how many rounds the verdict rests on. Other claims read the newest round. Pure.
use super::eval::{ClaimResult, ClaimVerdict, RoundsSummary};
use crate::claim::Claim;
use crate::claim::fmt_num;

/// The run quantities that move by a step between rounds.
const ROUND_JUDGED: [&str; 6] = [
    "knee",
    "last_passing",
    "below_knee",
    "max_sustainable",
    "knee_index",
    "last_passing_index",
];

/// A claim whose value reads a knee or a max sustainable rate (its own or `against.`'s).
pub(crate) fn judged_over_rounds(c: &Claim) -> bool {
    crate::claim::parse(&c.value).is_ok_and(|e| {
        e.names()
            .iter()
            .any(|n| n.selector.is_none() && ROUND_JUDGED.contains(&n.path.as_str()))
    })
}

/// One claim's results over rounds (newest first) as one result: the median round's, with the
/// spread. With fewer than two rounds that have a value, the newest round's result as is.
pub(crate) fn combine(mut results: Vec<ClaimResult>) -> Option<ClaimResult> {
    let count = |v: ClaimVerdict| results.iter().filter(|r| r.verdict == v).count();
    let (pass, fail, na) = (
        count(ClaimVerdict::Pass),
        count(ClaimVerdict::Fail),
        count(ClaimVerdict::NotApplicable),
    );
    let mut valued: Vec<&ClaimResult> = results.iter().filter(|r| r.value.is_some()).collect();
    if valued.len() < 2 {
        return (!results.is_empty()).then(|| results.swap_remove(0));
    }
    valued.sort_by(|a, b| a.value.unwrap_or(0.0).total_cmp(&b.value.unwrap_or(0.0)));
    let n = valued.len();
    let median = valued[(n - 1) / 2];
    let (lo, hi) = (
        valued[0].value.unwrap_or(0.0),
        valued[n - 1].value.unwrap_or(0.0),
    );
    let mut out = median.clone();
    let m = median.value.unwrap_or(0.0);
    out.measured = format!(
        "{} (median of {n} rounds, range {}-{})",
        out.measured,
        fmt_num(lo),
        fmt_num(hi)
    );
    if pass > 0 && fail > 0 {
        let split = format!("rounds split: {pass} pass, {fail} fail; judged on the median round");
        out.reason = Some(match out.reason {
            Some(r) => format!("{r}; {split}"),
            None => split,
        });
    }
    out.rounds = Some(RoundsSummary {
        n,
        median: m,
        min: lo,
        max: hi,
        median_run: median.run.clone(),
        pass,
        fail,
        not_applicable: na,
    });
    Some(out)
}

/// The median round by max sustainable rate (refined, else the last passing step): the run a
/// claim of another experiment compares against.
pub(crate) fn median_run<T>(
    mut runs: Vec<T>,
    report: impl Fn(&T) -> &crate::analyze::Report,
) -> Option<T> {
    let key = |r: &crate::analyze::Report| {
        r.refine
            .as_ref()
            .and_then(|f| f.max_sustainable)
            .or(r.last_passing)
            .unwrap_or(0)
    };
    runs.sort_by_key(|r| key(report(r)));
    let n = runs.len();
    (n > 0).then(|| runs.swap_remove((n - 1) / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(run: &str, value: f64, verdict: ClaimVerdict) -> ClaimResult {
        ClaimResult {
            experiment: "exp1".into(),
            claim: "knee".into(),
            text: String::new(),
            measured: fmt_num(value),
            expected: ">= 150".into(),
            verdict,
            reason: None,
            run: run.into(),
            against_run: None,
            value: Some(value),
            rounds: None,
            host_limited: None,
        }
    }

    #[test]
    fn the_median_round_decides_and_the_spread_is_kept() {
        use ClaimVerdict::*;
        // Newest first: one round broke a step early (a host stall), two did not.
        let r = combine(vec![
            result("r3", 180.0, Pass),
            result("r2", 120.0, Fail),
            result("r1", 150.0, Pass),
        ])
        .unwrap();
        assert_eq!(r.verdict, Pass);
        assert_eq!(r.run, "r1");
        let s = r.rounds.unwrap();
        assert_eq!((s.n, s.median, s.min, s.max), (3, 150.0, 120.0, 180.0));
        assert_eq!((s.pass, s.fail), (2, 1));
        assert!(
            r.measured.contains("median of 3 rounds, range 120-180"),
            "{}",
            r.measured
        );
        assert!(r.reason.unwrap().contains("2 pass, 1 fail"));
    }

    #[test]
    fn an_even_count_takes_the_lower_median_and_one_round_is_left_as_is() {
        use ClaimVerdict::*;
        let r = combine(vec![result("a", 150.0, Pass), result("b", 120.0, Fail)]).unwrap();
        assert_eq!((r.run.as_str(), r.verdict), ("b", Fail));
        let one = combine(vec![result("a", 150.0, Pass)]).unwrap();
        assert!(one.rounds.is_none());
        assert_eq!(one.measured, "150");
        assert!(combine(Vec::new()).is_none());
    }

    #[test]
    fn knee_claims_are_round_judged_step_claims_are_not() {
        let claim = |value: &str| -> Claim {
            serde_yaml::from_str(&format!("{{name: x, claim: x, value: '{value}', min: 1}}"))
                .unwrap()
        };
        assert!(judged_over_rounds(&claim("against.knee / knee")));
        assert!(judged_over_rounds(&claim("max_sustainable")));
        assert!(!judged_over_rounds(&claim("knee.p95_ms")));
        assert!(!judged_over_rounds(&claim("app_cpu / app_cpus")));
    }
}

//! Claims the catalog marks `refuted:`: the article's finding, kept as written, that perflab's
//! measurements answer against, with the evidence named. Such a claim is still judged on every
//! run, and its verdict says which way the reading went:
//!
//! - it fails as measured before: `refuted` (known; `verify` exits 0 on it, so a group stays a
//!   regression test for everything else, and the row says why and where the evidence is);
//! - it holds: `fail` (the mark is stale: the finding reproduced on this run, so either the
//!   mark goes or the page says what differs), as a strict expected failure does;
//! - it cannot be read (missing data, n/a): as without the mark.
//!
//! Applied once, after the rounds are combined (`findings`). Pure.
use super::eval::{ClaimResult, ClaimVerdict};
use crate::claim::Claim;

/// `r` judged as `c`'s `refuted:` asks (unchanged without one).
pub(crate) fn mark(c: &Claim, mut r: ClaimResult) -> ClaimResult {
    let Some(refuted) = &c.refuted else {
        return r;
    };
    let read = r.measured != super::eval::UNREAD;
    match r.verdict {
        ClaimVerdict::Fail if read => {
            r.verdict = ClaimVerdict::Refuted;
            let known = format!(
                "refuted, as recorded: {} ({})",
                refuted.why, refuted.evidence
            );
            r.reason = Some(match r.reason.take() {
                Some(at) => format!("{at}; {known}"),
                None => known,
            });
        }
        ClaimVerdict::Pass => {
            r.verdict = ClaimVerdict::Fail;
            r.reason = Some(format!(
                "holds on this run, but the catalog marks it refuted ({}): the mark is stale; remove `refuted:` from the claim, or say on that page what differs here",
                refuted.evidence
            ));
        }
        _ => {}
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(refuted: bool) -> Claim {
        let mark = if refuted {
            ", refuted: {why: 'measured 5.2 against 8.5-12', evidence: 'docs/remedies.md#x'}"
        } else {
            ""
        };
        serde_yaml::from_str(&format!(
            "{{name: c, claim: c, value: 'cpu.pg', at: top, min: 8.5{mark}}}"
        ))
        .unwrap()
    }

    fn result(verdict: ClaimVerdict, measured: &str, reason: Option<&str>) -> ClaimResult {
        ClaimResult {
            experiment: "exp1".into(),
            claim: "c".into(),
            text: String::new(),
            measured: measured.into(),
            expected: ">= 8.5".into(),
            verdict,
            reason: reason.map(str::to_string),
            run: "r".into(),
            against_run: None,
            value: Some(5.2),
            rounds: None,
            host_limited: None,
        }
    }

    #[test]
    fn a_failing_reading_is_refuted_with_the_evidence_and_the_step_kept() {
        let r = mark(
            &claim(true),
            result(ClaimVerdict::Fail, "5.2 at 264", Some("at 264")),
        );
        assert_eq!(r.verdict, ClaimVerdict::Refuted);
        let why = r.reason.unwrap();
        assert!(
            why.starts_with("at 264; refuted, as recorded: measured 5.2"),
            "{why}"
        );
        assert!(why.contains("(docs/remedies.md#x)"), "{why}");
    }

    #[test]
    fn a_holding_reading_fails_because_the_mark_is_stale() {
        let r = mark(&claim(true), result(ClaimVerdict::Pass, "9.1 at 264", None));
        assert_eq!(r.verdict, ClaimVerdict::Fail);
        assert!(r.reason.unwrap().contains("the mark is stale"));
    }

    #[test]
    fn unread_or_untestable_claims_and_unmarked_claims_are_left_alone() {
        // a fail without a reading (missing data) is not a refutation
        let missing = result(ClaimVerdict::Fail, "-", Some("no step 264 in this run"));
        assert_eq!(mark(&claim(true), missing.clone()), missing);
        let na = result(
            ClaimVerdict::NotApplicable,
            "-",
            Some("needs >= 2 app CPUs"),
        );
        assert_eq!(mark(&claim(true), na.clone()), na);
        for v in [ClaimVerdict::Pass, ClaimVerdict::Fail] {
            let plain = result(v, "5.2", None);
            assert_eq!(mark(&claim(false), plain.clone()), plain);
        }
    }
}

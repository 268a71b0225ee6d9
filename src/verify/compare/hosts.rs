//! Which hosts ran each side's rounds (the manifest's `host.hostname`, with its CPU model): a
//! comparison of rounds from different hosts (a matrix spread over machines) is marked, and a
//! decided verdict on it is `inconclusive` unless both sides' host speed readings agree
//! (compute kernel within `host::speed::COMPUTE_DRIFT_PCT`): another machine alone moves CPU
//! per request. Pure.
use super::rounds::Run;
use super::speed::SpeedSignal;
use super::verdict::Verdict;
use crate::host::speed::COMPUTE_DRIFT_PCT;
use serde::Serialize;

/// Both sides' hosts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostsSignal {
    /// `hostname (CPU model)` of side A's rounds, each once, in order of appearance.
    pub a: Vec<String>,
    pub b: Vec<String>,
    /// The sides' hosts are not one and the same host.
    pub different: bool,
    /// With different hosts: do the speed readings agree (`None`: a side has none)?
    pub speeds_agree: Option<bool>,
}

fn hosts(side: &[Run]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for (_, _, m) in side {
        let h = format!(
            "{} ({})",
            m.host.hostname.as_deref().unwrap_or("?"),
            m.host.cpu_model.as_deref().unwrap_or("CPU ?")
        );
        if !v.contains(&h) {
            v.push(h);
        }
    }
    v
}

/// The hosts of two sides, judged with their speed signal.
pub(crate) fn hosts_signal(a: &[Run], b: &[Run], speed: &SpeedSignal) -> HostsSignal {
    let (ha, hb) = (hosts(a), hosts(b));
    let different = !(ha.len() == 1 && ha == hb);
    HostsSignal {
        different,
        speeds_agree: different
            .then(|| {
                speed
                    .compute_change_pct
                    .map(|c| c.abs() <= COMPUTE_DRIFT_PCT)
            })
            .flatten(),
        a: ha,
        b: hb,
    }
}

impl HostsSignal {
    pub(crate) fn line(&self) -> String {
        match (self.different, self.speeds_agree) {
            (false, _) => format!("hosts: all rounds on {}", self.a.join(", ")),
            (true, agree) => format!(
                "DIFFERENT HOSTS: A on {}; B on {} ({})",
                self.a.join(", "),
                self.b.join(", "),
                match agree {
                    Some(true) => "their speed readings agree",
                    Some(false) => "their speed readings differ",
                    None => "a side has no speed reading",
                }
            ),
        }
    }
}

/// A decided verdict on rounds from different hosts whose speed readings do not agree (or
/// cannot be compared) is `inconclusive`.
pub(crate) fn temper(verdict: Verdict, why: String, s: &HostsSignal) -> (Verdict, String) {
    if !verdict.decided() || !s.different || s.speeds_agree == Some(true) {
        return (verdict, why);
    }
    (
        Verdict::Inconclusive,
        format!(
            "the sides ran on different hosts ({}), and {}: the machines cannot be told from the runtime; run both sides on one host, or on hosts whose speed readings agree (would have been {}: {why})",
            s.line(),
            match s.speeds_agree {
                Some(_) => "their host speed readings differ by more than 15 %",
                None => "a side has no host speed reading",
            },
            verdict.as_str()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(different: bool, agree: Option<bool>) -> HostsSignal {
        HostsSignal {
            a: vec!["h1 (X)".into()],
            b: vec![if different { "h2 (X)" } else { "h1 (X)" }.into()],
            different,
            speeds_agree: agree,
        }
    }

    #[test]
    fn different_hosts_make_a_verdict_inconclusive_unless_their_speeds_agree() {
        let (v, why) = temper(
            Verdict::Regressed,
            "cpu +20 %".into(),
            &sig(true, Some(false)),
        );
        assert_eq!(v, Verdict::Inconclusive);
        assert!(
            why.contains("different hosts") && why.contains("would have been regressed"),
            "{why}"
        );
        assert_eq!(
            temper(Verdict::Same, "x".into(), &sig(true, None)).0,
            Verdict::Inconclusive
        );
        assert_eq!(
            temper(Verdict::Regressed, "x".into(), &sig(true, Some(true))).0,
            Verdict::Regressed
        );
        assert_eq!(
            temper(Verdict::Regressed, "x".into(), &sig(false, None)).0,
            Verdict::Regressed
        );
        assert!(sig(true, Some(true)).line().starts_with("DIFFERENT HOSTS"));
    }
}

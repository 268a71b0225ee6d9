//! Refining the knee: from the published steps' bracket (last passing step, first failing
//! one), the next probe rate by bisection to within a resolution of the rate, or by geometric
//! extension when no step failed; and the result as `report.json` records it. Pure.
use serde::{Deserialize, Serialize};

/// How the refinement is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct RefineLimits {
    /// Stop when the bracket is at most this share of its upper end (0.05 = 5 %).
    pub resolution: f64,
    /// Without a failing step, each extension multiplies the rate by this (1.25).
    pub growth: f64,
    /// Never probe above this rate (rps, or VUs for a closed model).
    pub cap: u32,
    /// At most this many probes.
    pub max_probes: usize,
    /// Stop extending when a probe's load generator used more than this CPU (% of one core;
    /// 80 % of the generator's cores): past it the probe would measure k6, not the app.
    #[serde(default = "no_generator_limit")]
    pub generator_cpu_max_pct: f64,
}

fn no_generator_limit() -> f64 {
    f64::INFINITY
}

impl RefineLimits {
    /// The defaults for a plan whose top step is `top`: 5 %, x1.25, 4 x the top step, 10 probes.
    pub(crate) fn for_top(top: u32) -> RefineLimits {
        RefineLimits {
            resolution: 0.05,
            growth: 1.25,
            cap: top.saturating_mul(4),
            max_probes: 10,
            generator_cpu_max_pct: f64::INFINITY,
        }
    }

    /// Bound the extension by the generator's CPU: 80 % of its `cores`.
    pub(crate) fn with_generator_cores(mut self, cores: usize) -> RefineLimits {
        self.generator_cpu_max_pct = 80.0 * cores.max(1) as f64;
        self
    }
}

/// One probe: a load of one step at `target`, judged by the same criteria as the steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub target: u32,
    pub pass: bool,
    /// Why it failed (the criteria that failed), or empty.
    pub why: String,
    pub ok_per_s: f64,
    pub p95_ms: f64,
    /// The load generator's highest CPU during the probe (% of one core), when sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_cpu_pct: Option<f64>,
}

/// The refined max sustainable rate, as `report.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refined {
    /// The highest rate that passed (rps; VUs for a closed model); None when nothing passed.
    /// It is the *offered* rate: the goodput criterion lets a passing load serve up to 5 %
    /// less, so see `max_sustainable_ok_per_s` for what the server sustained there.
    pub max_sustainable: Option<u32>,
    /// The goodput (ok/s) sustained at `max_sustainable`: its passing probe's, else the
    /// published step's (filled when the report is assembled). What capacity planning reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sustainable_ok_per_s: Option<f64>,
    /// `rps` or `vus`.
    pub unit: String,
    /// The final bracket: highest passing, lowest failing (None: not found within the limits).
    pub max_sustainable_resolution: (Option<u32>, Option<u32>),
    pub probes: Vec<Probe>,
    /// Why the refinement stopped (`resolution 5 % reached`, `cap 2400 rps reached`, ...).
    pub stopped: String,
}

/// The bracket so far and the probes that narrowed it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bisection {
    /// Highest passing rate so far.
    pub lo: Option<u32>,
    /// Lowest failing rate so far.
    pub hi: Option<u32>,
    pub probes: Vec<Probe>,
    pub limits: RefineLimits,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Next {
    Probe(u32),
    Done(String),
}

impl Bisection {
    /// From the published steps: the last passing step and the knee (first failing step).
    pub(crate) fn new(
        last_passing: Option<u32>,
        knee: Option<u32>,
        limits: RefineLimits,
    ) -> Bisection {
        Bisection {
            lo: last_passing,
            hi: knee,
            probes: Vec::new(),
            limits,
        }
    }

    /// The next probe, or why to stop.
    pub(crate) fn next(&self) -> Next {
        let l = &self.limits;
        if self.probes.len() >= l.max_probes {
            return Next::Done(format!("{} probes made (the limit)", l.max_probes));
        }
        match (self.lo, self.hi) {
            (lo, Some(hi)) => {
                let lo = lo.unwrap_or(0);
                if f64::from(hi - lo) <= l.resolution * f64::from(hi) {
                    return Next::Done(format!(
                        "bracket {lo}-{hi} within {:.0} % of the rate",
                        l.resolution * 100.0
                    ));
                }
                let mid = lo + (hi - lo) / 2;
                if mid == lo || mid == hi {
                    return Next::Done(format!("bracket {lo}-{hi} cannot be split further"));
                }
                Next::Probe(mid)
            }
            (Some(lo), None) => {
                if let Some(p) = self.probes.last()
                    && let Some(g) = p.generator_cpu_pct
                    && g > l.generator_cpu_max_pct
                {
                    return Next::Done(format!(
                        "the load generator used {g:.0} % CPU at {} (limit {:.0} %): a higher rate would measure k6, not the app",
                        p.target, l.generator_cpu_max_pct
                    ));
                }
                let next = ((f64::from(lo) * l.growth).ceil() as u32).max(lo + 1);
                if next > l.cap {
                    return Next::Done(format!("no failure up to the cap of {}", l.cap));
                }
                Next::Probe(next)
            }
            (None, None) => Next::Done("no step ran".into()),
        }
    }

    /// Record a probe's verdict: it narrows the bracket.
    pub(crate) fn record(&mut self, probe: Probe) {
        if probe.pass {
            self.lo = Some(self.lo.map_or(probe.target, |l| l.max(probe.target)));
        } else {
            self.hi = Some(self.hi.map_or(probe.target, |h| h.min(probe.target)));
        }
        self.probes.push(probe);
    }

    /// The result once done (`stopped` says why).
    pub(crate) fn result(&self, unit: &str, stopped: String) -> Refined {
        let goodput = self
            .probes
            .iter()
            .find(|p| p.pass && Some(p.target) == self.lo)
            .map(|p| p.ok_per_s);
        Refined {
            max_sustainable: self.lo,
            max_sustainable_ok_per_s: goodput,
            unit: unit.to_string(),
            max_sustainable_resolution: (self.lo, self.hi),
            probes: self.probes.clone(),
            stopped,
        }
    }
}

impl Refined {
    /// Fill [`Refined::max_sustainable_ok_per_s`] from the step whose target is the max
    /// sustainable rate when no probe at it passed (the bracket's low end was a step).
    /// `steps`: each published step's (target, ok/s).
    pub(crate) fn fill_goodput(&mut self, mut steps: impl Iterator<Item = (u32, f64)>) {
        if self.max_sustainable_ok_per_s.is_none()
            && let Some(m) = self.max_sustainable
        {
            self.max_sustainable_ok_per_s = steps.find(|s| s.0 == m).map(|s| s.1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(target: u32, pass: bool) -> Probe {
        Probe {
            generator_cpu_pct: None,
            target,
            pass,
            why: String::new(),
            ok_per_s: 0.0,
            p95_ms: 0.0,
        }
    }

    /// Drive the bisection against a server whose true capacity is `cap`.
    fn drive(lp: Option<u32>, knee: Option<u32>, top: u32, capacity: u32) -> Bisection {
        let mut b = Bisection::new(lp, knee, RefineLimits::for_top(top));
        while let Next::Probe(r) = b.next() {
            b.record(probe(r, r <= capacity));
        }
        b
    }

    #[test]
    fn the_goodput_at_the_max_sustainable_rate_stands_beside_it() {
        // A server holding 400 ok/s passes a probe at 412 (3 % short, within the 5 % the
        // goodput criterion allows): the offered 412 and the 400 ok/s it sustained are both kept.
        let mut b = Bisection::new(Some(400), Some(500), RefineLimits::for_top(600));
        for (t, pass) in [(450, false), (425, false), (412, true)] {
            let mut p = probe(t, pass);
            p.ok_per_s = f64::from(t).min(400.0);
            b.record(p);
        }
        let mut done = b.result("rps", String::new());
        assert_eq!(done.max_sustainable, Some(412));
        assert_eq!(done.max_sustainable_ok_per_s, Some(400.0));
        // Filling from the steps does not replace a probe's figure.
        done.fill_goodput([(412, 1.0)].into_iter());
        assert_eq!(done.max_sustainable_ok_per_s, Some(400.0));
        // A bracket whose low end is a published step reads that step's goodput.
        let mut step_only = Bisection::new(Some(400), Some(412), RefineLimits::for_top(600))
            .result("rps", String::new());
        assert_eq!(step_only.max_sustainable_ok_per_s, None);
        step_only.fill_goodput([(300, 300.0), (400, 383.5)].into_iter());
        assert_eq!(step_only.max_sustainable_ok_per_s, Some(383.5));
    }

    #[test]
    fn bisects_to_within_five_percent_under_the_capacity() {
        // demo-open: 400 passes, 500 fails; the server holds 400 rps.
        let b = drive(Some(400), Some(500), 600, 400);
        let (lo, hi) = (b.lo.unwrap(), b.hi.unwrap());
        assert!(
            lo <= 400 && f64::from(hi - lo) <= 0.05 * f64::from(hi),
            "{lo}-{hi}"
        );
        assert!(lo >= 380, "{lo}");
        assert_eq!(b.probes[0].target, 450);
        assert!(b.probes.len() <= 3, "{:?}", b.probes);
        assert!(matches!(b.next(), Next::Done(s) if s.contains("within 5 %")));
    }

    #[test]
    fn extension_stops_when_the_generator_nears_its_cpu() {
        // One generator core: k6 at 60 % then 85 % of it while the app still passes.
        let limits = RefineLimits::for_top(300).with_generator_cores(1);
        let mut b = Bisection::new(Some(300), None, limits);
        for (target, k6) in [(375, 60.0), (469, 85.0)] {
            assert_eq!(b.next(), Next::Probe(target));
            let mut p = probe(target, true);
            p.generator_cpu_pct = Some(k6);
            b.record(p);
        }
        match b.next() {
            Next::Done(why) => assert!(why.contains("85 % CPU at 469"), "{why}"),
            n => panic!("{n:?}"),
        }
        assert_eq!(b.lo, Some(469));
        // Two generator cores: 85 % of one core is not the limit.
        let mut b2 = Bisection::new(Some(300), None, limits.with_generator_cores(2));
        let mut p = probe(375, true);
        p.generator_cpu_pct = Some(85.0);
        b2.record(p);
        assert!(matches!(b2.next(), Next::Probe(_)));
    }

    #[test]
    fn extends_geometrically_when_no_step_failed_and_stops_at_the_cap() {
        let b = drive(Some(300), None, 300, 700);
        let targets: Vec<u32> = b.probes.iter().map(|p| p.target).collect();
        assert_eq!(&targets[..4], &[375, 469, 587, 734], "{targets:?}");
        let (lo, hi) = (b.lo.unwrap(), b.hi.unwrap());
        assert!(lo <= 700 && hi > 700 && f64::from(hi - lo) <= 0.05 * f64::from(hi));
        // A server that never breaks: stop at 4 x the top step.
        let b = drive(Some(300), None, 300, u32::MAX);
        assert!(matches!(b.next(), Next::Done(s) if s.contains("cap of 1200")));
        assert!(b.probes.iter().all(|p| p.target <= 1200));
    }

    #[test]
    fn a_first_step_that_fails_bisects_below_it_and_probes_are_bounded() {
        let b = drive(None, Some(100), 600, 30);
        assert!(b.lo.is_some_and(|l| l <= 30) && b.hi.is_some_and(|h| h > 30));
        let mut b = Bisection::new(Some(1), Some(1_000_000), RefineLimits::for_top(600));
        while let Next::Probe(r) = b.next() {
            b.record(probe(r, false));
        }
        assert_eq!(b.probes.len(), 10);
        assert!(matches!(b.next(), Next::Done(s) if s.contains("limit")));
    }
}

//! Per-step interleaving (`perflab compare`'s step design): two configurations' stacks are up
//! side by side and take turns at each load level, so the two readings of a level are seconds
//! apart instead of a whole round. Level `i` is a pair of turns (slots of `ramp + hold`
//! seconds); A goes first at even levels and B at odd ones when `a_first` (the other way round
//! otherwise), so consecutive levels run A B B A: a drift that is linear over two levels lands
//! on both sides alike. A side waits at rate 0 while the other is loaded; each side's plan is
//! its own timeline with those waits (`IDLE` for breakpoint.js), so each side's round is an
//! ordinary run directory whose step windows simply have gaps between them.
//!
//! The together design goes one step further: both sides are loaded at the same time on the
//! same CPUs, each at half the experiment's rates (so the host carries the load the plan
//! names), and a pair's two readings of a level are the very same seconds: whatever the host
//! does to its CPUs in those seconds, both sides see it.
use super::{K6Stage, Plan, Turns};
use crate::experiment::{Experiment, Model};

/// Why two plans cannot take turns within one round (the comparison then runs whole rounds).
pub fn check(a: &Plan, b: &Plan) -> Result<(), String> {
    for (side, p) in [("A", a), ("B", b)] {
        if p.model != Model::Open {
            return Err(format!(
                "side {side}'s load is closed (VUs, not a rate): a turn needs the rate to go to 0 and back"
            ));
        }
        if p.pause.is_some() {
            return Err(format!("side {side}'s load freezes the app (`load.pause`)"));
        }
        if p.steps.is_empty() {
            return Err(format!("side {side}'s load has no steps"));
        }
    }
    let shape = |p: &Plan| {
        let t: Vec<u32> = p.steps.iter().map(|s| s.target).collect();
        (t, p.ramp_s, p.hold_s, p.warmup_s, p.warmup_rps)
    };
    if shape(a) != shape(b) {
        return Err(
            "the two sides' steps, ramp, hold or warm-up differ (turns pair the same levels)"
                .into(),
        );
    }
    Ok(())
}

/// `e` with its steps' rates and warm-up rate halved (rounded up), for a side of a pair loaded
/// together with the other: both sides' load adds up to the experiment's. Err when halving
/// merges two steps (they must stay strictly increasing).
pub fn together(e: &Experiment) -> Result<Experiment, String> {
    let mut out = e.clone();
    let half = |v: u32| v.div_ceil(2).max(1);
    out.load.steps = e.load.steps.iter().map(|v| half(*v)).collect();
    out.load.warmup_rps = half(e.load.warmup_rps);
    if out.load.steps.windows(2).any(|w| w[0] >= w[1]) {
        return Err(format!(
            "halving the steps {:?} for two sides loaded together merges two of them",
            e.load.steps
        ));
    }
    Ok(out)
}

/// The two sides' plans of one interleaved round: `a`'s and `b`'s timelines with their turns.
/// Call [`check`] first; `a_first`: A takes the first level's first turn.
pub fn split(a: &Plan, b: &Plan, a_first: bool) -> (Plan, Plan) {
    let n = a.steps.len();
    let slot = a.ramp_s.saturating_add(a.hold_s);
    let firsts: Vec<bool> = (0..n).map(|i| (i % 2 == 0) == a_first).collect();
    let a_turns = turns("A", &firsts, slot);
    let b_first: Vec<bool> = firsts.iter().map(|f| !f).collect();
    let b_turns = turns("B", &b_first, slot);
    (apply(a, a_turns), apply(b, b_turns))
}

/// The two sides' plans of pair `pair` (from 1): A opens the first level in odd pairs and B in
/// even ones, so over two pairs each side opens every level once.
pub fn for_pair(a: &Plan, b: &Plan, pair: u32) -> (Plan, Plan) {
    split(a, b, pair % 2 == 1)
}

/// A side's waits: its turn at level `i` is slot `2i` (first) or `2i + 1`; the wait before it is
/// the slots since its previous turn ended.
fn turns(side: &str, first: &[bool], slot: u32) -> Turns {
    let mut idle_s = Vec::with_capacity(first.len());
    let mut next_free = 0u32;
    for (i, f) in first.iter().enumerate() {
        let at = 2 * i as u32 + u32::from(!f);
        idle_s.push((at - next_free).saturating_mul(slot));
        next_free = at + 1;
    }
    Turns {
        side: side.into(),
        first: first.to_vec(),
        idle_s,
        slot_s: slot,
    }
}

/// `p` with each step moved later by the waits up to it, the k6 stages with the rate-0 waits,
/// and `IDLE` in the script's environment.
fn apply(p: &Plan, t: Turns) -> Plan {
    let mut out = p.clone();
    let mut shift = 0u32;
    // each step's shift: the waits up to and including its own
    let mut shift_of = Vec::with_capacity(out.steps.len());
    let mut stages = Vec::new();
    for (i, step) in out.steps.iter_mut().enumerate() {
        let idle = t.idle_s[i];
        if idle > 0 {
            if i > 0 {
                stages.push(K6Stage {
                    target: 0,
                    duration_s: 0,
                });
            }
            stages.push(K6Stage {
                target: 0,
                duration_s: idle,
            });
        }
        shift = shift.saturating_add(idle);
        shift_of.push(shift);
        step.start_s += shift;
        step.hold_start_s += shift;
        step.hold_end_s += shift;
        stages.extend(p.stages[2 * i..2 * i + 2].iter().cloned());
    }
    for w in &mut out.windows {
        if let Some(i) = w.step {
            w.start_s += shift_of[i];
            w.end_s += shift_of[i];
        }
    }
    out.total_s = p.total_s.saturating_add(shift);
    out.stages = stages;
    let idle: Vec<String> = t.idle_s.iter().map(u32::to_string).collect();
    out.k6_env.insert("IDLE".into(), idle.join(","));
    out.turns = Some(t);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Script;
    use crate::plan::{PlanOptions, WindowKind, build};

    fn plan(id: &str) -> Plan {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let q = &crate::verify::quantities::Quantities;
        let cat = crate::experiment::Catalog::load(&dir, q).expect("catalog loads");
        build(cat.expand(id).unwrap()[0], PlanOptions { quick: true })
    }

    #[test]
    fn levels_alternate_abba_and_never_overlap() {
        let p = plan("2a");
        let (a, b) = split(&p, &p, true);
        let slot = p.ramp_s + p.hold_s;
        assert_eq!(a.turns.as_ref().unwrap().first[..3], [true, false, true]);
        assert_eq!(a.turns.as_ref().unwrap().idle_s[..3], [0, 2 * slot, 0]);
        assert_eq!(b.turns.as_ref().unwrap().idle_s[..3], [slot, 0, 2 * slot]);
        // every step of one side lies outside every step of the other
        for sa in &a.steps {
            for sb in &b.steps {
                let apart = sa.start_s + slot <= sb.start_s || sb.start_s + slot <= sa.start_s;
                assert!(apart, "A {sa:?} overlaps B {sb:?}");
            }
        }
        // level i: the first turn starts at warm-up + 2 i slots
        for (i, (sa, sb)) in a.steps.iter().zip(&b.steps).enumerate() {
            let first = p.warmup_s + 2 * i as u32 * slot;
            assert_eq!(sa.start_s.min(sb.start_s), first, "level {i}");
            assert_eq!(sa.hold_end_s - sa.hold_start_s, p.hold_s);
        }
        let end = p.warmup_s + 2 * p.steps.len() as u32 * slot;
        assert_eq!(a.total_s.max(b.total_s), end);
        // windows follow their steps; the warm-up stays where it was
        for w in a.windows.iter().filter(|w| w.kind == WindowKind::Hold) {
            let s = &a.steps[w.step.unwrap()];
            assert_eq!((w.start_s, w.end_s), (s.hold_start_s, s.hold_end_s));
        }
        assert_eq!(a.windows[0], p.windows[0]);
        assert_eq!(a.k6_env["IDLE"].split(',').count(), p.steps.len());
    }

    #[test]
    fn the_stages_add_up_to_the_timeline() {
        let p = plan("exp1");
        for a_first in [true, false] {
            let (a, b) = split(&p, &p, a_first);
            for side in [&a, &b] {
                let sum: u32 = side.stages.iter().map(|s| s.duration_s).sum();
                assert_eq!(p.warmup_s + sum, side.total_s, "{:?}", side.turns);
            }
            assert_ne!(a.steps[0].start_s, b.steps[0].start_s);
        }
    }

    #[test]
    fn together_halves_the_rates_and_keeps_the_timeline() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let q = &crate::verify::quantities::Quantities;
        let cat = crate::experiment::Catalog::load(&dir, q).expect("catalog loads");
        let e = cat.expand("2a").unwrap()[0];
        let t = together(e).unwrap();
        assert_eq!(t.load.steps[..3], [25, 50, 63]);
        assert_eq!(t.load.warmup_rps, e.load.warmup_rps.div_ceil(2));
        let (full, half) = (plan("2a"), build(&t, PlanOptions { quick: true }));
        assert_eq!(
            half.total_s, full.total_s,
            "the same timeline at half the rate"
        );
        assert_eq!(half.k6_env["STEPS"], "25,50,63,75,88,100,125");
        for (f, h) in full.steps.iter().zip(&half.steps) {
            assert_eq!(
                (f.hold_start_s, f.hold_end_s),
                (h.hold_start_s, h.hold_end_s)
            );
            assert_eq!(h.target, f.target.div_ceil(2));
        }
        let mut tiny = e.clone();
        tiny.load.steps = vec![1, 2, 3];
        assert!(
            together(&tiny).unwrap_err().contains("merges"),
            "1 and 2 both halve to 1"
        );
    }

    #[test]
    fn plans_that_cannot_take_turns_say_why() {
        let p = plan("2a");
        let mut q = p.clone();
        q.steps.pop();
        assert!(check(&p, &q).unwrap_err().contains("steps"));
        assert!(check(&p, &p).is_ok());
        let closed = plan("demo-closed");
        assert!(check(&closed, &closed).unwrap_err().contains("closed"));
        let paused = plan("demo-pause");
        assert!(check(&paused, &paused).unwrap_err().contains("freezes"));
        let stepped = plan("exp1");
        assert_eq!(stepped.script, Script::Stepped);
        assert!(check(&stepped, &stepped).is_ok());
    }
}

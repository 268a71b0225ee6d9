//! `perflab compare`'s pairs by turns (`--design steps`) driven through two fake engines, one
//! per side, without Docker: both rounds of a pair run at the same time, each with the
//! timeline of its turns (`plan::turns`: A opens odd pairs, B even ones), their measured loads
//! start on one instant (the later of the two sides' arrivals), the referee looks after each
//! pair, a side whose stack fails stops its twin before any load, and an interrupt aborts both
//! and leaves nothing. The same loop catches up a side behind with whole rounds.
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use perflab::plan;
use perflab::rundir::batch::{CompareSide, CompareTag, Design};
use perflab::rundir::{RunDir, RunState};
use perflab::session::fake::{FakeEngine, Fault, Op};
use perflab::session::interleave::{
    Batch, End, Interleaved, Schedule, SideRunner, Tagged, interleave,
};
use perflab::session::measurement::Stepped;
use perflab::session::round::{RoundOutcome, RoundSpec};
use perflab::session::run_round;
use perflab::session::signals::Interrupt;
use perflab::session::twin::Twins;

use crate::compare_interleave::{Scripted, demo, k6_csv, tag_of};
use CompareSide::{A, B};

const B_LATE_S: i64 = 5;

/// Each side its own fake engine (its own stack); B's clock runs `B_LATE_S` ahead, as a
/// stack that took longer to come up.
struct Pairs<'a> {
    engines: [FakeEngine; 2],
    out: &'a Path,
    /// What each call ran: a pair (both sides) or a whole round of one side.
    ran: Vec<(CompareSide, u32, Design)>,
}

fn b_late() -> DateTime<Utc> {
    "2026-11-30T12:00:00Z".parse::<DateTime<Utc>>().unwrap() + chrono::Duration::seconds(B_LATE_S)
}

impl Pairs<'_> {
    fn new(out: &Path, faults: [Option<Fault>; 2]) -> (Pairs<'_>, Interrupt) {
        let (a, interrupt) = FakeEngine::new(faults[0]);
        let b = a.sibling(faults[1]);
        let engines = [
            a.with_k6_csv(k6_csv()),
            b.with_k6_csv(k6_csv()).starting_at(b_late()),
        ];
        let ran = Vec::new();
        (Pairs { engines, out, ran }, interrupt)
    }
}

fn overrides(side: CompareSide) -> Vec<String> {
    match side {
        A => Vec::new(),
        B => vec!["stack.demo.service_ms=41".into()],
    }
}

impl SideRunner for Pairs<'_> {
    async fn round(
        &mut self,
        tag: CompareTag,
        interrupt: &Interrupt,
    ) -> anyhow::Result<RoundOutcome> {
        let (exp, plan, layout) = demo();
        let o = overrides(tag.side);
        let spec = RoundSpec {
            experiment: &exp,
            plan: &plan,
            round: tag.pair,
            out_root: self.out,
            overrides: &o,
            layout: &layout,
            quiet: true,
            name: None,
            twin: None,
        };
        self.ran.push((tag.side, tag.pair, tag.design));
        let mut m = Tagged {
            inner: Stepped {
                plan: plan.clone(),
                align: false,
            },
            tag: Some(tag.clone()),
        };
        let i = usize::from(tag.side == B);
        run_round(&mut self.engines[i], &spec, &mut m, interrupt).await
    }

    async fn pair(
        &mut self,
        [ta, tb]: [CompareTag; 2],
        interrupt: &Interrupt,
    ) -> anyhow::Result<[RoundOutcome; 2]> {
        let (exp, plan, layout) = demo();
        let (pa, pb) = match ta.design {
            Design::Together => (plan.clone(), plan.clone()),
            _ => plan::turns::for_pair(&plan, &plan, ta.pair),
        };
        let twins = Twins::default();
        let (twin_a, twin_b) = (twins.side(0), twins.side(1));
        let (oa, ob) = (overrides(A), overrides(B));
        let spec = |plan, overrides, twin| RoundSpec {
            experiment: &exp,
            plan,
            round: ta.pair,
            out_root: self.out,
            overrides,
            layout: &layout,
            quiet: true,
            name: None,
            twin: Some(twin),
        };
        let (sa, sb) = (spec(&pa, &oa, &twin_a), spec(&pb, &ob, &twin_b));
        self.ran.push((A, ta.pair, ta.design));
        self.ran.push((B, tb.pair, tb.design));
        let mut ma = Tagged {
            inner: Stepped {
                plan: pa.clone(),
                align: false,
            },
            tag: Some(ta),
        };
        let mut mb = Tagged {
            inner: Stepped {
                plan: pb.clone(),
                align: false,
            },
            tag: Some(tb),
        };
        let [ea, eb] = &mut self.engines;
        let (ra, rb) = tokio::join!(
            run_round(ea, &sa, &mut ma, interrupt),
            run_round(eb, &sb, &mut mb, interrupt)
        );
        Ok([ra?, rb?])
    }
}

/// One loop by turns from the recorded rounds `from`, up to `max` pairs, never decided.
fn run(
    pairs: &mut Pairs<'_>,
    interrupt: &Interrupt,
    from: (Vec<PathBuf>, Vec<PathBuf>),
    max: usize,
) -> (Interleaved, Vec<(usize, usize)>) {
    run_design(pairs, interrupt, from, (max, Design::Steps))
}

fn run_design(
    pairs: &mut Pairs<'_>,
    interrupt: &Interrupt,
    from: (Vec<PathBuf>, Vec<PathBuf>),
    (max, design): (usize, Design),
) -> (Interleaved, Vec<(usize, usize)>) {
    let mut referee = Scripted {
        decide_at: None,
        looks: Vec::new(),
    };
    let batch = Batch {
        id: "t1".into(),
        declared_a: Vec::new(),
        declared_b: overrides(B),
    };
    let schedule = Schedule {
        max_rounds: max,
        run_out: false,
        design,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut say = |_: &str| {};
    let looped = interleave(
        pairs,
        &mut referee,
        &batch,
        from,
        schedule,
        interrupt,
        &mut say,
    );
    let done = rt.block_on(looped).unwrap();
    (done, referee.looks)
}

fn manifest(dir: &Path) -> perflab::rundir::Manifest {
    RunDir::open(dir).unwrap().read_manifest().unwrap()
}

#[test]
fn both_sides_of_a_pair_run_at_once_taking_turns_from_one_instant() {
    let out = tempfile::tempdir().unwrap();
    let (mut pairs, interrupt) = Pairs::new(out.path(), [None, None]);
    let (done, looks) = run(&mut pairs, &interrupt, (Vec::new(), Vec::new()), 2);
    assert_eq!(done.end, End::Cap);
    let s = Design::Steps;
    assert_eq!(pairs.ran, [(A, 1, s), (B, 1, s), (A, 2, s), (B, 2, s)]);
    assert_eq!(looks, [(1, 1), (2, 2)], "judged after each pair");
    for (i, (a, b)) in done.a.iter().zip(&done.b).enumerate() {
        let (ma, mb) = (manifest(a), manifest(b));
        for (m, d, side) in [(&ma, a, A), (&mb, b, B)] {
            assert_eq!(
                tag_of(d),
                (m.measurements.compare.clone().unwrap(), RunState::Complete)
            );
            let tag = m.measurements.compare.as_ref().unwrap();
            assert_eq!((tag.side, tag.design), (side, Design::Steps));
            let turns = m.plan.turns.as_ref().expect("the plan records its turns");
            assert_eq!(turns.side, side.to_string());
            // A opens the first level of odd pairs, B of even ones
            assert_eq!(
                turns.first[0],
                (side == A) == (i % 2 == 0),
                "pair {} {side}",
                i + 1
            );
            assert!(
                m.caveats.iter().any(|c| c.contains("pair by turns")),
                "{:?}",
                m.caveats
            );
        }
        // one instant for both loads: the later side's arrival (B's clock is ahead)
        let (ka, kb) = (
            ma.measurements.alignment.unwrap(),
            mb.measurements.alignment.unwrap(),
        );
        assert_eq!(ka.k6_start, kb.k6_start, "pair {}", i + 1);
        assert!(ka.k6_start >= b_late(), "{} before B arrived", ka.k6_start);
        // the two timelines' hold windows never overlap
        for sa in &ma.plan.steps {
            for sb in &mb.plan.steps {
                assert!(sa.hold_end_s <= sb.start_s || sb.hold_end_s <= sa.start_s);
            }
        }
    }
    for e in &pairs.engines {
        assert!(e.objects.is_empty(), "torn down: {:?}", e.objects);
        assert_eq!(e.calls.iter().filter(|c| **c == Op::StackUp).count(), 2);
    }
}

#[test]
fn a_side_whose_stack_fails_stops_its_twin_before_any_load() {
    let out = tempfile::tempdir().unwrap();
    let (mut pairs, interrupt) = Pairs::new(out.path(), [None, Some(Fault::Fail(Op::StackUp))]);
    let (done, looks) = run(&mut pairs, &interrupt, (Vec::new(), Vec::new()), 3);
    assert_eq!(done.end, End::HarnessFailed);
    assert!(looks.is_empty() && done.a.is_empty() && done.b.is_empty());
    let (a, b) = (&done.ran[0].1, &done.ran[1].1);
    assert_eq!((a.state, b.state), (RunState::Failed, RunState::Failed));
    let why = a.reason.clone().unwrap_or_default();
    assert!(why.contains("stopped before its load"), "{why}");
    assert!(
        !pairs.engines[0].calls.contains(&Op::StartLoad),
        "A loaded alone"
    );
    for e in &pairs.engines {
        assert!(e.objects.is_empty(), "torn down: {:?}", e.objects);
    }
}

#[test]
fn an_interrupt_during_the_turns_aborts_both_sides_and_leaves_nothing() {
    let out = tempfile::tempdir().unwrap();
    // B's load is interrupted (the fake runs a round to its end between two waits, so the side
    // polled second is the one still measuring when the signal comes)
    let fault = Some(Fault::Interrupt(Op::WaitLoad, 1));
    let (mut pairs, interrupt) = Pairs::new(out.path(), [None, fault]);
    let (done, _) = run(&mut pairs, &interrupt, (Vec::new(), Vec::new()), 3);
    assert_eq!(done.end, End::Interrupted);
    let states: Vec<RunState> = done.ran.iter().map(|(_, o)| o.state).collect();
    assert_eq!(states, [RunState::Aborted, RunState::Aborted]);
    for e in &pairs.engines {
        assert!(e.objects.is_empty(), "torn down: {:?}", e.objects);
        assert!(e.calls.contains(&Op::Teardown));
    }
}

#[test]
fn a_side_behind_catches_up_by_whole_rounds_then_the_sides_take_turns() {
    let out = tempfile::tempdir().unwrap();
    let (mut first, interrupt) = Pairs::new(out.path(), [None, None]);
    let (one, _) = run(&mut first, &interrupt, (Vec::new(), Vec::new()), 1);
    // A has one more round than B: B2 alone first, then pair 3 by turns
    let from = (vec![one.a[0].clone(), one.a[0].clone()], one.b.clone());
    let (mut pairs, interrupt) = Pairs::new(out.path(), [None, None]);
    let (done, looks) = run(&mut pairs, &interrupt, from, 3);
    let (r, s) = (Design::Rounds, Design::Steps);
    assert_eq!(pairs.ran, [(B, 2, r), (A, 3, s), (B, 3, s)]);
    assert_eq!(looks, [(2, 1), (2, 2), (3, 3)]);
    assert_eq!(done.end, End::Cap);
}

#[test]
fn a_pair_loaded_together_runs_both_sides_over_the_same_seconds_and_says_so() {
    let out = tempfile::tempdir().unwrap();
    let (mut pairs, interrupt) = Pairs::new(out.path(), [None, None]);
    let t = Design::Together;
    let (done, looks) = run_design(&mut pairs, &interrupt, (Vec::new(), Vec::new()), (2, t));
    assert_eq!(done.end, End::Cap);
    assert_eq!(pairs.ran, [(A, 1, t), (B, 1, t), (A, 2, t), (B, 2, t)]);
    assert_eq!(looks, [(1, 1), (2, 2)], "judged after each pair");
    for (a, b) in done.a.iter().zip(&done.b) {
        let (ma, mb) = (manifest(a), manifest(b));
        for (m, side) in [(&ma, A), (&mb, B)] {
            let tag = m.measurements.compare.as_ref().unwrap();
            assert_eq!((tag.side, tag.design), (side, t));
            assert!(m.plan.turns.is_none(), "no turns when loaded together");
            assert!(
                m.caveats.iter().any(|c| c.contains("loaded together")),
                "{:?}",
                m.caveats
            );
        }
        let (ka, kb) = (
            ma.measurements.alignment.unwrap(),
            mb.measurements.alignment.unwrap(),
        );
        assert_eq!(ka.k6_start, kb.k6_start, "one instant for both loads");
        // the same windows on the same clock: each level's holds are the same seconds
        for (sa, sb) in ma.plan.steps.iter().zip(&mb.plan.steps) {
            assert_eq!(
                (sa.hold_start_s, sa.hold_end_s),
                (sb.hold_start_s, sb.hold_end_s)
            );
        }
    }
    for e in &pairs.engines {
        assert!(e.objects.is_empty(), "torn down: {:?}", e.objects);
    }
}

//! `perflab compare EXP --a ... --b ...`'s loop driven through the fake engine, without Docker:
//! rounds alternate in ABBA order (A1 B1, B2 A2, A3 B3 ...) on a fresh stack each, each manifest records its batch, side
//! and pair, the loop stops when the referee decides or at the cap, Ctrl-C keeps the complete
//! rounds and a resumed loop goes on from them (the side behind first); then the real referee
//! and the search for recorded rounds of a configuration on the recorded fixture rounds.
use std::path::{Path, PathBuf};

use perflab::experiment::{Catalog, CatalogEntry, Experiment};
use perflab::plan::{self, CpuLayout, CpuSet, Plan};
use perflab::rundir::batch::{CompareSide, CompareTag, Design};
use perflab::rundir::{RunDir, RunState};
use perflab::session::fake::{FakeEngine, Fault, Op};
use perflab::session::interleave::{
    Batch, End, Interleaved, Judgement, RecordedReferee, Referee, Schedule, SideRunner, Tagged,
    interleave,
};
use perflab::session::measurement::Stepped;
use perflab::session::round::{RoundOutcome, RoundSpec};
use perflab::session::run_round;
use perflab::session::signals::Interrupt;

use CompareSide::{A, B};

/// demo-open's quick plan, as `run demo-open --quick` resolves it, on a 2-CPU layout.
pub(crate) fn demo() -> (Experiment, Plan, CpuLayout) {
    let catalog = Catalog::load(
        Path::new("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let quick = perflab::cli::catalog::PlanArgs {
        quick: true,
        ..Default::default()
    };
    let r = quick.resolve(&catalog, "demo-open").unwrap().remove(0);
    let cpus = CpuSet::parse("0-1").unwrap();
    let layout = plan::layout::resolve(&cpus, None, false).unwrap();
    (r.experiment, r.plan, layout)
}

/// Rounds on the fake engine (one engine: its calls and faults count across rounds, and its
/// objects show what each round's teardown left).
struct FakeSides<'a> {
    engine: &'a mut FakeEngine,
    out: &'a Path,
    ran: Vec<(CompareSide, u32)>,
    /// Objects alive when each round began (a fresh stack: none).
    left_before: Vec<usize>,
}

impl SideRunner for FakeSides<'_> {
    async fn round(
        &mut self,
        tag: CompareTag,
        interrupt: &Interrupt,
    ) -> anyhow::Result<RoundOutcome> {
        let (exp, plan, layout) = demo();
        let overrides: Vec<String> = match tag.side {
            A => Vec::new(),
            B => vec!["stack.demo.service_ms=41".into()],
        };
        let spec = RoundSpec {
            experiment: &exp,
            plan: &plan,
            round: tag.pair,
            out_root: self.out,
            overrides: &overrides,
            layout: &layout,
            quiet: true,
            name: None,
            twin: None,
        };
        self.ran.push((tag.side, tag.pair));
        self.left_before.push(self.engine.objects.len());
        let steps = Stepped {
            plan: plan.clone(),
            align: false,
        };
        let mut m = Tagged {
            inner: steps,
            tag: Some(tag),
        };
        run_round(self.engine, &spec, &mut m, interrupt).await
    }

    async fn pair(
        &mut self,
        _: [CompareTag; 2],
        _: &Interrupt,
    ) -> anyhow::Result<[RoundOutcome; 2]> {
        panic!("these loops make whole rounds (tests/offline/compare_turns.rs: pairs by turns)")
    }
}

/// Decides once both sides have `decide_at` rounds (never when `None`); records each look.
pub(crate) struct Scripted {
    pub decide_at: Option<usize>,
    pub looks: Vec<(usize, usize)>,
}

impl Referee for Scripted {
    fn judge(&mut self, a: &[PathBuf], b: &[PathBuf]) -> anyhow::Result<Judgement> {
        self.looks.push((a.len(), b.len()));
        let decided = self.decide_at.is_some_and(|n| a.len() >= n && b.len() >= n);
        Ok(Judgement {
            decided,
            verdict: if decided { "same" } else { "inconclusive" }.into(),
            line: format!("{} a / {} b", a.len(), b.len()),
        })
    }
}

fn batch(id: &str) -> Batch {
    Batch {
        id: id.into(),
        declared_a: Vec::new(),
        declared_b: vec!["stack.demo.service_ms=41".into()],
    }
}

pub(crate) fn k6_csv() -> PathBuf {
    Path::new("tests/fixtures/k6/stepped-open.csv.gz").to_path_buf()
}

/// What a loop did, the sides it ran in order, the objects alive as each round began, what
/// it said and when the referee looked.
struct Looped {
    done: Interleaved,
    ran: Vec<(CompareSide, u32)>,
    left: Vec<usize>,
    said: Vec<String>,
    looks: Vec<(usize, usize)>,
}

/// A fake engine with its interrupt, and an out root the loops write into.
struct Bench {
    engine: FakeEngine,
    interrupt: Interrupt,
    out: tempfile::TempDir,
    /// `--run-out`: every pair of the plan, decided or not.
    run_out: bool,
}

impl Bench {
    fn new(fault: Option<Fault>) -> Bench {
        let (engine, interrupt) = FakeEngine::new(fault);
        Bench {
            engine: engine.with_k6_csv(k6_csv()),
            interrupt,
            out: tempfile::tempdir().unwrap(),
            run_out: false,
        }
    }

    /// A new process: a fresh engine and interrupt, the same out root.
    fn restart(&mut self) {
        let (engine, interrupt) = FakeEngine::new(None);
        (self.engine, self.interrupt) = (engine.with_k6_csv(k6_csv()), interrupt);
    }

    /// One loop from the recorded rounds `from`, the referee deciding once both sides have
    /// `decide_at` rounds.
    fn run(
        &mut self,
        decide_at: Option<usize>,
        from: (Vec<PathBuf>, Vec<PathBuf>),
        (max_rounds, id): (usize, &str),
    ) -> Looped {
        let mut sides = FakeSides {
            engine: &mut self.engine,
            out: self.out.path(),
            ran: Vec::new(),
            left_before: Vec::new(),
        };
        let mut referee = Scripted {
            decide_at,
            looks: Vec::new(),
        };
        let mut said = Vec::new();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let schedule = Schedule {
            max_rounds,
            run_out: self.run_out,
            design: Design::Rounds,
        };
        let mut say = |l: &str| said.push(l.to_string());
        let batch = batch(id);
        let looped = interleave(
            &mut sides,
            &mut referee,
            &batch,
            from,
            schedule,
            &self.interrupt,
            &mut say,
        );
        let done = rt.block_on(looped).unwrap();
        Looped {
            done,
            ran: sides.ran,
            left: sides.left_before,
            said,
            looks: referee.looks,
        }
    }
}

fn none() -> (Vec<PathBuf>, Vec<PathBuf>) {
    (Vec::new(), Vec::new())
}

/// The tag a round's manifest recorded, and its state.
pub(crate) fn tag_of(dir: &Path) -> (CompareTag, RunState) {
    let d = RunDir::open(dir).unwrap();
    let m = d.read_manifest().unwrap();
    (
        m.measurements.compare.expect("tagged"),
        d.status().unwrap().state,
    )
}

#[test]
fn rounds_alternate_on_fresh_stacks_until_the_cap_each_tagged_with_its_side() {
    let mut bench = Bench::new(None);
    let Looped {
        done,
        ran,
        left,
        said,
        looks,
    } = bench.run(None, none(), (3, "b1"));
    // ABBA: each pair opens with the side that closed the one before
    assert_eq!(ran, [(A, 1), (B, 1), (B, 2), (A, 2), (A, 3), (B, 3)]);
    assert_eq!(done.end, End::Cap);
    // judged after every pair, and said so
    assert_eq!(looks, [(1, 1), (2, 2), (3, 3)]);
    assert_eq!(
        said,
        [
            "A 1 / B 1 rounds: 1 a / 1 b",
            "A 2 / B 2 rounds: 2 a / 2 b",
            "A 3 / B 3 rounds: 3 a / 3 b"
        ]
    );
    // each round on a fresh stack: nothing alive when it began, one stack up and down each
    assert_eq!(left, [0; 6]);
    let count = |op| bench.engine.calls.iter().filter(|c| **c == op).count();
    assert_eq!((count(Op::StackUp), count(Op::Teardown)), (6, 6));
    // every round complete, in its side's list, its manifest tagged with batch, side and pair
    assert_eq!((done.a.len(), done.b.len()), (3, 3));
    for (side, dirs) in [(A, &done.a), (B, &done.b)] {
        for (i, d) in dirs.iter().enumerate() {
            let (tag, state) = tag_of(d);
            assert_eq!(state, RunState::Complete);
            assert_eq!(
                (tag.batch.as_str(), tag.side, tag.pair),
                ("b1", side, i as u32 + 1)
            );
            let m = RunDir::open(d).unwrap().read_manifest().unwrap();
            assert_eq!(m.round, i as u32 + 1);
            assert_eq!(m.overrides.is_empty(), side == A, "{:?}", m.overrides);
        }
    }
    assert_eq!(tag_of(&done.b[0]).0.declared, ["stack.demo.service_ms=41"]);
}

#[test]
fn the_loop_stops_once_decided() {
    let mut bench = Bench::new(None);
    let Looped { done, ran, .. } = bench.run(Some(2), none(), (10, "b"));
    assert_eq!(done.end, End::Decided);
    assert_eq!(ran, [(A, 1), (B, 1), (B, 2), (A, 2)]);
    assert_eq!(done.judgement.unwrap().verdict, "same");
    // rounds already recorded that decide run nothing
    let from = (done.a.clone(), done.b.clone());
    let Looped {
        done: again, ran, ..
    } = bench.run(Some(2), from, (10, "b"));
    assert!(ran.is_empty(), "{ran:?}");
    assert_eq!(
        (again.end, again.a, again.b),
        (End::Decided, done.a, done.b)
    );
}

/// `--run-out`: the loop runs the whole plan though decided after the second pair, still
/// looking after every pair, and ends decided.
#[test]
fn run_out_runs_every_pair_of_the_plan() {
    let mut bench = Bench::new(None);
    bench.run_out = true;
    let Looped {
        done, ran, looks, ..
    } = bench.run(Some(2), none(), (4, "r"));
    assert_eq!(done.end, End::Decided);
    assert_eq!(ran.len(), 8, "{ran:?}");
    assert_eq!(looks, [(1, 1), (2, 2), (3, 3), (4, 4)]);
}

#[test]
fn ctrl_c_keeps_the_complete_rounds_and_a_resumed_loop_goes_on_from_them() {
    // SIGINT while the 4th round (A2: the second pair opens with B) measures
    let mut bench = Bench::new(Some(Fault::Interrupt(Op::WaitLoad, 4)));
    let Looped { done, ran, .. } = bench.run(Some(3), none(), (10, "b7"));
    assert_eq!(done.end, End::Interrupted);
    assert_eq!(ran, [(A, 1), (B, 1), (B, 2), (A, 2)]);
    assert_eq!(
        (done.a.len(), done.b.len()),
        (1, 2),
        "the aborted A2 does not count"
    );
    let (a2, _) = &done.ran[3];
    let aborted = &done.ran[3].1;
    assert_eq!((a2.side, a2.pair, aborted.state), (A, 2, RunState::Aborted));
    assert_eq!(tag_of(&aborted.dir).1, RunState::Aborted);
    let left = &bench.engine.objects;
    assert!(left.is_empty(), "torn down: {left:?}");
    // A second loop (a new process: no signal yet) from the kept rounds, in the same batch:
    // A runs first to even the pair, then A3 B3 (the third pair opens with A), decided.
    bench.restart();
    let from = (done.a.clone(), done.b.clone());
    let Looped {
        done: resumed, ran, ..
    } = bench.run(Some(3), from, (10, "b7"));
    assert_eq!(ran, [(A, 2), (A, 3), (B, 3)]);
    assert_eq!(resumed.end, End::Decided);
    assert_eq!(&resumed.b[..2], &done.b[..]);
    let tags: Vec<(CompareSide, u32, String)> = resumed
        .a
        .iter()
        .chain(&resumed.b)
        .map(|d| {
            let t = tag_of(d).0;
            (t.side, t.pair, t.batch)
        })
        .collect();
    let want: Vec<(CompareSide, u32, String)> = [(A, 1), (A, 2), (A, 3), (B, 1), (B, 2), (B, 3)]
        .into_iter()
        .map(|(s, p)| (s, p, "b7".to_string()))
        .collect();
    assert_eq!(tags, want);
}

#[test]
fn a_side_behind_runs_first_and_a_side_at_the_cap_no_more() {
    let s = Schedule {
        max_rounds: 3,
        run_out: false,
        design: Design::Rounds,
    };
    assert_eq!(s.next(0, 0), Some(A));
    // ABBA on a tie: pair 2 opens with B, pair 3 with A, pair 4 with B
    assert_eq!(
        [s.next(1, 1), s.next(2, 2)],
        [Some(B), Some(A)],
        "pairs alternate which side goes first"
    );
    assert_eq!(
        Schedule {
            max_rounds: 5,
            run_out: false,
            design: Design::Rounds,
        }
        .next(3, 3),
        Some(B)
    );
    assert_eq!(s.next(2, 0), Some(B));
    assert_eq!(s.next(1, 2), Some(A));
    assert_eq!(s.next(3, 1), Some(B));
    assert_eq!(s.next(5, 3), None);
    // after each round that gives the side behind one more, never twice at one count
    assert!(!s.judge_now(0, 0, 0) && !s.judge_now(2, 0, 0));
    assert!(s.judge_now(2, 1, 0) && !s.judge_now(2, 1, 1) && s.judge_now(2, 2, 1));
    assert!(!s.judge_now(3, 2, 2) && s.judge_now(3, 3, 2));
    // two rounds of A recorded, none of B: B1 B2 (judged after each), then alternate
    let mut bench = Bench::new(None);
    let two = bench.run(None, none(), (2, "x")).done;
    let from = (two.a.clone(), Vec::new());
    let Looped {
        done, ran, looks, ..
    } = bench.run(None, from, (3, "y"));
    assert_eq!(ran, [(B, 1), (B, 2), (A, 3), (B, 3)]);
    assert_eq!(looks, [(2, 1), (2, 2), (3, 3)]);
    assert_eq!(done.end, End::Cap);
}

#[test]
fn a_failed_round_stops_the_loop_counting_nothing_of_it() {
    let mut bench = Bench::new(Some(Fault::Fail(Op::StackUp)));
    let Looped {
        done, ran, looks, ..
    } = bench.run(None, none(), (10, "f"));
    assert_eq!(done.end, End::HarnessFailed);
    assert_eq!(ran, [(A, 1)]);
    assert!(done.a.is_empty() && done.b.is_empty() && looks.is_empty());
    assert_eq!(done.ran[0].1.state, RunState::Failed);
}

/// The recorded rounds of a fixture batch, oldest first.
fn fixture(batch: &str) -> Vec<PathBuf> {
    let root = Path::new("tests/fixtures/compare").join(batch);
    let exp = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let mut v: Vec<PathBuf> = std::fs::read_dir(exp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

#[test]
fn the_real_referee_decides_an_injected_regression_and_not_one_round_a_side() {
    let (base, burn) = (fixture("2a-base"), fixture("2a-burn"));
    let mut r = RecordedReferee::new(Default::default());
    let j = r.judge(&base, &burn).unwrap();
    assert!(j.decided, "{j:?}");
    assert_eq!(j.verdict, "regressed");
    assert!(j.line.starts_with("regressed: "), "{}", j.line);
    let j = r.judge(&base[..1], &burn[..1]).unwrap();
    assert!(!j.decided && j.verdict == "inconclusive", "{j:?}");
    // a directory that is not a run is an error, not a verdict
    assert!(r.judge(&[PathBuf::from("tests")], &burn).is_err());
}

/// A copy of the recorded round `src` in `dir` (its manifest, report and status), its
/// manifest tagged with `tag` when given.
fn copy_round(src: &Path, dir: &Path, tag: Option<CompareTag>) -> PathBuf {
    let to = dir.join(src.file_name().unwrap());
    std::fs::create_dir_all(&to).unwrap();
    for f in ["manifest.json", "report.json", "status.json"] {
        std::fs::copy(src.join(f), to.join(f)).unwrap();
    }
    if tag.is_some() {
        let mut m = perflab::rundir::read_manifest(&to).unwrap();
        m.measurements.compare = tag;
        std::fs::write(to.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    }
    to
}

fn tag(batch: &str, side: CompareSide, pair: u32) -> CompareTag {
    CompareTag {
        batch: batch.into(),
        side,
        pair,
        declared: match side {
            A => Vec::new(),
            B => vec!["burn_us=1000".into()],
        },
        design: Default::default(),
    }
}

/// The recorded base and burn rounds of 2a copied, tagged by `tags` (batch and pair of the
/// base's rounds, then the burn's; `None`: untagged), judged by the real referee.
fn judge_tagged(tags: [Option<(&str, u32)>; 6]) -> Judgement {
    let out = tempfile::tempdir().unwrap();
    let rounds: Vec<PathBuf> = fixture("2a-base")
        .iter()
        .chain(&fixture("2a-burn"))
        .zip(tags)
        .enumerate()
        .map(|(i, (src, t))| {
            let side = if i < 3 { A } else { B };
            copy_round(src, out.path(), t.map(|(b, p)| tag(b, side, p)))
        })
        .collect();
    let mut r = RecordedReferee::new(Default::default());
    r.judge(&rounds[..3], &rounds[3..]).unwrap()
}

#[test]
fn the_referee_pairs_the_rounds_of_one_batch_and_says_which_test_it_used() {
    let untagged = judge_tagged([None; 6]);
    assert!(
        untagged
            .line
            .contains("(unpaired: 6 round(s) without a pair number, not run by an interleaved"),
        "{}",
        untagged.line
    );
    // the same rounds as the pairs of one batch: the paired test, the same B/A
    let one = |p| Some(("p1", p));
    let paired = judge_tagged([one(1), one(2), one(3), one(1), one(2), one(3)]);
    assert!(
        paired.line.contains("(paired over 3 pairs)"),
        "{}",
        paired.line
    );
    let ratio = |l: &str| l.split("B/A ").nth(1).unwrap()[..5].to_string();
    assert_eq!(ratio(&paired.line), ratio(&untagged.line));
    // B's rounds listed in ABBA order of their pairs pair all the same
    let abba = judge_tagged([one(1), one(2), one(3), one(2), one(1), one(3)]);
    assert!(abba.line.contains("(paired over 3 pairs)"), "{}", abba.line);
    // the fallbacks: a round of another batch, a round without its pair, an untagged round
    let two = judge_tagged([one(1), one(2), one(3), one(1), one(2), Some(("p2", 3))]);
    assert!(
        two.line
            .contains("(unpaired: rounds from 2 comparison batches (p1, p2)"),
        "{}",
        two.line
    );
    let lone = judge_tagged([one(1), one(2), one(3), one(1), one(2), one(4)]);
    assert!(
        lone.line.contains("(unpaired: round(s) A3, B4 without"),
        "{}",
        lone.line
    );
    let old = judge_tagged([one(1), one(2), None, one(1), one(2), one(3)]);
    assert!(
        old.line
            .contains("(unpaired: 1 round(s) without a pair number"),
        "{}",
        old.line
    );
}

#[test]
fn recorded_rounds_of_a_configuration_are_found_newest_first_up_to_the_cap() {
    use perflab::run::compare::{newest_batch, recorded_rounds};
    use perflab::verify::side::parse_side;
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("2a");
    std::fs::create_dir_all(&dir).unwrap();
    for src in fixture("2a-base").iter().chain(&fixture("2a-burn")) {
        copy_round(src, &dir, None);
    }
    // tag the burn's middle round as a round of batch "z9"
    copy_round(&fixture("2a-burn")[1], &dir, Some(tag("z9", B, 2)));
    let c = Catalog::load(
        Path::new("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let CatalogEntry::Experiment(e) = &c.get("2a").unwrap().entry else {
        panic!()
    };
    let side = |p: &[&str]| {
        let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
        parse_side(B, &p, &[]).unwrap()
    };
    let mut skipped = Vec::new();
    let names = |runs: &[perflab::verify::load::LoadedRun]| -> Vec<String> {
        runs.iter()
            .map(|r| r.dir.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    let burn = recorded_rounds(
        out.path(),
        e,
        &side(&["burn_us=1000"]),
        (true, false),
        10,
        &mut skipped,
    );
    assert_eq!(
        names(&burn),
        [
            "20261130T222517Z-r1",
            "20261130T222600Z-r2",
            "20261130T222642Z-r3"
        ]
    );
    assert_eq!(newest_batch(&burn).as_deref(), Some("z9"));
    // the newest two only, still oldest first
    let two = recorded_rounds(
        out.path(),
        e,
        &side(&["burn_us=1000"]),
        (true, false),
        2,
        &mut skipped,
    );
    assert_eq!(names(&two), ["20261130T222600Z-r2", "20261130T222642Z-r3"]);
    // published: the base rounds, not a batch's
    let base = recorded_rounds(out.path(), e, &side(&[]), (true, false), 10, &mut skipped);
    assert_eq!(
        names(&base),
        [
            "20261130T222220Z-r1",
            "20261130T222301Z-r2",
            "20261130T222341Z-r3"
        ]
    );
    assert_eq!(newest_batch(&base), None);
    // another suite, or full-length rounds: none
    assert!(
        recorded_rounds(
            out.path(),
            e,
            &side(&["suite=forky"]),
            (true, false),
            10,
            &mut skipped
        )
        .is_empty()
    );
    assert!(
        recorded_rounds(out.path(), e, &side(&[]), (false, false), 10, &mut skipped).is_empty()
    );
    assert!(skipped.is_empty(), "{skipped:?}");
}

//! `perflab compare EXP --a ... --b ...`: pairs of rounds of two configurations until the
//! verdict is decided or both sides reach the cap, judged after every pair. A pair is made one
//! of two ways (`Schedule::design`):
//! - by turns (`Design::Steps`, where both stacks fit): both sides' rounds run at the same time
//!   on two stacks side by side, taking turns at each load level (`plan::turns`, A B B A over
//!   levels; A opens odd pairs, B even ones), so a pair's two readings of a level are seconds
//!   apart;
//! - together (`Design::Together`): both stacks side by side and loaded at the same time, each
//!   at half the plan's rates, so a pair's two readings of a level are the same seconds;
//! - as whole rounds (`Design::Rounds`) on a fresh stack each, in ABBA order over the pairs
//!   (A1 B1, B2 A2, A3 B3 ...): slow drift of the host lands on both sides alike, and a linear
//!   drift within a pair cancels over two pairs. A side behind the other (a resumed batch)
//!   catches up this way in either design, judged after each of its rounds.
//!
//! Complete rounds already recorded of either configuration count. An interrupt keeps every
//! complete round (the next `compare` counts them). The rounds are run by a [`SideRunner`]
//! (Docker for real, the fake engine in tests) and judged by a [`Referee`] (`compare`'s verdict
//! on the recorded runs, or a scripted one).
use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;

use super::engine::Engine;
use super::load_phase::Stage;
use super::measurement::Measurement;
use super::round::RoundOutcome;
use super::signals::Interrupt;
use super::trail::Stop;
use crate::rundir::RunState;
pub(crate) use crate::rundir::batch::{CompareSide, CompareTag, Design};
use crate::verify::compare::{RoundsComparison, Settings};
use crate::verify::load::{self, LoadedRun};

/// A measurement whose round records the comparison batch it belongs to (`measurements.compare`
/// in its manifest); `None` leaves the manifest as `perflab run` writes it.
pub struct Tagged<M> {
    pub inner: M,
    pub tag: Option<CompareTag>,
}

impl<M: Measurement> Measurement for Tagged<M> {
    async fn run<E: Engine>(&mut self, stage: &mut Stage<'_, E>) -> Result<(), Stop> {
        if let Some(t) = &self.tag {
            stage.manifest.measurements.compare = Some(t.clone());
            match t.design {
                Design::Steps => stage.manifest.caveats.push(format!(
                    "a comparison's pair by turns: the other side's stack was up beside this one, on the same CPUs, at rate 0 during this side's turns (its samplers ran too); {}'s steps are windows with the other side's turns between them",
                    t.side
                )),
                Design::Together => stage.manifest.caveats.push(format!(
                    "a comparison's pair loaded together: the other side's stack ran beside this one on the same CPUs and was loaded at the same time; {}'s rates are half the experiment's, so its knee and latencies are not a lone run's",
                    t.side
                )),
                Design::Rounds => {}
            }
        }
        self.inner.run(stage).await
    }
}

/// Runs one round of one side on a fresh stack.
#[allow(async_fn_in_trait)]
pub trait SideRunner {
    /// Round `tag.pair` of `tag.side`, its manifest tagged with `tag`. Err only when the run
    /// directory could not be made (a round that failed or was interrupted is an outcome).
    async fn round(&mut self, tag: CompareTag, interrupt: &Interrupt) -> Result<RoundOutcome>;
    /// Both sides' rounds of one pair at the same time (`tags[0].design`): taking turns at each
    /// load level (`Design::Steps`; A takes the first level's first turn in odd pairs, B in even
    /// ones), or loaded together (`Design::Together`).
    async fn pair(
        &mut self,
        tags: [CompareTag; 2],
        interrupt: &Interrupt,
    ) -> Result<[RoundOutcome; 2]>;
}

/// What the referee says of the rounds so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The verdict will not change with more rounds: stop.
    pub decided: bool,
    pub verdict: String,
    /// One line for the terminal: the running estimate and why.
    pub line: String,
}

/// Judges both sides' complete rounds.
pub trait Referee {
    fn judge(&mut self, a: &[PathBuf], b: &[PathBuf]) -> Result<Judgement>;
}

/// Which side runs next and when to judge, from the complete rounds each side has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Rounds a side at most (`--max-rounds`).
    pub max_rounds: usize,
    /// Run every pair of the plan even when decided earlier (`--run-out`): a batch that stops
    /// at its first decided look over-reads the change; one run out does not.
    pub run_out: bool,
    /// How a pair is made; with `Steps`, a side behind (a resumed batch) still catches up
    /// with whole rounds.
    pub design: Design,
}

impl Schedule {
    /// The side behind runs first; on a tie the pair about to start (`na + 1`) opens with A
    /// when odd and with B when even (ABBA: A1 B1, B2 A2, A3 B3 ...); a side at the cap runs
    /// no more; `None` when both are at the cap.
    pub fn next(&self, na: usize, nb: usize) -> Option<CompareSide> {
        let (a_open, b_open) = (na < self.max_rounds, nb < self.max_rounds);
        match (a_open, b_open) {
            (false, false) => None,
            (true, false) => Some(CompareSide::A),
            (false, true) => Some(CompareSide::B),
            (true, true) if na < nb => Some(CompareSide::A),
            (true, true) if nb < na => Some(CompareSide::B),
            (true, true) if na.is_multiple_of(2) => Some(CompareSide::A),
            (true, true) => Some(CompareSide::B),
        }
    }

    /// Judge when the side behind gained a round since the last look (`judged_at`: the fewer
    /// rounds a side had then): after every whole pair when the sides alternate, after every
    /// round of a side catching up with rounds the other already had.
    pub fn judge_now(&self, na: usize, nb: usize, judged_at: usize) -> bool {
        na.min(nb) > judged_at
    }
}

/// The batch the rounds run in.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// The batch id (`CompareTag::batch`).
    pub id: String,
    /// Each side's declared difference, as given.
    pub declared_a: Vec<String>,
    pub declared_b: Vec<String>,
}

impl Batch {
    fn tag(&self, side: CompareSide, pair: usize, design: Design) -> CompareTag {
        CompareTag {
            design,
            batch: self.id.clone(),
            side,
            pair: pair as u32,
            declared: match side {
                CompareSide::A => self.declared_a.clone(),
                CompareSide::B => self.declared_b.clone(),
            },
        }
    }
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The referee decided.
    Decided,
    /// Both sides reached the cap undecided.
    Cap,
    /// A signal: the complete rounds are kept.
    Interrupted,
    /// A round's harness failed (its status says why).
    HarnessFailed,
}

/// What the loop did.
#[derive(Debug, Clone)]
pub struct Interleaved {
    /// Every complete round that counts, per side, oldest first (the recorded ones first).
    pub a: Vec<PathBuf>,
    pub b: Vec<PathBuf>,
    /// The rounds this loop ran, in order, whatever their end.
    pub ran: Vec<(CompareTag, RoundOutcome)>,
    /// The last judgement (none before a round on each side).
    pub judgement: Option<Judgement>,
    pub end: End,
}

/// Run rounds alternately until decided, capped, interrupted or failed. `a` and `b` hold the
/// complete rounds already recorded of each configuration (oldest first); `say` gets the
/// running judgement after each look.
pub async fn interleave(
    runner: &mut impl SideRunner,
    referee: &mut impl Referee,
    batch: &Batch,
    (mut a, mut b): (Vec<PathBuf>, Vec<PathBuf>),
    schedule: Schedule,
    interrupt: &Interrupt,
    say: &mut dyn FnMut(&str),
) -> Result<Interleaved> {
    let mut ran = Vec::new();
    let mut judgement = None;
    let mut judged_at = 0;
    let end = loop {
        if schedule.judge_now(a.len(), b.len(), judged_at) {
            judged_at = a.len().min(b.len());
            let j = referee.judge(&a, &b)?;
            say(&format!("A {} / B {} rounds: {}", a.len(), b.len(), j.line));
            let decided = j.decided;
            judgement = Some(j);
            if decided && !schedule.run_out {
                break End::Decided;
            }
        }
        let Some(side) = schedule.next(a.len(), b.len()) else {
            break match judgement.as_ref().is_some_and(|j| j.decided) {
                true => End::Decided,
                false => End::Cap,
            };
        };
        if interrupt.reason().is_some() {
            break End::Interrupted;
        }
        let both_open = a.len() == b.len() && a.len() < schedule.max_rounds;
        let states = if schedule.design.side_by_side() && both_open {
            let pair = a.len() + 1;
            let tags =
                [CompareSide::A, CompareSide::B].map(|s| batch.tag(s, pair, schedule.design));
            let outs = runner.pair(tags.clone(), interrupt).await?;
            let mut states = Vec::new();
            for (tag, o) in tags.into_iter().zip(outs) {
                states.push(keep(&mut a, &mut b, &mut ran, tag, o));
            }
            states
        } else {
            let n = match side {
                CompareSide::A => a.len(),
                CompareSide::B => b.len(),
            };
            // a side catching up runs alone, on the batch's plan (half the rates when together)
            let alone = match schedule.design {
                Design::Together => Design::Together,
                _ => Design::Rounds,
            };
            let tag = batch.tag(side, n + 1, alone);
            let o = runner.round(tag.clone(), interrupt).await?;
            vec![keep(&mut a, &mut b, &mut ran, tag, o)]
        };
        if let Some(end) = ended(&states, interrupt) {
            break end;
        }
    };
    Ok(Interleaved {
        a,
        b,
        ran,
        judgement,
        end,
    })
}

/// Count a round that ran: a complete one joins its side. Returns how it ended.
fn keep(
    a: &mut Vec<PathBuf>,
    b: &mut Vec<PathBuf>,
    ran: &mut Vec<(CompareTag, RoundOutcome)>,
    tag: CompareTag,
    o: RoundOutcome,
) -> RunState {
    let state = o.state;
    if state == RunState::Complete {
        match tag.side {
            CompareSide::A => a.push(o.dir.clone()),
            CompareSide::B => b.push(o.dir.clone()),
        }
    }
    ran.push((tag, o));
    state
}

/// Whether the loop ends after rounds that ended in `states`: an interrupt first, then a
/// harness failure; `None` goes on.
fn ended(states: &[RunState], interrupt: &Interrupt) -> Option<End> {
    if states.contains(&RunState::Aborted) {
        return Some(End::Interrupted);
    }
    if states
        .iter()
        .any(|s| matches!(s, RunState::Failed | RunState::Running))
    {
        return Some(End::HarnessFailed);
    }
    interrupt.reason().map(|_| End::Interrupted)
}

/// The real referee: `compare`'s verdict on the recorded rounds (each read once), with the
/// settings and the plan (`--max-rounds`) its boundary accounts for.
pub struct RecordedReferee {
    runs: BTreeMap<PathBuf, LoadedRun>,
    settings: Settings,
}

impl RecordedReferee {
    pub fn new(settings: Settings) -> RecordedReferee {
        RecordedReferee {
            runs: BTreeMap::new(),
            settings,
        }
    }

    fn load(&mut self, dirs: &[PathBuf]) -> Result<Vec<LoadedRun>> {
        dirs.iter()
            .map(|d| {
                if let Some(r) = self.runs.get(d) {
                    return Ok(r.clone());
                }
                let r = load::load_run(d)?;
                self.runs.insert(d.clone(), r.clone());
                Ok(r)
            })
            .collect()
    }
}

/// The running line: the verdict and why (B/A with its interval, and when undecided about how
/// many more rounds a side would decide).
pub(crate) fn running_line(c: &RoundsComparison) -> String {
    format!("{}: {}", c.verdict.as_str(), c.why)
}

impl Referee for RecordedReferee {
    fn judge(&mut self, a: &[PathBuf], b: &[PathBuf]) -> Result<Judgement> {
        let (ra, rb) = (self.load(a)?, self.load(b)?);
        let c = crate::verify::matrix::compare_loaded(&ra, &rb, &self.settings);
        Ok(Judgement {
            decided: c.decided,
            verdict: c.verdict.as_str().to_string(),
            line: running_line(&c),
        })
    }
}

/// Shown after an interrupt: what was kept and how to go on.
pub(crate) fn kept_note(a: &[PathBuf], b: &[PathBuf]) -> String {
    let list = |v: &[PathBuf]| {
        v.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    if a.is_empty() || b.is_empty() {
        return format!(
            "{} A and {} B complete round(s) kept; run the same command (with --resume to keep the batch) to go on",
            a.len(),
            b.len()
        );
    }
    format!(
        "{} A and {} B complete round(s) kept; run the same command (with --resume to keep the batch) to go on, or read them with `perflab compare {} {}`",
        a.len(),
        b.len(),
        list(a),
        list(b)
    )
}

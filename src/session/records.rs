//! What the engine records in a phase, as typed records (`Record`), and the one place that
//! writes them into the manifest (`Records::apply`). The engine pushes a record the moment it
//! has it; the session applies the phase's records after the phase, whether it ended, failed or
//! was interrupted, so what an aborted phase measured before it stopped is kept.
use std::collections::BTreeMap;

use crate::analyze::omission::Freeze;
use crate::host::speed::{HostSpeed, SpeedReading};
use crate::rundir::Manifest;
use crate::rundir::measurements::{
    ContainerRecord, Generators, K6Resume, PgSlots, Placement, Warmup, pct_of_core,
};
use crate::sample::SamplerSummary;

/// One thing the engine measured or noticed.
#[derive(Debug, Clone)]
pub enum Record {
    /// The versions of the round's components (replacing any recorded before).
    Components(BTreeMap<String, String>),
    /// One more component's version.
    Component(String, String),
    /// The images' tags and ids.
    Images(BTreeMap<String, String>),
    /// The suite the stack's images come from.
    Suite(String),
    /// The stack is up: how long it took and its containers.
    StackStarted {
        start_s: f64,
        containers: Option<BTreeMap<String, ContainerRecord>>,
    },
    /// Where the stack and the generators run.
    Placement(Placement),
    /// A caveat of the run's report.
    Caveat(String),
    LoadgenClockOffsetMs(f64),
    PostgresSlots(PgSlots),
    Warmup(Warmup),
    /// The host's speed before the first load (kept when one is recorded already).
    HostSpeedBefore(SpeedReading),
    /// The host's speed after the last load (beside the one before).
    HostSpeedAfter(SpeedReading),
    /// The app's freeze during a load (`load.pause`).
    Freeze(Freeze),
    /// A timed action of the measured load (`load.actions`), as it ran.
    Action(crate::analyze::actions::ActionRun),
    /// The trigger of a load (`load.trigger`).
    Trigger(crate::analyze::trigger::TriggerEvent),
    /// The k6 command line of the load.
    K6Command(Option<String>),
    K6VusAllocated(u64),
    K6Resume(K6Resume),
    Generators(Generators),
    K6StartedAt(Option<String>),
    /// The samplers' summary of the load.
    Samplers(SamplerSummary),
    /// Cgroup lines a sampler agent on another engine wrote, by its role.
    SamplerAgentLines(String, u64),
    PgXactCommitDelta(i64),
    /// Each generator's first request (unix ms) and their spread.
    K6FirstRequests {
        firsts: Vec<Option<i64>>,
        spread_ms: Option<i64>,
    },
}

/// A phase's records, in the order the engine pushed them.
#[derive(Debug, Default)]
pub struct Records(Vec<Record>);

impl Records {
    pub fn push(&mut self, r: Record) {
        self.0.push(r);
    }

    /// Write the records into `m`, in order, and forget them.
    pub(crate) fn apply(&mut self, m: &mut Manifest) {
        for r in self.0.drain(..) {
            apply_one(r, m);
        }
    }

    /// [`Self::apply`] for the records of a load's phases. The manifest's k6 facts are the
    /// measured load's: a calibration's or a probe's (`measured` false) are dropped, not written
    /// over them (a refined run's manifest used to show its last probe's k6 command, resume and
    /// first requests); what is not of one load, a caveat say, is written either way.
    pub(crate) fn apply_load(&mut self, measured: bool, m: &mut Manifest) {
        for r in self.0.drain(..) {
            if measured || !r.of_one_load() {
                apply_one(r, m);
            }
        }
    }
}

impl Record {
    /// Describes one load's generators or samplers, not the round. Exhaustive: a new record
    /// says which it is.
    fn of_one_load(&self) -> bool {
        match self {
            Record::K6Command(_)
            | Record::K6VusAllocated(_)
            | Record::K6Resume(_)
            | Record::Generators(_)
            | Record::K6StartedAt(_)
            | Record::Samplers(_)
            | Record::SamplerAgentLines(..)
            | Record::PgXactCommitDelta(_)
            | Record::K6FirstRequests { .. } => true,
            Record::Components(_)
            | Record::Component(..)
            | Record::Images(_)
            | Record::Suite(_)
            | Record::StackStarted { .. }
            | Record::Placement(_)
            | Record::Caveat(_)
            | Record::LoadgenClockOffsetMs(_)
            | Record::PostgresSlots(_)
            | Record::Warmup(_)
            | Record::HostSpeedBefore(_)
            | Record::HostSpeedAfter(_)
            | Record::Freeze(_)
            | Record::Action(_) => false,
            Record::Trigger(_) => false,
        }
    }
}

fn apply_one(r: Record, m: &mut Manifest) {
    let ms = &mut m.measurements;
    match r {
        Record::Components(c) => m.components = c,
        Record::Component(k, v) => {
            m.components.insert(k, v);
        }
        Record::Images(i) => m.images = i,
        Record::Suite(s) => ms.stack.suite = Some(s),
        Record::StackStarted {
            start_s,
            containers,
        } => {
            ms.stack.stack_start_s = Some(start_s);
            if containers.is_some() {
                ms.stack.containers = containers;
            }
        }
        Record::Placement(p) => ms.placement = Some(p),
        Record::Caveat(c) => m.caveats.push(c),
        Record::LoadgenClockOffsetMs(o) => ms.loadgen_clock_offset_ms = Some(o),
        Record::PostgresSlots(s) => ms.postgres_slots = Some(s),
        Record::Warmup(w) => ms.stack.warmup = Some(w),
        Record::HostSpeedBefore(before) => {
            if ms.host_speed.is_none() {
                ms.host_speed = Some(HostSpeed {
                    before,
                    after: None,
                });
            }
        }
        Record::HostSpeedAfter(after) => {
            if let Some(s) = &mut ms.host_speed {
                s.after = Some(after);
            }
        }
        Record::Freeze(f) => ms.freezes.push(f),
        Record::Action(a) => ms.actions.push(a),
        Record::Trigger(t) => ms.triggers.push(t),
        Record::K6Command(c) => ms.k6_command = c,
        Record::K6VusAllocated(v) => ms.k6_vus_allocated = Some(v),
        Record::K6Resume(r) => ms.k6_resume = Some(r),
        Record::Generators(g) => ms.generators = Some(g),
        Record::K6StartedAt(t) => ms.k6_started_at = t,
        Record::Samplers(s) => {
            if let Some(c) = s.perflab_cores_mean {
                ms.perflab_cpu_pct_of_core = Some(pct_of_core(c));
            }
            if let Some(c) = s.dockerd_cores_mean {
                ms.dockerd_cpu_pct_of_core = Some(pct_of_core(c));
            }
            ms.samplers = Some(s);
        }
        Record::SamplerAgentLines(role, n) => {
            ms.sampler_agent_cgroup_lines.insert(role, n);
        }
        Record::PgXactCommitDelta(d) => ms.pg_xact_commit_delta = Some(d),
        Record::K6FirstRequests { firsts, spread_ms } => {
            ms.k6_first_request_ms = Some(firsts);
            if spread_ms.is_some() {
                ms.k6_first_request_spread_ms = spread_ms;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A speed reading told apart by its label.
    fn reading(label: &str) -> SpeedReading {
        SpeedReading {
            at: chrono::Utc::now(),
            cpus: Vec::new(),
            not_measured: vec![label.to_string()],
        }
    }

    fn manifest() -> Manifest {
        serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/example/exp1/20261130T235019Z-r1/manifest.json"
        )))
        .unwrap()
    }

    #[test]
    fn the_first_speed_reading_stays_and_the_last_goes_beside_it() {
        let mut m = manifest();
        m.measurements.host_speed = None;
        let mut r = Records::default();
        r.push(Record::HostSpeedAfter(reading("after, with no before")));
        r.push(Record::HostSpeedBefore(reading("first")));
        r.push(Record::HostSpeedBefore(reading("a restack's")));
        r.push(Record::HostSpeedAfter(reading("after")));
        r.apply(&mut m);
        let s = m.measurements.host_speed.unwrap();
        assert_eq!(s.before.not_measured, ["first"]);
        assert_eq!(s.after.unwrap().not_measured, ["after"]);
    }

    #[test]
    fn records_apply_in_order_once() {
        let mut m = manifest();
        let caveats = m.caveats.len();
        let mut r = Records::default();
        r.push(Record::Caveat("a".into()));
        r.push(Record::K6Command(Some("k6 run x".into())));
        r.push(Record::K6Command(Some("k6 run y".into())));
        r.push(Record::StackStarted {
            start_s: 1.5,
            containers: None,
        });
        r.apply(&mut m);
        r.apply(&mut m);
        assert_eq!(m.caveats.len(), caveats + 1, "applied once");
        assert_eq!(m.measurements.k6_command.as_deref(), Some("k6 run y"));
        assert_eq!(m.measurements.stack.stack_start_s, Some(1.5));
    }
}

//! The config quantities, one row each (name, help, reader): the run's recorded config and
//! CPU layout (manifest.json). A lab's own settings are its descriptor's
//! (`lab::LabInfo::quantities`, read by `LabDescriptor::quantity`), not rows here.
use super::value::{Missing, b, need};
use crate::rundir::Manifest;

/// Connections the app can open (`pg_usable`): measured, or for runs recorded before perflab
/// read the slots, PostgreSQL's defaults (3 superuser-reserved, 0 reserved) and the harness's
/// one connection.
fn pg_usable(m: &Manifest) -> f64 {
    match &m.measurements.postgres_slots {
        Some(slots) => slots.usable as f64,
        None => (m.experiment.stack.postgres.max_connections as f64 - 3.0 - 1.0).max(0.0),
    }
}

quantities! {
    /// The run's recorded config or CPU layout (manifest.json).
    ConfigQ, |m: &Manifest| {
        MaxConnections "max_connections" => "PostgreSQL max_connections"
            => m.experiment.stack.postgres.max_connections as f64,
        PgUsable "pg_usable"
            => "connections the app can open: max_connections - reserved slots - the harness's own (measured)"
            => pg_usable(m),
        Slots "slots"
            => "concurrency slots of the app: max_children, pool_max x processes, or demo workers"
            => crate::lab::descriptor(m.experiment.lab).slots(&m.experiment.stack)?,
        SloP95Ms "slo_p95_ms" => "the SLO on p95 (ms)" => m.experiment.load.slo_p95_ms,
        ErrorBudget "error_budget" => "the error budget (0.01 = 1 %)"
            => m.experiment.load.error_budget,
        // The hold the run used (the plan's: `--quick` scales it), as the report does.
        HoldS "hold_s" => "seconds each step is held" => m.plan.hold_s as f64,
        VuCap "vu_cap" => "k6 maxVUs" => m.experiment.load.max_vus as f64,
        TimeoutS "timeout_s" => "client timeout (s)" => m.experiment.load.timeout_s as f64,
        ThinkTimeS "think_time_s" => "closed-model think time (s)"
            => need(m.experiment.load.think_time_s, || "no think time (open model)".into())?,
        AppCpus "app_cpus" => "CPUs of the app box in the run's layout"
            => m.cpu_layout.app.len() as f64,
        DbCpus "db_cpus" => "CPUs of PostgreSQL in the run's layout"
            => m.cpu_layout.db.len() as f64,
        LoadgenCpus "loadgen_cpus" => "CPUs of the load generator in the run's layout"
            => m.cpu_layout.loadgen.len() as f64,
        OnlineCpus "online_cpus" => "online CPUs of the host" => m.cpu_layout.online.len() as f64,
        DbSharesLoadgen "db_shares_loadgen" => "1 when PostgreSQL and k6 share a CPU"
            => b(m.cpu_layout.db.overlaps(&m.cpu_layout.loadgen)),
    }
}

/// A lab's own setting, read by the lab's descriptor from the run's stack section.
pub(crate) fn lab_value(m: &Manifest, lab: crate::lab::Lab, name: &str) -> Result<f64, Missing> {
    crate::lab::descriptor(lab).quantity(&m.experiment.stack, name)
}

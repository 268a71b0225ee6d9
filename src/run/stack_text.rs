//! What `perflab up` and `smoke --keep` print of a started stack (how to reach it, its pinning
//! and containers, how to stop it) and `smoke` of its checks, one line each.
use std::process::ExitCode;

use crate::images::Suite;
use crate::lab::Lab;
use crate::stack::LabStack;
use crate::stack::smoke::SmokeReport;

/// A started stack: its entry point, status pages, database, pinning and containers.
pub(crate) fn stack(s: &LabStack) -> String {
    let mut out = vec![
        format!(
            "{} lab is up (run id {}, ready in {:.1} s)",
            s.lab.as_str(),
            s.run_id,
            s.start_seconds
        ),
        format!("  entry point:   {}", s.entry_url),
    ];
    for (name, label) in [("fpm", "fpm status:   "), ("nginx", "nginx status: ")] {
        if let Some(u) = s.source_url(name) {
            out.push(format!("  {label} {u}"));
        }
    }
    if let Some(pg) = &s.pg {
        out.push(format!(
            "  PostgreSQL:    PGPASSWORD={} psql -h {} -p {} -U {} {}",
            pg.password, pg.host, pg.port, pg.user, pg.dbname
        ));
    }
    out.push(format!(
        "  pinning:       loadgen {} | db {} | app {}",
        s.pinning.loadgen, s.pinning.db, s.pinning.app
    ));
    for c in s.containers.values() {
        out.push(format!(
            "  {:<8} {} (cpus {}, {} MiB)",
            c.role.log_name(),
            c.name,
            c.cpuset,
            c.memory_bytes >> 20
        ));
    }
    out.push(format!("stop it with: perflab down {}", s.run_id));
    out.iter().map(|l| format!("{l}\n")).collect()
}

/// `smoke`'s report on stdout (JSON, or one line per check), then with `--keep` the stack.
pub(crate) fn print_smoke(
    report: &SmokeReport,
    json: bool,
    kept: Option<&LabStack>,
) -> anyhow::Result<()> {
    if json {
        crate::out!("{}", serde_json::to_string_pretty(report)?);
    } else {
        crate::output::emit(&smoke(report));
    }
    if let Some(s) = kept {
        crate::output::emit(&stack(s));
    }
    Ok(())
}

/// The smoke report, one line per check.
fn smoke(report: &SmokeReport) -> String {
    report
        .checks
        .iter()
        .map(|c| {
            format!(
                "{} {:<50} {}\n",
                if c.ok { "ok  " } else { "FAIL" },
                c.name,
                c.detail
            )
        })
        .collect()
}

/// `smoke`'s last line on stderr, passed (with the suite and the time) or how many checks
/// failed, and its exit code (1 when one failed).
pub(crate) fn smoke_verdict(report: &SmokeReport, lab: Lab, suite: Suite) -> ExitCode {
    if report.passed() {
        let s = report.seconds;
        crate::say!("{} smoke passed ({suite}, {s:.1} s)", lab.as_str());
        ExitCode::SUCCESS
    } else {
        let n = report.failures().len();
        crate::say!("{} smoke FAILED: {n} check(s)", lab.as_str());
        ExitCode::from(crate::error::EXIT_FAILURE)
    }
}

//! What `perflab up` and `smoke --keep` print of a started stack (how to reach it, its pinning
//! and containers, how to stop it) and `smoke` of its checks, one line each.
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

/// The smoke report, one line per check.
pub(crate) fn smoke(report: &SmokeReport) -> String {
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

/// `smoke`'s last line: passed, with the suite and the time, or how many checks failed.
pub(crate) fn smoke_verdict(report: &SmokeReport, lab: Lab, suite: Suite) -> String {
    if report.passed() {
        format!(
            "{} smoke passed ({suite}, {:.1} s)",
            lab.as_str(),
            report.seconds
        )
    } else {
        format!(
            "{} smoke FAILED: {} check(s)",
            lab.as_str(),
            report.failures().len()
        )
    }
}

//! The worker memory block (issue 41, item 5): per step and role, the PSS of its processes,
//! its workers and one worker's share, when the run sampled them (absent otherwise).
use super::cells::{block, f1};
use crate::analyze::model::Report;
use crate::report::table::{Block, Table};

/// Per step and role with a memory reading: workers, one worker's PSS and private pages, the
/// workers' total and the container's; `None` for runs without readings.
pub fn memory_block(r: &Report) -> Option<Block> {
    let mut t = Table::new(
        [
            "step",
            "role",
            "workers",
            "PSS/worker",
            "private/worker",
            "pool PSS",
            "all PSS",
        ]
        .map(String::from)
        .to_vec(),
    );
    t.left = vec![0, 1];
    for s in &r.steps {
        let Some(w) = &s.server else { continue };
        for (role, m) in &w.memory {
            t.push(vec![
                s.name.clone(),
                role.clone(),
                m.workers.to_string(),
                f1(m.worker_pss_mib),
                f1(m.worker_private_mib),
                f1(m.worker_pss_total_mib),
                f1(m.pss_mib),
            ]);
        }
    }
    if t.rows.is_empty() {
        return None;
    }
    let mut b = block("Worker memory");
    b.table = Some(t);
    b.notes.push(
        "MiB, means over the step's window of /proc/<pid>/smaps_rollup: PSS counts each shared \
         page once among the processes that map it, so a pool's total is what its workers cost; \
         workers = the container's processes of its most common name (php-fpm's master \
         included); private = pages no other process maps, what one more worker adds. Claims: \
         pss_mib.<role>, worker_pss_mib.<role>, worker_private_mib.<role>, \
         worker_pss_total_mib.<role>, mem_workers.<role>."
            .into(),
    );
    Some(b)
}

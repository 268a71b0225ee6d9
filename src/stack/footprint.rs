//! What a lab's stack takes of the host's memory: its containers' limits and the load
//! generator's (`perflab compare` brings two stacks up side by side only when both fit).
use crate::experiment::Experiment;
use crate::lab::{StartContext, descriptor};

/// The memory limits of `e`'s stack, the load generator's included (bytes), with `app_cpus`
/// CPUs in the app's slot (some labs size by them).
pub(crate) fn memory_bytes(e: &Experiment, app_cpus: usize) -> Result<i64, String> {
    let ctx = StartContext {
        password: String::new(),
        monitor_password: String::new(),
        app_cpus,
        nofile: super::nofile_limit(),
        sampler_addr: String::new(),
    };
    let decls = descriptor(e.lab).containers(&e.stack, &ctx)?;
    let lab: i64 = decls.iter().map(|d| d.memory_mib * super::MIB).sum();
    Ok(lab + super::K6_MEMORY_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_counts_every_container_and_the_generator() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let q = &crate::verify::quantities::Quantities;
        let cat = crate::experiment::Catalog::load(&dir, q).expect("catalog loads");
        let node = memory_bytes(cat.expand("2a").unwrap()[0], 2).unwrap();
        let php = memory_bytes(cat.expand("exp1").unwrap()[0], 2).unwrap();
        let demo = memory_bytes(cat.expand("demo-open").unwrap()[0], 2).unwrap();
        let (k6, mib) = (super::super::K6_MEMORY_BYTES, super::super::MIB);
        // two containers (PostgreSQL and the app), three for php, one for the demo
        assert!(node >= k6 + 2 * 256 * mib, "{node}");
        assert!(php >= k6 + 3 * 256 * mib, "{php}");
        assert!(
            demo >= k6 + 128 * mib && demo < node.min(php),
            "demo {demo}"
        );
    }
}

//! The sample agent: `perflab sample-agent` (hidden) runs inside a small container on another
//! engine's host (pid and cgroup namespaces of the host, `/sys/fs/cgroup` read-only) and prints
//! the same JSON lines the local samplers write (cgroup and host samples, errors) to stdout;
//! the orchestrator reads them back through the Docker logs API and files them (`split`).
use std::path::Path;
use std::time::Duration;

use super::Samplers;
use super::records::{CgroupSample, HostSample};
use super::targets::ContainerTarget;

/// Where the orchestrator puts the targets file inside the agent's container.
pub(crate) const TARGETS_PATH: &str = "/agent/targets.json";
/// Where the perflab binary goes inside the agent's container.
pub(crate) const BINARY_PATH: &str = "/usr/local/bin/perflab";

/// Run the agent until SIGTERM or SIGINT: sample the targets every `period`.
pub(crate) fn run(targets: &Path, period: Duration) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(targets)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", targets.display()))?;
    let containers: Vec<ContainerTarget> = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: not a target list: {e}", targets.display()))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let samplers = Samplers::start_stdout(containers, period);
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        samplers.stop().await;
        Ok(())
    })
}

/// The agent's output sorted into the run's files by record type ([`CgroupSample`],
/// [`HostSample`], other JSON objects such as sampler errors). Non-JSON lines (log noise) are
/// dropped. Pure.
pub(crate) fn split(output: &str) -> (String, String, String) {
    let (mut cg, mut host, mut other) = (String::new(), String::new(), String::new());
    for line in output.lines() {
        let l = line.trim();
        let dest = if serde_json::from_str::<CgroupSample>(l).is_ok() {
            &mut cg
        } else if serde_json::from_str::<HostSample>(l).is_ok() {
            &mut host
        } else if serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(l).is_ok() {
            &mut other
        } else {
            continue;
        };
        dest.push_str(l);
        dest.push('\n');
    }
    (cg, host, other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_output_is_filed_by_kind() {
        let out = "\
{\"t\":1764475200000,\"role\":\"k6\",\"container\":\"perflab-x-k6-g0\",\"cpu_cores\":0.31,\"mem_bytes\":1,\"throttled_ms\":0.0,\"psi_some_avg10\":null}
{\"t\":1764475200000,\"cpu_busy_pct\":[12.0,80.5],\"psi_some_avg10\":1.2,\"dockerd_cores\":0.01,\"perflab_cores\":0.002}
{\"t\":1764475200001,\"sampler\":\"cgroup\",\"error\":\"x: gone\"}
some stderr noise
";
        let (cg, host, other) = split(out);
        assert_eq!(cg.lines().count(), 1);
        assert!(cg.contains("\"role\":\"k6\""));
        let parsed: Vec<crate::sample::records::CgroupSample> =
            crate::sample::records::parse_jsonl(&cg).unwrap();
        assert_eq!(parsed[0].cpu_cores, 0.31);
        assert_eq!(host.lines().count(), 1);
        assert_eq!(other.lines().count(), 1);
    }
}

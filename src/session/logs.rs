//! What a round keeps of the stack: every container's log, the Node app's metrics lines, the
//! Laravel log and (diag-acc) the access logs; and which sampler column a container feeds.
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;

use crate::analyze::samples::Role as SampleRole;
use crate::docker::Docker;
use crate::experiment::{Experiment, Lab};
use crate::rundir;
use crate::stack::{LabStack, StackRole};

/// The sampler's role name for a stack container (the report's column names).
pub fn sample_role(lab: Lab, role: StackRole) -> SampleRole {
    match (lab, role) {
        (_, StackRole::Pg) => SampleRole::Pg,
        (_, StackRole::PhpFpm) => SampleRole::Fpm,
        (_, StackRole::Nginx) => SampleRole::Nginx,
        (Lab::Demo, StackRole::App) => SampleRole::Demo,
        (_, StackRole::App) => SampleRole::App,
    }
}

/// Container logs into `logs/<role>.log`; the Node app's metrics lines into `samples/node.jsonl`;
/// Laravel's log file when present; the access logs into `logs/access/` when turned on.
pub async fn collect_logs(
    docker: &Docker,
    stack: &LabStack,
    exp: &Experiment,
    dir: &Path,
) -> Result<()> {
    let logs_dir = dir.join("logs");
    std::fs::create_dir_all(&logs_dir)?;
    for (role, c) in &stack.containers {
        let text = docker.logs(&c.id, None).await.unwrap_or_default();
        rundir::write_atomic(
            &logs_dir.join(format!("{}.log", role.as_str())),
            text.as_bytes(),
        )?;
        if *role == StackRole::App {
            let lines = metrics_lines(&text, &c.name);
            if !lines.is_empty() {
                std::fs::create_dir_all(dir.join("samples"))?;
                rundir::write_atomic(&dir.join("samples/node.jsonl"), lines.as_bytes())?;
            }
        }
    }
    if stack.lab == Lab::Php
        && let Ok(bytes) = stack
            .read_file(
                docker,
                StackRole::PhpFpm,
                "/srv/app/storage/logs/laravel.log",
            )
            .await
    {
        rundir::write_atomic(&logs_dir.join("laravel.log"), &bytes)?;
    }
    // diag-acc: the access logs, beside (not in) the digested logs
    if exp.stack.php.as_ref().is_some_and(|p| p.access_log) {
        let access_dir = logs_dir.join("access");
        std::fs::create_dir_all(&access_dir)?;
        for (role, path, name) in [
            (
                StackRole::PhpFpm,
                crate::stack::templates::FPM_ACCESS_LOG,
                "fpm.log",
            ),
            (
                StackRole::Nginx,
                crate::stack::templates::NGINX_ACCESS_LOG,
                "nginx.log",
            ),
        ] {
            let bytes = stack
                .read_file(docker, role, path)
                .await
                .with_context(|| format!("reading the access log {path}"))?;
            rundir::write_atomic(&access_dir.join(name), &bytes)?;
        }
    }
    Ok(())
}

/// The app's 2-second JSON metrics lines (those with `t` and `elu` or `inflight`), each with the
/// container name added, as JSON lines.
pub fn metrics_lines(log: &str, container: &str) -> String {
    let mut out = String::new();
    for line in log.lines() {
        let l = line.trim();
        if !l.starts_with('{') {
            continue;
        }
        let Ok(serde_json::Value::Object(mut m)) = serde_json::from_str::<serde_json::Value>(l)
        else {
            continue;
        };
        if !m.contains_key("t") || !(m.contains_key("elu") || m.contains_key("inflight")) {
            continue;
        }
        m.insert("container".into(), json!(container));
        out.push_str(&serde_json::Value::Object(m).to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_lines_keep_only_the_apps_json_lines() {
        let log = "listening on 3000\n{\"t\":\"2026-10-30T11:21:45.694Z\",\"pid\":1,\"rps\":150,\"elu\":0.81,\"inflight\":0}\nnot json {\n{\"msg\":\"other\"}\n";
        let out = metrics_lines(log, "perflab-x-app");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1);
        let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["container"], "perflab-x-app");
        assert_eq!(v["rps"], 150);
    }

    #[test]
    fn sample_roles_match_the_report_columns() {
        assert_eq!(sample_role(Lab::Php, StackRole::PhpFpm).as_str(), "fpm");
        assert_eq!(sample_role(Lab::Node, StackRole::App).as_str(), "app");
        assert_eq!(sample_role(Lab::Demo, StackRole::App).as_str(), "demo");
        assert_eq!(sample_role(Lab::Php, StackRole::Pg).as_str(), "pg");
    }
}

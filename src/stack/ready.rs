//! Readiness: bounded, explicit checks per part (PostgreSQL `SELECT 1`, the entry point's HTTP
//! answer, the Node app's first metrics line); a container that exits during start-up is
//! reported at once with its last log lines.
use super::{LabStack, StackRole};
use crate::docker::Docker;
use crate::experiment::{Experiment, Lab};
use std::time::{Duration, Instant};

/// Why a stack did not become ready.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(
        "the {role} container ({name}) exited during start-up with code {code}{oom}; its last log lines:\n{tail}"
    )]
    Exited {
        role: &'static str,
        name: String,
        code: i64,
        oom: &'static str,
        tail: String,
    },
    #[error(
        "the {role} container ({name}) was not ready after {secs} s (last check: {last}); its last log lines:\n{tail}"
    )]
    Timeout {
        role: &'static str,
        name: String,
        secs: u64,
        last: String,
        tail: String,
    },
}

#[derive(Clone, Copy)]
enum Check {
    Pg,
    Http(&'static str, &'static str),
    MetricsLine,
}

async fn run_check(
    docker: &Docker,
    stack: &LabStack,
    role: StackRole,
    check: Check,
) -> Result<(), String> {
    match check {
        Check::Pg => {
            let pg = stack.pg.as_ref().ok_or("no PostgreSQL in this stack")?;
            let client = pg.connect().await.map_err(|e| format!("{e:#}"))?;
            let row = client
                .query_one("SELECT 1", &[])
                .await
                .map_err(|e| e.to_string())?;
            let one: i32 = row.get(0);
            if one == 1 {
                Ok(())
            } else {
                Err(format!("SELECT 1 returned {one}"))
            }
        }
        Check::Http(path, needle) => {
            let url = format!("{}{path}", stack.entry_url);
            let client = reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .map_err(|e| e.to_string())?;
            let r = client
                .get(&url)
                .send()
                .await
                .map_err(|e| format!("GET {url}: {e}"))?;
            let status = r.status();
            let body = r.text().await.unwrap_or_default();
            if status.as_u16() == 200 && body.contains(needle) {
                Ok(())
            } else {
                Err(format!(
                    "GET {url}: HTTP {status}, body {}",
                    truncate(&body, 200)
                ))
            }
        }
        Check::MetricsLine => {
            let c = &stack.containers[&role];
            let logs = docker
                .logs(&c.id, Some(200))
                .await
                .map_err(|e| e.to_string())?;
            if logs.lines().any(|l| l.starts_with("{\"t\":")) {
                Ok(())
            } else {
                Err("no metrics line on stdout yet".into())
            }
        }
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_string()
    } else {
        format!("{}...", &s[..s.floor_char_boundary(n)])
    }
}

/// Poll `check` every 200 ms until it passes, the container exits, or `timeout` elapses.
async fn wait_for(
    docker: &Docker,
    stack: &LabStack,
    role: StackRole,
    check: Check,
    timeout: Duration,
) -> anyhow::Result<()> {
    let c = &stack.containers[&role];
    let t0 = Instant::now();
    loop {
        let info = docker.inspect_container(&c.id).await?;
        if !info.running {
            let tail = docker.logs(&c.id, Some(30)).await.unwrap_or_default();
            return Err(StartError::Exited {
                role: role.as_str(),
                name: c.name.clone(),
                code: info.exit_code.unwrap_or(-1),
                oom: if info.oom_killed {
                    " (killed: out of memory)"
                } else {
                    ""
                },
                tail,
            }
            .into());
        }
        match run_check(docker, stack, role, check).await {
            Ok(()) => return Ok(()),
            Err(last) if t0.elapsed() >= timeout => {
                let tail = docker.logs(&c.id, Some(30)).await.unwrap_or_default();
                return Err(StartError::Timeout {
                    role: role.as_str(),
                    name: c.name.clone(),
                    secs: timeout.as_secs(),
                    last,
                    tail,
                }
                .into());
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// PostgreSQL answers `SELECT 1` on its 127.0.0.1 port.
pub async fn wait_pg(docker: &Docker, stack: &LabStack, timeout: Duration) -> anyhow::Result<()> {
    wait_for(docker, stack, StackRole::Pg, Check::Pg, timeout).await
}

/// Every part of the stack is ready.
pub async fn wait_all(
    docker: &Docker,
    stack: &LabStack,
    exp: &Experiment,
    timeout: Duration,
) -> anyhow::Result<()> {
    match exp.lab {
        Lab::Php => {
            let (a, b, c) = tokio::join!(
                wait_pg(docker, stack, timeout),
                // php-fpm has no port of its own on the host: it must stay up while nginx answers.
                wait_for(
                    docker,
                    stack,
                    StackRole::Nginx,
                    Check::Http("/api/ping", "\"pong\":true"),
                    timeout
                ),
                wait_for(
                    docker,
                    stack,
                    StackRole::PhpFpm,
                    Check::Http("/api/ping", "\"pong\":true"),
                    timeout
                ),
            );
            a?;
            b?;
            c?;
        }
        Lab::Node => {
            wait_pg(docker, stack, timeout).await?;
            wait_for(docker, stack, StackRole::App, Check::MetricsLine, timeout).await?;
            wait_for(
                docker,
                stack,
                StackRole::App,
                Check::Http("/cpu", "\"key\""),
                timeout,
            )
            .await?;
        }
        Lab::Demo => {
            wait_for(docker, stack, StackRole::App, Check::MetricsLine, timeout).await?;
            wait_for(
                docker,
                stack,
                StackRole::App,
                Check::Http("/work", "\"ok\":true"),
                timeout,
            )
            .await?;
        }
    }
    Ok(())
}

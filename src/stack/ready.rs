//! Readiness: the bounded checks a lab's descriptor declares per container (`lab::WaitFor`:
//! PostgreSQL `SELECT 1`, the entry point's HTTP answer, the app's first metrics line); a
//! container that exits during start-up is reported at once with its last log lines.
use super::started::LabStack;
use crate::docker::Docker;
use crate::lab::{Role, WaitFor};
use std::time::{Duration, Instant};

/// Why a stack did not become ready.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
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

/// A container found stopped during start-up: its exit code, whether the kernel killed it for
/// memory, and its last log lines.
pub(crate) async fn exited(
    docker: &Docker,
    role: Role,
    name: &str,
    info: &crate::docker::ContainerInfo,
) -> StartError {
    let tail = docker.logs(&info.id, Some(30)).await.unwrap_or_default();
    StartError::Exited {
        role: role.log_name(),
        name: name.to_string(),
        code: info.exit_code.unwrap_or(-1),
        oom: if info.oom_killed {
            " (killed: out of memory)"
        } else {
            ""
        },
        tail,
    }
}

async fn run_check(
    docker: &Docker,
    stack: &LabStack,
    role: Role,
    check: &WaitFor,
) -> Result<(), String> {
    match check {
        WaitFor::Sql => {
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
        WaitFor::Http { path, status, body } => http_check(stack, path, *status, body).await,
        WaitFor::LogLine { prefix } => {
            let c = &stack.containers[&role];
            let logs = docker
                .logs(&c.id, Some(200))
                .await
                .map_err(|e| e.to_string())?;
            if logs.lines().any(|l| l.starts_with(prefix)) {
                Ok(())
            } else {
                Err("no metrics line on stdout yet".into())
            }
        }
    }
}

/// `GET <entry point><path>` answers `want` with `needle` in the body.
async fn http_check(stack: &LabStack, path: &str, want: u16, needle: &str) -> Result<(), String> {
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
    if status.as_u16() == want && body.contains(needle) {
        Ok(())
    } else {
        Err(format!(
            "GET {url}: HTTP {status}, body {}",
            truncate(&body, 200)
        ))
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
    role: Role,
    check: &WaitFor,
    timeout: Duration,
) -> anyhow::Result<()> {
    let c = &stack.containers[&role];
    let t0 = Instant::now();
    loop {
        let info = docker.inspect_container(&c.id).await?;
        if !info.running {
            return Err(exited(docker, role, &c.name, &info).await.into());
        }
        match run_check(docker, stack, role, check).await {
            Ok(()) => return Ok(()),
            Err(last) if t0.elapsed() >= timeout => {
                let tail = docker.logs(&c.id, Some(30)).await.unwrap_or_default();
                return Err(StartError::Timeout {
                    role: role.log_name(),
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

/// Every check of `role`, in order.
pub(crate) async fn wait_role(
    docker: &Docker,
    stack: &LabStack,
    role: Role,
    checks: &[WaitFor],
    timeout: Duration,
) -> anyhow::Result<()> {
    for check in checks {
        wait_for(docker, stack, role, check, timeout).await?;
    }
    Ok(())
}

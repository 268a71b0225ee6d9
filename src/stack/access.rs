//! How the host and the load generators reach a stack: at the containers' addresses on the lab
//! network when this host routes to it (nothing published), else through ports published on
//! 127.0.0.1 or `--publish-on`; and the one address allowed to read php-fpm's status page.
use super::options::StartOptions;
use crate::docker::Docker;
use anyhow::Result;
use serde::Serialize;

/// How the host and the load generators reach a stack, decided once its network exists.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Access {
    /// The host reaches the containers at their addresses on the lab network: nothing is
    /// published for it.
    pub direct: bool,
    /// Why it does not (then the entry point and PostgreSQL are published).
    pub fallback: Option<String>,
    /// The one address allowed to read php-fpm's status page: where perflab's sampler
    /// connects from (the lab network's gateway, or this machine's address toward an engine
    /// elsewhere).
    pub sampler_addr: String,
}

/// How this machine reaches an entry point published on `ip` (a wildcard address through
/// loopback).
pub(crate) fn entry_url(ip: &str, port: u16) -> String {
    match ip.parse::<std::net::IpAddr>() {
        Ok(a) if a.is_unspecified() => format!("http://127.0.0.1:{port}"),
        Ok(std::net::IpAddr::V6(a)) => format!("http://[{a}]:{port}"),
        _ => format!("http://{ip}:{port}"),
    }
}

/// How the orchestrator reaches a PostgreSQL published on `ip` (a wildcard address or none
/// through loopback).
pub(super) fn pg_host(ip: Option<&str>) -> String {
    match ip {
        Some(ip)
            if !ip
                .parse::<std::net::IpAddr>()
                .is_ok_and(|a| a.is_unspecified()) =>
        {
            ip.to_string()
        }
        _ => "127.0.0.1".into(),
    }
}

/// How the host reaches the stack on `network`: directly when it can, else through ports
/// published on 127.0.0.1 (or `--publish-on`), with the reason kept for the manifest.
pub(super) async fn access(docker: &Docker, network: &str, opts: &StartOptions) -> Result<Access> {
    let a = docker.host_access(network).await?;
    let gateway = a.gateway.clone().unwrap_or_else(|| "127.0.0.1".into());
    // An engine elsewhere sees perflab's requests come from this machine's address toward it.
    let sampler_addr = if docker.endpoint().is_on_this_machine() {
        gateway
    } else {
        opts.publish_ip
            .as_deref()
            .and_then(local_addr_toward)
            .unwrap_or(gateway)
    };
    Ok(Access {
        direct: a.direct.is_ok(),
        fallback: a.direct.err(),
        sampler_addr,
    })
}

/// This machine's source address for traffic to `ip` (a connected UDP socket sends nothing).
fn local_addr_toward(ip: &str) -> Option<String> {
    let ip: std::net::IpAddr = ip.parse().ok()?;
    let s = std::net::UdpSocket::bind(("0.0.0.0", 0)).ok()?;
    s.connect((ip, 9)).ok()?;
    Some(s.local_addr().ok()?.ip().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_urls_by_publish_address() {
        assert_eq!(entry_url("127.0.0.1", 8080), "http://127.0.0.1:8080");
        assert_eq!(entry_url("0.0.0.0", 8080), "http://127.0.0.1:8080");
        assert_eq!(entry_url("10.0.0.4", 80), "http://10.0.0.4:80");
        assert_eq!(entry_url("::1", 80), "http://[::1]:80");
    }
}

//! Options for starting a stack.
use std::time::Duration;

/// Options for starting a stack.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// Upper bound for each readiness check.
    pub ready_timeout: Duration,
    /// Also publish the entry point on this fixed 127.0.0.1 port (`perflab up --publish`).
    pub publish_entry: Option<u16>,
    /// Publish the entry point (nginx or the app) on this address, for a load generator on
    /// another engine (`perflab run --publish-on`); also where it is published when the host
    /// cannot reach the containers directly.
    pub publish_ip: Option<String>,
    /// Where PostgreSQL is published when the host cannot reach the containers directly
    /// (127.0.0.1 by default; the stack's host address when it runs on another engine).
    pub publish_pg_ip: Option<String>,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            ready_timeout: Duration::from_secs(60),
            publish_entry: None,
            publish_ip: None,
            publish_pg_ip: None,
        }
    }
}

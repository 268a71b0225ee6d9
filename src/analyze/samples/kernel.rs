//! The kernel's view of php-fpm's listening socket (the php lab's `fpm_net` source: one `grep`
//! in php-fpm's container of the TcpExt lines of `/proc/net/netstat`, the listening sockets of
//! `/proc/net/tcp` and `tcp6`, `/proc/sys/net/core/somaxconn` and its `php-fpm.conf`'s
//! `listen.backlog`) read back as the row of
//! `sources::ROWS`: the accept queue of its listening TCP socket (`ss -ltn`'s Recv-Q, the
//! kernel's `sk_ack_backlog`), the socket's limit (Send-Q, `sk_max_ack_backlog`: the pool's
//! `listen.backlog`, capped at `somaxconn` by listen(2)), and the namespace's TcpExt counters
//! `ListenOverflows` (a connection that found the accept queue full) and `ListenDrops`. The
//! kernel calls the queue full when `sk_ack_backlog > sk_max_ack_backlog`, so it holds at most
//! backlog + 1: Recv-Q = Send-Q + 1 is a full queue. Pure.
use serde_json::Value;

use super::sources::{Agg, Figure, SourceRow, fig};

/// php-fpm's listening socket and its namespace's counters (`samples/fpm_net.jsonl`).
pub(crate) const FPM_NET: SourceRow = SourceRow {
    source: "fpm_net",
    columns: &[
        "recv_q",
        "send_q",
        "listen_overflows",
        "listen_drops",
        "somaxconn",
        "backlog",
    ],
    parse: fpm_net,
    figures: &[
        fig(
            "fpm_net.samples",
            "recv_q",
            Agg::Samples,
            "readings of php-fpm's listening socket in the step",
        ),
        Figure {
            header: Some("acceptq"),
            ..fig(
                "fpm_net.recv_q_max",
                "recv_q",
                Agg::Max,
                "most connections in php-fpm's accept queue (ss -ltn's Recv-Q, sk_ack_backlog)",
            )
        },
        fig(
            "fpm_net.send_q",
            "send_q",
            Agg::Max,
            "the accept queue's limit (ss -ltn's Send-Q: min(listen.backlog, somaxconn))",
        ),
        Figure {
            header: Some("ovfl/s"),
            ..fig(
                "fpm_net.overflows_per_s",
                "listen_overflows",
                Agg::PerSecond,
                "connections per second the kernel found php-fpm's accept queue full for (TcpExt ListenOverflows)",
            )
        },
        fig(
            "fpm_net.drops_per_s",
            "listen_drops",
            Agg::PerSecond,
            "connections per second the kernel dropped on php-fpm's listening sockets (TcpExt ListenDrops)",
        ),
        fig(
            "fpm_net.somaxconn",
            "somaxconn",
            Agg::Max,
            "net.core.somaxconn in php-fpm's network namespace",
        ),
    ],
};

/// One reading's columns; `None` without TcpExt's counters, a listening TCP socket, somaxconn
/// or the pool's `listen.backlog` (a unix-socket pool has no TCP listener: its lines are
/// refused, and said).
fn fpm_net(line: &Value) -> Option<Vec<f64>> {
    let text = line.get("text")?.as_str()?;
    let (overflows, drops) = tcp_ext(text)?;
    let recv_q = listen_queues(text).max()?;
    let somaxconn = text
        .lines()
        .find_map(|l| l.trim().parse::<u64>().ok().filter(|_| !l.contains(' ')))?;
    let backlog = text.lines().find_map(|l| {
        let v = l.trim().strip_prefix("listen.backlog")?.trim_start();
        let v = v.strip_prefix('=')?.trim_start();
        v.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse::<u64>()
            .ok()
    })?;
    let send_q = backlog.min(somaxconn);
    Some(
        [recv_q, send_q, overflows, drops, somaxconn, backlog]
            .map(|n| n as f64)
            .to_vec(),
    )
}

/// TcpExt's `ListenOverflows` and `ListenDrops`: a line of names, then a line of values.
fn tcp_ext(text: &str) -> Option<(u64, u64)> {
    let mut ext = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (ext.next()?, ext.next()?);
    let pairs: Vec<(&str, &str)> = names
        .split_whitespace()
        .zip(values.split_whitespace())
        .collect();
    let get = |k: &str| pairs.iter().find(|(n, _)| *n == k)?.1.parse::<u64>().ok();
    Some((get("ListenOverflows")?, get("ListenDrops")?))
}

/// php-fpm's port, 9000, as `/proc/net/tcp` writes it (the container also listens on Docker's
/// resolver, 127.0.0.11, on a port of its own).
pub(super) const FPM_PORT_HEX: &str = "2328";

/// The accept queue of php-fpm's listening sockets in `/proc/net/tcp` and `tcp6` (state `0A`,
/// local port 9000: its `rx_queue`, hex, is `sk_ack_backlog` for a listener).
fn listen_queues(text: &str) -> impl Iterator<Item = u64> + '_ {
    text.lines().filter_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 5 || !f[0].ends_with(':') || f[3] != "0A" {
            return None;
        }
        if f[1].rsplit_once(':')?.1 != FPM_PORT_HEX {
            return None;
        }
        let (_, rx) = f[4].split_once(':')?;
        u64::from_str_radix(rx, 16).ok()
    })
}

#[cfg(test)]
mod tests;

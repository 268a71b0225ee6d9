//! Connections to php-fpm's port still in their handshake, from each side's network namespace
//! (the php lab's `fpm_syn` and `nginx_syn` sources: one `grep` of `/proc/net/tcp` and `tcp6`'s
//! header and lines in the one state, with `stack.php.kernel_counters`). While php-fpm's accept
//! queue is full the kernel drops a SYN (`ListenOverflows`) and nginx sends it again (SYN_SENT,
//! state `02`, on nginx's side), or, having answered it, drops the client's last ACK and keeps
//! the connection half-open (SYN_RECV, state `03`, on php-fpm's side) while nginx believes it
//! connected. Both wait outside the queue and enter it as places free: after an overload they
//! refill it, so the backlog drains later than the queue's length alone says (measured on
//! exp3sat-recover: 189 half-open and 182 connecting at the drop, a queue full 14 s after it).
//! Pure.
use serde_json::Value;

use super::kernel::FPM_PORT_HEX;
use super::sources::{Agg, Figure, SourceRow, fig};

/// php-fpm's half-open connections (`samples/fpm_syn.jsonl`).
pub(crate) const FPM_SYN: SourceRow = SourceRow {
    source: "fpm_syn",
    columns: &["half_open"],
    parse: |l| count(l, "03", Side::Local),
    figures: &[
        fig(
            "fpm_syn.samples",
            "half_open",
            Agg::Samples,
            "readings of php-fpm's half-open connections in the step",
        ),
        Figure {
            header: Some("half-open"),
            ..fig(
                "fpm_syn.half_open_max",
                "half_open",
                Agg::Max,
                "most connections to php-fpm's port half-open on its side (SYN_RECV: the client's ACK dropped while the accept queue was full; they enter it as places free)",
            )
        },
    ],
};

/// nginx's connects to php-fpm still retrying their SYN (`samples/nginx_syn.jsonl`).
pub(crate) const NGINX_SYN: SourceRow = SourceRow {
    source: "nginx_syn",
    columns: &["connecting"],
    parse: |l| count(l, "02", Side::Remote),
    figures: &[
        fig(
            "nginx_syn.samples",
            "connecting",
            Agg::Samples,
            "readings of nginx's connects to php-fpm in the step",
        ),
        fig(
            "nginx_syn.connecting_max",
            "connecting",
            Agg::Max,
            "most connects of nginx to php-fpm's port in SYN_SENT (the SYN dropped at a full accept queue, sent again until fastcgi_connect_timeout)",
        ),
    ],
};

/// Which address of a line carries php-fpm's port.
#[derive(Clone, Copy)]
enum Side {
    Local,
    Remote,
}

/// The lines in `state` whose `side` port is php-fpm's; `None` without the files' header (the
/// `grep` keeps it, so a reading with no such connection still reads 0, and anything else none).
fn count(line: &Value, state: &str, side: Side) -> Option<Vec<f64>> {
    let text = line.get("text")?.as_str()?;
    if !text.lines().any(|l| l.contains("local_address")) {
        return None;
    }
    let n = text
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let addr = match side {
                Side::Local => f.get(1),
                Side::Remote => f.get(2),
            };
            f.len() > 4
                && f[0].ends_with(':')
                && f[3] == state
                && addr
                    .and_then(|a| a.rsplit_once(':'))
                    .is_some_and(|(_, p)| p == FPM_PORT_HEX)
        })
        .count();
    Some(vec![n as f64])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `grep -h -E "local_address| 03 "` of tcp and tcp6 as php-fpm's container writes it.
    const FPM_TEXT: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
        \x20 sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
        \x20  4: 0000000000000000FFFF00000A000005:2328 0000000000000000FFFF00000A000003:D2F0 03 00000000:00000000 01:00000064 00000002    33        0 0 1 0\n\
        \x20  5: 0000000000000000FFFF00000A000005:2328 0000000000000000FFFF00000A000003:D2F2 03 00000000:00000000 01:00000064 00000002    33        0 0 1 0\n\
        \x20  6: 0000000000000000FFFF00000A000005:1F90 0000000000000000FFFF00000A000003:D2F4 03 00000000:00000000 01:00000064 00000002    33        0 0 1 0\n";

    #[test]
    fn half_open_counts_syn_recv_on_php_fpm_s_port_only() {
        let v = (FPM_SYN.parse)(&serde_json::json!({"t": 1, "text": FPM_TEXT})).unwrap();
        assert_eq!(v, [2.0]);
        // none in the state: 0, read (the header is there)
        let idle: String = FPM_TEXT.lines().take(2).map(|l| format!("{l}\n")).collect();
        assert_eq!(
            (FPM_SYN.parse)(&serde_json::json!({"t": 1, "text": idle})),
            Some(vec![0.0])
        );
        // not the files' text: no reading
        let err = serde_json::json!({"t": 1, "text": "grep: /proc/net/tcp6: No such file"});
        assert_eq!((FPM_SYN.parse)(&err), None);
    }

    #[test]
    fn connecting_counts_syn_sent_to_php_fpm_s_port() {
        // nginx's side: its port is local, php-fpm's 9000 (2328) remote
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
            \x20  7: 030012AC:D2F0 050012AC:2328 02 00000001:00000000 01:00000190 00000002   101        0 0 1 0\n\
            \x20  8: 030012AC:D2F2 050012AC:2328 02 00000001:00000000 01:00000190 00000001   101        0 0 1 0\n\
            \x20  9: 030012AC:2328 050012AC:D2F4 02 00000001:00000000 01:00000190 00000001   101        0 0 1 0\n";
        let v = (NGINX_SYN.parse)(&serde_json::json!({"t": 1, "text": text})).unwrap();
        assert_eq!(v, [2.0]);
    }
}

//! The PHP lab's config templates: the php-fpm pool and nginx server of lab-spec §3, rendered from
//! `labs/php/*.tpl` (compiled into the binary) with an experiment's `PhpSettings`.
use super::{Listen, PhpSettings, Pm};

const FPM_TPL: &str = include_str!("../../labs/php/php-fpm.conf.tpl");
const NGINX_TPL: &str = include_str!("../../labs/php/nginx.conf.tpl");

/// Unix socket of the main pool (on the volume shared by nginx and php-fpm).
pub(crate) const FPM_SOCKET: &str = "/run/php/php-fpm.sock";
/// Where the php-fpm access log goes when `access_log` is on (diag-acc).
pub(crate) const FPM_ACCESS_LOG: &str = "/var/log/php-fpm-access.log";
/// Where the nginx access log goes when `access_log` is on (diag-acc).
pub(crate) const NGINX_ACCESS_LOG: &str = "/var/log/nginx/access.log";

fn replace_all(tpl: &str, pairs: &[(&str, String)]) -> String {
    let mut s = tpl.to_string();
    for (k, v) in pairs {
        s = s.replace(k, v);
    }
    debug_assert!(!s.contains("__"), "unrendered placeholder left in template");
    s
}

/// The php-fpm configuration (global section + `[www]` pool).
pub(crate) fn render_fpm(php: &PhpSettings) -> String {
    let listen = match php.listen {
        Listen::Tcp => "9000".to_string(),
        Listen::Unix => FPM_SOCKET.to_string(),
    };
    let access = if php.access_log {
        format!(
            "access.log = {FPM_ACCESS_LOG}\naccess.format = \"%{{%Y-%m-%dT%H:%M:%S}}t %d %C %s %p %m %r\""
        )
    } else {
        "; access log off (turn on with php.access_log: true)".to_string()
    };
    replace_all(
        FPM_TPL,
        &[
            ("__LISTEN__", listen),
            ("__BACKLOG__", php.backlog.to_string()),
            ("__PM__", php.pm.as_str().to_string()),
            ("__MAX_CHILDREN__", php.max_children.to_string()),
            ("__PM_SPARE__", pm_lines(php.pm, php.max_children)),
            ("__ACCESS_LOG__", access),
        ],
    )
}

/// nginx's `limit_req` lines (the zone in `http`, the limit in the app's location) for a rate
/// over all clients, or comments without one. The key is a constant: nginx does not count a
/// request whose key is empty, and `$server_name` is empty in a server without `server_name`
/// (measured: with it, 90 rps against a 40 rps limit got no 429 at all). The burst is a
/// tenth of a second of the rate (k6's arrivals are not perfectly even), served at once
/// (`nodelay`): past it the excess is answered 429 without reaching php-fpm.
fn limit_req(rps: Option<u32>) -> (String, String) {
    match rps {
        Some(r) => (
            format!(
                "    limit_req_zone \"door\" zone=door:1m rate={r}r/s;\n    limit_req_status 429;"
            ),
            format!(
                "            limit_req zone=door burst={} nodelay;",
                r.div_ceil(10).max(1)
            ),
        ),
        None => (
            "    # no rate limit at the door (stack.php.limit_req_rps unset)".into(),
            "            # no rate limit".into(),
        ),
    }
}

/// The spare workers of `pm = dynamic` for a pool of `n`: a quarter of it started and kept
/// idle at least (one at least), half of it idle at most; `ondemand`'s idle timeout; nothing
/// under `static`.
pub(crate) fn spare_servers(n: u32) -> (u32, u32, u32) {
    let min = (n / 4).max(1);
    (min, min, (n / 2).max(min))
}

fn pm_lines(pm: Pm, n: u32) -> String {
    match pm {
        Pm::Static => "; pm = static: every worker from the start".into(),
        Pm::Dynamic => {
            let (start, min, max) = spare_servers(n);
            format!(
                "pm.start_servers = {start}\npm.min_spare_servers = {min}\npm.max_spare_servers = {max}"
            )
        }
        Pm::Ondemand => "pm.process_idle_timeout = 10s".into(),
    }
}

/// The nginx configuration; `fpm_host` is php-fpm's name on the lab network; `sampler` is the
/// one address allowed to read `/fpm-status` (perflab's samplers: the lab network's gateway).
pub(crate) fn render_nginx(
    php: &PhpSettings,
    fpm_host: &str,
    workers: usize,
    nofile: i64,
    sampler: &str,
) -> String {
    let fcgi = match php.listen {
        Listen::Tcp => format!("{fpm_host}:9000"),
        Listen::Unix => format!("unix:{FPM_SOCKET}"),
    };
    let access = if php.access_log {
        format!("{NGINX_ACCESS_LOG} timed")
    } else {
        "off".to_string()
    };
    let (zone, limit) = limit_req(php.limit_req_rps);
    replace_all(
        NGINX_TPL,
        &[
            ("__LIMIT_ZONE__", zone),
            ("__LIMIT_REQ__", limit),
            ("__FCGI_TIMEOUT__", php.fastcgi_timeout_s.to_string()),
            ("__WORKERS__", workers.max(1).to_string()),
            ("__NOFILE__", nofile.to_string()),
            ("__FCGI__", fcgi),
            ("__ACCESS_LOG__", access),
            ("__SAMPLER__", sampler.to_string()),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn php(listen: Listen, access_log: bool) -> PhpSettings {
        PhpSettings {
            max_children: 20,
            pm: Pm::Static,
            db_via: crate::lab::DbVia::Direct,
            pool_size: 20,
            listen,
            backlog: 511,
            fastcgi_timeout_s: 5,
            limit_req_rps: None,
            persistent: true,
            access_log,
            kernel_counters: false,
            warmup_requests: 0,
            burn_us: 0,
            code_volumes: true,
            oversubscribe_reason: None,
        }
    }

    #[test]
    fn fpm_pool_matches_the_article() {
        let s = render_fpm(&php(Listen::Tcp, false));
        for line in [
            "listen = 9000",
            "listen.mode = 0666",
            "listen.backlog = 511",
            "pm = static",
            "pm.max_children = 20",
            "pm.max_requests = 0",
            "request_terminate_timeout = 30s",
            "pm.status_path = /fpm-status",
            "pm.status_listen = /run/php/status.sock",
        ] {
            assert!(
                s.lines().any(|l| l.starts_with(line)),
                "missing `{line}` in\n{s}"
            );
        }
        assert!(!s.contains("access.log ="));
        assert!(!s.contains("__"));
        let u = render_fpm(&php(Listen::Unix, true));
        assert!(u.contains("listen = /run/php/php-fpm.sock"));
        assert!(u.contains("access.format = \"%{%Y-%m-%dT%H:%M:%S}t %d %C"));
    }

    #[test]
    fn dynamic_and_ondemand_render_their_pm_lines() {
        let mut p = php(Listen::Tcp, false);
        p.pm = Pm::Dynamic;
        let s = render_fpm(&p);
        assert!(s.contains("pm = dynamic\npm.max_children = 20\n"), "{s}");
        assert!(
            s.contains("pm.start_servers = 5\npm.min_spare_servers = 5\npm.max_spare_servers = 10")
        );
        assert_eq!(spare_servers(1), (1, 1, 1));
        assert_eq!(spare_servers(120), (30, 30, 60));
        p.pm = Pm::Ondemand;
        let o = render_fpm(&p);
        assert!(o.contains("pm = ondemand\n") && o.contains("pm.process_idle_timeout = 10s"));
        assert!(!o.contains("min_spare"));
    }

    #[test]
    fn nginx_timeouts_status_and_upstream() {
        let s = render_nginx(&php(Listen::Tcp, false), "php-fpm", 2, 20000, "172.30.0.1");
        assert!(s.contains("fastcgi_pass php-fpm:9000;"));
        assert!(s.contains("fastcgi_connect_timeout 5s;"));
        assert!(s.contains("fastcgi_read_timeout 5s;"));
        assert!(s.contains("fastcgi_pass unix:/run/php/status.sock;"));
        // Only the sampler's address reads the status page (a whole private range let k6 and
        // any container on a bridge read it).
        assert!(s.contains("allow 172.30.0.1; deny all;"), "{s}");
        assert!(!s.contains("172.16.0.0/12"));
        assert!(s.contains("worker_processes 2;"));
        assert!(s.contains("worker_rlimit_nofile 20000;"));
        assert!(s.contains("access_log off;"));
        let u = render_nginx(&php(Listen::Unix, true), "php-fpm", 1, 20000, "172.30.0.1");
        assert!(u.contains("fastcgi_pass unix:/run/php/php-fpm.sock;"));
        assert!(u.contains("access_log /var/log/nginx/access.log timed;"));
        assert!(!u.contains("__"));
        assert!(!s.contains("limit_req "), "no limit without a rate:\n{s}");
    }

    /// A rate renders the zone (one key for all clients), 429 for the excess and the limit in
    /// the app's location (not the status pages); the read timeout is the setting's.
    #[test]
    fn nginx_limit_req_and_read_timeout() {
        let mut p = php(Listen::Tcp, false);
        p.limit_req_rps = Some(140);
        p.fastcgi_timeout_s = 2;
        let s = render_nginx(&p, "php-fpm", 2, 20000, "172.30.0.1");
        assert!(
            s.contains("limit_req_zone \"door\" zone=door:1m rate=140r/s;"),
            "{s}"
        );
        assert!(s.contains("limit_req_status 429;"));
        assert!(s.contains("fastcgi_read_timeout 2s;"));
        assert!(s.contains("fastcgi_connect_timeout 2s;"));
        let app = &s[s.find("location / {").unwrap()..];
        assert!(
            app.contains("limit_req zone=door burst=14 nodelay;"),
            "{app}"
        );
        let status = &s[s.find("location = /fpm-status").unwrap()..s.find("location / {").unwrap()];
        assert!(!status.contains("limit_req"), "{status}");
        assert!(!s.contains("__"));
        p.limit_req_rps = Some(5);
        let s = render_nginx(&p, "php-fpm", 2, 20000, "172.30.0.1");
        assert!(s.contains("burst=1 nodelay"), "{s}");
    }
}

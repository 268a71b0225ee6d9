//! The php lab's settings checked: their numeric bounds and the checks across them
//! (`Section` for `stack.php`).
use super::fpm::Listen;
use super::pgbouncer;
use super::php::PhpSettings;
use super::settings::{Bound, Issue, MAX_BURN_US, Section};
use super::*;

impl Section for PhpSettings {
    #[rustfmt::skip]
    const BOUNDS: &'static [Bound<Self>] = &[
        Bound { key: "max_children", max: 1_000.0, unit: "workers", what: "php-fpm's static pool (each worker tens of MB)", get: |p| p.max_children.into() },
        Bound { key: "backlog", max: 65_535.0, unit: "connections", what: "listen.backlog (the kernel's somaxconn ceiling)", get: |p| p.backlog.into() },
        Bound { key: "fastcgi_timeout_s", max: 600.0, unit: "s", what: "nginx fastcgi_connect_timeout and fastcgi_read_timeout (10 minutes)", get: |p| p.fastcgi_timeout_s.into() },
        Bound { key: "limit_req_rps", max: 100_000.0, unit: "requests/s", what: "nginx limit_req rate (the load generator's reach)", get: |p| p.limit_req_rps.unwrap_or(0).into() },
        Bound { key: "warmup_requests", max: 100_000.0, unit: "requests", what: "sequential warm-up requests", get: |p| p.warmup_requests.into() },
        Bound { key: "burn_us", max: MAX_BURN_US, unit: "µs", what: "CPU burnt per request (1 s)", get: |p| p.burn_us.into() },
        Bound { key: "pool_size", max: 10_000.0, unit: "connections", what: "PgBouncer's server connections (PostgreSQL's max_connections bound)", get: |p| p.pool_size.into() },
    ];

    /// Workers and backlog above 0; more persistent workers than PostgreSQL's connections only
    /// with a reason, and a reason only when there are.
    fn check(&self, stack: &StackSettings) -> Vec<Issue> {
        let mut d = Vec::new();
        if self.max_children == 0 {
            d.push(Issue::error("stack.php.max_children", "must be > 0"));
        }
        if self.backlog == 0 {
            d.push(Issue::error(
                "stack.php.backlog",
                "must be > 0 (article: 511)",
            ));
        }
        if self.fastcgi_timeout_s == 0 {
            d.push(
                Issue::error("stack.php.fastcgi_timeout_s", "must be > 0 seconds")
                    .help("the article's 5, or under the client's timeout to fail fast: e.g. 2"),
            );
        }
        if self.limit_req_rps == Some(0) {
            d.push(
                Issue::error("stack.php.limit_req_rps", "must be > 0 requests/s")
                    .help("a rate just under the knee (article: ~150 for exp1), or remove the key: no limit"),
            );
        }
        if self.kernel_counters && self.listen != Listen::Tcp {
            d.push(
                Issue::warning(
                    "stack.php.kernel_counters",
                    "php-fpm listens on a unix socket: the kernel's TCP accept queue has no listener to read",
                )
                .help("`listen: tcp` to read it, or remove `kernel_counters`"),
            );
        }
        d.extend(pgbouncer::check(
            self.db_via,
            self.pool_size,
            &stack.postgres,
        ));
        let pg = stack.postgres.max_connections;
        // Through PgBouncer the workers' connections end at the bouncer, not at PostgreSQL.
        let over = self.persistent && self.db_via.is_direct() && self.max_children > pg;
        match &self.oversubscribe_reason {
            None if over => d.push(
                Issue::warning(
                    "stack.php.max_children",
                    format!(
                        "{} persistent workers > postgres max_connections {pg}: {} workers will \
                         get `too many clients`",
                        self.max_children,
                        self.max_children - pg
                    ),
                )
                .help(
                    "lower max_children, raise stack.postgres.max_connections, or state why \
                     the failures are intended in `stack.php.oversubscribe_reason`",
                ),
            ),
            Some(_) if !over => d.push(
                Issue::warning(
                    "stack.php.oversubscribe_reason",
                    "the persistent workers fit in postgres max_connections",
                )
                .help("remove oversubscribe_reason"),
            ),
            _ => {}
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's counters cost a `docker exec` every 2 s: read only when an experiment asks,
    /// and a unix-socket pool that asks is told it has no TCP listener.
    #[test]
    fn the_kernel_counters_are_read_only_when_asked() {
        let php = descriptor(Lab::Php);
        let mut stack = php.defaults().stack;
        for k in ["fpm_net", "fpm_syn", "nginx_syn"] {
            assert!(!php.samples(k, &stack), "{k}");
        }
        assert!(php.samples("fpm", &stack) && php.samples("nginx", &stack));
        let p = stack.php.as_mut().unwrap();
        p.kernel_counters = true;
        for k in ["fpm_net", "fpm_syn", "nginx_syn"] {
            assert!(php.samples(k, &stack), "{k}");
        }
        assert!(stack.php.as_ref().unwrap().check(&stack).is_empty());
        stack.php.as_mut().unwrap().listen = Listen::Unix;
        let issues = stack.php.as_ref().unwrap().check(&stack);
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert!(format!("{issues:?}").contains("stack.php.kernel_counters"));
    }
}

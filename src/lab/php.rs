//! The PHP lab (lab-spec §3): PostgreSQL, php-fpm running Laravel and nginx in front of it,
//! sharing a volume for the unix sockets; the pool and server configs come from `templates`.
use super::fpm::{Listen, Pm};
use super::pgbouncer::{self, DbVia, PGBOUNCER};
use super::settings::{is_false, is_true, is_zero, yes};
use super::source::Read;
use super::templates::{FPM_ACCESS_LOG, NGINX_ACCESS_LOG, render_fpm, render_nginx};
use super::*;
use serde::{Deserialize, Serialize};

/// `stack.php.pool_size` when not given: PgBouncer's pool as large as the article's pool of
/// workers (20).
pub(crate) const DEFAULT_POOL_SIZE: u32 = 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhpSettings {
    /// `pm.max_children` (every worker under pm = static, the ceiling under dynamic and
    /// ondemand).
    pub max_children: u32,
    /// php-fpm's process manager: `static` (the default), `dynamic` or `ondemand`.
    #[serde(default, skip_serializing_if = "Pm::is_static")]
    pub pm: Pm,
    /// How the workers reach PostgreSQL: `direct` (the default) or through `pgbouncer`.
    #[serde(default, skip_serializing_if = "DbVia::is_direct")]
    pub db_via: DbVia,
    /// PgBouncer's server connections to PostgreSQL (`default_pool_size`; with `db_via:
    /// pgbouncer`).
    #[serde(default = "default_pool_size", skip_serializing_if = "is_default_pool")]
    pub pool_size: u32,
    pub listen: Listen,
    /// `listen.backlog`.
    #[serde(default = "default_backlog")]
    pub backlog: u32,
    /// nginx `fastcgi_connect_timeout` and `fastcgi_read_timeout` (s): how long nginx waits to
    /// connect to php-fpm (a full backlog drops the SYN) and then for its answer (queue +
    /// work) before it answers 504 (article: 5 s for both). Shorter, it fails fast.
    #[serde(
        default = "default_fastcgi_timeout_s",
        skip_serializing_if = "is_default_fastcgi_timeout"
    )]
    pub fastcgi_timeout_s: u32,
    /// Load shedding at the door: nginx `limit_req` at this many requests/s over all clients
    /// (`burst` a tenth of it, `nodelay`); the excess is answered 429 at once. None: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_req_rps: Option<u32>,
    /// `DB_PERSISTENT` (PDO::ATTR_PERSISTENT).
    pub persistent: bool,
    /// php-fpm access log `%d %C` and nginx `$request_time $upstream_connect_time` (diag-acc).
    #[serde(default)]
    pub access_log: bool,
    /// Read the kernel's counters of php-fpm's listening socket (the `fpm_net` source: its
    /// accept queue, ListenOverflows) and the connections in their handshake on both sides
    /// (`fpm_syn`, `nginx_syn`): a `docker exec` each every 2 s, whose CPU lands in php-fpm's
    /// and nginx's cgroups and in the engine's processes, so only the experiments that ask for it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub kernel_counters: bool,
    /// Sequential warm-up requests before measuring (opcache, persistent connections).
    #[serde(default = "default_php_warmup_requests")]
    pub warmup_requests: u32,
    /// Injected CPU work: µs of CPU burnt per request in the Laravel controller (0 = none;
    /// a regression made on purpose, shown in every report header).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub burn_us: u32,
    /// Serve the app's code, Laravel's files and PostgreSQL's cluster from volumes filled at
    /// stack start (true, the default), or through the image's storage driver as before (false:
    /// fuse-overlayfs costs CPU outside the app's and the database's cgroups on every file
    /// access; kept to measure that cost).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub code_volumes: bool,
    /// Why more persistent workers than PostgreSQL's `max_connections` are intended (the
    /// failure is the point, exp2-pgconn). Without it that is a validation warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversubscribe_reason: Option<String>,
}

fn default_pool_size() -> u32 {
    DEFAULT_POOL_SIZE
}
fn is_default_pool(n: &u32) -> bool {
    *n == DEFAULT_POOL_SIZE
}
fn default_backlog() -> u32 {
    511
}
fn default_fastcgi_timeout_s() -> u32 {
    5
}
fn is_default_fastcgi_timeout(s: &u32) -> bool {
    *s == default_fastcgi_timeout_s()
}
fn default_php_warmup_requests() -> u32 {
    200
}

/// The kernel's view of php-fpm's listening socket from its network namespace (511 ->
/// 512; read back by `analyze/samples/kernel.rs`): one `grep` in the container, keeping
/// the lines read of files that list every connection (`tcp6`: ~150 bytes each). Sampled only
/// with `stack.php.kernel_counters` (`Php::samples`).
const FPM_NET: SourceDecl = exec_every_2s(
    "fpm_net",
    FPM,
    &[
        "grep",
        "-h",
        "-E",
        "^TcpExt:| 0A |^[0-9]+$|^listen.backlog",
        "/proc/net/netstat",
        "/proc/net/tcp",
        "/proc/net/tcp6",
        "/proc/sys/net/core/somaxconn",
        "/etc/perflab/php-fpm.conf",
    ],
);

/// Connections to php-fpm's port in their handshake, from php-fpm's side (half-open, SYN_RECV)
/// and nginx's (connecting, SYN_SENT): what refills the accept queue after an overload (read
/// back by `analyze/samples/handshake.rs`). The header line is kept, so no such connection
/// still reads 0. Sampled only with `stack.php.kernel_counters`.
const FPM_SYN: SourceDecl = exec_every_2s(
    "fpm_syn",
    FPM,
    &[
        "grep",
        "-h",
        "-E",
        "local_address| 03 ",
        "/proc/net/tcp",
        "/proc/net/tcp6",
    ],
);

/// nginx's side of [`FPM_SYN`]: its connects still retrying their SYN (SYN_SENT).
const NGINX_SYN: SourceDecl = exec_every_2s(
    "nginx_syn",
    NGINX,
    &[
        "grep",
        "-h",
        "-E",
        "local_address| 02 ",
        "/proc/net/tcp",
        "/proc/net/tcp6",
    ],
);

/// A source `name` that runs `argv` in `role`'s container every 2 s.
const fn exec_every_2s(
    name: &'static str,
    role: Role,
    argv: &'static [&'static str],
) -> SourceDecl {
    SourceDecl {
        name,
        offered_by: role,
        read: Read::Exec { argv },
        every_ms: 2000,
    }
}

/// The sources read only with `stack.php.kernel_counters` (each a `docker exec` every 2 s).
const KERNEL_SOURCES: [&str; 3] = [FPM_NET.name, FPM_SYN.name, NGINX_SYN.name];

pub(crate) struct Php;

/// php-fpm running Laravel (its column `fpm`, its container `php-fpm`).
pub(crate) const FPM: Role = Role::declare(&RoleDecl {
    name: "fpm",
    log_name: "php-fpm",
    image: "php-fpm",
    slot: Slot::App,
    memory_mib: 768,
    process: "fpm",
});
/// nginx in front of php-fpm, the lab's entry point.
pub(crate) const NGINX: Role = Role::declare(&RoleDecl {
    name: "nginx",
    log_name: "nginx",
    image: "nginx",
    slot: Slot::App,
    memory_mib: 256,
    process: "nginx",
});

const INFO: LabInfo = LabInfo {
    endpoints: &["/api/db", "/api/slow", "/api/ping"],
    settings_keys: &[
        "max_children",
        "pm",
        "db_via",
        "pool_size",
        "listen",
        "backlog",
        "fastcgi_timeout_s",
        "limit_req_rps",
        "persistent",
        "access_log",
        "kernel_counters",
        "warmup_requests",
        "burn_us",
        "code_volumes",
        "oversubscribe_reason",
    ],
    // PgBouncer's container only with `db_via: pgbouncer` (`containers`).
    roles: &[Role::PG, PGBOUNCER, FPM, NGINX],
    volume: Some(VolumeDecl {
        suffix: "run-php",
        label: "php-sockets",
        target: "/run/php",
    }),
    sources: &[
        postgres::PG_SOURCE,
        // php-fpm's status page of the hidden status pool, through nginx (sampler only).
        SourceDecl {
            name: "fpm",
            offered_by: FPM,
            read: Read::HttpJson {
                path: "/fpm-status?json",
            },
            every_ms: 2000,
        },
        // nginx's `stub_status` (connections and requests; sampler only: `nginx.conf.tpl`).
        SourceDecl {
            name: "nginx",
            offered_by: NGINX,
            read: Read::HttpText {
                path: "/nginx-status",
            },
            every_ms: 2000,
        },
        FPM_NET,
        FPM_SYN,
        NGINX_SYN,
    ],
    assets: &[Asset {
        image: FPM,
        dir: "labs/php/app",
        prefix: "app/",
    }],
    quantities: &[
        ("max_children", "php-fpm pm.max_children"),
        ("backlog", "php-fpm listen.backlog"),
        (
            "fastcgi_timeout_s",
            "nginx fastcgi_connect_timeout and fastcgi_read_timeout (s)",
        ),
        (
            "limit_req_rps",
            "nginx limit_req rate (requests/s; 0 without a limit)",
        ),
        (
            "pgbouncer",
            "1 when the workers reach PostgreSQL through PgBouncer",
        ),
        ("pool_size", "PgBouncer's server connections (pool_size)"),
        ("pm_static", "1 under php-fpm's pm = static"),
        ("persistent", "1 with persistent PDO connections"),
        (
            "unix_socket",
            "1 when nginx reaches php-fpm over a unix socket",
        ),
    ],
    cpu_per_request_endpoints: &["/api/ping", "/api/db", "/api/slow"],
    cpu_per_request_caveat: Some(
        "the requests come from perflab on the load generator's CPUs, not from a loop inside the \
         nginx container as in the article, so our nginx figure holds nginx alone",
    ),
};

/// `GET /api/ping` through nginx and php-fpm.
const PING: WaitFor = WaitFor::Http {
    path: "/api/ping",
    status: 200,
    body: "\"pong\":true",
};

/// The article's CPU per request, 300 sequential requests per endpoint (cgroup deltas; its
/// nginx figure includes the wget loop run inside the nginx container), and the app box's
/// under load on /api/db.
const ARTICLE_CPU: [ArticleCpuFigure; 10] = {
    const SEQ: &str = "300 sequential requests, cgroup delta";
    const NGX: &str =
        "300 sequential requests; includes the wget loop run inside the nginx container";
    const fn fig(
        endpoint: &'static str,
        what: &'static str,
        ms: f64,
        note: &'static str,
    ) -> ArticleCpuFigure {
        ArticleCpuFigure {
            endpoint,
            what,
            low_ms: ms,
            high_ms: ms,
            note,
        }
    }
    [
        fig("/api/ping", "php-fpm", 7.1, SEQ),
        fig("/api/ping", "nginx", 3.4, NGX),
        fig("/api/ping", "wall", 9.0, SEQ),
        fig("/api/db", "php-fpm", 9.0, SEQ),
        fig("/api/db", "nginx", 3.3, NGX),
        fig("/api/db", "wall", 13.0, SEQ),
        fig("/api/slow", "php-fpm", 14.2, SEQ),
        fig("/api/slow", "nginx", 5.0, NGX),
        fig("/api/slow", "wall", 126.0, SEQ),
        ArticleCpuFigure {
            endpoint: "/api/db",
            what: super::APP_BOX_FIGURE,
            low_ms: 8.5,
            high_ms: 12.0,
            note: "under load, exp1's ms CPU/req column (php-fpm + nginx per 200; article 5.1.2 (3)); not sequential",
        },
    ]
};

/// The summary's note of what nginx does at the door when it differs from the article's: a
/// `limit_req` rate, a read timeout other than 5 s (empty otherwise).
fn door_note(p: &PhpSettings) -> String {
    let mut s = String::new();
    if let Some(r) = p.limit_req_rps {
        s += &format!(", nginx limit_req {r} r/s (excess 429)");
    }
    if p.fastcgi_timeout_s != default_fastcgi_timeout_s() {
        s += &format!(", nginx fastcgi timeouts {} s", p.fastcgi_timeout_s);
    }
    s
}

fn settings(stack: &StackSettings) -> Result<&PhpSettings, String> {
    own_section(stack.php.as_ref(), Lab::Php)
}

fn fpm(php: &PhpSettings, ctx: &StartContext) -> ContainerDecl {
    let mut c = ContainerDecl::new(FPM);
    let (db_host, db_port) = pgbouncer::db_address(php.db_via);
    // The app and Debian's Laravel: every request includes and stats them; and the time zone,
    // which Debian's PHP reads from the system's tzdata on every request.
    if php.code_volumes {
        c.code_volumes = vec!["/srv/app", "/usr/share/php", "/usr/share/zoneinfo"];
    }
    c.env = env(&[
        ("APP_ENV", "production".into()),
        ("APP_DEBUG", "false".into()),
        ("DB_CONNECTION", "pgsql".into()),
        ("DB_HOST", db_host.into()),
        ("DB_PORT", db_port.to_string()),
        ("DB_DATABASE", "lab".into()),
        ("DB_USERNAME", "lab".into()),
        ("DB_PASSWORD", ctx.password.clone()),
        ("DB_PERSISTENT", php.persistent.to_string()),
        ("BURN_US", php.burn_us.to_string()),
        // The lab has no Kerberos: without this, libpq probes for Kerberos credentials on every
        // connection (5 look-ups of files that do not exist: /etc/krb5.conf, a keytab, a
        // ticket cache, /etc/gss/mech*), each a FUSE round trip under fuse-overlayfs.
        ("PGGSSENCMODE", "disable".into()),
    ]);
    c.shared_volume = true;
    c.files = vec![FileDecl {
        path: "/etc/perflab/php-fpm.conf".into(),
        contents: render_fpm(php).into_bytes(),
        mode: 0o644,
    }];
    // php-fpm has no port of its own on the host: it must stay up while nginx answers.
    c.ready = vec![PING];
    c
}

fn nginx(php: &PhpSettings, ctx: &StartContext) -> ContainerDecl {
    let mut c = ContainerDecl::new(NGINX);
    c.shared_volume = true;
    c.publish = Some(Publish::Entry(80));
    let conf = render_nginx(
        php,
        FPM.log_name(),
        ctx.app_cpus,
        ctx.nofile,
        &ctx.sampler_addr,
    );
    c.files = vec![FileDecl {
        path: "/etc/nginx/nginx.conf".into(),
        contents: conf.into_bytes(),
        mode: 0o644,
    }];
    c.ready = vec![PING];
    c
}

impl LabDescriptor for Php {
    fn info(&self) -> &'static LabInfo {
        &INFO
    }

    fn article_cpu_figures(&self) -> &'static [ArticleCpuFigure] {
        &ARTICLE_CPU
    }

    fn version_keys(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("php-fpm.php", "php"),
            ("php-fpm.laravel", "laravel"),
            ("nginx.nginx", "nginx"),
            ("pg.postgres", "postgres"),
        ]
    }

    fn burn_us(&self, stack: &StackSettings) -> Option<u32> {
        stack.php.as_ref().map(|s| s.burn_us)
    }

    fn containers(
        &self,
        stack: &StackSettings,
        ctx: &StartContext,
    ) -> Result<Vec<ContainerDecl>, String> {
        let php = settings(stack)?;
        let mut v = vec![postgres(stack, ctx, php.code_volumes, "products")];
        if !php.db_via.is_direct() {
            v.push(pgbouncer::container(php.pool_size, &stack.postgres, ctx));
        }
        v.extend([fpm(php, ctx), nginx(php, ctx)]);
        Ok(v)
    }

    fn samples(&self, name: &str, stack: &StackSettings) -> bool {
        !KERNEL_SOURCES.contains(&name) || stack.php.as_ref().is_some_and(|p| p.kernel_counters)
    }

    fn collect(&self, stack: &StackSettings) -> Vec<CollectFile> {
        let mut v = vec![CollectFile {
            role: FPM,
            path: "/srv/app/storage/logs/laravel.log",
            dest: "laravel.log",
            required: false,
        }];
        // diag-acc: the access logs, beside (not in) the digested logs
        if stack.php.as_ref().is_some_and(|p| p.access_log) {
            v.extend([
                CollectFile {
                    role: FPM,
                    path: FPM_ACCESS_LOG,
                    dest: "access/fpm.log",
                    required: true,
                },
                CollectFile {
                    role: NGINX,
                    path: NGINX_ACCESS_LOG,
                    dest: "access/nginx.log",
                    required: true,
                },
            ]);
        }
        v
    }

    fn smoke(&self, stack: &StackSettings) -> Result<Vec<SmokeCheck>, String> {
        let php = settings(stack).map_err(|_| "php experiment without stack.php".to_string())?;
        let n = php.max_children as usize;
        let backends = if php.persistent {
            SmokeCheck::Backends {
                name: "persistent PDO: one backend per php-fpm worker",
                expect: n as i64,
                detail: format!(" for max_children {n}"),
            }
        } else {
            SmokeCheck::Backends {
                name: "non-persistent PDO: no connection kept between requests",
                expect: 0,
                detail: " while idle".into(),
            }
        };
        let mut checks = vec![
            SmokeCheck::Endpoint {
                path: "/api/ping",
                keys: &["pong"],
                n: 5,
            },
            SmokeCheck::Endpoint {
                path: "/api/db",
                keys: &["id", "name", "price"],
                n: 20,
            },
            SmokeCheck::Endpoint {
                path: "/api/slow",
                keys: &["slept_ms"],
                n: 2,
            },
            // 22 DB requests above (perflab's own reads only add to the count).
            SmokeCheck::XactDelta { requests: 22 },
            // Saturate /api/slow with 3 x max_children concurrent requests and read the status
            // page meanwhile: it must answer through the hidden pool while every worker is busy.
            SmokeCheck::StatusUnderBurst {
                path: "/api/slow",
                factor: 3,
                workers: n,
            },
        ];
        // Through PgBouncer the backends are its pool's, opened as the load needs them.
        if php.db_via.is_direct() {
            checks.push(backends);
        }
        Ok(checks)
    }

    fn warmup(&self, stack: &StackSettings) -> WarmupLoad {
        match &stack.php {
            Some(php) => WarmupLoad {
                requests: php.warmup_requests,
                concurrency: php.max_children.max(1),
            },
            None => WarmupLoad {
                requests: 0,
                concurrency: 1,
            },
        }
    }

    fn summary(&self, stack: &StackSettings) -> Option<String> {
        let p = stack.php.as_ref()?;
        Some(
            format!(
                "php-fpm pm={} max_children {}, listen {} (backlog {}), DB_PERSISTENT={}{}{}, {} warm-up requests",
                p.pm.as_str(),
                p.max_children,
                match p.listen {
                    Listen::Tcp => "tcp :9000",
                    Listen::Unix => "unix /run/php/php-fpm.sock",
                },
                p.backlog,
                p.persistent,
                match p.db_via {
                    DbVia::Direct => String::new(),
                    DbVia::Pgbouncer =>
                        format!(", via PgBouncer (transaction pool {})", p.pool_size),
                },
                if p.access_log { ", access logs on" } else { "" },
                p.warmup_requests
            ) + &door_note(p)
                + &burn_note(p.burn_us),
        )
    }

    fn defaults(&self) -> LabDefaults {
        LabDefaults {
            stack: StackSettings {
                php: Some(PhpSettings {
                    max_children: 20,
                    pm: Pm::Static,
                    db_via: DbVia::Direct,
                    pool_size: DEFAULT_POOL_SIZE,
                    listen: Listen::Tcp,
                    backlog: 511,
                    fastcgi_timeout_s: 5,
                    limit_req_rps: None,
                    persistent: true,
                    access_log: false,
                    kernel_counters: false,
                    warmup_requests: 200,
                    burn_us: 0,
                    code_volumes: true,
                    oversubscribe_reason: None,
                }),
                ..Default::default()
            },
            endpoint: "/api/db",
            script: Script::Stepped,
        }
    }

    fn quantity(&self, stack: &StackSettings, name: &str) -> Result<f64, String> {
        let php = section(stack.php.as_ref(), Lab::Php)?;
        Ok(match name {
            "max_children" => php.max_children as f64,
            "backlog" => php.backlog as f64,
            "fastcgi_timeout_s" => php.fastcgi_timeout_s as f64,
            "limit_req_rps" => php.limit_req_rps.unwrap_or(0) as f64,
            "pgbouncer" => f64::from(u8::from(!php.db_via.is_direct())),
            "pool_size" => php.pool_size as f64,
            "pm_static" => f64::from(u8::from(php.pm.is_static())),
            "persistent" => f64::from(u8::from(php.persistent)),
            "unix_socket" => f64::from(u8::from(php.listen == Listen::Unix)),
            _ => return Err(format!("`{name}` is not a quantity of the php lab")),
        })
    }

    fn slots(&self, stack: &StackSettings) -> Result<f64, String> {
        self.quantity(stack, "max_children")
    }

    fn connections_per_node(&self, stack: &StackSettings) -> Option<u32> {
        stack.php.as_ref().map(|p| p.max_children)
    }
}

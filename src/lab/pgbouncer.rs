//! PgBouncer between the PHP lab's workers and PostgreSQL (issue 41, item 3): its role (its own
//! container from Debian's `pgbouncer`, pinned beside PostgreSQL), how the app reaches the
//! database (`stack.php.db_via`), and its config rendered from `stack.php.pool_size` and
//! `stack.postgres.auth` (transaction pooling).
use super::container::{ContainerDecl, FileDecl, StartContext, WaitFor};
use super::settings::Issue;
use super::{PostgresSettings, Role, RoleDecl, Slot};
use serde::{Deserialize, Serialize};

/// PgBouncer: its column `pgbouncer`, its container `pgbouncer`, on PostgreSQL's CPU slot (the
/// database box: a pooler runs beside the database it guards, not on the app's CPUs).
pub(crate) const PGBOUNCER: Role = Role::declare(&RoleDecl {
    name: "pgbouncer",
    log_name: "pgbouncer",
    image: "pgbouncer",
    slot: Slot::Db,
    memory_mib: 64,
    process: "pgbouncer",
});

/// Where PgBouncer listens on the lab network.
pub(crate) const PORT: u16 = 6432;
const INI: &str = "/etc/perflab/pgbouncer.ini";
const USERLIST: &str = "/etc/perflab/userlist.txt";

/// How the app's workers reach PostgreSQL (`stack.php.db_via`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DbVia {
    /// Straight to PostgreSQL's port 5432 (the article's every experiment).
    #[default]
    Direct,
    /// Through PgBouncer (transaction pooling, `pool_size` server connections).
    Pgbouncer,
}

impl DbVia {
    pub(crate) fn is_direct(&self) -> bool {
        *self == DbVia::Direct
    }
}

/// How PostgreSQL authenticates TCP clients (`stack.postgres.auth`), and PgBouncer its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Auth {
    /// SCRAM-SHA-256, the image's default (4,096 PBKDF2 iterations on each side per connect).
    #[default]
    #[serde(rename = "scram-sha-256")]
    Scram,
    /// No password exchange: a connection costs the backend's fork and start alone.
    #[serde(rename = "trust")]
    Trust,
}

impl Auth {
    pub(crate) fn is_scram(&self) -> bool {
        *self == Auth::Scram
    }
    fn as_str(self) -> &'static str {
        match self {
            Auth::Scram => "scram-sha-256",
            Auth::Trust => "trust",
        }
    }
}

/// Where the app connects: (host, port) on the lab network.
pub(crate) fn db_address(via: DbVia) -> (&'static str, u16) {
    match via {
        DbVia::Direct => (Role::PG.log_name(), 5432),
        DbVia::Pgbouncer => (PGBOUNCER.log_name(), PORT),
    }
}

/// PostgreSQL's `pg_hba.conf` for `auth` (the image's rules, its host method replaced):
/// `local` stays `trust` (the entry point's single-user run), TCP clients use `auth`.
pub(crate) fn pg_hba(auth: Auth) -> String {
    let m = auth.as_str();
    format!(
        "# rendered by perflab: stack.postgres.auth = {m}\n\
         local all all trust\n\
         host all all 127.0.0.1/32 {m}\n\
         host all all ::1/128 {m}\n\
         host all all 0.0.0.0/0 {m}\n"
    )
}

/// `pgbouncer.ini`: one database `lab` on PostgreSQL, transaction pooling with `pool_size`
/// server connections, clients authenticated as PostgreSQL authenticates them (`auth`); the
/// app's user may read the console's `SHOW` commands; stats in the log every 10 s.
pub(crate) fn render_ini(pool_size: u32, auth: Auth) -> String {
    let (pg_host, pg_port) = db_address(DbVia::Direct);
    format!(
        "; rendered by perflab per experiment (issue 41 item 3)\n\
         [databases]\n\
         lab = host={pg_host} port={pg_port} dbname=lab\n\
         [pgbouncer]\n\
         listen_addr = 0.0.0.0\n\
         listen_port = {PORT}\n\
         unix_socket_dir =\n\
         auth_type = {auth}\n\
         auth_file = {USERLIST}\n\
         pool_mode = transaction\n\
         default_pool_size = {pool_size}\n\
         min_pool_size = 0\n\
         reserve_pool_size = 0\n\
         max_client_conn = 10000\n\
         max_db_connections = {pool_size}\n\
         max_prepared_statements = 200\n\
         ignore_startup_parameters = extra_float_digits,options\n\
         stats_users = lab\n\
         stats_period = 10\n\
         log_connections = 0\n\
         log_disconnections = 0\n\
         logfile =\n\
         pidfile =\n",
        auth = auth.as_str(),
    )
}

/// `userlist.txt`: the app's user and its SCRAM verifier ([`scram_verifier`]), the one
/// PostgreSQL stores for it. With a verifier PgBouncer checks a client's SCRAM proof with a few
/// HMACs and logs in to PostgreSQL with the client's own keys (PgBouncer's SCRAM pass-through,
/// which needs the two verifiers identical); with the plaintext password it ran PBKDF2's 4,096
/// rounds for every client login and every server login, one at a time on its one thread.
fn userlist(password: &str) -> String {
    let q = |s: &str| s.replace('"', "\"\"");
    format!("\"lab\" \"{}\"\n", q(&scram_verifier(password)))
}

/// PBKDF2's iterations in a SCRAM-SHA-256 verifier (PostgreSQL's `scram_iterations` default).
const SCRAM_ITERATIONS: u32 = 4096;

/// The SCRAM-SHA-256 verifier of `password` as PostgreSQL stores it (RFC 5802, RFC 7677:
/// `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`), its salt the first 16 bytes of
/// SHA-256 over a label and the password: the same string each time it is rendered, so the app
/// role's password in PostgreSQL (`PG_PASSWORD`, set from it) and PgBouncer's `userlist.txt`
/// hold the same verifier. The password is a fresh random token per stack, so is the salt.
/// The password is used as given (perflab's tokens are ASCII: SASLprep leaves them alone).
pub(crate) fn scram_verifier(password: &str) -> String {
    use sha2::{Digest, Sha256};
    let seed = Sha256::digest([b"perflab scram salt\0", password.as_bytes()].concat());
    scram_verifier_with_salt(password.as_bytes(), &seed[..16], SCRAM_ITERATIONS)
        .into_string(&base64::engine::general_purpose::STANDARD)
}

/// A verifier's parts, before encoding.
struct Verifier {
    iterations: u32,
    salt: Vec<u8>,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
}

impl Verifier {
    fn into_string(self, b64: &impl base64::Engine) -> String {
        format!(
            "SCRAM-SHA-256${}:{}${}:{}",
            self.iterations,
            b64.encode(&self.salt),
            b64.encode(&self.stored_key),
            b64.encode(&self.server_key)
        )
    }
}

fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    use hmac::{KeyInit, Mac};
    let mut m = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).expect("HMAC takes any key");
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().to_vec()
}

/// SaltedPassword = PBKDF2-HMAC-SHA-256(password, salt, i) (one 32-byte block: RFC 5802's
/// Hi()), then ClientKey, StoredKey = SHA-256(ClientKey) and ServerKey.
fn scram_verifier_with_salt(password: &[u8], salt: &[u8], iterations: u32) -> Verifier {
    use sha2::{Digest, Sha256};
    let mut u = hmac_sha256(password, &[salt, &1u32.to_be_bytes()]);
    let mut salted = u.clone();
    for _ in 1..iterations {
        u = hmac_sha256(password, &[&u]);
        salted.iter_mut().zip(&u).for_each(|(s, x)| *s ^= x);
    }
    let client_key = hmac_sha256(&salted, &[b"Client Key"]);
    Verifier {
        iterations,
        salt: salt.to_vec(),
        stored_key: Sha256::digest(&client_key).to_vec(),
        server_key: hmac_sha256(&salted, &[b"Server Key"]),
    }
}

/// The PgBouncer container of a php experiment with `db_via: pgbouncer`.
pub(crate) fn container(
    pool_size: u32,
    pg: &PostgresSettings,
    ctx: &StartContext,
) -> ContainerDecl {
    let mut c = ContainerDecl::new(PGBOUNCER);
    c.files = vec![
        FileDecl {
            path: INI.into(),
            contents: render_ini(pool_size, pg.auth).into_bytes(),
            mode: 0o644,
        },
        FileDecl {
            path: USERLIST.into(),
            contents: userlist(&ctx.password).into_bytes(),
            mode: 0o644,
        },
    ];
    c.after_ready = Some(Role::PG);
    // A database request through nginx, php-fpm and PgBouncer to PostgreSQL and back.
    c.ready = vec![WaitFor::Http {
        path: "/api/db",
        status: 200,
        body: "\"price\"",
    }];
    c
}

/// The checks of `db_via` and `pool_size` against PostgreSQL's settings: a pool larger than
/// `max_connections` is a warning that an experiment claiming no errors turns into an error
/// (`Issue::unless_errors_claimed`); a pool size without PgBouncer, a warning.
pub(crate) fn check(via: DbVia, pool_size: u32, pg: &PostgresSettings) -> Vec<Issue> {
    let mut d = Vec::new();
    if pool_size == 0 {
        d.push(Issue::error("stack.php.pool_size", "must be > 0"));
    }
    let max = pg.max_connections;
    if !via.is_direct() && pool_size > max {
        d.push(
            Issue::warning(
                "stack.php.pool_size",
                format!(
                    "PgBouncer's pool of {pool_size} server connections is larger than \
                     PostgreSQL's max_connections {max}: {} of them will be refused \
                     (`too many clients`) when the pool fills",
                    pool_size - max
                ),
            )
            .help("lower stack.php.pool_size below stack.postgres.max_connections, or raise it")
            .errors_claimed_fatal(),
        );
    }
    if via.is_direct() && pool_size != super::php::DEFAULT_POOL_SIZE {
        d.push(
            Issue::warning(
                "stack.php.pool_size",
                "has no effect with db_via: direct (no PgBouncer)",
            )
            .help("set stack.php.db_via: pgbouncer, or remove pool_size"),
        );
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(max: u32) -> PostgresSettings {
        PostgresSettings {
            max_connections: max,
            ..Default::default()
        }
    }

    #[test]
    fn the_ini_pools_transactions_with_the_given_size_and_auth() {
        let ini = render_ini(17, Auth::Trust);
        assert!(ini.contains("pool_mode = transaction\n"), "{ini}");
        assert!(ini.contains("default_pool_size = 17\n"), "{ini}");
        assert!(ini.contains("max_db_connections = 17\n"), "{ini}");
        assert!(ini.contains("auth_type = trust\n"), "{ini}");
        assert!(
            ini.contains("lab = host=pg port=5432 dbname=lab\n"),
            "{ini}"
        );
        assert!(render_ini(5, Auth::Scram).contains("auth_type = scram-sha-256\n"));
        let v = scram_verifier("pw");
        assert_eq!(userlist("pw"), format!("\"lab\" \"{v}\"\n"));
    }

    /// The verifier PostgreSQL's clients compute: postgres-protocol's golden value for
    /// "secret" with the salt 1..=16 (its `test_encrypt_scram_sha_256`), and the same string for
    /// the same password each time (PostgreSQL's and PgBouncer's copies must match).
    #[test]
    fn the_scram_verifier_is_postgresqls_and_stable_per_password() {
        let salt: Vec<u8> = (1..=16).collect();
        let v = scram_verifier_with_salt(b"secret", &salt, 4096)
            .into_string(&base64::engine::general_purpose::STANDARD);
        assert_eq!(
            v,
            "SCRAM-SHA-256$4096:AQIDBAUGBwgJCgsMDQ4PEA==$8rrDg00OqaiWXJ7p+sCgHEIaBSHY89ZJl3mfIsf32oY=:05L1f+yZbiN8O0AnO40Og85NNRhvzTS57naKRWCcsIA="
        );
        assert_eq!(scram_verifier("abc"), scram_verifier("abc"));
        assert_ne!(scram_verifier("abc"), scram_verifier("abd"));
        assert!(scram_verifier("abc").starts_with("SCRAM-SHA-256$4096:"));
        assert!(!scram_verifier("abc").contains(['\'', '"']));
    }

    #[test]
    fn pg_hba_uses_the_method_for_tcp_only() {
        let h = pg_hba(Auth::Trust);
        assert!(h.contains("host all all 0.0.0.0/0 trust\n"), "{h}");
        assert!(h.contains("local all all trust\n"));
        assert!(pg_hba(Auth::Scram).contains("host all all 0.0.0.0/0 scram-sha-256\n"));
        let a: Auth = serde_yaml::from_str("trust").unwrap();
        assert_eq!(a, Auth::Trust);
        let s: Auth = serde_yaml::from_str("scram-sha-256").unwrap();
        assert_eq!(s, Auth::Scram);
        assert!(serde_yaml::from_str::<Auth>("md5").is_err());
    }

    #[test]
    fn a_pool_above_max_connections_warns_and_is_fatal_when_errors_are_claimed_away() {
        let d = check(DbVia::Pgbouncer, 120, &pg(100));
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].warning && d[0].fatal_if_no_errors_claimed, "{d:?}");
        assert!(
            d[0].message
                .contains("larger than PostgreSQL's max_connections 100")
        );
        assert!(d[0].message.contains("20 of them"), "{}", d[0].message);
        assert!(check(DbVia::Pgbouncer, 100, &pg(100)).is_empty());
        let zero = check(DbVia::Pgbouncer, 0, &pg(100));
        assert!(!zero[0].warning && zero[0].field == "stack.php.pool_size");
        let direct = check(DbVia::Direct, 50, &pg(100));
        assert!(direct[0].warning && direct[0].message.contains("no effect"));
    }

    /// `db_via: pgbouncer` adds the declared role's container after PostgreSQL's, every role of
    /// the php lab then running; the workers' env points at it; `direct` leaves it out.
    #[test]
    fn db_via_pgbouncer_starts_the_bouncer_beside_postgres() {
        use crate::lab::{Lab, descriptor};
        let ctx = StartContext {
            password: "pw".into(),
            monitor_password: "mpw".into(),
            app_cpus: 2,
            nofile: 4096,
            sampler_addr: "172.30.0.1".into(),
        };
        let d = descriptor(Lab::Php);
        let mut e = crate::stack::defaults::lab_experiment(Lab::Php);
        let direct = d.containers(&e.stack, &ctx).unwrap();
        assert!(direct.iter().all(|c| c.role != PGBOUNCER));
        let php = e.stack.php.as_mut().unwrap();
        php.db_via = DbVia::Pgbouncer;
        php.pool_size = 7;
        e.stack.postgres.auth = Auth::Trust;
        let c = d.containers(&e.stack, &ctx).unwrap();
        let roles: Vec<Role> = c.iter().map(|c| c.role).collect();
        assert_eq!(roles, d.info().roles);
        let b = &c[1];
        assert_eq!((b.role.slot(), b.memory_mib), (Slot::Db, 64));
        assert_eq!(b.after_ready, Some(Role::PG));
        let ini = String::from_utf8(b.files[0].contents.clone()).unwrap();
        assert!(ini.contains("default_pool_size = 7\n") && ini.contains("auth_type = trust\n"));
        // PostgreSQL stores the very verifier the bouncer's userlist.txt holds
        let pg_pw = &c[0].env.iter().find(|(n, _)| n == "PG_PASSWORD").unwrap().1;
        assert_eq!(pg_pw, &scram_verifier("pw"));
        assert_eq!(b.files[1].contents, userlist("pw").into_bytes());
        assert!(String::from_utf8_lossy(&b.files[1].contents).contains(pg_pw.as_str()));
        let env = |k: &str| c[2].env.iter().find(|(n, _)| n == k).unwrap().1.clone();
        assert_eq!(
            (env("DB_HOST"), env("DB_PORT")),
            ("pgbouncer".into(), "6432".into())
        );
        // trust: PostgreSQL's own pg_hba.conf, named on its command line
        assert_eq!(
            c[0].cmd,
            Some(vec![
                "-c".into(),
                "hba_file=/etc/perflab/pg_hba.conf".into()
            ])
        );
        assert!(direct[0].cmd.is_none() && direct[0].files.is_empty());
    }

    #[test]
    fn the_app_connects_to_the_bouncer_or_to_postgres() {
        assert_eq!(db_address(DbVia::Direct), ("pg", 5432));
        assert_eq!(db_address(DbVia::Pgbouncer), ("pgbouncer", 6432));
    }
}

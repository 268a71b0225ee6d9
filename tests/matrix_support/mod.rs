//! The scale-out tests' real parts: an sshd from Debian on a high loopback port with keys made
//! here, and the lock holder watched while cells run.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn perflab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perflab"))
}

/// A small, quick demo cell: one 5 s step of demo-open (`--quick`'s shortest hold). The tests
/// are about where and when cells run, not what they measure, and a second step cost every
/// cell its hold and ramp again.
pub const CELL_FLAGS: [&str; 4] = ["--quick", "--no-align", "--set", "load.steps=100"];

/// An sshd of this test: killed on drop.
pub struct Sshd {
    pub child: Child,
    pub port: u16,
    pub key: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen (scripts/prereqs-scaleout.sh installs openssh)")
        .success();
    assert!(ok);
}

/// sshd on 127.0.0.1 and 127.0.0.2 (two "hosts"), accepting this user's generated key.
pub fn sshd(dir: &Path) -> Sshd {
    keygen(&dir.join("host_key"));
    keygen(&dir.join("user_key"));
    std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).unwrap();
    let _ = std::fs::create_dir_all("/run/sshd");
    let port = free_port();
    let cfg = dir.join("sshd_config");
    std::fs::write(
        &cfg,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nListenAddress 127.0.0.2\nHostKey {d}/host_key\n\
             AuthorizedKeysFile {d}/authorized_keys\nPidFile {d}/sshd.pid\nStrictModes no\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n\
             UsePAM no\nPermitUserEnvironment no\nMaxStartups 50\nLogLevel ERROR\n",
            d = dir.display()
        ),
    )
    .unwrap();
    let child = Command::new("/usr/sbin/sshd")
        .args(["-D", "-e", "-f"])
        .arg(&cfg)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
        .spawn()
        .expect("/usr/sbin/sshd (scripts/prereqs-scaleout.sh installs openssh-server)");
    let s = Sshd {
        child,
        port,
        key: dir.join("user_key"),
    };
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "sshd did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    s
}

impl Sshd {
    /// An ssh login (parallel's sshlogin form) to `addr`.
    pub fn login(&self, addr: &str) -> String {
        let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
        format!(
            "ssh -p {} -i {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR {user}@{addr}",
            self.port,
            self.key.display()
        )
    }
}

/// The lock holders seen while `f` runs, polled every 50 ms: (pid, experiment, since).
pub fn watch_holders<T>(f: impl FnOnce() -> T) -> (T, Vec<(u32, String, String)>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let watcher = std::thread::spawn(move || {
        let mut seen: Vec<(u32, String, String)> = Vec::new();
        while !s.load(Ordering::Relaxed) {
            if let Some(h) = perflab::lock::read_holder(&perflab::lock::lock_path()) {
                let k = (h.pid, h.experiment.clone(), h.since.to_rfc3339());
                if seen.last() != Some(&k) {
                    seen.push(k);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        seen
    });
    let r = f();
    stop.store(true, Ordering::Relaxed);
    (r, watcher.join().unwrap())
}

/// Each run directory's measuring span: its first phase's start to its last phase's end.
pub fn spans(dirs: &[PathBuf]) -> Vec<(f64, f64, PathBuf)> {
    let mut v: Vec<(f64, f64, PathBuf)> = dirs
        .iter()
        .map(|d| {
            let m = perflab::rundir::read_manifest(d).unwrap();
            let ph = &m.measurements.phases;
            let start = ph
                .iter()
                .map(|p| p.started.timestamp_millis() as f64 / 1000.0)
                .fold(f64::MAX, f64::min);
            let end = ph
                .iter()
                .map(|p| p.started.timestamp_millis() as f64 / 1000.0 + p.seconds)
                .fold(f64::MIN, f64::max);
            (start, end, d.clone())
        })
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// No two spans overlap.
pub fn assert_no_overlap(spans: &[(f64, f64, PathBuf)]) {
    for w in spans.windows(2) {
        assert!(
            w[0].1 <= w[1].0 + 0.001,
            "{} ({:.1}-{:.1}) overlaps {} ({:.1}-{:.1})",
            w[0].2.display(),
            w[0].0,
            w[0].1,
            w[1].2.display(),
            w[1].0,
            w[1].1
        );
    }
}

/// The run directories under `out/<exp>/` (not `latest`).
pub fn run_dirs(out: &Path, exp: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out.join(exp))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir() && !p.is_symlink())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `matrix plan demo-open --rounds N` of quick demo cells into `dir/m.plan` for `dir/out`.
pub fn plan(dir: &Path, rounds: u32) -> (PathBuf, PathBuf) {
    let (out, plan) = (dir.join("out"), dir.join("m.plan"));
    let o = perflab()
        .args([
            "matrix",
            "plan",
            "demo-open",
            "--rounds",
            &rounds.to_string(),
            "--plan",
        ])
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args(CELL_FLAGS)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (out, plan)
}

/// `perflab matrix run PLAN --out OUT` with the runner's flags to add.
pub fn matrix_run(plan: &Path, out: &Path) -> Command {
    let mut c = perflab();
    c.args(["matrix", "run"]).arg(plan).arg("--out").arg(out);
    c
}

/// `perflab matrix status PLAN --out OUT`'s text.
pub fn matrix_status(plan: &Path, out: &Path) -> String {
    let o = perflab()
        .args(["matrix", "status"])
        .arg(plan)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

//! SLOW (Docker, about 2 min plus any wait for the host lock, up to an hour): a single-node Slurm (munged,
//! slurmctld and slurmd from Debian, started by the test with their config in a temp dir)
//! runs `perflab matrix run --slurm --submit`'s 2-task array of quick demo-open cells into a
//! shared out/; --exclusive makes the second task start after the first ended.
use crate::matrix_support;
use matrix_support::*;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Daemons(Vec<Child>, Option<std::path::PathBuf>);

impl Drop for Daemons {
    fn drop(&mut self) {
        // a task still running (the test failed) is cancelled before its daemons go
        if let Some(conf) = &self.1 {
            let _ = Command::new("scancel")
                .args(["--full", "--partition", "debug"])
                .env("SLURM_CONF", conf)
                .status();
            std::thread::sleep(Duration::from_secs(2));
        }
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn spawn(dir: &Path, log: &str, cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join(log)).unwrap())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("{cmd:?}: {e} (scripts/prereqs-scaleout.sh installs slurm and munge)")
        })
}

/// munged, slurmctld and slurmd of a one-node cluster in `d`; `SLURM_CONF` to reach it.
fn cluster(d: &Path) -> (Daemons, std::path::PathBuf) {
    let node = perflab::owner::this_host();
    let (sock, key) = (d.join("munge.sock"), d.join("munge.key"));
    std::fs::write(
        &key,
        (0..1024)
            .map(|i| (i * 7 + 13) as u8 ^ std::process::id() as u8)
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o400)).unwrap();
    let mut daemons = Daemons(Vec::new(), None);
    daemons.0.push(spawn(
        d,
        "munged.log",
        Command::new("/usr/sbin/munged")
            .args(["-F", "-f", "--num-threads", "2", "-S"])
            .arg(&sock)
            .arg("--key-file")
            .arg(&key)
            .arg("--pid-file")
            .arg(d.join("munged.pid"))
            .arg("--log-file")
            .arg(d.join("munged.file.log"))
            .arg("--seed-file")
            .arg(d.join("munged.seed")),
    ));
    for s in ["state", "spool"] {
        std::fs::create_dir_all(d.join(s)).unwrap();
    }
    let conf = d.join("slurm.conf");
    std::fs::write(&conf, format!(
        "ClusterName=perflabtest\nSlurmctldHost={node}(127.0.0.1)\nSlurmctldPort={}\nSlurmdPort={}\n\
         AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={sock}\nSlurmUser=root\nSlurmdUser=root\n\
         StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\nSlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
         ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n\
         AccountingStorageType=accounting_storage/none\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
         ReturnToService=2\nMpiDefault=none\nMinJobAge=600\nSlurmctldLogFile={d}/slurmctld.file.log\nSlurmdLogFile={d}/slurmd.file.log\n\
         NodeName={node} NodeAddr=127.0.0.1 CPUs={} State=UNKNOWN\nPartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP\n",
        port(), port(),
        perflab::host::online_cpus().map_or(1, |c| c.len()),
        sock = sock.display(), d = d.display()
    )).unwrap();
    let t0 = Instant::now();
    while !sock.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "munged did not start: {}",
            std::fs::read_to_string(d.join("munged.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    daemons.0.push(spawn(
        d,
        "slurmctld.log",
        Command::new("/usr/sbin/slurmctld")
            .args(["-D", "-i", "-f"])
            .arg(&conf),
    ));
    std::thread::sleep(Duration::from_millis(500));
    daemons.0.push(spawn(
        d,
        "slurmd.log",
        Command::new("/usr/sbin/slurmd")
            .args(["-D", "-f"])
            .arg(&conf),
    ));
    // the node answers `sinfo` as idle
    let t0 = Instant::now();
    loop {
        let o = Command::new("sinfo")
            .args(["-h", "-o", "%t"])
            .env("SLURM_CONF", &conf)
            .output()
            .unwrap();
        if String::from_utf8_lossy(&o.stdout).trim() == "idle" {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the node is not idle: {} {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
            std::fs::read_to_string(d.join("slurmctld.file.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    daemons.1 = Some(conf.clone());
    (daemons, conf)
}

/// `StartTime` and `EndTime` of each array task (`scontrol show job ID`), by task id.
fn task_times(conf: &Path, job: &str) -> Vec<(String, String, String)> {
    let o = Command::new("scontrol")
        .args(["-o", "show", "job", job])
        .env("SLURM_CONF", conf)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut v: Vec<(String, String, String)> = text
        .lines()
        .map(|l| {
            let f = |k: &str| {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix(k))
                    .unwrap_or("")
                    .to_string()
            };
            (f("ArrayTaskId="), f("StartTime="), f("EndTime="))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_two_task_array_runs_one_cell_after_the_other() {
    let _serial = crate::serial();
    let t = tempfile::tempdir().unwrap();
    let (_daemons, conf) = cluster(t.path());
    let (out, plan) = plan(t.path(), 2);
    let o = matrix_run(&plan, &out)
        .args(["--slurm", "--submit"])
        .env("SLURM_CONF", &conf)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    let job = err
        .split("submitted job array ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect(&err)
        .to_string();
    let script = std::fs::read_to_string(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert!(
        script.contains("#SBATCH --array=1-2") && script.contains("#SBATCH --exclusive"),
        "{script}"
    );
    let t0 = Instant::now();
    loop {
        let q = Command::new("squeue")
            .args(["-h", "-j", &job])
            .env("SLURM_CONF", &conf)
            .output()
            .unwrap();
        if String::from_utf8_lossy(&q.stdout).trim().is_empty() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(3600),
            "the array did not finish"
        );
        std::thread::sleep(Duration::from_secs(2));
    }
    let times = task_times(&conf, &job);
    eprintln!("slurm tasks: {times:?}");
    assert_eq!(times.len(), 2, "{times:?}");
    assert!(
        times[1].1 >= times[0].2,
        "task 2 started {} before task 1 ended {}",
        times[1].1,
        times[0].2
    );
    let text = matrix_status(&plan, &out);
    assert!(
        text.contains("2 done, 0 running, 0 failed, 0 remaining"),
        "{text}"
    );
    let dirs = run_dirs(&out, "demo-open");
    assert_eq!(dirs.len(), 2);
    for d in &dirs {
        let cell = perflab::rundir::read_manifest(d)
            .unwrap()
            .measurements
            .cell
            .unwrap();
        assert_eq!(cell.scheduler, "slurm");
        assert!(cell.job.unwrap().starts_with(&format!("slurm job {job}_")));
    }
    assert_no_overlap(&spans(&dirs));
}

//! SLOW (Docker, about 4 min; the cells queue on the host lock behind any other measurement):
//! `perflab matrix run --hosts` through GNU parallel over two ssh logins to this machine (an
//! sshd from Debian the test starts on a high loopback port, keys made by the test) runs a
//! 4-cell quick demo matrix: the cells never overlap (the lock's holder file shows one cell at
//! a time), every run directory comes back into one out/, and out/index.html lists the 4.
use crate::matrix_support;
use matrix_support::*;

#[test]
fn four_cells_over_two_ssh_logins_come_back_into_one_index() {
    let _serial = crate::serial();
    let t = tempfile::tempdir().unwrap();
    let sshd = sshd(t.path());
    let hosts = t.path().join("hosts");
    std::fs::write(
        &hosts,
        format!(
            "# two logins to this machine\n{}\n{}\n",
            sshd.login("127.0.0.1"),
            sshd.login("127.0.0.2")
        ),
    )
    .unwrap();
    let (out, plan) = plan(t.path(), 4);
    let remote = format!("perflab-matrix-test-{}", std::process::id());
    let t0 = std::time::Instant::now();
    let (o, holders) = watch_holders(|| {
        matrix_run(&plan, &out)
            .arg("--hosts")
            .arg(&hosts)
            .args([
                "--perflab",
                env!("CARGO_BIN_EXE_perflab"),
                "--remote-dir",
                &remote,
            ])
            .output()
            .unwrap()
    });
    let wall = t0.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    eprintln!("matrix run --hosts: {wall:.1} s\n{stdout}");
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("4 done, 0 running, 0 failed, 0 remaining"),
        "{stdout}"
    );
    // both logins ran cells, and every cell is a parallel job in its manifest
    let dirs = run_dirs(&out, "demo-open");
    assert_eq!(dirs.len(), 4, "{dirs:?}");
    let mut jobs = Vec::new();
    for d in &dirs {
        let m = perflab::rundir::read_manifest(d).unwrap();
        let cell = m.measurements.cell.expect("measurements.cell");
        assert_eq!(cell.scheduler, "parallel", "{}", d.display());
        jobs.push(cell.job.unwrap());
    }
    let joblog = std::fs::read_to_string(
        std::fs::read_dir(t.path().join("m.plan.work"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("joblog"),
    )
    .unwrap();
    assert!(
        joblog.contains("@127.0.0.1") && joblog.contains("@127.0.0.2"),
        "{joblog}"
    );
    // one cell at a time: the holder file named each cell's process in turn, and the runs' spans are apart
    let cells: Vec<_> = holders.iter().filter(|h| h.1 == "demo-open").collect();
    eprintln!("lock holders seen: {holders:?}");
    assert!(cells.len() >= 4, "{holders:?}");
    assert_no_overlap(&spans(&dirs));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("4 runs of 1 experiments"), "index");
    for d in &dirs {
        assert!(index.contains(&d.file_name().unwrap().to_string_lossy().to_string()));
    }
    // the hosts keep their copy (a cell run again there is complete at once); removed here
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let kept = std::path::Path::new(&home).join(&remote);
    assert!(kept.join("cells/demo-open").is_dir());
    std::fs::remove_dir_all(&kept).unwrap();
}

//! The table's cases of issue 38: output flags pointed at what is not a new file or a regular
//! file of the caller's (a device node, a FIFO, a socket, a dangling link, a link to a folder,
//! a file where a folder goes), and the matrix's readers and generated script made hostile (a
//! FIFO plan, hosts file, job output or controller.pid, a plan path with a newline, a
//! `--perflab` that bash would read as an assignment).
use super::links::two_runs;
use super::{Case, case};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

const A: &str = "2a/20261130T222220Z-r1";
const B: &str = "2a/20261130T222517Z-r1";
const HEAD: &str = "# perflab matrix plan 1\n# id 20261201T101500Z\n";
const CELL: &str =
    "perflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-trixie --quick\n";
/// The plan's work folder (`<plan>.work/<id>`).
const WORK: &str = "m.plan.work/20261201T101500Z";

fn plan() -> Option<(&'static str, Vec<u8>)> {
    Some(("m.plan", format!("{HEAD}{CELL}").into_bytes()))
}

fn mkfifo(p: &Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: c is a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// A device node `dev` (a copy of /dev/null: root only), else a FIFO there.
fn device_or_fifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: c is a NUL-terminated path; 1:3 is the null device.
    let r = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if r != 0 {
        mkfifo(p);
    }
}

/// `name` in the case's folder is still what setup made, not a file perflab wrote.
fn still_special(dir: &Path, name: &str) -> Result<(), String> {
    let t = std::fs::symlink_metadata(dir.join(name))
        .map_err(|e| format!("{name}: {e}"))?
        .file_type();
    match t.is_char_device() || t.is_fifo() || t.is_socket() {
        true => Ok(()),
        false => Err(format!("{name} was replaced by a {t:?}")),
    }
}

fn setup_compare_device(d: &Path) {
    two_runs(d, "2a");
    device_or_fifo(&d.join("dev"));
}

fn setup_plan_socket(d: &Path) {
    let l = std::os::unix::net::UnixListener::bind(d.join("sock")).unwrap();
    std::mem::forget(l);
}

fn setup_man_dangling(d: &Path) {
    std::os::unix::fs::symlink("nowhere", d.join("man")).unwrap();
}

fn setup_export_links(d: &Path) {
    std::fs::create_dir(d.join("empty")).unwrap();
    std::os::unix::fs::symlink("empty", d.join("k")).unwrap();
    std::os::unix::fs::symlink("nowhere", d.join("k2")).unwrap();
}

fn export_wrote_nothing(d: &Path) -> Result<(), String> {
    match std::fs::read_dir(d.join("empty")).unwrap().count() {
        0 if !d.join("nowhere").exists() => Ok(()),
        _ => Err("the export wrote through a link".into()),
    }
}

/// A job of the plan that failed (its job-log line), its output a FIFO.
fn setup_fifo_results(d: &Path) {
    let w = d.join(WORK);
    std::fs::create_dir_all(&w).unwrap();
    std::fs::write(
        w.join("joblog"),
        "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n\
         1\thostx\t1796155849.2\t1.0\t0\t0\t255\t0\tcmd\n",
    )
    .unwrap();
    mkfifo(&w.join("results/1/stdout"));
    mkfifo(&w.join("results/1/stderr"));
    mkfifo(&w.join("controller.pid"));
}

fn setup_pid_zero(d: &Path) {
    let w = d.join(WORK);
    std::fs::create_dir_all(&w).unwrap();
    std::os::unix::fs::symlink("/dev/zero", w.join("controller.pid")).unwrap();
}

fn setup_newline_folder(d: &Path) {
    let dir = d.join("a\ntouch PWNED #");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("m.plan"), format!("{HEAD}{CELL}")).unwrap();
}

fn no_script(d: &Path) -> Result<(), String> {
    match d.join("a\ntouch PWNED #/m.plan.work").exists() {
        false => Ok(()),
        true => Err("a work folder (and script) was made for the plan".into()),
    }
}

/// `bin/run` on the PATH would run were `PERFLAB_X=1 run demo-open ...` an assignment.
fn setup_assignment(d: &Path) {
    std::fs::create_dir(d.join("bin")).unwrap();
    let run = d.join("bin/run");
    std::fs::write(&run, format!("#!/bin/sh\ntouch '{}/PWNED'\n", d.display())).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// The generated script, run by bash as Slurm would run task 1, starts no other program.
fn script_runs_no_other_program(d: &Path) -> Result<(), String> {
    let script = d.join(WORK).join("matrix.sbatch");
    let text = std::fs::read_to_string(&script).map_err(|e| e.to_string())?;
    let path = format!(
        "{}:{}",
        d.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let o = std::process::Command::new("bash")
        .arg(&script)
        .current_dir(d)
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("PATH", path)
        .output()
        .map_err(|e| e.to_string())?;
    match d.join("PWNED").exists() {
        false if text.contains("'PERFLAB_X=1' run demo-open") => Ok(()),
        false => Err(format!("the program word is not quoted:\n{text}")),
        true => Err(format!(
            "bash ran bin/run: `--perflab PERFLAB_X=1` was an assignment\n{text}\n{}",
            String::from_utf8_lossy(&o.stderr)
        )),
    }
}

pub fn output_and_matrix_cases() -> Vec<Case> {
    let run = |plan: &'static str| ["matrix", "run", plan, "--local", "--out", "out"];
    vec![
        Case {
            setup: Some(setup_compare_device),
            after: Some(|d| still_special(d, "dev")),
            ..case(
                "compare --html onto a device node",
                None,
                &["compare", A, B, "--html", "dev"],
                2,
                &["--html dev: a ", "replaces a regular file of yours"],
            )
        },
        Case {
            setup: Some(setup_plan_socket),
            after: Some(|d| still_special(d, "sock")),
            lacks: vec!["--html", "page"],
            ..case(
                "matrix plan --plan onto a socket",
                None,
                &["matrix", "plan", "demo-open", "--plan", "sock"],
                2,
                &["--plan sock: a socket"],
            )
        },
        Case {
            setup: Some(setup_man_dangling),
            ..case(
                "man --dir through a dangling link",
                None,
                &["man", "--dir", "man"],
                2,
                &["--dir man: a symbolic link, not a folder"],
            )
        },
        case(
            "man --dir FILE",
            Some(("f", b"x".to_vec())),
            &["man", "--dir", "f"],
            2,
            &["--dir f: a file, not a folder"],
        ),
        Case {
            setup: Some(setup_export_links),
            after: Some(export_wrote_nothing),
            ..case(
                "export k8s --dir: a link to an empty folder",
                None,
                &["export", "k8s", "demo-open", "--dir", "k"],
                2,
                &["--dir k: a symbolic link, not a folder"],
            )
        },
        Case {
            setup: Some(setup_export_links),
            after: Some(export_wrote_nothing),
            ..case(
                "export k8s --dir: a dangling link",
                None,
                &["export", "k8s", "demo-open", "--dir", "k2"],
                2,
                &["--dir k2: a symbolic link, not a folder"],
            )
        },
        Case {
            setup: Some(|d| mkfifo(&d.join("m.plan"))),
            ..case(
                "matrix status: the plan is a FIFO",
                None,
                &["matrix", "status", "m.plan", "--out", "out"],
                2,
                &["m.plan: not a regular file (a FIFO)"],
            )
        },
        Case {
            setup: Some(|d| mkfifo(&d.join("hosts"))),
            ..case(
                "matrix run: the hosts file is a FIFO",
                plan(),
                &["matrix", "run", "m.plan", "--hosts", "hosts", "--out", "out"],
                2,
                &["hosts: cannot read it (not a regular file (a FIFO)"],
            )
        },
        Case {
            setup: Some(setup_fifo_results),
            ..case(
                "matrix status: a job's output and controller.pid are FIFOs",
                plan(),
                &["matrix", "status", "m.plan", "--out", "out"],
                0,
                &["failed", "hostx", "exit 255 (signal 0), no output"],
            )
        },
        Case {
            setup: Some(setup_pid_zero),
            ..case(
                "matrix status: controller.pid is /dev/zero",
                plan(),
                &["matrix", "status", "m.plan", "--out", "out"],
                0,
                &["0 done, 0 running, 0 failed, 1 remaining"],
            )
        },
        case(
            "matrix plan: an # id line after the cells",
            Some((
                "m.plan",
                b"# perflab matrix plan 1\nperflab run demo-open --suite trixie --run-name 20261201T101501Z-r1-trixie\n# id 20261201T101500Z\n"
                    .to_vec(),
            )),
            &run("m.plan"),
            2,
            &["m.plan: line 3", "`# id` line after the cells"],
        ),
        case(
            "matrix plan: --suite twice in a cell",
            Some((
                "m.plan",
                format!(
                    "{HEAD}perflab run demo-open --suite forky --run-name 20261201T101500Z-r1-trixie --suite trixie\n"
                )
                .into_bytes(),
            )),
            &run("m.plan"),
            2,
            &["m.plan: line 3", "field --suite: given twice"],
        ),
        Case {
            extra: plan(),
            ..case(
                "matrix hosts file: a login starting with -",
                Some(("hosts", b"-oProxyCommand=touch PWNED\n".to_vec())),
                &["matrix", "run", "m.plan", "--hosts", "hosts", "--out", "out"],
                2,
                &["hosts: line 1", "starts with `-`"],
            )
        },
        Case {
            extra: plan(),
            ..case(
                "matrix hosts file: an inline comment",
                Some(("hosts", b"root@a # the fast one\n".to_vec())),
                &["matrix", "run", "m.plan", "--hosts", "hosts", "--out", "out"],
                2,
                &["hosts: line 1", "holds `#`"],
            )
        },
        case(
            "matrix run --slurm --perflab ''",
            plan(),
            &["matrix", "run", "m.plan", "--slurm", "--perflab", "", "--out", "out"],
            2,
            &["--perflab ``: give the perflab program's path"],
        ),
        Case {
            setup: Some(setup_newline_folder),
            after: Some(no_script),
            ..case(
                "matrix run --slurm: a plan path with a newline",
                None,
                &["matrix", "run", "a\ntouch PWNED #/m.plan", "--slurm", "--out", "out"],
                2,
                &["a plan path with a control character"],
            )
        },
        Case {
            setup: Some(setup_assignment),
            after: Some(script_runs_no_other_program),
            ..case(
                "matrix run --slurm --perflab PERFLAB_X=1: quoted, no assignment",
                plan(),
                &["matrix", "run", "m.plan", "--slurm", "--perflab", "PERFLAB_X=1", "--out", "out"],
                0,
                &["matrix.sbatch"],
            )
        },
    ]
}

/// Issue 38's sudo case, as root: `SUDO_UID=65534 perflab compare A B --html PAGE` over a page
/// root owns leaves it root's (perflab did not create it), and hands a page it created to the
/// invoker.
#[test]
fn under_sudo_a_replaced_page_keeps_its_owner() {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("under_sudo_a_replaced_page_keeps_its_owner: skipped, needs root");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    two_runs(t.path(), "2a");
    std::fs::write(t.path().join("old.html"), "root's").unwrap();
    for page in ["old.html", "new.html"] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_perflab"))
            .current_dir(t.path())
            .args(["compare", A, B, "--html", page])
            .env("SUDO_UID", "65534")
            .env("SUDO_GID", "65534")
            .env("SUDO_USER", "nobody")
            .env(
                "PERFLAB_CATALOG",
                concat!(env!("CARGO_MANIFEST_DIR"), "/experiments"),
            )
            .output()
            .unwrap();
        // the verdict's exit code (3: regressed), never bad input's
        assert!(
            o.status.code() != Some(2) && String::from_utf8_lossy(&o.stderr).contains("wrote"),
            "{page}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let uid = |p: &str| std::fs::metadata(t.path().join(p)).unwrap().uid();
    assert_ne!(
        std::fs::read_to_string(t.path().join("old.html")).unwrap(),
        "root's"
    );
    assert_eq!(
        uid("old.html"),
        0,
        "a page perflab replaced was handed to the sudo user"
    );
    assert_eq!(
        uid("new.html"),
        65534,
        "a page perflab created stays root's"
    );
}

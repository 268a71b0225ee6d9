//! Pinning this process: every thread of perflab (its samplers among them) on the CPUs given,
//! so that what it does beside a load does not take the app's CPUs.

/// Pin every thread of this process to `cpus` (the load generator's CPUs during measurement),
/// so the samplers do not steal the app's CPU. Returns the number of threads pinned.
pub(crate) fn pin_process_to(cpus: &[usize]) -> std::io::Result<usize> {
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it; sched_setaffinity reads it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    let mut n = 0;
    for entry in std::fs::read_dir("/proc/self/task")? {
        let Some(tid) = entry?
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let rc =
            unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        n += 1;
    }
    Ok(n)
}

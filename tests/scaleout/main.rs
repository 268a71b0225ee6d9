//! The matrix over several hosts: GNU parallel over real ssh logins, Slurm, resume after a kill.
//! One at a time (`serial`).
//! One test binary per need (see tests/README.md): each file below was a binary of its own.

/// One test of this binary at a time: they share the engine, the host lock and the CPUs.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

mod matrix_hosts;
mod matrix_resume;
mod matrix_slurm;
#[path = "../matrix_support/mod.rs"]
mod matrix_support;

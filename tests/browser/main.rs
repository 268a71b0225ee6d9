//! Pages in a real headless Chromium: the recorded reports and the report of a fresh run. One at a
//! time (`serial`).
//! One test binary per need (see tests/README.md): each file below was a binary of its own.

/// One test of this binary at a time: they share the engine, the host lock and the CPUs.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

#[path = "../browser_support/mod.rs"]
mod browser_support;
mod report_browser;
mod report_browser_run;
#[path = "../report_support/mod.rs"]
mod report_support;
#[path = "../run_support/mod.rs"]
mod run_support;

//! Pages in a real headless Chromium: the recorded reports and the report of a fresh run. One at a
//! time (`serial`).
//! One test binary per need (see tests/README.md): each file below was a binary of its own.

#[path = "../serial_support/mod.rs"]
mod serial_support;
pub use serial_support::serial;

#[path = "../browser_support/mod.rs"]
mod browser_support;
mod history_browser;
#[path = "../history_support/mod.rs"]
mod history_support;
mod live_browser;
#[path = "../live_support/mod.rs"]
mod live_support;
mod report_browser;
mod report_browser_run;
#[path = "../report_support/mod.rs"]
mod report_support;
#[path = "../run_support/mod.rs"]
mod run_support;

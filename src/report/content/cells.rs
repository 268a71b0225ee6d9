//! What the report's blocks share: a block, the cells' number and time formats, and the order
//! of the roles' columns.
use crate::analyze::fmt_ms;
use crate::analyze::model::Report;
use crate::report::table::Block;

pub(super) fn block(title: &str) -> Block {
    Block::new(title)
}

pub(super) fn f1(v: f64) -> String {
    format!("{v:.1}")
}

/// Latency cell: integers from 100 ms up, one decimal below.
pub(crate) fn ms(v: f64) -> String {
    let s = fmt_ms(v);
    s.trim_end_matches(" ms").to_string()
}

pub(super) fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

pub(super) fn utc(t_s: i64) -> String {
    chrono::DateTime::from_timestamp(t_s, 0)
        .map(|d| d.format("%H:%M:%S").to_string())
        .unwrap_or_default()
}

pub(super) fn utc_full(t_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(t_ms)
        .map(|d| d.format("%Y-%m-%d %H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// Put role names in display order: the app box first, then the database and the generator
/// (`lab::roles()`' order within each; the base image runs no container).
pub(crate) fn order_roles<'a>(present: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    use crate::lab::Role;
    use crate::plan::layout::Slot;
    let order: Vec<&str> = [Slot::App, Slot::Db, Slot::Loadgen]
        .into_iter()
        .flat_map(|slot| Role::with_containers().filter(move |r| r.slot() == slot))
        .map(Role::column)
        .collect();
    let mut v: Vec<String> = present.into_iter().cloned().collect();
    v.sort();
    v.dedup();
    v.sort_by_key(|r| order.iter().position(|o| o == r).unwrap_or(order.len()));
    v
}

/// Roles with CPU data, in display order.
pub(super) fn roles(r: &Report) -> Vec<String> {
    order_roles(
        r.steps
            .iter()
            .filter_map(|s| s.server.as_ref())
            .flat_map(|w| w.cpu_pct.keys()),
    )
}

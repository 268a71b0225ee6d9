//! The measured column's detail: the values a claim's expression was made of (`(knee 150,
//! against.knee 60)`), its names' and its run-wide functions' (`against.first_step_over(...)
//! 229`), so a reader sees what the one number came from.
use crate::claim::expr::{Expr, Resolve};
use crate::claim::fmt_num;

/// The most parts shown.
const MAX_PARTS: usize = 5;

/// ` (a 1, b 2)`, or nothing for a bare name (its value is the number itself) or when none
/// could be read.
pub(super) fn leaves<R: Resolve>(e: &Expr, ctx: &mut R) -> String {
    if matches!(e, Expr::Name(_)) {
        return String::new();
    }
    let mut seen: Vec<String> = Vec::new();
    let mut parts = Vec::new();
    for n in e.names() {
        if seen.contains(&n.text) {
            continue;
        }
        seen.push(n.text.clone());
        if let Ok(v) = ctx.name(n) {
            parts.push(format!("{} {}", n.text, fmt_num(v)));
        }
    }
    for (f, args) in e.calls() {
        let call = Expr::Call(f.to_string(), args.to_vec());
        let text = call.to_string();
        if e == &call || seen.contains(&text) || !call.names().is_empty() {
            continue;
        }
        seen.push(text.clone());
        if let Ok(v) = call.eval(ctx) {
            parts.push(format!("{text} {}", fmt_num(v)));
        }
    }
    parts.truncate(MAX_PARTS);
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

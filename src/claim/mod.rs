//! The claim language: how an experiment's `expect:` claims are written (`schema`), their
//! expressions (`expr`, tokenised by `lex`, parsed by `parse`), the names and functions they
//! may use (`quantities`) and the static compile of a claim (`compile`). Pure, and below
//! `experiment`: it imports nothing of perflab's; `verify` evaluates compiled claims on runs.
pub mod compile;
pub mod expr;
mod lex;
mod parse;
pub mod quantities;
pub mod schema;

pub use compile::{At, ClaimError, Comparison, Compiled, compile, fmt_num, parse_at};
pub use expr::{Expr, Name, ParseError, Selector};
pub use parse::parse;
pub use schema::{Bound, Claim, Refuted, StepAt, Tol, Tolerance};

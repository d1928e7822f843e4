//! The subcommands of `cloth`.

pub mod batch;
pub mod check;
pub mod print;
pub mod render;
pub mod run;

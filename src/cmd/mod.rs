//! The subcommands of `cloth`.

pub mod batch;
pub mod check;
pub mod render;
pub mod run;

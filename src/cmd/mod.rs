//! The subcommands of `cloth`.

pub mod check;
pub mod render;
pub mod run;

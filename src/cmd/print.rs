//! Printing that survives a closed output: `cloth check scene.toml | head -1`, a `cloth plot`
//! or `cloth run` whose reader went away.
//!
//! Decision: when standard output (or standard error) is closed, the command stops printing to
//! it, quietly, finishes its work and exits with the status the work earned (0 on success):
//! the files a run writes are its product, its summary is not, and a validation piped into
//! `head` still says by its status whether the scene is valid. Any other write error is
//! reported once on standard error and printing to that stream stops.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes one line to standard output (see the module docs).
pub fn out_line(args: std::fmt::Arguments) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args).and_then(|()| o.write_all(b"\n")) {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            err_line(format_args!(
                "warning: cannot write to standard output: {e}"
            ));
        }
    }
}

/// Writes one line to standard error (see the module docs).
pub fn err_line(args: std::fmt::Arguments) {
    if STDERR_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut e = std::io::stderr().lock();
    if e.write_fmt(args).and_then(|()| e.write_all(b"\n")).is_err() {
        STDERR_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// `println!` that survives a closed standard output.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cmd::print::out_line(format_args!($($arg)*))
    };
}

/// `eprintln!` that survives a closed standard error.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cmd::print::err_line(format_args!($($arg)*))
    };
}

pub(crate) use {errln, outln};

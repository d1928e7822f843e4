//! `cloth-mannequin [--check] [--out DIR]`: writes the mannequin's assets (see the library).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    cloth_mannequin::run(&args).unwrap_or_else(|e| {
        eprintln!("cloth-mannequin: {e}");
        ExitCode::from(2)
    })
}

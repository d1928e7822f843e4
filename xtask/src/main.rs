//! Developer tasks for the cloth workspace, run as `cargo xtask <task>`.

fn main() {
    let task = std::env::args().nth(1).unwrap_or_default();
    match task.as_str() {
        "" | "help" | "--help" => {
            println!("usage: cargo xtask <task>\n\ntasks:\n  help    this text");
        }
        other => {
            eprintln!("xtask: unknown task `{other}` (try `cargo xtask help`)");
            std::process::exit(2);
        }
    }
}

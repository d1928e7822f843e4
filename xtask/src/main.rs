//! Developer tasks for the cloth workspace, run as `cargo xtask <task>`.
//!
//! `cargo xtask bench` runs the benchmark suite in a release build: the paper's scenes
//! (Baraff & Witkin 1998, Figures 1 and 2, and a garment when `scenes/garment.toml` exists),
//! garments sewn onto the mannequin, the scaling series (484 to 50,176 vertices), the drape at
//! scale (2,601 to 100,489 vertices, `scale_N`), bending and stretch stiffness sweeps,
//! implicit against explicit Verlet at the largest stable explicit step, the linear solver
//! variants, self-contact, and Blender's cloth on Figure 1 when Blender is installed (case
//! `blender_fig1`, module `peer`). Each case runs in its own child process (the hidden task
//! `bench-case <json>`) so that its peak memory and thread pool are its own. Results go to
//! `bench-results/` (Markdown, JSON, SVG); `--docs` also writes `docs/benchmarks.md` and the
//! README's headline table from the same run.
//!
//! `cargo xtask lint` checks the house rules ([`house`]); `cargo xtask mannequin` writes the
//! mannequin's assets (the `cloth-mannequin` crate).

mod analysis;
mod case;
mod house;
mod machine;
mod peer;
mod plot;
mod preview;
mod report;
mod suite;

use std::path::Path;
use std::process::ExitCode;

const HELP: &str = "usage: cargo xtask <task> [options]

tasks:
  help                 this text
  bench [options]      run the benchmark suite (release build) and write bench-results/
  lint [--root DIR]    check the house rules: no dates, commit hashes, issue numbers or lab
                       notes in README, docs/ and comments; no function over 80 lines, no
                       too_many_arguments allowance and no files that import each other
                       (outside tests, benches and examples); findings as path:line: message
  mannequin [--check]  write assets/mannequin/mannequin.{obj,glb} (--check: fail if stale);
                       the generator is the cloth-mannequin crate

bench options:
  --quick              reduced set, under two minutes on 2 cores (used by .ci/run)
  --filter NAME        only cases whose name contains NAME, or one of several separated by
                       commas (e.g. scaling, bend, fig1, shirt,skirt,trousers)
  --threads N          worker threads per case (default: all cores)
  --repeat K           run each case K times and report the median time (default 1); the
                       runs are made in K rounds of the selected cases (A B A B, not A A B B;
                       the explicit and comparison cases repeat in a row)
  --out DIR            output directory (default: <workspace>/bench-results)
  --docs               also write docs/benchmarks.md (the tables of this run) and rewrite
                       the headline table of README.md between its bench:headline markers

When Blender is installed (`blender` on PATH, or the CLOTH_BLENDER variable naming it) the
full set also times Blender's cloth on Figure 1 (case blender_fig1, --repeat times, after the
other cases; not under --quick) and reports it beside ours.

The exit status is non-zero when a case fails, stops early or reports a non-finite figure.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("");
    match task {
        "" | "help" | "--help" | "-h" => {
            println!("{HELP}");
            ExitCode::SUCCESS
        }
        "bench" => match bench(&args[1..]) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("xtask bench: {e}");
                ExitCode::from(2)
            }
        },
        "lint" => house::run(&args[1..]).unwrap_or_else(|e| {
            eprintln!("xtask lint: {e}");
            ExitCode::from(2)
        }),
        "mannequin" => cloth_mannequin::run(&args[1..]).unwrap_or_else(|e| {
            eprintln!("xtask mannequin: {e}");
            ExitCode::from(2)
        }),
        "bench-case" => bench_case(args.get(1).map(String::as_str).unwrap_or("")),
        other => {
            eprintln!("xtask: unknown task `{other}` (try `cargo xtask help`)");
            ExitCode::from(2)
        }
    }
}

/// The child side: runs one case given as JSON and prints its result as one JSON line.
fn bench_case(json: &str) -> ExitCode {
    let spec: case::CaseSpec = match serde_json::from_str(json) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bench-case: bad case description: {e}");
            return ExitCode::from(2);
        }
    };
    match case::run_child(&spec).and_then(|r| serde_json::to_string(&r).map_err(|e| e.to_string()))
    {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-case {}: {e}", spec.name);
            ExitCode::FAILURE
        }
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `--docs`: writes `docs/benchmarks.md` whole (the figures of this run, without its date and
/// commit) and rewrites the README's headline block from the same run. A README without the
/// block's markers is left alone, with a warning.
fn write_docs(
    m: &machine::Machine,
    o: &suite::BenchOptions,
    results: &suite::SuiteResults,
    problems: &[String],
) -> Result<(), String> {
    let root = suite::workspace_root();
    let docs = root.join("docs");
    std::fs::create_dir_all(&docs).map_err(|e| format!("cannot create {}: {e}", docs.display()))?;
    let page = report::markdown((m, o), results, problems, false);
    let path = docs.join("benchmarks.md");
    cloth::mesh::write_atomic_bytes(&path, page.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let block = report::readme::headline((m, o), results);
    match report::readme::rewrite(&root.join("README.md"), &block) {
        Ok(()) => eprintln!("bench: wrote {} and README.md's headline", path.display()),
        Err(e) => eprintln!("bench: warning: README.md's headline not rewritten: {e}"),
    }
    Ok(())
}

fn bench(args: &[String]) -> Result<ExitCode, String> {
    let o = suite::parse_options(args)?;
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; use `cargo xtask bench` (release) for real figures"
        );
    }
    let command = format!("cargo xtask bench {}", args.join(" "))
        .trim_end()
        .to_string();
    let mut m = machine::Machine::collect(o.threads, command);
    eprintln!(
        "bench: {} set, {} threads, {} repeat(s), commit {}, {}",
        if o.quick { "quick" } else { "full" },
        o.threads,
        o.repeat,
        m.commit,
        m.cpu
    );
    let results = suite::run_suite(&o);
    let problems = suite::problems(&results);
    m.load_after = machine::load_average();

    std::fs::create_dir_all(&o.out)
        .map_err(|e| format!("cannot create {}: {e}", o.out.display()))?;
    let md = report::markdown((&m, &o), &results, &problems, true);
    write(&o.out.join("report.md"), &md)?;
    let json = report::JsonReport {
        machine: &m,
        quick: o.quick,
        filter: o.filter.as_deref(),
        repeat: o.repeat,
        results: &results,
        paper: &report::PAPER_ROWS,
        paper_scaling: &report::PAPER_SCALING,
        bars: &report::BARS,
        problems: &problems,
    };
    let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
    write(&o.out.join("results.json"), &text)?;
    write(&o.out.join("scaling.svg"), &plot::scaling_svg(&results)?)?;
    let runs: Vec<&case::CaseResult> = ["fig1_drape", "fig2_fixed_sheet"]
        .iter()
        .filter_map(|n| results.outcomes.iter().find(|c| c.name() == *n))
        .filter_map(suite::Outcome::result)
        .collect();
    write(&o.out.join("run_series.svg"), &plot::series_svg(&runs)?)?;
    if o.docs {
        write_docs(&m, &o, &results, &problems)?;
    }
    eprintln!("bench: wrote {}", o.out.display());
    if let Some(f) = results.scaling_fit {
        eprintln!(
            "bench: scaling exponent {:.3} over {} sizes",
            f.exponent, f.points
        );
    }
    if problems.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        for p in &problems {
            eprintln!("bench: problem: {p}");
        }
        Ok(ExitCode::FAILURE)
    }
}

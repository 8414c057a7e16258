//! Runs a scenario file and prints its summary: `cargo run --release --example run -- FILE
//! [--set KEY=VALUE]...` (the overrides of `cnsim run --set`). Every minute of wall time it
//! prints to stderr how far the run has got, so a long run shows whether its pace holds.

/// The Python package's allocator (`crates/cnsim-py/src/lib.rs`), so this benchmark measures
/// what users run.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let (path, overrides) = arguments().unwrap_or_else(|| {
        eprintln!("usage: run SCENARIO.toml [--set KEY=VALUE]...");
        std::process::exit(2);
    });
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let started = std::time::Instant::now();
    let mut next_line_s = 60.0;
    let mut progress = |fraction_done: f64| {
        let wall_s = started.elapsed().as_secs_f64();
        if wall_s >= next_line_s {
            eprintln!(
                "progress: {:.4} of simulated time after {wall_s:.0} s",
                fraction_done
            );
            next_line_s += 60.0;
        }
        true
    };
    match cnsim_core::run_toml(&text, &overrides, None, &mut progress) {
        Ok(report) => println!("{}", serde_json::to_string_pretty(&report.summary).unwrap()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

/// The scenario file and the `--set KEY=VALUE` overrides after it (None: not that shape).
fn arguments() -> Option<(String, Vec<(String, String)>)> {
    let mut args = std::env::args().skip(1);
    let path = args.next()?;
    let mut overrides = Vec::new();
    while let Some(flag) = args.next() {
        let pair = args.next().filter(|_| flag == "--set")?;
        let (key, value) = pair.split_once('=')?;
        overrides.push((key.to_string(), value.to_string()));
    }
    Some((path, overrides))
}

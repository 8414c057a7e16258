//! Runs a scenario file and prints its summary: `cargo run --release --example run -- FILE`.
//! Every minute of wall time it prints to stderr how far the run has got, so a long run shows
//! whether its pace holds.

/// The Python package's allocator (`crates/cnsim-py/src/lib.rs`), so this benchmark measures
/// what users run.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run SCENARIO.toml");
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
    match cnsim_core::run_toml(&text, &[], None, &mut progress) {
        Ok(report) => println!("{}", serde_json::to_string_pretty(&report.summary).unwrap()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

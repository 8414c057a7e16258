//! Runs a scenario file and prints its summary: `cargo run --release --example run -- FILE`.

/// The Python package's allocator (`crates/cnsim-py/src/lib.rs`), so this benchmark measures
/// what users run.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run SCENARIO.toml");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    match cnsim_core::run_toml(&text, &[], None, &mut |_| true) {
        Ok(report) => println!("{}", serde_json::to_string_pretty(&report.summary).unwrap()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

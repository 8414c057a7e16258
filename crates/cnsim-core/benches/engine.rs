//! Criterion benchmarks of whole simulations (statistically robust timing for before/after
//! comparisons of core changes): 50 ms of seed 004 with PAUSE (a PAUSE storm: ~170 k XOFF/s) and
//! with QCN (rate limiters, CNMs). `cargo bench -p cnsim-core`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const PRESETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/cnsim/presets/");

fn preset(name: &str) -> String {
    std::fs::read_to_string(format!("{PRESETS}{name}.toml")).expect("preset file")
}

fn bench_preset(c: &mut Criterion, name: &str) {
    let text = preset(name);
    let overrides = [("duration_s".to_string(), "0.05".to_string())];
    let events = cnsim_core::run_toml(&text, &overrides, None, &mut |_| true)
        .expect("preset runs")
        .summary["events"]
        .as_u64()
        .expect("events counted");
    let mut group = c.benchmark_group("simulate_50ms");
    group.throughput(Throughput::Elements(events));
    group.sample_size(10);
    group.bench_function(name, |b| {
        b.iter(|| cnsim_core::run_toml(&text, &overrides, None, &mut |_| true).expect("runs"))
    });
    group.finish();
}

fn presets(c: &mut Criterion) {
    bench_preset(c, "seed004-pause");
    bench_preset(c, "seed004-qcn");
}

criterion_group!(benches, presets);
criterion_main!(benches);

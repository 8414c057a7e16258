//! The core's modules depend on each other one way (docs/architecture.md, "Module
//! dependencies"): no import circle among the top-level modules of `src/`. A module's
//! dependencies are the `crate::<module>` paths its files name outside their unit tests.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Top-level module -> the top-level modules it names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let first = rel.components().next().expect("a path");
        let top = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let name = rel.file_name().expect("a file").to_string_lossy();
        if top == "lib" || top == "testkit" || name.ends_with("tests.rs") {
            continue;
        }
        let text = fs::read_to_string(&file).expect("readable");
        let code = text
            .split("#[cfg(test)]\nmod tests {")
            .next()
            .unwrap_or_default();
        let deps = graph.entry(top.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let module: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !module.is_empty() && module != top && module.chars().all(|c| !c.is_uppercase()) {
                deps.insert(module);
            }
        }
    }
    graph
}

/// A cycle through `start`, if the graph has one (depth-first search).
fn cycle_from(
    graph: &BTreeMap<String, BTreeSet<String>>,
    node: &str,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|n| n == node) {
        return Some(path[at..].to_vec());
    }
    path.push(node.to_string());
    for next in graph.get(node).into_iter().flatten() {
        if graph.contains_key(next) {
            if let Some(cycle) = cycle_from(graph, next, path) {
                return Some(cycle);
            }
        }
    }
    path.pop();
    None
}

#[test]
fn the_core_has_no_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    assert!(graph.len() > 10, "read the modules: {graph:?}");
    for module in graph.keys() {
        let cycle = cycle_from(&graph, module, &mut Vec::new());
        assert!(cycle.is_none(), "import circle: {:?}", cycle.unwrap());
    }
}

#[test]
fn the_graph_sees_an_edge_that_is_there() {
    // The check can fail: net names cc and flow_control, so a circle through them would show.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    assert!(graph["net"].contains("cc") && graph["net"].contains("flow_control"));
    let mut with_back_edge = graph.clone();
    with_back_edge.get_mut("cc").unwrap().insert("net".into());
    assert!(cycle_from(&with_back_edge, "cc", &mut Vec::new()).is_some());
}

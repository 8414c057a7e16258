//! Flow-size CDFs: the standard workloads by name (shipped with the crate, `workloads/`), and
//! CDF text in cnsim's format (`size_bytes cumulative_probability`, the last 1) or the HPCC
//! simulator's (`size_bytes cumulative_percent`, the last 100), told apart by the last value.

use std::path::Path;

use crate::error::ConfigError;

/// The named workloads: `size = { cdf = "websearch" }`. Origins: `workloads/README.md`.
pub(crate) const NAMED: &[(&str, &str)] = &[
    ("websearch", include_str!("../../workloads/websearch.txt")),
    ("fb_hadoop", include_str!("../../workloads/fb_hadoop.txt")),
    (
        "ali_storage",
        include_str!("../../workloads/ali_storage.txt"),
    ),
];

/// The names `cdf` accepts, for messages.
pub(crate) fn names() -> String {
    NAMED
        .iter()
        .map(|(n, _)| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A named workload's points, or None for an unknown name.
pub(crate) fn named(name: &str) -> Option<Vec<[f64; 2]>> {
    let (_, text) = NAMED.iter().find(|(n, _)| *n == name)?;
    Some(parse(text, name, "cdf").expect("the shipped workloads parse (tested)"))
}

/// Reads and checks a CDF file; errors name `field` and the file's own line.
pub(crate) fn read_file(file: &Path, field: &str) -> Result<Vec<[f64; 2]>, ConfigError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| ConfigError::field(field, format!("cannot read '{}': {e}", file.display())))?;
    let source = format!("'{}'", file.display());
    let (points, lines) = parse_lines(&text, &source, field)?;
    crate::scenario::flows::check_cdf(&points).map_err(|(index, msg)| match index {
        Some(i) => ConfigError::field(field, format!("{source} line {}: {msg}", lines[i])),
        None => ConfigError::field(field, format!("{source}: {msg}")),
    })?;
    Ok(points)
}

/// Points from CDF text: one `size value` pair per line (`#` comments and blank lines
/// skipped). Values ending at 100 are percent (the HPCC format) and are divided by 100;
/// values ending at 1 are probabilities. `source` names the text in messages.
pub(crate) fn parse(text: &str, source: &str, field: &str) -> Result<Vec<[f64; 2]>, ConfigError> {
    parse_lines(text, source, field).map(|(points, _)| points)
}

/// As [`parse`], with each point's 1-based line in the text.
fn parse_lines(
    text: &str,
    source: &str,
    field: &str,
) -> Result<(Vec<[f64; 2]>, Vec<usize>), ConfigError> {
    let mut points = Vec::new();
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || {
            ConfigError::field(
                field,
                format!("{source} line {}: expected two numbers", i + 1),
            )
        };
        let nums: Vec<f64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let [size, p] = nums[..] else {
            return Err(bad());
        };
        points.push([size, p]);
        lines.push(i + 1);
    }
    match points.last().map(|p| p[1]) {
        Some(100.0) => {
            for p in &mut points {
                p[1] /= 100.0;
            }
        }
        Some(1.0) => {}
        Some(last) => {
            return Err(ConfigError::field(
                field,
                format!(
                    "{source}: the last cumulative value must be 1 (probabilities) or 100 \
                     (percent, as the HPCC simulator's files) (got {last})"
                ),
            ))
        }
        None => return Err(ConfigError::field(field, format!("{source} has no points"))),
    }
    Ok((points, lines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::flows::validate_cdf;
    use crate::traffic::flows::SizeDist;

    #[test]
    fn the_named_workloads_are_valid_and_have_the_readmes_means() {
        for (name, mean) in [
            ("websearch", 1_711_250.0),
            ("fb_hadoop", 120_421.0),
            ("ali_storage", 40_870.0),
        ] {
            let points = named(name).expect("shipped");
            validate_cdf(&points, name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                points[0],
                [0.0, 0.0],
                "{name}: the HPCC files start at size 0"
            );
            let got = SizeDist::Empirical(points).mean_bytes();
            // The README gives whole bytes.
            assert!(
                (got - mean).abs() < 0.5,
                "{name}: mean {got}, README {mean}"
            );
        }
        assert!(named("websearch2").is_none());
    }

    #[test]
    fn percent_and_probability_files_read_the_same() {
        let percent = parse("0 0\n# a comment\n\n100 50\n300 100\n", "t", "f").expect("ok");
        let prob = parse("0 0\n100 0.5\n300 1\n", "t", "f").expect("ok");
        assert_eq!(percent, prob);
        assert_eq!(percent, vec![[0.0, 0.0], [100.0, 0.5], [300.0, 1.0]]);
    }

    #[test]
    fn bad_text_names_the_line_or_the_last_value() {
        let e = parse("1 0.5\n2 x\n", "'f.txt'", "traffic[0].size.cdf_file").unwrap_err();
        assert_eq!(e.path(), Some("traffic[0].size.cdf_file"));
        assert!(e.to_string().contains("'f.txt' line 2"), "{e}");
        let e = parse("1 0.5\n2 0.9\n", "t", "f").unwrap_err();
        assert!(
            e.to_string().contains("must be 1") && e.to_string().contains("100"),
            "{e}"
        );
        let e = parse("# nothing\n", "t", "f").unwrap_err();
        assert!(e.to_string().contains("no points"), "{e}");
        let e = parse("1 2 3\n", "t", "f").unwrap_err();
        assert!(e.to_string().contains("two numbers"), "{e}");
    }

    #[test]
    fn a_files_bad_point_is_named_by_the_files_own_line() {
        let dir = std::env::temp_dir().join(format!("cnsim-cdf-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("w.txt");
        // Line 5 (after a comment and a blank line) goes back in size: point 2, line 5.
        std::fs::write(&file, "# sizes\n0 0\n\n1000 50\n500 80\n2000 100\n").unwrap();
        let e = read_file(&file, "traffic[0].size.cdf_file").unwrap_err();
        assert_eq!(e.path(), Some("traffic[0].size.cdf_file"));
        let text = e.to_string();
        assert!(text.contains("w.txt' line 5: sizes must"), "{text}");
        assert!(!text.contains("[2]"), "{text}");
        std::fs::write(&file, "0 0\n1000 1.5\n2000 1\n").unwrap();
        let e = read_file(&file, "f").unwrap_err().to_string();
        assert!(e.contains("line 2: probabilities"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

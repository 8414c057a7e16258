//! Scenario parsing: defaults, the resolved round trip, ECM's defaults.

use super::*;
use crate::cc::bcn::BcnParams;
use crate::cc::qcn::QcnParams;

const MINIMAL: &str = r#"
name = "t"
duration_s = 0.001
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
ends = ["a", "b"]
rate_bps = 10e9
"#;

#[test]
fn resolved_scenario_round_trips() {
    let s = Scenario::from_toml(MINIMAL, &[]).expect("valid");
    let again = Scenario::from_toml(&s.to_toml(), &[]).expect("resolved is valid");
    assert_eq!(s.to_toml(), again.to_toml());
    assert_eq!(s.report.probe_interval_s, 1e-3);
}

#[test]
fn selected_scheme_gets_its_full_parameter_table() {
    let text = format!("{MINIMAL}\n[congestion]\nscheme = \"qcn\"\n");
    let s = Scenario::from_toml(&text, &[]).expect("valid");
    assert_eq!(s.congestion.qcn, Some(QcnParams::default()));
    assert!(s.to_toml().contains("[congestion.qcn]"));
}

#[test]
fn ecm_defaults_apply_under_a_partial_table() {
    let text =
        format!("{MINIMAL}\n[congestion]\nscheme = \"ecm\"\n[congestion.bcn]\nbcn00 = true\n");
    let s = Scenario::from_toml(&text, &[]).expect("valid");
    let b = s.congestion.bcn.expect("filled");
    assert!(b.bcn00, "the user's key wins");
    assert!(b.drift, "ECM's default kept");
    assert_eq!(b.bcn_max_threshold_bytes, Some(150_000.0));
    assert_eq!(b.qsc_bytes, Some(600_000.0));
    assert_eq!(b.variant_name(), "ecm+max+00");
}

#[test]
fn ecm_without_a_table_is_ecm() {
    let text = format!("{MINIMAL}\n[congestion]\nscheme = \"ecm\"\n");
    let s = Scenario::from_toml(&text, &[]).expect("valid");
    assert_eq!(s.congestion.bcn, Some(BcnParams::ecm()));
}

#[test]
fn json_schema_names_every_top_level_field_and_rejects_unknown_keys() {
    let schema = Scenario::json_schema();
    let props = schema["properties"].as_object().expect("properties");
    for field in [
        "name",
        "duration_s",
        "topology",
        "hosts",
        "links",
        "traffic",
        "congestion",
        "report",
    ] {
        assert!(props.contains_key(field), "{field} missing");
    }
    assert_eq!(schema["additionalProperties"], serde_json::json!(false));
    // hosts and links are required unless [topology] generates them (checked by validation).
    assert_eq!(
        schema["required"],
        serde_json::json!(["name", "duration_s"])
    );
}

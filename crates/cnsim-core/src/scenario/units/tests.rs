use super::*;
use crate::scenario::pfc::Headroom;
use crate::scenario::Scenario;

#[test]
fn every_form_parses_to_the_base_unit() {
    let table: &[(Quantity, &str, f64)] = &[
        (Quantity::Rate, "100Gbps", 100e9),
        (Quantity::Rate, "100G", 100e9),
        (Quantity::Rate, "100 Gb/s", 100e9),
        (Quantity::Rate, "40Mbps", 40e6),
        (Quantity::Rate, "2.5M", 2.5e6),
        (Quantity::Rate, "10kbps", 10e3),
        (Quantity::Rate, "1.6Tbps", 1.6e12),
        (Quantity::Rate, "64bps", 64.0),
        (Quantity::Time, "1us", 1e-6),
        (Quantity::Time, "1µs", 1e-6),
        (Quantity::Time, "1μs", 1e-6),
        (Quantity::Time, "2.5ms", 2.5e-3),
        (Quantity::Time, "55us", 55e-6),
        (Quantity::Time, "100ns", 100e-9),
        (Quantity::Time, "3s", 3.0),
        (Quantity::Time, ".5s", 0.5),
        (Quantity::Time, "1e2us", 1e-4),
        (Quantity::Time, "1ps", 1e-12),
        (Quantity::Bytes, "64KB", 64e3),
        (Quantity::Bytes, "64kB", 64e3),
        (Quantity::Bytes, "64KiB", 65536.0),
        (Quantity::Bytes, "1.5MiB", 1.5 * 1048576.0),
        (Quantity::Bytes, "1.5MB", 1.5e6),
        (Quantity::Bytes, "2GiB", 2.0 * 1073741824.0),
        (Quantity::Bytes, "1500B", 1500.0),
        (Quantity::Bytes, "5.KB", 5e3),
    ];
    for &(q, text, want) in table {
        // Bit-exact: a decimal unit gives the double of the number written out.
        assert_eq!(q.parse(text), Some(want), "{text}");
    }
}

#[test]
fn a_wrong_unit_or_number_does_not_parse() {
    let bad: &[(Quantity, &str)] = &[
        (Quantity::Rate, "100Q"),
        (Quantity::Rate, "100"),
        (Quantity::Rate, "100GB"),
        (Quantity::Rate, "fast"),
        (Quantity::Time, "1 m"),
        (Quantity::Time, "1Ms"),
        (Quantity::Time, "us"),
        (Quantity::Time, "1e us"),
        (Quantity::Bytes, "64Kb"),
        (Quantity::Bytes, "64 KB "),
        (Quantity::Bytes, " 64KB"),
        (Quantity::Bytes, "."),
    ];
    for &(q, text) in bad {
        assert_eq!(q.parse(text), None, "{text}");
    }
}

#[test]
fn the_field_suffix_names_the_quantity() {
    assert_eq!(Quantity::of_field("rate_bps"), Some(Quantity::Rate));
    assert_eq!(Quantity::of_field("delay_line_s"), Some(Quantity::Time));
    assert_eq!(Quantity::of_field("kmax_bytes"), Some(Quantity::Bytes));
    assert_eq!(Quantity::of_field("bytes"), Some(Quantity::Bytes));
    assert_eq!(Quantity::of_field("load"), None);
    assert_eq!(Quantity::of_field("quanta"), None);
}

const UNITS_SCENARIO: &str = r#"
name = "units"
duration_s = "2ms"
[[hosts]]
name = "a"
nic_buffer_bytes = "1.5MiB"
[[hosts]]
name = "b"
[[switches]]
name = "s"
output_buffer_bytes = "150KB"
[[links]]
ends = ["a", "s"]
rate_bps = "10Gbps"
delay_s = "1us"
[[links]]
ends = ["s", "b"]
rate_bps = "10G"
delay_s = "500ns"
[[traffic]]
kind = "cbr"
hosts = ["a"]
dst = "b"
rate_bps = "2.5Gb/s"
frame_bytes = "1.5KB"
[report]
probe_interval_s = "100us"
window_s = ["0.5ms", 0.002]
"#;

#[test]
fn a_scenario_with_units_resolves_to_plain_numbers() {
    let s = Scenario::from_toml(UNITS_SCENARIO, &[]).expect("valid");
    assert_eq!(s.duration_s, 2e-3);
    assert_eq!(s.hosts[0].nic_buffer_bytes, Some(1.5 * 1048576.0));
    assert_eq!(s.switches[0].output_buffer_bytes, Some(150e3));
    assert_eq!(s.links[0].rate_bps, 10e9);
    assert_eq!(s.links[1].delay_s, 500e-9);
    assert_eq!(s.traffic[0].rate_bps, Some(2.5e9));
    assert_eq!(s.traffic[0].frame_bytes, 1500);
    assert_eq!(s.report.probe_interval_s, 100e-6);
    let resolved = s.to_toml();
    assert!(
        !resolved.contains("Gbps") && !resolved.contains("us\""),
        "{resolved}"
    );
    assert!(resolved.contains("rate_bps = 10000000000.0"), "{resolved}");
}

#[test]
fn a_scheme_table_and_an_override_take_units_too() {
    let text = format!("{UNITS_SCENARIO}\n[congestion]\nscheme = \"dcqcn\"\n");
    let overrides = [
        ("congestion.dcqcn.kmin_bytes".to_string(), "5KB".to_string()),
        ("links[0].rate_bps".to_string(), "40G".to_string()),
    ];
    let s = Scenario::from_toml(&text, &overrides).expect("valid");
    assert_eq!(s.links[0].rate_bps, 40e9);
    let resolved = s.to_toml();
    assert!(resolved.contains("kmin_bytes = 5000.0"), "{resolved}");
}

#[test]
fn a_bad_unit_names_the_field_and_the_accepted_forms() {
    let text = UNITS_SCENARIO.replace("\"10G\"", "\"10Q\"");
    let err = Scenario::from_toml(&text, &[])
        .expect_err("bad unit")
        .to_string();
    assert!(
        err.starts_with("links[1].rate_bps: \"10Q\" is not a rate"),
        "{err}"
    );
    assert!(err.contains("\"100Gbps\"") && err.contains("Gb/s"), "{err}");
    let text = UNITS_SCENARIO.replace("\"0.5ms\"", "\"0.5 minutes\"");
    let err = Scenario::from_toml(&text, &[])
        .expect_err("bad unit")
        .to_string();
    assert!(err.starts_with("report.window_s[0]: "), "{err}");
    assert!(err.contains("units: s, ms, us"), "{err}");
}

#[test]
fn a_fractional_byte_count_in_an_integer_field_is_an_error() {
    let text = UNITS_SCENARIO.replace("\"1.5KB\"", "\"1.5B\"");
    let err = Scenario::from_toml(&text, &[])
        .expect_err("fraction")
        .to_string();
    assert!(err.starts_with("traffic[0].frame_bytes: "), "{err}");
}

#[test]
fn the_schema_allows_the_string_form_with_its_pattern() {
    let schema = Scenario::json_schema();
    let link = &schema["$defs"]["LinkSpec"]["properties"];
    let rate = &link["rate_bps"];
    assert!(rate["description"].is_string() || rate.get("description").is_none());
    let forms = rate["anyOf"].as_array().expect("anyOf");
    assert_eq!(forms[0]["type"], "number");
    assert_eq!(forms[1]["type"], "string");
    assert_eq!(forms[1]["pattern"], Quantity::Rate.pattern());
    let window = &schema["$defs"]["ReportSpec"]["properties"]["window_s"]["items"];
    assert_eq!(window["anyOf"][1]["pattern"], Quantity::Time.pattern());
    // A field without a unit suffix keeps its plain type.
    assert!(link["ends"].get("anyOf").is_none());
    // A number or a keyword: the unit string is a third form.
    let headroom = &schema["$defs"]["PfcSpec"]["properties"]["headroom_bytes"];
    let forms = headroom["anyOf"].as_array().expect("anyOf");
    assert_eq!(forms[0]["type"], "number");
    assert_eq!(forms[1]["enum"][0], "auto");
    assert_eq!(forms[2]["pattern"], Quantity::Bytes.pattern());
}

#[test]
fn auto_is_left_to_the_fields_type() {
    let with_pfc = |headroom: &str| {
        let text = format!("{UNITS_SCENARIO}\n[pfc]\nheadroom_bytes = {headroom}\n");
        Scenario::from_toml(&text, &[])
    };
    let s = with_pfc("\"auto\"").expect("valid");
    assert!(s.pfc.expect("pfc").headroom_bytes.is_auto());
    let s = with_pfc("\"64KB\"").expect("valid");
    assert_eq!(s.pfc.expect("pfc").headroom_bytes, Headroom::Bytes(64e3));
    let err = with_pfc("\"automatic\"")
        .expect_err("not a keyword")
        .to_string();
    assert!(
        err.starts_with("pfc.headroom_bytes: \"automatic\" is not a byte count: ")
            && err.ends_with(", or \"auto\""),
        "{err}"
    );
    // A byte field that takes no keyword says so, naming the field.
    let text = UNITS_SCENARIO.replace("\"1.5KB\"", "\"auto\"");
    let err = Scenario::from_toml(&text, &[])
        .expect_err("auto")
        .to_string();
    assert!(
        err.starts_with("traffic[0].frame_bytes: \"auto\" is not a byte count"),
        "{err}"
    );
}

#[test]
fn a_string_for_a_number_without_a_unit_gets_a_hint() {
    let text = UNITS_SCENARIO.replace("hosts = [\"a\"]\ndst", "hosts = [\"a\"]\nseed = \"7\"\ndst");
    let err = Scenario::from_toml(&text, &[])
        .expect_err("string seed")
        .to_string();
    assert!(
        err.starts_with("traffic[0].seed: invalid type: string \"7\""),
        "{err}"
    );
    assert!(err.contains("write the number without quotes"), "{err}");
}

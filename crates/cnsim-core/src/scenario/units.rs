//! Unit strings: `rate_bps = "100Gbps"`, `delay_s = "1us"`, `kmax_bytes = "200KB"`.
//!
//! The one parser of quantities with a unit. A field's unit is the suffix its name carries
//! (`*_bps` a rate in bits per second, `*_s` a time in seconds, `*_bytes` / `bytes` a byte
//! count), so every such field of the scenario, a scheme's table and the `[topology]`
//! generators included, takes the string form without a change to its type: [`resolve_units`]
//! walks the parsed TOML tree before it is deserialised and replaces each unit string by the
//! plain number (the resolved scenario prints numbers), and [`allow_unit_strings`] adds the
//! string form, with the same grammar as a pattern, to the JSON Schema.
//!
//! Decimal prefixes are powers of 1000 (`KB` = 1000 bytes, `Gbps` = 1e9 b/s) and binary ones
//! powers of 1024 (`KiB` = 1024 bytes), as IEC 80000-13 has them. A decimal value is computed by
//! shifting the written number's exponent (`"2.5ms"` reads as `2.5e-3`), so it is the same
//! double as the number written out.

use serde_json::{json, Map, Value};

use crate::error::ConfigError;

/// The keyword some unit-suffixed fields take instead of a quantity (`AUTO_FIELDS`).
const AUTO: &str = "auto";

/// The unit-suffixed fields that also take `"auto"`, by their last path segment.
const AUTO_FIELDS: &[&str] = &["headroom_bytes"];

fn takes_auto(path: &str) -> bool {
    let field = path.rsplit('.').next().unwrap_or(path);
    AUTO_FIELDS.contains(&field)
}

/// What a field's name says it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Quantity {
    Rate,
    Time,
    Bytes,
}

/// How a unit scales the number written before it.
#[derive(Clone, Copy)]
enum Scale {
    /// Times 10^n, applied to the decimal exponent (exact as the written number is).
    Decimal(i32),
    /// Times 2^n.
    Binary(i32),
}

use Scale::{Binary, Decimal};

const RATE_UNITS: &[(&str, Scale)] = &[
    ("bps", Decimal(0)),
    ("b/s", Decimal(0)),
    ("Kbps", Decimal(3)),
    ("kbps", Decimal(3)),
    ("Kb/s", Decimal(3)),
    ("kb/s", Decimal(3)),
    ("K", Decimal(3)),
    ("k", Decimal(3)),
    ("Mbps", Decimal(6)),
    ("Mb/s", Decimal(6)),
    ("M", Decimal(6)),
    ("Gbps", Decimal(9)),
    ("Gb/s", Decimal(9)),
    ("G", Decimal(9)),
    ("Tbps", Decimal(12)),
    ("Tb/s", Decimal(12)),
    ("T", Decimal(12)),
];

const TIME_UNITS: &[(&str, Scale)] = &[
    ("s", Decimal(0)),
    ("ms", Decimal(-3)),
    ("us", Decimal(-6)),
    ("µs", Decimal(-6)), // the micro sign, U+00B5
    ("μs", Decimal(-6)), // the Greek small letter mu, U+03BC
    ("ns", Decimal(-9)),
    ("ps", Decimal(-12)),
];

const BYTE_UNITS: &[(&str, Scale)] = &[
    ("B", Decimal(0)),
    ("KB", Decimal(3)),
    ("kB", Decimal(3)),
    ("MB", Decimal(6)),
    ("GB", Decimal(9)),
    ("KiB", Binary(10)),
    ("MiB", Binary(20)),
    ("GiB", Binary(30)),
];

/// The number before the unit, as the pattern's `NUMBER` has it: `100`, `2.5`, `.5`, `1e3`.
const NUMBER_PATTERN: &str = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?";

impl Quantity {
    /// The quantity a field named `key` holds, from its unit suffix.
    pub(crate) fn of_field(key: &str) -> Option<Quantity> {
        if key.ends_with("_bps") {
            Some(Quantity::Rate)
        } else if key.ends_with("_s") {
            Some(Quantity::Time)
        } else if key.ends_with("_bytes") || key == "bytes" {
            Some(Quantity::Bytes)
        } else {
            None
        }
    }

    fn units(self) -> &'static [(&'static str, Scale)] {
        match self {
            Quantity::Rate => RATE_UNITS,
            Quantity::Time => TIME_UNITS,
            Quantity::Bytes => BYTE_UNITS,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Quantity::Rate => "a rate in bits per second",
            Quantity::Time => "a time in seconds",
            Quantity::Bytes => "a byte count",
        }
    }

    fn examples(self) -> &'static str {
        match self {
            Quantity::Rate => "100e9, \"100Gbps\", \"100G\", \"40Mb/s\"",
            Quantity::Time => "2e-6, \"2us\", \"2.5ms\", \"100ns\"",
            Quantity::Bytes => "65536, \"64KiB\", \"64KB\", \"1.5MiB\"",
        }
    }

    /// The accepted forms, for an error message.
    fn accepted(self) -> String {
        let units: Vec<&str> = self.units().iter().map(|(u, _)| *u).collect();
        format!(
            "write a number or a string with a unit, e.g. {} (units: {})",
            self.examples(),
            units.join(", ")
        )
    }

    /// The JSON Schema pattern of the string form: the number, optional spaces, a unit.
    pub(crate) fn pattern(self) -> String {
        // No unit holds a character a regular expression treats specially.
        let units: Vec<&str> = self.units().iter().map(|(u, _)| *u).collect();
        format!("^{NUMBER_PATTERN} *({})$", units.join("|"))
    }

    /// Parses `"100Gbps"`, `"2.5 ms"`, `"1.5MiB"` into the base unit (b/s, s, bytes).
    pub(crate) fn parse(self, text: &str) -> Option<f64> {
        let (mantissa, exponent, rest) = split_number(text)?;
        let unit = rest.trim_start_matches(' ');
        let (_, scale) = self.units().iter().find(|(u, _)| *u == unit)?;
        match *scale {
            Decimal(n) => format!("{mantissa}e{}", exponent.checked_add(n)?)
                .parse()
                .ok(),
            Binary(n) => {
                let v: f64 = format!("{mantissa}e{exponent}").parse().ok()?;
                Some(v * 2f64.powi(n))
            }
        }
    }
}

/// Splits `[+-]digits[.digits][e[+-]digits]` off the front of `text`: (mantissa text, decimal
/// exponent, the rest). None if `text` does not start with such a number.
fn split_number(text: &str) -> Option<(&str, i32, &str)> {
    let bytes = text.as_bytes();
    let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let digits = |from: usize| {
        from + bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let int_end = digits(i);
    let mut end = int_end;
    let mut frac_digits = 0;
    if bytes.get(end) == Some(&b'.') {
        let frac_end = digits(end + 1);
        frac_digits = frac_end - end - 1;
        end = frac_end;
    }
    if int_end == i && frac_digits == 0 {
        return None;
    }
    let mantissa = &text[..end];
    i = end;
    let mut exponent = 0;
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
        let exp_end = digits(i + 1 + sign);
        if exp_end == i + 1 + sign {
            return None;
        }
        exponent = text[i + 1..exp_end].parse().ok()?;
        i = exp_end;
    }
    Some((mantissa, exponent, &text[i..]))
}

/// Replaces every unit string under a unit-suffixed key of `table` (nested tables and arrays
/// included) by its number: an integer when it is whole (so integer fields take `"1.5KB"`), a
/// float otherwise. A string that does not parse is an error naming the field's path and the
/// accepted forms.
pub(crate) fn resolve_units(table: &mut toml::Table) -> Result<(), ConfigError> {
    resolve_in_table(table, "")
}

fn resolve_in_table(table: &mut toml::Table, path: &str) -> Result<(), ConfigError> {
    for (key, value) in table.iter_mut() {
        let here = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        resolve_value(value, Quantity::of_field(key), &here)?;
    }
    Ok(())
}

fn resolve_value(
    value: &mut toml::Value,
    quantity: Option<Quantity>,
    path: &str,
) -> Result<(), ConfigError> {
    match value {
        toml::Value::Table(t) => resolve_in_table(t, path),
        toml::Value::Array(items) => items
            .iter_mut()
            .enumerate()
            .try_for_each(|(i, item)| resolve_value(item, quantity, &format!("{path}[{i}]"))),
        toml::Value::String(text) => {
            let Some(q) = quantity else { return Ok(()) };
            let takes_auto = takes_auto(path);
            if takes_auto && text == AUTO {
                return Ok(()); // a keyword, not a quantity: the field's type reads it
            }
            let number = q.parse(text).ok_or_else(|| {
                let or_auto = if takes_auto { ", or \"auto\"" } else { "" };
                ConfigError::field(
                    path,
                    format!("{text:?} is not {}: {}{or_auto}", q.noun(), q.accepted()),
                )
            })?;
            *value = as_toml_number(number);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// serde's "invalid type: string \"50%\", expected f64" for a field without a unit suffix (a
/// suffixed one never gets there), with the fix: a number is written without quotes.
pub(crate) fn number_hint(message: String) -> String {
    let numeric = ["f64", "u8", "u16", "u32", "u64", "usize", "i64"];
    let is_string_for_number = message.starts_with("invalid type: string")
        && numeric
            .iter()
            .any(|t| message.ends_with(&format!("expected {t}")));
    if is_string_for_number {
        format!("{message} (write the number without quotes; only fields named *_bps, *_s or *_bytes take a unit string such as \"100Gbps\")")
    } else {
        message
    }
}

fn as_toml_number(v: f64) -> toml::Value {
    // Whole values within f64's exact integers stay integers, which both integer and float
    // fields accept (a float field reads the same double).
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if v.fract() == 0.0 && v.abs() <= EXACT {
        toml::Value::Integer(v as i64)
    } else {
        toml::Value::Float(v)
    }
}

/// Lets every unit-suffixed numeric property of a JSON Schema also be a unit string: its
/// schema becomes `anyOf: [the number's schema, {type: string, pattern}]` (arrays of numbers
/// get it per item).
pub(crate) fn allow_unit_strings(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                for (name, prop) in props.iter_mut() {
                    if let Some(q) = Quantity::of_field(name) {
                        widen_property(prop, q);
                    }
                }
            }
            map.values_mut().for_each(allow_unit_strings);
        }
        Value::Array(items) => items.iter_mut().for_each(allow_unit_strings),
        _ => {}
    }
}

fn is_numeric(schema: &Map<String, Value>) -> bool {
    let numeric = |t: &Value| matches!(t.as_str(), Some("number" | "integer"));
    match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(numeric),
        Some(t) => numeric(t),
        None => false,
    }
}

fn is_array(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "array"),
        Some(t) => t == "array",
        None => false,
    }
}

fn widen_property(prop: &mut Value, q: Quantity) {
    let Value::Object(map) = prop else { return };
    if is_array(map) {
        if let Some(items) = map.get_mut("items") {
            widen_number(items, q);
        }
    } else {
        widen_number(prop, q);
    }
}

fn widen_number(schema: &mut Value, q: Quantity) {
    let Value::Object(map) = schema else { return };
    let string = json!({ "type": "string", "pattern": q.pattern() });
    if let Some(Value::Array(forms)) = map.get_mut("anyOf") {
        // A number or a keyword (`headroom_bytes`): the unit string is one form more.
        let numeric = |f: &Value| f.as_object().is_some_and(is_numeric);
        if forms.iter().any(numeric) {
            forms.push(string);
        }
        return;
    }
    if !is_numeric(map) {
        return;
    }
    let mut number = std::mem::take(map);
    // The annotations stay on the property, where editors look for them.
    for key in ["description", "default"] {
        if let Some(v) = number.remove(key) {
            map.insert(key.into(), v);
        }
    }
    map.insert("anyOf".into(), json!([Value::Object(number), string]));
}

#[cfg(test)]
mod tests;

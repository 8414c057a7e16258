//! Naming many hosts at once in a traffic entry: `hosts = "all"`, or a part of a generated
//! topology, `hosts = { pod = 1 }`, `{ pod = 1, rack = 3 }`, `{ leaf = 2 }` (and the same
//! tables as `dst`). A selection is replaced by the list of names it stands for when the
//! scenario is read (`Scenario::expand_topology`), so the resolved scenario lists hosts by name
//! and the rest of the crate sees names only.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::topology::Layout;
use super::{DstSpec, Scenario};
use crate::error::ConfigError;

/// `hosts = "all"`.
pub(crate) const ALL: &str = "all";

/// The sending hosts of a traffic entry: names, or a selection not yet replaced by names.
#[derive(Clone, Debug, PartialEq)]
pub enum HostSet {
    Names(Vec<String>),
    /// Every host of the scenario.
    All,
    /// The hosts of a pod, a rack or a leaf of the `[topology]`.
    Part(HostPart),
}

/// A part of a generated topology: `{ pod = P }`, `{ pod = P, rack = R }` (fat_tree: rack =
/// edge switch R of pod P; clos3: rack R of pod P) or `{ leaf = L }` (leaf_spine). Indices
/// count from 0.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HostPart {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<u32>,
}

impl Default for HostSet {
    fn default() -> Self {
        HostSet::Names(Vec::new())
    }
}

impl HostSet {
    /// No host named (and no selection): the field was left out.
    pub fn is_empty(&self) -> bool {
        matches!(self, HostSet::Names(v) if v.is_empty())
    }
}

/// The names; empty for a selection, which `expand_topology` replaces before anything reads
/// the hosts.
impl std::ops::Deref for HostSet {
    type Target = [String];
    fn deref(&self) -> &[String] {
        match self {
            HostSet::Names(v) => v,
            HostSet::All | HostSet::Part(_) => &[],
        }
    }
}

impl<'a> IntoIterator for &'a HostSet {
    type Item = &'a String;
    type IntoIter = std::slice::Iter<'a, String>;
    fn into_iter(self) -> Self::IntoIter {
        (**self).iter()
    }
}

impl From<Vec<String>> for HostSet {
    fn from(names: Vec<String>) -> Self {
        HostSet::Names(names)
    }
}

impl Serialize for HostSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HostSet::Names(v) => v.serialize(s),
            HostSet::All => s.serialize_str(ALL),
            HostSet::Part(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for HostSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(HostSetVisitor)
    }
}

struct HostSetVisitor;

impl<'de> Visitor<'de> for HostSetVisitor {
    type Value = HostSet;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of host names, \"all\", or a table { pod, rack } or { leaf }")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<HostSet, E> {
        if v == ALL {
            Ok(HostSet::All)
        } else {
            Err(E::custom(format!(
                "expected a list of host names, \"all\", or a table {{ pod, rack }} or \
                 {{ leaf }} (got the string '{v}'; one host is [\"{v}\"])"
            )))
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<HostSet, A::Error> {
        Vec::<String>::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(HostSet::Names)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<HostSet, A::Error> {
        HostPart::deserialize(de::value::MapAccessDeserializer::new(map)).map(HostSet::Part)
    }
}

/// The schema of the forms a file may use (names, "all", a part).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum HostSetForm {
    /// Host names.
    Names(Vec<String>),
    /// Every host.
    All(AllHosts),
    /// A pod, a rack or a leaf of the `[topology]`.
    Part(HostPart),
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum AllHosts {
    All,
}

impl JsonSchema for HostSet {
    fn schema_name() -> Cow<'static, str> {
        "HostSet".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        HostSetForm::json_schema(generator)
    }
}

/// Replaces every traffic entry's selection by the names it stands for: `"all"` by every host,
/// a part by the hosts of that pod, rack or leaf of `layout` (the generated topology; a part
/// without one is an error naming the field).
pub(super) fn expand_selections(
    sc: &mut Scenario,
    layout: Option<&Layout>,
) -> Result<(), ConfigError> {
    let names = |range: std::ops::Range<usize>| -> Vec<String> {
        sc.hosts[range].iter().map(|h| h.name.clone()).collect()
    };
    let part_names = |part: &HostPart, path: String| -> Result<Vec<String>, ConfigError> {
        match layout {
            Some(l) => Ok(names(l.range(part, &path)?)),
            None => Err(ConfigError::field(
                path,
                "a selection by pod, rack or leaf needs a [topology] (list the hosts by name)",
            )),
        }
    };
    let mut expanded = Vec::new();
    for (i, t) in sc.traffic.iter().enumerate() {
        let hosts = match &t.hosts {
            HostSet::Names(_) => None,
            HostSet::All => Some(names(0..sc.hosts.len())),
            HostSet::Part(p) => Some(part_names(p, format!("traffic[{i}].hosts"))?),
        };
        let dst = match &t.dst {
            Some(DstSpec::Part(p)) => Some(part_names(p, format!("traffic[{i}].dst"))?),
            _ => None,
        };
        expanded.push((hosts, dst));
    }
    for (t, (hosts, dst)) in sc.traffic.iter_mut().zip(expanded) {
        if let Some(h) = hosts {
            t.hosts = HostSet::Names(h);
        }
        if let (Some(l), Some(layout)) = (t.locality.as_mut(), layout) {
            l.fill_from(layout);
        }
        if let Some(d) = dst {
            t.dst = Some(DstSpec::Many(d));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Serialize)]
    struct T {
        hosts: HostSet,
    }

    fn parse(text: &str) -> Result<HostSet, String> {
        toml::from_str::<T>(text)
            .map(|t| t.hosts)
            .map_err(|e| e.message().to_string())
    }

    #[test]
    fn the_three_forms_read_and_write_back() {
        assert_eq!(
            parse(r#"hosts = ["a", "b"]"#),
            Ok(HostSet::Names(vec!["a".into(), "b".into()]))
        );
        assert_eq!(parse(r#"hosts = "all""#), Ok(HostSet::All));
        let part = HostPart {
            pod: Some(1),
            rack: Some(2),
            leaf: None,
        };
        assert_eq!(
            parse("hosts = { pod = 1, rack = 2 }"),
            Ok(HostSet::Part(part.clone()))
        );
        for set in [HostSet::All, HostSet::Part(part)] {
            let text = toml::to_string(&T { hosts: set.clone() }).expect("serialises");
            assert_eq!(parse(&text), Ok(set));
        }
    }

    #[test]
    fn other_forms_are_clear_errors() {
        let e = parse(r#"hosts = "a""#).unwrap_err();
        assert!(e.contains("one host is [\"a\"]"), "{e}");
        let e = parse("hosts = { pod = 1, row = 2 }").unwrap_err();
        assert!(e.contains("row"), "{e}");
        let e = parse("hosts = 3").unwrap_err();
        assert!(e.contains("a list of host names"), "{e}");
    }

    #[test]
    fn a_selection_reads_as_no_names_until_expanded() {
        assert!(!HostSet::All.is_empty() && HostSet::All.iter().next().is_none());
        assert!(HostSet::default().is_empty());
    }
}

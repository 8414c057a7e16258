//! The scenario's side of the registry: `[congestion]`'s `scheme` names ([`SchemeName`]) and
//! the walk over the registered schemes that prepares, fills, checks and resolves their tables.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, EnumAccess, Unexpected, VariantAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::json;

use super::registry::Entry;
use super::{CongestionSpec, Named, Scheme, ENTRIES};
use crate::error::ConfigError;

/// The name of "no scheme".
pub(crate) const NONE: &str = "none";

/// `[congestion] scheme = "..."`: "none" or a name a registered scheme answers to
/// ([`CcScheme::NAMES`](super::CcScheme::NAMES)). Reads, writes and has the JSON Schema of the
/// plain enum of names it replaces (its errors list the names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SchemeName(&'static str);

impl Default for SchemeName {
    fn default() -> Self {
        SchemeName(NONE)
    }
}

impl SchemeName {
    /// The name as written in a scenario.
    pub(crate) fn as_str(&self) -> &'static str {
        self.0
    }

    /// No scheme runs.
    pub(crate) fn is_none(&self) -> bool {
        self.0 == NONE
    }

    /// The name, if "none" or a registered scheme's.
    pub(crate) fn new(name: &str) -> Option<SchemeName> {
        all_names()
            .iter()
            .find(|n| **n == name)
            .map(|n| SchemeName(n))
    }

    /// The registered scheme that answers to this name (None for "none").
    fn owner(&self) -> Option<&'static Entry> {
        ENTRIES
            .iter()
            .find(|e| e.names.iter().any(|n| n.name == self.0))
    }
}

/// Every name with its documentation: "none", then each scheme's, in registry order.
fn named() -> impl Iterator<Item = Named> {
    let none = Named {
        name: NONE,
        doc: "",
    };
    std::iter::once(none).chain(ENTRIES.iter().flat_map(|e| e.names.iter().copied()))
}

/// Every name, in the schema's order (what an unknown name's error lists).
pub(super) fn all_names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| named().map(|n| n.name).collect())
}

impl Serialize for SchemeName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let index = all_names().iter().position(|n| *n == self.0).unwrap_or(0);
        serializer.serialize_unit_variant("Scheme", index as u32, self.0)
    }
}

/// Reads a name the way serde's derive reads a unit-variant enum, so every error (an unknown
/// name, a number, a table) reads as it did when the names were an enum.
impl<'de> Deserialize<'de> for SchemeName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_enum("Scheme", all_names(), NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = SchemeName;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("enum Scheme")
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<SchemeName, A::Error> {
        let (name, variant) = data.variant::<NameField>()?;
        variant.unit_variant()?;
        Ok(name.0)
    }
}

/// A name as serde reads an enum's variant identifier.
struct NameField(SchemeName);

impl<'de> Deserialize<'de> for NameField {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(NameFieldVisitor)
    }
}

struct NameFieldVisitor;

impl<'de> Visitor<'de> for NameFieldVisitor {
    type Value = NameField;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("variant identifier")
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<NameField, E> {
        let names = all_names();
        match names.get(value as usize) {
            Some(name) => Ok(NameField(SchemeName(name))),
            None => Err(E::invalid_value(
                Unexpected::Unsigned(value),
                &format!("variant index 0 <= i < {}", names.len()).as_str(),
            )),
        }
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<NameField, E> {
        match SchemeName::new(value) {
            Some(name) => Ok(NameField(name)),
            None => Err(E::unknown_variant(value, all_names())),
        }
    }

    fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<NameField, E> {
        let value = String::from_utf8_lossy(value);
        self.visit_str(&value)
    }
}

/// The schema schemars derives for a unit-variant enum: the undocumented names in one `enum`,
/// then each documented one as a `const` with its description.
impl JsonSchema for SchemeName {
    fn schema_name() -> Cow<'static, str> {
        "Scheme".into()
    }

    fn schema_id() -> Cow<'static, str> {
        concat!(module_path!(), "::SchemeName").into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let plain: Vec<&str> = named()
            .filter(|n| n.doc.is_empty())
            .map(|n| n.name)
            .collect();
        let mut one_of = vec![json!({"type": "string", "enum": plain})];
        for n in named().filter(|n| !n.doc.is_empty()) {
            // Key by key, in the order schemars writes them.
            let mut variant = serde_json::Map::new();
            variant.insert("type".into(), "string".into());
            variant.insert("const".into(), n.name.into());
            variant.insert("description".into(), n.doc.into());
            one_of.push(variant.into());
        }
        json_schema!({ "oneOf": one_of })
    }
}

impl CongestionSpec {
    /// Before the scenario is parsed: each scheme lays its tables over the defaults a name
    /// stands for (`[congestion.bcn]` over ECM's under `scheme = "ecm"`, DCQCN's named
    /// parameter set), so a partial table keeps them.
    pub(crate) fn prepare(root: &mut toml::Table) -> Result<(), ConfigError> {
        let Some(toml::Value::Table(congestion)) = root.get_mut("congestion") else {
            return Ok(());
        };
        let selected = congestion
            .get("scheme")
            .and_then(|v| v.as_str())
            .unwrap_or(NONE)
            .to_string();
        for entry in ENTRIES {
            (entry.prepare)(congestion, &selected)?;
        }
        Ok(())
    }

    /// The selected scheme's tables are filled with their defaults, so the resolved scenario
    /// shows every constant that ran.
    pub(crate) fn fill_defaults(&mut self) {
        let name = self.scheme;
        if let Some(entry) = name.owner() {
            (entry.fill_defaults)(self, name.as_str());
        }
    }

    /// Every table given is checked, whichever scheme runs; errors name the field.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        ENTRIES.iter().try_for_each(|entry| (entry.validate)(self))
    }

    /// The selected scheme as it runs.
    pub(crate) fn resolve(&self) -> Scheme {
        match self.scheme.owner() {
            Some(entry) => (entry.resolve)(self, self.scheme.as_str()),
            None => Scheme::None,
        }
    }
}

/// `[congestion.<table>]` laid over `defaults`: the user's keys replace the defaults' (a scheme's
/// [`prepare`](super::CcScheme::prepare)). A `<table>` that is not a table is replaced.
pub(crate) fn lay_table_over<P: Serialize>(
    congestion: &mut toml::Table,
    table: &str,
    defaults: &P,
) {
    let toml::Value::Table(mut merged) =
        toml::Value::try_from(defaults).expect("parameters serialise")
    else {
        unreachable!("a struct serialises to a table");
    };
    if let Some(toml::Value::Table(user)) = congestion.remove(table) {
        merged.extend(user);
    }
    congestion.insert(table.into(), toml::Value::Table(merged));
}

/// A scheme's `parameter_set = "..."` (its [`prepare`](super::CcScheme::prepare)): when
/// `[congestion.<table>]` names a set, the table's other keys are laid over the set's values
/// (`of_set`), so a partial table keeps the set's values for what it leaves out. An unknown
/// name is an error at `congestion.<table>.parameter_set`.
pub(crate) fn lay_named_set<S: serde::de::DeserializeOwned, P: Serialize>(
    congestion: &mut toml::Table,
    table: &str,
    of_set: impl FnOnce(S) -> P,
) -> Result<(), ConfigError> {
    let Some(toml::Value::Table(user)) = congestion.get(table) else {
        return Ok(());
    };
    let Some(name) = user.get("parameter_set") else {
        return Ok(());
    };
    let set: S = name.clone().try_into().map_err(|e: toml::de::Error| {
        let path = format!("congestion.{table}.parameter_set");
        ConfigError::field(path, e.message().to_string())
    })?;
    lay_table_over(congestion, table, &of_set(set));
    Ok(())
}

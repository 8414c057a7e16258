//! `summary.control_frames`: one counter per control kind, the link's and the registered
//! schemes' (`stats::control_kinds`, named in each scheme's file), then the load. It reads,
//! writes and has the schema of the struct with one field per kind it was before the kinds
//! came from the registry.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::cc::Named;
use crate::stats::{control_kinds, Counters};

/// Control frames sent, by kind, and their load.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ControlFrames {
    /// Frames sent of each kind, in the summary's order (`stats::control_kinds`).
    pub(crate) sent: Vec<(&'static str, u64)>,
    /// Control frames queued with the data (scheme messages riding the data queue, transport
    /// ACKs/NACKs) that a full buffer turned away or a lossy link lost.
    pub(crate) dropped: u64,
    /// Bytes of all control frames.
    pub(crate) bytes: u64,
    /// `bytes` * 8 / sim_time_s.
    pub(crate) bandwidth_bps: f64,
}

/// The fields after the kinds, with their descriptions.
const LOAD: [Named; 3] = [
    Named {
        name: "dropped",
        doc: "Control frames queued with the data (scheme messages riding the data queue, \
              transport ACKs/NACKs) that a full buffer turned away or a lossy link lost.",
    },
    Named {
        name: "bytes",
        doc: "Bytes of all control frames.",
    },
    Named {
        name: "bandwidth_bps",
        doc: "`bytes` * 8 / sim_time_s.",
    },
];

impl ControlFrames {
    pub(crate) fn new(c: &Counters, sim_time_s: f64) -> ControlFrames {
        ControlFrames {
            sent: control_kinds()
                .into_iter()
                .map(|(kind, named)| (named.name, c.control_sent[kind.index()]))
                .collect(),
            dropped: c.control_dropped,
            bytes: c.control_bytes,
            bandwidth_bps: c.control_bytes as f64 * 8.0 / sim_time_s,
        }
    }
}

/// Every field's name: the kinds', then the load's.
fn field_names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let kinds = control_kinds().into_iter().map(|(_, n)| n.name);
        kinds.chain(LOAD.iter().map(|n| n.name)).collect()
    })
}

impl Serialize for ControlFrames {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ControlFrames", self.sent.len() + LOAD.len())?;
        for (name, count) in &self.sent {
            s.serialize_field(name, count)?;
        }
        s.serialize_field("dropped", &self.dropped)?;
        s.serialize_field("bytes", &self.bytes)?;
        s.serialize_field("bandwidth_bps", &self.bandwidth_bps)?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for ControlFrames {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("ControlFrames", field_names(), FieldsVisitor)
    }
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = ControlFrames;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct ControlFrames")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ControlFrames, A::Error> {
        let names = field_names();
        let mut counts: Vec<Option<u64>> = vec![None; names.len() - 1];
        let mut bandwidth_bps = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let Some(i) = names.iter().position(|n| *n == key) else {
                return Err(de::Error::unknown_field(&key, names));
            };
            if names[i] == "bandwidth_bps" {
                bandwidth_bps = Some(map.next_value()?);
            } else {
                counts[i] = Some(map.next_value()?);
            }
        }
        let count = |i: usize| counts[i].ok_or_else(|| de::Error::missing_field(names[i]));
        let n_kinds = names.len() - LOAD.len();
        let sent = (0..n_kinds)
            .map(|i| count(i).map(|v| (names[i], v)))
            .collect::<Result<_, _>>()?;
        Ok(ControlFrames {
            sent,
            dropped: count(n_kinds)?,
            bytes: count(n_kinds + 1)?,
            bandwidth_bps: bandwidth_bps
                .ok_or_else(|| de::Error::missing_field("bandwidth_bps"))?,
        })
    }
}

/// The schema schemars derives for the struct: every field required, none other allowed.
impl JsonSchema for ControlFrames {
    fn schema_name() -> Cow<'static, str> {
        "ControlFrames".into()
    }

    fn schema_id() -> Cow<'static, str> {
        concat!(module_path!(), "::ControlFrames").into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let kinds: Vec<_> = control_kinds()
            .into_iter()
            .map(|(_, n)| (n, generator.subschema_for::<u64>()))
            .collect();
        let load = [
            (LOAD[0], generator.subschema_for::<u64>()),
            (LOAD[1], generator.subschema_for::<u64>()),
            (LOAD[2], generator.subschema_for::<f64>()),
        ];
        let mut properties = serde_json::Map::new();
        for (named, mut schema) in kinds.into_iter().chain(load) {
            if !named.doc.is_empty() {
                schema.insert("description".into(), named.doc.into());
            }
            properties.insert(named.name.into(), schema.into());
        }
        json_schema!({
            "type": "object",
            "additionalProperties": false,
            "properties": properties,
            "required": field_names(),
            "description": "Control frames sent, by kind, and their load.",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// summary.json's control frames keep the keys, order and values they had as a struct.
    #[test]
    fn keys_in_the_order_summary_json_has_always_had() {
        let mut c = Counters::default();
        for (i, v) in c.control_sent.iter_mut().enumerate() {
            *v = 10 + i as u64;
        }
        c.control_bytes = 6400;
        let frames = ControlFrames::new(&c, 0.5);
        let json = serde_json::to_value(&frames).expect("serialises");
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let before = [
            "pause_xoff",
            "pause_xon",
            "qcn_cnm",
            "bcn_negative",
            "bcn_positive",
            "bcn_max",
            "bcn_00",
            "path_probe",
            "dcqcn_cnp",
            "pfc_xoff",
            "pfc_xon",
            "e2cm_probe",
        ];
        assert_eq!(&keys[..before.len()], before);
        assert_eq!(
            &keys[keys.len() - 3..],
            ["dropped", "bytes", "bandwidth_bps"]
        );
        assert_eq!(json["bandwidth_bps"], serde_json::json!(102_400.0));
        let back: ControlFrames = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, frames);
        let mut extra = serde_json::to_value(&frames).unwrap();
        extra["nope"] = 1.into();
        assert!(serde_json::from_value::<ControlFrames>(extra).is_err());
    }
}

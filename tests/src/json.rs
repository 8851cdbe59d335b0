//! Readable JSON for golden files: like pretty printing, but an object or array that fits in
//! one line of [`WIDTH`] characters stays on one line, and fields keep their serialization order
//! (a `serde_json::Value` would sort them).

use serde::Serialize;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The widest a one-line object or array may be, indentation included.
pub const WIDTH: usize = 110;

/// A JSON value that remembers the order of object keys.
#[derive(Debug, Clone)]
enum Ordered {
    Scalar(serde_json::Value),
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_string<E>(self, v: String) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(serde_json::Value::Null))
            }
            fn visit_none<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(serde_json::Value::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut fields = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Ordered>()? {
                    fields.push((k, v));
                }
                Ok(Ordered::Object(fields))
            }
        }
        d.deserialize_any(V)
    }
}

impl Ordered {
    fn compact(&self) -> String {
        match self {
            Ordered::Scalar(v) => v.to_string(),
            Ordered::Array(items) => format!("[{}]", items.iter().map(Ordered::compact).collect::<Vec<_>>().join(", ")),
            Ordered::Object(fields) if fields.is_empty() => "{}".into(),
            Ordered::Object(fields) => format!(
                "{{ {} }}",
                fields
                    .iter()
                    .map(|(k, v)| format!("{}: {}", serde_json::Value::from(k.as_str()), v.compact()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Writes the value at `indent`, the first line already started `used` characters in.
    fn render(&self, indent: usize, used: usize, out: &mut String) {
        let one_line = self.compact();
        if matches!(self, Ordered::Scalar(_)) || used + one_line.len() <= WIDTH {
            out.push_str(&one_line);
            return;
        }
        let pad = " ".repeat(indent + 2);
        match self {
            Ordered::Scalar(_) => unreachable!("scalars are written on one line"),
            Ordered::Array(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&pad);
                    item.render(indent + 2, indent + 2, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&" ".repeat(indent));
                out.push(']');
            }
            Ordered::Object(fields) => {
                out.push_str("{\n");
                for (i, (k, v)) in fields.iter().enumerate() {
                    let key = format!("{}: ", serde_json::Value::from(k.as_str()));
                    out.push_str(&pad);
                    out.push_str(&key);
                    v.render(indent + 2, indent + 2 + key.len(), out);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                out.push_str(&" ".repeat(indent));
                out.push('}');
            }
        }
    }
}

/// `value` as readable JSON, ending with a newline.
pub fn pretty<T: Serialize>(value: &T) -> String {
    let text = serde_json::to_string(value).expect("golden values serialize");
    let ordered: Ordered = serde_json::from_str(&text).expect("serde_json reads its own output");
    let mut out = String::new();
    ordered.render(0, 0, &mut out);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_fits_short_values_on_one_line() {
        #[derive(Serialize)]
        struct S {
            zeta: u32,
            alpha: Vec<u32>,
        }
        assert_eq!(pretty(&S { zeta: 1, alpha: vec![2, 3] }), "{ \"zeta\": 1, \"alpha\": [2, 3] }\n");
        let long = S { zeta: 1, alpha: (0..60).collect() };
        let text = pretty(&long);
        assert!(text.starts_with("{\n  \"zeta\": 1,\n  \"alpha\": [\n    0,\n"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, serde_json::to_value(&long).unwrap());
    }
}

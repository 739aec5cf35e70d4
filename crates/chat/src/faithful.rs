//! Re-serializing a parsed object exactly as it came in.
//!
//! Typed fields forget three things about the JSON they were read from: which optional
//! keys were present but `null` (`"name": null` and a missing `name` both become `None`),
//! the order of the keys, and whether a number was spelled as an integer (`"temperature": 1`
//! read into an `f64` comes back as `1.0`). Chat templates see what we serialize, and tests
//! compare it with what the client sent, so each object type keeps a [`Layout`] of its input
//! and [`faithful!`] wires it into that type's serde implementations:
//!
//! * reading: `null` entries are taken out before the typed fields are filled, so a `null`
//!   behaves like an absent key everywhere, and the layout remembers them;
//! * writing: keys come out in their input order (new keys after them), the remembered
//!   `null`s come back unless a value has been set since, and a float that equals the
//!   integer it was read from is written as that integer again.

use serde_json::{Map, Number, Value};

/// How a JSON object looked when it was parsed: its keys in order, which were `null`, and how
/// its numbers were spelled.
///
/// A layout takes no part in equality: two messages with the same fields are equal however
/// their JSON was laid out. Values built in code start with an empty layout.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    keys: Vec<(String, Spelling)>,
}

/// What a key's value looked like in the input, where that matters for writing it back.
#[derive(Debug, Clone)]
enum Spelling {
    Null,
    Number(Number),
    Other,
}

impl PartialEq for Layout {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Splits a parsed object into the entries typed fields should see (no `null`s) and its layout.
pub(crate) fn split(object: Map<String, Value>) -> (Map<String, Value>, Layout) {
    let mut keys = Vec::with_capacity(object.len());
    let mut entries = Map::new();
    for (key, value) in object {
        let spelling = match &value {
            Value::Null => Spelling::Null,
            Value::Number(number) => Spelling::Number(number.clone()),
            _ => Spelling::Other,
        };
        keys.push((key.clone(), spelling));
        if !value.is_null() {
            entries.insert(key, value);
        }
    }
    (entries, Layout { keys })
}

/// Lays a freshly serialized object out the way its input was: see the module docs.
pub(crate) fn restore(serialized: Value, layout: &Layout) -> Value {
    let Value::Object(mut fresh) = serialized else {
        return serialized;
    };
    if layout.keys.is_empty() {
        return Value::Object(fresh);
    }
    let mut object = Map::new();
    for (key, spelling) in &layout.keys {
        match (fresh.remove(key), spelling) {
            (Some(value), _) => {
                object.insert(key.clone(), respell(value, spelling));
            }
            (None, Spelling::Null) => {
                object.insert(key.clone(), Value::Null);
            }
            (None, _) => {}
        }
    }
    object.extend(fresh);
    Value::Object(object)
}

/// Gives back the input's spelling of a number whose value has not changed (`1` not `1.0`).
fn respell(value: Value, spelling: &Spelling) -> Value {
    match (&value, spelling) {
        (Value::Number(now), Spelling::Number(then))
            if now != then && now.as_f64() == then.as_f64() =>
        {
            Value::Number(then.clone())
        }
        _ => value,
    }
}

/// Implements `Serialize` and `Deserialize` for a struct through its derived implementations
/// (generated with `#[serde(remote = "Self")]`) and the [`Layout`] in its `layout` field.
macro_rules! faithful {
    ($ty:ty) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let value = <$ty>::serialize(self, serde_json::value::Serializer)
                    .map_err(serde::ser::Error::custom)?;
                $crate::faithful::restore(value, &self.layout).serialize(serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let object = serde_json::Map::deserialize(deserializer)?;
                let (entries, layout) = $crate::faithful::split(object);
                let mut parsed = <$ty>::deserialize(serde_json::Value::Object(entries))
                    .map_err(serde::de::Error::custom)?;
                parsed.layout = layout;
                Ok(parsed)
            }
        }
    };
}

pub(crate) use faithful;

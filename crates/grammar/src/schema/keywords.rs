//! What JSON Schema's keywords mean to the converter: which only annotate (and are
//! ignored without a word), which constrain and for which types of instance, and the
//! types of value a schema can admit. The warnings about unenforced keywords are decided
//! here, in one place.

use serde_json::{Map, Value};

/// A set of JSON types, as bits. Numbers are split into integers and numbers with a
/// fraction, so that `integer` and `number` relate as they do in JSON Schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Types(u8);

impl Types {
    pub const NONE: Types = Types(0);
    pub const NULL: Types = Types(1);
    pub const BOOLEAN: Types = Types(2);
    pub const OBJECT: Types = Types(4);
    pub const ARRAY: Types = Types(8);
    pub const STRING: Types = Types(16);
    pub const INTEGER: Types = Types(32);
    pub const FRACTION: Types = Types(64);
    pub const NUMBER: Types = Types(32 | 64);
    pub const ALL: Types = Types(127);

    pub fn of_name(name: &str) -> Option<Types> {
        Some(match name {
            "null" => Self::NULL,
            "boolean" => Self::BOOLEAN,
            "object" => Self::OBJECT,
            "array" => Self::ARRAY,
            "string" => Self::STRING,
            "integer" => Self::INTEGER,
            "number" => Self::NUMBER,
            _ => return None,
        })
    }

    /// The type of a JSON value.
    pub fn of_value(value: &Value) -> Types {
        match value {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            Value::Object(_) => Self::OBJECT,
            Value::Array(_) => Self::ARRAY,
            Value::String(_) => Self::STRING,
            Value::Number(n) => {
                let integral =
                    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
                if integral {
                    Self::INTEGER
                } else {
                    Self::FRACTION
                }
            }
        }
    }

    pub fn union(self, other: Types) -> Types {
        Types(self.0 | other.0)
    }

    pub fn intersect(self, other: Types) -> Types {
        Types(self.0 & other.0)
    }

    pub fn minus(self, other: Types) -> Types {
        Types(self.0 & !other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn contains(self, other: Types) -> bool {
        self.0 & other.0 == other.0
    }

    /// The type names that cover the set, as a `type` keyword lists them (`number`
    /// when both kinds of number are in).
    pub fn names(self) -> Vec<&'static str> {
        let mut names = Vec::new();
        for (bits, name) in [
            (Self::NULL, "null"),
            (Self::BOOLEAN, "boolean"),
            (Self::OBJECT, "object"),
            (Self::ARRAY, "array"),
            (Self::STRING, "string"),
        ] {
            if self.contains(bits) {
                names.push(name);
            }
        }
        if self.contains(Self::NUMBER) {
            names.push("number");
        } else if self.contains(Self::INTEGER) {
            names.push("integer");
        } else if self.contains(Self::FRACTION) {
            // Numbers with a fraction only: `number`, minus integers, which the number
            // branch handles.
            names.push("number");
        }
        names
    }
}

/// Keywords that only annotate, or that hold subschemas for others to refer to.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "id",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "example",
    "readOnly",
    "writeOnly",
    "deprecated",
    "definitions",
    "$defs",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "discriminator",
    "xml",
    "externalDocs",
    "nullable",
];

/// Keywords that constrain instances of any type.
pub(super) const GENERIC: &[&str] = &[
    "type",
    "enum",
    "const",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
];

pub(super) const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
];

pub(super) const ARRAY_KEYWORDS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
];

pub(super) const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "format"];

pub(super) const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

/// Formats JSON Schema defines, which a validator may check. Others (`int32`, `url`,
/// …) are unknown to validators, which ignore them, and so constrain nothing.
pub(super) fn is_checked_format(format: &str) -> bool {
    matches!(
        format,
        "date-time"
            | "date"
            | "time"
            | "duration"
            | "email"
            | "idn-email"
            | "hostname"
            | "idn-hostname"
            | "ipv4"
            | "ipv6"
            | "uri"
            | "uri-reference"
            | "iri"
            | "iri-reference"
            | "uuid"
            | "uri-template"
            | "json-pointer"
            | "relative-json-pointer"
            | "regex"
    )
}

/// Whether `key` is an annotation (or an extension, `x-…`) that never constrains.
pub(super) fn is_annotation(key: &str) -> bool {
    ANNOTATIONS.contains(&key) || key.starts_with("x-")
}

/// The types whose instances `key` constrains; `ALL` for generic keywords, `NONE` for
/// annotations and keywords JSON Schema does not know (which validators ignore).
pub(super) fn constrains(key: &str) -> Types {
    if GENERIC.contains(&key) {
        Types::ALL
    } else if OBJECT_KEYWORDS.contains(&key) {
        Types::OBJECT
    } else if ARRAY_KEYWORDS.contains(&key) {
        Types::ARRAY
    } else if STRING_KEYWORDS.contains(&key) {
        Types::STRING
    } else if NUMBER_KEYWORDS.contains(&key) {
        Types::NUMBER
    } else {
        Types::NONE
    }
}

/// The types a schema's own keywords point at, for a schema without `type`: `properties`
/// means an object, `pattern` a string, and so on (as llama.cpp reads them). `ALL` when
/// no keyword points anywhere.
pub(super) fn implied_types(obj: &Map<String, Value>) -> Types {
    let mut types = Types::NONE;
    for key in obj.keys() {
        let t = constrains(key);
        if t != Types::ALL {
            types = types.union(t);
        }
    }
    if types.is_empty() {
        Types::ALL
    } else {
        types
    }
}

/// The types named by a `type` keyword (`ALL` when absent); `None` when malformed.
pub(super) fn declared_types(obj: &Map<String, Value>) -> Option<Types> {
    match obj.get("type") {
        None => Some(Types::ALL),
        Some(Value::String(name)) => Types::of_name(name),
        Some(Value::Array(names)) => names.iter().try_fold(Types::NONE, |acc, n| {
            n.as_str().and_then(Types::of_name).map(|t| acc.union(t))
        }),
        Some(_) => None,
    }
}

/// Whether the schema has a keyword that constrains anything: a schema with none admits
/// every value.
pub(super) fn constrains_anything(obj: &Map<String, Value>) -> bool {
    obj.keys().any(|k| !constrains(k).is_empty())
}

/// Keywords other than `except` that constrain instances of `types`: what a branch that
/// handled only `except` leaves unenforced.
pub(super) fn unhandled<'a>(
    obj: &'a Map<String, Value>,
    types: Types,
    except: &[&str],
) -> Vec<&'a str> {
    obj.iter()
        .filter(|(k, v)| {
            let unknown_format = *k == "format" && !v.as_str().is_some_and(is_checked_format);
            !unknown_format
                && !except.contains(&k.as_str())
                && !constrains(k).intersect(types).is_empty()
        })
        .map(|(k, _)| k.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn type_sets() {
        let obj = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert_eq!(
            declared_types(&obj(json!({"type": ["integer", "null"]}))),
            Some(Types::INTEGER.union(Types::NULL))
        );
        assert_eq!(declared_types(&obj(json!({"type": "kaboom"}))), None);
        assert_eq!(
            implied_types(&obj(json!({"minLength": 1, "title": "x"}))),
            Types::STRING
        );
        assert_eq!(implied_types(&obj(json!({"title": "x"}))), Types::ALL);
        assert_eq!(Types::of_value(&json!(1.0)), Types::INTEGER);
        assert_eq!(Types::NUMBER.names(), vec!["number"]);
        assert_eq!(
            unhandled(
                &obj(json!({"minimum": 1, "maxLength": 2})),
                Types::STRING,
                &[]
            ),
            vec!["maxLength"]
        );
    }
}

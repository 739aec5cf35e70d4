//! `response_format`: free text, any JSON object, or JSON following a schema.
//!
//! The schema is kept as an arbitrary `serde_json::Value`, for the grammar crate to compile
//! as it was sent. llama.cpp's server also accepts `{"type": "json_object", "schema": …}`;
//! that form is kept too, and [`ResponseFormat::schema`] answers for both.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::faithful::{faithful, Layout};

/// The request's `response_format`, tagged by its `"type"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseFormat {
    /// `{"type": "text"}`: no constraint.
    Text {
        /// Keys besides `type`, kept as sent.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// `{"type": "json_object"}`: any JSON object (or, llama.cpp's extension, one following
    /// `schema`).
    JsonObject {
        #[serde(skip_serializing_if = "Option::is_none")]
        schema: Option<Value>,
        /// Keys besides `type` and `schema`, kept as sent.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// `{"type": "json_schema", "json_schema": {"name", "schema", "strict", "description"}}`.
    JsonSchema {
        json_schema: JsonSchemaFormat,
        /// Keys besides `type` and `json_schema`, kept as sent.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
}

/// The `json_schema` object of a JSON-schema response format.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct JsonSchemaFormat {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Keys not listed above, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(JsonSchemaFormat);

impl ResponseFormat {
    /// `{"type": "text"}`.
    pub fn text() -> Self {
        ResponseFormat::Text { extra: Map::new() }
    }

    /// `{"type": "json_object"}`.
    pub fn json_object() -> Self {
        ResponseFormat::JsonObject {
            schema: None,
            extra: Map::new(),
        }
    }

    /// `{"type": "json_schema", "json_schema": {"name": name, "schema": schema}}`.
    pub fn json_schema(name: impl Into<String>, schema: Value) -> Self {
        let json_schema = JsonSchemaFormat {
            name: name.into(),
            schema: Some(schema),
            ..JsonSchemaFormat::default()
        };
        ResponseFormat::JsonSchema {
            json_schema,
            extra: Map::new(),
        }
    }

    /// Whether the answer must be JSON.
    pub fn is_json(&self) -> bool {
        !matches!(self, ResponseFormat::Text { .. })
    }

    /// The schema the answer must follow, if one was given.
    pub fn schema(&self) -> Option<&Value> {
        match self {
            ResponseFormat::Text { .. } => None,
            ResponseFormat::JsonObject { schema, .. } => schema.as_ref(),
            ResponseFormat::JsonSchema { json_schema, .. } => json_schema.schema.as_ref(),
        }
    }
}

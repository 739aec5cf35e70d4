//! Message content: a plain string or a list of typed parts.
//!
//! OpenAI accepts `content` as a string or as an array of parts (`text`, `image_url`,
//! `input_audio`, `file`, `refusal`). Multimodal templates (Gemma, Qwen-VL, seed 004) read the
//! parts themselves, while text-only dialects only want the text, so both shapes are kept as
//! sent and [`Content::text`] gives the text either way. Part types this crate does not know
//! (`video_url`, a template's own `image`) are kept whole as [`ContentPart::Other`]; a known
//! type with the wrong fields is an error, as it is for OpenAI.

use std::borrow::Cow;

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::faithful::{faithful, Layout};
use crate::json;

/// A message's `content`: a string, or an array of parts.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// `"content": "…"`.
    Text(String),
    /// `"content": [{"type": "text", …}, {"type": "image_url", …}]`.
    Parts(Vec<ContentPart>),
}

impl Content {
    /// The text of the content: the string itself, or the text parts in order, joined by a
    /// newline as vLLM and llama.cpp's server join them for templates that take strings
    /// (other parts contribute nothing).
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Content::Text(text) => Cow::Borrowed(text),
            Content::Parts(parts) => {
                let texts: Vec<&str> = parts.iter().filter_map(ContentPart::text).collect();
                Cow::Owned(texts.join("\n"))
            }
        }
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::Text(text.to_owned())
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::Text(text)
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(text) => serializer.serialize_str(text),
            Content::Parts(parts) => parts.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(Content::Text(text)),
            Value::Array(parts) => Vec::<ContentPart>::deserialize(Value::Array(parts))
                .map(Content::Parts)
                .map_err(de::Error::custom),
            other => Err(de::Error::custom(format_args!(
                "content must be a string or an array of content parts, found {}",
                json::kind(&other)
            ))),
        }
    }
}

/// One element of an array `content`, tagged by its `"type"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// `{"type": "text", "text": "…"}`.
    Text {
        text: String,
        /// Keys besides `type` and `text` (such as `cache_control`), kept as sent.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// `{"type": "image_url", "image_url": {"url": "…", "detail": "auto"}}`.
    ImageUrl {
        image_url: ImageUrl,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// `{"type": "input_audio", "input_audio": {"data": "<base64>", "format": "wav"}}`.
    InputAudio {
        input_audio: InputAudio,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// `{"type": "file", "file": {"file_id" | "file_data", "filename"}}`.
    File {
        file: FileRef,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// `{"type": "refusal", "refusal": "…"}`, in assistant messages.
    Refusal {
        refusal: String,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// A part of a type not listed above, kept whole (its `type` included).
    #[serde(skip)]
    Other(Map<String, Value>),
}

/// The `type` values with a variant of their own.
const KNOWN_PART_TYPES: [&str; 5] = ["text", "image_url", "input_audio", "file", "refusal"];

impl ContentPart {
    /// A text part.
    pub fn from_text(text: impl Into<String>) -> Self {
        ContentPart::Text {
            text: text.into(),
            extra: Map::new(),
        }
    }

    /// An image part for a URL (`https://…` or a `data:` URL).
    pub fn from_image_url(url: impl Into<String>) -> Self {
        let image_url = ImageUrl {
            url: url.into(),
            ..ImageUrl::default()
        };
        ContentPart::ImageUrl {
            image_url,
            extra: Map::new(),
        }
    }

    /// The text of a text part; `None` for every other kind of part.
    pub fn text(&self) -> Option<&str> {
        match self {
            ContentPart::Text { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The part's `"type"` as it appears on the wire (`None` for an unknown part without one).
    pub fn kind(&self) -> Option<&str> {
        match self {
            ContentPart::Text { .. } => Some("text"),
            ContentPart::ImageUrl { .. } => Some("image_url"),
            ContentPart::InputAudio { .. } => Some("input_audio"),
            ContentPart::File { .. } => Some("file"),
            ContentPart::Refusal { .. } => Some("refusal"),
            ContentPart::Other(part) => part.get("type").and_then(Value::as_str),
        }
    }
}

impl Serialize for ContentPart {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentPart::Other(part) => part.serialize(serializer),
            known => ContentPart::serialize(known, serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let part = Map::deserialize(deserializer)?;
        let known = part
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|kind| KNOWN_PART_TYPES.contains(&kind));
        if known {
            ContentPart::deserialize(Value::Object(part)).map_err(de::Error::custom)
        } else {
            Ok(ContentPart::Other(part))
        }
    }
}

/// The `image_url` object of an image part.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct ImageUrl {
    /// An `https://` URL or a `data:image/…;base64,…` URL.
    pub url: String,
    /// `"auto"`, `"low"` or `"high"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Keys not listed above, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(ImageUrl);

/// The `input_audio` object of an audio part.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct InputAudio {
    /// Base64-encoded audio.
    pub data: String,
    /// `"wav"` or `"mp3"`.
    pub format: String,
    /// Keys not listed above, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(InputAudio);

/// The `file` object of a file part: an uploaded file's id or the file's data inline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct FileRef {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    /// Base64-encoded file content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Keys not listed above, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How the object was laid out when parsed.
    #[serde(skip)]
    pub layout: Layout,
}
faithful!(FileRef);

//! Loading chat templates from GGUF files, `tokenizer_config.json` and Jinja files.
//!
//! GGUF inputs are built here byte by byte, broken ones included, so every claim of the
//! reader (bounded lengths, clear errors on truncation, no panic on garbage) is checked on
//! files that say exactly what the test needs. One test reads the real default model.

use crate::common::{self, write};
use std::io::{self, Read};

use serde_json::json;
use toolbridge_template::gguf::{
    GgufError, GgufErrorKind, GgufMetadata, GgufType, GgufValue, ReadOptions, MAX_ARRAY_LEN,
    MAX_KV_COUNT, MAX_STRING_LEN,
};
use toolbridge_template::source::TemplateSource;
use toolbridge_template::{TemplateError, TemplateErrorKind};

// ---------------------------------------------------------------------------------------
// A small GGUF writer

const STRING: u32 = 8;
const ARRAY: u32 = 9;

/// Builds GGUF metadata: a header and key/values, no tensors.
struct Gguf {
    version: u32,
    count: u64,
    kvs: Vec<u8>,
}

impl Gguf {
    fn v3() -> Self {
        Self::version(3)
    }

    fn version(version: u32) -> Self {
        Gguf {
            version,
            count: 0,
            kvs: Vec::new(),
        }
    }

    /// A key/value with a raw type code and raw value bytes.
    fn kv(mut self, key: &str, ty: u32, value: &[u8]) -> Self {
        self.kvs.extend(string(key));
        self.kvs.extend(ty.to_le_bytes());
        self.kvs.extend(value);
        self.count += 1;
        self
    }

    fn str(self, key: &str, value: &str) -> Self {
        self.kv(key, STRING, &string(value))
    }

    fn u32(self, key: &str, value: u32) -> Self {
        self.kv(key, 4, &value.to_le_bytes())
    }

    fn array(self, key: &str, element: u32, len: u64, items: &[u8]) -> Self {
        let mut value = element.to_le_bytes().to_vec();
        value.extend(len.to_le_bytes());
        value.extend(items);
        self.kv(key, ARRAY, &value)
    }

    fn str_array(self, key: &str, items: &[&str]) -> Self {
        let bytes: Vec<u8> = items.iter().flat_map(|s| string(s)).collect();
        self.array(key, STRING, items.len() as u64, &bytes)
    }

    fn bytes(&self) -> Vec<u8> {
        self.bytes_claiming(self.count)
    }

    /// The file, with `count` written as its key/value count.
    fn bytes_claiming(&self, count: u64) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(self.version.to_le_bytes());
        out.extend(0u64.to_le_bytes()); // tensor count
        out.extend(count.to_le_bytes());
        out.extend(&self.kvs);
        out
    }
}

/// A GGUF string: u64 length, then the bytes.
fn string(s: &str) -> Vec<u8> {
    let mut out = (s.len() as u64).to_le_bytes().to_vec();
    out.extend(s.as_bytes());
    out
}

/// Every value type, each under a key named after it.
fn all_types(version: u32) -> Gguf {
    Gguf::version(version)
        .kv("u8", 0, &[200])
        .kv("i8", 1, &(-5i8).to_le_bytes())
        .kv("u16", 2, &600u16.to_le_bytes())
        .kv("i16", 3, &(-600i16).to_le_bytes())
        .u32("u32", 70_000)
        .kv("i32", 5, &(-70_000i32).to_le_bytes())
        .kv("f32", 6, &1.5f32.to_le_bytes())
        .kv("bool", 7, &[1])
        .str("string", "héllo")
        .array("array", 5, 2, &[1, 0, 0, 0, 2, 0, 0, 0])
        .kv("u64", 10, &(1u64 << 40).to_le_bytes())
        .kv("i64", 11, &(-1i64).to_le_bytes())
        .kv("f64", 12, &2.25f64.to_le_bytes())
}

/// A model-like file: tokens, tokenizer tables, templates and special token ids.
fn model_like() -> Gguf {
    Gguf::v3()
        .str("general.architecture", "qwen2")
        .str_array(
            "tokenizer.ggml.tokens",
            &["<s>", "</s>", "hi", "<|im_end|>"],
        )
        .array("tokenizer.ggml.scores", 6, 4, &[0; 16])
        .array("tokenizer.ggml.token_type", 5, 4, &[0; 16])
        .str_array("tokenizer.ggml.merges", &["h i", "i m"])
        .u32("tokenizer.ggml.bos_token_id", 0)
        .u32("tokenizer.ggml.eos_token_id", 3)
        .str("tokenizer.chat_template", "DEFAULT")
        .str("tokenizer.chat_template.tool_use", "TOOLS")
        .str("tokenizer.chat_template.rag", "RAG")
        .str_array("tokenizer.chat_templates", &["rag", "tool_use"])
}

fn read(bytes: &[u8]) -> Result<GgufMetadata, GgufError> {
    GgufMetadata::from_reader(bytes, &ReadOptions::default())
}

fn error(bytes: &[u8]) -> GgufError {
    read(bytes).expect_err("expected an error")
}

// ---------------------------------------------------------------------------------------
// GGUF metadata

#[test]
fn reads_every_value_type_in_v2_and_v3() {
    for version in [2, 3] {
        let meta = read(&all_types(version).bytes()).unwrap();
        assert_eq!(meta.version(), version);
        assert_eq!(meta.tensor_count(), 0);
        assert_eq!(meta.get("u8"), Some(&GgufValue::U8(200)));
        assert_eq!(meta.get("i8"), Some(&GgufValue::I8(-5)));
        assert_eq!(meta.get("u16"), Some(&GgufValue::U16(600)));
        assert_eq!(meta.get("i16"), Some(&GgufValue::I16(-600)));
        assert_eq!(meta.get_u64("u32"), Some(70_000));
        assert_eq!(meta.get("i32"), Some(&GgufValue::I32(-70_000)));
        assert_eq!(meta.get("f32"), Some(&GgufValue::F32(1.5)));
        assert_eq!(meta.get("bool"), Some(&GgufValue::Bool(true)));
        assert_eq!(meta.get_str("string"), Some("héllo"));
        assert_eq!(
            meta.get("array").and_then(GgufValue::as_array),
            Some(&[GgufValue::I32(1), GgufValue::I32(2)][..])
        );
        assert_eq!(meta.get_u64("u64"), Some(1 << 40));
        assert_eq!(meta.get("i64"), Some(&GgufValue::I64(-1)));
        assert_eq!(meta.get_u64("i64"), None, "negative is not a u64");
        assert_eq!(meta.get("f64"), Some(&GgufValue::F64(2.25)));
        assert_eq!(meta.get_str("u8"), None, "a number is not a string");
        assert_eq!(meta.get("missing"), None);
    }
}

#[test]
fn keeps_entries_in_file_order() {
    let meta = read(&all_types(3).bytes()).unwrap();
    let keys: Vec<&str> = meta.entries().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64",
            "f64"
        ]
    );
}

#[test]
fn bos_and_eos_are_looked_up_in_the_token_list() {
    let meta = read(&model_like().bytes()).unwrap();
    assert_eq!(meta.bos_token(), Some("<s>"));
    assert_eq!(meta.eos_token(), Some("<|im_end|>"));
    assert_eq!(meta.token(2), Some("hi"));
    assert_eq!(meta.token(4), None);
    assert_eq!(meta.token(u64::MAX), None);

    let out_of_range = Gguf::v3()
        .str_array("tokenizer.ggml.tokens", &["a"])
        .u32("tokenizer.ggml.bos_token_id", 7);
    let meta = read(&out_of_range.bytes()).unwrap();
    assert_eq!(meta.bos_token(), None);
    assert_eq!(meta.eos_token(), None);
}

#[test]
fn default_options_read_past_tokenizer_tables_but_keep_tokens() {
    let meta = read(&model_like().bytes()).unwrap();
    assert_eq!(
        meta.get("tokenizer.ggml.merges"),
        Some(&GgufValue::SkippedArray {
            element: GgufType::String,
            len: 2
        })
    );
    assert_eq!(
        meta.get("tokenizer.ggml.scores"),
        Some(&GgufValue::SkippedArray {
            element: GgufType::F32,
            len: 4
        })
    );
    assert_eq!(
        meta.get("tokenizer.ggml.tokens")
            .and_then(GgufValue::as_array)
            .map(<[_]>::len),
        Some(4)
    );
    // What follows a skipped array is read from the right place.
    assert_eq!(meta.get_u64("tokenizer.ggml.eos_token_id"), Some(3));
}

#[test]
fn read_options_choose_which_arrays_are_held() {
    let bytes = model_like().bytes();
    let only = ReadOptions::keep_only_arrays(["tokenizer.ggml.merges"]);
    let meta = GgufMetadata::from_reader(&bytes[..], &only).unwrap();
    assert!(meta
        .get("tokenizer.ggml.merges")
        .unwrap()
        .as_array()
        .is_some());
    assert!(matches!(
        meta.get("tokenizer.ggml.tokens"),
        Some(GgufValue::SkippedArray { len: 4, .. })
    ));
    assert_eq!(meta.bos_token(), None, "tokens were not held");

    let all = ReadOptions::skip_arrays(Vec::<String>::new());
    let meta = GgufMetadata::from_reader(&bytes[..], &all).unwrap();
    assert!(meta
        .entries()
        .all(|(_, v)| !matches!(v, GgufValue::SkippedArray { .. })));
}

#[test]
fn chat_templates_are_the_default_and_the_named_keys_in_file_order() {
    let meta = read(&model_like().bytes()).unwrap();
    let templates = meta.chat_templates();
    assert_eq!(templates.default, Some("DEFAULT"));
    // `tokenizer.chat_templates` (the list of names) is not a template.
    assert_eq!(templates.named, [("tool_use", "TOOLS"), ("rag", "RAG")]);
}

#[test]
fn refuses_files_that_are_not_gguf_v2_or_v3() {
    assert!(matches!(
        error(b"{\"chat_template\": 1}").kind(),
        GgufErrorKind::NotGguf { found } if found == "{\"ch"
    ));
    for version in [0, 1, 4, u32::MAX] {
        assert!(matches!(
            error(&Gguf::version(version).bytes()).kind(),
            GgufErrorKind::UnsupportedVersion(v) if *v == version
        ));
    }
    let mut big_endian = b"GGUF".to_vec();
    big_endian.extend(3u32.to_be_bytes());
    big_endian.extend([0; 16]);
    assert!(matches!(
        error(&big_endian).kind(),
        GgufErrorKind::BigEndian
    ));
}

#[test]
fn every_truncation_is_a_clear_error() {
    let bytes = model_like().bytes();
    for len in 0..bytes.len() {
        let err = read(&bytes[..len]).expect_err("a truncated file must not read");
        assert!(
            matches!(err.kind(), GgufErrorKind::Truncated(_)),
            "cut at {len}: {err}"
        );
        assert!(err.to_string().contains("ends in the middle of"), "{err}");
    }
}

#[test]
fn lying_string_lengths_are_refused_before_allocating() {
    for len in [u64::MAX, 1 << 40, MAX_STRING_LEN + 1] {
        let mut value = len.to_le_bytes().to_vec();
        value.extend(b"short");
        let file = Gguf::v3().kv("tokenizer.chat_template", STRING, &value);
        let err = read(&file.bytes()).unwrap_err();
        assert!(
            matches!(err.kind(), GgufErrorKind::TooLong { len: l, max: MAX_STRING_LEN, .. } if *l == len),
            "{err}"
        );
        assert_eq!(err.key(), Some("tokenizer.chat_template"));
    }
    // Within the limit, but the file has only 5 of the 60 MiB it claims.
    let mut value = (60u64 << 20).to_le_bytes().to_vec();
    value.extend(b"short");
    let file = Gguf::v3().kv("tokenizer.chat_template", STRING, &value);
    assert!(matches!(
        error(&file.bytes()).kind(),
        GgufErrorKind::Truncated(_)
    ));
}

#[test]
fn lying_key_lengths_are_refused() {
    let mut bytes = Gguf::v3().bytes_claiming(1);
    bytes.extend(u64::MAX.to_le_bytes());
    assert!(matches!(
        error(&bytes).kind(),
        GgufErrorKind::TooLong { what: "a key", .. }
    ));
}

#[test]
fn lying_array_lengths_are_refused_or_run_out_of_file() {
    let huge = Gguf::v3().array("tokenizer.ggml.tokens", STRING, u64::MAX, b"");
    assert!(matches!(
        error(&huge.bytes()).kind(),
        GgufErrorKind::TooMany {
            count: u64::MAX,
            max: MAX_ARRAY_LEN,
            ..
        }
    ));
    // Within the limit: held, skipped with fixed-size elements, skipped with strings.
    for key in [
        "tokenizer.ggml.tokens",
        "tokenizer.ggml.scores",
        "tokenizer.ggml.merges",
    ] {
        for element in [STRING, 10] {
            let file = Gguf::v3().array(key, element, MAX_ARRAY_LEN, &string("x"));
            assert!(
                matches!(error(&file.bytes()).kind(), GgufErrorKind::Truncated(_)),
                "{key} of type {element}"
            );
        }
    }
}

#[test]
fn an_absurd_key_count_is_refused() {
    let file = model_like();
    assert!(matches!(
        error(&file.bytes_claiming(u64::MAX)).kind(),
        GgufErrorKind::TooMany {
            count: u64::MAX,
            max: MAX_KV_COUNT,
            ..
        }
    ));
    assert!(matches!(
        error(&file.bytes_claiming(MAX_KV_COUNT)).kind(),
        GgufErrorKind::Truncated(_)
    ));
}

#[test]
fn endless_input_stops_at_the_memory_budget() {
    // A file that never ends: an array of 2^32 u8 held, backed by endless zero bytes.
    let header = Gguf::v3().array("blob", 0, MAX_ARRAY_LEN, b"").bytes();
    let endless = header.as_slice().chain(io::repeat(0));
    let err = GgufMetadata::from_reader(endless, &ReadOptions::default()).unwrap_err();
    assert!(
        matches!(err.kind(), GgufErrorKind::OverBudget { .. }),
        "{err}"
    );
}

#[test]
fn malformed_values_are_errors() {
    let unknown = Gguf::v3().kv("k", 13, b"");
    assert!(matches!(
        error(&unknown.bytes()).kind(),
        GgufErrorKind::UnknownType(13)
    ));

    let nested = Gguf::v3().array("k", ARRAY, 1, b"");
    assert!(matches!(
        error(&nested.bytes()).kind(),
        GgufErrorKind::NestedArray
    ));

    let twice = Gguf::v3().u32("k", 1).u32("k", 2);
    let err = read(&twice.bytes()).unwrap_err();
    assert!(matches!(err.kind(), GgufErrorKind::DuplicateKey));
    assert_eq!(err.key(), Some("k"));

    let mut bad_key = Gguf::v3().bytes_claiming(1);
    bad_key.extend(2u64.to_le_bytes());
    bad_key.extend([0xff, 0xfe]);
    assert!(matches!(error(&bad_key).kind(), GgufErrorKind::KeyNotUtf8));
}

#[test]
fn a_value_that_is_not_utf8_is_kept_with_replacement_characters() {
    let mut value = 3u64.to_le_bytes().to_vec();
    value.extend([b'a', 0xff, b'b']);
    let meta = read(&Gguf::v3().kv("k", STRING, &value).bytes()).unwrap();
    assert_eq!(meta.get_str("k"), Some("a\u{fffd}b"));
}

#[test]
fn corrupted_files_give_errors_not_panics() {
    let original = model_like().bytes();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..5_000 {
        let mut bytes = original.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % bytes.len() as u64) as usize;
            bytes[at] = next() as u8;
        }
        let _ = read(&bytes);
    }
}

#[test]
fn errors_name_the_file_the_key_and_the_offset() {
    let dir = common::temp_dir("errors_name_the_file");
    let mut value = u64::MAX.to_le_bytes().to_vec();
    value.extend(b"x");
    let path = write(
        &dir,
        "model.gguf",
        Gguf::v3()
            .kv("tokenizer.chat_template", STRING, &value)
            .bytes(),
    );
    let message = GgufMetadata::read(&path).unwrap_err().to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("\"tokenizer.chat_template\""), "{message}");
    assert!(message.contains("at byte"), "{message}");

    let missing = dir.join("missing.gguf");
    let message = GgufMetadata::read(&missing).unwrap_err().to_string();
    assert!(
        message.contains(&missing.display().to_string()),
        "{message}"
    );
}

// ---------------------------------------------------------------------------------------
// TemplateSource from GGUF

#[test]
fn gguf_source_has_default_named_and_special_tokens() {
    let dir = common::temp_dir("gguf_source");
    // Recognised by its magic bytes, whatever its name.
    let path = write(&dir, "weights.bin", model_like().bytes());
    let source = TemplateSource::from_path(&path).unwrap();
    assert_eq!(
        source,
        TemplateSource {
            template: Some("DEFAULT".into()),
            named: vec![
                ("tool_use".into(), "TOOLS".into()),
                ("rag".into(), "RAG".into())
            ],
            bos_token: Some("<s>".into()),
            eos_token: Some("<|im_end|>".into()),
        }
    );
    assert_eq!(source.select(None).unwrap(), "DEFAULT");
    assert_eq!(source.select(Some("default")).unwrap(), "DEFAULT");
    assert_eq!(source.select(Some("rag")).unwrap(), "RAG");
    assert_eq!(source.select_for(None, true).unwrap(), "TOOLS");
    assert_eq!(source.select_for(None, false).unwrap(), "DEFAULT");
    assert_eq!(source.select_for(Some("rag"), true).unwrap(), "RAG");
    assert_eq!(
        source.names().collect::<Vec<_>>(),
        ["default", "tool_use", "rag"]
    );
    let err = source.select(Some("nope")).unwrap_err();
    assert_eq!(err.kind(), &TemplateErrorKind::Choice);
    assert_eq!(
        err.to_string(),
        "the model has no chat template named \"nope\"; it has: default, tool_use, rag"
    );
}

#[test]
fn gguf_source_with_only_named_templates_has_no_default() {
    let dir = common::temp_dir("gguf_only_named");
    let file = Gguf::version(2)
        .str("tokenizer.chat_template.tool_use", "TOOLS")
        .str("tokenizer.chat_template.rag", "RAG")
        .str_array("tokenizer.chat_templates", &["tool_use", "rag"]);
    let source = TemplateSource::from_path(write(&dir, "m.gguf", file.bytes())).unwrap();
    assert_eq!(source.template, None);
    assert_eq!(source.bos_token, None);
    let err = source.select(None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the model has no default chat template; choose one of: tool_use, rag"
    );
    assert_eq!(source.select_for(None, true).unwrap(), "TOOLS");
}

#[test]
fn gguf_without_a_template_is_an_error() {
    let dir = common::temp_dir("gguf_no_template");
    let path = write(&dir, "m.gguf", Gguf::v3().str("general.name", "x").bytes());
    let err = TemplateSource::from_path(&path).unwrap_err();
    assert_eq!(err.kind(), &TemplateErrorKind::NoTemplate, "{err}");
    assert!(err.to_string().contains("m.gguf"), "{err}");
}

#[test]
fn broken_gguf_is_an_error_naming_the_file() {
    let dir = common::temp_dir("gguf_broken");
    let bytes = model_like().bytes();
    let path = write(&dir, "cut.gguf", &bytes[..bytes.len() / 2]);
    let err = TemplateSource::from_path(&path).unwrap_err();
    assert!(caused_by::<GgufError>(&err), "{err}");
    assert!(err.to_string().contains("cut.gguf"), "{err}");
}

// ---------------------------------------------------------------------------------------
// TemplateSource from tokenizer_config.json

fn config_source(test: &str, config: serde_json::Value) -> Result<TemplateSource, TemplateError> {
    let dir = common::temp_dir(test);
    let path = write(&dir, "tokenizer_config.json", config.to_string());
    TemplateSource::from_path(path)
}

#[test]
fn config_with_a_string_template_and_string_tokens() {
    let source = config_source(
        "config_string",
        json!({"chat_template": "T", "bos_token": "<s>", "eos_token": "</s>"}),
    )
    .unwrap();
    assert_eq!(source.template.as_deref(), Some("T"));
    assert!(source.named.is_empty());
    assert_eq!(source.bos_token.as_deref(), Some("<s>"));
    assert_eq!(source.eos_token.as_deref(), Some("</s>"));
}

#[test]
fn config_with_a_list_takes_the_one_named_default() {
    let source = config_source(
        "config_list_default",
        json!({"chat_template": [
            {"name": "tool_use", "template": "TOOLS"},
            {"name": "default", "template": "DEFAULT"},
            {"name": "rag", "template": "RAG"},
        ]}),
    )
    .unwrap();
    assert_eq!(source.template.as_deref(), Some("DEFAULT"));
    assert_eq!(
        source.named,
        [
            ("tool_use".to_owned(), "TOOLS".to_owned()),
            ("rag".to_owned(), "RAG".to_owned())
        ]
    );
    assert_eq!(source.select_for(None, true).unwrap(), "TOOLS");
    assert_eq!(source.select_for(None, false).unwrap(), "DEFAULT");
}

#[test]
fn config_with_a_list_without_default_needs_a_name() {
    let source = config_source(
        "config_list_no_default",
        json!({"chat_template": [
            {"name": "rag", "template": "RAG"},
            {"name": "rag", "template": "RAG 2"},
            {"name": "chat", "template": "CHAT"},
        ]}),
    )
    .unwrap();
    assert_eq!(source.template, None);
    // A repeated name replaces the earlier template in place, as a Python dict does.
    assert_eq!(source.select(Some("rag")).unwrap(), "RAG 2");
    let err = source.select(None).unwrap_err();
    assert_eq!(err.kind(), &TemplateErrorKind::Choice);
    assert!(err.detail().ends_with("choose one of: rag, chat"), "{err}");
    let err = source.select_for(None, true).unwrap_err();
    assert!(err.detail().contains("no default chat template"), "{err}");
}

#[test]
fn config_tokens_may_be_added_token_objects_or_null() {
    let source = config_source(
        "config_added_tokens",
        json!({
            "chat_template": "T",
            "bos_token": {"__type": "AddedToken", "content": "<|begin_of_text|>",
                          "lstrip": false, "normalized": false, "rstrip": false,
                          "single_word": false},
            "eos_token": null,
        }),
    )
    .unwrap();
    assert_eq!(source.bos_token.as_deref(), Some("<|begin_of_text|>"));
    assert_eq!(source.eos_token, None);

    let missing = config_source("config_missing_tokens", json!({"chat_template": "T"})).unwrap();
    assert_eq!((missing.bos_token, missing.eos_token), (None, None));
}

#[test]
fn malformed_configs_are_errors_that_say_what_is_wrong() {
    let cases = [
        (
            json!({"chat_template": "T", "bos_token": 1}),
            "bos_token must be a string",
        ),
        (
            json!({"chat_template": "T", "eos_token": {"__type": "AddedToken"}}),
            "eos_token is an object without a string \"content\"",
        ),
        (
            json!({"chat_template": 3}),
            "chat_template must be a string or a list",
        ),
        (
            json!({"chat_template": [{"name": "default"}]}),
            "chat_template[0] has no string \"template\"",
        ),
        (
            json!({"chat_template": ["T"]}),
            "chat_template[0] has no string \"name\"",
        ),
        (
            json!({"chat_template": []}),
            "no chat template: an empty chat_template list",
        ),
        (
            json!({"bos_token": "<s>"}),
            "no chat template: no chat_template field",
        ),
        (
            json!({"chat_template": null}),
            "no chat template: no chat_template field",
        ),
        (json!(["T"]), "expected a JSON object, found a list"),
    ];
    for (i, (config, expected)) in cases.into_iter().enumerate() {
        let err = config_source(&format!("config_malformed_{i}"), config).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(expected), "{message}");
        assert!(message.contains("tokenizer_config.json"), "{message}");
    }

    let dir = common::temp_dir("config_not_json");
    let path = write(&dir, "tokenizer_config.json", "{\"chat_template\": ");
    let err = TemplateSource::from_path(&path).unwrap_err();
    assert!(caused_by::<serde_json::Error>(&err), "{err}");
}

#[test]
fn sibling_chat_template_jinja_is_used_and_takes_priority() {
    let dir = common::temp_dir("config_sibling");
    let config = write(
        &dir,
        "tokenizer_config.json",
        json!({"eos_token": "</s>"}).to_string(),
    );
    write(&dir, "chat_template.jinja", "FROM FILE\n");
    let source = TemplateSource::from_path(&config).unwrap();
    assert_eq!(source.template.as_deref(), Some("FROM FILE\n"));
    assert_eq!(source.eos_token.as_deref(), Some("</s>"));

    // As in transformers, template files beside the config win over its chat_template.
    write(
        &dir,
        "tokenizer_config.json",
        json!({"chat_template": "FROM JSON"}).to_string(),
    );
    write(&dir, "additional_chat_templates/tool_use.jinja", "TOOLS");
    write(&dir, "additional_chat_templates/rag.jinja", "RAG");
    write(
        &dir,
        "additional_chat_templates/notes.txt",
        "not a template",
    );
    // A directory stands for its tokenizer_config.json.
    let source = TemplateSource::from_path(&dir).unwrap();
    assert_eq!(source.template.as_deref(), Some("FROM FILE\n"));
    assert_eq!(
        source.named,
        [
            ("rag".to_owned(), "RAG".to_owned()),
            ("tool_use".to_owned(), "TOOLS".to_owned())
        ]
    );
}

#[test]
fn a_directory_without_tokenizer_config_is_an_error_naming_it() {
    let dir = common::temp_dir("config_missing_dir");
    let err = TemplateSource::from_path(&dir).unwrap_err();
    assert!(caused_by::<std::io::Error>(&err), "{err}");
    assert!(err.to_string().contains("tokenizer_config.json"), "{err}");
}

// ---------------------------------------------------------------------------------------
// TemplateSource from Jinja and other text

#[test]
fn a_jinja_file_is_the_whole_template() {
    let dir = common::temp_dir("jinja");
    let text = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}\n";
    for name in ["t.jinja", "template.txt", "Modelfile-template"] {
        let source = TemplateSource::from_path(write(&dir, name, text)).unwrap();
        assert_eq!(
            source,
            TemplateSource {
                template: Some(text.into()),
                ..TemplateSource::default()
            }
        );
    }
}

#[test]
fn unreadable_text_files_are_errors_naming_the_file() {
    let dir = common::temp_dir("jinja_bad");
    let path = write(&dir, "t.jinja", [b'o', b'k', 0xff]);
    let err = TemplateSource::from_path(&path).unwrap_err();
    assert!(err.detail().ends_with("(bad byte at offset 2)"), "{err}");
    assert!(err.to_string().contains("t.jinja"), "{err}");

    let missing = dir.join("missing.jinja");
    let err = TemplateSource::from_path(&missing).unwrap_err();
    assert!(caused_by::<std::io::Error>(&err), "{err}");
    assert!(err.to_string().contains("missing.jinja"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Real templates and the real model

/// Qwen2.5-7B-Instruct's tokenizer_config.json fields that matter here, with its real
/// template from the corpus.
#[test]
fn real_qwen_tokenizer_config() {
    let template = common::read_corpus_file("jinja/llama.cpp/Qwen-Qwen2.5-7B-Instruct.jinja");
    let source = config_source(
        "real_qwen",
        json!({
            "add_bos_token": false,
            "added_tokens_decoder": {
                "151643": {"content": "<|endoftext|>", "lstrip": false, "normalized": false,
                           "rstrip": false, "single_word": false, "special": true},
                "151645": {"content": "<|im_end|>", "lstrip": false, "normalized": false,
                           "rstrip": false, "single_word": false, "special": true},
            },
            "bos_token": null,
            "chat_template": template,
            "clean_up_tokenization_spaces": false,
            "eos_token": "<|im_end|>",
            "errors": "replace",
            "model_max_length": 131072,
            "pad_token": "<|endoftext|>",
            "split_special_tokens": false,
            "tokenizer_class": "Qwen2Tokenizer",
            "unk_token": null,
        }),
    )
    .unwrap();
    assert_eq!(source.select(None).unwrap(), template);
    assert_eq!(source.bos_token, None);
    assert_eq!(source.eos_token.as_deref(), Some("<|im_end|>"));
}

/// Hermes 2 Pro ships a default and a `tool_use` template in a list, with AddedToken
/// objects for its special tokens.
#[test]
fn real_hermes_2_pro_tokenizer_config() {
    let default =
        common::read_corpus_file("jinja/hfjs-e2e/NousResearch_Hermes-2-Pro-Llama-3-8B.jinja");
    let tool_use = common::read_corpus_file(
        "jinja/llama.cpp/NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja",
    );
    let token = |content: &str| {
        json!({"__type": "AddedToken", "content": content, "lstrip": false,
               "normalized": false, "rstrip": false, "single_word": false})
    };
    let source = config_source(
        "real_hermes",
        json!({
            "bos_token": token("<|begin_of_text|>"),
            "chat_template": [
                {"name": "default", "template": default},
                {"name": "tool_use", "template": tool_use},
            ],
            "eos_token": token("<|im_end|>"),
        }),
    )
    .unwrap();
    assert_eq!(source.select(None).unwrap(), default);
    assert_eq!(source.select_for(None, true).unwrap(), tool_use);
    assert_eq!(source.bos_token.as_deref(), Some("<|begin_of_text|>"));
    assert_eq!(source.eos_token.as_deref(), Some("<|im_end|>"));
}

#[test]
fn real_default_model_gguf() {
    let path = common::repo_root().join("models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    assert!(
        path.is_file(),
        "the default model is missing: looked for {}; run scripts/fetch-model.sh to fetch it",
        path.display()
    );
    let source = TemplateSource::from_path(&path).unwrap();
    let template = source.select(None).unwrap();
    assert!(template.contains("<tool_call>"), "{template}");
    assert!(template.contains("<|im_start|>"), "{template}");
    assert!(source.named.is_empty());
    assert_eq!(source.bos_token.as_deref(), Some("<|endoftext|>"));
    assert_eq!(source.eos_token.as_deref(), Some("<|im_end|>"));
}

/// Whether `error` was caused by an error of type `E`.
fn caused_by<E: std::error::Error + 'static>(error: &TemplateError) -> bool {
    std::error::Error::source(error).is_some_and(|source| source.is::<E>())
}

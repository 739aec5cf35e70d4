//! Helpers shared by the test modules.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Parses `json` as `T`, checks that it serializes back to the same JSON (same value, same
/// key order) and that the output parses to an equal `T`, and returns the parsed value.
pub fn round_trip<T>(json: &str) -> T
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let input: Value = serde_json::from_str(json).expect("test input is JSON");
    let parsed: T = serde_json::from_str(json).expect("test input parses");
    let output = serde_json::to_value(&parsed).expect("serializes");
    assert_eq!(output, input, "re-serialized JSON differs from the input");
    assert_eq!(
        output.to_string(),
        input.to_string(),
        "key order differs from the input"
    );
    let reparsed: T = serde_json::from_value(output).expect("output parses");
    assert_eq!(
        reparsed, parsed,
        "parse → serialize → parse changed the value"
    );
    parsed
}

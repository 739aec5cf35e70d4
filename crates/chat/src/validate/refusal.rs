//! OpenAI's wording for a refused parameter, in one place.
//!
//! Clients branch on `type`, `param` and `code`, and people read `message`; OpenAI words
//! each kind of refusal one way (`"Invalid 'n': integer below minimum value. Expected a
//! value >= 1, but got 0 instead."`, code `integer_below_min_value`), so each kind is one
//! function here and every check uses them.

use std::fmt::Display;

use crate::error::ApiError;

/// A 400 about `param` with OpenAI's `code`.
fn refused(param: &str, code: &str, message: String) -> ApiError {
    ApiError::invalid_request(message)
        .with_param(param)
        .with_code(code)
}

/// A required field that is absent.
pub fn missing(param: &str) -> ApiError {
    refused(
        param,
        "missing_required_parameter",
        format!("Missing required parameter: '{param}'."),
    )
}

/// A value outside a fixed set.
pub fn unsupported_value(param: &str, value: &str, supported: &[&str]) -> ApiError {
    refused(
        param,
        "invalid_value",
        format!(
            "Invalid value: '{value}'. Supported values are: {}.",
            quoted_list(supported)
        ),
    )
}

/// A value of the wrong JSON type.
pub fn wrong_type(param: &str, expected: &str, got: &str) -> ApiError {
    refused(
        param,
        "invalid_type",
        format!("Invalid type for '{param}': expected {expected}, but got {got} instead."),
    )
}

/// A value that breaks a rule stated in `detail`.
pub fn invalid(param: &str, detail: impl Display) -> ApiError {
    refused(
        param,
        "invalid_value",
        format!("Invalid '{param}': {detail}"),
    )
}

/// A number below `min`; `integer` chooses OpenAI's integer or decimal wording.
pub fn below(param: &str, min: impl Display, got: impl Display, integer: bool) -> ApiError {
    let kind = if integer { "integer" } else { "decimal" };
    refused(
        param,
        &format!("{kind}_below_min_value"),
        format!(
            "Invalid '{param}': {kind} below minimum value. Expected a value >= {min}, but got {got} instead."
        ),
    )
}

/// A number above `max`; `integer` chooses OpenAI's integer or decimal wording.
pub fn above(param: &str, max: impl Display, got: impl Display, integer: bool) -> ApiError {
    let kind = if integer { "integer" } else { "decimal" };
    refused(
        param,
        &format!("{kind}_above_max_value"),
        format!(
            "Invalid '{param}': {kind} above maximum value. Expected a value <= {max}, but got {got} instead."
        ),
    )
}

/// An empty string where one character at least is needed.
pub fn empty_string(param: &str) -> ApiError {
    refused(
        param,
        "empty_string",
        format!(
            "Invalid '{param}': empty string. Expected a string with minimum length 1, but got an empty string instead."
        ),
    )
}

/// A string longer than `max` characters.
pub fn too_long(param: &str, max: usize, got: usize) -> ApiError {
    refused(
        param,
        "string_above_max_length",
        format!(
            "Invalid '{param}': string too long. Expected a string with maximum length {max}, but got a string with length {got} instead."
        ),
    )
}

/// An empty array where one element at least is needed.
pub fn empty_array(param: &str) -> ApiError {
    refused(
        param,
        "empty_array",
        format!(
            "Invalid '{param}': empty array. Expected an array with at least 1 element, but got an empty array instead."
        ),
    )
}

/// A rule about how messages follow each other, in OpenAI's free wording.
pub fn out_of_order(param: &str, message: String) -> ApiError {
    ApiError::invalid_request(message).with_param(param)
}

/// `'a', 'b', and 'c'`.
fn quoted_list(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|value| format!("'{value}'")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [first, second] => format!("{first} and {second}"),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

/// A JSON Schema that cannot be used for `subject` (`function 'f'`, `response_format 'r'`).
pub fn invalid_schema(param: &str, subject: &str, detail: String) -> ApiError {
    refused(
        param,
        "invalid_function_parameters",
        format!("Invalid schema for {subject}: {detail}"),
    )
}

//! The Berkeley Function Calling Leaderboard (BFCL) as OpenAI requests, and its AST rules
//! for whether an answer's tool calls are correct.
//!
//! BFCL is how tool calling is compared across models and servers, so toolbridge measures
//! itself with it: each question becomes a [`ChatRequest`] (BFCL's Python-flavoured types,
//! `dict`, `float`, `tuple`, `any`, mapped to JSON Schema), and [`check`] judges the calls
//! an answer made the way BFCL's `ast_checker.py` does for Python:
//!
//! - one expected call: exactly one call, of that function; several: as many calls, matched
//!   to the expected ones in any order;
//! - every required parameter is given, every given parameter is declared and expected,
//!   and every expected parameter not given may be omitted (its acceptable values hold `""`);
//! - a value has its declared type (an integer passes for a float, a list for a tuple) and
//!   is one of the acceptable values, strings compared after BFCL's standardisation
//!   (spaces and `,./-_*^` removed, lowercased, `'` read as `"`), dictionaries key by key.

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::{Arguments, ChatError, ChatErrorKind, Message, Tool, ToolCall};

/// One BFCL question: its conversation and the functions it offers.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub id: String,
    pub messages: Vec<Message>,
    /// The functions as BFCL declares them (`parameters` in BFCL's types).
    pub functions: Vec<Value>,
}

/// The acceptable calls for one question: for each expected call, its function's name and,
/// per parameter, the list of acceptable values.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub id: String,
    pub calls: Vec<(String, Map<String, Value>)>,
}

/// The questions of `category` (`simple_python`, `multiple`, …) in BFCL's folder `dir`,
/// each with its answer, in file order.
pub fn load(dir: &Path, category: &str) -> Result<Vec<(Question, Answer)>, ChatError> {
    let questions = read_lines(&dir.join(format!("BFCL_v4_{category}.json")))?;
    let answers = read_lines(&dir.join(format!("possible_answer/BFCL_v4_{category}.json")))?;
    let answers: Vec<Answer> = answers
        .iter()
        .map(|line| Answer::from_line(line))
        .collect::<Result<_, _>>()?;
    questions
        .iter()
        .map(|line| {
            let question = Question::from_line(line)?;
            let answer = answers
                .iter()
                .find(|answer| answer.id == question.id)
                .cloned()
                .ok_or_else(|| shape(&question.id, "no answer"))?;
            Ok((question, answer))
        })
        .collect()
}

fn read_lines(path: &Path) -> Result<Vec<String>, ChatError> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        ChatError::new(ChatErrorKind::BfclRead, path.display().to_string()).with_source(error)
    })?;
    Ok(text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(str::to_string)
        .collect())
}

impl Question {
    /// A line of a `BFCL_v4_<category>.json` file.
    pub fn from_line(line: &str) -> Result<Question, ChatError> {
        let value: Value = serde_json::from_str(line).map_err(not_json)?;
        let id = string_field(&value, "id")?;
        let turns = value
            .get("question")
            .and_then(Value::as_array)
            .ok_or_else(|| shape(&id, "no question"))?;
        let first = turns.first().cloned().unwrap_or(Value::Array(Vec::new()));
        let messages = serde_json::from_value(first).map_err(not_json)?;
        let functions = value
            .get("function")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| shape(&id, "no function list"))?;
        Ok(Question {
            id,
            messages,
            functions,
        })
    }

    /// The functions as OpenAI tools, their parameters in JSON Schema.
    pub fn tools(&self) -> Result<Vec<Tool>, ChatError> {
        self.functions
            .iter()
            .map(|function| {
                let mut function = function.clone();
                if let Some(parameters) = function.get_mut("parameters") {
                    to_json_schema(parameters);
                }
                serde_json::from_value(json!({"type": "function", "function": function}))
                    .map_err(not_json)
            })
            .collect()
    }

    /// The declaration of the function called `name`.
    fn function(&self, name: &str) -> Option<&Value> {
        self.functions
            .iter()
            .find(|function| function.get("name").and_then(Value::as_str) == Some(name))
    }
}

impl Answer {
    /// A line of a `possible_answer/BFCL_v4_<category>.json` file.
    pub fn from_line(line: &str) -> Result<Answer, ChatError> {
        let value: Value = serde_json::from_str(line).map_err(not_json)?;
        let id = string_field(&value, "id")?;
        let truth = value
            .get("ground_truth")
            .and_then(Value::as_array)
            .ok_or_else(|| shape(&id, "no ground_truth"))?;
        let calls = truth
            .iter()
            .map(|call| match call.as_object().map(|o| o.iter().next()) {
                Some(Some((name, Value::Object(parameters)))) => {
                    Ok((name.clone(), parameters.clone()))
                }
                _ => Err(shape(
                    &id,
                    "a ground-truth call is not {name: {parameters}}",
                )),
            })
            .collect::<Result<_, _>>()?;
        Ok(Answer { id, calls })
    }
}

impl Answer {
    /// The expected calls written out, each parameter with its first acceptable value that
    /// is not `""` (omission): a correct answer, for checking a dialect's round trip.
    pub fn expected_calls(&self) -> Vec<ToolCall> {
        self.calls
            .iter()
            .enumerate()
            .map(|(at, (name, acceptable))| {
                let arguments = first_choices(acceptable);
                ToolCall::new(format!("call_{at}"), name, Arguments::Object(arguments))
            })
            .collect()
    }
}

/// Each key with its first acceptable value other than `""`; a key with no other is left
/// out.
fn first_choices(acceptable: &Map<String, Value>) -> Map<String, Value> {
    acceptable
        .iter()
        .filter_map(|(key, options)| {
            let first = options.as_array()?.iter().find(|option| *option != "")?;
            Some((key.clone(), written_out(first)))
        })
        .collect()
}

/// An acceptable value as a value: a dictionary shape (each key's options) as its first
/// choices, a list of them element by element.
fn written_out(option: &Value) -> Value {
    match option {
        Value::Object(shape) => Value::Object(first_choices(shape)),
        Value::Array(items) if items.iter().any(Value::is_object) => {
            Value::Array(items.iter().map(written_out).collect())
        }
        other => other.clone(),
    }
}

fn string_field(value: &Value, key: &str) -> Result<String, ChatError> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| ChatError::new(ChatErrorKind::BfclShape, format!("no {key:?}")))
}

fn shape(id: &str, what: &str) -> ChatError {
    ChatError::new(ChatErrorKind::BfclShape, format!("{id}: {what}"))
}

fn not_json(error: serde_json::Error) -> ChatError {
    ChatError::new(ChatErrorKind::BfclJson, "").with_source(error)
}

/// BFCL's types as JSON Schema's, in place: `dict` is `object`, `float` `number`, `tuple`
/// `array`, `any` no constraint.
fn to_json_schema(schema: &mut Value) {
    let Value::Object(members) = schema else {
        return;
    };
    match members.get("type").and_then(Value::as_str) {
        Some("dict") => *members.get_mut("type").unwrap_or(&mut Value::Null) = json!("object"),
        Some("float") => *members.get_mut("type").unwrap_or(&mut Value::Null) = json!("number"),
        Some("tuple") => *members.get_mut("type").unwrap_or(&mut Value::Null) = json!("array"),
        Some("any") => {
            members.remove("type");
        }
        _ => {}
    }
    if let Some(Value::Object(properties)) = members.get_mut("properties") {
        properties.values_mut().for_each(to_json_schema);
    }
    if let Some(items) = members.get_mut("items") {
        to_json_schema(items);
    }
}

/// Whether `calls` answer `question` as `answer` accepts; the error says what is wrong.
pub fn check(question: &Question, answer: &Answer, calls: &[ToolCall]) -> Result<(), String> {
    if calls.len() != answer.calls.len() {
        return Err(format!(
            "{} calls, expected {}",
            calls.len(),
            answer.calls.len()
        ));
    }
    let mut unused: Vec<&ToolCall> = calls.iter().collect();
    for (name, acceptable) in &answer.calls {
        let found = unused
            .iter()
            .position(|call| check_call(question, name, acceptable, call).is_ok());
        match found {
            Some(at) => {
                unused.remove(at);
            }
            None if answer.calls.len() == 1 => {
                return check_call(question, name, acceptable, &calls[0]);
            }
            None => return Err(format!("no call matches the expected call of {name}")),
        }
    }
    Ok(())
}

/// One call against one expected call.
fn check_call(
    question: &Question,
    name: &str,
    acceptable: &Map<String, Value>,
    call: &ToolCall,
) -> Result<(), String> {
    if call.name() != name {
        return Err(format!("called {}, expected {name}", call.name()));
    }
    let given = arguments(call)?;
    let function = question
        .function(name)
        .ok_or_else(|| format!("{name} is not among the question's functions"))?;
    let declared = &function["parameters"]["properties"];
    for required in function["parameters"]["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !given.contains_key(required) {
            return Err(format!("missing required parameter {required}"));
        }
    }
    for (parameter, value) in &given {
        let (Some(declaration), Some(values)) =
            (declared.get(parameter), acceptable.get(parameter))
        else {
            return Err(format!("unexpected parameter {parameter}"));
        };
        check_value(parameter, value, declaration, values)?;
    }
    for (parameter, values) in acceptable {
        let optional = values.as_array().is_some_and(|v| v.contains(&json!("")));
        if !given.contains_key(parameter) && !optional {
            return Err(format!("missing parameter {parameter}"));
        }
    }
    Ok(())
}

fn arguments(call: &ToolCall) -> Result<Map<String, Value>, String> {
    let text = call.function.arguments.as_json_string();
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(format!("arguments are not a JSON object: {text}")),
    }
}

/// A value against its declared BFCL type and its acceptable values.
fn check_value(
    parameter: &str,
    value: &Value,
    declaration: &Value,
    acceptable: &Value,
) -> Result<(), String> {
    let kind = declaration
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("any");
    if !has_type(value, kind) {
        return Err(format!("{parameter}: {value} is not a {kind}"));
    }
    let acceptable = acceptable.as_array().map_or(&[][..], Vec::as_slice);
    let fits = match value {
        Value::Object(given) => acceptable.iter().any(|option| dict_fits(given, option)),
        Value::Array(items) if items.iter().any(Value::is_object) => acceptable
            .iter()
            .any(|option| list_of_dicts_fits(items, option)),
        _ => {
            let value = standardized(value);
            acceptable
                .iter()
                .any(|option| python_eq(&value, &standardized(option)))
        }
    };
    if fits {
        Ok(())
    } else {
        Err(format!("{parameter}: {value} is not among {acceptable:?}"))
    }
}

fn has_type(value: &Value, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "float" | "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" | "tuple" => value.is_array(),
        "dict" | "object" => value.is_object(),
        _ => true,
    }
}

/// A dictionary against one acceptable shape: each key's value among that key's options,
/// each key left out allowed to be.
fn dict_fits(given: &Map<String, Value>, option: &Value) -> bool {
    let Value::Object(option) = option else {
        return false;
    };
    let values_fit = given.iter().all(|(key, value)| {
        let value = standardized(value);
        option
            .get(key)
            .and_then(Value::as_array)
            .is_some_and(|options| options.iter().any(|o| python_eq(&value, &standardized(o))))
    });
    let omissions_fit = option.iter().all(|(key, options)| {
        given.contains_key(key) || options.as_array().is_some_and(|o| o.contains(&json!("")))
    });
    values_fit && omissions_fit
}

fn list_of_dicts_fits(items: &[Value], option: &Value) -> bool {
    let Value::Array(options) = option else {
        return false;
    };
    items.len() == options.len()
        && items.iter().zip(options).all(|(item, option)| match item {
            Value::Object(given) => dict_fits(given, option),
            _ => false,
        })
}

/// Strings as BFCL compares them (also inside lists); other values as they are.
fn standardized(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(standardize(text)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| match item {
                    Value::String(text) => Value::String(standardize(text)),
                    other => other.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// BFCL's `standardize_string`: drop spaces and `,./-_*^`, lowercase, `'` as `"`.
fn standardize(text: &str) -> String {
    text.chars()
        .filter(|c| !" ,./-_*^".contains(*c))
        .flat_map(char::to_lowercase)
        .map(|c| if c == '\'' { '"' } else { c })
        .collect()
}

/// Python's `==` on JSON values: numbers by value (`1 == 1.0`), containers element-wise.
fn python_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| python_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, a)| y.get(key).is_some_and(|b| python_eq(a, b)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Arguments;

    fn question() -> Question {
        Question::from_line(r#"{"id": "simple_python_0", "question": [[{"role": "user", "content": "Area?"}]], "function": [{"name": "calculate_triangle_area", "description": "d", "parameters": {"type": "dict", "properties": {"base": {"type": "integer"}, "height": {"type": "float"}, "unit": {"type": "string"}}, "required": ["base", "height"]}}]}"#).unwrap()
    }

    fn answer() -> Answer {
        Answer::from_line(r#"{"id": "simple_python_0", "ground_truth": [{"calculate_triangle_area": {"base": [10], "height": [5.0], "unit": ["units", ""]}}]}"#).unwrap()
    }

    fn call(arguments: Value) -> ToolCall {
        let Value::Object(map) = arguments else {
            panic!("an object")
        };
        ToolCall::new("c", "calculate_triangle_area", Arguments::Object(map))
    }

    #[test]
    fn bfcl_types_become_json_schema() {
        let tools = question().tools().unwrap();
        let parameters = tools[0].function.parameters.as_ref().unwrap();
        assert_eq!(parameters["type"], "object");
        assert_eq!(parameters["properties"]["height"]["type"], "number");
    }

    #[test]
    fn the_ast_rules() {
        let (q, a) = (question(), answer());
        assert_eq!(
            check(&q, &a, &[call(json!({"base": 10, "height": 5}))]),
            Ok(())
        );
        assert_eq!(
            check(
                &q,
                &a,
                &[call(json!({"base": 10, "height": 5, "unit": "Units"}))]
            ),
            Ok(())
        );
        for wrong in [
            json!({"base": 10}),
            json!({"base": 10.5, "height": 5}),
            json!({"base": "10", "height": 5}),
            json!({"base": 10, "height": 5, "color": "red"}),
            json!({"base": 11, "height": 5}),
        ] {
            assert!(check(&q, &a, &[call(wrong.clone())]).is_err(), "{wrong}");
        }
        assert!(check(&q, &a, &[]).is_err());
    }

    #[test]
    fn standardisation_is_bfcl_s() {
        assert_eq!(standardize("New York, NY"), "newyorkny");
        assert_eq!(standardize("it's"), "it\"s");
    }
}

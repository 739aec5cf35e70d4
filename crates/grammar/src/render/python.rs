//! Tools as Python `def` signatures with docstrings, the form Cohere's Command-R models
//! read:
//!
//! ````text
//! ```python
//! def get_weather(location: str, days: Optional[int] = None) -> List[Dict]:
//!     """Get the weather
//!
//!     Args:
//!         location (str): The city
//!         days (Optional[int]): How many days
//!     """
//!     pass
//! ```
//! ````
//!
//! Two templates print this form and differ in detail, so [`CohereFlavor`] picks one:
//! Cohere's own Hugging Face template (`tool_use` of `c4ai-command-r-plus`, macros
//! `new_tool_parser` and `json_to_python_type`) and Ollama's `command-r` template, which
//! seed 003 shows. Blocks are joined by a blank line; the text around them belongs to the
//! caller's prompt.

use super::{alternatives, field, properties, required, str_field, tools, type_names};
use super::{Tool, MAX_DEPTH};
use serde_json::Value;

/// Which template's details to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CohereFlavor {
    /// Cohere's Hugging Face template: Python type names (`str`, `int`, `float`, `bool`,
    /// `List[…]`, `Dict[str, …]`, `Union[…]`), `Optional[T] = None` for parameters not
    /// required, `"""` docstrings, parameters in the order the schema lists them.
    HuggingFace,
    /// Ollama's template (seed 003): JSON Schema type names as written (`string`,
    /// `integer`), each parameter followed by `, `, `'''` docstrings, parameters sorted
    /// by name as Go ranges over a map.
    Ollama,
}

/// One ```` ```python ```` block per tool, blank-line separated.
pub fn cohere_signatures(tools_list: &[Value], flavor: CohereFlavor) -> String {
    tools(tools_list)
        .map(|tool| signature(&tool, flavor))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// How one parameter shows in the signature and in `Args:`.
struct Param<'a> {
    name: &'a str,
    annotation: String,
    doc_type: String,
    description: &'a str,
}

/// One tool's block: the `def` line, the docstring with its `Args:`, `pass`.
fn signature(tool: &Tool<'_>, flavor: CohereFlavor) -> String {
    let params = params(tool.parameters, flavor);
    let (list, quote) = match flavor {
        CohereFlavor::HuggingFace => (
            params
                .iter()
                .map(|p| format!("{}: {}", p.name, p.annotation))
                .collect::<Vec<_>>()
                .join(", "),
            "\"\"\"",
        ),
        CohereFlavor::Ollama => (
            params
                .iter()
                .map(|p| format!("{}: {}, ", p.name, p.annotation))
                .collect(),
            "'''",
        ),
    };
    let mut out = format!(
        "```python\ndef {}({list}) -> List[Dict]:\n    {quote}{}",
        tool.name, tool.description
    );
    if !params.is_empty() {
        out.push_str("\n\n    Args:");
        for p in &params {
            out.push_str(&format!(
                "\n        {} ({}): {}",
                p.name, p.doc_type, p.description
            ));
        }
    }
    out.push_str(&format!("\n    {quote}\n    pass\n```"));
    out
}

/// The parameters of a tool in the flavor's order, typed the flavor's way.
fn params(parameters: &Value, flavor: CohereFlavor) -> Vec<Param<'_>> {
    let required = required(parameters);
    let mut params: Vec<Param<'_>> = properties(parameters)
        .map(|(name, prop)| {
            let (annotation, doc_type) = match flavor {
                CohereFlavor::HuggingFace if required.contains(&name) => {
                    let ty = python_type(prop, 0);
                    (ty.clone(), ty)
                }
                CohereFlavor::HuggingFace => {
                    let ty = python_type(prop, 0);
                    (format!("Optional[{ty}] = None"), format!("Optional[{ty}]"))
                }
                CohereFlavor::Ollama => {
                    let ty = go_property_type(prop);
                    (ty.clone(), ty)
                }
            };
            Param {
                name,
                annotation,
                doc_type,
                description: str_field(prop, "description").unwrap_or(""),
            }
        })
        .collect();
    if flavor == CohereFlavor::Ollama {
        params.sort_by(|a, b| a.name.cmp(b.name));
    }
    params
}

/// `json_to_python_type`. Where the template fails or prints nonsense (`List[Union[]]`
/// for every array, because Jinja reads `spec.items` as the dict method; no type at all;
/// `null`, which it recurses on forever) this prints what the macro means to:
/// `List[T]`, `Dict[str, T]` (`Any` when unknown), `None`, `Any`, and a `Union[…]` of
/// `anyOf`/`oneOf` alternatives written like the macro's union of a `type` list.
fn python_type(spec: &Value, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "Any".into();
    }
    match field(spec, "type") {
        Some(Value::String(name)) => named_type(name, spec, depth),
        Some(Value::Array(_)) => {
            let names = type_names(spec);
            let members: Vec<_> = names
                .iter()
                .map(|name| named_type(name, &Value::Null, depth))
                .collect();
            format!("Union[{}]", members.join(","))
        }
        _ => match alternatives(spec) {
            Some(alts) if !alts.is_empty() => {
                let members: Vec<_> = alts.iter().map(|a| python_type(a, depth + 1)).collect();
                format!("Union[{}]", members.join(","))
            }
            _ => "Any".into(),
        },
    }
}

/// The Python name for one JSON Schema type name; `spec` supplies `items` and
/// `additionalProperties`.
fn named_type(name: &str, spec: &Value, depth: usize) -> String {
    match name {
        "string" => "str".into(),
        "number" => "float".into(),
        "integer" => "int".into(),
        "boolean" => "bool".into(),
        "null" => "None".into(),
        "array" => {
            let item = field(spec, "items").map_or("Any".into(), |i| python_type(i, depth + 1));
            format!("List[{item}]")
        }
        "object" => {
            let value = match field(spec, "additionalProperties") {
                Some(schema @ Value::Object(map)) if !map.is_empty() => {
                    python_type(schema, depth + 1)
                }
                _ => "Any".into(),
            };
            format!("Dict[str, {value}]")
        }
        _ => "Any".into(),
    }
}

/// How Ollama prints a property's `Type`: its one type name, `[a b]` for several (Go's
/// `%v` of a string slice), nothing when it has none.
fn go_property_type(prop: &Value) -> String {
    match type_names(prop).as_slice() {
        [] => String::new(),
        [one] => (*one).into(),
        many => format!("[{}]", many.join(" ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<Value> {
        serde_json::from_str(
            r#"[
 {"type":"function","function":{"name":"get_weather","description":"Get the weather","parameters":{"type":"object","properties":{
   "location":{"type":"string","description":"City and state"},
   "days":{"type":"integer","description":"How many"},
   "ratio":{"type":"number","description":"R"},
   "flag":{"type":"boolean","description":"F"},
   "tags":{"type":"array","items":{"type":"string"},"description":"T"},
   "grid":{"type":"array","items":{"type":"array","items":{"type":"integer"}},"description":"G"},
   "meta":{"type":"object","additionalProperties":{"type":"string"},"description":"M"},
   "multi":{"type":["string","integer"],"description":"U"}
 },"required":["location","days"]}}},
 {"type":"function","function":{"name":"noop","description":"Does nothing","parameters":{"type":"object","properties":{}}}}
]"#,
        )
        .unwrap()
    }

    /// What Cohere's template (`new_tool_parser`, Python jinja2 3.1.6) renders for
    /// `tools`, but `List[str]` and `List[List[int]]` where it prints `List[Union[]]`.
    #[test]
    fn hugging_face_flavor_matches_cohere_template() {
        let expected = r#"```python
def get_weather(location: str, days: int, ratio: Optional[float] = None, flag: Optional[bool] = None, tags: Optional[List[str]] = None, grid: Optional[List[List[int]]] = None, meta: Optional[Dict[str, str]] = None, multi: Optional[Union[str,int]] = None) -> List[Dict]:
    """Get the weather

    Args:
        location (str): City and state
        days (int): How many
        ratio (Optional[float]): R
        flag (Optional[bool]): F
        tags (Optional[List[str]]): T
        grid (Optional[List[List[int]]]): G
        meta (Optional[Dict[str, str]]): M
        multi (Optional[Union[str,int]]): U
    """
    pass
```

```python
def noop() -> List[Dict]:
    """Does nothing
    """
    pass
```"#;
        assert_eq!(
            cohere_signatures(&tools(), CohereFlavor::HuggingFace),
            expected
        );
    }

    /// What Ollama's `command-r` template prints for `tools`: sorted names, `[a b]` for
    /// a type list.
    #[test]
    fn ollama_flavor_sorts_and_prints_go_types() {
        let expected = r#"```python
def get_weather(days: integer, flag: boolean, grid: array, location: string, meta: object, multi: [string integer], ratio: number, tags: array, ) -> List[Dict]:
    '''Get the weather

    Args:
        days (integer): How many
        flag (boolean): F
        grid (array): G
        location (string): City and state
        meta (object): M
        multi ([string integer]): U
        ratio (number): R
        tags (array): T
    '''
    pass
```

```python
def noop() -> List[Dict]:
    '''Does nothing
    '''
    pass
```"#;
        assert_eq!(cohere_signatures(&tools(), CohereFlavor::Ollama), expected);
    }

    #[test]
    fn types_the_template_cannot_print_get_their_meaning() {
        let cases = [
            (json!({}), "Any"),
            (json!({"type": "null"}), "None"),
            (json!({"type": ["string", "null"]}), "Union[str,None]"),
            (json!({"type": "array"}), "List[Any]"),
            (json!({"type": "object"}), "Dict[str, Any]"),
            (
                json!({"type": "object", "additionalProperties": true}),
                "Dict[str, Any]",
            ),
            (
                json!({"anyOf": [{"type": "integer"}, {"type": "string"}]}),
                "Union[int,str]",
            ),
            (json!({"type": "date"}), "Any"),
            (json!("not a schema"), "Any"),
        ];
        for (schema, expected) in cases {
            assert_eq!(python_type(&schema, 0), expected, "{schema}");
        }
    }

    #[test]
    fn deep_arrays_stop_at_the_depth_bound() {
        let mut schema = json!({"type": "string"});
        for _ in 0..(MAX_DEPTH * 3) {
            schema = json!({"type": "array", "items": schema});
        }
        let ty = python_type(&schema, 0);
        assert!(ty.contains("List[Any]"));
        assert!(!ty.contains("str"));
    }
}

//! Tools as TypeScript declarations in a `namespace functions { … }` block, the form
//! Functionary models read.
//!
//! Two generators of this form are in use, and they disagree on layout, so each has its
//! own function here:
//!
//! - [`functionary_namespace`] is the `functionary_v2` prompt style of seed 000
//!   (`TYPESCRIPT_FUNCTIONARY_V2`), written by llama.cpp's `examples/openai` prompting
//!   code (`_tools_typescript_signatures` over `SchemaToTypeScriptConverter.visit`):
//!   unindented, no trailing commas, unions as `"a"|"b"`, nested types written inline.
//!   It reproduces the seed byte for byte, and follows that converter for what the seed
//!   does not show.
//! - [`meetkai_namespace`] is MeetKai's own `generate_schema_from_functions`, as the
//!   Functionary v3.x chat templates carry it in Jinja (`json_to_ts_schema.txt`, the
//!   macros of `meetkai-functionary-medium-v3.2.jinja`): a blank line after the opening
//!   brace, trailing commas, nested objects indented four spaces a level, `"a" | "b"`,
//!   and comments that add `Default=`, `Format=`, `Maximum=`… and examples.
//!
//! Where a reference would raise (a field of the wrong JSON type) the renderers read the
//! field as absent; where MeetKai's macros print an empty type, `any` is printed, as its
//! Python original does.

use super::{
    alternatives, field, list_field, object_field, properties, required, str_field, tools, truthy,
    MAX_DEPTH,
};
use serde_json::{json, Map, Value};
use toolbridge_pyrepr::{json_dumps, python_str};

/// The line both generators open with.
const HEADER: &str = "// Supported function definitions that should be called when necessary.\n";

/// The `functionary_v2` prompt style's system message (seed 000): a header line and one
/// `type name = (_: {…}) => any;` per tool, each under its description as a comment.
pub fn functionary_namespace(tools_list: &[Value]) -> String {
    let signatures: Vec<String> = tools(tools_list)
        .map(|tool| {
            format!(
                "{}type {} = (_: {}) => any;\n",
                comment(tool.description),
                tool.name,
                visit(tool.parameters, 0)
            )
        })
        .collect();
    format!(
        "{HEADER}namespace functions {{\n{}}} // namespace functions",
        signatures.join("\n")
    )
}

/// `// text`, one comment line for each line of the text.
fn comment(text: &str) -> String {
    format!("// {}\n", text.replace('\n', "\n// "))
}

/// The comment above a property: its description, when it has a non-empty one.
fn description_comment(schema: &Value) -> String {
    match str_field(schema, "description") {
        Some(d) if !d.is_empty() => comment(d),
        _ => String::new(),
    }
}

/// The TypeScript type of a schema, case by case in the converter's order.
fn visit(schema: &Value, depth: usize) -> String {
    if depth > MAX_DEPTH || !schema.is_object() {
        return "any".into();
    }
    let ty = field(schema, "type");
    let untyped_or = |name: &str| match ty {
        None | Some(Value::Null) => true,
        Some(t) => t.as_str() == Some(name),
    };
    if let Some(alts) = alternatives(schema) {
        return join(alts.iter().map(|s| visit(s, depth + 1)), "|");
    }
    if let Some(Value::Array(names)) = ty {
        let each = names
            .iter()
            .map(|t| visit(&json!({ "type": t }), depth + 1));
        return join(each, "|");
    }
    if let Some(constant) = field(schema, "const") {
        return json_dumps(constant);
    }
    if let Some(values) = field(schema, "enum") {
        return match values {
            Value::Array(values) => join(values.iter().map(json_dumps), "|"),
            other => json_dumps(other),
        };
    }
    if untyped_or("object") {
        if let Some(object) = object_of(schema, depth) {
            return object;
        }
    }
    if untyped_or("array") {
        if let Some(items) = array_items(schema) {
            return array_of(items, depth);
        }
    }
    if untyped_or("string") && str_field(schema, "format") == Some("date-time") {
        return "Date".into();
    }
    match ty.and_then(Value::as_str) {
        Some("object") => "any".into(),
        Some("integer") => "number".into(),
        Some(name) if !name.is_empty() => name.into(),
        _ => "any".into(),
    }
}

/// The object type of a schema with `properties`, an `additionalProperties` other than
/// `true`, or an `allOf`.
fn object_of(schema: &Value, depth: usize) -> Option<String> {
    let additional = field(schema, "additionalProperties");
    if field(schema, "properties").is_some() || additional.is_some_and(|a| a != &Value::Bool(true))
    {
        let props: Vec<_> = properties(schema).collect();
        return Some(object_type(&props, &required(schema), additional, depth));
    }
    list_field(schema, "allOf").map(|parts| all_of(parts, depth))
}

/// `T[]` for one item schema, `[A, B][]` for a tuple of them.
fn array_of(items: &Value, depth: usize) -> String {
    match items {
        Value::Array(tuple) => {
            let each = tuple.iter().map(|s| visit(s, depth + 1));
            format!("[{}][]", join(each, ", "))
        }
        items => format!("{}[]", visit(items, depth + 1)),
    }
}

/// `items` when it is truthy, else `prefixItems` (else `items` again, however falsy).
fn array_items(schema: &Value) -> Option<&Value> {
    let items = field(schema, "items");
    match (items, field(schema, "prefixItems")) {
        (Some(items), _) if truthy(items) => Some(items),
        (_, Some(prefix)) => Some(prefix),
        (items, None) => items,
    }
}

/// An object type: one line per property (`name?: type`, under its description) and one
/// `[key: string]: type` line for `additionalProperties` other than `false`.
fn object_type(
    props: &[(&str, &Value)],
    required_names: &[&str],
    additional: Option<&Value>,
    depth: usize,
) -> String {
    let mut lines: Vec<String> = props
        .iter()
        .map(|(name, prop)| {
            let mark = if required_names.contains(name) {
                ""
            } else {
                "?"
            };
            format!(
                "{}{name}{mark}: {}",
                description_comment(prop),
                visit(prop, depth + 1)
            )
        })
        .collect();
    let additional = match additional {
        Some(Value::Bool(true)) => Some(&Value::Object(Map::new())),
        Some(Value::Bool(false)) | None => None,
        Some(other) => Some(other),
    };
    if let Some(extra) = additional {
        lines.push(format!(
            "{}[key: string]: {}",
            description_comment(extra),
            visit(extra, depth + 1)
        ));
    }
    format!("{{\n{}\n}}", lines.join(",\n"))
}

/// `allOf` merged into one object: properties of each part are required, those of the
/// parts of an `anyOf` inside it are optional; unresolved `$ref` parts are skipped.
fn all_of(parts: &[Value], depth: usize) -> String {
    let components = parts
        .iter()
        .flat_map(|part| match list_field(part, "anyOf") {
            Some(alts) => alts.iter().map(|alt| (alt, false)).collect(),
            None => vec![(part, true)],
        });
    let mut props = Vec::new();
    let mut names_required = Vec::new();
    for (part, is_required) in components.filter(|(part, _)| field(part, "$ref").is_none()) {
        for (name, prop) in properties(part) {
            props.push((name, prop));
            if is_required {
                names_required.push(name);
            }
        }
    }
    let any = Value::Object(Map::new());
    object_type(&props, &names_required, Some(&any), depth)
}

fn join(parts: impl Iterator<Item = String>, separator: &str) -> String {
    parts.collect::<Vec<_>>().join(separator)
}

/// MeetKai's `generate_schema_from_functions`: the namespace Functionary v2 and v3
/// models were trained on. A tool without properties reads `type name = () => any;`.
pub fn meetkai_namespace(tools_list: &[Value]) -> String {
    let mut out = format!("{HEADER}namespace functions {{\n\n");
    for tool in tools(tools_list) {
        out.push_str(&format!("// {}\ntype {}", tool.description, tool.name));
        match object_field(tool.parameters, "properties").filter(|p| !p.is_empty()) {
            Some(_) => {
                out.push_str(" = (_: {");
                out.push_str(&parameter_lines(tool.parameters, 0));
                out.push_str("\n}) => any;\n\n");
            }
            None => out.push_str(" = () => any;\n\n"),
        }
    }
    out.push_str("} // namespace functions");
    out
}

/// Four spaces a nesting level.
fn indent(depth: usize) -> String {
    "    ".repeat(depth)
}

/// `get_parameter_typescript` over an object schema's properties, in order; properties
/// that are not objects are left out.
fn parameter_lines(schema: &Value, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return String::new();
    }
    let required_names = required(schema);
    let mut out = String::new();
    for (name, param) in properties(schema).filter(|(_, p)| p.is_object()) {
        let mut declaration = name.to_owned();
        if !required_names.contains(&name) {
            declaration.push('?');
        }
        property_lines(&mut out, name, &declaration, param, depth);
    }
    out
}

/// One property: `\n` + each comment line, then `\n` + its declaration (`name?: type,`,
/// or an object or array type spread over lines).
fn property_lines(out: &mut String, name: &str, declaration: &str, param: &Value, depth: usize) {
    let offset = indent(depth);
    let info = param_info(param);
    let examples = examples(name, param);
    let ty = param_type(param);
    let typed_items = field(param, "items")
        .and_then(|i| field(i, "type"))
        .is_some();
    if ty == "object" {
        comment_lines(out, &offset, info.as_deref(), &examples, true);
        out.push_str(&format!("\n{offset}{declaration}: {{"));
        out.push_str(&parameter_lines(param, depth + 1));
        out.push_str(&format!("\n{offset}}},"));
    } else if ty == "array" && typed_items {
        comment_lines(out, &offset, info.as_deref(), &examples, true);
        let mut array = array_type(Some(declaration), param, depth);
        if !array.ends_with(',') {
            array.push(',');
        }
        out.push_str(&array);
    } else {
        let ty = if ty == "array" {
            "[]".into()
        } else {
            scalar_type(param, ty)
        };
        comment_lines(out, &offset, info.as_deref(), &examples, false);
        out.push_str(&format!("\n{offset}{declaration}: {ty},"));
    }
}

/// A property's comment line and its example lines. Objects and typed arrays show
/// examples even without a comment; other properties only under one.
fn comment_lines(
    out: &mut String,
    offset: &str,
    info: Option<&str>,
    examples: &[String],
    examples_alone: bool,
) {
    if let Some(info) = info {
        out.push_str(&format!("\n{offset}{info}"));
    }
    if info.is_some() || examples_alone {
        for example in examples {
            out.push_str(&format!("\n{offset}// {example}"));
        }
    }
}

/// `Example name:` and each of `examples`, printed by Python's `str` with `'` made `"`.
fn examples(name: &str, param: &Value) -> Vec<String> {
    let Some(values) = list_field(param, "examples") else {
        return Vec::new();
    };
    std::iter::once(format!("Example {name}:"))
        .chain(values.iter().map(python_str))
        .map(|line| line.replace('\'', "\""))
        .collect()
}

/// A scalar property's type: its enum as a union of literals, `| null` when nullable.
fn scalar_type(param: &Value, ty: String) -> String {
    let mut ty = match list_field(param, "enum") {
        Some(values) => enum_union(values),
        None => ty,
    };
    if field(param, "nullable").is_some_and(truthy) {
        ty.push_str(" | null");
    }
    ty
}

/// `get_param_type`: the `type` keyword printed by Python's `str` (a list joined with
/// `" | "`), else the distinct types of `oneOf`'s alternatives; `integer` and `float`
/// alone read `number`; no type at all reads `any`.
fn param_type(param: &Value) -> String {
    let ty = match (field(param, "type"), field(param, "oneOf")) {
        (Some(Value::Array(names)), _) => join(names.iter().map(python_str), " | "),
        (Some(Value::Object(map)), _) => join(map.keys().cloned(), " | "),
        (Some(ty), _) => python_str(ty),
        (None, Some(alts)) => one_of_types(alts),
        (None, None) => String::new(),
    };
    match ty.as_str() {
        "integer" | "float" => "number".into(),
        "" => "any".into(),
        _ => ty,
    }
}

/// The `type`s of `oneOf`'s alternatives, first occurrences only (strings compared
/// without case, as Jinja's `unique` does), joined with `" | "`.
fn one_of_types(alts: &Value) -> String {
    let mut seen: Vec<&Value> = Vec::new();
    let alts = alts.as_array().map(Vec::as_slice).unwrap_or_default();
    for ty in alts.iter().filter_map(|alt| field(alt, "type")) {
        if !seen.iter().any(|s| unique_key_eq(s, ty)) {
            seen.push(ty);
        }
    }
    join(seen.into_iter().map(python_str), " | ")
}

/// Whether Jinja's `unique` counts two values as one.
fn unique_key_eq(a: &Value, b: &Value) -> bool {
    match (a.as_str(), b.as_str()) {
        (Some(a), Some(b)) => a.to_lowercase() == b.to_lowercase(),
        _ => py_eq(a, b),
    }
}

/// Python's `==` on JSON values, where `True == 1 == 1.0`.
fn py_eq(a: &Value, b: &Value) -> bool {
    let number = |v: &Value| match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    };
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// `get_enum_option_str`: strings in double quotes (unescaped), other values by Python's
/// `str`, with `" | "` after each value unless it equals the last one.
fn enum_union(values: &[Value]) -> String {
    let Some(last) = values.last() else {
        return String::new();
    };
    let mut out = String::new();
    for value in values {
        match value {
            Value::String(s) => out.push_str(&format!("\"{s}\"")),
            other => out.push_str(&python_str(other)),
        }
        if !py_eq(value, last) {
            out.push_str(" | ");
        }
    }
    out
}

/// `get_param_info`: `// ` + description (with a final `.`), `Default=…`, `Format=…`
/// and the bounds; `None` when the property has none of them.
fn param_info(param: &Value) -> Option<String> {
    let has = |key: &str| field(param, key).is_some();
    let format = format_info(param);
    let bounded = ["maximum", "minimum", "maxLength", "minLength"]
        .iter()
        .any(|key| field(param, key).is_some_and(truthy));
    if !(has("description") || has("default") || format.is_some() || bounded) {
        return None;
    }
    let mut info = String::from("//");
    if let Some(description) = field(param, "description") {
        let mut description = python_str(description);
        if !description.ends_with('.') {
            description.push('.');
        }
        info.push_str(&format!(" {description}"));
    }
    if let Some(default) = field(param, "default") {
        let mut default = python_str(default);
        if str_field(param, "type") == Some("string") {
            default = format!("\"{default}\"");
        }
        info.push_str(&format!(" Default={default}."));
    }
    if let Some(format) = format {
        info.push_str(&format!(" Format={format}"));
    }
    let bounds = [
        ("maximum", "Maximum"),
        ("minimum", "Minimum"),
        ("maxLength", "Maximum length"),
        ("minLength", "Minimum length"),
    ];
    for (key, label) in bounds {
        if let Some(bound) = field(param, key) {
            info.push_str(&format!(" {label}={}", python_str(bound)));
        }
    }
    Some(info)
}

/// `get_format_param`: `format`, else the formats of `oneOf`'s alternatives, each but
/// one equal to the last alternative's followed by `" or "` (so `oneOf` without formats
/// gives an empty format, as the macros do).
fn format_info(param: &Value) -> Option<String> {
    if let Some(format) = field(param, "format") {
        return Some(python_str(format));
    }
    let alts = field(param, "oneOf")?;
    let alts = alts.as_array().map(Vec::as_slice).unwrap_or_default();
    let last = alts.last().and_then(|alt| field(alt, "format"));
    let mut out = String::new();
    for format in alts.iter().filter_map(|alt| field(alt, "format")) {
        out.push_str(&python_str(format));
        if !last.is_some_and(|last| py_eq(format, last)) {
            out.push_str(" or ");
        }
    }
    Some(out)
}

/// `get_array_typescript`: an array property (named) or item type (unnamed). A name
/// that is empty counts as absent where the macro tests it for truth.
fn array_type(name: Option<&str>, param: &Value, depth: usize) -> String {
    let offset = indent(depth);
    let named = name.filter(|n| !n.is_empty());
    let items = field(param, "items").filter(|i| truthy(i) && i.is_object() && depth <= MAX_DEPTH);
    let Some(items) = items else {
        return match named {
            Some(name) => format!("\n{offset}{name}: []"),
            None => format!("\n{offset}[]"),
        };
    };
    let ty = param_type(items);
    if ty == "object" {
        let open = match named {
            Some(name) => format!("\n{offset}{name}: {{"),
            None => format!("\n{offset}{{"),
        };
        let body = parameter_lines(items, depth + 1);
        return format!("{open}{body}\n{offset}}}[]");
    }
    if ty == "array" {
        let inner = array_type(None, items, depth + 1);
        return match named {
            Some(name) => format!("\n{offset}{name}: {}[]", inner.trim()),
            None => format!("\n{inner}[]"),
        };
    }
    match (name, list_field(items, "enum")) {
        (None, Some(values)) => format!("({})[]", enum_union(values)),
        (Some(name), Some(values)) => format!("\n{offset}{name}: ({})[]", enum_union(values)),
        (None, None) => format!("\n{ty}[]"),
        (Some(name), None) => format!("\n{offset}{name}: {ty}[],"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Properties the seed does not show, one of each kind.
    fn rich_tools() -> Vec<Value> {
        serde_json::from_str(
            r#"[
 {"type":"function","function":{"name":"get_weather","description":"Get the weather\nfor a place","parameters":{"type":"object","properties":{
   "location":{"type":"string","description":"City and state, e.g. San Francisco, CA"},
   "unit":{"type":"string","enum":["celsius","fahrenheit"],"description":"Unit.","default":"celsius"},
   "days":{"type":"integer","minimum":1,"maximum":14},
   "tags":{"type":"array","items":{"type":"string"}},
   "filters":{"type":"object","description":"Filters","properties":{"min":{"type":"number"},"kinds":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["min"]},
   "points":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number","description":"y coord"}},"required":["x"]}},
   "grid":{"type":"array","items":{"type":"array","items":{"type":"integer"}}},
   "when":{"type":"string","format":"date-time"},
   "maybe":{"type":["string","null"]},
   "choice":{"oneOf":[{"type":"string"},{"type":"integer"}]},
   "flag":{"type":"boolean","examples":[true, "it's"]},
   "level":{"type":"integer","enum":[1,2,3]},
   "anything":{},
   "nul":{"type":"string","nullable":true},
   "ratio":{"type":"number","default":0.5}
 },"required":["location","days"]}}},
 {"type":"function","function":{"name":"noop","description":"Does nothing"}},
 {"name":"bare","parameters":{"type":"object","properties":{}}}
]"#,
        )
        .unwrap()
    }

    /// What llama.cpp's `_tools_typescript_signatures` prints for `rich_tools`.
    #[test]
    fn functionary_style_follows_its_converter_where_the_seed_is_silent() {
        let expected = r#"// Supported function definitions that should be called when necessary.
namespace functions {
// Get the weather
// for a place
type get_weather = (_: {
// City and state, e.g. San Francisco, CA
location: string,
// Unit.
unit?: "celsius"|"fahrenheit",
days: number,
tags?: string[],
// Filters
filters?: {
min: number,
kinds?: "a"|"b"[]
},
points?: {
x: number,
// y coord
y?: number
}[],
grid?: number[][],
when?: Date,
maybe?: string|null,
choice?: string|number,
flag?: boolean,
level?: 1|2|3,
anything?: any,
nul?: string,
ratio?: number
}) => any;

// Does nothing
type noop = (_: any) => any;

// 
type bare = (_: {

}) => any;
} // namespace functions"#;
        assert_eq!(functionary_namespace(&rich_tools()), expected);
    }

    /// What the Functionary v3.2 template's `generate_schema_from_functions` renders for
    /// `rich_tools` (Python jinja2 3.1.6), but `anything?: any,` where it prints
    /// `anything?: ,`.
    #[test]
    fn meetkai_style_matches_the_functionary_template() {
        let expected = r#"// Supported function definitions that should be called when necessary.
namespace functions {

// Get the weather
for a place
type get_weather = (_: {
// City and state, e.g. San Francisco, CA.
location: string,
// Unit. Default="celsius".
unit?: "celsius" | "fahrenheit",
// Maximum=14 Minimum=1
days: number,
tags?: string[],
// Filters.
filters?: {
    min: number,
    kinds?: ("a" | "b")[],
},
points?: {
    x: number,
    // y coord.
    y?: number,
}[],
grid?: number[][],
// Format=date-time
when?: string,
maybe?: string | null,
// Format=
choice?: string | integer,
flag?: boolean,
level?: 1 | 2 | 3,
anything?: any,
nul?: string | null,
// Default=0.5.
ratio?: number,
}) => any;

// Does nothing
type noop = () => any;

// 
type bare = () => any;

} // namespace functions"#;
        assert_eq!(meetkai_namespace(&rich_tools()), expected);
    }

    /// Objects in arrays in objects, examples, and an array without item types, as the
    /// Functionary v3.2 template renders them.
    #[test]
    fn meetkai_style_nests_and_shows_examples() {
        let tools = [json!({"name": "f", "description": "d", "parameters": {
        "properties": {
            "o": {"type": "object", "examples": [{"k": "v"}], "properties": {
                "rows": {"type": "array", "description": "Rows", "items": {
                    "type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
                "any_list": {"type": "array", "items": {}},
                "mode": {"type": "string", "enum": ["x", "y"], "description": "m", "examples": ["x"]}
            }, "required": ["rows"]}
        }}})];
        let expected = r#"// Supported function definitions that should be called when necessary.
namespace functions {

// d
type f = (_: {
// Example o:
// {"k": "v"}
o?: {
    // Rows.
    rows: {
        id: number,
    }[],
    any_list?: [],
    // m.
    // Example mode:
    // x
    mode?: "x" | "y",
},
}) => any;

} // namespace functions"#;
        assert_eq!(meetkai_namespace(&tools), expected);
    }

    #[test]
    fn deep_schemas_stop_at_the_depth_bound() {
        let mut schema = json!({"type": "string"});
        for _ in 0..(MAX_DEPTH * 3) {
            schema = json!({"type": "object", "properties": {"n": schema}});
        }
        let tools = [json!({"name": "deep", "parameters": schema})];
        assert!(functionary_namespace(&tools).contains("n?: any"));
        assert!(meetkai_namespace(&tools).contains("n?: {\n"));
    }
}

//! Ollama's structs as template values, with the Go types they stand for.
//!
//! `gotmpl` has maps and lists but no typed structs, while Ollama's templates depend on
//! Go types: `{{ .Function }}` prints a tool's JSON because `api.ToolFunction` has a
//! `String()` method, `{{ $prop.Type }}` prints `string` rather than `[string]`, and
//! `toTypeScriptType` only accepts an `api.ToolProperty`. Each struct becomes a map of
//! its Go field names, and [`Objects`] (in [`super::objects`]) remembers, by the address of that map or list
//! (which every copy inside the engine shares), which Go type it is and how Go prints
//! and marshals it. Everything here is computed once per render, before it starts.

use gotmpl::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::gofmt::{self, Printing};
use super::gojson;
use super::model::{
    GoAny, Message, PropertyType, Tool, ToolCall, ToolCallFunction, ToolFunction,
    ToolFunctionParameters, ToolProperty,
};
use super::objects::{GoObject, Kind, Objects};

/// Whether a Go type's `String()` method has a value or a pointer receiver.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stringer {
    None,
    Value,
    Pointer,
}

/// Builds template values and records their Go types.
#[derive(Default)]
pub struct Builder {
    pub objects: Objects,
}

impl Builder {
    pub fn messages(&mut self, messages: &[Message]) -> Value {
        list(messages.iter().map(|message| self.message(message)))
    }

    /// `.Tools`: Go's `api.Tools`, nil when the request had none.
    pub fn tools(&mut self, tools: Option<&[Tool]>) -> Value {
        let items = tools.unwrap_or_default();
        let value = list(items.iter().map(|tool| self.tool(tool)));
        let json = gojson::to_string(&tools);
        self.record(
            &value,
            Kind::Tools,
            json.clone(),
            Some(json),
            Stringer::Value,
        );
        value
    }

    fn message(&mut self, message: &Message) -> Value {
        let tool_calls = list(message.tool_calls.iter().map(|call| self.tool_call(call)));
        let fields = vec![
            ("Role", string(&message.role)),
            ("Content", string(&message.content)),
            ("Thinking", string(&message.thinking)),
            ("Images", list([])),
            ("ToolCalls", tool_calls),
            ("ToolName", string(&message.tool_name)),
            ("ToolCallID", string(&message.tool_call_id)),
        ];
        self.structure(Kind::Message, message, fields, None, Stringer::None)
    }

    fn tool_call(&mut self, call: &ToolCall) -> Value {
        let function = self.tool_call_function(&call.function);
        let fields = vec![("ID", string(&call.id)), ("Function", function)];
        self.structure(Kind::ToolCall, call, fields, None, Stringer::None)
    }

    fn tool_call_function(&mut self, function: &ToolCallFunction) -> Value {
        let arguments = self.arguments(&function.arguments);
        let fields = vec![
            ("Index", Value::Int(function.index)),
            ("Name", string(&function.name)),
            ("Arguments", arguments),
        ];
        self.structure(
            Kind::ToolCallFunction,
            function,
            fields,
            None,
            Stringer::None,
        )
    }

    /// `api.ToolCallFunctionArguments`: a `map[string]any` whose `String()` is its JSON.
    fn arguments(&mut self, arguments: &BTreeMap<String, GoAny>) -> Value {
        let value = map(arguments.iter().map(|(k, v)| (k.as_str(), any(v))));
        let json = gojson::to_string(arguments);
        self.record(
            &value,
            Kind::Arguments,
            json.clone(),
            Some(json),
            Stringer::Pointer,
        );
        value
    }

    fn tool(&mut self, tool: &Tool) -> Value {
        let function = self.tool_function(&tool.function);
        let fields = vec![
            ("Type", string(&tool.kind)),
            ("Items", optional_any(&tool.items)),
            ("Function", function),
        ];
        let json = gojson::to_string(tool);
        self.structure(Kind::Tool, tool, fields, Some(json), Stringer::Value)
    }

    fn tool_function(&mut self, function: &ToolFunction) -> Value {
        let parameters = self.parameters(&function.parameters);
        let fields = vec![
            ("Name", string(&function.name)),
            ("Description", string(&function.description)),
            ("Parameters", parameters),
        ];
        let json = gojson::to_string(function);
        self.structure(
            Kind::ToolFunction,
            function,
            fields,
            Some(json),
            Stringer::Pointer,
        )
    }

    fn parameters(&mut self, parameters: &ToolFunctionParameters) -> Value {
        let properties = self.properties(parameters.properties.as_ref());
        let fields = vec![
            ("Type", string(&parameters.kind)),
            ("Defs", optional_any(&parameters.defs)),
            ("Items", optional_any(&parameters.items)),
            (
                "Required",
                list(parameters.required.iter().map(|s| string(s))),
            ),
            ("Properties", properties),
        ];
        let json = gojson::to_string(parameters);
        self.structure(
            Kind::Parameters,
            parameters,
            fields,
            Some(json),
            Stringer::Pointer,
        )
    }

    fn properties(&mut self, properties: Option<&BTreeMap<String, ToolProperty>>) -> Value {
        let entries = properties.into_iter().flatten();
        let built: Vec<(&str, Value)> = entries
            .map(|(name, property)| (name.as_str(), self.property(property)))
            .collect();
        map(built)
    }

    fn property(&mut self, property: &ToolProperty) -> Value {
        let any_of = list(property.any_of.iter().map(|p| self.property(p)));
        let kind = self.property_type(&property.kind);
        let properties = self.properties(Some(&property.properties));
        let fields = vec![
            ("AnyOf", any_of),
            ("Type", kind),
            ("Items", optional_any(&property.items)),
            ("Description", string(&property.description)),
            ("Enum", list(property.enumeration.iter().map(any))),
            ("Properties", properties),
        ];
        self.structure(Kind::Property, property, fields, None, Stringer::None)
    }

    fn property_type(&mut self, kind: &PropertyType) -> Value {
        let value = list(kind.0.iter().map(|s| string(s)));
        let printed = kind.go_string();
        self.record(
            &value,
            Kind::PropertyType,
            gojson::to_string(kind),
            Some(printed),
            Stringer::Value,
        );
        value
    }

    /// A struct: a map of its fields, printed by its `String()` or as `{f1 f2 …}` with
    /// the fields in declaration order.
    fn structure<T: serde::Serialize>(
        &mut self,
        kind: Kind,
        go_value: &T,
        fields: Vec<(&'static str, Value)>,
        string_method: Option<String>,
        stringer: Stringer,
    ) -> Value {
        let syntax = struct_syntax(&fields, &self.objects);
        let value = map(fields);
        let json = gojson::to_string(go_value);
        self.register(&value, kind, json, string_method, stringer, syntax);
        value
    }

    /// Records a map or list type; `string_method` is its `String()` when it has one.
    fn record(
        &mut self,
        value: &Value,
        kind: Kind,
        json: String,
        string_method: Option<String>,
        stringer: Stringer,
    ) {
        let syntax = gofmt::display(value, &self.objects, Printing::Formatted);
        self.register(value, kind, json, string_method, stringer, syntax);
    }

    /// Remembers how `value` prints: by its `String()` when it has one, else as Go's
    /// `syntax` for its type; `fmt` calls `String()` only on value receivers.
    fn register(
        &mut self,
        value: &Value,
        kind: Kind,
        json: String,
        string_method: Option<String>,
        stringer: Stringer,
        syntax: String,
    ) {
        let printed = string_method.unwrap_or_else(|| syntax.clone());
        let formatted = if stringer == Stringer::Value {
            printed.clone()
        } else {
            syntax
        };
        self.objects.insert(
            value,
            GoObject {
                kind,
                json,
                printed,
                formatted,
            },
        );
    }
}

/// Go's `%v` of a struct: `{` the fields' values, space-separated `}`.
fn struct_syntax(fields: &[(&'static str, Value)], objects: &Objects) -> String {
    let shown: Vec<String> = fields
        .iter()
        .map(|(_, value)| gofmt::display(value, objects, Printing::Formatted))
        .collect();
    format!("{{{}}}", shown.join(" "))
}

/// A decoded JSON value as a template value (Go's `any`).
pub fn any(value: &GoAny) -> Value {
    match value {
        GoAny::Null => Value::Nil,
        GoAny::Bool(b) => Value::Bool(*b),
        GoAny::Number(n) => Value::Float(*n),
        GoAny::String(s) => string(s),
        GoAny::Array(items) => list(items.iter().map(any)),
        GoAny::Object(entries) => map(entries.iter().map(|(k, v)| (k.as_str(), any(v)))),
    }
}

fn optional_any(value: &Option<GoAny>) -> Value {
    value.as_ref().map_or(Value::Nil, any)
}

pub fn string(text: &str) -> Value {
    Value::String(Arc::from(text))
}

pub fn list(items: impl IntoIterator<Item = Value>) -> Value {
    Value::List(items.into_iter().collect::<Vec<_>>().into())
}

pub fn map<'a>(entries: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    let entries: BTreeMap<Arc<str>, Value> = entries
        .into_iter()
        .map(|(key, value)| (Arc::from(key), value))
        .collect();
    Value::Map(Arc::new(entries))
}

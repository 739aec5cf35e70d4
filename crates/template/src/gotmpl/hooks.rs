//! The functions a render offers: Ollama's (`json`, `currentDate`, `yesterdayDate`,
//! `toTypeScriptType`) and the hooks [`super::rewrite::instrument`] calls.
//!
//! They are built for each render around its [`RenderState`]: the Go types of its data
//! (for printing and `json`), its fuel, and its clock. Go's `print` and `println` are
//! replaced too, so that they print floats and Ollama's types as Go does.

use gotmpl::{FuncMap, Value};
use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use super::gofmt::{self, Printing};
use super::gojson;
use super::model::typescript_type;
use super::objects::{Kind, Objects};
use crate::jinja::{Clock, Limits};

/// Hook names hold a space so that no template can call or redefine them.
pub const PRINT: &str = "toolbridge print";
pub const FORMAT: &str = "toolbridge format";
pub const FORMAT_VALUE: &str = "toolbridge format value";
pub const GUARD: &str = "toolbridge guard";
pub const TICK: &str = "toolbridge tick";

/// The functions Ollama adds to Go's builtins.
pub const OLLAMA_FUNCTIONS: [&str; 4] =
    ["json", "currentDate", "yesterdayDate", "toTypeScriptType"];

/// Go's `text/template` builtins.
pub const BUILTINS: [&str; 19] = [
    "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf",
    "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
];

/// Whether a template may call `name`.
pub fn is_defined(name: &str) -> bool {
    BUILTINS.contains(&name) || OLLAMA_FUNCTIONS.contains(&name)
}

/// What one render shares between its function calls.
pub struct RenderState {
    pub objects: Objects,
    pub clock: Clock,
    fuel: AtomicU64,
    max_value_bytes: usize,
    max_built_bytes: u64,
    bytes_left: AtomicU64,
    limit_reached: AtomicBool,
}

impl RenderState {
    /// A render's state under `limits`: fuel, no string longer than the output cap,
    /// and a byte budget on all the strings its functions build.
    pub fn new(objects: Objects, clock: Clock, limits: &Limits) -> Self {
        RenderState {
            objects,
            clock,
            fuel: AtomicU64::new(limits.fuel),
            max_value_bytes: limits.max_output_bytes,
            max_built_bytes: limits.max_built_bytes,
            bytes_left: AtomicU64::new(limits.max_built_bytes),
            limit_reached: AtomicBool::new(false),
        }
    }

    /// Whether the render stopped at a bound (fuel or value size) rather than an error
    /// of the template.
    pub fn limit_reached(&self) -> bool {
        self.limit_reached.load(Ordering::Relaxed)
    }

    fn spend(&self, amount: u64) -> gotmpl::Result<()> {
        self.fuel
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(amount)
            })
            .map(drop)
            .map_err(|_| self.stop("the template ran out of fuel (it loops too long)".into()))
    }

    /// Spends `bytes` of the byte budget, before they are built where the size is known.
    fn charge(&self, bytes: usize) -> gotmpl::Result<()> {
        self.bytes_left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(bytes as u64)
            })
            .map(drop)
            .map_err(|_| {
                self.stop(format!(
                    "the template built more than {} bytes of strings",
                    self.max_built_bytes
                ))
            })
    }

    fn stop(&self, why: String) -> gotmpl::TemplateError {
        self.limit_reached.store(true, Ordering::Relaxed);
        gotmpl::TemplateError::Exec(why)
    }
}

/// The functions for one render; `with_ollama` adds Ollama's own (the last turn of the
/// per-turn path renders without them, as in Ollama).
pub fn functions(state: &Arc<RenderState>, with_ollama: bool) -> FuncMap {
    let mut map = FuncMap::new();
    let mut add = |name: &str, f: fn(&RenderState, &[Value]) -> gotmpl::Result<Value>| {
        let state = Arc::clone(state);
        map.insert(
            name.to_owned(),
            Arc::new(move |args: &[Value]| f(&state, args)),
        );
    };
    add(PRINT, print);
    add(FORMAT, format);
    add(FORMAT_VALUE, format_value);
    add("print", go_print);
    add("println", go_println);
    add(GUARD, guard);
    add(TICK, tick);
    if with_ollama {
        add("json", json);
        add("currentDate", current_date);
        add("yesterdayDate", yesterday_date);
        add("toTypeScriptType", to_typescript_type);
    }
    map
}

/// `{{ value }}`: Go's printing; nil stays nil so that the engine prints `<no value>`.
fn print(state: &RenderState, args: &[Value]) -> gotmpl::Result<Value> {
    Ok(match one(PRINT, args)? {
        value @ (Value::Nil | Value::String(_)) => value.clone(),
        value => Value::String(gofmt::display(value, &state.objects, Printing::Template).into()),
    })
}

/// Go's `print`: `gotmpl`'s prints floats as Rust does and knows no Go types.
fn go_print(state: &RenderState, args: &[Value]) -> gotmpl::Result<Value> {
    state.charge(string_bytes(args))?;
    Ok(Value::String(gofmt::sprint(args, &state.objects).into()))
}

/// Go's `println`.
fn go_println(state: &RenderState, args: &[Value]) -> gotmpl::Result<Value> {
    state.charge(string_bytes(args))?;
    Ok(Value::String(gofmt::sprintln(args, &state.objects).into()))
}

/// The bytes of the strings among `args`: what printing them copies at least.
fn string_bytes(args: &[Value]) -> usize {
    args.iter()
        .filter_map(Value::as_str)
        .fold(0, |sum, text| sum.saturating_add(text.len()))
}

/// An argument of `printf`, `html`, `js` or `urlquery`: a Go type becomes what `fmt`
/// prints for it. A string is charged to the byte budget here, before the function
/// copies it (`printf "%s%s" $x $x` doubles `$x`).
fn format(state: &RenderState, args: &[Value]) -> gotmpl::Result<Value> {
    let value = one(FORMAT, args)?;
    state.charge(string_bytes(args))?;
    Ok(match state.objects.get(value) {
        Some(object) => Value::String(object.formatted.as_str().into()),
        None => value.clone(),
    })
}

/// An argument printed as `%v`: a Go type or a float becomes what `fmt` prints for it.
fn format_value(state: &RenderState, args: &[Value]) -> gotmpl::Result<Value> {
    match one(FORMAT_VALUE, args)? {
        Value::Float(number) => Ok(Value::String(gofmt::float(*number).into())),
        _ => format(state, args),
    }
}

/// After every function call: one unit of fuel, no string larger than the output cap,
/// and the string charged to the byte budget (a template doubling a string in a loop
/// stops here, not when memory runs out).
fn guard(state: &RenderState, args: &[Value]) -> gotmpl::Result<Value> {
    state.spend(1)?;
    let value = one(GUARD, args)?;
    state.charge(string_bytes(args))?;
    match value {
        Value::String(text) if text.len() > state.max_value_bytes => Err(state.stop(format!(
            "the template built a string of more than {} bytes",
            state.max_value_bytes
        ))),
        _ => Ok(value.clone()),
    }
}

/// At the start of every list of nodes: fuel for its length.
fn tick(state: &RenderState, args: &[Value]) -> gotmpl::Result<Value> {
    let cost = one(TICK, args)?.as_int().unwrap_or(1).max(1) as u64;
    state.spend(cost)?;
    Ok(Value::String("".into()))
}

/// Ollama's `json`: `json.Marshal`, empty when it fails.
fn json(state: &RenderState, args: &[Value]) -> gotmpl::Result<Value> {
    let value = one("json", args)?;
    let text = gojson::to_string(&GoJson {
        value,
        objects: &state.objects,
    });
    Ok(Value::String(text.into()))
}

/// Ollama's `currentDate`: today as `2006-01-02` (its format argument is ignored, as
/// in Ollama).
fn current_date(state: &RenderState, _args: &[Value]) -> gotmpl::Result<Value> {
    Ok(date(&state.clock, 0))
}

/// Ollama's `yesterdayDate`.
fn yesterday_date(state: &RenderState, _args: &[Value]) -> gotmpl::Result<Value> {
    Ok(date(&state.clock, 1))
}

fn date(clock: &Clock, days_ago: u64) -> Value {
    let now = match clock {
        Clock::Local => chrono::Local::now().naive_local(),
        Clock::Fixed(at) => *at,
    };
    let day = now
        .date()
        .checked_sub_days(chrono::Days::new(days_ago))
        .unwrap_or(now.date());
    Value::String(day.format("%Y-%m-%d").to_string().into())
}

/// Ollama's `toTypeScriptType`: a tool parameter's TypeScript type, `any` for anything
/// that is not one.
fn to_typescript_type(state: &RenderState, args: &[Value]) -> gotmpl::Result<Value> {
    let value = one("toTypeScriptType", args)?;
    let is_property = state
        .objects
        .get(value)
        .is_some_and(|object| object.kind == Kind::Property);
    let types: Vec<String> = match value.field("Type") {
        Some(Value::List(names)) if is_property => names
            .iter()
            .filter_map(|name| name.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    Ok(Value::String(typescript_type(&types).into()))
}

fn one<'a>(name: &str, args: &'a [Value]) -> gotmpl::Result<&'a Value> {
    match args {
        [value] => Ok(value),
        _ => Err(gotmpl::TemplateError::ArgCount {
            name: name.to_owned(),
            expected: 1,
            got: args.len(),
        }),
    }
}

/// A template value marshalled as Go would marshal what it stands for.
struct GoJson<'a> {
    value: &'a Value,
    objects: &'a Objects,
}

impl Serialize for GoJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Some(object) = self.objects.get(self.value) {
            let raw = serde_json::value::RawValue::from_string(object.json.clone())
                .map_err(S::Error::custom)?;
            return raw.serialize(serializer);
        }
        let nested = |value| GoJson {
            value,
            objects: self.objects,
        };
        match self.value {
            Value::Nil => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Int(n) => serializer.serialize_i64(*n),
            Value::Uint(n) => serializer.serialize_u64(*n),
            Value::Float(n) => serializer.serialize_f64(*n),
            Value::String(text) => serializer.serialize_str(text),
            Value::List(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items.iter() {
                    seq.serialize_element(&nested(item))?;
                }
                seq.end()
            }
            Value::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, item) in entries.iter() {
                    map.serialize_entry(key.as_ref(), &nested(item))?;
                }
                map.end()
            }
            Value::Function(_) => Err(S::Error::custom("json: unsupported type: func")),
        }
    }
}

//! The Go type behind each map or list a render's values hold, and how Go prints and
//! marshals it, kept by the address every copy of the value shares: what the printers
//! ([`super::gofmt`]) look up and the values' builder ([`super::values`]) fills in.

use gotmpl::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The Go types a template can meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Message,
    ToolCall,
    ToolCallFunction,
    Arguments,
    Tools,
    Tool,
    ToolFunction,
    Parameters,
    Property,
    PropertyType,
}

/// How one Go value prints and marshals.
#[derive(Clone, Debug)]
pub struct GoObject {
    pub kind: Kind,
    /// `json.Marshal`.
    pub json: String,
    /// What `{{ value }}` prints: the `String()` method when it has one (templates reach
    /// values through pointers, so pointer-receiver methods count too).
    pub printed: String,
    /// What `fmt.Sprint(value)` prints (`print`, `printf "%v"`): value-receiver methods
    /// only, else Go's struct or map syntax.
    pub formatted: String,
}

/// The Go objects of one render, by address.
#[derive(Default)]
pub struct Objects {
    by_address: HashMap<usize, GoObject>,
}

impl Objects {
    /// The Go object `value` stands for, if any.
    pub fn get(&self, value: &Value) -> Option<&GoObject> {
        self.by_address.get(&address(value)?)
    }

    pub(super) fn insert(&mut self, value: &Value, object: GoObject) {
        if let Some(address) = address(value) {
            self.by_address.insert(address, object);
        }
    }
}

/// The address shared by every copy of a map or list value.
fn address(value: &Value) -> Option<usize> {
    match value {
        Value::Map(map) => Some(Arc::as_ptr(map) as *const () as usize),
        Value::List(list) => Some(Arc::as_ptr(list) as *const () as usize),
        _ => None,
    }
}

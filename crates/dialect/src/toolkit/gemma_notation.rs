//! Google's argument notation: objects with bare keys, strings between quote tokens and
//! no escapes, everything else as JSON writes it. Gemma 4 quotes with `<|"|>`,
//! FunctionGemma with `<escape>`:
//!
//! ```text
//! {city:<|"|>Paris<|"|>,days:2,tags:[<|"|>a<|"|>,<|"|>b<|"|>],strict:true}
//! {city:<escape>Paris<escape>,days:2}
//! ```
//!
//! The templates write past calls this way (keys sorted) and the model answers in kind,
//! so a call's arguments are read here into JSON. A bare value that is no JSON scalar (a
//! model that left out the quote tokens) is read as the string it spells; a member that
//! follows a quoted string without its `,` (FunctionGemma writes
//! `city:<escape>NYC<escape>unit:<escape>celsius<escape>`) is still a member, since the
//! quote token ends the string beyond doubt. Nesting is bounded and nothing panics: text
//! that is no object is `None`.

use serde_json::{Map, Value};

use crate::toolkit::cut::CUT_MARK;

/// One spelling of the notation: the token that opens and closes a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notation {
    pub quote: &'static str,
}

/// Gemma 4's spelling.
pub const GEMMA4: Notation = Notation { quote: "<|\"|>" };

/// FunctionGemma's spelling.
pub const FUNCTION_GEMMA: Notation = Notation { quote: "<escape>" };

/// How deep values may nest before the text is taken for no object.
const MAX_DEPTH: usize = 64;

impl Notation {
    /// The object `text` spells (blanks around it allowed), or `None`.
    pub fn parse_object(self, text: &str) -> Option<Map<String, Value>> {
        let mut reader = Reader {
            rest: text.trim(),
            quote: self.quote,
            cut: false,
        };
        let value = reader.value(0)?;
        match (reader.rest.trim().is_empty(), value) {
            (true, Value::Object(object)) => Some(object),
            _ => None,
        }
    }

    /// `value` in the notation, keys sorted as the templates write them.
    pub fn write_value(self, value: &Value) -> String {
        let quote = self.quote;
        match value {
            Value::String(text) => format!("{quote}{text}{quote}"),
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(|item| self.write_value(item)).collect();
                format!("[{}]", items.join(","))
            }
            Value::Object(members) => {
                let mut members: Vec<(&String, &Value)> = members.iter().collect();
                members.sort_by(|a, b| a.0.cmp(b.0));
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(key, value)| format!("{key}:{}", self.write_value(value)))
                    .collect();
                format!("{{{}}}", members.join(","))
            }
            other => other.to_string(),
        }
    }
}

struct Reader<'a> {
    rest: &'a str,
    quote: &'static str,
    /// The output was cut in a string read ([`CUT_MARK`]): every object and array open
    /// ends there, with its closing bracket if the text that closes the region has it.
    cut: bool,
}

impl Reader<'_> {
    fn blank(&mut self) {
        self.rest = self.rest.trim_start();
    }

    fn eat(&mut self, text: &str) -> bool {
        self.blank();
        match self.rest.strip_prefix(text) {
            Some(rest) => {
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.blank();
        if self.eat(self.quote) {
            return self.quoted().map(Value::String);
        }
        if self.cut_in_quote() {
            return self.cut_text(self.quote).map(Value::String);
        }
        if self.eat("{") {
            return self.object(depth);
        }
        if self.eat("[") {
            return self.array(depth);
        }
        self.scalar()
    }

    /// A string's text after its opening quote token, and that closing one; or, where
    /// the output was cut in it, its text up to the cut.
    fn quoted(&mut self) -> Option<String> {
        let Some((text, rest)) = self.rest.split_once(self.quote) else {
            return self.cut_text(self.quote);
        };
        self.rest = rest;
        Some(text.to_string())
    }

    /// Where the output was cut in what the rest begins with: its text up to
    /// [`CUT_MARK`], less a start of `token` that the text ends with (the token may be on
    /// its way), and the mark; read up to past the mark.
    fn cut_text(&mut self, token: &str) -> Option<String> {
        let (before, after) = self.rest.split_once(CUT_MARK)?;
        let partial = (1..token.len())
            .rev()
            .find(|&len| {
                token
                    .get(..len)
                    .is_some_and(|start| before.ends_with(start))
            })
            .unwrap_or(0);
        self.rest = after;
        self.cut = true;
        Some([&before[..before.len() - partial], CUT_MARK].concat())
    }

    /// Whether the output was cut in a quote token that opens a value.
    fn cut_in_quote(&self) -> bool {
        self.rest
            .split_once(CUT_MARK)
            .is_some_and(|(before, _)| !before.is_empty() && self.quote.starts_with(before))
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        let mut members = Map::new();
        if self.eat("}") {
            return Some(Value::Object(members));
        }
        loop {
            let key = self.key()?;
            if !self.eat(":") {
                return None;
            }
            let value = self.value(depth + 1)?;
            // A string ends at its quote token (or, bare, at a `,` anyway).
            let quoted = value.is_string();
            members.insert(key, value);
            if self.eat("}") || self.cut {
                return Some(Value::Object(members));
            }
            if !self.eat(",") && !quoted {
                return None;
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        let mut items = Vec::new();
        if self.eat("]") {
            return Some(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.eat("]") || self.cut {
                return Some(Value::Array(items));
            }
            if !self.eat(",") {
                return None;
            }
        }
    }

    /// A key: quoted, or bare up to its `:`.
    fn key(&mut self) -> Option<String> {
        if self.eat(self.quote) {
            return self.quoted();
        }
        self.blank();
        let end = self.rest.find([':', ',', '{', '}', '[', ']'])?;
        let key = self.rest[..end].trim();
        if key.is_empty() {
            return None;
        }
        self.rest = &self.rest[end..];
        Some(key.to_string())
    }

    /// A bare value up to the next `,`, `}` or `]`: JSON's scalar, or the text itself.
    fn scalar(&mut self) -> Option<Value> {
        let end = self.rest.find([',', '}', ']']).unwrap_or(self.rest.len());
        let text = self.rest[..end].trim();
        if text.is_empty() || text.contains(['{', '[', ':']) {
            return None;
        }
        self.rest = &self.rest[end..];
        Some(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_the_templates_write() {
        let value = json!({"city": "Paris, \"FR\"", "days": 2, "tags": ["a", "b"],
            "deep": {"x": [1.5, null, true]}, "empty": {}});
        for notation in [GEMMA4, FUNCTION_GEMMA] {
            let text = notation.write_value(&value);
            assert_eq!(notation.parse_object(&text), value.as_object().cloned());
        }
        let parse_object = |text: &str| GEMMA4.parse_object(text);
        assert_eq!(
            parse_object("{lower_limit:1,multiples:[3,5]}"),
            json!({"lower_limit": 1, "multiples": [3, 5]})
                .as_object()
                .cloned()
        );
        assert_eq!(
            parse_object("{city: Paris}"),
            json!({"city": "Paris"}).as_object().cloned()
        );
        for broken in [
            "",
            "{",
            "{a:}",
            "{a:1",
            "[1]",
            "{a:1}x",
            "{:1}",
            "{a:<|\"|>x}",
        ] {
            assert_eq!(parse_object(broken), None, "{broken}");
        }
        let deep = "[".repeat(200);
        assert_eq!(parse_object(&format!("{{a:{deep}}}")), None);
    }

    #[test]
    fn a_member_may_follow_a_quoted_string_without_its_comma() {
        assert_eq!(
            FUNCTION_GEMMA.parse_object("{city:<escape>NYC<escape>unit:<escape>celsius<escape>}"),
            json!({"city": "NYC", "unit": "celsius"})
                .as_object()
                .cloned()
        );
        assert_eq!(FUNCTION_GEMMA.parse_object("{a:1 b:2}"), None);
    }
}

#[cfg(test)]
mod cut_tests {
    use super::*;
    use serde_json::json;

    /// A region read on its way: the argument text up to the mark, closed by the region.
    fn cut(notation: Notation, written: &str) -> Option<Map<String, Value>> {
        notation.parse_object(&format!("{{{written}{CUT_MARK}}}"))
    }

    #[test]
    fn a_string_the_output_was_cut_in_reads_up_to_the_cut() {
        let q = GEMMA4.quote;
        let held = |text: &str| json!({"a": 1, "b": format!("{text}{CUT_MARK}")});
        for (written, text) in [
            (format!("a:1,b:{q}Par"), "Par"),
            (format!("a:1,b:{q}Par<|\""), "Par"),
            ("a:1,b:<|".to_string(), ""),
            (format!("a:1,b:{q}"), ""),
        ] {
            assert_eq!(
                cut(GEMMA4, &written),
                held(text).as_object().cloned(),
                "{written}"
            );
        }
        let nested = cut(GEMMA4, &format!("a:{{b:[{q}x{q},{q}y"));
        let expected = json!({"a": {"b": ["x", format!("y{CUT_MARK}")]}});
        assert_eq!(nested, expected.as_object().cloned());
    }
}

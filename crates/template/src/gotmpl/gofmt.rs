//! Values printed as Go's `fmt` prints them.
//!
//! `gotmpl` prints a float with Rust's `Display` (`32222000403`) where Go's `%v` writes
//! `3.2222000403e+10`, and knows nothing of the `String()` methods of Ollama's types.
//! Every value a template prints goes through [`display`] instead (see the print hook in
//! [`super::hooks`]).

use gotmpl::Value;

use super::gojson;
use super::objects::Objects;

/// Which Go printing path a value takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Printing {
    /// `{{ value }}`: text/template calls `String()` through pointers too.
    Template,
    /// `fmt.Sprint(value)`, and any value nested in another: value receivers only.
    Formatted,
}

/// `value` as Go prints it.
pub fn display(value: &Value, objects: &Objects, printing: Printing) -> String {
    if let Some(object) = objects.get(value) {
        return match printing {
            Printing::Template => object.printed.clone(),
            Printing::Formatted => object.formatted.clone(),
        };
    }
    match value {
        Value::String(text) => text.to_string(),
        Value::Float(number) => float(*number),
        Value::List(items) => {
            let shown: Vec<String> = items
                .iter()
                .map(|item| display(item, objects, Printing::Formatted))
                .collect();
            format!("[{}]", shown.join(" "))
        }
        Value::Map(entries) => {
            let shown: Vec<String> = entries
                .iter()
                .map(|(key, item)| format!("{key}:{}", display(item, objects, Printing::Formatted)))
                .collect();
            format!("map[{}]", shown.join(" "))
        }
        other => other.to_string(),
    }
}

/// `fmt.Sprint(args...)`: each argument as `%v`, with a space between two arguments
/// when neither is a string.
pub fn sprint(args: &[Value], objects: &Objects) -> String {
    let mut out = String::new();
    let mut previous_was_string = true;
    for arg in args {
        let is_string = matches!(arg, Value::String(_));
        if !out.is_empty() && !is_string && !previous_was_string {
            out.push(' ');
        }
        out.push_str(&display(arg, objects, Printing::Formatted));
        previous_was_string = is_string;
    }
    out
}

/// `fmt.Sprintln(args...)`: each argument as `%v`, spaces between, a newline after.
pub fn sprintln(args: &[Value], objects: &Objects) -> String {
    let shown: Vec<String> = args
        .iter()
        .map(|arg| display(arg, objects, Printing::Formatted))
        .collect();
    format!("{}\n", shown.join(" "))
}

/// A `float64` as `%v` prints it (`strconv.FormatFloat(f, 'g', -1, 64)`): the shortest
/// digits, in exponent form when the decimal exponent is below -4 or at least 6.
pub fn float(number: f64) -> String {
    if number.is_nan() {
        return "NaN".into();
    }
    if number.is_infinite() {
        return if number > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if number == 0.0 {
        return if number.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let (mantissa, exponent) = gojson::shortest_exponent_form(number);
    if (-4..6).contains(&exponent) {
        format!("{number}")
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_go_percent_v() {
        assert_eq!(float(2535.0), "2535");
        assert_eq!(float(100000.0), "100000");
        assert_eq!(float(1234567.0), "1.234567e+06");
        assert_eq!(float(32222000403.0), "3.2222000403e+10");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(0.00001), "1e-05");
        assert_eq!(float(-1.5), "-1.5");
    }

    #[test]
    fn print_spaces_operands_as_go_does() {
        let objects = Objects::default();
        let args = [
            Value::Float(1.5),
            Value::Int(2),
            Value::String("a".into()),
            Value::Float(1e6),
            Value::Nil,
        ];
        assert_eq!(sprint(&args, &objects), "1.5 2a1e+06 <nil>");
        assert_eq!(sprintln(&args, &objects), "1.5 2 a 1e+06 <nil>\n");
    }
}

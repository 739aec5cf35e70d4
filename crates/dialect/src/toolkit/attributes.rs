//! Attribute values in formats that write a tool's name or an argument's key between
//! quotes (Kimi K3's `<|open|>call tool="NAME" index="1"<|sep|>`): the template escapes
//! `&` as `&amp;` and `"` as `&quot;`, so a value never holds the quote that ends it.
//! The grammar writes names and keys escaped the same way, and the parser reads them back.

/// `value` as the template writes it between quotes.
pub fn escape_attribute(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;")
}

/// The value an escaped attribute stands for; other `&` sequences are left as written.
pub fn unescape_attribute(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let (char, len) = if rest.starts_with("&amp;") {
            ('&', "&amp;".len())
        } else if rest.starts_with("&quot;") {
            ('"', "&quot;".len())
        } else {
            ('&', 1)
        };
        out.push(char);
        rest = &rest[len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_round_trips() {
        for value in ["get_weather", "a\"b", "&quot;", "&amp;\"&", "&x;"] {
            assert_eq!(unescape_attribute(&escape_attribute(value)), value);
        }
        assert_eq!(escape_attribute("a&\"b"), "a&amp;&quot;b");
        assert_eq!(unescape_attribute("a & b &lt;"), "a & b &lt;");
    }
}

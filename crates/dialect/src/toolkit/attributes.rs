//! Attribute values in formats that write a tool's name or an argument's key between
//! quotes (Kimi K3's `<|open|>call tool="NAME" index="1"<|sep|>`): the template escapes
//! `&` as `&amp;` and `"` as `&quot;`, so a value never holds the quote that ends it.
//! The grammar writes names and keys escaped the same way, and the parser reads them back.

use crate::toolkit::cut::CUT_MARK;

/// `value` as the template writes it between quotes.
pub fn escape_attribute(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;")
}

/// The value an escaped attribute stands for; other `&` sequences are left as written. An
/// entity the output was cut in ([`CUT_MARK`] after `&am`) stands for nothing yet: what
/// follows decides whether it is `&` or the text `&am…`.
pub fn unescape_attribute(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(cut) = cut_entity(rest) {
            rest = &rest[cut..];
            continue;
        }
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

/// Where [`CUT_MARK`] is in `text` (which starts with `&`), if what comes before it may
/// still be the start of an entity.
fn cut_entity(text: &str) -> Option<usize> {
    let cut = text.find(CUT_MARK)?;
    ["&amp;", "&quot;"]
        .into_iter()
        .any(|entity| entity.len() > cut && entity.starts_with(&text[..cut]))
        .then_some(cut)
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

    #[test]
    fn an_entity_cut_short_stands_for_nothing_yet() {
        for written in ["a&", "a&am", "a&quot"] {
            let text = format!("{written}{CUT_MARK}");
            assert_eq!(unescape_attribute(&text), format!("a{CUT_MARK}"));
        }
        let text = format!("a&b{CUT_MARK}");
        assert_eq!(unescape_attribute(&text), format!("a&b{CUT_MARK}"));
    }
}

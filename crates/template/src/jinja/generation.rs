//! The `{% generation %}` tag of `transformers`.
//!
//! `transformers` adds a `generation` block that marks the assistant's tokens for
//! training masks and otherwise renders its body unchanged. minijinja has no custom tags,
//! so before compiling, `{% generation %}` becomes `{% if true %}` and
//! `{% endgeneration %}` becomes `{% endif %}`. Both are block tags, so `trim_blocks`,
//! `lstrip_blocks` and the `-`/`+` whitespace markers act on them exactly as before, and
//! no line moves, so error lines still point at the template as written.

/// The template source with generation blocks turned into always-true `if` blocks.
pub fn rewrite_generation_tags(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        out.push_str(&rest[..start]);
        let tag = &rest[start..];
        let consumed = match rewrite_tag(tag) {
            Some((rewritten, len)) => {
                out.push_str(&rewritten);
                len
            }
            None => {
                out.push_str("{%");
                2
            }
        };
        rest = &tag[consumed..];
    }
    out.push_str(rest);
    out
}

/// If `tag` starts with a generation tag, its replacement and the length it replaces.
fn rewrite_tag(tag: &str) -> Option<(String, usize)> {
    let inner = &tag[2..];
    let (open_marker, inner) = split_marker(inner);
    let body = inner.trim_start();
    let (keyword, replacement) = if body.starts_with("endgeneration") {
        ("endgeneration", "endif")
    } else if body.starts_with("generation") {
        ("generation", "if true")
    } else {
        return None;
    };
    let after = body[keyword.len()..].trim_start();
    let (close_marker, after) = split_marker_end(after);
    let after = after.strip_prefix("%}")?;
    let len = tag.len() - after.len();
    let rewritten = format!("{{%{open_marker} {replacement} {close_marker}%}}");
    Some((rewritten, len))
}

fn split_marker(text: &str) -> (&str, &str) {
    match text.as_bytes().first() {
        Some(b'-') | Some(b'+') => text.split_at(1),
        _ => ("", text),
    }
}

fn split_marker_end(text: &str) -> (&str, &str) {
    match text.as_bytes().first() {
        Some(b'-') | Some(b'+') if text[1..].starts_with("%}") => text.split_at(1),
        _ => ("", text),
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite_generation_tags;

    #[test]
    fn generation_tags_become_if_blocks() {
        assert_eq!(
            rewrite_generation_tags("a{%- generation %}b{% endgeneration -%}c{% if x %}"),
            "a{%- if true %}b{% endif -%}c{% if x %}"
        );
        assert_eq!(
            rewrite_generation_tags("{% generationx %}"),
            "{% generationx %}"
        );
    }
}

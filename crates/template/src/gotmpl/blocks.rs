//! Block structure as Go's parser checks it.
//!
//! `gotmpl` 0.6 accepts a template whose `{{ if }}` never ends (the block runs to the end
//! of the text) and stops reading at a stray `{{ end }}` (the rest is silently dropped).
//! Go's parser, and so Ollama, refuses both (and `{{ break }}` outside a `range`), and a model whose template Ollama refuses
//! must not render here. [`check`] reads the actions of the template and balances them
//! as Go does, before `gotmpl` parses it.

/// The first structural error, Go's words, with its 1-based line.
pub fn check(source: &str) -> Result<(), (String, usize)> {
    let mut open: Vec<(&str, usize)> = Vec::new();
    for (word, line) in actions(source) {
        match word {
            "if" | "range" | "with" | "define" | "block" => open.push((word, line)),
            "end" if open.pop().is_none() => {
                return Err(("unexpected {{end}}".into(), line));
            }
            "else" if !matches!(open.last(), Some(("if" | "range" | "with", _))) => {
                return Err(("unexpected {{else}}".into(), line));
            }
            "break" | "continue" if !in_range(&open) => {
                return Err((format!("{{{{{word}}}}} outside {{{{range}}}}"), line));
            }
            _ => {}
        }
    }
    match open.last() {
        Some((word, line)) => Err((
            format!("unexpected EOF: {{{{{word}}}}} has no {{{{end}}}}"),
            *line,
        )),
        None => Ok(()),
    }
}

/// Whether the innermost template body (the root, a `define` or a `block`) has an open
/// `range`, where `{{break}}` and `{{continue}}` belong.
fn in_range(open: &[(&str, usize)]) -> bool {
    open.iter()
        .rev()
        .take_while(|(word, _)| !matches!(*word, "define" | "block"))
        .any(|(word, _)| *word == "range")
}

/// The first word of each action, with the line the action starts on. Quoted strings,
/// raw strings, character literals and comments inside actions are skipped, so a `}}`
/// in them does not end the action.
fn actions(source: &str) -> Vec<(&str, usize)> {
    let mut found = Vec::new();
    let mut rest = source;
    let mut line = 1;
    while let Some(start) = rest.find("{{") {
        line += rest[..start].matches('\n').count();
        let body = &rest[start + 2..];
        let body_start = body.strip_prefix("- ").unwrap_or(body).trim_start();
        let end = action_end(body).unwrap_or(body.len());
        if !body_start.starts_with("/*") {
            found.push((first_word(body_start), line));
        }
        line += body[..end].matches('\n').count();
        rest = &body[end..];
    }
    found
}

/// Where the action that `body` starts ends (just past its `}}`).
fn action_end(body: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' => i = skip_quoted(bytes, i)?,
            b'`' => i += 1 + body[i + 1..].find('`')? + 1,
            b'/' if bytes.get(i + 1) == Some(&b'*') => i += 2 + body[i + 2..].find("*/")? + 2,
            b'}' if bytes.get(i + 1) == Some(&b'}') => return Some(i + 2),
            _ => i += 1,
        }
    }
    None
}

/// Past the closing quote of the string or character literal opening at `start`.
fn skip_quoted(bytes: &[u8], start: usize) -> Option<usize> {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' => return Some(i),
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn first_word(action: &str) -> &str {
    let end = action
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(action.len());
    &action[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_templates_pass() {
        let ok = r#"{{- if .A }}{{ "}}{{end}}" }}{{/* {{end}} */}}{{ else if .B }}{{ range .C }}{{ end }}{{- end }}"#;
        assert_eq!(check(ok), Ok(()));
        assert_eq!(
            check("{{ define \"x\" }}a{{ end }}{{ block \"y\" . }}b{{ end }}"),
            Ok(())
        );
    }

    #[test]
    fn go_refuses_what_gotmpl_would_accept() {
        assert_eq!(check("a\n{{ if .X }}b").unwrap_err().1, 2);
        assert_eq!(check("a{{ end }}b").unwrap_err().0, "unexpected {{end}}");
        assert_eq!(check("{{ else }}").unwrap_err().0, "unexpected {{else}}");
        assert_eq!(
            check("{{ define \"x\" }}{{ else }}{{ end }}")
                .unwrap_err()
                .0,
            "unexpected {{else}}"
        );
        let stray_break = check("{{ if .A }}{{ break }}{{ end }}").unwrap_err();
        assert_eq!(stray_break.0, "{{break}} outside {{range}}");
        let nested = "{{ range .A }}{{ define \"x\" }}{{ continue }}{{ end }}{{ end }}";
        assert_eq!(
            check(nested).unwrap_err().0,
            "{{continue}} outside {{range}}"
        );
        assert_eq!(
            check("{{ range .A }}{{ if . }}{{ break }}{{ end }}{{ end }}"),
            Ok(())
        );
    }
}

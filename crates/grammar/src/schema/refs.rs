//! `$ref` targets inside the schema document: JSON pointers (`#/$defs/a/properties/b`,
//! with `~0`/`~1` and percent escapes), the document itself (`#`), and absolute
//! references to the document's own `$id`. Remote documents are never fetched: a
//! converter that reached out to the network on a user's schema would be a hazard.

use serde_json::Value;

/// Where a reference points: the target schema and its JSON pointer (`#/…`), used to
/// name warnings.
pub(super) struct Target<'a> {
    pub schema: &'a Value,
    pub path: String,
}

/// Resolves `reference` against `root`, or says why it cannot.
pub(super) fn resolve<'a>(root: &'a Value, reference: &str) -> Result<Target<'a>, String> {
    let fragment = match reference.find('#') {
        Some(at) => {
            let base = &reference[..at];
            if !base.is_empty() && !is_own_id(root, base) {
                return Err(format!(
                    "remote $ref {reference:?} is not supported (no document is fetched)"
                ));
            }
            &reference[at + 1..]
        }
        None if is_own_id(root, reference) => "",
        None => {
            return Err(format!(
                "$ref {reference:?} is not a JSON pointer into this document"
            ))
        }
    };
    if fragment.is_empty() {
        return Ok(Target {
            schema: root,
            path: "#".into(),
        });
    }
    let Some(pointer) = fragment.strip_prefix('/') else {
        return Err(format!(
            "$ref {reference:?}: anchors (`#name`) are not supported, only JSON pointers"
        ));
    };
    let mut target = root;
    for raw in pointer.split('/') {
        let token = unescape(raw)
            .ok_or_else(|| format!("$ref {reference:?}: {raw:?} is not a valid pointer token"))?;
        target = match target {
            Value::Object(map) => map.get(&token),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        }
        .ok_or_else(|| format!("$ref {reference:?}: {token:?} not found"))?;
    }
    Ok(Target {
        schema: target,
        path: format!("#{fragment}"),
    })
}

/// The base URIs declared inside the document (`$id`, or draft 4's `id`), with the
/// JSON pointer of the schema declaring each, the root's included.
/// `id` is read only where `$schema` names draft 3 or 4 (later drafts ignore it, and
/// schemas in the wild use `id` for other things).
pub(super) fn declared_ids(root: &Value) -> Vec<(String, String)> {
    let draft4 = root
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains("draft-04") || s.contains("draft-03"));
    let keys: &[&str] = if draft4 { &["$id", "id"] } else { &["$id"] };
    let mut ids = Vec::new();
    collect_ids(root, "#".to_string(), keys, &mut ids, 0);
    ids
}

fn collect_ids(
    node: &Value,
    path: String,
    keys: &[&str],
    ids: &mut Vec<(String, String)>,
    depth: usize,
) {
    if depth > 256 {
        return;
    }
    match node {
        Value::Object(map) => {
            for key in keys {
                if let Some(Value::String(id)) = map.get(*key) {
                    if !id.starts_with('#') {
                        ids.push((id.trim_end_matches('#').to_string(), path.clone()));
                        break;
                    }
                }
            }
            for (key, value) in map {
                // Constants and examples are data, not schemas.
                if matches!(
                    key.as_str(),
                    "enum" | "const" | "default" | "examples" | "example"
                ) {
                    continue;
                }
                collect_ids(
                    value,
                    format!("{path}/{}", escape(key)),
                    keys,
                    ids,
                    depth + 1,
                );
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_ids(item, format!("{path}/{i}"), keys, ids, depth + 1);
            }
        }
        _ => {}
    }
}

/// Resolves `reference` as met in the schema at JSON pointer `from`: a fragment-only
/// reference (`#/…`) points into the nearest enclosing schema that declares its own
/// `$id` (the document when none does), and a reference naming a declared `$id` points
/// into that schema.
pub(super) fn resolve_at<'a>(
    root: &'a Value,
    ids: &[(String, String)],
    from: &str,
    reference: &str,
) -> Result<Target<'a>, String> {
    let nested: Vec<&(String, String)> = ids.iter().filter(|(_, path)| path != "#").collect();
    if nested.is_empty() {
        return resolve(root, reference);
    }
    let (uri, fragment) = match reference.find('#') {
        Some(at) => (&reference[..at], &reference[at..]),
        None => (reference, "#"),
    };
    let base = if uri.is_empty() {
        // The nearest enclosing schema with an `$id`.
        nested
            .iter()
            .filter(|(_, path)| from == path.as_str() || from.starts_with(&format!("{path}/")))
            .max_by_key(|(_, path)| path.len())
            .map(|(_, path)| path.clone())
    } else {
        let found = ids.iter().find(|(id, _)| {
            id == uri || id.ends_with(&format!("/{uri}")) || uri.ends_with(&format!("/{id}"))
        });
        match found {
            Some((_, path)) => Some(path.clone()),
            None => {
                return Err(format!(
                    "remote $ref {reference:?} is not supported (no document is fetched)"
                ))
            }
        }
    };
    let Some(base) = base.filter(|b| b != "#") else {
        return resolve(root, fragment);
    };
    let base_node = resolve(root, &base)?.schema;
    let Ok(target) = resolve(base_node, fragment) else {
        // Written as if from the document's root, as many schemas in the wild are.
        return resolve(root, fragment);
    };
    let inner = target.path.strip_prefix('#').unwrap_or("");
    Ok(Target {
        schema: target.schema,
        path: format!("{base}{inner}"),
    })
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The name llama.cpp gives a reference's rule: its last pointer segment.
pub(super) fn rule_name(reference: &str) -> &str {
    match reference.rfind('/') {
        Some(at) => &reference[at + 1..],
        None => reference,
    }
}

fn is_own_id(root: &Value, base: &str) -> bool {
    let id = root.get("$id").or_else(|| root.get("id"));
    matches!(id, Some(Value::String(id)) if id.trim_end_matches('#') == base)
}

/// A pointer token with percent-encoding and then `~1` → `/`, `~0` → `~` undone.
fn unescape(raw: &str) -> Option<String> {
    let decoded = percent_decode(raw)?;
    let mut out = String::with_capacity(decoded.len());
    let mut chars = decoded.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

fn percent_decode(raw: &str) -> Option<String> {
    if !raw.contains('%') {
        return Some(raw.to_string());
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = raw.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_with_escapes() {
        let root = json!({
            "$id": "https://example.com/s.json",
            "$defs": {"a/b": {"$defs": {"c~d": {"type": "string"}}}, "e f": {"type": "null"}},
            "items": [{"type": "integer"}]
        });
        let t = resolve(&root, "#/$defs/a~1b/$defs/c~0d").unwrap();
        assert_eq!(t.schema, &json!({"type": "string"}));
        assert_eq!(t.path, "#/$defs/a~1b/$defs/c~0d");
        assert_eq!(
            resolve(&root, "#/$defs/e%20f").unwrap().schema,
            &json!({"type": "null"})
        );
        assert_eq!(
            resolve(&root, "#/items/0").unwrap().schema,
            &json!({"type": "integer"})
        );
        assert_eq!(resolve(&root, "#").unwrap().schema, &root);
        assert!(resolve(&root, "https://example.com/s.json#/items/0").is_ok());
        assert!(resolve(&root, "https://other.com/s.json#/items/0").is_err());
        assert!(resolve(&root, "#/$defs/missing").is_err());
        assert!(resolve(&root, "#anchor").is_err());
        assert_eq!(rule_name("#/definitions/foo"), "foo");
    }
}

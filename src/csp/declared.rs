//! The `csp` parameter's JSON: type-checked into the four lists, not yet validated entry by
//! entry, or the reason it cannot be read at all.

use std::borrow::Cow;

use serde_json::Value;

use super::domains::DomainList;

/// The `?csp=` JSON, type-checked but not yet validated entry by entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    pub(super) lists: Vec<(DomainList, Vec<String>)>,
}

/// Why a declaration (the `csp` parameter's JSON) cannot be read at all. The page is answered
/// with `400` and this text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclarationError {
    #[error("csp is not valid JSON: {0}")]
    /// The text does not parse as JSON.
    Json(String),
    #[error("csp must be a JSON object, not {0}")]
    /// The JSON is not an object.
    NotAnObject(&'static str),
    #[error("csp.{key} must be an array of strings, not {found}")]
    /// A list that is not an array.
    NotAnArray {
        /// The list's key.
        key: &'static str,
        /// What it is instead.
        found: &'static str,
    },
    #[error("csp.{key}[{index}] must be a string, not {found}")]
    /// An entry of a list that is not a string.
    NotAString {
        /// The list's key.
        key: &'static str,
        /// The entry's index in it.
        index: usize,
        /// What it is instead.
        found: &'static str,
    },
}

/// JSON text with each `\uXXXX` escape of an unpaired UTF-16 surrogate replaced by
/// `\ufffd`. JavaScript's `JSON.stringify` writes lone surrogates that way, and serde_json
/// refuses them; as U+FFFD the entry holding one is dropped as non-ASCII, and the rest of the
/// declaration still applies.
fn without_lone_surrogates(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let unit_at = |i: usize| -> Option<u16> {
        let escape = bytes.get(i..i + 6)?;
        if escape[0] != b'\\' || escape[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&escape[2..]).ok()?, 16).ok()
    };
    let is_high = |unit: u16| (0xD800..0xDC00).contains(&unit);
    let is_low = |unit: u16| (0xDC00..0xE000).contains(&unit);
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = unit_at(i) else {
            i += 2; // any other escape, `\\` included, is two bytes
            continue;
        };
        let paired = is_high(unit) && unit_at(i + 6).is_some_and(is_low);
        if paired {
            i += 12;
        } else if is_high(unit) || is_low(unit) {
            let out = out.get_or_insert_with(|| String::with_capacity(json.len()));
            out.push_str(&json[copied..i]);
            out.push_str("\\ufffd");
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    match out {
        None => Cow::Borrowed(json),
        Some(mut out) => {
            out.push_str(&json[copied..]);
            Cow::Owned(out)
        }
    }
}

/// The key `list` is declared under in `object`, and its value: the spec's spelling, or where
/// that is absent or `null`, the Apps SDK's.
fn spelled(
    object: &serde_json::Map<String, Value>,
    list: DomainList,
) -> Option<(&'static str, &Value)> {
    let present = |key: &'static str| match object.get(key) {
        None | Some(Value::Null) => None,
        Some(value) => Some((key, value)),
    };
    present(list.key()).or_else(|| present(list.apps_sdk_key()?))
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Declared {
    /// Type-checks the JSON object. Each list is read under the spec's key, or where that is
    /// absent under the Apps SDK's (`connect_domains`, see `vocabulary::APPS_SDK_LISTS`).
    /// Unknown keys are ignored (a newer spec may add lists; ignoring them can only narrow),
    /// `null` counts as absent.
    pub fn from_json(json: &str) -> Result<Self, DeclarationError> {
        let json = without_lone_surrogates(json);
        let value: Value =
            serde_json::from_str(&json).map_err(|e| DeclarationError::Json(e.to_string()))?;
        let Value::Object(object) = value else {
            return Err(DeclarationError::NotAnObject(json_type(&value)));
        };
        let mut lists = Vec::new();
        for list in DomainList::ALL {
            let Some((key, value)) = spelled(&object, list) else {
                continue;
            };
            let entries = match value {
                Value::Array(items) => items,
                other => {
                    return Err(DeclarationError::NotAnArray {
                        key,
                        found: json_type(other),
                    });
                }
            };
            let mut strings = Vec::with_capacity(entries.len());
            for (index, item) in entries.iter().enumerate() {
                match item {
                    Value::String(s) => strings.push(s.clone()),
                    other => {
                        return Err(DeclarationError::NotAString {
                            key,
                            index,
                            found: json_type(other),
                        });
                    }
                }
            }
            lists.push((list, strings));
        }
        Ok(Declared { lists })
    }

    /// Builds a declaration from lists directly, without JSON.
    pub fn from_lists(lists: Vec<(DomainList, Vec<String>)>) -> Self {
        Declared { lists }
    }
}

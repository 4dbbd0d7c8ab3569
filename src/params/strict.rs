//! Reading session and scenario text strictly, with errors a person can act on.
//!
//! Every config struct refuses unknown fields (`deny_unknown_fields` in the protocol crate), so a
//! typo such as `loss_precent: 50` stops the load instead of silently running the default. RON
//! reports where and what; this module adds *which setting*: the dotted path of the struct the
//! error is in (found by scanning the text up to the error's position, as RON does not track it)
//! and, for an unknown name, the nearest valid one:
//! "unknown field `loss_precent` in link.a_to_b at line 7, column 13: did you mean `loss_percent`?".
//!
//! The `implicit_some` extension is on by default, so a hand-written scenario may write
//! `tick_phase_ms: 4.0` without `#![enable(implicit_some)]` (and `Some(4.0)` still works).

use ackscope_protocol::nearest_name;
use ron::error::{Error as RonError, SpannedError};
use ron::extensions::Extensions;

/// The RON options every session and scenario is read with.
pub fn ron_options() -> ron::Options {
    ron::Options::default().with_default_extension(Extensions::IMPLICIT_SOME)
}

/// "unknown X `found` ...: did you mean `y`?" or the valid names when none is near.
fn suggest(found: &str, expected: &[&str]) -> String {
    match nearest_name(found, expected.iter().copied()) {
        Some(n) => format!(": did you mean `{n}`?"),
        None if expected.is_empty() => String::new(),
        None => format!(" (valid: {})", expected.join(", ")),
    }
}

/// The message for a RON error in `text`, naming the setting it is in.
pub fn describe(text: &str, e: &SpannedError) -> String {
    let (line, col) = (e.span.start.line, e.span.start.col);
    let place = match path_at(text, line, col) {
        p if p.is_empty() => format!("at line {line}, column {col}"),
        p => format!("in {p} at line {line}, column {col}"),
    };
    match &e.code {
        RonError::NoSuchStructField { expected, found, .. } => {
            format!("unknown field `{found}` {place}{}", suggest(found, expected))
        }
        RonError::NoSuchEnumVariant { expected, found, .. } => {
            format!("unknown value `{found}` {place}{}", suggest(found, expected))
        }
        RonError::MissingStructField { field, .. } => format!("missing field `{field}` {place}"),
        RonError::DuplicateStructField { field, .. } => format!("field `{field}` is given twice {place}"),
        other => format!("{place}: {other}"),
    }
}

/// One level of nesting while scanning: the name it is under and, in a list, the element index.
struct Frame {
    label: Option<String>,
    list: bool,
    index: usize,
    key: Option<String>,
}

/// The dotted path (`link.a_to_b`, `script[2].action`) of the innermost struct or list around
/// `line`:`col` (1-based), relative to the scenario for what is inside it.
///
/// A small scan of RON: comments, strings and attributes are skipped; `name:` before an opening
/// bracket names it; list elements are counted by their commas. Good enough to point at the
/// setting around an error in a well-formed prefix, which is where RON stops.
pub fn path_at(text: &str, line: usize, col: usize) -> String {
    let end = byte_offset(text, line, col);
    let b = &text.as_bytes()[..end];
    let mut stack: Vec<Frame> = Vec::new();
    let mut last_ident: Option<String> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = skip_block_comment(b, i);
                continue;
            }
            b'#' => {
                while i < b.len() && b[i] != b']' {
                    i += 1;
                }
            }
            b'"' => {
                i = skip_string(b, i);
                last_ident = None;
                continue;
            }
            b'r' if matches!(b.get(i + 1), Some(b'"') | Some(b'#')) => {
                i = skip_raw_string(b, i);
                last_ident = None;
                continue;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                last_ident = Some(String::from_utf8_lossy(&b[start..i]).into_owned());
                continue;
            }
            b':' => {
                if let (Some(f), Some(k)) = (stack.last_mut(), last_ident.take()) {
                    f.key = Some(k);
                }
            }
            b'(' | b'[' | b'{' => {
                let label = match stack.last_mut() {
                    Some(f) if f.list => Some(format!("[{}]", f.index)),
                    Some(f) => f.key.take(),
                    None => None,
                };
                stack.push(Frame { label, list: c == b'[', index: 0, key: None });
            }
            b')' | b']' | b'}' => {
                stack.pop();
                if let Some(f) = stack.last_mut() {
                    f.key = None;
                }
            }
            b',' => {
                if let Some(f) = stack.last_mut() {
                    if f.list {
                        f.index += 1;
                    }
                    f.key = None;
                }
            }
            _ => {}
        }
        if !(c.is_ascii_whitespace()) {
            last_ident = None;
        }
        i += 1;
    }
    let mut path = String::new();
    for label in stack.iter().filter_map(|f| f.label.as_deref()) {
        if !label.starts_with('[') && !path.is_empty() {
            path.push('.');
        }
        path.push_str(label);
    }
    match path.strip_prefix("scenario") {
        Some("") => "the scenario".into(),
        Some(rest) if rest.starts_with('.') => rest[1..].to_string(),
        _ => path,
    }
}

/// The byte offset of 1-based `line`:`col` (a character column), clamped to the text.
fn byte_offset(text: &str, line: usize, col: usize) -> usize {
    let mut offset = 0;
    for (n, l) in text.split_inclusive('\n').enumerate() {
        if n + 1 == line {
            return offset + l.char_indices().nth(col.saturating_sub(1)).map_or(l.len(), |(i, _)| i);
        }
        offset += l.len();
    }
    text.len()
}

fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

fn skip_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

fn skip_raw_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
    i += hashes + 1;
    while i < b.len() {
        if b[i] == b'"' && b[i + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes {
            return i + 1 + hashes;
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"// a comment with ( and [
(
    format_version: 2,
    app_version: "x (y",
    scenario: (
        link: (
            a_to_b: (latency_ms: 40.0, loss_precent: 50),
        ),
        script: [
            (at_s: 1, action: burst),
            (at_s: 2, dri: a_to_b),
        ],
    ),
)"#;

    fn at(needle: &str) -> String {
        let off = TEXT.find(needle).unwrap();
        let line = TEXT[..off].matches('\n').count() + 1;
        let col = TEXT[..off].rsplit('\n').next().unwrap().chars().count() + 1;
        path_at(TEXT, line, col)
    }

    #[test]
    fn the_path_names_the_struct_around_a_position() {
        assert_eq!(at("loss_precent"), "link.a_to_b");
        assert_eq!(at("dri:"), "script[1]");
        assert_eq!(at("link: ("), "the scenario");
        assert_eq!(at("app_version"), "");
    }

    #[test]
    fn an_unknown_field_is_named_with_its_place_and_the_nearest_name() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Session {
            format_version: u32,
            app_version: String,
            scenario: ackscope_protocol::Scenario,
        }
        let e = ron_options().from_str::<Session>(TEXT).unwrap_err();
        let msg = describe(TEXT, &e);
        assert_eq!(
            msg,
            "unknown field `loss_precent` in link.a_to_b at line 7, column 40: did you mean `loss_percent`?"
        );
    }
}

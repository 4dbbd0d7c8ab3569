//! Completion: given a filter's text and the cursor, what can come next (field names,
//! operators, a field's named values, `&&` / `||`), and which part of the text a choice
//! replaces. The filter bar calls it on every edit; it never fails.

use std::ops::Range;

use super::fields::{describe, names_of, FieldType, RowKind};
use super::syntax::{tokens, Token, KEYWORDS};

/// What a candidate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateKind {
    Field,
    Operator,
    Value,
}

/// One completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The text it inserts (without the space the bar adds after it).
    pub text: String,
    pub kind: CandidateKind,
    /// A short description: a field's unit and meaning, an operator's.
    pub detail: String,
}

/// The candidates at a cursor, and the byte range of the text they replace (the word being
/// typed, or an empty range at the cursor).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    pub replace: Range<usize>,
    pub candidates: Vec<Candidate>,
}

impl Completion {
    /// `text` with candidate `c` put in place of [`Self::replace`], followed by a space, and
    /// the new cursor (a byte offset, after the space).
    pub fn apply(&self, text: &str, c: &Candidate) -> (String, usize) {
        let r = self.replace.start.min(text.len())..self.replace.end.min(text.len());
        let mut out = String::with_capacity(text.len() + c.text.len() + 1);
        out.push_str(&text[..r.start]);
        out.push_str(&c.text);
        let rest = &text[r.end..];
        if !rest.starts_with(' ') {
            out.push(' ');
        }
        let cursor = out.len() + usize::from(rest.starts_with(' '));
        out.push_str(rest);
        (out, cursor)
    }
}

const COMBINE: [(&str, &str); 2] = [("&&", "and: both hold"), ("||", "or: either holds")];

fn op(text: &str, detail: &str) -> Candidate {
    Candidate { text: text.into(), kind: CandidateKind::Operator, detail: detail.into() }
}

fn field_candidates(kind: RowKind) -> Vec<Candidate> {
    let mut v: Vec<Candidate> = names_of(kind)
        .into_iter()
        .map(|name| {
            let (unit, about, _) = describe(kind, name).unwrap_or(("", "", FieldType::Number));
            let detail = if unit.is_empty() { about.to_string() } else { format!("{unit}: {about}") };
            Candidate { text: name.into(), kind: CandidateKind::Field, detail }
        })
        .collect();
    v.push(op("!", "not"));
    v.push(op("(", "group"));
    v
}

fn operator_candidates(kind: RowKind, field: &str) -> Vec<Candidate> {
    let mut v = Vec::new();
    match describe(kind, field).map(|d| d.2) {
        Some(FieldType::Number) => {
            for (o, d) in [
                ("==", "equals"),
                ("!=", "differs (false where the row has no value)"),
                ("<", "below"),
                ("<=", "at most"),
                (">", "above"),
                (">=", "at least"),
                ("in", "in a set {1, 5..9} or a range 100..200 (both ends included)"),
            ] {
                v.push(op(o, d));
            }
        }
        Some(FieldType::Bool) | Some(FieldType::Names(_)) => {
            v.push(op("==", "equals"));
            v.push(op("!=", "differs"));
            if matches!(describe(kind, field).map(|d| d.2), Some(FieldType::Names(_))) {
                v.push(op("in", "one of a set {a, b}"));
            }
        }
        None => {}
    }
    v.extend(COMBINE.iter().map(|(o, d)| op(o, d)));
    v
}

fn value_candidates(kind: RowKind, field: &str) -> Vec<Candidate> {
    let value = |t: &str, d: &str| Candidate { text: t.into(), kind: CandidateKind::Value, detail: d.into() };
    match describe(kind, field) {
        Some((_, _, FieldType::Names(names))) => names.iter().map(|(n, _)| value(n, field)).collect(),
        Some((_, _, FieldType::Bool)) => vec![value("true", field), value("false", field)],
        _ => Vec::new(),
    }
}

fn is_field_word(t: &Token) -> Option<&str> {
    match t {
        Token::Word(w) if !KEYWORDS.contains(&w.as_str()) => Some(w),
        _ => None,
    }
}

/// The field a value at the end of `toks` belongs to: the word before the comparison operator
/// or before `in {` (and any set members already written).
fn field_of_value(toks: &[(Token, Range<usize>)]) -> Option<String> {
    let mut k = toks.len();
    while k > 0 {
        k -= 1;
        match &toks[k].0 {
            Token::Op("==" | "!=" | "<" | "<=" | ">" | ">=") => {
                return k.checked_sub(1).and_then(|j| is_field_word(&toks[j].0)).map(str::to_string);
            }
            Token::Word(w) if w == "in" => {
                return k.checked_sub(1).and_then(|j| is_field_word(&toks[j].0)).map(str::to_string);
            }
            Token::Op("{" | "," | "..") | Token::Number => {}
            Token::Word(_) => {}
            _ => return None,
        }
    }
    None
}

/// Candidates for `text` with the cursor at byte `cursor`, for rows of `kind`.
pub fn complete(kind: RowKind, text: &str, cursor: usize) -> Completion {
    let mut cursor = cursor.min(text.len());
    while !text.is_char_boundary(cursor) {
        cursor -= 1;
    }
    let mut toks = tokens(&text[..cursor]);
    // The word being typed (touching the cursor) is what a choice replaces.
    let (partial, replace) = match toks.last() {
        Some((Token::Word(w), span)) if span.end == cursor => {
            let r = (w.to_ascii_lowercase(), span.clone());
            toks.pop();
            r
        }
        _ => (String::new(), cursor..cursor),
    };
    let open_parens = toks.iter().fold(0i32, |n, (t, _)| match t {
        Token::Op("(") => n + 1,
        Token::Op(")") => n - 1,
        _ => n,
    });
    let in_set = toks.iter().rev().find_map(|(t, _)| match t {
        Token::Op("{") => Some(true),
        Token::Op("}") => Some(false),
        _ => None,
    }) == Some(true);
    let last = toks.last().map(|(t, _)| t.clone());
    let mut candidates = match &last {
        None | Some(Token::Op("&&" | "||" | "!" | "(")) => field_candidates(kind),
        Some(Token::Word(w)) if ["and", "or", "not"].contains(&w.as_str()) => field_candidates(kind),
        Some(Token::Op("==" | "!=" | "<" | "<=" | ">" | ">=")) => {
            field_of_value(&toks).map(|f| value_candidates(kind, &f)).unwrap_or_default()
        }
        Some(Token::Word(w)) if w == "in" => vec![op("{", "a set: {a, b} or {1, 5..9}")],
        Some(Token::Op("{" | ",")) => field_of_value(&toks).map(|f| value_candidates(kind, &f)).unwrap_or_default(),
        Some(Token::Op("=")) => vec![op("==", "equals")],
        Some(Token::Op("&")) => vec![op("&&", "and")],
        Some(Token::Op("|")) => vec![op("||", "or")],
        Some(Token::Word(w)) => {
            // A field (then operators) or a value just written (then && / ||).
            let before = toks.len().checked_sub(2).map(|j| &toks[j].0);
            let after_value = matches!(before, Some(Token::Op("==" | "!=" | "<" | "<=" | ">" | ">=" | "{" | ",")));
            if after_value || in_set {
                let mut v = if in_set { vec![op("}", "end of the set")] } else { Vec::new() };
                if !in_set {
                    v.extend(COMBINE.iter().map(|(o, d)| op(o, d)));
                }
                v
            } else {
                operator_candidates(kind, &w.to_ascii_lowercase())
            }
        }
        Some(Token::Number | Token::Op(")" | "}")) => {
            if in_set {
                vec![op("}", "end of the set"), op(",", "another member")]
            } else {
                COMBINE.iter().map(|(o, d)| op(o, d)).collect()
            }
        }
        _ => Vec::new(),
    };
    if open_parens > 0
        && matches!(&last, Some(Token::Number | Token::Word(_) | Token::Op(")" | "}")))
        && !in_set
        && candidates.iter().any(|c| c.text == "&&")
    {
        candidates.push(op(")", "close the group"));
    }
    if !partial.is_empty() {
        // Names starting with what was typed; else names containing it (`cause` finds
        // `resend.cause`).
        let starts: Vec<Candidate> = candidates.iter().filter(|c| c.text.starts_with(&partial)).cloned().collect();
        candidates = if starts.is_empty() {
            candidates.into_iter().filter(|c| c.text.contains(&partial)).collect()
        } else {
            starts
        };
        // A word already complete and alone is not offered again.
        if candidates.len() == 1 && candidates[0].text == partial {
            candidates.clear();
        }
    }
    Completion { replace, candidates }
}

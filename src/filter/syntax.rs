//! The filter language's grammar: text to an expression tree with byte spans, or an error
//! pointing at the character where the text stops making sense.
//!
//! ```text
//! filter     = or EOF
//! or         = and { ("||" | "or") and }
//! and        = unary { ("&&" | "and") unary }
//! unary      = ("!" | "not") unary | "(" or ")" | relation
//! relation   = field [ op value | "in" set | "in" range ]
//! op         = "==" | "!=" | "<" | "<=" | ">" | ">="
//! set        = "{" item { [","] item } "}"        item = range | value
//! range      = number ".." number                 both ends included, as Wireshark's
//! value      = number | name
//! field      = name                               dotted: msg.id, resend.cause
//! name       = (letter | "_") { letter | digit | "_" | "." }
//! number     = ["-"] digits ["." digits]
//! ```
//!
//! Parsed with winnow (nom's maintained successor): each rule is a combinator, and a rule that
//! has seen enough to know what it is parsing cuts (`cut_err`), so the error names what was
//! expected at the exact offset rather than the start of the last alternative. Names are not
//! resolved here: which fields exist, their types and named values are the compiler's
//! ([`super::compile`]), which reports against the spans kept in the tree.

use winnow::ascii::{digit1, multispace0, multispace1};
use winnow::combinator::{alt, cut_err, delimited, eof, fail, not, opt, preceded, repeat};
use winnow::error::{ContextError, ErrMode, StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::stream::{LocatingSlice, Stream};
use winnow::token::{one_of, take_while};

use super::error::FilterError;
pub use super::error::Span;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub const ALL: [CmpOp; 6] = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];

    pub fn text(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// Equality and inequality (the only ones named values and booleans take).
    pub fn is_equality(self) -> bool {
        matches!(self, CmpOp::Eq | CmpOp::Ne)
    }
}

/// A field as written.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldRef {
    pub name: String,
    pub span: Span,
}

/// A value as written: a number or a name (`dropped`, `a_to_b`, `true`).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Num(f64, Span),
    Name(String, Span),
}

impl Value {
    pub fn span(&self) -> Span {
        match self {
            Value::Num(_, s) | Value::Name(_, s) => s.clone(),
        }
    }
}

/// One member of a set: a value or an inclusive range.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Value(Value),
    Range(f64, f64, Span),
}

/// The expression tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Or(Vec<Expr>),
    And(Vec<Expr>),
    Not(Box<Expr>),
    /// A field alone: a boolean's value, or "has a value" for any other field.
    Bare(FieldRef),
    Cmp {
        field: FieldRef,
        op: CmpOp,
        op_span: Span,
        value: Value,
    },
    /// `field in {..}` or `field in a..b` (a set of one range).
    In {
        field: FieldRef,
        items: Vec<Item>,
        span: Span,
    },
}

type Input<'a> = LocatingSlice<&'a str>;
type PResult<O> = ModalResult<O, ContextError>;

/// Words that are operators, never fields or values.
pub const KEYWORDS: [&str; 4] = ["and", "or", "not", "in"];

fn expected(what: &'static str) -> StrContext {
    StrContext::Expected(StrContextValue::Description(what))
}

fn ws(i: &mut Input) -> PResult<()> {
    multispace0.void().parse_next(i)
}

/// A word: a letter or `_`, then letters, digits, `_` and `.` (dotted field names).
fn word<'a>(i: &mut Input<'a>) -> PResult<(&'a str, Span)> {
    (
        one_of(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(0.., |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.'),
    )
        .take()
        .with_span()
        .parse_next(i)
}

/// A keyword, not followed by more of a word (`in` but not `index`).
fn keyword<'a>(kw: &'static str) -> impl Parser<Input<'a>, (), ErrMode<ContextError>> {
    (kw, not(one_of(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.'))).void()
}

/// A name that is not a keyword.
fn name(i: &mut Input) -> PResult<(String, Span)> {
    let start = i.checkpoint();
    let (w, span) = word(i)?;
    if KEYWORDS.contains(&w) {
        i.reset(&start);
        return Err(ErrMode::Backtrack(ContextError::new()));
    }
    Ok((w.to_string(), span))
}

fn number(i: &mut Input) -> PResult<(f64, Span)> {
    (opt('-'), digit1, opt(('.', digit1)))
        .take()
        .with_span()
        .try_map(|(s, span): (&str, Span)| s.parse::<f64>().map(|v| (v, span)))
        .parse_next(i)
}

fn value(i: &mut Input) -> PResult<Value> {
    alt((number.map(|(v, s)| Value::Num(v, s)), name.map(|(n, s)| Value::Name(n, s))))
        .context(expected("a number or a name"))
        .parse_next(i)
}

fn range(i: &mut Input) -> PResult<Item> {
    (number, preceded((ws, ".."), preceded(ws, cut_err(number.context(expected("a number"))))))
        .with_span()
        .map(|(((lo, _), (hi, _)), span)| Item::Range(lo, hi, span))
        .parse_next(i)
}

fn item(i: &mut Input) -> PResult<Item> {
    alt((range, value.map(Item::Value))).parse_next(i)
}

/// `{ item [,] item ... }`: after a comma another member must follow.
fn set(i: &mut Input) -> PResult<Vec<Item>> {
    let more = alt((preceded((ws, ',', ws), cut_err(item)), preceded(multispace1, item)));
    preceded(
        '{',
        cut_err(delimited(
            ws,
            (item, repeat(0.., more)).map(|(first, rest): (Item, Vec<Item>)| {
                let mut v = vec![first];
                v.extend(rest);
                v
            }),
            (ws, '}'.context(expected("`}`")).context(expected("`,`"))),
        )),
    )
    .parse_next(i)
}

fn cmp_op(i: &mut Input) -> PResult<(CmpOp, Span)> {
    alt((
        "==".value(CmpOp::Eq),
        "!=".value(CmpOp::Ne),
        "<=".value(CmpOp::Le),
        ">=".value(CmpOp::Ge),
        "<".value(CmpOp::Lt),
        ">".value(CmpOp::Gt),
    ))
    .with_span()
    .parse_next(i)
}

fn relation(i: &mut Input) -> PResult<Expr> {
    let (name, span) = name.parse_next(i)?;
    let field = FieldRef { name, span };
    let start = i.checkpoint();
    ws(i)?;
    if let Some((op, op_span)) = opt(cmp_op).parse_next(i)? {
        ws(i)?;
        let value = cut_err(value).parse_next(i)?;
        return Ok(Expr::Cmp { field, op, op_span, value });
    }
    if opt(keyword("in")).parse_next(i)?.is_some() {
        ws(i)?;
        let (items, span) = cut_err(alt((
            set,
            range.map(|r| vec![r]),
            fail.context(expected("`{`")).context(expected("a range such as 100..200")),
        )))
        .with_span()
        .parse_next(i)?;
        return Ok(Expr::In { field, items, span });
    }
    i.reset(&start);
    Ok(Expr::Bare(field))
}

fn unary(i: &mut Input) -> PResult<Expr> {
    ws(i)?;
    alt((
        preceded(alt(("!".void(), keyword("not"))), cut_err(unary)).map(|e| Expr::Not(Box::new(e))),
        preceded('(', cut_err((or, ws, ')'.context(expected("`)`"))))).map(|(e, _, _)| e),
        relation,
        fail.context(expected("a field")).context(expected("`!`")).context(expected("`(`")),
    ))
    .parse_next(i)
}

fn and(i: &mut Input) -> PResult<Expr> {
    let first = unary(i)?;
    let rest: Vec<Expr> =
        repeat(0.., preceded((ws, alt(("&&".void(), keyword("and")))), cut_err(unary))).parse_next(i)?;
    Ok(if rest.is_empty() { first } else { Expr::And(std::iter::once(first).chain(rest).collect()) })
}

fn or(i: &mut Input) -> PResult<Expr> {
    let first = and(i)?;
    let rest: Vec<Expr> = repeat(0.., preceded((ws, alt(("||".void(), keyword("or")))), cut_err(and))).parse_next(i)?;
    Ok(if rest.is_empty() { first } else { Expr::Or(std::iter::once(first).chain(rest).collect()) })
}

fn filter(i: &mut Input) -> PResult<Expr> {
    let e = or(i)?;
    ws(i)?;
    eof.context(expected("the end"))
        .context(expected("`||`"))
        .context(expected("`&&`"))
        .context(expected("an operator (== != < <= > >= in)"))
        .parse_next(i)?;
    Ok(e)
}

/// Parses `text` into an expression tree; an empty (or blank) text is an error (callers treat
/// it as "no filter" before asking).
pub fn parse(text: &str) -> Result<Expr, FilterError> {
    match filter.parse(LocatingSlice::new(text)) {
        Ok(e) => Ok(e),
        Err(e) => {
            let offset = e.offset();
            let mut wanted: Vec<String> = Vec::new();
            for c in e.inner().context() {
                if let StrContext::Expected(v) = c {
                    let s = match v {
                        StrContextValue::Description(d) => d.to_string(),
                        other => other.to_string(),
                    };
                    if !wanted.contains(&s) {
                        wanted.push(s);
                    }
                }
            }
            let what = match wanted.len() {
                0 => "unexpected text".to_string(),
                1 => format!("expected {}", wanted[0]),
                n => format!("expected {} or {}", wanted[..n - 1].join(", "), wanted[n - 1]),
            };
            let found = text[offset..].chars().next().map_or("found the end".to_string(), |c| format!("found `{c}`"));
            Err(FilterError::at(text, offset..offset, what).hint(found))
        }
    }
}

/// A token of the text as completion reads it (the parser needs none: it reads characters).
#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Word(String),
    Number,
    /// An operator or punctuation: `==`, `&&`, `(`, `{`, `..`, `,`, and partial ones (`=`, `&`).
    Op(&'static str),
    /// Anything else (one character).
    Other,
}

fn token(i: &mut Input) -> PResult<(Token, Span)> {
    alt((
        word.map(|(w, _)| Token::Word(w.to_string())),
        number.map(|_| Token::Number),
        alt((
            "==".value(Token::Op("==")),
            "!=".value(Token::Op("!=")),
            "<=".value(Token::Op("<=")),
            ">=".value(Token::Op(">=")),
            "&&".value(Token::Op("&&")),
            "||".value(Token::Op("||")),
            "..".value(Token::Op("..")),
        )),
        alt((
            "<".value(Token::Op("<")),
            ">".value(Token::Op(">")),
            "!".value(Token::Op("!")),
            "=".value(Token::Op("=")),
            "&".value(Token::Op("&")),
            "|".value(Token::Op("|")),
        )),
        alt((
            "(".value(Token::Op("(")),
            ")".value(Token::Op(")")),
            "{".value(Token::Op("{")),
            "}".value(Token::Op("}")),
            ",".value(Token::Op(",")),
            winnow::token::any.value(Token::Other),
        )),
    ))
    .with_span()
    .parse_next(i)
}

/// The tokens of `text` with their byte spans; never fails (an unknown character is
/// [`Token::Other`]).
pub fn tokens(text: &str) -> Vec<(Token, Span)> {
    let mut input = LocatingSlice::new(text);
    let parsed: PResult<Vec<(Token, Span)>> = repeat(0.., preceded(ws, token)).parse_next(&mut input);
    parsed.unwrap_or_default()
}

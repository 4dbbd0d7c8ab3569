//! Type-checking a parsed filter against one row kind and turning it into a tree of closures.
//!
//! Everything that can be decided from the text is decided here, once: each field is looked up
//! (an unknown one gets the closest name; one that only other kinds have is an error naming
//! them), each value checked against the field's type (numbers, `true`/`false`, or the field's
//! named values, groups resolved to bit masks), each operator against what the type allows.
//! What is left for a row is a call through a function pointer and a comparison: no lookup, no
//! string, no allocation.
//!
//! A field that does not apply to the kind being filtered is an error rather than false, so a
//! misplaced filter (`latency_ms > 100` on packets) says so instead of silently showing nothing.
//! A comparison with a value the row lacks (`delay_ms > 5` on a dropped packet) is false,
//! whatever the operator, as in Wireshark; `!` of it is true.

use ackscope_protocol::ClientId;

use super::error::FilterError;
use super::fields::{kinds_with, names_of, Field, Get, Names, Row, RowKind};
use super::syntax::{parse, CmpOp, Expr, FieldRef, Item, Value};

/// A compiled filter's test of one row.
///
/// It is given the row and the client of the row's connection (the `client` field; every row of
/// a connection has the same one).
pub type Pred<R> = Box<dyn Fn(&R, ClientId) -> bool + Send + Sync>;

/// A filter compiled for rows of type `R`.
pub struct Compiled<R> {
    /// The text it was compiled from (trimmed).
    pub text: String,
    pub pred: Pred<R>,
    /// The fields it names, each once, in order of appearance.
    pub fields: Vec<&'static str>,
}

impl<R> std::fmt::Debug for Compiled<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled").field("text", &self.text).field("fields", &self.fields).finish()
    }
}

impl<R: Row> Compiled<R> {
    /// Parses and compiles `text` for rows of kind `R`.
    pub fn new(text: &str) -> Result<Self, FilterError> {
        let ast = parse(text)?;
        let mut c = Compiler { src: text, fields: Vec::new() };
        let pred = c.expr::<R>(&ast)?;
        Ok(Self { text: text.trim().to_string(), pred, fields: c.fields })
    }

    /// Whether `row`, of client `client`'s connection, matches.
    pub fn matches(&self, row: &R, client: ClientId) -> bool {
        (self.pred)(row, client)
    }

    /// Whether it names `field`.
    pub fn uses(&self, field: &str) -> bool {
        self.fields.contains(&field)
    }
}

/// The closest of `names` to `typed`, when it is close enough to be a likely typo.
pub fn closest<'a>(typed: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names
        .into_iter()
        .map(|n| (strsim::jaro_winkler(typed, n), n))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

fn list(names: &[&str]) -> String {
    match names.len() {
        0 => String::new(),
        1 => names[0].to_string(),
        n => format!("{} or {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

fn kinds_list(kinds: &[RowKind]) -> String {
    list(&kinds.iter().map(|k| k.plural()).collect::<Vec<_>>())
}

struct Compiler<'s> {
    src: &'s str,
    fields: Vec<&'static str>,
}

impl Compiler<'_> {
    fn err(&self, span: std::ops::Range<usize>, msg: impl Into<String>) -> FilterError {
        FilterError::at(self.src, span, msg)
    }

    fn field<R: Row>(&mut self, f: &FieldRef) -> Result<&'static Field<R>, FilterError> {
        let name = f.name.to_ascii_lowercase();
        if let Some(field) = R::fields().iter().find(|x| x.name == name) {
            if !self.fields.contains(&field.name) {
                self.fields.push(field.name);
            }
            return Ok(field);
        }
        let others = kinds_with(&name);
        if !others.is_empty() {
            return Err(self
                .err(f.span.clone(), format!("`{}` does not apply to {}", f.name, R::KIND.plural()))
                .hint(format!("it is a field of {}", kinds_list(&others))));
        }
        let e = self.err(f.span.clone(), format!("unknown field `{}`", f.name));
        let own = names_of(R::KIND);
        // The closest name of any kind; this kind's own name wins a tie.
        let every: Vec<&str> = RowKind::ALL.iter().flat_map(|k| names_of(*k)).collect();
        Err(match closest(&name, every.iter().copied()) {
            Some(n) if own.contains(&n) => e.hint(format!("did you mean `{n}`?")),
            Some(n) => match closest(&name, own.iter().copied()) {
                Some(o) if strsim::jaro_winkler(&name, o) >= strsim::jaro_winkler(&name, n) => {
                    e.hint(format!("did you mean `{o}`?"))
                }
                _ => e.hint(format!("did you mean `{n}` (a field of {})?", kinds_list(&kinds_with(n)))),
            },
            None => e.hint(format!("{} have {}", R::KIND.plural(), own.join(", "))),
        })
    }

    /// The bits of named value `v` of a field with `names`, or an error listing them.
    fn name_bits(&self, field: &str, names: Names, v: &Value) -> Result<u32, FilterError> {
        let all: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
        match v {
            Value::Name(n, span) => {
                let lower = n.to_ascii_lowercase();
                if let Some((_, bits)) = names.iter().find(|(x, _)| *x == lower) {
                    return Ok(*bits);
                }
                let e = self.err(span.clone(), format!("`{n}` is not a value of `{field}`"));
                Err(match closest(&lower, all.iter().copied()) {
                    Some(c) => e.hint(format!("did you mean `{c}`? (values: {})", all.join(", "))),
                    None => e.hint(format!("its values are {}", all.join(", "))),
                })
            }
            Value::Num(_, span) => Err(self
                .err(span.clone(), format!("`{field}` takes a name, not a number"))
                .hint(format!("its values are {}", all.join(", ")))),
        }
    }

    fn number(&self, field: &str, v: &Value) -> Result<f64, FilterError> {
        match v {
            Value::Num(x, _) => Ok(*x),
            Value::Name(n, span) => Err(self.err(span.clone(), format!("expected a number for `{field}`, not `{n}`"))),
        }
    }

    fn boolean(&self, field: &str, v: &Value) -> Result<bool, FilterError> {
        match v {
            Value::Name(n, _) if n.eq_ignore_ascii_case("true") => Ok(true),
            Value::Name(n, _) if n.eq_ignore_ascii_case("false") => Ok(false),
            other => Err(self.err(other.span(), format!("`{field}` is true or false"))),
        }
    }

    fn expr<R: Row>(&mut self, e: &Expr) -> Result<Pred<R>, FilterError> {
        Ok(match e {
            Expr::Or(xs) => {
                let mut ps: Vec<Pred<R>> = xs.iter().map(|x| self.expr::<R>(x)).collect::<Result<_, _>>()?;
                if ps.len() == 2 {
                    let (b, a) = (ps.pop().unwrap(), ps.pop().unwrap());
                    Box::new(move |r, c| a(r, c) || b(r, c))
                } else {
                    Box::new(move |r, c| ps.iter().any(|p| p(r, c)))
                }
            }
            Expr::And(xs) => {
                let mut ps: Vec<Pred<R>> = xs.iter().map(|x| self.expr::<R>(x)).collect::<Result<_, _>>()?;
                if ps.len() == 2 {
                    let (b, a) = (ps.pop().unwrap(), ps.pop().unwrap());
                    Box::new(move |r, c| a(r, c) && b(r, c))
                } else {
                    Box::new(move |r, c| ps.iter().all(|p| p(r, c)))
                }
            }
            Expr::Not(x) => {
                let p = self.expr::<R>(x)?;
                Box::new(move |r, c| !p(r, c))
            }
            Expr::Bare(f) => match self.field::<R>(f)?.get {
                Get::Bool(g) => Box::new(move |r, _| g(r)),
                Get::Num(g) => Box::new(move |r, _| g(r).is_some()),
                Get::Enum(g, _) => Box::new(move |r, _| g(r) != 0),
                Get::Client => Box::new(|_, _| true),
            },
            Expr::Cmp { field, op, op_span, value } => self.cmp::<R>(field, *op, op_span, value)?,
            Expr::In { field, items, span } => self.set::<R>(field, items, span)?,
        })
    }

    fn cmp<R: Row>(
        &mut self,
        f: &FieldRef,
        op: CmpOp,
        op_span: &std::ops::Range<usize>,
        v: &Value,
    ) -> Result<Pred<R>, FilterError> {
        let field = self.field::<R>(f)?;
        let name = field.name;
        Ok(match field.get {
            Get::Num(g) => num_cmp(move |r, _| g(r), op, self.number(name, v)?),
            Get::Client => num_cmp(|_, c| Some(f64::from(c)), op, self.number(name, v)?),
            Get::Bool(g) => {
                if !op.is_equality() {
                    return Err(self.err(op_span.clone(), format!("`{name}` is true or false: use == or !=")));
                }
                let want = self.boolean(name, v)? == (op == CmpOp::Eq);
                Box::new(move |r, _| g(r) == want)
            }
            Get::Enum(g, names) => {
                if !op.is_equality() {
                    return Err(self.err(op_span.clone(), format!("`{name}` takes ==, != or in, not {}", op.text())));
                }
                let bits = self.name_bits(name, names, v)?;
                if op == CmpOp::Eq {
                    Box::new(move |r, _| g(r) & bits != 0)
                } else {
                    Box::new(move |r, _| {
                        let have = g(r);
                        have != 0 && have & bits == 0
                    })
                }
            }
        })
    }

    fn set<R: Row>(
        &mut self,
        f: &FieldRef,
        items: &[Item],
        span: &std::ops::Range<usize>,
    ) -> Result<Pred<R>, FilterError> {
        let field = self.field::<R>(f)?;
        let name = field.name;
        Ok(match field.get {
            Get::Num(_) | Get::Client => {
                let mut ranges: Vec<(f64, f64)> = Vec::with_capacity(items.len());
                for it in items {
                    match it {
                        Item::Range(lo, hi, s) => {
                            if lo > hi {
                                return Err(self.err(s.clone(), format!("empty range: {lo} is above {hi}")));
                            }
                            ranges.push((*lo, *hi));
                        }
                        Item::Value(v) => {
                            let x = self.number(name, v)?;
                            ranges.push((x, x));
                        }
                    }
                }
                match field.get {
                    Get::Num(g) => num_in(move |r, _| g(r), ranges),
                    _ => num_in(|_, c| Some(f64::from(c)), ranges),
                }
            }
            Get::Enum(g, names) => {
                let mut bits = 0;
                for it in items {
                    match it {
                        Item::Value(v) => bits |= self.name_bits(name, names, v)?,
                        Item::Range(_, _, s) => {
                            return Err(self.err(s.clone(), format!("`{name}` takes names, not a range")));
                        }
                    }
                }
                Box::new(move |r, _| g(r) & bits != 0)
            }
            Get::Bool(g) => {
                let (mut t, mut fa) = (false, false);
                for it in items {
                    match it {
                        Item::Value(v) => {
                            if self.boolean(name, v)? {
                                t = true
                            } else {
                                fa = true
                            }
                        }
                        Item::Range(..) => return Err(self.err(span.clone(), format!("`{name}` is true or false"))),
                    }
                }
                Box::new(move |r, _| if g(r) { t } else { fa })
            }
        })
    }
}

/// A comparison of a number read by `read` (`None`: the row has none, and the comparison is
/// false) with `k`.
fn num_cmp<R: Row>(read: impl Fn(&R, ClientId) -> Option<f64> + Send + Sync + 'static, op: CmpOp, k: f64) -> Pred<R> {
    match op {
        CmpOp::Eq => Box::new(move |r, c| read(r, c).is_some_and(|x| x == k)),
        CmpOp::Ne => Box::new(move |r, c| read(r, c).is_some_and(|x| x != k)),
        CmpOp::Lt => Box::new(move |r, c| read(r, c).is_some_and(|x| x < k)),
        CmpOp::Le => Box::new(move |r, c| read(r, c).is_some_and(|x| x <= k)),
        CmpOp::Gt => Box::new(move |r, c| read(r, c).is_some_and(|x| x > k)),
        CmpOp::Ge => Box::new(move |r, c| read(r, c).is_some_and(|x| x >= k)),
    }
}

/// Membership of a number read by `read` in inclusive `ranges` (single values are ranges of one).
fn num_in<R: Row>(
    read: impl Fn(&R, ClientId) -> Option<f64> + Send + Sync + 'static,
    ranges: Vec<(f64, f64)>,
) -> Pred<R> {
    if let [(lo, hi)] = ranges[..] {
        Box::new(move |r, c| read(r, c).is_some_and(|x| lo <= x && x <= hi))
    } else {
        Box::new(move |r, c| read(r, c).is_some_and(|x| ranges.iter().any(|&(lo, hi)| lo <= x && x <= hi)))
    }
}

//! A serde deserializer for the subset of RON that one event line of a session file uses, about
//! ten times faster than `ron` for that subset.
//!
//! An event line is `(dt_us,Kind(field:value,...)),`: integers, floats, booleans, plain strings,
//! `Some(..)`/`None`, unit enum variants and nested `(field:value)` structs, without comments or
//! struct names. Anything else (a comment, an escape it does not know, a raw string...) is a
//! [`Miss`]: the caller then parses that line with `ron` itself, so every file `ron` reads still
//! loads the same, and errors keep `ron`'s messages. The derived `Deserialize` impls of the event
//! types drive it, so a new event variant or field needs nothing here.

use ackscope_protocol::EventKind;

use super::codec::Line;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Visitor};
use serde::Deserialize;

/// The line is outside the fast subset (or not valid): parse it with `ron`.
#[derive(Debug)]
pub struct Miss;

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not in the fast subset")
    }
}

impl std::error::Error for Miss {}

impl de::Error for Miss {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Miss
    }
}

type R<T> = Result<T, Miss>;

/// Parses one event line (`(dt,Kind(..))` or `(dt,Kind(..),client)` with an optional trailing
/// comma and whitespace).
pub fn parse_event_line(line: &str) -> R<Line<EventKind>> {
    let mut de = LineDe { b: line.as_bytes(), i: 0 };
    let v = Line::<EventKind>::deserialize(&mut de)?;
    de.ws();
    if de.peek() == Some(b',') {
        de.i += 1;
    }
    de.ws();
    if de.i == de.b.len() {
        Ok(v)
    } else {
        Err(Miss)
    }
}

struct LineDe<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> LineDe<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> R<()> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(Miss)
        }
    }

    /// After a value in a list: a comma (optional before the closing bracket).
    fn after_item(&mut self) {
        self.ws();
        if self.peek() == Some(b',') {
            self.i += 1;
        }
    }

    fn ident(&mut self) -> R<&'a str> {
        self.ws();
        let start = self.i;
        while self.i < self.b.len() && (self.b[self.i].is_ascii_alphanumeric() || self.b[self.i] == b'_') {
            self.i += 1;
        }
        if start == self.i || self.b[start].is_ascii_digit() {
            return Err(Miss);
        }
        std::str::from_utf8(&self.b[start..self.i]).map_err(|_| Miss)
    }

    fn unsigned(&mut self) -> R<u64> {
        self.ws();
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(d) = self.peek().filter(u8::is_ascii_digit) {
            v = v.checked_mul(10).and_then(|v| v.checked_add((d - b'0') as u64)).ok_or(Miss)?;
            self.i += 1;
        }
        if self.i == start || matches!(self.peek(), Some(b'.' | b'e' | b'E' | b'_' | b'x' | b'b' | b'o')) {
            return Err(Miss);
        }
        Ok(v)
    }

    fn signed(&mut self) -> R<i64> {
        self.ws();
        let neg = self.peek() == Some(b'-');
        if neg || self.peek() == Some(b'+') {
            self.i += 1;
        }
        let v = self.unsigned()?;
        if neg {
            0i64.checked_sub_unsigned(v).ok_or(Miss)
        } else {
            i64::try_from(v).map_err(|_| Miss)
        }
    }

    /// The text of a number, for `str::parse` as the type asked for.
    fn number(&mut self) -> R<&'a str> {
        self.ws();
        let start = self.i;
        while self.i < self.b.len() && matches!(self.b[self.i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
            self.i += 1;
        }
        let s = std::str::from_utf8(&self.b[start..self.i]).map_err(|_| Miss)?;
        // RON's `inf`, `NaN` and `1.` forms are rare: `ron` takes them.
        if s.is_empty() || s.ends_with('.') {
            return Err(Miss);
        }
        Ok(s)
    }

    fn string(&mut self) -> R<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    self.i += 1;
                    return std::str::from_utf8(&self.b[start..self.i - 1]).map_err(|_| Miss);
                }
                // Escapes are rare in events (reason strings): `ron` decodes them.
                b'\\' => return Err(Miss),
                _ => self.i += 1,
            }
        }
        Err(Miss)
    }

    /// Skips one value of any shape (an unknown field's).
    fn skip_value(&mut self) -> R<()> {
        self.ws();
        match self.peek().ok_or(Miss)? {
            b'"' => self.string().map(drop),
            b'(' | b'[' => {
                let close = if self.peek() == Some(b'(') { b')' } else { b']' };
                self.i += 1;
                loop {
                    self.ws();
                    if self.peek() == Some(close) {
                        self.i += 1;
                        return Ok(());
                    }
                    // A field name before its value.
                    let save = self.i;
                    if self.ident().is_ok() && self.eat(b':').is_ok() {
                    } else {
                        self.i = save;
                    }
                    self.skip_value()?;
                    self.after_item();
                }
            }
            b'0'..=b'9' | b'-' | b'+' | b'.' => self.number().map(drop),
            _ => {
                self.ident()?;
                self.ws();
                if self.peek() == Some(b'(') {
                    self.skip_value()?;
                }
                Ok(())
            }
        }
    }
}

macro_rules! unsigned {
    ($($m:ident $v:ident $t:ty),*) => {$(
        fn $m<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
            let n = self.unsigned()?;
            v.$v(<$t>::try_from(n).map_err(|_| Miss)?)
        }
    )*};
}

macro_rules! signed {
    ($($m:ident $v:ident $t:ty),*) => {$(
        fn $m<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
            let n = self.signed()?;
            v.$v(<$t>::try_from(n).map_err(|_| Miss)?)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &mut LineDe<'de> {
    type Error = Miss;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> R<V::Value> {
        Err(Miss)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        match self.ident()? {
            "true" => v.visit_bool(true),
            "false" => v.visit_bool(false),
            _ => Err(Miss),
        }
    }

    unsigned!(deserialize_u8 visit_u8 u8, deserialize_u16 visit_u16 u16, deserialize_u32 visit_u32 u32,
        deserialize_u64 visit_u64 u64);
    signed!(deserialize_i8 visit_i8 i8, deserialize_i16 visit_i16 i16, deserialize_i32 visit_i32 i32,
        deserialize_i64 visit_i64 i64);

    fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        // Parsed as f32 directly: the shortest decimal `ron` wrote reads back to the same f32.
        v.visit_f32(self.number()?.parse().map_err(|_| Miss)?)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        v.visit_f64(self.number()?.parse().map_err(|_| Miss)?)
    }

    fn deserialize_char<V: Visitor<'de>>(self, _: V) -> R<V::Value> {
        Err(Miss)
    }

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        v.visit_borrowed_str(self.string()?)
    }

    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        self.deserialize_str(v)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, _: V) -> R<V::Value> {
        Err(Miss)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, _: V) -> R<V::Value> {
        Err(Miss)
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        match self.ident()? {
            "None" => v.visit_none(),
            "Some" => {
                self.eat(b'(')?;
                let out = v.visit_some(&mut *self)?;
                self.eat(b')')?;
                Ok(out)
            }
            _ => Err(Miss),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        self.eat(b'(')?;
        self.eat(b')')?;
        v.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, v: V) -> R<V::Value> {
        self.deserialize_unit(v)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, v: V) -> R<V::Value> {
        v.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        self.eat(b'[')?;
        let out = v.visit_seq(Items { de: &mut *self, close: b']' })?;
        self.eat(b']')?;
        Ok(out)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, v: V) -> R<V::Value> {
        self.eat(b'(')?;
        let out = v.visit_seq(Items { de: &mut *self, close: b')' })?;
        self.eat(b')')?;
        Ok(out)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, len: usize, v: V) -> R<V::Value> {
        self.deserialize_tuple(len, v)
    }

    fn deserialize_map<V: Visitor<'de>>(self, _: V) -> R<V::Value> {
        Err(Miss)
    }

    fn deserialize_struct<V: Visitor<'de>>(self, _: &'static str, _: &'static [&'static str], v: V) -> R<V::Value> {
        self.eat(b'(')?;
        let out = v.visit_map(Fields { de: &mut *self })?;
        self.eat(b')')?;
        Ok(out)
    }

    fn deserialize_enum<V: Visitor<'de>>(self, _: &'static str, _: &'static [&'static str], v: V) -> R<V::Value> {
        v.visit_enum(&mut *self)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        v.visit_borrowed_str(self.ident()?)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> R<V::Value> {
        self.skip_value()?;
        v.visit_unit()
    }
}

/// The elements of a tuple or list up to `close`.
struct Items<'a, 'de> {
    de: &'a mut LineDe<'de>,
    close: u8,
}

impl<'de> de::SeqAccess<'de> for Items<'_, 'de> {
    type Error = Miss;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> R<Option<T::Value>> {
        self.de.ws();
        if self.de.peek() == Some(self.close) {
            return Ok(None);
        }
        let v = seed.deserialize(&mut *self.de)?;
        self.de.after_item();
        Ok(Some(v))
    }
}

/// The `name:value` fields of a struct up to its `)`.
struct Fields<'a, 'de> {
    de: &'a mut LineDe<'de>,
}

impl<'de> de::MapAccess<'de> for Fields<'_, 'de> {
    type Error = Miss;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> R<Option<K::Value>> {
        self.de.ws();
        if self.de.peek() == Some(b')') {
            return Ok(None);
        }
        let name = self.de.ident()?;
        self.de.eat(b':')?;
        seed.deserialize(BorrowedStrDeserializer::new(name)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> R<V::Value> {
        let v = seed.deserialize(&mut *self.de)?;
        self.de.after_item();
        Ok(v)
    }
}

impl<'de> de::EnumAccess<'de> for &mut LineDe<'de> {
    type Error = Miss;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> R<(V::Value, Self)> {
        let name = self.ident()?;
        let v = seed.deserialize(BorrowedStrDeserializer::<Miss>::new(name))?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for &mut LineDe<'de> {
    type Error = Miss;

    fn unit_variant(self) -> R<()> {
        self.ws();
        if self.peek() == Some(b'(') {
            return Err(Miss);
        }
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> R<T::Value> {
        self.eat(b'(')?;
        let v = seed.deserialize(&mut *self)?;
        self.eat(b')')?;
        Ok(v)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> R<V::Value> {
        de::Deserializer::deserialize_tuple(self, len, v)
    }

    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], v: V) -> R<V::Value> {
        de::Deserializer::deserialize_struct(self, "", fields, v)
    }
}

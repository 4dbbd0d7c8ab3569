//! Event lines written without `ron`'s serializer, byte for byte as `ron` writes them.
//!
//! A session file holds one event per line, and `ron` spent about 4,400 instructions on each
//! (a third of them validating identifiers it was handed by `#[derive(Serialize)]`, which are
//! Rust identifiers by construction, and formatting integers through `fmt`). Lines sit below the
//! file's pretty-printing depth limit, where `ron` writes the compact form: no spaces, no
//! trailing commas, no struct names. This serializer writes exactly that form into a `String`:
//! integers through `itoa`, floats as `ron` does (`{:?}`, the shortest text that reads back to the
//! same value), strings escaped as `ron` escapes them (`char::escape_debug`), identifiers raw
//! (`r#...`) exactly where `ron` would (an identifier that is not plain ASCII, which derived
//! impls never give, is refused and the caller falls back to `ron`). `tests` check it against `ron` itself, on every shipped
//! session and on generated events, so the bytes and the checksum stay what `ron` gave.
//!
//! It covers the default `ron` options the session writer uses (no extensions, escaped strings,
//! no number suffixes, no compact ranges); nothing here is configurable, so nothing can drift.

use std::fmt::{self, Write};

use serde::ser::{self, Serialize};

/// Appends `value` to `out` as one compact RON value, as `ron::ser::to_string` would write it.
#[cfg(test)]
pub fn write<T: Serialize + ?Sized>(out: &mut String, value: &T) -> Result<(), Error> {
    LineWriter::default().write(out, value)
}

/// Writes many lines, remembering which identifiers it has checked (see [`Idents`]).
#[derive(Default)]
pub struct LineWriter {
    idents: Idents,
}

impl LineWriter {
    /// Appends `value` to `out` as one compact RON value, as `ron::ser::to_string` would write it.
    pub fn write<T: Serialize + ?Sized>(&mut self, out: &mut String, value: &T) -> Result<(), Error> {
        value.serialize(&mut LineSer { out, idents: &mut self.idents })
    }
}

/// Identifiers already checked, by address: serde hands over field and variant names as
/// `&'static str`, the same few dozen for every event, so each is checked once and then written
/// straight away (checking each byte of every name of every event was a third of the work).
struct Idents {
    /// Direct-mapped by address: (address, length, whether `ron` writes it raw).
    slots: [(usize, usize, bool); IDENT_SLOTS],
}

const IDENT_SLOTS: usize = 256;

impl Idents {
    /// The slot of a name: a multiplicative hash of its address and length (names are packed
    /// side by side in the binary, so the low address bits alone would collide).
    fn slot((addr, len): (usize, usize)) -> usize {
        (((addr ^ len << 48) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % IDENT_SLOTS
    }
}

impl Default for Idents {
    fn default() -> Self {
        Idents { slots: [(0, 0, false); IDENT_SLOTS] }
    }
}

/// A value the serializer cannot write (a custom `Serialize` impl reporting an error).
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

struct LineSer<'a> {
    out: &'a mut String,
    idents: &'a mut Idents,
}

impl LineSer<'_> {
    /// `ron`'s `write_identifier`: raw (`r#`) when the name is not a plain identifier or is one of
    /// RON's own words.
    fn ident(&mut self, name: &'static str) -> Result<(), Error> {
        let key = (name.as_ptr() as usize, name.len());
        let slot = &mut self.idents.slots[Idents::slot(key)];
        if (slot.0, slot.1) != key {
            *slot = (key.0, key.1, Self::raw(name)?);
        }
        if slot.2 {
            self.out.push_str("r#");
        }
        self.out.push_str(name);
        Ok(())
    }

    /// Whether `ron` writes `name` raw (`r#name`): one of RON's own words; an error for a name
    /// that is not a plain ASCII identifier (see [`Self::unusual_ident`]).
    fn raw(name: &str) -> Result<bool, Error> {
        let plain = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
        if !plain {
            return Err(Self::unusual_ident(name));
        }
        Ok(matches!(
            name,
            "true" | "false" | "Some" | "None" | "inf" | "inff32" | "inff64" | "NaN" | "NaNf32" | "NaNf64"
        ))
    }

    /// Identifiers that are not plain ASCII ones (which `#[derive(Serialize)]` never gives):
    /// refused, and the caller writes the value with `ron` instead.
    #[cold]
    fn unusual_ident(name: &str) -> Error {
        Error(format!("identifier {name:?} is left to ron"))
    }

    fn int(&mut self, v: impl itoa::Integer) -> Result<(), Error> {
        self.out.push_str(itoa::Buffer::new().format(v));
        Ok(())
    }

    fn escaped_str(&mut self, v: &str) {
        self.out.push('"');
        if v.bytes().all(|b| (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b'\'' | b'\\')) {
            self.out.push_str(v);
        } else {
            self.out.extend(v.chars().flat_map(char::escape_debug));
        }
        self.out.push('"');
    }
}

/// Appends `v` as `ron` writes an `f32` (`{:?}`, with `-` before a negative NaN).
pub(super) fn write_f32(out: &mut String, v: f32) {
    if v.is_nan() && v.is_sign_negative() {
        out.push('-');
    }
    if f64::from(v).abs() < F32_EXACT && whole(f64::from(v)) {
        push_whole(out, f64::from(v));
    } else {
        // Writing to a String cannot fail.
        let _ = write!(out, "{v:?}");
    }
}

/// A whole number as `{:?}` writes it (`50.0`), without `fmt`'s shortest-digits search.
fn push_whole(out: &mut String, v: f64) {
    // In range of i64 exactly: see `whole`.
    #[allow(clippy::cast_possible_truncation)]
    out.push_str(itoa::Buffer::new().format(v as i64));
    out.push_str(".0");
}

/// Below this every whole `f32` is its own shortest text (neighbours are at most 1 apart), so
/// `{:?}` writes its digits; above it `{:?}` may write fewer (1e15 for 999999986991104).
const F32_EXACT: f64 = 16_777_216.0;

/// True for the whole numbers `{:?}` writes as digits and `.0` (the common case in events: 0.0,
/// 50.0): below 1e15 in size, where `{:?}` has not yet switched to exponent form; not -0.0.
fn whole(v: f64) -> bool {
    v.fract() == 0.0 && v.abs() < 1e15 && !(v == 0.0 && v.is_sign_negative())
}

/// A struct, tuple, sequence or map being written: the separator goes before every element but
/// the first.
struct Compound<'a, 'b> {
    ser: &'a mut LineSer<'b>,
    first: bool,
    close: char,
}

impl Compound<'_, '_> {
    fn sep(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.ser.out.push(',');
        }
    }
}

impl<'a, 'b> ser::Serializer for &'a mut LineSer<'b> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, 'b>;
    type SerializeTuple = Compound<'a, 'b>;
    type SerializeTupleStruct = Compound<'a, 'b>;
    type SerializeTupleVariant = Compound<'a, 'b>;
    type SerializeMap = Compound<'a, 'b>;
    type SerializeStruct = Compound<'a, 'b>;
    type SerializeStructVariant = Compound<'a, 'b>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out.push_str(if v { "true" } else { "false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.int(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        write_f32(self.out, v);
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if v.is_nan() && v.is_sign_negative() {
            self.out.push('-');
        }
        if whole(v) {
            push_whole(self.out, v);
            return Ok(());
        }
        write!(self.out, "{v:?}").map_err(ser::Error::custom)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.out.push('\'');
        if v == '\\' || v == '\'' {
            self.out.push('\\');
        }
        self.out.push(v);
        self.out.push('\'');
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.escaped_str(v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.out.push_str("b\"");
        self.out.extend(v.iter().flat_map(|c| std::ascii::escape_default(*c)).map(char::from));
        self.out.push('"');
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.out.push_str("None");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        self.out.push_str("Some(");
        value.serialize(&mut *self)?;
        self.out.push(')');
        Ok(())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.push_str("()");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _name: &'static str, _i: u32, variant: &'static str) -> Result<(), Error> {
        self.ident(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        self.out.push('(');
        value.serialize(&mut *self)?;
        self.out.push(')');
        Ok(())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.ident(variant)?;
        self.out.push('(');
        value.serialize(&mut *self)?;
        self.out.push(')');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a, 'b>, Error> {
        self.out.push('[');
        Ok(Compound { ser: self, first: true, close: ']' })
    }
    fn serialize_tuple(self, _len: usize) -> Result<Compound<'a, 'b>, Error> {
        self.out.push('(');
        Ok(Compound { ser: self, first: true, close: ')' })
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a, 'b>, Error> {
        self.serialize_tuple(len)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, 'b>, Error> {
        self.ident(variant)?;
        self.out.push('(');
        Ok(Compound { ser: self, first: true, close: ')' })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a, 'b>, Error> {
        self.out.push('{');
        Ok(Compound { ser: self, first: true, close: '}' })
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'a, 'b>, Error> {
        // Ranges too: `ron` writes them as structs unless its compact-ranges option is on.
        self.out.push('(');
        Ok(Compound { ser: self, first: true, close: ')' })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a, 'b>, Error> {
        self.ident(variant)?;
        self.out.push('(');
        Ok(Compound { ser: self, first: true, close: ')' })
    }
}

impl Compound<'_, '_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.sep();
        value.serialize(&mut *self.ser)
    }
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.sep();
        self.ser.ident(key)?;
        self.ser.out.push(':');
        value.serialize(&mut *self.ser)
    }
    fn close(self) -> Result<(), Error> {
        self.ser.out.push(self.close);
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.element(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.ser.out.push(':');
        value.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

#[cfg(test)]
#[path = "ron_line_tests.rs"]
mod tests;

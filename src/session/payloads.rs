//! The exact bytes of a lane's datagrams in a session file: the optional `payloads` field.
//!
//! A UDP run, a proxy or a capture has each datagram's bytes as its socket or file held them
//! (`model::payloads`, which turns its store into these entries and back); without this field a saved session kept only the events, and
//! reopening it showed re-encoded bytes (or none, for a foreign protocol). Each entry names the
//! datagram as the events do, `(client, uid)`, with its instant and its bytes as a hex string (a
//! RON byte list would take four to five characters a byte, hex two, and stays readable). The
//! field comes after the events and is left out when empty, so a file without it (every file
//! written before it, every simulated recording) reads and writes exactly as before; a hex
//! string that is not hex is refused with the entry it is in.

use ackscope_protocol::{ClientId, FIRST_CLIENT};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One datagram's bytes as the recording's source saw them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedPayload {
    /// The client the datagram belongs to (left out for the first).
    #[serde(default = "first_client", skip_serializing_if = "is_first_client")]
    pub client: ClientId,
    /// The link's send id (`LinkSent`/`PacketSent { uid }` of this client).
    pub uid: u64,
    /// When it was sent (or read), in microseconds of the recording's time.
    pub at_us: u64,
    /// The bytes, as lowercase hex in the file.
    #[serde(serialize_with = "to_hex", deserialize_with = "from_hex")]
    pub hex: Vec<u8>,
}

fn first_client() -> ClientId {
    FIRST_CLIENT
}

fn is_first_client(c: &ClientId) -> bool {
    *c == FIRST_CLIENT
}

fn to_hex<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&hex(bytes))
}

fn from_hex<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let text = String::deserialize(d)?;
    unhex(&text).map_err(serde::de::Error::custom)
}

/// `bytes` as lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// The bytes of a hex string (either case); an error names the first character that is not a
/// hex digit, or an odd length.
pub fn unhex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!("hex: {} digits, an odd number (two a byte)", text.len()));
    }
    let digit = |i: usize, c: u8| {
        (c as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| format!("hex: {:?} at digit {i} is not a hex digit", c as char))
    };
    text.as_bytes()
        .chunks(2)
        .enumerate()
        .map(|(i, p)| Ok((digit(2 * i, p[0])? << 4) | digit(2 * i + 1, p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_hex() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&bytes)).unwrap(), bytes);
        assert_eq!(unhex("0A0b").unwrap(), vec![10, 11]);
        assert!(unhex("abc").unwrap_err().contains("odd"));
        assert!(unhex("0g").unwrap_err().contains("'g' at digit 1"));
    }
}

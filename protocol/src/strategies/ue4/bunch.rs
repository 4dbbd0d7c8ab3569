//! Bunches: the unit a channel sends, with UE4 4.25's bunch header bit for bit.
//!
//! The header is written by `UNetConnection::SendRawBunch` and read back in
//! `UNetConnection::ReceivedPacket`, in this order:
//!
//! | field | bits |
//! |---|---|
//! | `bOpen \|\| bClose` | 1 |
//! | `bOpen`, `bClose` (only if the bit above is set) | 2 |
//! | `CloseReason` (only if `bClose`): `SerializeInt(.., EChannelCloseReason::MAX = 15)` | 3 or 4 |
//! | `bIsReplicationPaused`, `bReliable` | 2 |
//! | `ChIndex`: `SerializeIntPacked` | 8 per 7 bits |
//! | `bHasPackageMapExports`, `bHasMustBeMappedGUIDs`, `bPartial` | 3 |
//! | `ChSequence` (only if `bReliable`): `WriteIntWrapped(.., MAX_CHSEQUENCE = 1024)` | 10 |
//! | `bPartialInitial`, `bPartialFinal` (only if `bPartial`) | 2 |
//! | `ChName` (only if `bReliable \|\| bOpen`): `StaticSerializeName`, hard-coded `EName` | 1 + 8 or 9 |
//! | `BunchDataBits`: `WriteIntWrapped(.., MaxPacket * 8)` | 13 for 1024-byte packets |
//! | the bunch data, unaligned | 8 per byte |
//!
//! Where the seed is silent this follows the 4.25 source: `ChSequence` comes before the partial
//! flags; the channel name (4.22+, replacing the older `ChType`) is sent on every reliable or
//! opening bunch, so a channel can be created from any reliable bunch when its opening one was
//! lost; names are `NAME_Control` (255, 8 bits), `NAME_Voice` (256) and `NAME_Actor` (102, 9
//! bits). The flags this model never sets (`bIsReplicationPaused`, `bHasPackageMapExports`,
//! `bHasMustBeMappedGUIDs`) still take their bits, and are carried through decoding unchanged.

use crate::wire::bits::{BitError, BitReader, Stream};

use super::archive::{
    hardcoded_name_bits, int_bits, int_packed_bits, serialize_hardcoded_name, serialize_int, serialize_int_packed,
};
use super::notify::MAX_NOTIFY_HEADER_BYTES;

pub use super::packet::{
    decode_packet, decode_packet_with, encode_packet, encode_packet_with, frame_message, make_relative, split_messages,
    DecodedPacket, FrameError, PacketError,
};

/// Channel indices a connection may use (`DEFAULT_MAX_CHANNEL_SIZE`, 4.25); a bunch naming a
/// higher one is malformed.
pub const MAX_CHANNELS: u32 = 32_767;
/// Carries the close message (UE4's control channel, `NMT_Failure`).
pub const CONTROL_CHANNEL: u32 = 0;
/// Reliable bunch sequence space on the wire (`MAX_CHSEQUENCE`).
pub const MAX_CHSEQUENCE: u32 = 1024;
/// Bunches above this are split into partial bunches (UE4: 7625 bits).
pub const MAX_SINGLE_BUNCH_SIZE_BITS: usize = 7625;
/// Size of each partial bunch but the last (UE4: 7624 bits).
pub const MAX_PARTIAL_BUNCH_SIZE_BITS: usize = 7624;
/// Payload bytes one bunch may carry: this model's bunches are whole bytes (953).
pub const MAX_BUNCH_PAYLOAD_BYTES: usize = MAX_PARTIAL_BUNCH_SIZE_BITS / 8;
/// Largest whole bunch, before splitting or after reassembly (UE4's `IsBunchTooLarge`: 64 KiB).
pub const MAX_CONSTRUCTED_BUNCH_BYTES: usize = 64 * 1024;
/// `MAX_PACKET_SIZE`: the `MaxPacket` of a connection unless configured otherwise.
pub const DEFAULT_MAX_PACKET_BYTES: u32 = 1024;
/// `EChannelCloseReason::MAX`, the bound the close reason is serialized with.
pub const CLOSE_REASON_MAX: u32 = 15;
/// Largest bunch header: open, close with a 4-bit reason, a 3-byte channel index, reliable,
/// partial, a 9-bit name and a 13-bit data length.
pub const MAX_BUNCH_HEADER_BITS: usize = 3 + 4 + 2 + 24 + 3 + 10 + 2 + 10 + 13;
/// Smallest packet that can hold a full notify header and one largest bunch plus the
/// termination bit.
pub const MIN_PACKET_BYTES: usize =
    MAX_NOTIFY_HEADER_BYTES + (MAX_BUNCH_HEADER_BITS + MAX_PARTIAL_BUNCH_SIZE_BITS + 1).div_ceil(8);

/// `EChannelCloseReason` (4.25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum CloseReason {
    #[default]
    Destroyed = 0,
    Dormancy = 1,
    LevelUnloaded = 2,
    /// The actor stopped being relevant for `RelevantTimeout`: this model's idle close.
    Relevancy = 3,
    TearOff = 4,
}

impl CloseReason {
    fn from_wire(v: u32) -> Result<Self, BitError> {
        Ok(match v {
            0 => CloseReason::Destroyed,
            1 => CloseReason::Dormancy,
            2 => CloseReason::LevelUnloaded,
            3 => CloseReason::Relevancy,
            4 => CloseReason::TearOff,
            _ => return Err(BitError::OutOfRange { value: v as i64, min: 0, max: 4 }),
        })
    }
}

/// A channel's name (`ChName`), as the hard-coded `EName` it is sent as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChName {
    /// `NAME_None`: what an unreliable, non-opening bunch decodes with (the name is not sent).
    #[default]
    None,
    Control,
    Voice,
    Actor,
}

impl ChName {
    /// The `EName` index.
    pub fn ename(self) -> u32 {
        match self {
            ChName::None => 0,
            ChName::Control => 255,
            ChName::Voice => 256,
            ChName::Actor => 102,
        }
    }

    /// A known channel name, or an error (UE4 closes on an unknown one: `IsKnownChannelName`).
    fn from_ename(v: u32) -> Result<Self, BitError> {
        match v {
            255 => Ok(ChName::Control),
            256 => Ok(ChName::Voice),
            102 => Ok(ChName::Actor),
            _ => Err(BitError::OutOfRange { value: v as i64, min: 102, max: 256 }),
        }
    }
}

/// One bunch as sent and received (`FOutBunch` / `FInBunch`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Bunch {
    pub open: bool,
    pub close: bool,
    /// Only on the wire when `close`.
    pub close_reason: CloseReason,
    pub is_replication_paused: bool,
    pub reliable: bool,
    pub ch_index: u32,
    pub has_package_map_exports: bool,
    pub has_must_be_mapped_guids: bool,
    pub partial: bool,
    pub partial_initial: bool,
    pub partial_final: bool,
    /// Reliable only: the channel's bunch sequence (full width when sending; the 10 wire bits
    /// when freshly decoded, until the channel resolves it).
    pub ch_sequence: u32,
    /// Only on the wire when `reliable || open`.
    pub ch_name: ChName,
    pub payload: Vec<u8>,
}

impl Bunch {
    /// Bits of the header alone, for a connection whose `MaxPacket` is `max_packet_bytes`.
    pub fn header_bits_for(&self, max_packet_bytes: u32) -> usize {
        let open_or_close = self.open || self.close;
        1 + if open_or_close { 2 } else { 0 }
            + if self.close { int_bits(self.close_reason as u32, CLOSE_REASON_MAX) } else { 0 }
            + 2
            + int_packed_bits(self.ch_index)
            + 3
            + if self.reliable { int_bits(self.ch_sequence % MAX_CHSEQUENCE, MAX_CHSEQUENCE) } else { 0 }
            + if self.partial { 2 } else { 0 }
            + if self.reliable || self.open { hardcoded_name_bits(self.ch_name.ename()) } else { 0 }
            + int_bits(self.data_bits(), max_packet_bytes * 8)
    }

    /// Bits this bunch takes in a packet (header and data) with 1024-byte packets. Exact: UE4
    /// packs bunches back to back without alignment.
    pub fn max_bits(&self) -> usize {
        self.bits_for(DEFAULT_MAX_PACKET_BYTES)
    }

    /// Bits this bunch takes in a packet for a connection whose `MaxPacket` is `max_packet_bytes`.
    pub fn bits_for(&self, max_packet_bytes: u32) -> usize {
        self.header_bits_for(max_packet_bytes) + self.payload.len() * 8
    }

    fn data_bits(&self) -> u32 {
        (self.payload.len() * 8) as u32
    }

    /// Writes the header and data.
    pub fn write<S: Stream>(&self, s: &mut S, max_packet_bytes: u32) -> Result<(), BitError> {
        let bit = |s: &mut S, b: bool| s.serialize_bits(&mut (b as u32), 1);
        bit(s, self.open || self.close)?;
        if self.open || self.close {
            bit(s, self.open)?;
            bit(s, self.close)?;
            if self.close {
                serialize_int(s, &mut (self.close_reason as u32), CLOSE_REASON_MAX)?;
            }
        }
        bit(s, self.is_replication_paused)?;
        bit(s, self.reliable)?;
        serialize_int_packed(s, &mut self.ch_index.clone())?;
        bit(s, self.has_package_map_exports)?;
        bit(s, self.has_must_be_mapped_guids)?;
        bit(s, self.partial)?;
        if self.reliable {
            serialize_int(s, &mut (self.ch_sequence % MAX_CHSEQUENCE), MAX_CHSEQUENCE)?;
        }
        if self.partial {
            bit(s, self.partial_initial)?;
            bit(s, self.partial_final)?;
        }
        if self.reliable || self.open {
            serialize_hardcoded_name(s, &mut self.ch_name.ename())?;
        }
        serialize_int(s, &mut self.data_bits(), max_packet_bytes * 8)?;
        for chunk in self.payload.chunks(4) {
            let mut word = chunk.iter().rev().fold(0u32, |w, b| (w << 8) | *b as u32);
            s.serialize_bits(&mut word, chunk.len() as u32 * 8)?;
        }
        Ok(())
    }

    /// Reads a bunch; `ch_sequence` is the raw 10-bit value. Data that is not whole bytes, an
    /// unknown channel name or a channel index from `MAX_CHANNELS` up are errors.
    pub fn read(r: &mut BitReader<'_>, max_packet_bytes: u32) -> Result<Self, BitError> {
        let bit = |r: &mut BitReader<'_>| -> Result<bool, BitError> {
            let mut v = 0;
            r.serialize_bits(&mut v, 1)?;
            Ok(v != 0)
        };
        let mut b = Bunch::default();
        if bit(r)? {
            b.open = bit(r)?;
            b.close = bit(r)?;
            if b.close {
                let mut reason = 0;
                serialize_int(r, &mut reason, CLOSE_REASON_MAX)?;
                b.close_reason = CloseReason::from_wire(reason)?;
            }
        }
        b.is_replication_paused = bit(r)?;
        b.reliable = bit(r)?;
        serialize_int_packed(r, &mut b.ch_index)?;
        if b.ch_index >= MAX_CHANNELS {
            return Err(BitError::OutOfRange { value: b.ch_index as i64, min: 0, max: MAX_CHANNELS as i64 - 1 });
        }
        b.has_package_map_exports = bit(r)?;
        b.has_must_be_mapped_guids = bit(r)?;
        b.partial = bit(r)?;
        if b.reliable {
            serialize_int(r, &mut b.ch_sequence, MAX_CHSEQUENCE)?;
        }
        if b.partial {
            b.partial_initial = bit(r)?;
            b.partial_final = bit(r)?;
        }
        if b.reliable || b.open {
            let mut ename = 0;
            serialize_hardcoded_name(r, &mut ename)?;
            b.ch_name = ChName::from_ename(ename)?;
        }
        let mut data_bits = 0;
        serialize_int(r, &mut data_bits, max_packet_bytes * 8)?;
        if data_bits % 8 != 0 {
            return Err(BitError::OutOfRange { value: data_bits as i64, min: 0, max: (data_bits & !7) as i64 });
        }
        if data_bits as usize > r.bits_remaining() {
            return Err(BitError::Overflow { needed: data_bits, at: r.bits_processed(), total: r.bits_remaining() });
        }
        b.payload = vec![0u8; data_bits as usize / 8];
        for chunk in b.payload.chunks_mut(4) {
            let mut word = 0;
            r.serialize_bits(&mut word, chunk.len() as u32 * 8)?;
            for (i, byte) in chunk.iter_mut().enumerate() {
                *byte = (word >> (8 * i)) as u8;
            }
        }
        Ok(b)
    }
}

/// Splits a payload into bunches for channel `ch_index`: one whole bunch up to
/// `MAX_SINGLE_BUNCH_SIZE_BITS`, else `PartialInitial`, `Partial`..., `PartialFinal` pieces of
/// `MAX_PARTIAL_BUNCH_SIZE_BITS`. `ch_sequence` is left for `PrepBunch`; `open` goes on the first
/// piece only, as `UChannel::SendBunch` does.
pub fn split_into_bunches(ch_index: u32, ch_name: ChName, reliable: bool, open: bool, payload: &[u8]) -> Vec<Bunch> {
    let bunch = |i: usize, payload: Vec<u8>, partial, partial_final| Bunch {
        open: open && i == 0,
        reliable,
        ch_index,
        ch_name,
        partial,
        partial_initial: partial && i == 0,
        partial_final,
        payload,
        ..Default::default()
    };
    if payload.len() * 8 <= MAX_SINGLE_BUNCH_SIZE_BITS {
        return vec![bunch(0, payload.to_vec(), false, false)];
    }
    let n = bunches_needed(payload.len());
    payload.chunks(MAX_BUNCH_PAYLOAD_BYTES).enumerate().map(|(i, c)| bunch(i, c.to_vec(), true, i + 1 == n)).collect()
}

/// How many bunches [`split_into_bunches`] makes of `payload_bytes`.
pub fn bunches_needed(payload_bytes: usize) -> usize {
    if payload_bytes * 8 <= MAX_SINGLE_BUNCH_SIZE_BITS {
        1
    } else {
        payload_bytes.div_ceil(MAX_BUNCH_PAYLOAD_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::bits::{BitWriter, MeasureStream};

    #[test]
    fn header_bits_agree_with_what_is_written_and_read_back() {
        let cases = [
            Bunch { reliable: true, ch_index: 3, ch_name: ChName::Actor, ch_sequence: 1500, ..Default::default() },
            Bunch { open: true, reliable: true, ch_index: 200, ch_name: ChName::Actor, ..Default::default() },
            Bunch {
                close: true,
                close_reason: CloseReason::Relevancy,
                reliable: true,
                ch_index: 20_000,
                ch_name: ChName::Actor,
                ..Default::default()
            },
            Bunch { partial: true, partial_final: true, ch_index: 2, payload: vec![5; 953], ..Default::default() },
        ];
        for b in cases {
            let mut m = MeasureStream::new();
            b.write(&mut m, 1024).unwrap();
            assert_eq!(m.bits_processed(), b.max_bits(), "{b:?}");
            let mut w = BitWriter::with_capacity(2048);
            b.write(&mut w, 1024).unwrap();
            let bytes = w.finish();
            let back = Bunch::read(&mut BitReader::new(&bytes), 1024).unwrap();
            assert_eq!(back, Bunch { ch_sequence: b.ch_sequence % MAX_CHSEQUENCE, ..b });
        }
    }

    #[test]
    fn splitting_marks_open_on_the_first_piece_only() {
        let parts = split_into_bunches(7, ChName::Actor, true, true, &[1; 2000]);
        assert_eq!(parts.len(), 3);
        assert!(parts[0].open && parts[0].partial_initial && !parts[1].open && parts[2].partial_final);
        assert_eq!(split_into_bunches(7, ChName::Actor, true, true, &[1; 953]).len(), 1);
    }
}

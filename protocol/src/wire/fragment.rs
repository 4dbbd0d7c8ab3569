//! reliable.io's fragment packets: how a packet above `fragment_above` bytes goes on the wire, and
//! the reassembly buffer that puts it back together.
//!
//! Layout of each fragment (reliable.io's `reliable_endpoint_send_packet`): `0x01`, the packet's
//! sequence u16 little-endian, the fragment id u8, the fragment count - 1 u8; fragment 0 then
//! carries the packet's regular header ([`PacketHeader`]); then the fragment's share of the
//! payload. Every fragment but the last carries exactly `fragment_size` payload bytes, the last
//! 1..=`fragment_size`, so a payload of `n` bytes always makes `ceil(n / fragment_size)`
//! fragments.
//!
//! Decoding is strict, as reliable.io's own `reliable_read_fragment_header` (count above
//! `max_fragments`, id beyond the count, a header naming another sequence, a non-canonical header
//! in fragment 0, a wrong size) and one step further: an empty last fragment, which no sender
//! makes, is refused too, so each payload has exactly one fragmentation. The [`Reassembly`]
//! buffer holds up to `reassembly_buffer_size` packets by sequence (reliable.io's 64), refuses
//! fragments whose count disagrees with the packet's first fragment, ignores repeated fragments,
//! and hands back a packet only once every fragment arrived: that packet's header and payload,
//! which the receiver then treats as one regular packet (and acks, if it accepts it).

use thiserror::Error;

use crate::wire::header::{HeaderError, PacketHeader, MAX_HEADER_BYTES};
use crate::wire::sequence::SequenceBuffer;

/// First byte of every fragment (bit 0 set: not a regular packet).
pub const FRAGMENT_PREFIX: u8 = 0x01;
/// Bytes of the fragment header before fragment 0's packet header.
pub const FRAGMENT_HEADER_BYTES: usize = 5;
/// The most fragments the count byte can name.
pub const MAX_FRAGMENTS_LIMIT: usize = 256;

/// reliable.io's fragmentation settings (its defaults: facts.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FragmentConfig {
    /// Payloads larger than this go out as fragments.
    pub fragment_above: usize,
    /// Payload bytes per fragment (all but the last carry exactly this many).
    pub fragment_size: usize,
    /// Most fragments per packet (at most 256).
    pub max_fragments: usize,
    /// Packets being reassembled at once, by sequence.
    pub reassembly_buffer_size: usize,
}

impl Default for FragmentConfig {
    fn default() -> Self {
        Self { fragment_above: 1024, fragment_size: 1024, max_fragments: 16, reassembly_buffer_size: 64 }
    }
}

impl FragmentConfig {
    /// The largest payload one packet can carry: `max_fragments` full fragments (16,384 bytes by
    /// default, reliable.io's `max_packet_size`).
    pub fn max_payload_bytes(&self) -> usize {
        self.fragment_size.max(1) * self.max_fragments.clamp(1, MAX_FRAGMENTS_LIMIT)
    }

    /// How many fragments a payload of `payload_bytes` takes.
    pub fn fragments_for(&self, payload_bytes: usize) -> usize {
        payload_bytes.div_ceil(self.fragment_size.max(1)).max(1)
    }
}

/// The header of one fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragmentHeader {
    pub sequence: u16,
    pub id: u8,
    /// 1..=256.
    pub count: u16,
}

/// One decoded fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment<'a> {
    pub header: FragmentHeader,
    /// Fragment 0 only: the packet's header and its encoded length.
    pub packet_header: Option<(PacketHeader, usize)>,
    /// This fragment's share of the payload.
    pub data: &'a [u8],
}

/// Why bytes are not a valid fragment (or a fragment does not fit its packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FragmentError {
    #[error("shorter than the fragment header ({len} bytes)")]
    Truncated { len: usize },
    #[error("prefix byte {0:#04x} is not a fragment's")]
    NotFragment(u8),
    #[error("{count} fragments is above the limit of {max}")]
    TooManyFragments { count: u16, max: usize },
    #[error("fragment id {id} is not below its count {count}")]
    IdOutOfRange { id: u8, count: u16 },
    #[error("fragment 0's packet header: {0}")]
    BadPacketHeader(HeaderError),
    #[error("fragment 0's packet header names sequence {inner}, its fragment header {outer}")]
    SequenceMismatch { outer: u16, inner: u16 },
    #[error("fragment {id} of {count} carries {len} bytes (fragment size {size})")]
    BadSize { id: u8, count: u16, len: usize, size: usize },
    #[error("packet {sequence} was announced with {expected} fragments, this one says {got}")]
    CountMismatch { sequence: u16, expected: u16, got: u16 },
    #[error("packet {sequence} is too old for the reassembly buffer")]
    Stale { sequence: u16 },
}

/// Decodes one fragment, checking it against `config` (see the module doc); never panics.
pub fn decode_fragment<'a>(bytes: &'a [u8], config: &FragmentConfig) -> Result<Fragment<'a>, FragmentError> {
    if bytes.len() < FRAGMENT_HEADER_BYTES {
        return Err(FragmentError::Truncated { len: bytes.len() });
    }
    if bytes[0] != FRAGMENT_PREFIX {
        return Err(FragmentError::NotFragment(bytes[0]));
    }
    let sequence = u16::from_le_bytes([bytes[1], bytes[2]]);
    let id = bytes[3];
    let count = bytes[4] as u16 + 1;
    let header = FragmentHeader { sequence, id, count };
    if count as usize > config.max_fragments.min(MAX_FRAGMENTS_LIMIT) {
        return Err(FragmentError::TooManyFragments { count, max: config.max_fragments });
    }
    if id as u16 >= count {
        return Err(FragmentError::IdOutOfRange { id, count });
    }
    let mut rest = &bytes[FRAGMENT_HEADER_BYTES..];
    let mut packet_header = None;
    if id == 0 {
        // Strict decoding accepts only the canonical encoding, as reliable.io's check does.
        let (h, n) = PacketHeader::decode(rest).map_err(FragmentError::BadPacketHeader)?;
        if h.sequence != sequence {
            return Err(FragmentError::SequenceMismatch { outer: sequence, inner: h.sequence });
        }
        packet_header = Some((h, n));
        rest = &rest[n..];
    }
    let size = config.fragment_size;
    let last = id as u16 + 1 == count;
    let ok = if last { !rest.is_empty() && rest.len() <= size } else { rest.len() == size };
    if !ok {
        return Err(FragmentError::BadSize { id, count, len: rest.len(), size });
    }
    Ok(Fragment { header, packet_header, data: rest })
}

/// Writes `payload` under `header` as fragments, each a separate datagram appended to `out`
/// (reliable.io's layout). The caller checks the payload fits ([`FragmentConfig::max_payload_bytes`]);
/// an empty payload still makes one fragment.
pub fn write_fragments(header: &PacketHeader, payload: &[u8], config: &FragmentConfig, out: &mut Vec<Vec<u8>>) {
    let size = config.fragment_size.max(1);
    let count = config.fragments_for(payload.len()).min(MAX_FRAGMENTS_LIMIT);
    let mut pieces = payload.chunks(size);
    for id in 0..count {
        let data = pieces.next().unwrap_or(&[]);
        let mut d = Vec::with_capacity(FRAGMENT_HEADER_BYTES + MAX_HEADER_BYTES + data.len());
        d.push(FRAGMENT_PREFIX);
        d.extend_from_slice(&header.sequence.to_le_bytes());
        d.push(id as u8);
        d.push((count - 1) as u8);
        if id == 0 {
            header.encode(&mut d);
        }
        d.extend_from_slice(data);
        out.push(d);
    }
}

/// A packet whose every fragment arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassembled {
    pub header: PacketHeader,
    pub payload: Vec<u8>,
    pub fragments: u16,
}

impl Reassembled {
    /// The packet as one regular datagram: its canonical header, then the payload (what
    /// reliable.io hands its receive path after reassembly).
    pub fn to_packet(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(MAX_HEADER_BYTES + self.payload.len());
        self.header.encode(&mut out);
        out.extend_from_slice(&self.payload);
        out
    }
}

/// One packet being reassembled.
#[derive(Debug, Clone, Default)]
struct Entry {
    count: u16,
    received: [u64; 4],
    received_count: u16,
    header: Option<PacketHeader>,
    data: Vec<u8>,
    last_len: usize,
}

impl Entry {
    fn has(&self, id: u8) -> bool {
        self.received[id as usize / 64] & (1 << (id % 64)) != 0
    }
    fn mark(&mut self, id: u8) {
        self.received[id as usize / 64] |= 1 << (id % 64);
        self.received_count += 1;
    }
}

/// What [`Reassembly::insert`] did with a well-formed fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FragmentOutcome {
    /// Stored; the packet still misses fragments.
    Stored,
    /// A fragment already held (a duplicate copy): ignored.
    Repeated,
    /// The last missing fragment: here is the whole packet.
    Complete(Reassembled),
}

/// reliable.io's reassembly buffer: packets by sequence, each until all its fragments arrived.
#[derive(Debug, Clone)]
pub struct Reassembly {
    config: FragmentConfig,
    entries: SequenceBuffer<Entry>,
}

impl Reassembly {
    pub fn new(config: FragmentConfig) -> Self {
        let size = config.reassembly_buffer_size.clamp(1, 32_768);
        Self { config, entries: SequenceBuffer::new(size) }
    }

    pub fn config(&self) -> &FragmentConfig {
        &self.config
    }

    /// Takes one decoded fragment. Errors: a count that disagrees with the packet's earlier
    /// fragments, or a packet too old for the buffer; both leave the buffer as it was.
    pub fn insert(&mut self, fragment: &Fragment<'_>) -> Result<FragmentOutcome, FragmentError> {
        let FragmentHeader { sequence, id, count } = fragment.header;
        let size = self.config.fragment_size;
        if !self.entries.exists(sequence) {
            let Some(e) = self.entries.insert(sequence) else {
                return Err(FragmentError::Stale { sequence });
            };
            e.count = count;
            e.data = vec![0; count as usize * size];
        }
        let Some(e) = self.entries.get_mut(sequence) else {
            return Err(FragmentError::Stale { sequence });
        };
        if e.count != count {
            return Err(FragmentError::CountMismatch { sequence, expected: e.count, got: count });
        }
        if e.has(id) {
            return Ok(FragmentOutcome::Repeated);
        }
        e.mark(id);
        if let Some((h, _)) = fragment.packet_header {
            e.header = Some(h);
        }
        let at = id as usize * size;
        e.data[at..at + fragment.data.len()].copy_from_slice(fragment.data);
        if id as u16 + 1 == count {
            e.last_len = fragment.data.len();
        }
        if e.received_count < count {
            return Ok(FragmentOutcome::Stored);
        }
        let total = (count as usize - 1) * size + e.last_len;
        let mut payload = std::mem::take(&mut e.data);
        payload.truncate(total);
        let header = e.header.unwrap_or(PacketHeader { sequence, ack: 0, ack_bits: 0 });
        self.entries.remove(sequence);
        Ok(FragmentOutcome::Complete(Reassembled { header, payload, fragments: count }))
    }

    /// Forgets a packet (received whole by other means, or given up).
    pub fn remove(&mut self, sequence: u16) {
        self.entries.remove(sequence);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fragments_of(payload: &[u8], seq: u16) -> Vec<Vec<u8>> {
        let h = PacketHeader { sequence: seq, ack: seq.wrapping_sub(3), ack_bits: 0x00FF_0F0F };
        let mut out = Vec::new();
        write_fragments(&h, payload, &FragmentConfig::default(), &mut out);
        out
    }

    #[test]
    fn a_2000_byte_payload_is_two_fragments_that_reassemble_in_any_order() {
        let payload: Vec<u8> = (0..2000u32).map(|i| (i * 7) as u8).collect();
        let frags = fragments_of(&payload, 9);
        assert_eq!(frags.len(), 2);
        assert_eq!(frags[0][..5], [1, 9, 0, 0, 1]);
        assert_eq!(frags[1].len(), 5 + 2000 - 1024);
        let cfg = FragmentConfig::default();
        let mut r = Reassembly::new(cfg);
        let f1 = decode_fragment(&frags[1], &cfg).unwrap();
        assert_eq!(r.insert(&f1), Ok(FragmentOutcome::Stored));
        assert_eq!(r.insert(&f1), Ok(FragmentOutcome::Repeated));
        let f0 = decode_fragment(&frags[0], &cfg).unwrap();
        let FragmentOutcome::Complete(p) = r.insert(&f0).unwrap() else { panic!("not complete") };
        assert_eq!(p.payload, payload);
        assert_eq!(p.header.sequence, 9);
        assert_eq!(p.fragments, 2);
    }

    #[test]
    fn non_canonical_fragments_are_refused() {
        let cfg = FragmentConfig::default();
        let frags = fragments_of(&[5u8; 3000], 1);
        // A short middle fragment, an empty last one, a count above the limit, an id past it.
        assert!(matches!(decode_fragment(&frags[1][..900], &cfg), Err(FragmentError::BadSize { .. })));
        assert!(matches!(decode_fragment(&frags[2][..5], &cfg), Err(FragmentError::BadSize { .. })));
        let mut many = frags[1].clone();
        many[4] = 16;
        assert!(matches!(decode_fragment(&many, &cfg), Err(FragmentError::TooManyFragments { .. })));
        let mut past = frags[1].clone();
        past[3] = 3;
        assert!(matches!(decode_fragment(&past, &cfg), Err(FragmentError::IdOutOfRange { .. })));
        // Fragment 0 whose header names another sequence, or is non-canonical.
        let mut other = frags[0].clone();
        other[6] = 2;
        assert!(matches!(decode_fragment(&other, &cfg), Err(FragmentError::SequenceMismatch { .. })));
        let mut bad = frags[0].clone();
        bad[5] |= 0x80;
        assert!(matches!(decode_fragment(&bad, &cfg), Err(FragmentError::BadPacketHeader(_))));
        // A fragment that disagrees with its packet's count.
        let mut r = Reassembly::new(cfg);
        r.insert(&decode_fragment(&frags[0], &cfg).unwrap()).unwrap();
        let two = fragments_of(&[5u8; 2000], 1);
        let f = decode_fragment(&two[1], &cfg).unwrap();
        assert!(matches!(r.insert(&f), Err(FragmentError::CountMismatch { .. })));
    }

    #[test]
    fn sixteen_full_fragments_are_the_largest_packet() {
        let cfg = FragmentConfig::default();
        assert_eq!(cfg.max_payload_bytes(), 16_384);
        let frags = fragments_of(&vec![1u8; 16_384], 65535);
        assert_eq!(frags.len(), 16);
        let mut r = Reassembly::new(cfg);
        let mut done = None;
        for f in frags.iter().rev() {
            if let FragmentOutcome::Complete(p) = r.insert(&decode_fragment(f, &cfg).unwrap()).unwrap() {
                done = Some(p);
            }
        }
        assert_eq!(done.unwrap().payload.len(), 16_384);
    }
}

//! ackscope's large-block formats, read with the strategies' own codecs: Glenn's chunks (slices
//! and slice-ack bitfields, [`decode_packet`]) and the fragmentation baseline (whole blocks as
//! fragments and block acks, [`decode_fragment_packet`]).

use crate::event::{Dir, MalformedReason};
use crate::strategies::chunks::{decode_packet, ChunkConfig, ChunkPacket};
use crate::strategies::fragments::{decode_fragment_packet, FragmentPacket, FRAGMENT_HEADER_BYTES};

use super::format::WireFormat;
use super::record::{AckView, Fields, Item, ItemAck, ParseError, Parsed};
use super::track::LossRule;

/// The key of slice `slice` of chunk `chunk`.
fn slice_key(chunk: u16, slice: u32) -> u64 {
    (chunk as u64) << 32 | slice as u64
}

/// Glenn's chunk system: each slice is an item (sent again until its bit comes back).
#[derive(Debug, Clone, Default)]
pub struct ChunkFormat {
    pub config: ChunkConfig,
}

impl WireFormat for ChunkFormat {
    fn name(&self) -> &'static str {
        "chunks"
    }

    /// The chunk sender's loss is its slices sent again (no packet is ever acked as such).
    fn loss_rule(&self) -> LossRule {
        LossRule::Resent
    }

    fn parse(&mut self, _dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError> {
        let p = decode_packet(bytes, &self.config).map_err(|e| {
            let reason = match e {
                crate::strategies::chunks::PacketError::UnknownTag(_) => MalformedReason::Foreign,
                _ => MalformedReason::BadPayload,
            };
            ParseError::new(reason, format!("chunk packet: {e}"))
        })?;
        let mut f = Fields::default();
        f.bytes("tag", format!("{:#04x}", bytes[0]), 0, 1);
        match p {
            ChunkPacket::Slice(s) => {
                f.bytes("sequence", s.seq, 1, 2);
                f.bytes("chunk", s.chunk_id, 3, 2);
                let header = bytes.len() - s.data.len();
                f.bits("slice", format!("{} of {}", s.slice_id, s.num_slices), 40, header * 8 - 40);
                f.bytes("data", format!("{} bytes", s.data.len()), header, s.data.len());
                Ok(Parsed {
                    summary: format!(
                        "slice {}/{} of chunk {}, {} bytes",
                        s.slice_id,
                        s.num_slices,
                        s.chunk_id,
                        s.data.len()
                    ),
                    fields: f.into_vec(),
                    sequence: Some(s.seq as u32),
                    items: vec![Item { key: slice_key(s.chunk_id, s.slice_id), stamp: None, msg: None }],
                    ..Parsed::default()
                })
            }
            ChunkPacket::Ack(a) => {
                f.bytes("sequence", a.seq, 1, 2);
                f.bytes("chunk", a.chunk_id, 3, 2);
                let n = a.acked.iter().filter(|x| **x).count();
                f.bits("acked slices", format!("{n} of {}", a.num_slices), 40, bytes.len() * 8 - 40);
                let item_acks = (0..a.num_slices)
                    .filter(|i| a.acked.get(*i as usize).copied().unwrap_or(false))
                    .map(|i| ItemAck { key: slice_key(a.chunk_id, i), echo: None })
                    .collect();
                Ok(Parsed {
                    summary: format!("slice ack of chunk {}: {n} of {} slices", a.chunk_id, a.num_slices),
                    fields: f.into_vec(),
                    sequence: Some(a.seq as u32),
                    item_acks,
                    ..Parsed::default()
                })
            }
        }
    }
}

/// The fragmentation baseline: fragments of one packet per attempt, acked whole by a block ack.
#[derive(Debug, Clone, Default)]
pub struct BaselineFormat {
    pub config: ChunkConfig,
}

impl WireFormat for BaselineFormat {
    fn name(&self) -> &'static str {
        "fragments"
    }

    fn parse(&mut self, _dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError> {
        let p = decode_fragment_packet(bytes, &self.config)
            .map_err(|e| ParseError::new(MalformedReason::BadPayload, format!("fragment packet: {e}")))?;
        let mut f = Fields::default();
        f.bytes("tag", format!("{:#04x}", bytes[0]), 0, 1);
        match p {
            FragmentPacket::Fragment { seq, id, count, data } => {
                f.bytes("sequence", seq, 1, 2);
                f.bytes("fragment id", id, 3, 1);
                f.bytes("fragment count", format!("{count} (sent minus one)"), 4, 1);
                f.bytes("data", format!("{} bytes", data.len()), FRAGMENT_HEADER_BYTES, data.len());
                Ok(Parsed {
                    summary: format!("fragment {}/{count} of seq {seq}", id as u16 + 1),
                    fields: f.into_vec(),
                    sequence: Some(seq as u32),
                    ..Parsed::default()
                })
            }
            FragmentPacket::BlockAck { seq } => {
                f.bytes("acked sequence", seq, 1, 2);
                Ok(Parsed {
                    summary: format!("block ack of seq {seq}"),
                    fields: f.into_vec(),
                    acks: Some(AckView { acked: vec![seq as u32], nakked: Vec::new() }),
                    ..Parsed::default()
                })
            }
        }
    }
}

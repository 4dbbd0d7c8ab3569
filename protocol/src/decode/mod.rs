//! Passive decoding: what two endpoints believe, derived from the datagrams between them.
//!
//! A relay (ackscope's proxy, a capture reader, a test) feeds a [`Decoder`] every datagram as it
//! sees it leave its sender — time, direction (`AtoB` client -> server), client and bytes — and,
//! when it knows, each datagram's fate (delivered at some instant, or dropped). The decoder reads
//! each datagram with one [`WireFormat`] and derives, per client and direction, what the sending
//! endpoint believes from the traffic alone ([`track`]): which of its packets the other side
//! acked (when the ack reached it), the RTT from a send to the first ack naming it, the loss its
//! protocol would estimate, its resends (the same reliable item sent again) and spurious resends
//! (resent although the relay had delivered an earlier copy). It reports them as ackscope
//! [`Event`](crate::Event)s where they fit (`PacketSent`/`Received`/`Acked`/`Nakked`,
//! `RttSample`, `MessageSent` with its [`SendKind`](crate::SendKind), `MessageAcked`,
//! `Malformed`), each stamped with its client, plus one [`DecodedPacket`] per datagram (named
//! fields with their bit ranges) for display.
//!
//! Formats ([`FormatKind`]): every ackscope wire format, read with the very codecs its strategy
//! uses ([`reliable`], [`glenn`], [`ue4`], [`blocks`], [`notify`]); ENet ([`enet`]); KCP bare
//! and in kcptun's frame ([`kcp`]); and a game's own header described in a RON file
//! ([`header`]). `auto` probes the first datagrams and says which format it picked and why
//! ([`probe`]); traffic no format reads still gets packet-level records (sizes, gaps).
//!
//! Like the rest of this crate it is sans-IO and deterministic: no clock, no sockets, no
//! randomness; any bytes give a record and, when they do not decode, a count, never a panic.

pub mod blocks;
pub mod choice;
pub mod datagram;
pub mod decoder;
pub mod dir_stats;
pub mod enet;
pub mod format;
pub mod glenn;
pub mod header;
pub mod kcp;
pub mod notify;
pub mod probe;
pub mod record;
pub mod reliable;
pub mod track;
pub mod ue4;

pub use choice::{DecodeArg, DecodeChoice, FormatKind, DECODE_NAMES};
pub use datagram::{Datagram, Fate};
pub use decoder::{ClientStats, Decoder};
pub use format::WireFormat;
pub use header::{ByteOrder, FieldSpec, HeaderSpec, ProtocolIdSpec};
pub use probe::{ProbeResult, PROBE_DATAGRAMS};
pub use record::{DecodedPacket, Field, ParseError, Parsed};
pub use track::{AckRule, DirStats, LossRule, RttRule};

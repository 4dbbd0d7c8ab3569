//! Packet captures: sessions written as pcapng for Wireshark, and pcapng files read back.
//!
//! - [`export`]: a simulated session re-run with its endpoints tapped, every datagram written
//!   with its virtual timestamp on two interfaces per lane: `laneL-sent` (every datagram as its
//!   endpoint sent it, both directions) and `laneL-delivered` (every copy the link delivered,
//!   when it arrived). A drop is a packet on the first and not the second; delay, duplicates and
//!   reordering show in the second's times and order. An A/B session's second lane has its own
//!   pair (interfaces 2 and 3) and its own client port.
//! - [`export_recorded`]: a real-UDP recording (peer, proxy, UDP run) on the same interfaces,
//!   from its events and the bytes its sockets wrote or read, at their real instants.
//! - [`address`]: who is who on the wire: the server (side A) `10.0.0.1` on a port naming the
//!   wire format, client K `10.1.K/256.K%256` on a port naming the lane.
//! - [`comment`]: the packet comment (uid, the link's fate, resends, spurious resends, naks).
//! - [`pcapng`]: the writer and the reader (through `pcap-file`), IPv4/UDP framing (`etherparse`).
//! - [`records`]: per-packet link records (send time, size, fate) from a capture with both sides
//!   or a session, for the exact replay (`link.trace`) and the fit (`ackscope fit`).
//! - [`import`]: a pcapng or pcap capture read back as a recording, through the passive decoders.
//! - [`lanes`]: a capture read whole into a recording (*Compare with...*, `ackscope compare`).
//! - [`reencode`]: a simulated lane's packet bytes, re-encoded by re-running it with its
//!   endpoints tapped (the bytes pane of a recording that keeps only events).
//! - [`server_end`]: which end of a flow is the server, one rule for the import and the records.
//!
//! `contrib/wireshark/ackscope.lua` dissects every ackscope wire format on these ports and
//! raises expert items from the comments (README, "Wireshark").

pub mod address;
pub mod comment;
pub mod export;
pub mod export_recorded;
pub mod import;
pub mod lanes;
pub mod pcapng;
pub mod records;
pub mod reencode;
pub mod relayed;
pub mod server_end;

pub use export::{write_capture, write_pcapng};
pub use pcapng::PcapngSummary;
pub use pcapng::{CaptureReader, CaptureWriter, CapturedPacket, Interface, Udp};

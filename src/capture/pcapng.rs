//! pcapng files through the `pcap-file` crate: a writer of IPv4/UDP datagrams on named
//! interfaces with per-packet comments, and a reader that gives them back (the export writes
//! with the one; the tests, and the capture import to come, read with the other).
//!
//! Link type: raw IPv4 (`LINKTYPE_RAW`, 101), so each packet is an IPv4 header, a UDP header
//! and the datagram, built and checksummed by `etherparse`. Timestamps: `pcap-file` 2 writes an
//! enhanced packet block's timestamp as nanoseconds and reads it back as nanoseconds whatever the
//! interface says, so every interface written here declares `if_tsresol = 9` (nanoseconds), and
//! the reader scales by each interface's own `if_tsresol` (default microseconds) itself, so it
//! reads Wireshark's and tcpdump's files right as well.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use etherparse::{NetSlice, PacketBuilder, SlicedPacket, TransportSlice};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::{Block, PcapNgReader, PcapNgWriter};
use pcap_file::{DataLink, Endianness};
use serde::Serialize;

/// The `if_tsresol` every interface written here declares: 10^-9 s.
const TSRESOL_NANOS: u8 = 9;
/// Time to live of the IPv4 headers written (any plausible value).
const TTL: u8 = 64;

/// A UDP datagram between two IPv4 endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Udp {
    pub src: (Ipv4Addr, u16),
    pub dst: (Ipv4Addr, u16),
    pub payload: Vec<u8>,
}

/// Writes a pcapng section of raw-IPv4 interfaces and UDP packets to `W`.
pub struct CaptureWriter<W: Write> {
    out: PcapNgWriter<W>,
    interfaces: u32,
    frame: Vec<u8>,
    packets: u64,
}

impl<W: Write> CaptureWriter<W> {
    /// Starts a section whose header names the writing application and carries `comment`.
    pub fn new(out: W, comment: &str) -> Result<Self> {
        let section = SectionHeaderBlock {
            endianness: Endianness::Little,
            options: vec![
                SectionHeaderOption::UserApplication(Cow::Owned(format!("ackscope {}", env!("CARGO_PKG_VERSION")))),
                SectionHeaderOption::Comment(Cow::Owned(comment.to_string())),
            ],
            ..Default::default()
        };
        let out = PcapNgWriter::with_section_header(out, section).context("writing the pcapng section header")?;
        Ok(Self { out, interfaces: 0, frame: Vec::new(), packets: 0 })
    }

    /// Declares an interface (name and description as Wireshark shows them); its id.
    pub fn add_interface(&mut self, name: &str, description: &str) -> Result<u32> {
        let idb = InterfaceDescriptionBlock {
            linktype: DataLink::RAW,
            snaplen: 0,
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Owned(name.to_string())),
                InterfaceDescriptionOption::IfDescription(Cow::Owned(description.to_string())),
                InterfaceDescriptionOption::IfTsResol(TSRESOL_NANOS),
            ],
        };
        self.out.write_pcapng_block(idb).context("writing a pcapng interface block")?;
        self.interfaces += 1;
        Ok(self.interfaces - 1)
    }

    /// Writes `udp` as captured on `interface` at `time_us` microseconds after the epoch, with a
    /// packet comment.
    pub fn write_udp(&mut self, interface: u32, time_us: u64, udp: &Udp, comment: &str) -> Result<()> {
        if interface >= self.interfaces {
            bail!("interface {interface} was not declared ({} are)", self.interfaces);
        }
        self.frame.clear();
        PacketBuilder::ipv4(udp.src.0.octets(), udp.dst.0.octets(), TTL)
            .udp(udp.src.1, udp.dst.1)
            .write(&mut self.frame, &udp.payload)
            .map_err(|e| anyhow!("a datagram of {} bytes cannot be framed as IPv4/UDP: {e}", udp.payload.len()))?;
        let mut options = Vec::new();
        if !comment.is_empty() {
            options.push(EnhancedPacketOption::Comment(Cow::Borrowed(comment)));
        }
        let epb = EnhancedPacketBlock {
            interface_id: interface,
            timestamp: Duration::from_micros(time_us),
            original_len: self.frame.len() as u32,
            data: Cow::Borrowed(&self.frame),
            options,
        };
        self.out.write_pcapng_block(epb).context("writing a pcapng packet block")?;
        self.packets += 1;
        Ok(())
    }

    /// Packets written so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    pub fn into_inner(self) -> W {
        self.out.into_inner()
    }
}

/// An interface of a capture being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    pub name: String,
    pub description: String,
    pub linktype: DataLink,
    /// Timestamp units per second (10^6 unless `if_tsresol` says otherwise).
    pub units_per_sec: u64,
}

/// One packet of a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedPacket {
    pub interface: u32,
    /// Nanoseconds since the epoch.
    pub time_ns: u64,
    /// The packet's comments, joined by newlines (empty when none).
    pub comment: String,
    /// The captured bytes from the interface's link layer up.
    pub data: Vec<u8>,
}

impl CapturedPacket {
    /// The UDP datagram inside, when the packet is IPv4/UDP on a raw-IP or Ethernet interface.
    pub fn udp(&self, linktype: DataLink) -> Option<Udp> {
        let sliced = match linktype {
            DataLink::RAW | DataLink::IPV4 => SlicedPacket::from_ip(&self.data).ok()?,
            DataLink::ETHERNET => SlicedPacket::from_ethernet(&self.data).ok()?,
            DataLink::LINUX_SLL => SlicedPacket::from_linux_sll(&self.data).ok()?,
            _ => return None,
        };
        let (Some(NetSlice::Ipv4(ip)), Some(TransportSlice::Udp(udp))) = (&sliced.net, &sliced.transport) else {
            return None;
        };
        let h = ip.header();
        Some(Udp {
            src: (h.source_addr(), udp.source_port()),
            dst: (h.destination_addr(), udp.destination_port()),
            payload: udp.payload().to_vec(),
        })
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PcapngSummary {
    /// Lanes exported (2 for an A/B session), each on its own pair of interfaces.
    pub lanes: usize,
    /// Packets on the sent interfaces (every send).
    pub sent: u64,
    /// Packets on the delivered interfaces (every copy the link delivered).
    pub delivered: u64,
    /// File size.
    pub bytes: u64,
    /// Real-UDP recordings: datagrams left out because the recording no longer had their bytes
    /// (its store dropped the oldest to keep to the live memory cap); absent when none were.
    #[serde(skip_serializing_if = "is_zero")]
    pub without_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl PcapngSummary {
    pub fn to_text(&self, path: &Path) -> String {
        let mut text = format!(
            "{}: {} packets sent and {} delivered, {} lane{} ({} bytes)",
            path.display(),
            self.sent,
            self.delivered,
            self.lanes,
            if self.lanes == 1 { "" } else { "s" },
            self.bytes
        );
        if self.without_bytes > 0 {
            text.push_str(&format!(
                "; {} datagrams left out: the recording no longer had their bytes (dropped to keep to the live \
                 memory cap)",
                self.without_bytes
            ));
        }
        text
    }
}

/// Reads the packets of a pcapng file, one section after another.
pub struct CaptureReader<R: Read> {
    inner: PcapNgReader<R>,
    origin: String,
    interfaces: Vec<Interface>,
    /// Set after a damaged block: what follows it cannot be found reliably, so reading stops.
    failed: bool,
}

impl<R: Read> CaptureReader<R> {
    /// `origin` names the file in errors.
    pub fn new(input: R, origin: &str) -> Result<Self> {
        let inner = PcapNgReader::new(input).map_err(|e| anyhow!("{origin}: not a pcapng file ({e})"))?;
        Ok(Self { inner, origin: origin.to_string(), interfaces: Vec::new(), failed: false })
    }

    /// The interfaces declared so far in the current section.
    pub fn interfaces(&self) -> &[Interface] {
        &self.interfaces
    }

    /// The application that wrote the current section (its `shb_userappl` option; empty when it
    /// does not say): the import reads what ackscope wrote as ackscope wrote it.
    pub fn application(&self) -> &str {
        self.inner
            .section()
            .options
            .iter()
            .find_map(|o| match o {
                SectionHeaderOption::UserApplication(a) => Some(a.as_ref()),
                _ => None,
            })
            .unwrap_or("")
    }

    /// The next packet, `None` at the end; a damaged block is an error naming the file.
    pub fn next_packet(&mut self) -> Option<Result<CapturedPacket>> {
        self.with_next_enhanced_block(packet_of)
    }

    /// The next packet's interface link type and bytes, lent to `f` without copying them or
    /// joining its comments (the import's first look at a capture reads only the ends of each
    /// datagram); `None` at the end, an error for a damaged block or an undeclared interface.
    pub fn next_packet_with<T>(&mut self, f: impl FnOnce(DataLink, &[u8]) -> T) -> Option<Result<T>> {
        self.with_next_enhanced_block(|iface, epb| f(iface.linktype, &epb.data))
    }

    /// The next packet block lent to `f` with the interface it names, reading the section and
    /// interface blocks before it; `None` at the end, an error naming the file for a damaged block
    /// (reading stops there) or a packet naming an undeclared interface. (A callback rather than
    /// a returned borrow: the block borrows the reader's buffer, which the loop reuses.)
    fn with_next_enhanced_block<T>(
        &mut self,
        f: impl FnOnce(&Interface, EnhancedPacketBlock<'_>) -> T,
    ) -> Option<Result<T>> {
        while !self.failed {
            let block = match self.inner.next_block()? {
                Ok(b) => b,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(anyhow!("{}: damaged pcapng block: {e}", self.origin)));
                }
            };
            match block {
                Block::SectionHeader(_) => self.interfaces.clear(),
                Block::InterfaceDescription(idb) => self.interfaces.push(interface_of(&idb)),
                Block::EnhancedPacket(epb) => {
                    let Some(iface) = self.interfaces.get(epb.interface_id as usize) else {
                        return Some(Err(anyhow!(
                            "{}: a packet names interface {}, which was not declared",
                            self.origin,
                            epb.interface_id
                        )));
                    };
                    return Some(Ok(f(iface, epb)));
                }
                _ => {}
            }
        }
        None
    }
}

/// A packet block read on `iface`.
fn packet_of(iface: &Interface, epb: EnhancedPacketBlock) -> CapturedPacket {
    // pcap-file hands the raw 64-bit timestamp over as nanoseconds (module doc).
    let raw = epb.timestamp.as_nanos();
    let time_ns = (raw * 1_000_000_000 / iface.units_per_sec as u128).min(u64::MAX as u128) as u64;
    let comment = epb
        .options
        .iter()
        .filter_map(|o| match o {
            EnhancedPacketOption::Comment(c) => Some(c.as_ref()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    CapturedPacket { interface: epb.interface_id, time_ns, comment, data: epb.data.into_owned() }
}

impl<R: Read> Iterator for CaptureReader<R> {
    type Item = Result<CapturedPacket>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_packet()
    }
}

fn interface_of(idb: &InterfaceDescriptionBlock) -> Interface {
    let mut i =
        Interface { name: String::new(), description: String::new(), linktype: idb.linktype, units_per_sec: 1_000_000 };
    for o in &idb.options {
        match o {
            InterfaceDescriptionOption::IfName(n) => i.name = n.to_string(),
            InterfaceDescriptionOption::IfDescription(d) => i.description = d.to_string(),
            // Bit 7 set: a power of two; else a power of ten (pcapng spec). Absurd exponents
            // fall back to microseconds rather than overflow.
            InterfaceDescriptionOption::IfTsResol(r) => {
                let (base, exp) = if r & 0x80 != 0 { (2u64, u32::from(r & 0x7F)) } else { (10, u32::from(*r)) };
                i.units_per_sec = base.checked_pow(exp).filter(|u| *u > 0).unwrap_or(1_000_000);
            }
            _ => {}
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(n: u8) -> Udp {
        Udp {
            src: (Ipv4Addr::new(10, 0, 0, 1), 27100),
            dst: (Ipv4Addr::new(10, 1, 0, n), 50001),
            payload: (0..n).collect(),
        }
    }

    #[test]
    fn what_the_writer_wrote_reads_back() {
        let mut w = CaptureWriter::new(Vec::new(), "test").unwrap();
        assert_eq!(w.add_interface("sent", "everything sent").unwrap(), 0);
        assert_eq!(w.add_interface("delivered", "what arrived").unwrap(), 1);
        let written: Vec<(u32, u64, Udp, String)> =
            (1..=20u8).map(|n| (u32::from(n % 2), 1_000_000 + u64::from(n) * 1234, udp(n), format!("c{n}"))).collect();
        for (i, t, u, c) in &written {
            w.write_udp(*i, *t, u, c).unwrap();
        }
        assert!(w.write_udp(2, 0, &udp(1), "").is_err(), "undeclared interface");
        let bytes = w.into_inner();
        let mut r = CaptureReader::new(&bytes[..], "mem").unwrap();
        let mut read = Vec::new();
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            let linktype = r.interfaces()[p.interface as usize].linktype;
            read.push((p.interface, p.time_ns / 1000, p.udp(linktype).unwrap(), p.comment));
        }
        assert_eq!(read, written);
        assert_eq!(r.interfaces()[1].description, "what arrived");
        assert_eq!(r.interfaces()[0].units_per_sec, 1_000_000_000);
        assert!(r.application().starts_with("ackscope "), "{}", r.application());
    }

    #[test]
    fn damaged_files_are_errors_not_panics() {
        let mut w = CaptureWriter::new(Vec::new(), "test").unwrap();
        w.add_interface("sent", "").unwrap();
        w.write_udp(0, 5, &udp(9), "x").unwrap();
        let bytes = w.into_inner();
        assert!(CaptureReader::new(&b"not a capture"[..], "junk").is_err());
        for cut in 1..bytes.len() {
            if let Ok(r) = CaptureReader::new(&bytes[..cut], "cut") {
                for p in r {
                    let _ = p;
                }
            }
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0xA5;
            if let Ok(r) = CaptureReader::new(&b[..], "flipped") {
                for p in r.take(4) {
                    let _ = p;
                }
            }
        }
    }
}

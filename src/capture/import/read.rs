//! The packets of a pcapng or classic pcap file, one at a time, as UDP datagrams or as counted
//! skips: what the import reads, whatever wrote the file (ackscope's export, Wireshark, tcpdump).
//!
//! Link types read: raw IP (IPv4 or IPv6), Ethernet, Linux cooked (SLL), BSD loopback (NULL and
//! LOOP, a 4-byte family word before the IP header). A packet on any other link type, one that
//! is not UDP (TCP, ICMP, ARP, an IP fragment after the first), and one cut short (its IP or UDP
//! header says more bytes than were captured) is counted by reason and skipped. A damaged block
//! ends the reading (what follows it cannot be found reliably): the file's packets up to it are
//! kept and the damage is reported with the number of packets read.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use pcap_file::pcap::PcapReader;
use pcap_file::DataLink;
use serde::Serialize;

use crate::capture::pcapng::CaptureReader;

/// pcapng's section header block type, and classic pcap's magic numbers in either byte order
/// (microsecond and nanosecond variants).
pub fn is_capture_magic(magic: [u8; 4]) -> bool {
    matches!(u32::from_le_bytes(magic), 0x0A0D_0D0A | 0xA1B2_C3D4 | 0xD4C3_B2A1 | 0xA1B2_3C4D | 0x4D3C_B2A1)
}

/// True when `path` starts like a pcapng or pcap file (whatever its name).
pub fn is_capture_file(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && is_capture_magic(magic)
}

/// One UDP datagram of the capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpPacket {
    /// The capture interface (0 in a classic pcap).
    pub interface: u32,
    /// Nanoseconds since the epoch, as the capture stamped it.
    pub time_ns: u64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub payload: Vec<u8>,
    /// The packet's comments (pcapng), joined by newlines.
    pub comment: String,
}

/// What reading skipped, by reason: the summary says all of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Skipped {
    /// Packets read (every block that is a packet, skipped or not).
    pub packets: u64,
    /// Packets that are not UDP over IP.
    pub not_udp: u64,
    /// Packets cut short: their headers say more bytes than the capture holds.
    pub truncated: u64,
    /// Packets on link types the import does not read, by link type number.
    pub link_types: BTreeMap<u32, u64>,
    /// Packet blocks that could not be read (an undeclared interface).
    pub unreadable: u64,
    /// Set when the file is damaged or cut short: what was wrong and after how many packets
    /// reading stopped (everything before it is kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub damaged: Option<String>,
}

impl Skipped {
    pub fn link_type_packets(&self) -> u64 {
        self.link_types.values().sum()
    }

    /// One line, empty when nothing was skipped.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.not_udp > 0 {
            parts.push(format!("{} not UDP", self.not_udp));
        }
        if self.truncated > 0 {
            parts.push(format!("{} truncated", self.truncated));
        }
        for (lt, n) in &self.link_types {
            parts.push(format!("{n} on link type {lt} (not read)"));
        }
        if self.unreadable > 0 {
            parts.push(format!("{} unreadable blocks", self.unreadable));
        }
        let mut out = if parts.is_empty() { String::new() } else { format!("skipped: {}", parts.join(", ")) };
        if let Some(d) = &self.damaged {
            if !out.is_empty() {
                out.push_str("; ");
            }
            out.push_str(&format!("damaged: {d}"));
        }
        out
    }
}

enum Source {
    Ng(CaptureReader<BufReader<File>>),
    Classic(PcapReader<BufReader<File>>, DataLink),
}

/// Reads a capture file packet by packet (module doc).
pub struct Packets {
    source: Source,
    pub skipped: Skipped,
    /// `pcapng` or `pcap`.
    pub format: &'static str,
    origin: String,
    /// The last error met: when reading ends right after it, the file was damaged there.
    last_error: Option<String>,
    ended: bool,
}

/// Why a packet is not a UDP datagram.
enum NotUdp {
    LinkType(u32),
    Truncated,
    Other,
}

impl Packets {
    /// Opens `path`, a pcapng or classic pcap file (told apart by their first bytes).
    pub fn open(path: &Path) -> Result<Self> {
        let origin = path.display().to_string();
        let open = || -> Result<BufReader<File>> {
            Ok(BufReader::with_capacity(1 << 20, File::open(path).with_context(|| format!("cannot open {origin}"))?))
        };
        let mut magic = [0u8; 4];
        open()?.read_exact(&mut magic).map_err(|e| anyhow!("{origin}: not a capture ({e})"))?;
        if !is_capture_magic(magic) {
            return Err(anyhow!(
                "{origin}: not a pcapng or pcap file (it starts with {:02x?}; a pcapng starts with 0a 0d 0d 0a, a pcap \
                 with d4 c3 b2 a1 or a1 b2 c3 d4)",
                magic
            ));
        }
        let (source, format) = if u32::from_le_bytes(magic) == 0x0A0D_0D0A {
            (Source::Ng(CaptureReader::new(open()?, &origin)?), "pcapng")
        } else {
            let r = PcapReader::new(open()?).map_err(|e| anyhow!("{origin}: not a pcap file ({e})"))?;
            let link = r.header().datalink;
            (Source::Classic(r, link), "pcap")
        };
        Ok(Self { source, skipped: Skipped::default(), format, origin, last_error: None, ended: false })
    }

    /// True when ackscope wrote the section being read (a pcapng section header naming it as the
    /// writing application): its addresses are the ones [`crate::capture::address`] assigns.
    pub fn written_by_ackscope(&self) -> bool {
        match &self.source {
            Source::Ng(r) => crate::capture::server_end::is_ackscope_application(r.application()),
            Source::Classic(..) => false,
        }
    }

    /// The next UDP datagram; `None` at the end of the file (or after damage, see the module doc).
    pub fn next_udp(&mut self) -> Option<UdpPacket> {
        while !self.ended {
            let read = match &mut self.source {
                Source::Ng(r) => r.next_packet().map(|p| {
                    p.map(|p| {
                        let link = r.interfaces().get(p.interface as usize).map_or(DataLink::RAW, |i| i.linktype);
                        (link, p.interface, p.time_ns, p.comment, p.data)
                    })
                }),
                Source::Classic(r, link) => {
                    let link = *link;
                    r.next_packet().map(|p| {
                        p.map(|p| {
                            let time_ns = p.timestamp.as_nanos().min(u128::from(u64::MAX)) as u64;
                            (link, 0, time_ns, String::new(), p.data.into_owned())
                        })
                        .map_err(|e| anyhow!("{}: damaged pcap record: {e}", self.origin))
                    })
                }
            };
            match read {
                None => {
                    self.ended = true;
                    if let Some(e) = self.last_error.take() {
                        self.skipped.unreadable -= 1;
                        self.skipped.damaged =
                            Some(format!("{e} (reading stopped after {} packets)", self.skipped.packets));
                    }
                }
                Some(Err(e)) => {
                    self.skipped.unreadable += 1;
                    self.last_error = Some(format!("{e:#}"));
                    // A classic pcap reader cannot find the next record after a damaged one.
                    if matches!(self.source, Source::Classic(..)) {
                        self.ended = true;
                        self.skipped.unreadable -= 1;
                        self.skipped.damaged =
                            Some(format!("{e:#} (reading stopped after {} packets)", self.skipped.packets));
                        self.last_error = None;
                    }
                }
                Some(Ok((link, interface, time_ns, comment, data))) => {
                    self.last_error = None;
                    self.skipped.packets += 1;
                    match udp_of(link, &data) {
                        Ok((src, dst, range)) => {
                            let mut payload = data;
                            payload.truncate(range.end);
                            payload.drain(..range.start);
                            return Some(UdpPacket { interface, time_ns, src, dst, payload, comment });
                        }
                        Err(NotUdp::LinkType(lt)) => *self.skipped.link_types.entry(lt).or_default() += 1,
                        Err(NotUdp::Truncated) => self.skipped.truncated += 1,
                        Err(NotUdp::Other) => self.skipped.not_udp += 1,
                    }
                }
            }
        }
        None
    }
}

impl Packets {
    /// The ends (source, destination) of the next UDP datagram, read without copying its bytes
    /// or comments: the import's first look at which ends many flows share
    /// ([`crate::capture::server_end`]), several times faster than [`Self::next_udp`]. Packets
    /// that are not UDP are passed over and not counted (the import proper counts them); `None`
    /// at the end or at a damaged block.
    pub fn next_ends(&mut self) -> Option<(SocketAddr, SocketAddr)> {
        let ends = |link: DataLink, data: &[u8]| udp_of(link, data).ok().map(|(src, dst, _)| (src, dst));
        while !self.ended {
            let read = match &mut self.source {
                Source::Ng(r) => r.next_packet_with(ends),
                Source::Classic(r, link) => {
                    let link = *link;
                    r.next_packet().map(|p| p.map(|p| ends(link, &p.data)).map_err(anyhow::Error::from))
                }
            };
            match read {
                None => self.ended = true,
                // As `next_udp`: a classic pcap cannot go on after a damaged record; a pcapng
                // reader goes on after an undeclared interface and ends after a damaged block.
                Some(Err(_)) => self.ended |= matches!(self.source, Source::Classic(..)),
                Some(Ok(Some(e))) => return Some(e),
                Some(Ok(None)) => {}
            }
        }
        None
    }
}

/// The UDP datagram in a frame of link type `link`: its ends and where its payload sits.
fn udp_of(link: DataLink, data: &[u8]) -> Result<(SocketAddr, SocketAddr, std::ops::Range<usize>), NotUdp> {
    let sliced = match link {
        DataLink::RAW | DataLink::IPV4 | DataLink::IPV6 => SlicedPacket::from_ip(data),
        DataLink::ETHERNET => SlicedPacket::from_ethernet(data),
        DataLink::LINUX_SLL => SlicedPacket::from_linux_sll(data),
        DataLink::NULL | DataLink::LOOP => SlicedPacket::from_ip(data.get(4..).ok_or(NotUdp::Truncated)?),
        other => return Err(NotUdp::LinkType(u32::from(other))),
    }
    .map_err(|e| match e {
        etherparse::err::packet::SliceError::Len(_) => NotUdp::Truncated,
        _ => NotUdp::Other,
    })?;
    let (src_ip, dst_ip): (IpAddr, IpAddr) = match &sliced.net {
        Some(NetSlice::Ipv4(ip)) => (ip.header().source_addr().into(), ip.header().destination_addr().into()),
        Some(NetSlice::Ipv6(ip)) => (ip.header().source_addr().into(), ip.header().destination_addr().into()),
        _ => return Err(NotUdp::Other),
    };
    let Some(TransportSlice::Udp(udp)) = &sliced.transport else { return Err(NotUdp::Other) };
    let payload = udp.payload();
    // The payload is a sub-slice of `data`: its offset is the distance between the pointers.
    let start = payload.as_ptr() as usize - data.as_ptr() as usize;
    Ok((
        SocketAddr::new(src_ip, udp.source_port()),
        SocketAddr::new(dst_ip, udp.destination_port()),
        start..start + payload.len(),
    ))
}

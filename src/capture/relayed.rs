//! What the conditioning proxy relayed, as a pcapng capture with both sides of its link: every
//! datagram as it reached the proxy and every copy as the proxy sent it on, at the real instants
//! the proxy read and wrote them. A capture of the player's network, taken where the link was, so
//! `ackscope fit` can be checked against the link the proxy was told to make.
//!
//! Two interfaces, as [`super::export`] writes a lane: `proxy-in` (each datagram when the proxy
//! read it, either direction) and `proxy-out` (each copy when the proxy sent it on). A drop is a
//! packet on the first and not the second; the link's delay, duplicates and reordering show in the
//! second's times. Addresses follow [`super::address`]: the server is `10.0.0.1` on the port the
//! proxy forwards to, client `K` is `10.1.K/256.K%256` on its own real source port, so the
//! client's number reads off its address and both interfaces name one flow per client. Times are
//! the proxy's clock (µs since it started, on the capture's epoch, as an export's virtual time).
//! No packet comment: the capture carries what a capture on a real path would, nothing of the
//! link's own verdicts, so a fit of it is a fit of real traffic.
//!
//! The proxy hands its bytes over in [`Batch`]es ([`crate::proxy::ProxyConfig::keep_bytes`]);
//! a copy names its datagram by `(client, uid)`, so the writer keeps each datagram's bytes until
//! [`KEEP_FOR`] after it was read (longer than any copy can take to match: the capture reader's
//! matching window), which bounds its memory by the traffic of that window.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::net::SocketAddr;

use ackscope_protocol::{ClientId, Dir, SimTime};
use anyhow::Result;

use super::address::{client_addr, SERVER_ADDR};
use super::pcapng::{CaptureWriter, Udp};
use crate::proxy::Batch;

/// How long a datagram's bytes are kept for its copies (the capture reader matches within 10 s).
pub const KEEP_FOR: SimTime = SimTime(10_000_000);

/// A port for a client whose address was not handed over (it joined before the writer started).
const UNKNOWN_CLIENT_PORT: u16 = 50_001;

/// Writes a proxy's batches as a two-sided pcapng capture (module doc).
pub struct RelayedCapture<W: Write> {
    writer: CaptureWriter<W>,
    server_port: u16,
    client_ports: HashMap<ClientId, u16>,
    /// `(client, uid)` to its direction and bytes, while copies may still come.
    held: HashMap<(ClientId, u64), (Dir, Vec<u8>)>,
    /// Keys of `held` in read order, with their read instant, for the eviction.
    order: VecDeque<(SimTime, ClientId, u64)>,
    /// Copies whose datagram was not (or no longer) held: not written.
    orphan_copies: u64,
    input: u32,
    output: u32,
}

impl<W: Write> RelayedCapture<W> {
    /// Starts a capture of a proxy forwarding to `forward`.
    pub fn new(out: W, forward: SocketAddr) -> Result<Self> {
        let mut writer = CaptureWriter::new(out, &format!("ackscope proxy to {forward}: both sides of its link"))?;
        let input = writer.add_interface("proxy-in", "every datagram as it reached the proxy")?;
        let output = writer.add_interface("proxy-out", "every copy as the proxy sent it on (after the link)")?;
        Ok(Self {
            writer,
            server_port: forward.port(),
            client_ports: HashMap::new(),
            held: HashMap::new(),
            order: VecDeque::new(),
            orphan_copies: 0,
            input,
            output,
        })
    }

    /// Writes a batch's datagrams and copies in time order. Needs the proxy to keep bytes.
    pub fn take(&mut self, batch: &Batch) -> Result<()> {
        for (client, addr, _) in &batch.joined {
            self.client_ports.insert(*client, addr.port());
        }
        // Both lists are in time order; merged, reads first at equal instants.
        let (mut d, mut f) = (batch.datagrams.iter().peekable(), batch.forwards.iter().peekable());
        loop {
            let read_next = match (d.peek(), f.peek()) {
                (Some(a), Some(b)) => a.at <= b.at,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if read_next {
                let g = d.next().expect("peeked");
                let udp = self.udp(g.client, g.dir, g.bytes.clone());
                self.writer.write_udp(self.input, g.at.0, &udp, "")?;
                self.held.insert((g.client, g.uid), (g.dir, udp.payload));
                self.order.push_back((g.at, g.client, g.uid));
                self.evict(g.at);
            } else {
                let c = f.next().expect("peeked");
                match self.held.get(&(c.client, c.uid)) {
                    Some((dir, bytes)) => {
                        let udp = self.udp(c.client, *dir, bytes.clone());
                        self.writer.write_udp(self.output, c.at.0, &udp, "")?;
                    }
                    None => self.orphan_copies += 1,
                }
            }
        }
        Ok(())
    }

    /// The datagram as the capture shows it: server 10.0.0.1, client K at its address.
    fn udp(&self, client: ClientId, dir: Dir, payload: Vec<u8>) -> Udp {
        let server = (SERVER_ADDR, self.server_port);
        let port = self.client_ports.get(&client).copied().unwrap_or(UNKNOWN_CLIENT_PORT);
        let client = (client_addr(client), port);
        match dir {
            Dir::AtoB => Udp { src: server, dst: client, payload },
            Dir::BtoA => Udp { src: client, dst: server, payload },
        }
    }

    fn evict(&mut self, now: SimTime) {
        while let Some(&(at, client, uid)) = self.order.front() {
            if now.saturating_since(at) <= KEEP_FOR {
                break;
            }
            self.order.pop_front();
            self.held.remove(&(client, uid));
        }
    }

    /// Packets written so far (both interfaces).
    pub fn packets(&self) -> u64 {
        self.writer.packets()
    }

    /// Datagrams whose bytes are held for their copies now.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Copies not written because their datagram was not held (read before the writer started,
    /// or longer than [`KEEP_FOR`] on the link).
    pub fn orphan_copies(&self) -> u64 {
        self.orphan_copies
    }

    pub fn into_inner(self) -> W {
        self.writer.into_inner()
    }
}

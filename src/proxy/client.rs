//! One client of the proxy: its address, its socket towards the server, its two links and its
//! figures.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ackscope_protocol::{ClientId, Dir, Link, LinkPair, Scenario, SimTime};
use mio::net::UdpSocket;
use socket2::{Domain, Protocol, Socket, Type};

use super::apply::{client_links, client_seed, pair_of};
use super::stats::{addr_text, ClientSummary, DirStats};

/// `SimTime` for "no entry in the schedule".
pub const NEVER: SimTime = SimTime(u64::MAX);

/// A non-blocking UDP socket bound to `bind`, with kernel buffers of `buffer_bytes` asked for
/// (the kernel caps them at `net.core.rmem_max` / `wmem_max`; a refusal is not an error).
pub fn udp_socket(bind: SocketAddr, buffer_bytes: usize) -> io::Result<UdpSocket> {
    let s = Socket::new(Domain::for_address(bind), Type::DGRAM, Some(Protocol::UDP))?;
    s.set_nonblocking(true)?;
    let _ = s.set_recv_buffer_size(buffer_bytes);
    let _ = s.set_send_buffer_size(buffer_bytes);
    s.bind(&bind.into())?;
    Ok(UdpSocket::from_std(s.into()))
}

/// A socket towards the server for one client: bound to `bind`, by default an ephemeral port of
/// the server's address family, and connected to the server, so the server sees each client as
/// its own source address.
pub fn upstream_socket(forward: SocketAddr, bind: Option<SocketAddr>, buffer_bytes: usize) -> io::Result<UdpSocket> {
    let any = match forward.ip() {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    let s = udp_socket(bind.unwrap_or(SocketAddr::new(any, 0)), buffer_bytes)?;
    s.connect(forward)?;
    Ok(s)
}

/// A client: the datagrams of one source address.
pub struct Client {
    pub id: ClientId,
    pub addr: SocketAddr,
    /// Its own socket towards the server.
    pub upstream: UdpSocket,
    /// Indexed by `Dir::index`: A->B carries the server's datagrams to the client, B->A the
    /// client's to the server (side A is the server).
    pub links: [Link; 2],
    /// Each link's earliest entry in the schedule ([`NEVER`]: none).
    pub scheduled: [SimTime; 2],
    /// Send ids, one counter over both directions, as a simulation counts them.
    pub next_uid: u64,
    pub first_heard: SimTime,
    /// The last datagram from the client (the server's do not keep a client alive).
    pub last_heard: SimTime,
    /// Expired: no longer read from, delivering what its links still hold.
    pub draining: bool,
    pub stats: [DirStats; 2],
}

impl Client {
    /// Client `id` from `addr`, with its links from `scenario` (the settings in force now).
    pub fn new(id: ClientId, addr: SocketAddr, upstream: UdpSocket, scenario: &Scenario, now: SimTime) -> Self {
        let pair = client_links(scenario, id);
        let seed = client_seed(scenario.seed, id);
        Self {
            id,
            addr,
            upstream,
            links: [Link::new(Dir::AtoB, pair.a_to_b, seed), Link::new(Dir::BtoA, pair.b_to_a, seed)],
            scheduled: [NEVER; 2],
            next_uid: 0,
            first_heard: now,
            last_heard: now,
            draining: false,
            stats: Default::default(),
        }
    }

    /// The settings its links hold now.
    pub fn pair(&self) -> LinkPair {
        pair_of(self.links[0].config(), self.links[1].config())
    }

    /// Sets its links to `pair` from `at` on (only the directions that change).
    pub fn set_pair(&mut self, at: SimTime, pair: LinkPair) {
        for d in Dir::BOTH {
            if self.links[d.index()].config() != pair.get(d) {
                self.links[d.index()].set_config_at(at, *pair.get(d));
            }
        }
    }

    /// Copies still on its links.
    pub fn in_flight(&self) -> usize {
        self.links.iter().map(Link::in_flight).sum()
    }

    /// Its line in the report.
    pub fn summary(&self, expired: bool) -> ClientSummary {
        ClientSummary {
            client: self.id,
            addr: addr_text(self.addr),
            first_s: self.first_heard.as_secs_f64(),
            last_s: self.last_heard.as_secs_f64(),
            expired,
            client_to_server: self.stats[Dir::BtoA.index()].summary(),
            server_to_client: self.stats[Dir::AtoB.index()].summary(),
            decoded: None,
        }
    }
}

//! Where each endpoint of an exported session lives on the (made-up) network: the address
//! scheme of [`super`]'s captures, which the dissector registers on.
//!
//! - The server (side A) is `10.0.0.1`; client `K` (side B of connection `K`, numbered from 1
//!   as [`ClientId`]s are) is `10.1.H.L` with `K = H * 256 + L`, so 65,535 clients fit and a
//!   client's number reads straight off its address (client 1 is `10.1.0.1`).
//! - The server's UDP port names the wire format: `27100 + n`, `n` the strategy's row in
//!   [`server_port`] (glenn 27100 ... fragments 27107). A restart into another strategy moves the
//!   server to that strategy's port, so the dissector always knows the format from the port.
//! - A client's port names the lane: `50000 + lane` (lane 1, and lane 2 of an A/B session), so a
//!   conversation never mixes lanes even where two lanes run one strategy.

use std::net::Ipv4Addr;

use ackscope_protocol::{ClientId, Side, Strategy};

/// The server's address (side A).
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);

/// First server port: the wire format's port is this plus its row (see [`server_port`]).
pub const SERVER_PORT_BASE: u16 = 27100;

/// First client port: lane `L`'s clients use this plus `L`.
pub const CLIENT_PORT_BASE: u16 = 50000;

/// Client `client`'s address (side B of its connection); client 0 (events of no single client)
/// is given client 1's.
pub fn client_addr(client: ClientId) -> Ipv4Addr {
    let k = client.clamp(1, u16::MAX as u32);
    Ipv4Addr::new(10, 1, (k >> 8) as u8, k as u8)
}

/// The client an address of [`client_addr`]'s scheme stands for.
pub fn client_of(addr: Ipv4Addr) -> Option<ClientId> {
    match addr.octets() {
        [10, 1, h, l] if (h, l) != (0, 0) => Some(u32::from(h) << 8 | u32::from(l)),
        _ => None,
    }
}

/// The server's port for a wire format. An interface: the dissector registers these ports.
pub fn server_port(strategy: Strategy) -> u16 {
    SERVER_PORT_BASE
        + match strategy {
            Strategy::Glenn => 0,
            Strategy::Ue4 => 1,
            Strategy::Dnm => 2,
            Strategy::Rellikt => 3,
            Strategy::Hybrid => 4,
            Strategy::Acks => 5,
            Strategy::Chunks => 6,
            Strategy::Fragments => 7,
        }
}

/// The wire format a server port stands for.
pub fn strategy_of_port(port: u16) -> Option<Strategy> {
    Strategy::all().find(|s| server_port(*s) == port)
}

/// Lane `lane`'s client port (lanes numbered from 1).
pub fn client_port(lane: usize) -> u16 {
    CLIENT_PORT_BASE + lane.clamp(1, 999) as u16
}

/// The (address, port) of `side` of `client`'s connection in `lane`, speaking `strategy`.
pub fn endpoint(side: Side, client: ClientId, lane: usize, strategy: Strategy) -> (Ipv4Addr, u16) {
    match side {
        Side::A => (SERVER_ADDR, server_port(strategy)),
        Side::B => (client_addr(client), client_port(lane)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_and_ports_read_back() {
        for k in [1, 2, 255, 256, 257, 65535] {
            assert_eq!(client_of(client_addr(k)), Some(k), "client {k}");
        }
        assert_eq!(client_addr(1), Ipv4Addr::new(10, 1, 0, 1));
        assert_eq!(client_of(SERVER_ADDR), None);
        for s in Strategy::all() {
            assert_eq!(strategy_of_port(server_port(s)), Some(s));
        }
        let ports: std::collections::BTreeSet<u16> = Strategy::all().map(server_port).collect();
        assert_eq!(ports.len(), Strategy::all().count(), "one port per format");
    }
}

//! Which end of a UDP flow in a capture is the server (side A, as in ackscope's sessions: A->B
//! is server to client). One rule for every reader of captures: the import ([`super::import`])
//! and the link records of `fit` and `link.trace` ([`super::records`]).
//!
//! The first of these that decides, in order:
//! 1. **`--port N`**: the end on port N (a flow with N at neither end is left out; one with N at
//!    both ends goes on to the next rules).
//! 2. **What ackscope wrote itself**: in a capture section whose header names ackscope as the
//!    writing application (`export --pcapng`, `proxy --pcapng`), the end at `10.0.0.1` when the
//!    other is a client address `10.1.H.L` ([`super::address`]): ackscope gave the server that
//!    address, so it is read, never guessed.
//! 3. **The end many flows share**: the end (address and port) seen with more distinct peers. A
//!    server's one socket answers every client; a client's talks to its server. Counted by end,
//!    not by port alone: clients with a fixed port of their own (Source engine clients on 27005,
//!    every client of an ackscope export on 50001) share a port across hosts, not an end.
//! 4. **The end that did not speak first**: a client's first datagram is what the server answers,
//!    so the end that sent the flow's first datagram is the client.
//!
//! The lower port (the rule before this one) swapped the directions of any flow whose server
//! port was the higher one: a proxy's own capture (server and client ports both ephemeral), a
//! game server on 50000 and a client on 40000.

use std::net::{IpAddr, SocketAddr};

use serde::Serialize;

use super::address::{client_of, SERVER_ADDR};

/// Which rule named a flow's server end (the module doc's numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerBy {
    /// `--port` named it.
    Port,
    /// ackscope wrote the capture and gave the server its address.
    Ackscope,
    /// It has more peers than the other end.
    SharedEnd,
    /// The other end sent the flow's first datagram.
    FirstSender,
}

impl ServerBy {
    /// How the summary says it.
    pub fn describe(self) -> &'static str {
        match self {
            ServerBy::Port => "on --port",
            ServerBy::Ackscope => "the address ackscope gave it",
            ServerBy::SharedEnd => "shared by more flows",
            ServerBy::FirstSender => "answered the first datagram",
        }
    }
}

/// What the rule is told of a flow: its two ends in the order of its first datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstDatagram {
    pub from: SocketAddr,
    pub to: SocketAddr,
}

/// The server end of the flow `first` opened, and why; `None` when `port` is given and on
/// neither end (the flow is left out). `written_by_ackscope`: the capture's section says ackscope
/// wrote it. `peers(end)`: how many distinct ends `end` exchanged datagrams with.
pub fn server_end(
    first: FirstDatagram,
    port: Option<u16>,
    written_by_ackscope: bool,
    peers: impl Fn(SocketAddr) -> usize,
) -> Option<(SocketAddr, ServerBy)> {
    let FirstDatagram { from, to } = first;
    if let Some(p) = port {
        match (from.port() == p, to.port() == p) {
            (true, false) => return Some((from, ServerBy::Port)),
            (false, true) => return Some((to, ServerBy::Port)),
            (false, false) => return None,
            (true, true) => {}
        }
    }
    if written_by_ackscope {
        let is_server = |a: SocketAddr| a.ip() == IpAddr::V4(SERVER_ADDR);
        let is_client = |a: SocketAddr| matches!(a.ip(), IpAddr::V4(ip) if client_of(ip).is_some());
        if is_server(from) && is_client(to) {
            return Some((from, ServerBy::Ackscope));
        }
        if is_server(to) && is_client(from) {
            return Some((to, ServerBy::Ackscope));
        }
    }
    let (p_from, p_to) = (peers(from), peers(to));
    if p_from != p_to {
        return Some(if p_from > p_to { (from, ServerBy::SharedEnd) } else { (to, ServerBy::SharedEnd) });
    }
    Some((to, ServerBy::FirstSender))
}

/// Whether a pcapng section's writing application (`shb_userappl`) is ackscope.
pub fn is_ackscope_application(application: &str) -> bool {
    application == "ackscope" || application.starts_with("ackscope ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn first(from: &str, to: &str) -> FirstDatagram {
        FirstDatagram { from: a(from), to: a(to) }
    }

    #[test]
    fn the_rules_in_order() {
        let none = |_| 1;
        // One flow, the server on the higher port: the first sender is the client.
        assert_eq!(
            server_end(first("127.0.0.1:40000", "127.0.0.1:50000"), None, false, none),
            Some((a("127.0.0.1:50000"), ServerBy::FirstSender))
        );
        // --port wins over everything, and leaves out a flow not on it.
        assert_eq!(
            server_end(first("127.0.0.1:40000", "127.0.0.1:50000"), Some(40000), true, none),
            Some((a("127.0.0.1:40000"), ServerBy::Port))
        );
        assert_eq!(server_end(first("127.0.0.1:1", "127.0.0.1:2"), Some(3), false, none), None);
        // The end with more peers, whoever spoke first.
        let peers = |e: SocketAddr| if e == a("10.0.0.9:7777") { 5 } else { 1 };
        assert_eq!(
            server_end(first("10.0.0.9:7777", "10.2.0.1:60000"), None, false, peers),
            Some((a("10.0.0.9:7777"), ServerBy::SharedEnd))
        );
        // ackscope's own capture: 10.0.0.1 is the server even when the client has more peers
        // and the server spoke first; not in a capture someone else wrote.
        let client_peers = |e: SocketAddr| if e == a("10.1.0.1:50001") { 3 } else { 1 };
        assert_eq!(
            server_end(first("10.0.0.1:60000", "10.1.0.1:50001"), None, true, client_peers),
            Some((a("10.0.0.1:60000"), ServerBy::Ackscope))
        );
        assert_eq!(
            server_end(first("10.0.0.1:60000", "10.1.0.1:50001"), None, false, client_peers),
            Some((a("10.1.0.1:50001"), ServerBy::SharedEnd))
        );
        assert!(is_ackscope_application("ackscope 0.1.0") && !is_ackscope_application("ackscopeX"));
        assert!(!is_ackscope_application("Dumpcap (Wireshark) 4.0.3"));
    }
}

//! What a proxy run is given: addresses, the scenario whose link each client gets, expiry, limits,
//! and which decoder reads the payloads.

use std::net::SocketAddr;
use std::time::Duration;

use crate::model::limits::LiveLimits;
use ackscope_protocol::{LinkConfig, LinkPair, Scenario};

/// How long a client may send nothing before it expires, by default (see [`ProxyConfig::expire_after`]).
///
/// 30 s: game transports give up on a silent peer after 5-30 s (ENet's default peer timeout is
/// 30 s at most, reliable.io-style games usually 10 s), so a client silent for longer has left;
/// one that comes back after that is a new connection to the server too.
pub const DEFAULT_EXPIRE_S: f64 = 30.0;

/// Clients the proxy serves at once by default (one socket each towards the server).
pub const DEFAULT_MAX_CLIENTS: usize = 10_000;

/// The largest UDP payload over IPv4 or IPv6 without jumbograms: the receive buffer's size, so no
/// datagram is ever cut short by the proxy.
pub const MAX_DATAGRAM_BYTES: usize = 65_535;

/// Which decoder reads the payloads (`--decode`): the protocol crate's choice, read by
/// [`super::decode::choice`].
pub use ackscope_protocol::decode::DecodeChoice;

/// Everything a proxy run needs.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Where game clients send (the address they think is the server).
    pub listen: SocketAddr,
    /// The real server.
    pub forward: SocketAddr,
    /// The local address of the sockets towards the server; `None`: any address of the server's
    /// family, a port the OS chooses per client. A fixed port serves one client only (a second
    /// cannot bind it and is refused): for a server that must be told where its client is, as
    /// `ackscope peer --connect` must.
    pub upstream_bind: Option<SocketAddr>,
    /// The scenario whose link every client gets, one instance per client and direction, seeded
    /// per client; its script runs on the proxy's clock (seconds since it started).
    pub scenario: Scenario,
    /// A client that sends nothing for this long expires: its socket towards the server closes,
    /// what its links still hold is delivered, and its figures are kept in summary form only.
    pub expire_after: Duration,
    /// Clients served at once; datagrams of further new clients are dropped and counted.
    pub max_clients: usize,
    /// Whether every datagram's bytes go out with the events (the side table a bytes pane and a
    /// pcapng export read).
    pub keep_bytes: bool,
    /// The decoder asked for (see [`DecodeChoice`]); its batches then carry every datagram's
    /// bytes for it. Decoding runs on the batches' reader ([`super::decode`]).
    pub decode: DecodeChoice,
    /// `--decode` as the user wrote it, for the report.
    pub decode_name: String,
    /// Socket buffer sizes asked of the kernel (it caps them at `net.core.rmem_max` / `wmem_max`).
    pub listen_buffer_bytes: usize,
    pub upstream_buffer_bytes: usize,
    /// The memory caps the byte side table keeps to.
    pub limits: LiveLimits,
    /// How long before a delivery the relay stops sleeping and polls without blocking
    /// ([`super::timer`]).
    pub spin: Duration,
    /// Whether the relay thread asks for a real-time priority (`--realtime`, [`super::priority`]);
    /// refused, the proxy does not start.
    pub realtime: bool,
}

impl ProxyConfig {
    /// A proxy from `listen` to `forward` with the given scenario and the defaults for the rest.
    pub fn new(listen: SocketAddr, forward: SocketAddr, scenario: Scenario) -> Self {
        Self {
            listen,
            forward,
            upstream_bind: None,
            scenario,
            expire_after: Duration::from_secs_f64(DEFAULT_EXPIRE_S),
            max_clients: DEFAULT_MAX_CLIENTS,
            keep_bytes: false,
            decode: DecodeChoice::None,
            decode_name: "none".into(),
            listen_buffer_bytes: 4 << 20,
            upstream_buffer_bytes: 1 << 20,
            limits: LiveLimits::default(),
            spin: super::timer::SPIN,
            realtime: false,
        }
    }
}

/// A link that changes nothing a game would notice: no delay, loss, jitter or cap, and the largest
/// MTU the parameter table allows (9000 bytes: a larger datagram is dropped and counted as MTU).
pub fn transparent_link() -> LinkConfig {
    LinkConfig { latency_ms: 0.0, loss_percent: 0.0, mtu_bytes: 9000, ..LinkConfig::default() }
}

/// The scenario a proxy runs without a scenario file: the default one with a transparent link in
/// both directions, so the proxy impairs only what `--set link...` asks for.
pub fn transparent_scenario() -> Scenario {
    let link = transparent_link();
    Scenario { link: LinkPair { a_to_b: link, b_to_a: link, ..LinkPair::default() }, ..Scenario::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transparent_scenario_passes_the_parameter_table() {
        crate::params::validate::scenario(&transparent_scenario()).unwrap();
    }
}

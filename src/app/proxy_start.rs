//! Starting the conditioning proxy from the window (the transport choice *proxy*): the form's
//! addresses and decoder checked, then one more source started from the one place sources start
//! ([`AppState::start_source`]). Every client gets the window's current link (the controls'
//! link settings), live-edited from the same controls.

use anyhow::{Context, Result};

use super::AppState;
use crate::proxy::{decode, ProxyConfig};
use crate::runtime::udp::resolve;
use crate::source::Spec;

/// What the proxy form asks for, as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyRequest {
    /// Where game clients send to.
    pub listen: String,
    /// The real server.
    pub forward: String,
    /// auto, ackscope, reliable, enet, kcp, header:FILE.ron or none (as `ackscope proxy --decode`).
    pub decode: String,
}

impl ProxyRequest {
    /// The proxy it describes, every client on `state`'s current link; an error names the field.
    pub fn config(&self, state: &AppState) -> Result<ProxyConfig> {
        let listen = resolve(&self.listen).context("listen")?;
        let forward = resolve(&self.forward).context("forward")?;
        let choice = decode::choice(&self.decode)?;
        let mut cfg = ProxyConfig::new(listen, forward, state.scenario.clone());
        cfg.decode = choice;
        cfg.decode_name = self.decode.trim().to_string();
        Ok(cfg)
    }
}

impl AppState {
    /// Starts a new recording of a proxy (see the module doc); a bad field or a port in use
    /// is the window's error and changes nothing.
    pub(super) fn start_proxy(&mut self, request: &ProxyRequest) {
        match request.config(self) {
            Ok(cfg) => self.start_source(Spec::Proxy(Box::new(cfg))),
            Err(e) => self.error = Some(format!("proxy: {e:#}")),
        }
    }
}

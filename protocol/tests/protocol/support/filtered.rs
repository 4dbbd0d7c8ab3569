//! A scripted receive filter: a [`Tap`] whose hook drops the incoming packets a script says were
//! lost, before the endpoint sees them.

use ackscope_protocol::*;

/// The 14-bit sequence of a UE4 packet, read from its packed header.
pub fn ue4_seq(packet: &[u8]) -> Option<u16> {
    let w = u32::from_le_bytes(packet.get(..4)?.try_into().ok()?);
    Some((w >> 18) as u16)
}

/// Drops an incoming UE4 packet when the script, asked with (now, 14-bit sequence), says so.
pub struct DropScript(Box<dyn FnMut(SimTime, u16) -> bool + Send>);

impl TapHook for DropScript {
    fn received(&mut self, now: SimTime, bytes: &[u8]) -> Inject {
        match ue4_seq(bytes) {
            Some(seq) if (self.0)(now, seq) => Inject::Drop,
            _ => Inject::Deliver,
        }
    }
}

/// `inner` behind a tap that drops the incoming packets `drop` picks.
pub fn filtered(inner: Box<dyn Peer>, drop: impl FnMut(SimTime, u16) -> bool + Send + 'static) -> Tap<DropScript> {
    Tap::new(inner, DropScript(Box::new(drop)))
}

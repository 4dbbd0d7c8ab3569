//! A scripted receive filter: a peer that ignores the incoming packets a script says were lost.

use ackscope_protocol::*;

/// The 14-bit sequence of a UE4 packet, read from its packed header.
pub fn ue4_seq(packet: &[u8]) -> Option<u16> {
    let w = u32::from_le_bytes(packet.get(..4)?.try_into().ok()?);
    Some((w >> 18) as u16)
}

/// A peer that ignores incoming packets the script says were lost.
pub struct Filtered {
    pub inner: Box<dyn Peer>,
    /// Decides from (now, 14-bit sequence) whether the packet is dropped.
    pub drop: Box<dyn FnMut(SimTime, u16) -> bool + Send>,
    pub dropped: Vec<(SimTime, u16)>,
}

impl Filtered {
    pub fn new(inner: Box<dyn Peer>, drop: impl FnMut(SimTime, u16) -> bool + Send + 'static) -> Self {
        Self { inner, drop: Box::new(drop), dropped: Vec::new() }
    }
}

impl Peer for Filtered {
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.inner.on_tick(now, events)
    }
    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32> {
        self.inner.poll_send(now, out, events)
    }
    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        if let Some(seq) = ue4_seq(packet) {
            if (self.drop)(now, seq) {
                self.dropped.push((now, seq));
                return;
            }
        }
        self.inner.receive(now, packet, events)
    }
    fn update(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.inner.update(now, events)
    }
    fn stats(&self) -> StatsSample {
        self.inner.stats()
    }
    fn command(&mut self, now: SimTime, command: PeerCommand) {
        self.inner.command(now, command)
    }
    fn unacked_reliable(&self) -> usize {
        self.inner.unacked_reliable()
    }
}

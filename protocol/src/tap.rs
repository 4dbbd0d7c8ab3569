//! [`Tap`]: a wire tap around any [`Peer`], told of every datagram it sends and receives.
//!
//! Recordings keep events, not packet bytes; whatever needs the bytes (the pcapng export, a
//! proxy, a test that decodes what an endpoint really wrote) wraps the endpoints in a `Tap` and
//! re-runs. One wrapper serves them all so that each does not forward the [`Peer`] contract by
//! hand (and forget a defaulted method, which would silently change how the endpoint is driven).
//! A tap forwards every call unchanged, so a tapped run is the same run: its events are equal
//! to the untapped run's (tested for every strategy below).

use std::sync::{Arc, Mutex, PoisonError};

use crate::event::{Event, Side, SimTime, StatsSample};
use crate::peer::{Peer, PeerCommand};

/// What a tap does with an incoming datagram, as its hook decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inject {
    /// Hand it to the endpoint as it came (the default: a pure observer).
    Deliver,
    /// The endpoint never sees it (a loss the link did not make).
    Drop,
    /// The endpoint sees these bytes instead (a rewrite: corruption, a forged ack, ...).
    Replace(Vec<u8>),
}

/// Told of each datagram that passes a [`Tap`].
pub trait TapHook: Send {
    /// The endpoint sent `bytes` as packet `seq` at `now` (called right after `poll_send`).
    fn sent(&mut self, now: SimTime, seq: u32, bytes: &[u8]) {
        let _ = (now, seq, bytes);
    }

    /// `bytes` arrived at `now`; called before the endpoint's `receive`, which then gets what
    /// this returns says.
    fn received(&mut self, now: SimTime, bytes: &[u8]) -> Inject {
        let _ = (now, bytes);
        Inject::Deliver
    }
}

/// The hook that observes nothing and delivers everything.
impl TapHook for () {}

/// A hook shared with whoever reads what it gathered while the simulation owns the peer.
impl<H: TapHook> TapHook for Arc<Mutex<H>> {
    fn sent(&mut self, now: SimTime, seq: u32, bytes: &[u8]) {
        self.lock().unwrap_or_else(PoisonError::into_inner).sent(now, seq, bytes)
    }
    fn received(&mut self, now: SimTime, bytes: &[u8]) -> Inject {
        self.lock().unwrap_or_else(PoisonError::into_inner).received(now, bytes)
    }
}

/// A peer whose datagrams pass a [`TapHook`]; every other call is forwarded unchanged.
pub struct Tap<H: TapHook> {
    inner: Box<dyn Peer>,
    hook: H,
}

impl<H: TapHook> Tap<H> {
    pub fn new(inner: Box<dyn Peer>, hook: H) -> Self {
        Self { inner, hook }
    }

    /// The tapped endpoint.
    pub fn inner(&self) -> &dyn Peer {
        &*self.inner
    }

    pub fn hook(&self) -> &H {
        &self.hook
    }

    pub fn hook_mut(&mut self) -> &mut H {
        &mut self.hook
    }

    pub fn into_parts(self) -> (Box<dyn Peer>, H) {
        (self.inner, self.hook)
    }
}

impl<H: TapHook> Peer for Tap<H> {
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.inner.on_tick(now, events)
    }

    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32> {
        let seq = self.inner.poll_send(now, out, events)?;
        self.hook.sent(now, seq, out);
        Some(seq)
    }

    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        match self.hook.received(now, packet) {
            Inject::Deliver => self.inner.receive(now, packet, events),
            Inject::Drop => {}
            Inject::Replace(bytes) => self.inner.receive(now, &bytes, events),
        }
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

    fn set_reports_packet_beliefs(&mut self, reports: bool) -> bool {
        self.inner.set_reports_packet_beliefs(reports)
    }

    fn max_packets_per_tick(&self) -> usize {
        self.inner.max_packets_per_tick()
    }

    fn set_reports_stats(&mut self, reports: bool) {
        self.inner.set_reports_stats(reports)
    }

    fn set_reports_rtt_samples(&mut self, reports: bool) -> bool {
        self.inner.set_reports_rtt_samples(reports)
    }
}

/// Which way a tapped datagram went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TapDir {
    /// Sent as packet `seq`.
    Sent { seq: u32 },
    /// Arrived (before the endpoint handled it).
    Received,
}

/// One datagram a [`TapLog`] saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tapped {
    /// The endpoint whose tap saw it.
    pub side: Side,
    pub time: SimTime,
    pub dir: TapDir,
    pub bytes: Vec<u8>,
}

/// Every datagram of both sides in the order the taps saw them, which is the simulation's
/// order (time, then its documented order within an instant). Cloned handles share one log;
/// [`TapLog::hook`] makes each side's hook, also for the peers a restart builds.
#[derive(Debug, Clone, Default)]
pub struct TapLog(Arc<Mutex<Vec<Tapped>>>);

impl TapLog {
    pub fn new() -> Self {
        Self::default()
    }

    /// A hook that appends `side`'s datagrams to this log.
    pub fn hook(&self, side: Side) -> SideHook {
        SideHook { side, log: self.clone() }
    }

    /// A tap on `peer` appending to this log as `side`.
    pub fn tap(&self, side: Side, peer: Box<dyn Peer>) -> Tap<SideHook> {
        Tap::new(peer, self.hook(side))
    }

    /// Takes what was logged so far, leaving the log empty.
    pub fn take(&self) -> Vec<Tapped> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn push(&self, tapped: Tapped) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(tapped)
    }
}

/// One side's hook into a [`TapLog`] (see [`TapLog::hook`]).
#[derive(Debug, Clone)]
pub struct SideHook {
    side: Side,
    log: TapLog,
}

impl TapHook for SideHook {
    fn sent(&mut self, now: SimTime, seq: u32, bytes: &[u8]) {
        self.log.push(Tapped { side: self.side, time: now, dir: TapDir::Sent { seq }, bytes: bytes.to_vec() });
    }
    fn received(&mut self, now: SimTime, bytes: &[u8]) -> Inject {
        self.log.push(Tapped { side: self.side, time: now, dir: TapDir::Received, bytes: bytes.to_vec() });
        Inject::Deliver
    }
}

#[cfg(test)]
#[path = "tap_tests.rs"]
mod tests;

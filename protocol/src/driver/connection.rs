//! One client's connection in a simulation: the server's end of it and the client's end (two
//! [`EndpointDriver`]s) and its link in each direction, with what happens at one of its instants.
//!
//! The server holds one endpoint per client, the way one quinn `Endpoint` hands out a handle per
//! connection; every one of them ticks on the server's own grid. What is due at an instant runs
//! in this order: scripted actions (in script order, each action on the client's driver first,
//! which owns the server->client link), deliveries A->B then B->A (each noted by the link just
//! before the receiver handles it), the server's send tick then the client's (each datagram put
//! on its way as it is made: through the server's shared uplink when it is capped, then the
//! link), stats for A then B, then flow control for A then B.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::event::{ClientId, Dir, Event, Side, SimTime};
use crate::link::{Link, Uplink, UplinkFate};
use crate::peer::Peer;
use crate::scenario::Scenario;

use super::endpoint::{EndpointDriver, IdSource, LinkUpdate, Outbound, Transmit};

/// What the scripted actions of an instant did.
#[derive(Debug, Clone, Copy)]
pub(super) struct ScriptOutcome {
    /// Whether any step was applied (the simulation's scenario follows the drivers').
    pub applied: bool,
    /// Whether a link was rebuilt (a restart: the new link is told what it records).
    pub rebuilt: bool,
    /// Where the events the steps made end (they start where the instant's events do).
    pub events_end: usize,
}

impl ScriptOutcome {
    const NONE: ScriptOutcome = ScriptOutcome { applied: false, rebuilt: false, events_end: 0 };
}

/// Both ends of one client's connection and its two links.
pub(super) struct Connection {
    pub client: ClientId,
    /// A->B (server to client) and B->A.
    pub links: [Link; 2],
    /// The server's end (side A) and the client's (side B).
    pub drivers: [EndpointDriver; 2],
}

/// A datagram of the server on its way out: through the shared uplink, then into the client's
/// link when it leaves the server (or dropped at the server when the uplink's queue is full).
struct ViaUplink<'a> {
    uplink: &'a mut Uplink,
    link: &'a mut Link,
}

impl Outbound for ViaUplink<'_> {
    fn transmit(&mut self, tx: Transmit, events: &mut Vec<Event>) {
        match self.uplink.offer(tx.sent_at, tx.bytes.len()) {
            UplinkFate::Departs(at) => self.link.send_after(tx.sent_at, at, tx.uid, tx.bytes, events),
            UplinkFate::Dropped => self.link.note_uplink_drop(tx.sent_at, tx.uid, tx.bytes.len(), events),
        }
    }
}

impl Connection {
    /// Client `client`'s connection at time 0 under its own scenario (`scenario`, with the
    /// client's seed: [`Scenario::for_client`]); the server's end ticks on the grid of
    /// `server_seed`, the run's seed. Send ids count from 0 per connection (ground truth is keyed
    /// by client and send id).
    pub fn new(client: ClientId, scenario: Scenario, server_seed: u64, peers: [Box<dyn Peer>; 2]) -> Self {
        let links = [scenario.link.build(Dir::AtoB, scenario.seed), scenario.link.build(Dir::BtoA, scenario.seed)];
        // One counter over both ends: send ids in send order, as ground truth tables expect.
        let counter = Arc::new(AtomicU64::new(0));
        let [peer_a, peer_b] = peers;
        let mut drivers = [
            EndpointDriver::with_ids(Side::A, scenario.clone(), peer_a, IdSource::Shared(counter.clone())),
            EndpointDriver::with_ids(Side::B, scenario, peer_b, IdSource::Shared(counter)),
        ];
        for d in &mut drivers {
            d.set_client(client, server_seed);
        }
        Self { client, links, drivers }
    }

    /// When anything is next due: a driver's tick, stats sample or script step, or a delivery.
    #[inline]
    pub fn next_time(&self) -> SimTime {
        let t = self.drivers[0].next_due().min(self.drivers[1].next_due());
        t.min(self.links[0].next_delivery_or_never()).min(self.links[1].next_delivery_or_never())
    }

    /// Runs what is due at `t`; the server's datagrams go through `uplink` when given. Returns
    /// what the script did (its events start where `events` ended).
    ///
    /// Always inlined into the simulation's loops, as it was into the one loop before clients:
    /// a call per instant was 2.5 M instructions of a 120 s sweep run (callgrind).
    #[inline(always)]
    pub fn step_at(&mut self, t: SimTime, events: &mut Vec<Event>, uplink: Option<&mut Uplink>) -> ScriptOutcome {
        // Whether either driver has a tick, stats sample or script step due: most instants are
        // a delivery and nothing else (deliveries do not move what a driver has due).
        let drivers_due = self.drivers[0].next_due().min(self.drivers[1].next_due()) <= t;
        let mut script = ScriptOutcome::NONE;
        if drivers_due {
            script = self.apply_script(t, events);
        }
        script.events_end = events.len();
        for dir in Dir::BOTH {
            let link = &mut self.links[dir.index()];
            // Most instants deliver nothing on a direction (the instant reaches the driver
            // below, with its tick). An empty link says "never", u64::MAX: an instant then
            // finds nothing to take.
            if link.next_delivery_or_never() <= t {
                self.drivers[dir.receiver().index()].take_datagrams(t, link, events);
            }
        }
        // Each driver is called only for what is due (a tick, a stats sample): most instants are
        // one delivery, and calling every step of both drivers at each was a tenth of a run. The
        // drivers are told the instant at the end of `run_until` (nothing reads it before):
        // telling each at every instant was 0.3 M instructions per 120 s sweep run.
        if drivers_due {
            let [link_ab, link_ba] = &mut self.links;
            let [a, b] = &mut self.drivers;
            if a.next_tick() <= t {
                match uplink {
                    Some(uplink) => a.take_tick(t, &mut ViaUplink { uplink, link: link_ab }, events),
                    None => a.take_tick(t, link_ab, events),
                }
            }
            if b.next_tick() <= t {
                b.take_tick(t, link_ba, events);
            }
            // One test for both in the common case (a stats instant comes every 100 ms or so).
            if a.stats_due(t) || b.stats_due(t) {
                self.sample_due_stats(t, events);
            }
        }
        script
    }

    /// Applies every scripted action due at `t`, in script order. Each driver holds the steps
    /// that concern it, so their due steps are merged by (script position, direction into it):
    /// at one position side B's driver (which owns A->B) goes first.
    fn apply_script(&mut self, t: SimTime, events: &mut Vec<Event>) -> ScriptOutcome {
        let mut out = ScriptOutcome::NONE;
        loop {
            let next = self
                .drivers
                .iter()
                .filter_map(|d| d.next_script_step(t).map(|i| (i, d.link_dir().index(), d.side())))
                .min();
            let Some((_, _, side)) = next else {
                break;
            };
            let update = self.drivers[side.index()].apply_script_step(t, events);
            out.rebuilt |= self.update_link(side, update, t);
            out.applied = true;
        }
        out
    }

    /// Applies a driver's [`LinkUpdate`] to the link into its endpoint; true for a new link.
    pub fn update_link(&mut self, side: Side, update: LinkUpdate, now: SimTime) -> bool {
        let dir = side.other().outgoing();
        update.apply(&self.drivers[side.index()], &mut self.links[dir.index()], now);
        update == LinkUpdate::Rebuild
    }

    /// The stats samples due at `t`, A's then B's, then flow control after each sample.
    fn sample_due_stats(&mut self, t: SimTime, events: &mut Vec<Event>) {
        let mut sampled = [false; 2];
        for side in Side::BOTH {
            let d = &mut self.drivers[side.index()];
            sampled[side.index()] = d.stats_due(t) && d.sample_stats(t, events);
        }
        for side in Side::BOTH {
            if sampled[side.index()] {
                self.drivers[side.index()].apply_flow(t, events);
            }
        }
    }

    /// Reliable messages not yet acked at both ends.
    pub fn unacked_reliable(&self) -> usize {
        self.drivers.iter().map(|d| d.peer().unacked_reliable()).sum()
    }
}

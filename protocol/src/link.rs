//! A seeded, lossy, one-directional link on virtual time.
//!
//! Each packet goes through a fixed pipeline of decisions — MTU, bandwidth queue (tail drop),
//! Gilbert-Elliott burst loss, random loss, delay (latency + jitter, optional extra reorder delay),
//! duplication — and is then scheduled by `(deliver_at, send_order)`, so packets due at the same
//! instant arrive in the order they were sent and every run is reproducible.
//!
//! The link draws the same number of random values for every packet whatever happens to it, so two
//! protocols that send the same number of packets see the identical loss and delay trace — the basis
//! of A/B comparisons.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::event::{Dir, DropReason, Event, EventKind, SimTime};

/// IPv4 + UDP header bytes counted per packet in bandwidth and MTU figures (as reliable.io).
pub const IP_UDP_OVERHEAD_BYTES: u32 = 28;

/// Shape of the jitter added to the base latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JitterDistribution {
    /// Uniform in `[-jitter, +jitter]`.
    #[default]
    Uniform,
    /// Normal with standard deviation `jitter`.
    Normal,
}

/// Gilbert-Elliott two-state burst loss.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BurstLoss {
    /// Per-packet chance (%) of moving from the good to the bad state.
    pub p_percent: f64,
    /// Per-packet chance (%) of moving from the bad state back to good.
    pub r_percent: f64,
    /// Loss (%) while in the bad state.
    pub loss_in_bad_percent: f64,
}

impl Default for BurstLoss {
    fn default() -> Self {
        Self { p_percent: 0.0, r_percent: 25.0, loss_in_bad_percent: 100.0 }
    }
}

/// Everything about one direction of the link; any field may change while running.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LinkConfig {
    /// Base one-way latency.
    pub latency_ms: f64,
    /// Jitter amplitude (uniform half-width or normal standard deviation).
    pub jitter_ms: f64,
    pub jitter_distribution: JitterDistribution,
    /// When false, jitter never lets a packet overtake an earlier one (a FIFO link).
    pub jitter_reorders: bool,
    /// Independent random loss.
    pub loss_percent: f64,
    /// Gilbert-Elliott burst loss (off while `p_percent` is 0).
    pub burst: BurstLoss,
    /// Chance of delivering an extra copy.
    pub duplicate_percent: f64,
    /// Chance of holding a packet back by `reorder_delay_ms` so later ones overtake it.
    pub reorder_percent: f64,
    pub reorder_delay_ms: f64,
    /// Bandwidth cap in kbit/s including 28 bytes of IP+UDP per packet; 0 = unlimited.
    pub bandwidth_kbps: f64,
    /// Bytes the bandwidth queue holds before tail-dropping.
    pub queue_bytes: u32,
    /// Largest IP packet (payload + 28); larger ones are dropped.
    pub mtu_bytes: u32,
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self {
            latency_ms: 50.0,
            jitter_ms: 0.0,
            jitter_distribution: JitterDistribution::Uniform,
            jitter_reorders: true,
            loss_percent: 5.0,
            burst: BurstLoss::default(),
            duplicate_percent: 0.0,
            reorder_percent: 0.0,
            reorder_delay_ms: 30.0,
            bandwidth_kbps: 0.0,
            queue_bytes: 64 * 1024,
            mtu_bytes: 1500,
        }
    }
}

/// The random draws made for every packet, in a fixed number whatever the outcome.
#[derive(Debug, Clone, Copy)]
struct Draws {
    burst_transition: f64,
    burst_loss: f64,
    loss: f64,
    jitter_uniform: f64,
    jitter_normal: f64,
    reorder: f64,
    duplicate: f64,
    dup_jitter_uniform: f64,
    dup_jitter_normal: f64,
}

#[derive(Debug)]
struct InFlight {
    uid: u64,
    sent_at: SimTime,
    bytes: Vec<u8>,
}

/// One direction of the lossy link.
#[derive(Debug)]
pub struct Link {
    dir: Dir,
    config: LinkConfig,
    rng: ChaCha8Rng,
    in_bad_state: bool,
    /// When the bandwidth-limited transmitter finishes its backlog.
    busy_until: SimTime,
    last_deliver_at: SimTime,
    order: u64,
    queue: BinaryHeap<Reverse<(SimTime, u64)>>,
    slots: std::collections::HashMap<u64, InFlight>,
}

impl Link {
    /// A link for `dir`, seeded from `seed` (each direction gets its own stream).
    pub fn new(dir: Dir, config: LinkConfig, seed: u64) -> Self {
        let stream = match dir {
            Dir::AtoB => 0x00A1_u64,
            Dir::BtoA => 0x00B1_u64,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        Self {
            dir,
            config,
            rng,
            in_bad_state: false,
            busy_until: SimTime::ZERO,
            last_deliver_at: SimTime::ZERO,
            order: 0,
            queue: BinaryHeap::new(),
            slots: std::collections::HashMap::new(),
        }
    }

    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// Changes parameters; packets already in flight keep their schedule.
    pub fn set_config(&mut self, config: LinkConfig) {
        self.config = config;
    }

    /// Packets currently in flight (scheduled, not yet delivered).
    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }

    fn draw(&mut self) -> Draws {
        Draws {
            burst_transition: self.rng.random::<f64>() * 100.0,
            burst_loss: self.rng.random::<f64>() * 100.0,
            loss: self.rng.random::<f64>() * 100.0,
            jitter_uniform: self.rng.random::<f64>() * 2.0 - 1.0,
            jitter_normal: StandardNormal.sample(&mut self.rng),
            reorder: self.rng.random::<f64>() * 100.0,
            duplicate: self.rng.random::<f64>() * 100.0,
            dup_jitter_uniform: self.rng.random::<f64>() * 2.0 - 1.0,
            dup_jitter_normal: StandardNormal.sample(&mut self.rng),
        }
    }

    fn jitter_us(&self, uniform: f64, normal: f64) -> f64 {
        let j = self.config.jitter_ms.max(0.0) * 1000.0;
        match self.config.jitter_distribution {
            JitterDistribution::Uniform => uniform * j,
            JitterDistribution::Normal => normal * j,
        }
    }

    /// Puts a packet on the link at `now`; emits `LinkSent` and, if it happens, `LinkDropped` or
    /// `LinkDuplicated`.
    pub fn send(&mut self, now: SimTime, uid: u64, bytes: Vec<u8>, events: &mut Vec<Event>) {
        let c = self.config;
        let d = self.draw();
        let wire_bytes = bytes.len() as u32 + IP_UDP_OVERHEAD_BYTES;
        let dir = self.dir;
        events.push(Event { time: now, kind: EventKind::LinkSent { dir, uid, bytes: bytes.len() as u32 } });
        let drop = |events: &mut Vec<Event>, reason| {
            events.push(Event { time: now, kind: EventKind::LinkDropped { dir, uid, reason } });
        };

        // Gilbert-Elliott state advances once per packet.
        if c.burst.p_percent > 0.0 {
            if self.in_bad_state {
                if d.burst_transition < c.burst.r_percent {
                    self.in_bad_state = false;
                }
            } else if d.burst_transition < c.burst.p_percent {
                self.in_bad_state = true;
            }
        } else {
            self.in_bad_state = false;
        }

        if wire_bytes > c.mtu_bytes {
            return drop(events, DropReason::Mtu);
        }

        // Serialisation through the bandwidth cap, with a bounded backlog.
        let mut depart = now;
        if c.bandwidth_kbps > 0.0 {
            let start = self.busy_until.max(now);
            let backlog_us = start.0 - now.0;
            let backlog_bytes = backlog_us as f64 * c.bandwidth_kbps / 8000.0;
            if backlog_bytes + wire_bytes as f64 > c.queue_bytes as f64 {
                return drop(events, DropReason::QueueFull);
            }
            let tx_us = (wire_bytes as f64 * 8000.0 / c.bandwidth_kbps).round() as u64;
            self.busy_until = start.plus_micros(tx_us);
            depart = self.busy_until;
        }

        if self.in_bad_state && d.burst_loss < c.burst.loss_in_bad_percent {
            return drop(events, DropReason::Burst);
        }
        if d.loss < c.loss_percent {
            return drop(events, DropReason::Random);
        }

        let base_us = c.latency_ms.max(0.0) * 1000.0;
        let mut delay_us = (base_us + self.jitter_us(d.jitter_uniform, d.jitter_normal)).max(0.0);
        if d.reorder < c.reorder_percent {
            delay_us += c.reorder_delay_ms.max(0.0) * 1000.0;
        }
        let mut at = depart.plus_micros(delay_us.round() as u64);
        if !c.jitter_reorders && at < self.last_deliver_at {
            at = self.last_deliver_at;
        }
        self.last_deliver_at = self.last_deliver_at.max(at);

        let dup = d.duplicate < c.duplicate_percent;
        let copy = if dup { Some(bytes.clone()) } else { None };
        self.schedule(at, InFlight { uid, sent_at: now, bytes });
        if let Some(copy) = copy {
            events.push(Event { time: now, kind: EventKind::LinkDuplicated { dir, uid } });
            let dup_delay = (base_us + self.jitter_us(d.dup_jitter_uniform, d.dup_jitter_normal)).max(0.0);
            let at2 = depart.plus_micros(dup_delay.round() as u64).max(if c.jitter_reorders {
                SimTime::ZERO
            } else {
                self.last_deliver_at
            });
            self.last_deliver_at = self.last_deliver_at.max(at2);
            self.schedule(at2, InFlight { uid, sent_at: now, bytes: copy });
        }
    }

    fn schedule(&mut self, at: SimTime, packet: InFlight) {
        let order = self.order;
        self.order += 1;
        self.queue.push(Reverse((at, order)));
        self.slots.insert(order, packet);
    }

    /// When the next packet is due, if any.
    pub fn next_delivery(&self) -> Option<SimTime> {
        self.queue.peek().map(|Reverse((t, _))| *t)
    }

    /// Takes the next packet due at or before `now`, emitting `LinkDelivered`.
    pub fn pop_due(&mut self, now: SimTime, events: &mut Vec<Event>) -> Option<(u64, Vec<u8>)> {
        let Reverse((at, order)) = *self.queue.peek()?;
        if at > now {
            return None;
        }
        self.queue.pop();
        let p = self.slots.remove(&order).expect("scheduled packet has a slot");
        let delay_us = at.saturating_since(p.sent_at).0.min(u32::MAX as u64) as u32;
        events.push(Event { time: at, kind: EventKind::LinkDelivered { dir: self.dir, uid: p.uid, delay_us } });
        Some((p.uid, p.bytes))
    }
}

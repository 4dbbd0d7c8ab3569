//! A seeded, lossy, one-directional link on virtual time.
//!
//! Each packet goes through a fixed pipeline of decisions — MTU, bandwidth queue (tail drop),
//! Gilbert-Elliott burst loss, random loss, delay (latency + jitter, optional extra reorder delay),
//! duplication — and is then scheduled by `(deliver_at, send_order)`, so packets due at the same
//! instant arrive in the order they were sent and every run is reproducible.
//!
//! The random draws for a packet are a pure function of `(seed, direction, send time, index among
//! packets sent at that same instant)`, not of how many packets came before. Two protocols run on the
//! same seed therefore see the identical loss and delay trace: a packet sent at time t by one meets
//! exactly the fate a packet sent at t by the other meets, even when one sends fewer packets (UE4
//! flushes only when it has something to say; Glenn sends every tick) — the basis of A/B
//! comparisons. Only the Gilbert-Elliott state advances per packet sent.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    /// Per-direction key mixed into every packet's draws.
    key: u64,
    /// Send time of the previous packet and how many were sent at that instant.
    last_send: (SimTime, u64),
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
        let key = splitmix(seed ^ splitmix(stream));
        Self {
            dir,
            config,
            key,
            last_send: (SimTime(u64::MAX), 0),
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

    fn draw(&mut self, now: SimTime) -> Draws {
        let n = if self.last_send.0 == now { self.last_send.1 + 1 } else { 0 };
        self.last_send = (now, n);
        let mut state = splitmix(self.key ^ splitmix(now.0 ^ splitmix(n)));
        let mut uniform = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            (splitmix(state) >> 11) as f64 / (1u64 << 53) as f64
        };
        let normal = |u1: f64, u2: f64| (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let (burst_transition, burst_loss, loss) = (uniform() * 100.0, uniform() * 100.0, uniform() * 100.0);
        let jitter_uniform = uniform() * 2.0 - 1.0;
        let jitter_normal = normal(uniform(), uniform());
        let (reorder, duplicate) = (uniform() * 100.0, uniform() * 100.0);
        let dup_jitter_uniform = uniform() * 2.0 - 1.0;
        let dup_jitter_normal = normal(uniform(), uniform());
        Draws {
            burst_transition,
            burst_loss,
            loss,
            jitter_uniform,
            jitter_normal,
            reorder,
            duplicate,
            dup_jitter_uniform,
            dup_jitter_normal,
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
        let d = self.draw(now);
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

/// SplitMix64's finaliser: a well-mixed 64-bit hash of `x`.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fates(link: &mut Link, times_ms: &[u64]) -> Vec<(u64, bool)> {
        let mut ev = Vec::new();
        for (i, t) in times_ms.iter().enumerate() {
            link.send(SimTime(t * 1000), i as u64, vec![0; 50], &mut ev);
        }
        let mut out = Vec::new();
        for e in &ev {
            if let EventKind::LinkDropped { uid, .. } = e.kind {
                out.push((times_ms[uid as usize], true));
            }
        }
        out
    }

    #[test]
    fn a_packet_sent_at_the_same_time_meets_the_same_fate_whatever_was_sent_before() {
        let cfg = LinkConfig { loss_percent: 30.0, ..LinkConfig::default() };
        let every: Vec<u64> = (0..2000).map(|i| i * 16).collect();
        let some: Vec<u64> = every.iter().copied().filter(|t| t % 48 == 0).collect();
        let dropped_every: std::collections::BTreeSet<u64> =
            fates(&mut Link::new(Dir::AtoB, cfg, 7), &every).into_iter().map(|(t, _)| t).collect();
        let dropped_some: Vec<u64> =
            fates(&mut Link::new(Dir::AtoB, cfg, 7), &some).into_iter().map(|(t, _)| t).collect();
        assert!(dropped_every.len() > 400, "{}", dropped_every.len());
        assert!(!dropped_some.is_empty());
        for t in &dropped_some {
            assert!(dropped_every.contains(t), "packet at {t} ms dropped in one run only");
        }
        let kept_in_every = some.iter().filter(|t| !dropped_every.contains(t)).count();
        assert_eq!(kept_in_every, some.len() - dropped_some.len());
    }

    #[test]
    fn normal_jitter_has_the_configured_spread() {
        let cfg = LinkConfig {
            loss_percent: 0.0,
            jitter_ms: 10.0,
            jitter_distribution: JitterDistribution::Normal,
            latency_ms: 100.0,
            ..LinkConfig::default()
        };
        let mut link = Link::new(Dir::BtoA, cfg, 3);
        let mut ev = Vec::new();
        for i in 0..20_000u64 {
            link.send(SimTime(i * 1000), i, vec![0; 10], &mut ev);
        }
        let delays: Vec<f64> = {
            let mut d = Vec::new();
            while link.pop_due(SimTime(u64::MAX), &mut ev).is_some() {}
            for e in &ev {
                if let EventKind::LinkDelivered { delay_us, .. } = e.kind {
                    d.push(delay_us as f64 / 1000.0);
                }
            }
            d
        };
        let n = delays.len() as f64;
        let mean = delays.iter().sum::<f64>() / n;
        let sd = (delays.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean - 100.0).abs() < 0.5, "{mean}");
        assert!((sd - 10.0).abs() < 0.5, "{sd}");
    }
}

//! A seeded, lossy, one-directional link on virtual time.
//!
//! Each packet goes through a fixed pipeline of decisions — MTU, bandwidth queue (tail drop),
//! Gilbert-Elliott burst loss, random loss, delay (latency + jitter, optional extra reorder delay),
//! duplication — and is then scheduled by `(deliver_at, send_order)`, so packets due at the same
//! instant arrive in the order they were sent and every run is reproducible.
//!
//! One trace per seed: a packet's fate is a pure function of `(seed, direction, send time, index
//! among packets sent at that same instant)` and the settings in force, never of how many packets
//! came before. Two protocols run on the same seed therefore see the identical loss and delay
//! trace: a packet sent at time t by one meets exactly the fate a packet sent at t by the other
//! meets, even when one sends fewer packets (UE4 flushes only when it has something to say; Glenn
//! sends every tick) — the basis of A/B comparisons. Per decision:
//! - random loss, jitter, the reorder hold, duplication and the duplicate's jitter: draws keyed by
//!   `(seed, direction, send time, index at that instant)`;
//! - Gilbert-Elliott bursts: a chain on a 1 ms time grid of its own ([`super::burst`]), keyed by
//!   `(seed, direction, grid step)`;
//! - jitter without reordering (`jitter_reorders = false`): one delay path over time
//!   ([`super::fifo`]), keyed by `(seed, direction, knot)`;
//! - MTU: the packet's own size.
//!
//! The one exception is the bandwidth cap: its queue delay and tail drop depend on what else is
//! queued, which is the traffic itself (a strategy that sends more fills the queue sooner).

use super::burst::BurstChain;
use super::config::{JitterDistribution, LinkConfig, IP_UDP_OVERHEAD_BYTES};
use super::draws::{normal, splitmix, stream, unit};
use super::fifo::fifo_arrival;
use super::schedule::Schedule;
use super::trace::{LinkTrace, Outcome};
use crate::event::{round_u64, Dir, DropReason, Event, EventKind, SimTime};

/// A packet's random draws, each at a fixed position of the packet's own sequence whatever the
/// outcome: 0 (retired: it once drove a per-packet burst chain), burst loss, loss, jitter (a
/// uniform, then the two uniforms behind a normal), reorder, duplicate, the duplicate's jitter
/// (likewise three).
///
/// The draw at a position is a pure function of the packet's key and the position, so each is
/// made only where the settings read it: a link without jitter, reordering or duplicates makes
/// one, where making all eleven was a twentieth of a run.
#[derive(Debug, Clone, Copy)]
struct Draws {
    state: u64,
}

impl Draws {
    /// The uniform draw in `[0, 1)` at `position`.
    fn at(self, position: u64) -> f64 {
        unit(splitmix(self.state.wrapping_add((position + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))))
    }
    fn burst_loss(self) -> f64 {
        self.at(1) * 100.0
    }
    fn loss(self) -> f64 {
        self.at(2) * 100.0
    }
    /// The uniform in `[-1, 1)` and the pair of uniforms of the jitter of the original
    /// (`copy` 0) or the duplicate (`copy` 1).
    fn jitter(self, copy: u64) -> (f64, (f64, f64)) {
        let p = 3 + 5 * copy;
        (self.at(p) * 2.0 - 1.0, (self.at(p + 1), self.at(p + 2)))
    }
    fn reorder(self) -> f64 {
        self.at(6) * 100.0
    }
    fn duplicate(self) -> f64 {
        self.at(7) * 100.0
    }
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
    /// Key of the FIFO jitter path (its own stream).
    fifo_key: u64,
    /// Send time of the previous packet and how many were sent at that instant.
    last_send: (SimTime, u64),
    /// The Gilbert-Elliott state over time (its own stream).
    burst: BurstChain,
    /// When the bandwidth-limited transmitter finishes its backlog.
    busy_until: SimTime,
    /// The latest instant the link was called at (a `set_config` without a time applies from it).
    latest: SimTime,
    /// Packets in flight by `(deliver_at, send order)`; the packet rides in the entry (a side
    /// table keyed by order cost a hash per packet).
    queue: Schedule<InFlight>,
    /// Whether the link reports its ground truth as events (see [`Self::set_records`]).
    records: bool,
    /// The delay of every packet not lost, where nothing else varies per packet (see
    /// [`plain_delay_us`]).
    plain_delay_us: Option<u64>,
    /// A recorded link whose fates this one replays instead of drawing ([`super::trace`]).
    replay: Option<std::sync::Arc<LinkTrace>>,
}

/// On a link without bandwidth cap, burst loss, reordering, duplicates or jitter, every packet not
/// lost arrives the same delay after it was sent: computed once per setting (by the very operations
/// [`Link::send`] makes otherwise), where the checks and arithmetic per packet were about 60
/// instructions of a send.
fn plain_delay_us(c: &LinkConfig, fifo_key: u64) -> Option<u64> {
    // The same tests `send` makes (a NaN setting is off there too).
    let varies = c.bandwidth_kbps > 0.0
        || c.burst.p_percent > 0.0
        || c.reorder_percent > 0.0
        || c.duplicate_percent > 0.0
        || c.jitter_ms.max(0.0) * 1000.0 != 0.0;
    if varies {
        return None;
    }
    Some(if c.jitter_reorders {
        // `send`'s delay of the original with no jitter and no reorder hold.
        round_u64((c.latency_ms.max(0.0) * 1000.0 + 0.0).max(0.0) + 0.0)
    } else {
        // Without jitter the FIFO path is the latency whatever the departure.
        fifo_arrival(fifo_key, c, SimTime::ZERO).0
    })
}

impl Link {
    /// A link for `dir`, seeded from `seed` (each direction gets its own stream).
    pub fn new(dir: Dir, config: LinkConfig, seed: u64) -> Self {
        let direction = match dir {
            Dir::AtoB => 0x00A1_u64,
            Dir::BtoA => 0x00B1_u64,
        };
        let key = stream(seed, direction);
        let fifo_key = stream(key, FIFO_STREAM);
        Self {
            dir,
            config,
            key,
            fifo_key,
            last_send: (SimTime(u64::MAX), 0),
            burst: BurstChain::new(stream(key, BURST_STREAM), config.burst),
            busy_until: SimTime::ZERO,
            latest: SimTime::ZERO,
            queue: Schedule::default(),
            records: true,
            plain_delay_us: plain_delay_us(&config, fifo_key),
            replay: None,
        }
    }

    /// This link, replaying `trace`'s fates for its direction ([`super::trace`]): only the MTU of
    /// its settings still applies.
    pub fn replaying(mut self, trace: std::sync::Arc<LinkTrace>) -> Self {
        self.replay = Some(trace);
        self
    }

    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// Changes parameters from `now` on; packets already in flight keep their schedule, and the
    /// burst chain takes its new parameters from the 1 ms step containing `now`.
    pub fn set_config_at(&mut self, now: SimTime, config: LinkConfig) {
        self.burst.set_params(now, config.burst);
        self.config = config;
        self.plain_delay_us = plain_delay_us(&config, self.fifo_key);
    }

    /// Changes parameters from the latest instant the link was called at (sent or polled at).
    /// Prefer [`Self::set_config_at`] where the instant of the change is known.
    pub fn set_config(&mut self, config: LinkConfig) {
        self.set_config_at(self.latest, config);
    }

    /// Whether `LinkSent`, `LinkDropped`, `LinkDuplicated` and `LinkDelivered` are reported (true
    /// by default). Without them every packet meets the same fate: only the events go, for a run
    /// that reads none of them (a sweep: see [`crate::driver::EventFilter`]).
    pub fn set_records(&mut self, records: bool) {
        self.records = records;
    }

    /// Packets currently in flight (scheduled, not yet delivered).
    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }

    /// The index of a packet sent at `now` among those sent at that instant.
    fn index_at(&mut self, now: SimTime) -> u64 {
        let n = if self.last_send.0 == now { self.last_send.1 + 1 } else { 0 };
        self.last_send = (now, n);
        n
    }

    fn draw(&mut self, now: SimTime) -> Draws {
        let n = self.index_at(now);
        // Most packets are the first at their instant: `splitmix(0)` is a constant.
        const FIRST: u64 = splitmix(0);
        let mixed_n = if n == 0 { FIRST } else { splitmix(n) };
        Draws { state: splitmix(self.key ^ splitmix(now.0 ^ mixed_n)) }
    }

    /// The jitter of the original (`copy` 0) or duplicate (`copy` 1); without jitter, 0 with no
    /// draw (a draw times 0 is a zero, which adds nothing to a latency).
    fn jitter_us(&self, d: Draws, copy: u64) -> f64 {
        let j = self.config.jitter_ms.max(0.0) * 1000.0;
        if j == 0.0 {
            return 0.0;
        }
        let (uniform, (u1, u2)) = d.jitter(copy);
        match self.config.jitter_distribution {
            JitterDistribution::Uniform => uniform * j,
            JitterDistribution::Normal => normal(u1, u2) * j,
        }
    }

    /// Puts a packet on the link at `now`; emits `LinkSent` and, if it happens, `LinkDropped` or
    /// `LinkDuplicated`.
    pub fn send(&mut self, now: SimTime, uid: u64, bytes: Vec<u8>, events: &mut Vec<Event>) {
        self.send_ready(now, now, uid, bytes, events);
    }

    /// [`Self::send`] for a packet sent at `now` that reaches this link only at `ready` (at or
    /// after `now`): it left the server's shared uplink then ([`super::uplink`]). Its draws and
    /// events stay those of `now`, so the link meets it with the fate it meets a packet sent at
    /// `now`; its delay counts from `ready` (and the `LinkDelivered` delay includes the wait).
    pub fn send_after(&mut self, now: SimTime, ready: SimTime, uid: u64, bytes: Vec<u8>, events: &mut Vec<Event>) {
        self.send_ready(now, ready.max(now), uid, bytes, events);
    }

    /// Records that the packet `uid` sent at `now` never reached this link: the server's uplink
    /// dropped it (`LinkSent`, then `LinkDropped` with `QueueFull`, as the link's own queue says).
    pub fn note_uplink_drop(&mut self, now: SimTime, uid: u64, bytes: usize, events: &mut Vec<Event>) {
        self.latest = self.latest.max(now);
        if self.records {
            let dir = self.dir;
            events.push(Event::new(now, EventKind::LinkSent { dir, uid, bytes: bytes as u32 }));
            events.push(Event::new(now, EventKind::LinkDropped { dir, uid, reason: DropReason::QueueFull }));
        }
    }

    /// The pipeline of [`Self::send`] for a packet arriving at `ready` (`now` for a direct send,
    /// where it compiles to exactly the plain send).
    #[inline(always)]
    fn send_ready(&mut self, now: SimTime, ready: SimTime, uid: u64, bytes: Vec<u8>, events: &mut Vec<Event>) {
        self.latest = self.latest.max(now);
        let d = self.draw(now);
        // Read in place: a copy of the settings per packet was 12 instructions of ~140.
        let c = &self.config;
        let wire_bytes = bytes.len() as u32 + IP_UDP_OVERHEAD_BYTES;
        let (dir, records) = (self.dir, self.records);
        if records {
            events.push(Event::new(now, EventKind::LinkSent { dir, uid, bytes: bytes.len() as u32 }));
        }
        let drop = |events: &mut Vec<Event>, reason| {
            if records {
                events.push(Event::new(now, EventKind::LinkDropped { dir, uid, reason }));
            }
        };

        if wire_bytes > c.mtu_bytes {
            return drop(events, DropReason::Mtu);
        }
        if let Some(trace) = &self.replay {
            if let Some(i) = trace.pick(dir, now, self.last_send.1) {
                match trace.outcome(dir, i) {
                    Outcome::Dropped(reason) => drop(events, reason),
                    Outcome::InFlight => {}
                    Outcome::Delivered(first_us, more) => {
                        // Copies in delivery order, the packet's own bytes in the last.
                        let mut delays = std::iter::once(first_us).chain(more.iter().map(|(_, d)| *d)).peekable();
                        let mut bytes = Some(bytes);
                        while let Some(delay_us) = delays.next() {
                            let last = delays.peek().is_none();
                            let copy = if last { bytes.take() } else { bytes.clone() }.unwrap_or_default();
                            self.queue.push(
                                now.plus_micros(u64::from(delay_us)),
                                InFlight { uid, sent_at: now, bytes: copy },
                            );
                            if !last && records {
                                events.push(Event::new(now, EventKind::LinkDuplicated { dir, uid }));
                            }
                        }
                    }
                }
                return;
            }
        }
        if let Some(delay_us) = self.plain_delay_us {
            // Only random loss decides (as below).
            if c.loss_percent > 0.0 && d.loss() < c.loss_percent {
                return drop(events, DropReason::Random);
            }
            return self.queue.push(ready.plus_micros(delay_us), InFlight { uid, sent_at: now, bytes });
        }

        // Serialisation through the bandwidth cap, with a bounded backlog.
        let mut depart = ready;
        if c.bandwidth_kbps > 0.0 {
            let start = self.busy_until.max(ready);
            let backlog_us = start.0 - ready.0;
            let backlog_bytes = backlog_us as f64 * c.bandwidth_kbps / 8000.0;
            if backlog_bytes + wire_bytes as f64 > c.queue_bytes as f64 {
                return drop(events, DropReason::QueueFull);
            }
            let tx_us = (wire_bytes as f64 * 8000.0 / c.bandwidth_kbps).round() as u64;
            self.busy_until = start.plus_micros(tx_us);
            depart = self.busy_until;
        }

        if c.burst.p_percent > 0.0 && d.burst_loss() < c.burst.loss_in_bad_percent && self.burst.is_bad_at(now) {
            return drop(events, DropReason::Burst);
        }
        // A draw is in [0, 100): below a percentage of 0 or less (or NaN) it never is.
        if c.loss_percent > 0.0 && d.loss() < c.loss_percent {
            return drop(events, DropReason::Random);
        }

        // On a FIFO link the delay is the path's at the departure, and a duplicate travels right
        // behind its original; otherwise each copy has its own jitter draw.
        let base_us = c.latency_ms.max(0.0) * 1000.0;
        let reordered = c.reorder_percent > 0.0 && d.reorder() < c.reorder_percent;
        let hold_us = if reordered { c.reorder_delay_ms.max(0.0) * 1000.0 } else { 0.0 };
        let dup = c.duplicate_percent > 0.0 && d.duplicate() < c.duplicate_percent;
        let (at, dup_at) = if c.jitter_reorders {
            let delay = |copy| (base_us + self.jitter_us(d, copy)).max(0.0);
            let at = depart.plus_micros(round_u64(delay(0) + hold_us));
            // The duplicate's arrival is drawn only for a duplicate.
            (at, if dup { depart.plus_micros(round_u64(delay(1))) } else { at })
        } else {
            let at = fifo_arrival(self.fifo_key, c, depart);
            (at.plus_micros(round_u64(hold_us)), at)
        };

        let copy = if dup { Some(bytes.clone()) } else { None };
        self.queue.push(at, InFlight { uid, sent_at: now, bytes });
        if let Some(copy) = copy {
            if records {
                events.push(Event::new(now, EventKind::LinkDuplicated { dir, uid }));
            }
            self.queue.push(dup_at, InFlight { uid, sent_at: now, bytes: copy });
        }
    }

    /// When the next packet is due, if any.
    pub fn next_delivery(&self) -> Option<SimTime> {
        self.queue.next_due()
    }

    /// When the next packet is due, `SimTime(u64::MAX)` when none is (a packet may be due then
    /// too: [`Self::pop_due`] finds out). For a loop over instants that takes the earliest of
    /// several: no `Option` to unwrap (0.2 M instructions per 120 s sweep run, callgrind).
    #[inline]
    pub fn next_delivery_or_never(&self) -> SimTime {
        self.queue.next_due_or_never()
    }

    /// Takes the next packet due at or before `now`, emitting `LinkDelivered`.
    #[inline]
    pub fn pop_due(&mut self, now: SimTime, events: &mut Vec<Event>) -> Option<(u64, Vec<u8>)> {
        self.latest = self.latest.max(now);
        let (at, p) = self.queue.pop_due(now)?;
        if self.records {
            let delay_us = at.saturating_since(p.sent_at).0.min(u32::MAX as u64) as u32;
            events.push(Event::new(at, EventKind::LinkDelivered { dir: self.dir, uid: p.uid, delay_us }));
        }
        Some((p.uid, p.bytes))
    }
}

/// Stream names under a direction's key: each stateful decision draws from its own stream.
const BURST_STREAM: u64 = 0x0062_7572_7374; // "burst"
const FIFO_STREAM: u64 = 0x6669_666F; // "fifo"

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::config::BurstLoss;

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

    /// Each send's fate by send time: (drop reason, delays of the copies delivered).
    fn full_fates(mut link: Link, times_us: &[u64]) -> std::collections::BTreeMap<u64, (Option<DropReason>, Vec<u32>)> {
        let mut ev = Vec::new();
        for (i, t) in times_us.iter().enumerate() {
            link.send(SimTime(*t), i as u64, vec![0; 40], &mut ev);
        }
        while link.pop_due(SimTime(u64::MAX), &mut ev).is_some() {}
        let mut out: std::collections::BTreeMap<u64, (Option<DropReason>, Vec<u32>)> = Default::default();
        for e in &ev {
            match e.kind {
                EventKind::LinkDropped { uid, reason, .. } => {
                    out.entry(times_us[uid as usize]).or_default().0 = Some(reason)
                }
                EventKind::LinkDelivered { uid, delay_us, .. } => {
                    out.entry(times_us[uid as usize]).or_default().1.push(delay_us)
                }
                _ => {}
            }
        }
        out
    }

    #[test]
    fn a_plain_link_meets_the_fates_the_whole_pipeline_gives() {
        // A reorder chance too small to ever hold a packet sends every packet through the whole
        // pipeline; without it the link takes its plain path. The fates must not tell them apart.
        let times: Vec<u64> = (0..5_000u64).map(|i| i * 1_000_000 / 60 + i % 7).collect();
        for (latency_ms, jitter_reorders) in
            [(37.0, true), (12.3456, true), (0.0, true), (50.0004, false), (-3.0, true)]
        {
            let plain = LinkConfig { latency_ms, jitter_reorders, loss_percent: 20.0, ..LinkConfig::default() };
            let general = LinkConfig { reorder_percent: 1e-300, ..plain };
            assert!(plain_delay_us(&plain, 0).is_some() && plain_delay_us(&general, 0).is_none());
            let a = full_fates(Link::new(Dir::AtoB, plain, 5), &times);
            assert_eq!(a, full_fates(Link::new(Dir::AtoB, general, 5), &times), "latency {latency_ms} ms");
            assert!(a.values().filter(|f| f.0 == Some(DropReason::Random)).count() > 500);
        }
    }

    #[test]
    fn bursts_jitter_duplicates_and_fifo_delay_are_one_trace_whoever_sends() {
        for jitter_reorders in [true, false] {
            let cfg = LinkConfig {
                loss_percent: 3.0,
                burst: BurstLoss { p_percent: 2.0, r_percent: 10.0, loss_in_bad_percent: 90.0 },
                jitter_ms: 10.0,
                jitter_reorders,
                duplicate_percent: 5.0,
                reorder_percent: 5.0,
                ..LinkConfig::default()
            };
            // One sender every 16.667 ms, the other at a third of those instants plus its own.
            let every: Vec<u64> = (0..6_000u64).map(|i| i * 1_000_000 / 60).collect();
            let some: Vec<u64> = every.iter().enumerate().filter(|(i, _)| i % 3 == 0).map(|(_, t)| *t).collect();
            let mut mixed: Vec<u64> = some.iter().flat_map(|t| [*t, *t + 5_123]).collect();
            mixed.sort_unstable();
            let a = full_fates(Link::new(Dir::AtoB, cfg, 21), &every);
            let b = full_fates(Link::new(Dir::AtoB, cfg, 21), &mixed);
            let mut bursts = 0;
            for t in &some {
                assert_eq!(a[t], b[t], "FIFO {}: the send at {t} us", !jitter_reorders);
                bursts += usize::from(a[t].0 == Some(DropReason::Burst));
            }
            assert!(bursts > 50, "bursts among the compared sends: {bursts}");
        }
    }
}

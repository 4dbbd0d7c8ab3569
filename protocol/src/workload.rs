//! A seeded, game-like message workload shared by every message strategy.
//!
//! Each side runs its own generator: unreliable state snapshots at a fixed rate and size, reliable
//! events as a Poisson process with a size distribution, and bursts on demand. Message ids are
//! per side and sequential across both kinds, and every payload is a pure function of
//! `(side, id, size)`: its first 8 bytes hold the id and the rest a pattern derived from it, so a
//! receiver can tell which message arrived and whether its content is intact
//! ([`check_payload`]) without any shared state.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

use crate::event::{round_u64, Side, SimTime};

/// Smallest message: the 8-byte id.
pub const MIN_MESSAGE_BYTES: u32 = 8;

/// How unreliable state snapshots are treated when their packet is reported lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotMode {
    /// Sent once; losses are simply lost.
    #[default]
    Unreliable,
    /// On loss, resend only the newest version of the state (nothing when a newer one is out).
    Newest,
    /// On loss, resend that snapshot, like any reliable message.
    Reliable,
}

/// How reliable-event sizes are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeDistribution {
    /// Uniform in `[min, max]`.
    #[default]
    Uniform,
    /// Exponential with mean `(min + max) / 2`, clamped to `[min, max]` (many small, few large).
    Exponential,
}

/// Which endpoints generate traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Senders {
    #[default]
    Both,
    AOnly,
    BOnly,
}

impl Senders {
    pub fn includes(self, side: Side) -> bool {
        matches!((self, side), (Senders::Both, _) | (Senders::AOnly, Side::A) | (Senders::BOnly, Side::B))
    }
}

/// Workload settings (dotted names `workload.*`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Unreliable state snapshots per second (0 = none).
    pub snapshot_rate_hz: f64,
    pub snapshot_bytes: u32,
    /// Reliable events per second on average (0 = none).
    pub reliable_rate_hz: f64,
    pub reliable_min_bytes: u32,
    pub reliable_max_bytes: u32,
    pub reliable_size_distribution: SizeDistribution,
    pub senders: Senders,
    /// Reliable messages queued in one go by a burst.
    pub burst_messages: u32,
    /// Size in KiB of the chunks side A sends back to back for the `chunks` and `fragments`
    /// strategies (0 = none; capped at the chunk config's maximum).
    pub chunk_kib: u32,
    /// What the delivery-notification strategies (`dnm`, `rellikt`) do when a packet carrying a
    /// snapshot is lost: nothing, resend only the newest state, or resend every snapshot.
    pub snapshot_mode: SnapshotMode,
    /// Actors the reliable messages belong to (at least 1); see [`Workload::actor_of`]. UE4 sends
    /// each actor's messages on its own channel, ordered only within it; the other strategies
    /// carry them on their one stream as before.
    pub actors: u32,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        Self {
            snapshot_rate_hz: 20.0,
            snapshot_bytes: 64,
            reliable_rate_hz: 10.0,
            reliable_min_bytes: 8,
            reliable_max_bytes: 64,
            reliable_size_distribution: SizeDistribution::Uniform,
            senders: Senders::Both,
            burst_messages: 64,
            chunk_kib: 0,
            snapshot_mode: SnapshotMode::Unreliable,
            actors: 1,
        }
    }
}

/// One message the application wants sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRequest {
    pub id: u64,
    pub reliable: bool,
    pub payload: Vec<u8>,
}

/// The deterministic content of message `id` from `side`, `bytes` long (at least 8).
pub fn make_payload(side: Side, id: u64, bytes: u32) -> Vec<u8> {
    let mut out = Vec::new();
    make_payload_into(side, id, bytes, &mut out);
    out
}

/// [`make_payload`] into `out` (its old content replaced, its allocation kept): an endpoint that
/// hands back the buffers of acked messages ([`Workload::poll_reusing`]) allocates none per
/// message.
pub fn make_payload_into(side: Side, id: u64, bytes: u32, out: &mut Vec<u8>) {
    let n = bytes.max(MIN_MESSAGE_BYTES) as usize;
    // Sized once and written in place: an `extend_from_slice` per word checked the capacity
    // each time (0.3 M instructions per 120 s sweep run, callgrind). The old content is kept
    // until overwritten, so a reused buffer is not zero-filled first (a `memset` per message).
    out.truncate(n);
    out.resize(n, 0);
    let (head, tail) = out.split_at_mut(MIN_MESSAGE_BYTES as usize);
    head.copy_from_slice(&id.to_le_bytes());
    let mut gen = PayloadTail::new(side, id);
    let mut words = tail.chunks_exact_mut(8);
    for w in &mut words {
        w.copy_from_slice(&gen.word().to_le_bytes());
    }
    let rest = words.into_remainder();
    rest.copy_from_slice(&gen.word().to_le_bytes()[..rest.len()]);
}

/// Checks a received payload sent by `sender`: returns its id if the content is intact.
///
/// Compares against the content as it is generated, without building a copy: every received
/// message is checked, so this runs as often as payloads are made.
pub fn check_payload(sender: Side, payload: &[u8]) -> Option<u64> {
    if payload.len() < MIN_MESSAGE_BYTES as usize {
        return None;
    }
    let (head, tail) = payload.split_at(MIN_MESSAGE_BYTES as usize);
    let id = u64::from_le_bytes(head.try_into().ok()?);
    // Eight bytes at a time, the differences gathered without a branch per byte: this runs for
    // every message delivered.
    let mut gen = PayloadTail::new(sender, id);
    let mut words = tail.chunks_exact(8);
    let mut diff = 0u64;
    for w in &mut words {
        let mut got = [0u8; 8];
        got.copy_from_slice(w);
        diff |= u64::from_le_bytes(got) ^ gen.word();
    }
    let rest = words.remainder();
    let last = gen.word().to_le_bytes();
    (diff == 0 && rest == &last[..rest.len()]).then_some(id)
}

/// The bytes of a payload after its 8-byte id: xorshift64*, eight bytes per step (a step per
/// byte was a sixth of a sweep's instructions), fully determined by (side, id). Only the content
/// check reads them; every figure depends on payload sizes alone.
struct PayloadTail {
    x: u64,
}

impl PayloadTail {
    fn new(side: Side, id: u64) -> Self {
        Self { x: id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (side as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03) }
    }

    /// The next eight bytes, the first in the lowest (as `u64::from_le_bytes` reads them).
    #[inline]
    fn word(&mut self) -> u64 {
        let x = &mut self.x;
        *x ^= *x >> 12;
        *x ^= *x << 25;
        *x ^= *x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Generates one side's messages on virtual time.
#[derive(Debug, Clone)]
pub struct Workload {
    side: Side,
    config: WorkloadConfig,
    rng: ChaCha8Rng,
    next_id: u64,
    next_snapshot: SimTime,
    next_reliable: Option<SimTime>,
    pending_bursts: u32,
    /// Key of the actor assignment, from the seed and the side.
    actor_key: u64,
    /// Until when a poll changes nothing and makes no message: no burst queued, the settings
    /// unchanged, both rates valid (so nothing is reset) and no message due before it (ZERO
    /// when unknown). A poll before it returns at once: two polls in three (one per send tick)
    /// fall between messages, and the checks they made were 0.55 M instructions per 120 s sweep
    /// run (callgrind).
    quiet_until: SimTime,
}

impl Workload {
    pub fn new(side: Side, config: WorkloadConfig, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(0x3000 + side as u64);
        let actor_key = mix64(seed ^ (0xA570_0000 + side as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Self {
            side,
            config,
            rng,
            next_id: 0,
            next_snapshot: SimTime::ZERO,
            next_reliable: None,
            pending_bursts: 0,
            actor_key,
            quiet_until: SimTime::ZERO,
        }
    }

    /// The actor (`0..actors`) reliable message `id` belongs to: uniform, and a pure function of
    /// the seed, the side and the id. Why not a draw from the workload's generator: then the
    /// message times, sizes and ids stay exactly the same whatever `actors` is, so runs with 1
    /// and with 16 actors differ only in how UE4 spreads the messages over channels, and
    /// strategies that ignore actors see byte-identical traffic.
    pub fn actor_of(&self, id: u64) -> u32 {
        let n = self.config.actors.max(1) as u64;
        if n == 1 {
            return 0;
        }
        ((mix64(self.actor_key ^ id) as u128 * n as u128) >> 64) as u32
    }

    pub fn config(&self) -> &WorkloadConfig {
        &self.config
    }

    pub fn set_config(&mut self, config: WorkloadConfig) {
        self.config = config;
        self.quiet_until = SimTime::ZERO;
    }

    /// Queues a burst of `burst_messages` reliable messages at the next poll.
    pub fn burst(&mut self) {
        self.pending_bursts += 1;
        self.quiet_until = SimTime::ZERO;
    }

    /// Ids handed out so far.
    pub fn messages_generated(&self) -> u64 {
        self.next_id
    }

    fn reliable_size(&mut self) -> u32 {
        let c = &self.config;
        let lo = c.reliable_min_bytes.max(MIN_MESSAGE_BYTES);
        let hi = c.reliable_max_bytes.max(lo);
        match c.reliable_size_distribution {
            SizeDistribution::Uniform => self.rng.random_range(lo..=hi),
            SizeDistribution::Exponential => {
                let mean = (lo as f64 + hi as f64) / 2.0;
                let e: f64 = Exp::new(1.0 / mean).map(|d| d.sample(&mut self.rng)).unwrap_or(mean);
                (e.round() as u32).clamp(lo, hi)
            }
        }
    }

    fn take(&mut self, reliable: bool, bytes: u32, out: &mut Vec<MessageRequest>, spare: &mut Vec<Vec<u8>>) {
        let id = self.next_id;
        self.next_id += 1;
        let mut payload = spare.pop().unwrap_or_default();
        make_payload_into(self.side, id, bytes, &mut payload);
        out.push(MessageRequest { id, reliable, payload });
    }

    /// Appends every message due at or before `now`, in time order.
    pub fn poll(&mut self, now: SimTime, out: &mut Vec<MessageRequest>) {
        self.poll_reusing(now, out, &mut Vec::new());
    }

    /// [`Self::poll`] writing payloads into buffers taken from `spare` (the same messages, the
    /// same bytes): an endpoint that keeps the buffers of acked and delivered messages there
    /// allocates none per message.
    #[inline]
    pub fn poll_reusing(&mut self, now: SimTime, out: &mut Vec<MessageRequest>, spare: &mut Vec<Vec<u8>>) {
        // Most polls (one per send tick) fall between messages: they return here, inlined into
        // the caller (0.17 M instructions per 120 s sweep run less than a call, callgrind).
        if now >= self.quiet_until {
            self.poll_due(now, out, spare);
        }
    }

    /// [`Self::poll_reusing`] once something may be due.
    fn poll_due(&mut self, now: SimTime, out: &mut Vec<MessageRequest>, spare: &mut Vec<Vec<u8>>) {
        let active = self.config.senders.includes(self.side);
        for _ in 0..std::mem::take(&mut self.pending_bursts) {
            for _ in 0..self.config.burst_messages {
                let size = self.reliable_size();
                self.take(true, size, out, spare);
            }
        }
        if !active {
            self.next_reliable = None;
            return;
        }
        let c = self.config;
        let rate = c.reliable_rate_hz;
        if rate > 0.0 && rate.is_finite() && self.next_reliable.is_none() {
            self.next_reliable = Some(now.plus_micros(self.exp_gap_us(rate)));
        } else if rate.is_nan() || rate <= 0.0 {
            self.next_reliable = None;
        }
        loop {
            let snap = (c.snapshot_rate_hz > 0.0 && c.snapshot_rate_hz.is_finite() && self.next_snapshot <= now)
                .then_some(self.next_snapshot);
            let rel = self.next_reliable.filter(|t| *t <= now);
            match (snap, rel) {
                (None, None) => break,
                (Some(s), r) if r.is_none_or(|r| s <= r) => {
                    self.take(false, c.snapshot_bytes, out, spare);
                    self.next_snapshot = s.plus_micros(round_u64(1e6 / c.snapshot_rate_hz).max(1));
                }
                (_, Some(r)) => {
                    let size = self.reliable_size();
                    self.take(true, size, out, spare);
                    self.next_reliable = Some(r.plus_micros(self.exp_gap_us(rate)));
                }
                _ => break,
            }
        }
        if c.snapshot_rate_hz.is_nan() || c.snapshot_rate_hz <= 0.0 {
            self.next_snapshot = now;
        }
        let valid = |hz: f64| hz > 0.0 && hz.is_finite();
        self.quiet_until = match self.next_reliable {
            Some(r) if valid(c.snapshot_rate_hz) && valid(rate) => self.next_snapshot.min(r),
            _ => SimTime::ZERO,
        };
    }

    fn exp_gap_us(&mut self, rate_hz: f64) -> u64 {
        let e: f64 = Exp::new(rate_hz).map(|d| d.sample(&mut self.rng)).unwrap_or(1.0 / rate_hz);
        round_u64(e * 1e6).max(1)
    }
}

/// splitmix64's finalizer: a well-mixed 64-bit hash.
fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_identify_themselves_and_detect_corruption() {
        let p = make_payload(Side::A, 77, 40);
        assert_eq!(check_payload(Side::A, &p), Some(77));
        assert_eq!(check_payload(Side::B, &p), None);
        let mut bad = p.clone();
        bad[20] ^= 1;
        assert_eq!(check_payload(Side::A, &bad), None);
    }

    #[test]
    fn a_payload_is_its_id_then_the_generators_words_at_any_length() {
        for len in [8, 9, 63, 64, 65, 72, 200, 1000] {
            let mut gen = PayloadTail::new(Side::A, 99);
            let mut expect = 99u64.to_le_bytes().to_vec();
            while expect.len() < len as usize {
                expect.extend_from_slice(&gen.word().to_le_bytes());
            }
            expect.truncate(len as usize);
            let mut reused = vec![7u8; 300];
            make_payload_into(Side::A, 99, len, &mut reused);
            assert_eq!(reused, expect, "{len} bytes");
            assert_eq!(check_payload(Side::A, &reused), Some(99), "{len} bytes");
        }
    }

    #[test]
    fn a_changed_byte_anywhere_in_a_payload_is_detected() {
        for len in [8, 9, 15, 16, 17, 45, 64] {
            let p = make_payload(Side::B, 1234, len);
            assert_eq!(check_payload(Side::B, &p), Some(1234));
            for i in 8..p.len() {
                let mut bad = p.clone();
                bad[i] ^= 0x80;
                assert_eq!(check_payload(Side::B, &bad), None, "byte {i} of {len}");
            }
        }
    }

    #[test]
    fn rates_are_met_on_average_and_ids_are_sequential() {
        let cfg = WorkloadConfig { snapshot_rate_hz: 20.0, reliable_rate_hz: 50.0, ..Default::default() };
        let mut w = Workload::new(Side::A, cfg, 9);
        let mut out = Vec::new();
        for ms in (0..=100_000).step_by(16) {
            w.poll(SimTime(ms * 1000), &mut out);
        }
        let snaps = out.iter().filter(|m| !m.reliable).count();
        let rel = out.iter().filter(|m| m.reliable).count();
        assert!((1995..=2005).contains(&snaps), "{snaps} snapshots in 100 s");
        assert!((4700..=5300).contains(&rel), "{rel} reliable in 100 s");
        assert!(out.iter().enumerate().all(|(i, m)| m.id == i as u64));
    }

    #[test]
    fn polls_that_return_early_change_nothing_whatever_the_settings_do() {
        // The same polls with and without the early return, through settings switched off and
        // on between messages, senders toggled and bursts.
        let base = WorkloadConfig { reliable_rate_hz: 30.0, ..Default::default() };
        let (mut quick, mut full) = (Workload::new(Side::B, base, 4), Workload::new(Side::B, base, 4));
        let (mut out_quick, mut out_full) = (Vec::new(), Vec::new());
        let (mut quick_polls, mut polls) = (0, 0);
        for ms in (0..=30_000u64).step_by(7) {
            let change = match ms % 2_000 {
                301 => Some(WorkloadConfig { reliable_rate_hz: 0.0, ..base }),
                700 => Some(WorkloadConfig { snapshot_rate_hz: 0.0, ..base }),
                1_001 => Some(WorkloadConfig { senders: Senders::AOnly, ..base }),
                1_302 => Some(base),
                _ => None,
            };
            for w in [&mut quick, &mut full] {
                if let Some(c) = change {
                    w.set_config(c);
                }
                if ms % 4_999 == 0 {
                    w.burst();
                }
            }
            let now = SimTime(ms * 1000);
            quick_polls += usize::from(now < quick.quiet_until);
            polls += 1;
            full.quiet_until = SimTime::ZERO;
            quick.poll(now, &mut out_quick);
            full.poll(now, &mut out_full);
            assert_eq!((quick.next_snapshot, quick.next_reliable), (full.next_snapshot, full.next_reliable), "{ms} ms");
        }
        assert_eq!(out_quick, out_full);
        assert!(quick_polls * 2 > polls, "{quick_polls} of {polls} polls returned early");
    }

    #[test]
    fn actors_spread_evenly_and_leave_the_messages_unchanged() {
        let one = WorkloadConfig { reliable_rate_hz: 100.0, ..Default::default() };
        let many = WorkloadConfig { actors: 16, ..one };
        let (mut w1, mut w16) = (Workload::new(Side::A, one, 5), Workload::new(Side::A, many, 5));
        let (mut o1, mut o16) = (Vec::new(), Vec::new());
        for ms in (0..=100_000).step_by(16) {
            w1.poll(SimTime(ms * 1000), &mut o1);
            w16.poll(SimTime(ms * 1000), &mut o16);
        }
        assert_eq!(o1, o16, "the actor count must not move any message");
        assert!(o1.iter().all(|m| w1.actor_of(m.id) == 0));
        let mut per_actor = [0u32; 16];
        for m in o16.iter().filter(|m| m.reliable) {
            per_actor[w16.actor_of(m.id) as usize] += 1;
        }
        let n = o16.iter().filter(|m| m.reliable).count() as u32;
        assert!(per_actor.iter().all(|c| c * 16 > n * 8 / 10 && c * 16 < n * 12 / 10), "{per_actor:?}");
        let other_side = Workload::new(Side::B, many, 5);
        assert!((0..100).any(|id| other_side.actor_of(id) != w16.actor_of(id)));
    }
}

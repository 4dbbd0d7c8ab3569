//! The hybrid [`ResendPolicy`]: which reliable messages ride in each of Glenn's packets, from what
//! the endpoint measured (see the module doc of [`super`]).

use crate::event::{Event, EventKind, SendKind, SimTime};
use crate::peer::LiveSettings;
use crate::reliability::ack::Acked;
use crate::reliability::channel::{Pick, ReliableChannel};
use crate::strategies::glenn::{GlennConfig, PacketContext, ResendPolicy};
use crate::wire::header::PacketHeader;
use crate::wire::sequence::SequenceBuffer;

use super::copies::{defer_resend, plan, plan_resend, CopyInputs, CopyPlan};
use super::estimate::{LossModel, RateMeter, RttVar, SizeSample, COPY_GAPS_MS};
use super::sent::SentLog;
use super::timer::TimerFactor;
use super::HybridConfig;

/// What the policy keeps per unacked message.
#[derive(Debug, Clone, Copy)]
struct MessageState {
    /// The latest packet that carried it: only that packet's loss sends it again.
    last_carrier: u16,
    /// Its latest copy was read as lost: it goes in the next packet.
    nakked: bool,
    /// Blind copies planned for this round (its first send, or its latest resend), at least
    /// `gap_ms` apart, and sent so far.
    planned: u32,
    gap_ms: f64,
    copies: u32,
    /// The chance that a message came to this round: every carrier of every earlier round lost
    /// (1 on its first send), as estimated when each round began.
    reach: f64,
    /// When this round began: its first send, or its latest resend.
    round_start: SimTime,
    /// This round's copies were put off to the next round.
    deferred: bool,
}

impl Default for MessageState {
    fn default() -> Self {
        Self {
            last_carrier: 0,
            nakked: false,
            planned: 0,
            gap_ms: 0.0,
            copies: 0,
            reach: 1.0,
            round_start: SimTime::ZERO,
            deferred: false,
        }
    }
}

/// Counters since creation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HybridCounters {
    /// Packets carrying reliable messages read as lost from the peer's acks.
    pub naks: u64,
    /// Of those, acked after all (they were late: the reorder window grew).
    pub late_naks: u64,
    /// Ticks that sent no packet (nothing to carry, no ack owed).
    pub quiet_ticks: u64,
    /// Blind copies sent.
    pub copies: u64,
    /// Packets whose messages went again on the timer and were acked after all (the resends
    /// were spurious), and that proved lost (they were needed).
    pub spurious_timer_packets: u64,
    pub needed_timer_packets: u64,
}

/// What the policy currently believes about its path (for displays and tests).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridEstimates {
    pub srtt_ms: f64,
    pub rttvar_ms: f64,
    /// The resend timeout in force.
    pub timeout_ms: f64,
    /// Its multiple of the RTT variation ([`super::timer`]).
    pub timer_factor: f64,
    /// Share of its packets lost, as read from the peer's acks.
    pub loss: f64,
    /// Chance that the first packet at least `COPY_GAPS_MS[k]` after a lost one is lost too.
    pub loss_after_loss: [f64; COPY_GAPS_MS.len()],
    pub reorder_window_ms: f64,
    /// Reliable messages sent per second.
    pub message_rate_hz: f64,
    /// Copies planned for the next new message.
    pub plan: CopyPlan,
}

/// The hybrid [`ResendPolicy`] (see the module doc of [`super`]).
#[derive(Debug, Clone)]
pub struct HybridPolicy {
    config: HybridConfig,
    sent: SentLog,
    /// A packet with reliable messages arrived since our last packet.
    ack_owed: bool,
    messages: SequenceBuffer<MessageState>,
    rtt: RttVar,
    timer: TimerFactor,
    /// Losses reach the tail share, as of the last tick ([`Self::losses_reach_tail`]).
    losses_in_tail: bool,
    loss: LossModel,
    rate: RateMeter,
    sizes: SizeSample,
    /// The last tick and the smoothed time between ticks.
    last_tick: Option<SimTime>,
    tick_ms: f64,
    plan: CopyPlan,
    /// The messages resent in the packet being sent (kept to reuse its allocation).
    resent: Vec<u16>,
    counters: HybridCounters,
}

/// Weight of a new interval in the smoothed tick interval.
const TICK_GAIN: f64 = 0.125;

impl HybridPolicy {
    /// A policy for a channel holding up to `send_queue_size` unacked messages.
    pub fn new(config: HybridConfig, send_queue_size: u32) -> Self {
        let size = (send_queue_size as usize).clamp(1, 32768).next_power_of_two().min(32768);
        Self {
            config,
            sent: SentLog::default(),
            ack_owed: false,
            messages: SequenceBuffer::new(size),
            rtt: RttVar::default(),
            timer: TimerFactor::default(),
            losses_in_tail: false,
            loss: LossModel::default(),
            rate: RateMeter::default(),
            sizes: SizeSample::default(),
            last_tick: None,
            tick_ms: 0.0,
            plan: CopyPlan::NONE,
            resent: Vec::new(),
            counters: HybridCounters::default(),
        }
    }

    pub fn config(&self) -> &HybridConfig {
        &self.config
    }

    pub fn counters(&self) -> HybridCounters {
        let (spurious, needed) = self.timer.outcomes();
        HybridCounters { spurious_timer_packets: spurious, needed_timer_packets: needed, ..self.counters }
    }

    /// The smoothed RTT the policy works with (`initial_rtt_ms` before any sample).
    pub fn rtt_ms(&self) -> f64 {
        self.rtt.srtt_ms(self.config.initial_rtt_ms)
    }

    /// The timer's multiple of the RTT variation in force: `rttvar_factor` before the first RTT
    /// sample, `tight_rttvar_factor` while losses reach the tail share, else between the two as
    /// the timer's resends proved needed or spurious ([`super::timer`]).
    pub fn timer_factor(&self) -> f64 {
        let c = &self.config;
        self.timer.factor(self.rtt.has_sample(), self.losses_in_tail, c.tight_rttvar_factor, c.rttvar_factor)
    }

    /// Whether lost messages and those queued behind them until a Nak resends them are more than
    /// the tail share: `loss x (1 + message rate x Nak time) > tail share`, the copies' measure
    /// ([`super::copies`]). Then how soon a lost message goes again is the p99, and the timer
    /// runs tight whatever its spurious resends cost; below it the losses are outside the p99 and
    /// only the bytes of spurious resends count.
    fn losses_reach_tail(&self, now: SimTime) -> bool {
        let nak_s = (self.rtt_ms() + self.sent.reorder_window_ms() + self.tick_ms) / 1000.0;
        let waiting = self.loss.loss() * (1.0 + self.rate.rate_hz(now) * nak_s);
        waiting > self.config.tail_share_percent / 100.0
    }

    /// How long a message waits unacked after its last send before it goes again:
    /// `rtt_factor x srtt + k x rttvar` (k: [`Self::timer_factor`]), at least one tick more than
    /// the RTT (the peer acks at its next tick).
    pub fn timeout_ms(&self) -> f64 {
        let c = &self.config;
        let srtt = self.rtt_ms();
        let var = self.rtt.rttvar_ms(c.initial_rtt_ms);
        let spread = (self.timer_factor() * var).max(self.tick_ms);
        let ms = c.rtt_factor.max(0.0) * srtt + spread;
        if ms.is_finite() {
            ms
        } else {
            0.0
        }
    }

    pub fn estimates(&self, now: SimTime) -> HybridEstimates {
        HybridEstimates {
            srtt_ms: self.rtt_ms(),
            rttvar_ms: self.rtt.rttvar_ms(self.config.initial_rtt_ms),
            timeout_ms: self.timeout_ms(),
            timer_factor: self.timer_factor(),
            loss: self.loss.loss(),
            loss_after_loss: std::array::from_fn(|k| self.loss.loss_after_loss(k)),
            reorder_window_ms: self.sent.reorder_window_ms(),
            message_rate_hz: self.rate.rate_hz(now),
            plan: self.plan,
        }
    }

    /// How long after its last carrier a lost message goes again: when the ack of the next
    /// packet shows the gap (an RTT, the reorder window and a tick on), or the timeout if sooner.
    pub fn recovery_ms(&self) -> f64 {
        let nak_ms = self.rtt_ms() + self.sent.reorder_window_ms() + self.tick_ms;
        nak_ms.min(self.timeout_ms())
    }

    /// The longest a round of copies may take: the recovery target, and never past the time the
    /// first carrier's ack could come (`redundancy_age_rtts`).
    fn copy_window_ms(&self) -> f64 {
        let c = &self.config;
        (c.recovery_target_ms + self.tick_ms).min(self.rtt_ms() * c.redundancy_age_rtts)
    }

    /// The copy plan for messages sent first now (see [`super::copies`]).
    fn copy_plan(&self, now: SimTime) -> CopyPlan {
        if self.config.redundancy_budget_bytes == 0 {
            return CopyPlan::NONE;
        }
        plan(&self.copy_inputs(now))
    }

    /// What the copy plans are made from, as measured now.
    fn copy_inputs(&self, now: SimTime) -> CopyInputs {
        let c = &self.config;
        CopyInputs {
            loss: self.loss.loss(),
            loss_after_loss: std::array::from_fn(|k| self.loss.loss_after_loss(k)),
            message_rate_hz: self.rate.rate_hz(now),
            recovery_ms: self.recovery_ms(),
            target_ms: c.recovery_target_ms,
            window_ms: self.copy_window_ms(),
            tail_share: c.tail_share_percent / 100.0,
            max_copies: c.redundant_copies,
            tick_ms: self.tick_ms,
        }
    }

    /// The chance that a round planned `copies` copies `gap_ms` apart fails:
    /// its carrier lost, and each copy after it.
    fn round_fails(&self, copies: u32, gap_ms: f64) -> f64 {
        let q = super::copies::q_at(&std::array::from_fn(|k| self.loss.loss_after_loss(k)), gap_ms);
        self.loss.loss() * q.powi(copies.min(64) as i32)
    }

    /// Starts a new round for each message resent in this packet: how likely it was to come this
    /// far, and the copies of its resend.
    fn plan_resends(&mut self, now: SimTime, ids: &[u16]) {
        if ids.is_empty() {
            return;
        }
        let inputs = self.copy_inputs(now);
        let no_copies = self.config.redundancy_budget_bytes == 0;
        for &id in ids {
            let Some(&state) = self.messages.get(id) else { continue };
            let reach = state.reach * self.round_fails(state.copies, state.gap_ms);
            let mut plan = if no_copies { CopyPlan::NONE } else { plan_resend(&inputs, reach) };
            // Its copies put off to the next round where rounds are quick (see `defer_resend`).
            let deferred = plan.copies > 0 && defer_resend(&inputs, reach, state.deferred);
            if deferred {
                plan = CopyPlan::NONE;
            }
            if let Some(s) = self.messages.get_mut(id) {
                (s.reach, s.planned, s.gap_ms, s.copies, s.round_start, s.deferred) =
                    (reach, plan.copies, plan.gap_ms, 0, now, deferred);
            }
        }
    }

    /// Plans the copies of the messages in `picks` sent for the first time.
    fn plan_firsts(&mut self, now: SimTime, channel: &ReliableChannel, picks: &[Pick]) {
        let firsts = picks.iter().filter(|p| p.kind == SendKind::First).count();
        if firsts == 0 {
            return;
        }
        self.rate.add(now, firsts);
        self.plan = self.copy_plan(now);
        let larger_than = self.sizes.above_share(self.plan.fewer_share);
        for p in picks.iter().filter(|p| p.kind == SendKind::First) {
            let bits = channel.view(p.id).map_or(0, |v| v.bits);
            self.sizes.add(bits);
            let fewer = larger_than.is_some_and(|t| bits > t) as u32;
            // A first send starts the message's state afresh (an id reused after a wrap).
            if let Some(s) = self.messages.insert(p.id) {
                s.planned = self.plan.copies.saturating_sub(fewer);
                s.gap_ms = self.plan.gap_ms;
                s.reach = 1.0;
                s.deferred = false;
            }
        }
    }

    fn micros(ms: f64) -> u64 {
        if ms.is_finite() {
            (ms.max(0.0) * 1000.0).round() as u64
        } else {
            u64::MAX
        }
    }

    /// Blind copies of unacked messages that still have planned copies due (their last carrier
    /// at least the plan's gap ago, their round younger than the copy window), oldest first,
    /// within their own budget and the packet's, appended to `picks`.
    fn add_copies(
        &mut self,
        now: SimTime,
        channel: &mut ReliableChannel,
        budget_bits: &mut usize,
        max_messages: usize,
        picks: &mut Vec<Pick>,
    ) {
        let c = self.config;
        if c.redundant_copies == 0 || c.redundancy_budget_bytes == 0 {
            return;
        }
        let max_age_us = Self::micros(self.copy_window_ms());
        let mut own = (c.redundancy_budget_bytes as usize * 8).min(*budget_bits);
        let span = channel.unacked().min(channel.sizes().receive_queue_size);
        let oldest = channel.oldest_unacked();
        let before = picks.len();
        for i in 0..span {
            if picks.len() >= max_messages || own < ReliableChannel::packet_bits(0) {
                break;
            }
            let id = oldest.wrapping_add(i as u16);
            let Some(state) = self.messages.get(id) else { continue };
            if state.copies >= state.planned {
                continue;
            }
            let (round_start, gap_us) = (state.round_start, Self::micros(state.gap_ms));
            let Some(last) = channel.view(id).and_then(|v| v.last_sent) else { continue };
            if last == now || now.saturating_since(last).0 < gap_us || now.saturating_since(round_start).0 > max_age_us
            {
                continue;
            }
            let left = own;
            if let Some(p) = channel.pick(id, now, SendKind::Redundant, &mut own) {
                *budget_bits -= left - own;
                picks.push(p);
            }
        }
        if picks.len() > before {
            // Written in id order, so consecutive ids keep their one-bit encoding.
            picks.sort_by_key(|p| p.id.wrapping_sub(oldest));
        }
    }

    /// Marks for resending the messages whose latest copy rode in lost packet `seq`.
    fn resend_carried(&mut self, seq: u16, channel: &ReliableChannel) {
        let Some((sent_at, ids)) = channel.packet_messages(seq) else { return };
        for &id in ids {
            // A message sent first after this packet only shares a wrapped id with one in it.
            let same = channel.view(id).is_some_and(|v| v.first_sent.is_some_and(|t| t <= sent_at));
            if let Some(state) = self.messages.get_mut(id).filter(|s| same && s.last_carrier == seq) {
                state.nakked = true;
            }
        }
    }
}

impl ResendPolicy for HybridPolicy {
    fn select(
        &mut self,
        cx: &PacketContext<'_>,
        channel: &mut ReliableChannel,
        budget_bits: &mut usize,
        max_messages: usize,
        picks: &mut Vec<Pick>,
    ) {
        let now = cx.now;
        if let Some(last) = self.last_tick {
            let dt_ms = now.saturating_since(last).as_millis_f64();
            self.tick_ms = if self.tick_ms > 0.0 { self.tick_ms + (dt_ms - self.tick_ms) * TICK_GAIN } else { dt_ms };
        }
        self.last_tick = Some(now);
        self.losses_in_tail = self.losses_reach_tail(now);
        self.counters.quiet_ticks += 1; // taken back in `on_sent` when a packet goes
        if channel.unacked() == 0 {
            return;
        }
        let timeout_us = Self::micros(self.timeout_ms()).max(1);
        let messages = &self.messages;
        channel.select_with(budget_bits, max_messages, picks, now, |id, m| match m.last_sent {
            None => Some(SendKind::First),
            Some(_) if messages.get(id).is_some_and(|s| s.nakked) => Some(SendKind::NakResend),
            Some(t) if now.saturating_since(t).0 >= timeout_us => Some(SendKind::DelayResend),
            Some(_) => None,
        });
        self.plan_firsts(now, channel, picks);
    }

    fn send_packet(&self, messages: usize) -> bool {
        messages > 0 || self.ack_owed || self.config.every_tick
    }

    fn fill(
        &mut self,
        cx: &PacketContext<'_>,
        channel: &mut ReliableChannel,
        budget_bits: &mut usize,
        max_messages: usize,
        picks: &mut Vec<Pick>,
    ) {
        self.add_copies(cx.now, channel, budget_bits, max_messages, picks);
    }

    fn on_sent(&mut self, now: SimTime, sequence: u16, picks: &[Pick]) {
        self.ack_owed = false;
        self.counters.quiet_ticks = self.counters.quiet_ticks.saturating_sub(1);
        self.sent.push(sequence, now, !picks.is_empty());
        let mut resends = std::mem::take(&mut self.resent);
        resends.clear();
        for p in picks {
            let state = match self.messages.get_mut(p.id) {
                Some(s) => {
                    if p.kind == SendKind::DelayResend {
                        // Its last carrier's fate tells whether this resend was needed.
                        self.sent.mark_timer_resent(s.last_carrier);
                    }
                    s
                }
                None => match self.messages.insert(p.id) {
                    Some(s) => s,
                    None => continue,
                },
            };
            state.last_carrier = sequence;
            state.nakked = false;
            match p.kind {
                SendKind::Redundant => {
                    state.copies += 1;
                    self.counters.copies += 1;
                }
                SendKind::First => {
                    state.copies = 0;
                    state.round_start = now;
                }
                // A resend starts a new round with copies of its own (see `plan_resend`).
                SendKind::NakResend | SendKind::DelayResend | SendKind::TimeoutResend => {
                    resends.push(p.id);
                }
            }
        }
        self.plan_resends(now, &resends);
        self.resent = resends;
    }

    fn on_received(
        &mut self,
        cx: &PacketContext<'_>,
        header: &PacketHeader,
        acked: &[Acked],
        carried_reliable: bool,
        channel: &ReliableChannel,
        events: &mut Vec<Event>,
    ) {
        self.ack_owed |= carried_reliable;
        for a in acked {
            let Some(before) = self.sent.ack(a.sequence) else { continue };
            match before.fate {
                // The peer acks a packet with reliable messages at its next tick, and a packet
                // named as the header's `ack` was the newest it had: a prompt sample. One acked
                // only by a bit waited for a later header (its own was lost): not a round trip.
                super::sent::Fate::Pending if before.reliable && a.sequence == header.ack => self.rtt.sample(a.rtt_ms),
                super::sent::Fate::Lost { .. } if before.reliable => self.counters.late_naks += 1,
                _ => {}
            }
        }
        let (side, now, reports) = (cx.side, cx.now, cx.reports_beliefs);
        let mut lost = Vec::new();
        self.sent.read_acks(header, self.config.reorder_tolerance_packets, |p| {
            if p.reliable {
                lost.push(p.seq);
            }
        });
        for seq in lost {
            self.counters.naks += 1;
            if reports {
                events.push(Event::new(now, EventKind::PacketNakked { side, seq: seq as u32 }));
            }
            self.resend_carried(seq, channel);
        }
        let loss = &mut self.loss;
        self.sent.settle(|at, lost| loss.observe(at, lost));
        let (spurious, needed) = self.sent.take_timer_outcomes();
        if spurious + needed > 0 {
            let c = &self.config;
            self.losses_in_tail = self.losses_reach_tail(now);
            self.timer.learn(spurious, needed, self.losses_in_tail, c.tight_rttvar_factor, c.rttvar_factor);
        }
    }

    fn reconfigure(&mut self, live: &LiveSettings) -> Option<GlennConfig> {
        let (glenn, hybrid) = live.own::<(GlennConfig, HybridConfig)>()?;
        self.config = *hybrid;
        Some(*glenn)
    }
}

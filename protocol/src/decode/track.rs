//! What one endpoint believes about the packets and reliable items it sent, rebuilt from the
//! traffic alone: one [`DirTrack`] per client and direction, fed by the decoder.
//!
//! The sender's view is built at the instants the sender itself sees things: a packet counts as
//! sent when the relay sees it leave (on loopback, when the sender sent it), and an ack counts
//! when the datagram carrying it is *delivered* to the sender (the relay tells the decoder each
//! datagram's fate). So the RTT of a packet is the time from its send to the delivery of the
//! first ack naming it, exactly the sample the endpoint takes, and an ack the relay dropped never
//! reaches the sender's beliefs. The loss an endpoint would estimate follows its protocol's own
//! rule ([`LossRule`]); its smoothed RTT its protocol's smoothing ([`RttRule`]).
//!
//! Memory is bounded per direction: the newest [`MAX_SENT`] packets and [`MAX_ITEMS`] items,
//! each item's newest [`MAX_COPIES`] copies; older ones are forgotten (and judged).

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::{Deserialize, Serialize};

pub use super::dir_stats::DirStats;

use crate::event::SimTime;
use crate::reliability::stats::StatsConfig;

/// Packets remembered per direction for acks and loss judging.
pub const MAX_SENT: usize = 2048;
/// Reliable items remembered per direction for resend and ack matching.
pub const MAX_ITEMS: usize = 4096;
/// Copies remembered per item (a resend past this many is still counted).
pub const MAX_COPIES: usize = 32;

/// How an endpoint smooths its RTT samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum RttRule {
    /// `srtt += (sample - srtt) * factor`, the first sample taken as is (reliable.io and
    /// ackscope's packet formats).
    Ewma { factor: f64 },
    /// ENet's integer rule on whole milliseconds (`enet_protocol_handle_acknowledge`): the first
    /// sample as is (at least 1), then `srtt += (sample - srtt) / 8` truncated toward the old
    /// value, so it moves only when a sample is 8 ms or more away.
    EighthMs,
    /// KCP's (`ikcp_update_ack`): the first sample as is, then `srtt = (7 srtt + sample) / 8`
    /// floored (at least 1): unlike ENet's it steps down by a millisecond whenever a sample is
    /// below it, and so settles up to 7 ms under the samples' mean.
    KcpMs,
}

/// How an endpoint estimates loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LossRule {
    /// Packets never acked within 2 x RTT + 100 ms of their send, over those judged
    /// (reliable.io-style acks: ackscope's own estimate).
    Unacked,
    /// Resends over reliable sends, both counted per item copy (ENet's `packetsLost /
    /// packetsSent`, KCP's retransmitted over sent segments).
    Resent,
}

/// How a sender turns the acks that reach it into each packet's one outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckRule {
    /// Packets wait for their outcome in send order, and an ack resolves every older packet
    /// still waiting as failed (dnm's delivery notification manager, MGP 7.5.2): an ack of a
    /// packet a newer ack already passed is ignored.
    pub in_order: bool,
    /// A packet not acked this long after its send has failed, and a later ack of it is ignored
    /// (dnm's `timeout_ms`, rellikt's `loss_timeout_ms`). The endpoint judges it at its next
    /// update, the decoder at the instant the ack arrives: an ack landing between the two is
    /// the one place they can differ.
    pub timeout_us: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
struct SentPacket {
    time: SimTime,
    acked: bool,
    /// Reported lost first (UE4's Nak): each packet gets one outcome, as the endpoints give it.
    nakked: bool,
    judged: bool,
}

#[derive(Debug, Clone, Copy)]
struct Copy {
    time: SimTime,
    stamp: Option<u32>,
    /// The datagram number (PacketSent seq) that carried it.
    carrier: u32,
}

#[derive(Debug, Clone, Default)]
struct ItemTrack {
    copies_sent: u32,
    copies: VecDeque<Copy>,
    delivered_min: Option<u32>,
    acked: bool,
    msg: Option<u64>,
}

/// A new item copy, as the tracker numbered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentItem {
    pub copy: u32,
    pub resend: bool,
}

/// An item ack as the sender takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AckedItem {
    pub rtt_ms: Option<f64>,
    /// First ack of this item.
    pub first: bool,
    pub msg: Option<u64>,
    /// The datagram number of the copy it answers.
    pub carrier: Option<u32>,
}

/// One direction's sender view (see the module doc).
#[derive(Debug, Clone)]
pub struct DirTrack {
    seq_bits: u32,
    rtt_rule: RttRule,
    loss_rule: LossRule,
    ack_rule: AckRule,
    /// Under an in-order [`AckRule`], every packet below this extended sequence has its outcome.
    resolved_below: Option<u64>,
    /// Packets the in-order rule failed since [`Self::take_skipped`] (not those timed out: the
    /// endpoint reports those at its timeout, not at the ack).
    skipped: Vec<u32>,
    newest: Option<u64>,
    sent: BTreeMap<u64, SentPacket>,
    /// Packets up to this extended sequence are judged.
    judged_to: Option<u64>,
    datagrams: u32,
    items: HashMap<u64, ItemTrack>,
    item_order: VecDeque<u64>,
    rtt_sum_ms: f64,
    last_time: Option<SimTime>,
    pub stats: DirStats,
}

/// Extended sequences start here, so unwrapping backwards never goes below zero.
const EXT_BASE: u64 = 1 << 40;

impl DirTrack {
    pub fn new(seq_bits: u32, rtt_rule: RttRule, loss_rule: LossRule) -> Self {
        Self {
            seq_bits: seq_bits.clamp(1, 32),
            rtt_rule,
            loss_rule,
            ack_rule: AckRule::default(),
            resolved_below: None,
            skipped: Vec::new(),
            newest: None,
            sent: BTreeMap::new(),
            judged_to: None,
            datagrams: 0,
            items: HashMap::new(),
            item_order: VecDeque::new(),
            rtt_sum_ms: 0.0,
            last_time: None,
            stats: DirStats::default(),
        }
    }

    /// Resolves acks by `rule` from now on.
    pub fn with_ack_rule(mut self, rule: AckRule) -> Self {
        self.ack_rule = rule;
        self
    }

    /// Packets the in-order [`AckRule`] failed since the last call, oldest first (the endpoint
    /// reports each as lost at the ack that passed it).
    pub fn take_skipped(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.skipped)
    }

    /// The extended sequence nearest to the newest sent whose low bits are `seq`.
    fn unwrap(&self, seq: u32) -> u64 {
        let space = 1u64 << self.seq_bits;
        let seq = seq as u64 & (space - 1);
        let Some(newest) = self.newest else {
            return EXT_BASE + seq;
        };
        let diff = (seq + space - newest % space) % space;
        if diff < space / 2 {
            newest + diff
        } else {
            newest - (space - diff)
        }
    }

    /// Notes a datagram of `bytes` sent at `time`; returns the gap since the previous one and
    /// its datagram number (1, 2, ...: what names it where the format has no sequence).
    pub fn datagram(&mut self, time: SimTime, bytes: usize) -> (Option<u64>, u32) {
        let gap = self.last_time.map(|t| time.saturating_since(t).0);
        self.last_time = Some(time);
        self.stats.datagrams += 1;
        self.stats.bytes += bytes as u64;
        self.datagrams = self.datagrams.wrapping_add(1);
        (gap, self.datagrams)
    }

    /// Notes packet `seq` sent at `time` (a repeat of one held, a fragment of it, keeps the
    /// first send time).
    pub fn packet_sent(&mut self, time: SimTime, seq: u32) {
        let ext = self.unwrap(seq);
        self.newest = Some(self.newest.map_or(ext, |n| n.max(ext)));
        self.sent.entry(ext).or_insert(SentPacket { time, acked: false, nakked: false, judged: false });
        while self.sent.len() > MAX_SENT {
            if let Some((_, p)) = self.sent.pop_first() {
                if !p.judged && self.loss_rule == LossRule::Unacked {
                    self.stats.judged += 1;
                    self.stats.judged_lost += u64::from(!p.acked);
                }
            }
        }
        self.update_loss();
    }

    /// The sender learned at `at` that packet `seq` arrived. `Some` the first time for a packet
    /// still held, with its RTT when `sample` (a format whose RTT comes from item acks takes
    /// its samples there).
    pub fn packet_acked(&mut self, at: SimTime, seq: u32, sample: bool) -> Option<Option<f64>> {
        let ext = self.unwrap(seq);
        let timeout_us = self.ack_rule.timeout_us;
        let timed_out = |p: &SentPacket| timeout_us.is_some_and(|t| at.0 >= p.time.0.saturating_add(t));
        let p = self.sent.get_mut(&ext)?;
        if p.acked || p.nakked || at < p.time {
            return None;
        }
        if timed_out(p) {
            p.nakked = true;
            self.stats.packets_nakked += 1;
            return None;
        }
        p.acked = true;
        let rtt = at.saturating_since(p.time).as_millis_f64();
        self.stats.packets_acked += 1;
        if self.ack_rule.in_order {
            let from = self.resolved_below.unwrap_or(0);
            let mask = (1u64 << self.seq_bits) - 1;
            for (&e, q) in self.sent.range_mut(from..ext) {
                if !q.acked && !q.nakked {
                    q.nakked = true;
                    self.stats.packets_nakked += 1;
                    if !timed_out(q) {
                        self.skipped.push((e & mask) as u32);
                    }
                }
            }
            self.resolved_below = Some(from.max(ext + 1));
        }
        if !sample {
            return Some(None);
        }
        self.rtt_sample(rtt);
        Some(Some(rtt))
    }

    /// The sender learned that packet `seq` was lost; true the first time, for a packet
    /// neither acked nor nakked before.
    pub fn packet_nakked(&mut self, seq: u32) -> bool {
        let ext = self.unwrap(seq);
        match self.sent.get_mut(&ext) {
            Some(p) if !p.acked && !p.nakked => {
                p.nakked = true;
                self.stats.packets_nakked += 1;
                true
            }
            _ => false,
        }
    }

    /// Judges the packets old enough at `now` (the `Unacked` rule).
    pub fn judge(&mut self, now: SimTime) {
        if self.loss_rule != LossRule::Unacked {
            return;
        }
        let rtt = (self.stats.rtt_samples > 0).then_some(self.stats.rtt_ms);
        let window = StatsConfig::default().judge_window_us(rtt);
        let from = self.judged_to.map_or(0, |j| j + 1);
        let mut last = None;
        for (&ext, p) in self.sent.range_mut(from..) {
            if p.time.0.saturating_add(window) > now.0 {
                break;
            }
            p.judged = true;
            self.stats.judged += 1;
            self.stats.judged_lost += u64::from(!p.acked);
            last = Some(ext);
        }
        if last.is_some() {
            self.judged_to = last;
            self.update_loss();
        }
    }

    /// Notes a copy of item `key` sent at `time` in datagram number `carrier`.
    pub fn item_sent(
        &mut self,
        time: SimTime,
        key: u64,
        stamp: Option<u32>,
        msg: Option<u64>,
        carrier: u32,
    ) -> SentItem {
        if !self.items.contains_key(&key) {
            self.item_order.push_back(key);
            while self.item_order.len() > MAX_ITEMS {
                if let Some(old) = self.item_order.pop_front() {
                    self.items.remove(&old);
                }
            }
        }
        let item = self.items.entry(key).or_default();
        let copy = item.copies_sent;
        item.copies_sent += 1;
        if msg.is_some() {
            item.msg = msg;
        }
        item.copies.push_back(Copy { time, stamp, carrier });
        if item.copies.len() > MAX_COPIES {
            item.copies.pop_front();
        }
        let resend = copy > 0;
        self.stats.items_sent += 1;
        if resend {
            self.stats.resends += 1;
            if item.delivered_min.is_some() {
                self.stats.spurious_resends += 1;
            }
        }
        self.update_loss();
        SentItem { copy, resend }
    }

    /// The relay delivered copy `copy` of item `key`: resends after the earliest delivered copy
    /// were spurious.
    pub fn item_delivered(&mut self, key: u64, copy: u32) {
        let Some(item) = self.items.get_mut(&key) else { return };
        let after = |from: u32| u64::from(item.copies_sent.saturating_sub(from + 1));
        match item.delivered_min {
            None => {
                self.stats.spurious_resends += after(copy);
                item.delivered_min = Some(copy);
            }
            Some(m) if copy < m => {
                self.stats.spurious_resends += u64::from(m - copy);
                item.delivered_min = Some(copy);
            }
            Some(_) => {}
        }
    }

    /// The sender took an ack of item `key` at `at`, answering the copy stamped `echo` (or,
    /// without a stamp, its latest copy sent by then).
    pub fn item_acked(&mut self, at: SimTime, key: u64, echo: Option<u32>) -> Option<AckedItem> {
        let item = self.items.get_mut(&key)?;
        let copy = match echo {
            Some(e) => item.copies.iter().rev().find(|c| c.stamp == Some(e) && c.time <= at),
            None => item.copies.iter().rev().find(|c| c.time <= at),
        }
        .copied();
        let first = !item.acked;
        item.acked = true;
        let msg = item.msg;
        if first {
            self.stats.items_acked += 1;
        }
        // Without an echoed stamp only the first ack names a send the sender can time: later
        // ones repeat a cumulative state (a slice ack bitfield).
        let rtt_ms = copy.filter(|_| echo.is_some() || first).map(|c| at.saturating_since(c.time).as_millis_f64());
        if let Some(r) = rtt_ms {
            self.rtt_sample(r);
        }
        Some(AckedItem { rtt_ms, first, msg, carrier: copy.map(|c| c.carrier) })
    }

    /// Every item below `una` is acknowledged (KCP's cumulative ack); returns those newly acked
    /// (key, msg, the datagram number of their latest copy), in first-send order.
    pub fn items_acked_below(&mut self, una: u64) -> Vec<(u64, Option<u64>, u32)> {
        let mut out = Vec::new();
        for key in &self.item_order {
            if *key >= una {
                continue;
            }
            if let Some(item) = self.items.get_mut(key) {
                if !item.acked {
                    item.acked = true;
                    self.stats.items_acked += 1;
                    out.push((*key, item.msg, item.copies.back().map_or(0, |c| c.carrier)));
                }
            }
        }
        out
    }

    fn rtt_sample(&mut self, rtt_ms: f64) {
        let s = &mut self.stats;
        s.rtt_samples += 1;
        self.rtt_sum_ms += rtt_ms;
        s.rtt_mean_ms = self.rtt_sum_ms / s.rtt_samples as f64;
        s.rtt_last_ms = rtt_ms;
        if s.rtt_samples == 1 {
            s.rtt_min_ms = rtt_ms;
            s.rtt_max_ms = rtt_ms;
        } else {
            s.rtt_min_ms = s.rtt_min_ms.min(rtt_ms);
            s.rtt_max_ms = s.rtt_max_ms.max(rtt_ms);
        }
        s.rtt_ms = match self.rtt_rule {
            _ if s.rtt_samples == 1 => match self.rtt_rule {
                RttRule::Ewma { .. } => rtt_ms,
                RttRule::EighthMs => rtt_ms.floor().max(1.0),
                RttRule::KcpMs => rtt_ms.floor(),
            },
            RttRule::KcpMs => ((7 * s.rtt_ms as u64 + rtt_ms.floor() as u64) / 8).max(1) as f64,
            RttRule::Ewma { factor } => s.rtt_ms + (rtt_ms - s.rtt_ms) * factor,
            RttRule::EighthMs => {
                let (old, new) = (s.rtt_ms as u64, rtt_ms.floor().max(1.0) as u64);
                if new >= old {
                    (old + (new - old) / 8) as f64
                } else {
                    (old - (old - new) / 8) as f64
                }
            }
        };
    }

    fn update_loss(&mut self) {
        let s = &mut self.stats;
        s.loss_percent = match self.loss_rule {
            LossRule::Unacked if s.judged > 0 => s.judged_lost as f64 * 100.0 / s.judged as f64,
            LossRule::Resent if s.items_sent > 0 => s.resends as f64 * 100.0 / s.items_sent as f64,
            _ => 0.0,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_unwrap_across_the_wrap_and_acks_take_one_sample() {
        let mut t = DirTrack::new(14, RttRule::Ewma { factor: 0.1 }, LossRule::Unacked);
        for (i, seq) in [16382u32, 16383, 0, 1].into_iter().enumerate() {
            t.packet_sent(SimTime(i as u64 * 1000), seq);
        }
        assert_eq!(t.packet_acked(SimTime(50_000), 0, true), Some(Some(48.0)));
        assert_eq!(t.packet_acked(SimTime(60_000), 0, true), None, "acked once");
        assert_eq!(t.packet_acked(SimTime(50_000), 16382, true), Some(Some(50.0)));
        assert!(t.packet_nakked(16383));
        assert!(!t.packet_nakked(16383), "nakked once");
        assert!(!t.packet_nakked(0));
        assert_eq!(t.packet_acked(SimTime(70_000), 16383, true), None, "one outcome per packet");
        t.judge(SimTime(10_000_000));
        assert_eq!((t.stats.judged, t.stats.judged_lost), (4, 2));
        assert_eq!(t.stats.loss_percent, 50.0);
    }

    #[test]
    fn an_in_order_sender_fails_packets_an_ack_passed_and_those_timed_out() {
        let rule = AckRule { in_order: true, timeout_us: Some(1_000_000) };
        let mut t = DirTrack::new(16, RttRule::Ewma { factor: 0.1 }, LossRule::Unacked).with_ack_rule(rule);
        for seq in 0..6u32 {
            t.packet_sent(SimTime(seq as u64 * 100_000), seq);
        }
        // 2's ack passes 0 and 1 still waiting: both fail there, a later ack of 1 is ignored.
        assert_eq!(t.packet_acked(SimTime(400_000), 2, true), Some(Some(200.0)));
        assert_eq!(t.take_skipped(), vec![0, 1]);
        assert_eq!(t.packet_acked(SimTime(450_000), 1, true), None);
        assert_eq!(t.packet_acked(SimTime(500_000), 3, true), Some(Some(200.0)));
        assert!(t.take_skipped().is_empty());
        // 4 timed out (sent at 0.4 s, acked at 1.4 s): ignored, and not reported when 5's ack
        // passes it (the endpoint reported it at its timeout).
        assert_eq!(t.packet_acked(SimTime(1_400_000), 4, true), None);
        assert_eq!(t.packet_acked(SimTime(1_400_000), 5, true), Some(Some(900.0)));
        assert!(t.take_skipped().is_empty());
        assert_eq!((t.stats.packets_acked, t.stats.packets_nakked), (3, 3));
    }

    #[test]
    fn resends_after_a_delivered_copy_are_spurious_whichever_fate_comes_first() {
        let mut t = DirTrack::new(16, RttRule::EighthMs, LossRule::Resent);
        assert!(!t.item_sent(SimTime(0), 7, Some(0), None, 1).resend);
        assert!(t.item_sent(SimTime(100_000), 7, Some(100), None, 2).resend);
        t.item_delivered(7, 0);
        assert_eq!(t.stats.spurious_resends, 1);
        t.item_sent(SimTime(200_000), 7, Some(200), None, 3);
        assert_eq!((t.stats.resends, t.stats.spurious_resends), (2, 2));
        t.item_delivered(7, 2);
        assert_eq!(t.stats.spurious_resends, 2, "a later copy changes nothing");
        let a = t.item_acked(SimTime(250_000), 7, Some(100)).unwrap();
        assert_eq!((a.rtt_ms, a.first, a.carrier), (Some(150.0), true, Some(2)));
        assert!(!t.item_acked(SimTime(260_000), 7, Some(200)).unwrap().first);
        assert_eq!(t.stats.rtt_ms, (150 - (150 - 60) / 8) as f64, "ENet's integer smoothing");
        let mut k = DirTrack::new(32, RttRule::KcpMs, LossRule::Resent);
        for (i, rtt_ms) in [100u64, 90, 90, 90].into_iter().enumerate() {
            k.item_sent(SimTime(0), i as u64, None, None, 1);
            k.item_acked(SimTime(rtt_ms * 1000), i as u64, None);
        }
        // (700 + 90) / 8 = 98, then 97, then 96; ENet's rule would give 99, 98, 97.
        assert_eq!(k.stats.rtt_ms, 96.0, "KCP's floored smoothing");
        assert!((t.stats.loss_percent - 200.0 / 3.0).abs() < 1e-9);
    }
}

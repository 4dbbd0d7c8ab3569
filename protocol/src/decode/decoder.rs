//! The passive decoder: datagrams and their fates in, events, records and per-client beliefs out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::event::{ClientId, Dir, DiscardReason, Event, EventKind, SendKind, SimTime, StatsSample};
use crate::strategies::notify::endpoint::MIN_ARRIVALS_FOR_CORRECTION;

use super::choice::{DecodeChoice, FormatKind};
use super::datagram::{Datagram, Fate};
use super::format::WireFormat;
use super::probe::{ProbeResult, Prober};
use super::record::{AckView, DecodedPacket, FragmentOf, ItemAck, Parsed};
use super::track::{DirStats, DirTrack, LossRule};

/// One client's beliefs and counts: `dirs[Dir::index()]`, each the sending endpoint's view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientStats {
    pub dirs: [DirStats; 2],
    /// Datagrams of this client no decoder could read, both directions.
    pub malformed: u64,
}

struct ClientState {
    format: Option<Box<dyn WireFormat>>,
    tracks: [DirTrack; 2],
    /// Datagrams per direction (`Dir::index`) their receiver dropped unread (late, duplicate):
    /// with the link's drops, the packets whose acks never reached the other end.
    unread: [u64; 2],
    malformed: u64,
    resend_kind: SendKind,
    loss_rule: LossRule,
}

impl ClientState {
    /// Each direction's figures, the loss as its sender's endpoint estimates it: where the format's
    /// endpoints correct for acks lost on the way back ([`WireFormat::ack_redundancy`]), the same
    /// correction on the whole run's counts. The return path's loss `q` is the share of the
    /// other direction's datagrams its receiver never read (the link's drops, packets refused as
    /// late), and with each ack in `n` packets the count of unacked packets `f` says
    /// `1 - (1 - f) / (1 - q^n)`, from [`MIN_ARRIVALS_FOR_CORRECTION`] read packets on, as
    /// `strategies::notify::endpoint` does over its window. (Without it a capture of dnm at
    /// 12.6 % loss each way read 54.5 % where the endpoints said 32.1 %.)
    fn dir_stats(&self) -> [DirStats; 2] {
        let mut dirs = [self.tracks[0].stats, self.tracks[1].stats];
        let Some(n) = self.format.as_ref().and_then(|f| f.ack_redundancy()) else { return dirs };
        if self.loss_rule != LossRule::Unacked {
            return dirs;
        }
        for dir in Dir::BOTH {
            let (me, back) = (dir.index(), 1 - dir.index());
            let back_sent = dirs[back].datagrams as f64;
            let unread = (dirs[back].dropped + self.unread[back]) as f64;
            let arrivals = back_sent - unread;
            let s = &mut dirs[me];
            if back_sent <= 0.0 || arrivals < MIN_ARRIVALS_FOR_CORRECTION || s.judged == 0 {
                continue;
            }
            let q = unread / back_sent;
            let acks_arrive = 1.0 - q.powi(n.clamp(1, 64) as i32);
            if acks_arrive > 1e-6 {
                let f = s.loss_percent / 100.0;
                s.loss_percent = (1.0 - (1.0 - f) / acks_arrive).clamp(0.0, 1.0) * 100.0;
            }
        }
        dirs
    }

    fn new(kind: Option<&FormatKind>) -> Self {
        let format = kind.map(FormatKind::make);
        let (bits, rtt, loss, resend_kind) = match &format {
            Some(f) => (f.seq_bits(), f.rtt_rule(), f.loss_rule(), f.resend_kind()),
            None => (32, super::track::RttRule::EighthMs, super::track::LossRule::Resent, SendKind::TimeoutResend),
        };
        let acks = format.as_ref().map(|f| f.ack_rule()).unwrap_or_default();
        let track = || DirTrack::new(bits, rtt, loss).with_ack_rule(acks);
        Self { format, tracks: [track(), track()], unread: [0; 2], malformed: 0, resend_kind, loss_rule: loss }
    }
}

/// A datagram whose fate is not known yet: what its delivery will mean.
struct Pending {
    client: ClientId,
    dir: Dir,
    seq: u32,
    /// The packet sequence the format parsed (what its receiver admits by).
    sequence: Option<u32>,
    bytes: u32,
    items: Vec<(u64, u32)>,
    acks: Option<AckView>,
    item_acks: Vec<ItemAck>,
    cumulative: Option<u64>,
    fragment: Option<FragmentOf>,
}

/// A fragmented packet some of whose fragments were delivered: its acks (from fragment 0) count
/// once the last one is.
#[derive(Default)]
struct FragmentGroup {
    delivered: [u64; 4],
    count: u32,
    acks: Option<AckView>,
    bytes: u32,
}

/// Fragmented packets being completed at most (reliable.io's reassembly holds 64 per receiver).
const MAX_GROUPS: usize = 4096;

/// Datagrams awaiting their fate at most; older ones are forgotten (their fate changes nothing).
const MAX_PENDING: usize = 65_536;

/// Derives what each endpoint believes from the traffic between them (module doc of
/// [`crate::decode`]).
///
/// Call order: [`Self::datagram`] when the relay takes a datagram from its sender, then
/// [`Self::fate`] when it delivers or drops it (at the delivery instant, in time order); read
/// [`Self::take_events`], [`Self::take_records`] and [`Self::client_stats`] whenever. With
/// [`Self::set_assume_delivered`] every datagram counts as delivered at once (a capture without
/// fates).
pub struct Decoder {
    choice: DecodeChoice,
    picked: Option<FormatKind>,
    prober: Option<Prober>,
    probe: Option<ProbeResult>,
    clients: BTreeMap<ClientId, ClientState>,
    pending: BTreeMap<u64, Pending>,
    groups: BTreeMap<(ClientId, Dir, u32), FragmentGroup>,
    assume_delivered: bool,
    events: Vec<Event>,
    records: Vec<DecodedPacket>,
}

impl Decoder {
    pub fn new(choice: DecodeChoice) -> Self {
        let (picked, prober) = match &choice {
            DecodeChoice::Format(k) => (Some(k.clone()), None),
            DecodeChoice::None => (None, None),
            DecodeChoice::Auto => (None, Some(Prober::new(FormatKind::auto_candidates()))),
            DecodeChoice::Ackscope => (None, Some(Prober::new(FormatKind::ACKSCOPE.to_vec()))),
        };
        Self {
            choice,
            picked,
            prober,
            probe: None,
            clients: BTreeMap::new(),
            pending: BTreeMap::new(),
            groups: BTreeMap::new(),
            assume_delivered: false,
            events: Vec::new(),
            records: Vec::new(),
        }
    }

    pub fn choice(&self) -> &DecodeChoice {
        &self.choice
    }

    /// The format in use (None while probing, or when none fits or none was asked for).
    pub fn format(&self) -> Option<&FormatKind> {
        self.picked.as_ref()
    }

    /// What probing picked and why, once it decided.
    pub fn probe(&self) -> Option<&ProbeResult> {
        self.probe.as_ref()
    }

    /// Every datagram counts as delivered when it is seen (no fates will follow).
    pub fn set_assume_delivered(&mut self, assume: bool) {
        self.assume_delivered = assume;
    }

    /// Takes a datagram leaving its sender (see the type's doc).
    pub fn datagram(&mut self, d: Datagram<'_>) {
        if let Some(p) = &mut self.prober {
            p.datagram(&d);
            if self.assume_delivered {
                p.fate(d.uid, Fate::Delivered { at: d.time });
            }
            if p.ready() {
                self.decide();
            }
            return;
        }
        self.process(d);
        if self.assume_delivered {
            self.apply_fate(d.uid, Fate::Delivered { at: d.time });
        }
    }

    /// The relay delivered or dropped datagram `uid`.
    pub fn fate(&mut self, uid: u64, fate: Fate) {
        if let Some(p) = &mut self.prober {
            p.fate(uid, fate);
            return;
        }
        self.apply_fate(uid, fate);
    }

    /// Ends probing now with what was seen (at the end of a short run).
    pub fn finish_probe(&mut self) {
        if self.prober.is_some() {
            self.decide();
        }
    }

    /// Events made since the last call, in the order they happened.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// Records made since the last call, one per datagram.
    pub fn take_records(&mut self) -> Vec<DecodedPacket> {
        std::mem::take(&mut self.records)
    }

    /// Clients seen so far.
    pub fn clients(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.clients.keys().copied()
    }

    pub fn client_stats(&self, client: ClientId) -> Option<ClientStats> {
        self.clients.get(&client).map(|c| ClientStats { dirs: c.dir_stats(), malformed: c.malformed })
    }

    /// One `Stats` event per client and side with that side's decoded estimates at `now`.
    pub fn stats_events(&self, now: SimTime) -> Vec<Event> {
        let mut out = Vec::new();
        for (&client, c) in &self.clients {
            let dirs = c.dir_stats();
            for dir in Dir::BOTH {
                let s = &dirs[dir.index()];
                let stats = StatsSample {
                    rtt_ms: s.rtt_ms as f32,
                    rtt_display_ms: s.rtt_mean_ms as f32,
                    rtt_min_ms: s.rtt_min_ms as f32,
                    rtt_max_ms: s.rtt_max_ms as f32,
                    loss_percent: s.loss_percent as f32,
                    ..StatsSample::default()
                };
                out.push(Event::for_client(now, client, EventKind::Stats { side: dir.sender(), stats }));
            }
        }
        out
    }

    /// Picks the format from the probe and replays what was held back.
    fn decide(&mut self) {
        let Some(prober) = self.prober.take() else { return };
        let (result, backlog) = prober.finish();
        self.picked = result.picked.clone();
        self.probe = Some(result);
        for input in backlog {
            match input {
                super::probe::Input::Datagram { uid, time, dir, client, bytes } => {
                    self.process(Datagram { uid, time, dir, client, bytes: &bytes })
                }
                super::probe::Input::Fate { uid, fate } => self.apply_fate(uid, fate),
            }
        }
    }

    fn push(&mut self, time: SimTime, client: ClientId, kind: EventKind) {
        self.events.push(Event::for_client(time, client, kind));
    }

    fn process(&mut self, d: Datagram<'_>) {
        let picked = self.picked.clone();
        let c = self.clients.entry(d.client).or_insert_with(|| ClientState::new(picked.as_ref()));
        for t in &mut c.tracks {
            t.judge(d.time);
        }
        let track = &mut c.tracks[d.dir.index()];
        let (gap_us, number) = track.datagram(d.time, d.bytes.len());
        let side = d.dir.sender();
        let bytes = d.bytes.len() as u32;
        let mut record = DecodedPacket {
            uid: d.uid,
            time: d.time,
            client: d.client,
            dir: d.dir,
            bytes,
            gap_us,
            format: String::new(),
            summary: format!("{bytes} bytes"),
            fields: Vec::new(),
            malformed: None,
        };
        let parsed = c.format.as_mut().map(|f| (f.name(), f.parse(d.dir, d.bytes)));
        let mut pending = Pending {
            client: d.client,
            dir: d.dir,
            seq: number,
            sequence: None,
            bytes,
            items: Vec::new(),
            acks: None,
            item_acks: Vec::new(),
            cumulative: None,
            fragment: None,
        };
        let mut events = Vec::new();
        match parsed {
            None => events.push(EventKind::PacketSent { side, seq: number, bytes, uid: d.uid }),
            Some((name, Err(e))) => {
                record.format = name.to_string();
                record.malformed = Some(e.message.clone());
                record.summary = format!("{bytes} bytes, not {name}: {}", e.message);
                record.fields = e.fields;
                c.malformed += 1;
                track.stats.malformed += 1;
                events.push(EventKind::PacketSent { side, seq: number, bytes, uid: d.uid });
                events.push(EventKind::Malformed { side: d.dir.receiver(), reason: e.reason });
            }
            Some((name, Ok(p))) => {
                let Parsed { summary, fields, sequence, acks, items, item_acks, cumulative_ack, fragment } = p;
                let seq = sequence.unwrap_or(number);
                // Packets that can be acked: those with a sequence, and every datagram of a
                // format whose acks name datagrams through their items (ENet, KCP).
                if sequence.is_some() || c.loss_rule == LossRule::Resent {
                    track.packet_sent(d.time, seq);
                }
                pending.seq = seq;
                pending.sequence = sequence;
                // Messages before their packet, as every strategy logs them: the packet log
                // gathers an instant's `MessageSent`s into the `PacketSent` that follows.
                for it in items {
                    let sent = track.item_sent(d.time, it.key, it.stamp, it.msg, seq);
                    let kind = if sent.resend { c.resend_kind } else { SendKind::First };
                    events.push(EventKind::MessageSent { side, msg: it.msg.unwrap_or(it.key), seq, kind });
                    pending.items.push((it.key, sent.copy));
                }
                events.push(EventKind::PacketSent { side, seq, bytes, uid: d.uid });
                pending.acks = acks;
                pending.item_acks = item_acks;
                pending.cumulative = cumulative_ack;
                pending.fragment = fragment;
                record.format = name.to_string();
                record.summary = summary;
                record.fields = fields;
            }
        }
        for kind in events {
            self.push(d.time, d.client, kind);
        }
        self.records.push(record);
        self.pending.insert(d.uid, pending);
        while self.pending.len() > MAX_PENDING {
            self.pending.pop_first();
        }
    }

    /// A delivered fragment joins its packet; the packet's acks once every fragment is in.
    fn complete_fragment(&mut self, p: &mut Pending, f: FragmentOf) -> bool {
        let key = (p.client, p.dir, p.seq);
        let g = self.groups.entry(key).or_default();
        let (word, bit) = (f.id as usize / 64 % 4, f.id % 64);
        if g.delivered[word] & (1 << bit) == 0 {
            g.delivered[word] |= 1 << bit;
            g.count += 1;
            g.bytes += p.bytes;
        }
        if p.acks.is_some() {
            g.acks = p.acks.take();
        }
        let done = g.count >= f.count as u32;
        if done {
            if let Some(g) = self.groups.remove(&key) {
                p.acks = g.acks;
                p.bytes = g.bytes;
            }
        }
        while self.groups.len() > MAX_GROUPS {
            self.groups.pop_first();
        }
        done
    }

    fn apply_fate(&mut self, uid: u64, fate: Fate) {
        let Some(mut p) = self.pending.remove(&uid) else { return };
        if let (Fate::Delivered { .. }, Some(f)) = (fate, p.fragment) {
            if !self.complete_fragment(&mut p, f) {
                if let Some(c) = self.clients.get_mut(&p.client) {
                    c.tracks[p.dir.index()].stats.delivered += 1;
                }
                return;
            }
        }
        let Some(c) = self.clients.get_mut(&p.client) else { return };
        let at = match fate {
            Fate::Dropped => {
                c.tracks[p.dir.index()].stats.dropped += 1;
                return;
            }
            Fate::Delivered { at } => at,
        };
        let mut events = Vec::new();
        let side = p.dir.receiver();
        c.tracks[p.dir.index()].stats.delivered += 1;
        let discard = match (p.sequence, c.format.as_mut()) {
            (Some(seq), Some(f)) => f.admit(p.dir, seq, at),
            _ => None,
        };
        if let Some(reason) = discard {
            // Dropped unread by its receiver: neither its items nor its acks reach anyone.
            if reason == DiscardReason::Late {
                c.unread[p.dir.index()] += 1;
            }
            self.events.push(Event::for_client(at, p.client, EventKind::PacketDiscarded { side, seq: p.seq, reason }));
            return;
        }
        let send = &mut c.tracks[p.dir.index()];
        for &(key, copy) in &p.items {
            send.item_delivered(key, copy);
        }
        // The acks this datagram carries reach the endpoint that sent the other direction.
        events.push(EventKind::PacketReceived { side, seq: p.seq, bytes: p.bytes });
        let back = &mut c.tracks[p.dir.receiver().outgoing().index()];
        if let Some(acks) = &p.acks {
            for &seq in &acks.acked {
                let acked = back.packet_acked(at, seq, true);
                // Older packets an in-order sender gave up at this ack, reported before it.
                for seq in back.take_skipped() {
                    events.push(EventKind::PacketNakked { side, seq });
                }
                if let Some(rtt_ms) = acked {
                    events.push(EventKind::PacketAcked { side, seq });
                    if let Some(rtt_ms) = rtt_ms {
                        events.push(EventKind::RttSample { side, rtt_ms: rtt_ms as f32 });
                    }
                }
            }
            for &seq in &acks.nakked {
                if back.packet_nakked(seq) {
                    events.push(EventKind::PacketNakked { side, seq });
                }
            }
        }
        for a in &p.item_acks {
            let Some(acked) = back.item_acked(at, a.key, a.echo) else { continue };
            if let Some(carrier) = acked.carrier {
                if back.packet_acked(at, carrier, false).is_some() {
                    events.push(EventKind::PacketAcked { side, seq: carrier });
                }
            }
            if let Some(rtt_ms) = acked.rtt_ms {
                events.push(EventKind::RttSample { side, rtt_ms: rtt_ms as f32 });
            }
            if acked.first {
                let msg = acked.msg.unwrap_or(a.key);
                events.push(EventKind::MessageAcked { side, msg, seq: acked.carrier.unwrap_or(0) });
            }
        }
        if let Some(una) = p.cumulative {
            for (key, msg, carrier) in back.items_acked_below(una) {
                events.push(EventKind::MessageAcked { side, msg: msg.unwrap_or(key), seq: carrier });
            }
        }
        for kind in events {
            self.events.push(Event::for_client(at, p.client, kind));
        }
    }
}

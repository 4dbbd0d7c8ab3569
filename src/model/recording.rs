//! One lane's recording: what the lane is ([`LaneInfo`]: origin, protocol at each instant,
//! clients), the scenario it started from when it was simulated, its action log, its events,
//! and one [`Connection`] per client with the indexes the panels read, all fed from the same
//! events in one place.
//!
//! Every event names its client; run-wide events (client 0: a parameter change for every client)
//! go to every connection. With one client (every two-endpoint run) the lane's event log is that
//! connection's own, so nothing is kept twice; from the second client on the lane keeps its log
//! in arrival order beside the connections' (saving, streaming and trimming read it).
//!
//! Code written for one connection reads the first client's through `Deref` ([`Self::primary`]):
//! the views focused on a client ask for it by id ([`Self::client`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ackscope_protocol::{ClientId, Event, Scenario, SimTime, Step, RUN_WIDE};

use super::connection::Connection;
use crate::lane::{LaneInfo, Origin};
use crate::runtime::udp::Transport;
use crate::session::jsonl::Stream;
use crate::session::{Bookmark, Phase, Progress, Session};

/// Gives every recording its own identity, so view state kept beside it notices a replacement.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Events ingested between two progress reports while a loaded session is indexed.
const INDEX_STEP: usize = 16 * 1024;

/// A lane's recording and its indexes (no view state: that lives with the views).
pub struct Recording {
    id: u64,
    /// The run this recording holds (all or, after a memory-window trim, the newest part of):
    /// its own `id` at first, carried over by [`Self::keep_history_of`]. The window's mark and
    /// selection belong to it, so a trim, which makes a new recording, does not forget them.
    run: u64,
    /// What the lane is: where its events come from, what it runs when, its clients.
    pub info: LaneInfo,
    /// The scenario the run started from, for simulated and UDP lanes (`None` for a stream, a
    /// capture or a proxy: their events are all there is).
    pub scenario: Option<Scenario>,
    /// For a proxy's lane read from a file: the scenario whose link conditioned it (its changes
    /// are the lane's recorded `ParamChanged` events). Never run; the controls show its values at
    /// the cursor in replay, as they do a simulated lane's, instead of the window's own scenario.
    pub conditions: Option<Scenario>,
    /// The user's actions on this lane, each at the virtual instant it was applied.
    pub actions: Vec<Step>,
    /// How it was recorded (in-process recordings re-run exactly).
    pub transport: Transport,
    /// The session's named bookmarks (kept on the first lane, which carries the session header).
    pub bookmarks: Vec<Bookmark>,
    /// The exact bytes of its datagrams, when its source had them (UDP, proxy, capture).
    pub payloads: Option<super::payloads::SharedPayloads>,
    /// Every event in arrival order, once the lane has a second client (before, the one
    /// connection's store holds the lane's log).
    log: Option<Arc<Vec<Event>>>,
    end: SimTime,
    /// One per client, by id.
    clients: Vec<Connection>,
    /// Run-wide events so far, given to a client that appears later (its folds see the same
    /// restarts and parameter changes).
    run_wide: Vec<Event>,
}

impl std::ops::Deref for Recording {
    type Target = Connection;

    /// The first client's connection ([`Self::primary`]).
    fn deref(&self) -> &Connection {
        self.primary()
    }
}

impl Recording {
    /// An empty recording of `scenario`, simulated in-process.
    pub fn new(scenario: Scenario) -> Self {
        Self::of(LaneInfo::of_scenario(&scenario, false), Some(scenario))
    }

    /// An empty recording of a lane described by `info`.
    pub fn of(info: LaneInfo, scenario: Option<Scenario>) -> Self {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Self {
            id,
            run: id,
            info,
            scenario,
            actions: Vec::new(),
            transport: Transport::InProcess,
            bookmarks: Vec::new(),
            payloads: None,
            conditions: None,
            log: None,
            end: SimTime::ZERO,
            clients: Vec::new(),
            run_wide: Vec::new(),
        }
    }

    /// The settings in force at `upto_s` seconds: the scenario it started from with every
    /// change recorded up to then (live edits, scripted link steps, strategy changes) applied in
    /// order, as `--set` applies them; a change this build cannot apply (a restart marker, a
    /// name it does not know) is skipped. `None` for a lane with no scenario.
    pub fn scenario_at(&self, upto_s: f64) -> Option<Scenario> {
        self.settings_at(self.scenario.as_ref()?, upto_s)
    }

    /// What the controls show at `upto_s`: [`Self::scenario_at`], or for a proxy's lane read from
    /// a file, its link conditions ([`Self::conditions`]) with the recorded changes applied.
    pub fn shown_settings_at(&self, upto_s: f64) -> Option<Scenario> {
        self.settings_at(self.scenario.as_ref().or(self.conditions.as_ref())?, upto_s)
    }

    fn settings_at(&self, start: &Scenario, upto_s: f64) -> Option<Scenario> {
        let changes = &self.store.changes;
        let mut s = start.clone();
        for (_, change) in &changes[..changes.partition_point(|(t, _)| *t <= upto_s)] {
            let _ = crate::params::overrides::apply(&mut s, change);
        }
        Some(s)
    }

    /// A loaded session's recording (its first lane) with every index built; reports progress
    /// (phase [`Phase::Indexing`]) and stops early, returning `None`, when `progress` is cancelled.
    pub fn from_session(s: Session, progress: &Progress) -> Option<Self> {
        progress.start(Phase::Indexing, s.events.len() as u64);
        let header = Self::from_header(&s);
        Self::indexed(header, s.events, progress, 0)
    }

    /// Every lane of a loaded session (two for A/B), each with its indexes built; `None` when
    /// `progress` is cancelled.
    pub fn lanes_from_session(mut s: Session, progress: &Progress) -> Option<Vec<Self>> {
        progress.start(Phase::Indexing, (s.events.len() + s.ab_events.len()) as u64);
        let b = s.ab.map(|strategy| {
            let scenario = Scenario { strategy, ..s.scenario.clone() };
            let mut rec = Self::of(LaneInfo::of_scenario(&scenario, false), Some(scenario));
            rec.actions = std::mem::take(&mut s.ab_actions);
            rec.transport = s.transport;
            // The second lane's bytes, as `from_header` gives the first lane its own.
            rec.payloads = crate::model::payloads::store_of(&s.ab_payloads);
            (rec, std::mem::take(&mut s.ab_events))
        });
        let done = s.events.len();
        let first = Self::from_header(&s);
        let mut lanes = vec![Self::indexed(first, std::mem::take(&mut s.events), progress, 0)?];
        if let Some((rec, events)) = b {
            lanes.push(Self::indexed(rec, events, progress, done)?);
        }
        Some(lanes)
    }

    /// `rec` with `events` ingested, reporting progress from `done`.
    fn indexed(mut rec: Recording, events: Vec<Event>, progress: &Progress, mut done: usize) -> Option<Self> {
        let mut events = events.into_iter();
        loop {
            if progress.is_cancelled() {
                return None;
            }
            let step: Vec<Event> = events.by_ref().take(INDEX_STEP).collect();
            if step.is_empty() {
                return Some(rec);
            }
            done += step.len();
            rec.ingest(step);
            progress.advance_to(done as u64);
        }
    }

    /// Every lane of a JSON-lines stream read whole, each described by the stream's header
    /// (origin, protocol, clients) and with its indexes built; `None` when `progress` is
    /// cancelled.
    pub fn lanes_from_stream(stream: Stream, source: &str, progress: &Progress) -> Option<Vec<Self>> {
        progress.start(Phase::Indexing, stream.lanes.iter().map(Vec::len).sum::<usize>() as u64);
        let origin = Origin::EventStream { source: source.to_string(), producer: stream.header.producer.clone() };
        let mut done = 0;
        let mut out = Vec::new();
        for ((lane, events), named) in stream.header.lanes().iter().zip(stream.lanes).zip(stream.named) {
            let mut info = LaneInfo::new(origin.clone(), lane.protocol());
            for c in stream.header.clients.iter().chain(&named) {
                info.name_client(c.clone());
            }
            let n = events.len();
            out.push(Self::indexed(Self::of(info, None), events, progress, done)?);
            done += n;
        }
        Some(out)
    }

    /// An empty recording of a session's header (its first lane), for events that follow
    /// ([`crate::session::load_streaming`]).
    pub fn from_header(s: &Session) -> Self {
        let mut rec = match &s.origin {
            Some(origin) if !matches!(origin, Origin::Simulated | Origin::UdpLoopback) => {
                let mut info = LaneInfo::new(origin.clone(), s.protocol());
                for c in &s.clients {
                    info.name_client(c.clone());
                }
                let mut rec = Self::of(info, None);
                if matches!(origin, Origin::Proxy { .. }) {
                    rec.conditions = Some(s.scenario.clone());
                }
                rec
            }
            _ => {
                let mut info = LaneInfo::of_scenario(&s.scenario, s.transport == Transport::Udp);
                for c in &s.clients {
                    info.name_client(c.clone());
                }
                Self::of(info, Some(s.scenario.clone()))
            }
        };
        rec.actions = s.actions.clone();
        rec.transport = s.transport;
        rec.bookmarks = s.bookmarks.clone();
        rec.payloads = crate::model::payloads::store_of(&s.payloads);
        rec
    }

    /// Unique per recording (a restart or an opened file makes a new one).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The run this recording belongs to: [`Self::id`] unless it replaced an older part of the
    /// same run at a trim.
    pub fn run_id(&self) -> u64 {
        self.run
    }

    /// The first client's connection (an empty one while there is none): what code written for
    /// one connection reads.
    pub fn primary(&self) -> &Connection {
        self.clients.first().unwrap_or_else(|| Connection::empty())
    }

    /// Client `client`'s connection, if it has had an event.
    pub fn client(&self, client: ClientId) -> Option<&Connection> {
        self.clients.binary_search_by_key(&client, |c| c.client).ok().map(|i| &self.clients[i])
    }

    /// `client`'s connection, or the first one when it has none (a focus that does not apply).
    pub fn client_or_primary(&self, client: ClientId) -> &Connection {
        self.client(client).unwrap_or_else(|| self.primary())
    }

    /// Every client's connection, by id.
    pub fn clients(&self) -> &[Connection] {
        &self.clients
    }

    /// Every event of the lane, every client's, in arrival order.
    pub fn events(&self) -> &[Event] {
        match &self.log {
            Some(log) => log,
            None if self.clients.is_empty() => &self.run_wide,
            None => self.primary().store.events(),
        }
    }

    /// The lane's event log, shared: holding it costs nothing until the lane appends again.
    pub fn shared_events(&self) -> Arc<Vec<Event>> {
        match &self.log {
            Some(log) => Arc::clone(log),
            None if self.clients.is_empty() => Arc::new(self.run_wide.clone()),
            None => self.primary().store.shared_events(),
        }
    }

    /// Events of the lane in all.
    pub fn len(&self) -> usize {
        self.events().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes the recording holds: the lane's log, every client's connection and the
    /// run-wide events (see [`super::heap`]); what a live run's memory cap counts. The datagram
    /// bytes ([`Self::payloads`]) are capped apart.
    pub fn heap_bytes(&self) -> usize {
        use super::heap;
        let log = self.log.as_deref().map_or(0, super::store::log_bytes);
        let clients: usize = self.clients.iter().map(Connection::heap_bytes).sum();
        log + heap::vec(&self.clients) + clients + heap::vec(&self.run_wide) + heap::vec(&self.actions)
    }

    /// Time of the latest event of any client.
    pub fn end_time(&self) -> SimTime {
        self.end
    }

    /// Appends events (in time order) to their connections: the ledger, every index and the
    /// store of each.
    pub fn ingest(&mut self, events: Vec<Event>) {
        self.ingest_iter(events);
    }

    /// [`Self::ingest`] of events taken from an iterator (an opening file's block, a slice of
    /// it per frame).
    pub fn ingest_iter(&mut self, events: impl IntoIterator<Item = Event>) {
        for e in events {
            self.info.observe(e.time, &e.kind);
            self.end = self.end.max(e.time);
            if e.client == RUN_WIDE {
                self.run_wide.push(e.clone());
                if let Some(log) = &mut self.log {
                    Arc::make_mut(log).push(e.clone());
                }
                if let Some((last, rest)) = self.clients.split_last_mut() {
                    for c in rest {
                        c.ingest(e.clone());
                    }
                    last.ingest(e);
                }
                continue;
            }
            let i = self.connection_index(e.client);
            if let Some(log) = &mut self.log {
                Arc::make_mut(log).push(e.clone());
            }
            self.clients[i].ingest(e);
        }
    }

    /// The position of `client`'s connection, made (and handed the run-wide events so far) on
    /// its first event. The second client starts the lane's own log.
    fn connection_index(&mut self, client: ClientId) -> usize {
        // Events come in runs of one client: the last one looked up is checked first.
        if self.clients.len() == 1 && self.clients[0].client == client {
            return 0;
        }
        match self.clients.binary_search_by_key(&client, |c| c.client) {
            Ok(i) => i,
            Err(i) => {
                if self.clients.len() == 1 && self.log.is_none() {
                    self.log = Some(self.clients[0].store.shared_events());
                }
                let mut c = Connection::new(client);
                for e in &self.run_wide {
                    c.ingest(e.clone());
                }
                self.clients.insert(i, c);
                i
            }
        }
    }

    /// Takes what must outlive a trim from `old`, the recording this one replaces with its
    /// newest events: each client's anomaly index (the whole run's), the lane's description
    /// (its protocol changes and named clients), its run-wide events, its bookmarks and the run it
    /// belongs to ([`Self::run_id`]).
    pub fn keep_history_of(&mut self, old: &mut Recording) {
        for c in &mut old.clients {
            let i = self.connection_index(c.client);
            self.clients[i].anomalies = std::mem::take(&mut c.anomalies);
        }
        self.info = old.info.clone();
        self.run = old.run;
        self.run_wide = std::mem::take(&mut old.run_wide);
        self.payloads = old.payloads.take();
        // Bookmarks set during a run outlive the memory window: a save copies them into the
        // stream file's copy.
        self.bookmarks = std::mem::take(&mut old.bookmarks);
    }

    /// The session header of this recording (scenario, action log, duration, origin and
    /// clients), without events.
    pub fn header(&self) -> Session {
        let mut s = Session::scenario_only(self.scenario.clone().unwrap_or_default());
        s.actions = self.actions.clone();
        s.transport = self.transport;
        s.duration_us = self.end_time().0;
        if !matches!(self.info.origin, Origin::Simulated | Origin::UdpLoopback) {
            s.origin = Some(self.info.origin.clone());
            s.protocol = Some(self.info.first().name.clone());
            s.wire = Some(self.info.first().wire.name().to_string());
        }
        s.clients = self.info.named_clients().cloned().collect();
        s.bookmarks = self.bookmarks.clone();
        s.payloads = self.payloads.as_deref().map(crate::model::payloads::saved).unwrap_or_default();
        s
    }

    /// The recording as a session file.
    pub fn to_session(&self) -> Session {
        Session { events: self.events().to_vec(), ..self.header() }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use ackscope_protocol::{Dir, DropReason, EventKind, PacketFate, Side, SimTime, Simulation, Strategy};

    use super::*;
    use crate::model::index::Fate;

    /// What the link and the sender had done with one send by some instant, replayed from the log.
    #[derive(Debug, Default, Clone, Copy)]
    struct Replayed {
        sent_at: Option<SimTime>,
        dropped: Option<DropReason>,
        delivered: Option<(SimTime, u32)>,
        duplicated: bool,
        acked_at: Option<SimTime>,
        nakked_at: Option<SimTime>,
    }

    /// Every send's fate from the events at or before `cursor` alone.
    fn replay(events: &[Event], cursor: SimTime) -> HashMap<u64, Replayed> {
        let mut out: HashMap<u64, Replayed> = HashMap::new();
        let mut latest: HashMap<(Side, u32), u64> = HashMap::new();
        for e in events.iter().take_while(|e| e.time <= cursor) {
            let t = e.time;
            match e.kind {
                EventKind::PacketSent { side, seq, uid, .. } => {
                    out.entry(uid).or_default().sent_at = Some(t);
                    latest.insert((side, seq), uid);
                }
                EventKind::LinkDropped { uid, reason, .. } => out.entry(uid).or_default().dropped = Some(reason),
                EventKind::LinkDuplicated { uid, .. } => out.entry(uid).or_default().duplicated = true,
                EventKind::LinkDelivered { uid, delay_us, .. } => {
                    out.entry(uid).or_default().delivered.get_or_insert((t, delay_us));
                }
                EventKind::PacketAcked { side, seq } => {
                    out.entry(latest[&(side, seq)]).or_default().acked_at.get_or_insert(t);
                }
                EventKind::PacketNakked { side, seq } => {
                    out.entry(latest[&(side, seq)]).or_default().nakked_at.get_or_insert(t);
                }
                _ => {}
            }
        }
        out
    }

    #[test]
    fn packet_log_and_message_timeline_agree_with_the_ledger_on_every_fate() {
        for strategy in [Strategy::Glenn, Strategy::Ue4] {
            let mut s = Scenario { seed: 5, strategy, ..Scenario::default() };
            for d in Dir::BOTH {
                let l = s.link.get_mut(d);
                l.loss_percent = 15.0;
                l.duplicate_percent = 5.0;
                l.jitter_ms = 25.0;
                l.reorder_percent = 10.0;
                l.reorder_delay_ms = 60.0;
            }
            let mut sim = Simulation::new(s.clone());
            sim.run_for_secs(20.0);
            let events: Vec<Event> = sim.drain_events().collect();
            let mut rec = Recording::new(s);
            for batch in events.chunks(1009) {
                rec.ingest(batch.to_vec());
            }
            let (ledger, packets, messages) = (&rec.ledger, &rec.packets, &rec.messages);
            assert_eq!(packets.unmatched, 0, "{strategy:?} (seed 5)");
            let end = rec.store.end_time();
            let (mut rows_checked, mut sends_checked, mut dropped_sends) = (0, 0, 0);
            for cursor in [SimTime(end.0 / 4), SimTime(end.0 / 2 - 1), end] {
                let truth = replay(&events, cursor);
                let want_fate = |uid: u64| {
                    let r = truth.get(&uid).copied().unwrap_or_default();
                    match (r.sent_at, r.dropped, r.delivered) {
                        (None, _, _) => PacketFate::Unknown,
                        (_, Some(reason), _) => PacketFate::Dropped(reason),
                        (_, None, Some((at, delay_us))) => {
                            PacketFate::Delivered { at, delay_us, duplicated: r.duplicated }
                        }
                        _ => PacketFate::InFlight,
                    }
                };
                // The packet log's rows up to the cursor, as shown.
                for i in 0..packets.sent_by(cursor) {
                    let row = packets.row(i, ledger).unwrap();
                    let r = truth[&row.uid];
                    let want = match want_fate(row.uid) {
                        PacketFate::Dropped(reason) => Fate::Dropped(reason),
                        PacketFate::Delivered { at, duplicated, .. } => {
                            Fate::Delivered { delay_us: at.saturating_since(row.time).0, duplicated }
                        }
                        _ => Fate::InFlight,
                    };
                    let at = format!("uid {} at {cursor:?} ({strategy:?}, seed 5)", row.uid);
                    assert_eq!(row.fate_at(cursor), want, "{at}");
                    assert_eq!(row.acked_by(cursor), r.acked_at, "{at}");
                    assert_eq!(row.nakked_by(cursor), r.nakked_at, "{at}");
                    rows_checked += 1;
                }
                // The timeline's sends: each tied to its packet's row, its fate the ledger's.
                for m in messages.messages() {
                    for send in m.sends_by(cursor) {
                        let Some(uid) = send.uid else { continue };
                        let row = packets.row_by_uid(uid, ledger).unwrap();
                        assert_eq!((row.dir, row.seq), (m.side.outgoing(), send.seq), "uid {uid}");
                        let fate = ledger.fate_at(uid, cursor);
                        assert_eq!(fate, want_fate(uid), "uid {uid} at {cursor:?} ({strategy:?}, seed 5)");
                        dropped_sends += matches!(fate, PacketFate::Dropped(_)) as usize;
                        sends_checked += 1;
                    }
                }
            }
            assert!(rows_checked > 1000 && sends_checked > 1000, "{rows_checked} rows, {sends_checked} sends");
            assert!(dropped_sends > 50, "{strategy:?}: {dropped_sends} sends in dropped packets");
            let dups = (0..packets.len()).filter(|&i| packets.row(i, ledger).unwrap().duplicated).count();
            assert!(dups > 20, "{strategy:?}: {dups} duplicated packets");
        }
    }
}

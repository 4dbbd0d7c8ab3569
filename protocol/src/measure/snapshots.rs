//! Snapshot traffic and receiver staleness, measured from events alone.
//!
//! Staleness ([`snapshot_summary`]) is measured from events only, so it works on recorded
//! sessions: the age of the newest snapshot a receiver holds is `t - (time that snapshot was
//! queued by the sender)`, sampled on a fixed grid of [`STALENESS_SAMPLE_MS`] from the moment the
//! receiver first holds one to the last event. A clock grid rather than sampling at deliveries
//! gives the long gaps after losses their true weight (sampling at deliveries only ever looks
//! right after something arrived), and a fine grid rather than the 100 ms stats interval avoids
//! aliasing with the snapshot period. Both sides share the simulation's virtual clock, which is
//! what makes `t - queued` meaningful across endpoints.
//! Snapshots are the messages whose `MessageQueued` has `reliable: false` in every mode, also
//! `reliable` mode where they are in fact resent: `reliable` in that event is the workload's
//! class of the message, so generic reliable-message metrics compare like with like.

use serde::{Deserialize, Serialize};

use super::clients::{ClientFold, PerClient};
use super::id_table::{IdSet, IdTimes};
use super::percentile::StalenessMs;
use super::step_runs::{self, Run};
use crate::event::{ClientId, Event, EventKind, SendKind, SimTime};

/// Spacing of the staleness samples.
pub const STALENESS_SAMPLE_MS: u64 = 5;

/// Snapshot traffic and receiver staleness over a run, both directions together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SnapshotSummary {
    /// Snapshots the workload queued.
    pub queued: u64,
    /// Snapshot sends, resends included (`MessageSent`).
    pub sent: u64,
    /// Of those, resends.
    pub resent: u64,
    /// Distinct snapshots delivered to the receiving application.
    pub received: u64,
    /// Age of the newest snapshot the receiver holds, sampled every [`STALENESS_SAMPLE_MS`]
    /// (from when it first holds one), both receivers together.
    pub staleness_ms: StalenessMs,
}

/// Computes [`SnapshotSummary`] from an event log (live or recorded), in time order.
pub fn snapshot_summary(events: &[Event]) -> SnapshotSummary {
    let mut a = SnapshotAccumulator::default();
    for e in events {
        a.observe(e);
    }
    a.finish()
}

const STEP_US: u64 = STALENESS_SAMPLE_MS * 1000;

/// Feeds events one at a time (a view can extend it as time moves forward); `finish` gives the
/// summary so far, with staleness sampled up to the last event observed.
///
/// Keyed by client (snapshot ids count per connection): [`Self::client`] gives one client's
/// summary, [`Self::finish`] the counts over every client and the staleness percentiles over
/// every client's samples together (each client's sampled up to its own last event).
#[derive(Debug, Clone, Default)]
pub struct SnapshotAccumulator {
    clients: PerClient<ClientSnapshots>,
}

impl SnapshotAccumulator {
    #[inline]
    pub fn observe(&mut self, e: &Event) {
        self.clients.observe(e, ClientSnapshots::observe);
    }

    /// The summary over every client so far.
    pub fn finish(&self) -> SnapshotSummary {
        let mut out = SnapshotSummary::default();
        // Every client's runs in one vector sized once (each client's open runs may add two).
        let mut runs = Vec::with_capacity(self.clients.iter().map(|c| c.runs.len() + 2).sum());
        for c in self.clients.iter() {
            out.queued += c.out.queued;
            out.sent += c.out.sent;
            out.resent += c.out.resent;
            out.received += c.out.received;
            c.runs_to_end(&mut runs);
        }
        SnapshotSummary { staleness_ms: staleness_of(&runs), ..out }
    }

    /// Client `k`'s summary so far (None before any event of it).
    pub fn client(&self, k: ClientId) -> Option<SnapshotSummary> {
        self.clients.get(k).map(ClientSnapshots::finish)
    }
}

/// One client's part of a [`SnapshotAccumulator`].
#[derive(Debug, Clone, Default)]
struct ClientSnapshots {
    /// Per sending side: queue time of each snapshot id.
    queued_at: [IdTimes; 2],
    /// Per receiving side: ids delivered; newest held (id, queued at) and the next sample time.
    delivered: [IdSet; 2],
    held: [Option<(u64, SimTime)>; 2],
    next_sample: [u64; 2],
    out: SnapshotSummary,
    /// The staleness samples so far, as runs of [`STEP_US`] (see [`step_runs`](super::step_runs)).
    runs: Vec<Run>,
    /// Per receiver: the run its next sample may extend.
    open: [Option<usize>; 2],
    last_us: Option<u64>,
}

/// The staleness percentiles of the samples `runs` stand for.
fn staleness_of(runs: &[Run]) -> StalenessMs {
    let [p50, p99, max] = step_runs::nearest_ranks(runs, STEP_US, [0.5, 0.99, 1.0]);
    StalenessMs { p50, p99, max, samples: runs.iter().map(|r| r.count).sum() }
}

/// Staleness samples for each receiver holding a snapshot, from `next` up to (not including) `t`,
/// appended to `runs` (each receiver's continuing its `open` run when they follow on from it).
fn sample_until(
    t: u64,
    held: &[Option<(u64, SimTime)>; 2],
    next: &mut [u64; 2],
    runs: &mut Vec<Run>,
    open: &mut [Option<usize>; 2],
) {
    for r in 0..2 {
        let Some((_, q)) = held[r] else { continue };
        // A sample before the snapshot was queued reads 0 (never in a run: held snapshots were
        // queued before they arrived); one run of a single sample each.
        while next[r] < t && next[r] < q.0 {
            runs.push(Run { first_us: 0, count: 1 });
            open[r] = None;
            next[r] += STEP_US;
        }
        if next[r] >= t {
            continue;
        }
        let count = (t - next[r]).div_ceil(STEP_US);
        let first_us = next[r] - q.0;
        match open[r].and_then(|i| runs.get_mut(i)) {
            Some(run) if run.first_us + run.count * STEP_US == first_us => run.count += count,
            _ => {
                open[r] = Some(runs.len());
                runs.push(Run { first_us, count });
            }
        }
        next[r] += count * STEP_US;
    }
}

impl ClientFold for ClientSnapshots {
    fn for_client(_: ClientId) -> Self {
        Self::default()
    }
}

impl ClientSnapshots {
    fn observe(&mut self, e: &Event) {
        sample_until(e.time.0, &self.held, &mut self.next_sample, &mut self.runs, &mut self.open);
        self.last_us = Some(e.time.0);
        if e.kind.is_restart() {
            // New endpoints: snapshot ids count from zero again and nothing is held yet.
            self.queued_at = Default::default();
            self.delivered = Default::default();
            self.held = [None; 2];
        }
        match e.kind {
            EventKind::MessageQueued { side, msg, reliable: false, .. } => {
                self.queued_at[side.index()].insert(msg, e.time);
                self.out.queued += 1;
            }
            EventKind::MessageSent { side, msg, kind, .. } if self.queued_at[side.index()].get(msg).is_some() => {
                self.out.sent += 1;
                self.out.resent += (kind != SendKind::First) as u64;
            }
            EventKind::MessageDelivered { side, msg } => {
                let r = side.index();
                let Some(q) = self.queued_at[side.other().index()].get(msg) else { return };
                if self.delivered[r].insert(msg) {
                    self.out.received += 1;
                    match self.held[r] {
                        Some((id, _)) if id >= msg => {}
                        None => {
                            self.held[r] = Some((msg, q));
                            self.next_sample[r] = e.time.0.div_ceil(STEP_US) * STEP_US;
                        }
                        Some(_) => self.held[r] = Some((msg, q)),
                    }
                }
            }
            _ => {}
        }
    }

    /// Appends the staleness samples so far to `out`, sampled up to the last event observed.
    fn runs_to_end(&self, out: &mut Vec<Run>) {
        let base = out.len();
        out.extend_from_slice(&self.runs);
        if let Some(last) = self.last_us {
            let (mut next, mut open) = (self.next_sample, self.open.map(|i| i.map(|i| base + i)));
            sample_until(last + 1, &self.held, &mut next, out, &mut open);
        }
    }

    fn finish(&self) -> SnapshotSummary {
        let mut runs = Vec::with_capacity(self.runs.len() + 2);
        self.runs_to_end(&mut runs);
        SnapshotSummary { staleness_ms: staleness_of(&runs), ..self.out }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Side;

    #[test]
    fn staleness_is_the_age_of_the_newest_held_snapshot_on_a_time_grid() {
        let ev = |ms: u64, kind| Event::new(SimTime(ms * 1000), kind);
        let log = vec![
            ev(0, EventKind::MessageQueued { side: Side::A, msg: 0, bytes: 8, reliable: false }),
            ev(0, EventKind::MessageQueued { side: Side::A, msg: 1, bytes: 8, reliable: true }),
            ev(10, EventKind::MessageQueued { side: Side::A, msg: 2, bytes: 8, reliable: false }),
            ev(60, EventKind::MessageDelivered { side: Side::B, msg: 0 }),
            ev(60, EventKind::MessageDelivered { side: Side::B, msg: 1 }),
            // Snapshot 2 arrives at 80 ms: from then on the held state is 10 ms younger.
            ev(80, EventKind::MessageDelivered { side: Side::B, msg: 2 }),
            ev(90, EventKind::MessageDelivered { side: Side::B, msg: 0 }),
            ev(100, EventKind::Stats { side: Side::A, stats: Default::default() }),
        ];
        let s = snapshot_summary(&log);
        assert_eq!((s.queued, s.received), (2, 2));
        // Samples at 60, 65, 70, 75 (ages 60..75) then 80..100 (ages 70..90).
        assert_eq!(s.staleness_ms.samples, 9);
        assert_eq!(s.staleness_ms.max, 90.0);
        assert_eq!(s.staleness_ms.p50, 75.0);
    }
}

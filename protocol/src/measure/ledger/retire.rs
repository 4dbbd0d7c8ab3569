//! A counting ledger: per-send records are forgotten once nothing can change what they count.
//!
//! A simulation folds every event of its run into a ledger for its figures (false acks, duplicate
//! acks, ...), and a live run can go on for hours: with a record per send that ledger grew by
//! about 800 MB an hour at 1000 packets/s each way. The counters need a send's record only while
//! an event can still reach it and change them: until the link has settled it (dropped, or first
//! delivered: later copies count without reading it) and while it is its side's latest send of
//! its sequence (acks, naks and receipts name a sequence, which means the latest send of it).
//! Records past both are dropped, in chunks from the oldest; a record not settled yet is kept
//! aside as a straggler until it is. Every counter stays exactly what the full ledger counts;
//! per-send queries ([`PacketLedger::packet`], fates, recent loss) are for full ledgers only.

use std::collections::BTreeMap;

use super::{At, PacketLedger, Record, NO_UID};
use crate::event::ClientId;

/// Records dropped at a time (the table holds between two and four of these).
const CHUNK: usize = 1 << 16;

/// What a counting ledger keeps beside the table.
#[derive(Debug, Clone, Default)]
pub(super) struct Retired {
    /// Forget settled records (a counting ledger).
    pub on: bool,
    /// Ids below this left the table: they are stragglers or forgotten.
    pub below: u64,
    /// Records that left the table before they were settled, by uid.
    pub stragglers: BTreeMap<u64, Record>,
    /// Straggler count at which they are swept again.
    sweep_at: usize,
    /// Records dropped at a time ([`CHUNK`]; smaller in tests).
    chunk: usize,
}

impl Retired {
    /// The state of a new ledger of the same kind (counting or not, same chunk).
    pub(super) fn fresh(&self) -> Self {
        Self { on: self.on, chunk: self.chunk, ..Self::default() }
    }
}

impl PacketLedger {
    /// A ledger that keeps its counters exact but forgets each send's record once it is settled,
    /// so its memory stays bounded however long the run (see the module doc).
    pub fn counting() -> Self {
        Self::counting_by(CHUNK)
    }

    fn counting_by(chunk: usize) -> Self {
        let mut ledger = Self::counting_growing_by(chunk);
        // The table's largest size, reserved now: growing it later copied up to 12 MB at once
        // (a several-ms stall in the frame that folded that send). Untouched, it costs address
        // space only until the run fills it.
        ledger.records.reserve_exact(4 * chunk + 1);
        ledger
    }

    /// [`Self::counting`] without the reservation: its table grows as the run needs. For the
    /// ledgers of a run's many clients (a thousand reservations of 25 MB of address space each
    /// would be more than a machine may grant), which are not folded in a window's frame.
    pub fn counting_growing_for(client: ClientId) -> Self {
        Self { client_index: client.wrapping_sub(1), ..Self::counting_growing_by(CHUNK) }
    }

    fn counting_growing_by(chunk: usize) -> Self {
        let mut ledger = Self::default();
        ledger.retired.on = true;
        ledger.retired.chunk = chunk;
        ledger
    }

    /// Records held aside by a counting ledger until the link settles them.
    pub fn stragglers(&self) -> usize {
        self.retired.stragglers.len()
    }

    /// Drops the oldest records of a counting ledger whose table has grown past four chunks.
    pub(super) fn retire_settled(&mut self) {
        let chunk = self.retired.chunk;
        if !self.retired.on || self.records.len() < 4 * chunk {
            return;
        }
        let n = self.records.len() - 2 * chunk;
        let (base, last_uid, r) = (self.uid_base, &self.last_uid, &mut self.retired);
        for (k, rec) in self.records.drain(..n).enumerate() {
            let uid = base + k as u64;
            if !settled(last_uid, uid, &rec) {
                r.stragglers.insert(uid, rec);
            }
        }
        self.uid_base += n as u64;
        r.below = self.uid_base;
        if r.stragglers.len() > r.sweep_at {
            r.stragglers.retain(|&uid, rec| !settled(last_uid, uid, rec));
            r.sweep_at = r.stragglers.len() * 3 / 2 + chunk;
        }
    }
}

/// No event can change a counter through `rec` (send `uid`) any more.
fn settled(last_uid: &[Vec<u64>; 2], uid: u64, rec: &Record) -> bool {
    let (Some(dir), Some(seq)) = (rec.dir, rec.seq) else { return false };
    let link_done = rec.dropped.is_some() || rec.delivered_at != At::NEVER;
    let latest = last_uid[dir.index()].get(seq as usize).is_some_and(|&u| u == uid && u != NO_UID);
    link_done && !latest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Dir, Event};
    use crate::{Scenario, Simulation};

    /// Every counter a ledger reports.
    fn counters(l: &PacketLedger) -> Vec<u64> {
        let t = l.totals();
        let mut v = vec![t.sent, t.link_dropped, t.delivered, t.duplicated, t.acked, t.false_acks, t.duplicate_acks];
        v.extend([t.malformed, l.false_naks(), l.unnamed_acks(), l.unnamed_naks(), l.repeated_outcomes()]);
        v.extend([l.acks_reported(), l.naks_reported(), l.true_rtt_ms().to_bits(), l.true_loss_percent().to_bits()]);
        for d in Dir::BOTH {
            v.extend([l.discarded_sends(d), l.discards(&[d]).total(), l.effective_loss_percent(&[d]).to_bits()]);
        }
        v
    }

    fn events(s: Scenario, secs: f64) -> Vec<Event> {
        let mut sim = Simulation::new(s);
        sim.run_for_secs(secs);
        sim.drain_events().collect()
    }

    #[test]
    fn a_counting_ledger_counts_exactly_what_a_full_one_does_in_bounded_memory() {
        // UE4 discards late and duplicate packets: the receivers' verdicts are counted alike. It
        // sends only when it has something to say, too few packets for the bound below.
        for (seed, strategy) in [(3, crate::Strategy::Glenn), (8, crate::Strategy::Glenn), (5, crate::Strategy::Ue4)] {
            let mut s = Scenario { seed, strategy, send_rate_pps: 1000.0, ..Scenario::default() };
            for d in Dir::BOTH {
                let l = s.link.get_mut(d);
                l.loss_percent = 10.0;
                l.duplicate_percent = 5.0;
                l.jitter_ms = 30.0;
                l.reorder_percent = 10.0;
                l.reorder_delay_ms = 80.0;
            }
            // A slow side keeps its sends the latest of their sequence for the whole run.
            s.link.b_to_a.loss_percent = 40.0;
            // Long enough for each side's 16-bit sequences to wrap four times.
            let all = events(s, 300.0);
            let (mut full, mut counting) = (PacketLedger::new(), PacketLedger::counting_by(512));
            let mut most = 0;
            for (i, batch) in all.chunks(97).enumerate() {
                full.observe(batch);
                counting.observe(batch);
                most = most.max(counting.table_len() + counting.stragglers());
                if i % 64 == 0 {
                    assert_eq!(counters(&full), counters(&counting), "seed {seed}");
                }
            }
            assert_eq!(counters(&full), counters(&counting), "seed {seed}");
            // At most the table, each side's latest send of every sequence (half as many again
            // before a sweep), and those in flight.
            let bound = 4 * 512 + 3 * (1 << 16) + 4096;
            if strategy == crate::Strategy::Glenn {
                assert!(full.table_len() > 2 * bound, "{} sends (seed {seed})", full.table_len());
            } else {
                assert!(full.discards(&Dir::BOTH).total() > 1000, "seed {seed}");
            }
            assert!(most < bound, "{most} records held (seed {seed})");
        }
    }
}

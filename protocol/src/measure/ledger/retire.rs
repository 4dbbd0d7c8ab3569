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
//!
//! A settled send that is still the latest of its sequence leaves the table too: of its record,
//! acks, naks and the receiver's reports read only whether it was acked, acked or nakked,
//! delivered, and the receiver's verdict, one byte ([`Settled`]) kept by sequence until the
//! sequence is sent again. Why: a sequence is sent again only after 65,536 sends, so before the
//! latest sends were kept whole (96 bytes each), a ledger held every send of its first 65,536
//! per direction: at 1000 clients sending 60 packets/s each way, 700 MB after a minute.

use std::collections::BTreeMap;

use super::discards::Verdict;
use super::{At, PacketLedger, Record, NO_UID};
use crate::event::{ClientId, Dir};

/// Records dropped at a time (the table holds between two and four of these).
const CHUNK: usize = 1 << 16;

/// Records dropped at a time by the ledgers of a run's many clients: each table holds 128 to 256
/// records (24 KB at most) instead of up to 262,144, as their sends settle within a round trip or
/// two; what is not settled yet waits aside as a straggler.
const CLIENT_CHUNK: usize = 64;

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
    /// Per direction, by sequence: the latest send of it, when it left the table settled.
    pub settled: [Vec<Settled>; 2],
}

/// What an event can still change of a settled send that is the latest of its sequence: see the
/// module doc. [`Settled::EMPTY`] when the sequence's latest send is not such a one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Settled(u8);

impl Settled {
    pub const EMPTY: Settled = Settled(0);
    const HELD: u8 = 1;
    const ACKED: u8 = 2;
    /// Acked or nakked.
    const OUTCOME: u8 = 4;
    const DELIVERED: u8 = 8;
    const VERDICT_SHIFT: u32 = 4;

    fn of(rec: &Record) -> Self {
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        Settled(
            Self::HELD
                | flag(rec.acks > 0, Self::ACKED)
                | flag(rec.acks > 0 || rec.naks > 0, Self::OUTCOME)
                | flag(rec.delivered_at != At::NEVER, Self::DELIVERED)
                | Self::verdict_bits(rec.verdict),
        )
    }

    fn verdict_bits(v: Verdict) -> u8 {
        let n = match v {
            Verdict::None => 0,
            Verdict::Accepted => 1,
            Verdict::Discarded => 2,
            Verdict::Refused => 3,
        };
        n << Self::VERDICT_SHIFT
    }

    pub fn held(self) -> bool {
        self.0 & Self::HELD != 0
    }

    pub fn acked(self) -> bool {
        self.0 & Self::ACKED != 0
    }

    /// Acked or nakked before.
    pub fn has_outcome(self) -> bool {
        self.0 & Self::OUTCOME != 0
    }

    pub fn delivered(self) -> bool {
        self.0 & Self::DELIVERED != 0
    }

    /// One more ack (`ack`) or nak reported.
    pub fn add_outcome(&mut self, ack: bool) {
        self.0 |= Self::OUTCOME | if ack { Self::ACKED } else { 0 };
    }

    pub fn verdict(self) -> Verdict {
        match (self.0 >> Self::VERDICT_SHIFT) & 3 {
            0 => Verdict::None,
            1 => Verdict::Accepted,
            2 => Verdict::Discarded,
            _ => Verdict::Refused,
        }
    }

    pub fn set_verdict(&mut self, v: Verdict) {
        self.0 = (self.0 & !(3 << Self::VERDICT_SHIFT)) | Self::verdict_bits(v);
    }
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
        Self { client_index: client.wrapping_sub(1), ..Self::counting_growing_by(CLIENT_CHUNK) }
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
            match fate(last_uid, uid, &rec) {
                Fate::Straggler => {
                    r.stragglers.insert(uid, rec);
                }
                Fate::Latest(dir, seq) => settle(&mut r.settled, dir, seq, &rec),
                Fate::Forgotten => {}
            }
        }
        self.uid_base += n as u64;
        r.below = self.uid_base;
        if r.stragglers.len() > r.sweep_at {
            let settled = &mut r.settled;
            r.stragglers.retain(|&uid, rec| match fate(last_uid, uid, rec) {
                Fate::Straggler => true,
                Fate::Latest(dir, seq) => {
                    settle(settled, dir, seq, rec);
                    false
                }
                Fate::Forgotten => false,
            });
            r.sweep_at = r.stragglers.len() * 3 / 2 + chunk;
        }
    }

    /// The settled latest send of `seq` by `dir`'s sender, when it left the table.
    pub(super) fn settled_mut(&mut self, dir: Dir, seq: u16) -> Option<&mut Settled> {
        self.retired.settled[dir.index()].get_mut(seq as usize).filter(|s| s.held())
    }

    /// A new send of `seq` by `dir`'s sender: the one before is no longer the latest.
    #[inline]
    pub(super) fn unsettle(&mut self, dir: Dir, seq: u16) {
        if let Some(s) = self.retired.settled[dir.index()].get_mut(seq as usize) {
            *s = Settled::EMPTY;
        }
    }
}

/// What becomes of a record leaving the table.
enum Fate {
    /// Not settled by the link yet: kept whole.
    Straggler,
    /// Settled and the latest send of its sequence: kept as [`Settled`].
    Latest(Dir, u16),
    /// Settled and a later send has its sequence: nothing can reach it.
    Forgotten,
}

fn fate(last_uid: &[Vec<u64>; 2], uid: u64, rec: &Record) -> Fate {
    let (Some(dir), Some(seq)) = (rec.dir, rec.seq) else { return Fate::Straggler };
    if rec.dropped.is_none() && rec.delivered_at == At::NEVER {
        return Fate::Straggler;
    }
    let latest = last_uid[dir.index()].get(seq as usize).is_some_and(|&u| u == uid && u != NO_UID);
    if latest {
        Fate::Latest(dir, seq)
    } else {
        Fate::Forgotten
    }
}

fn settle(settled: &mut [Vec<Settled>; 2], dir: Dir, seq: u16, rec: &Record) {
    let table = &mut settled[dir.index()];
    if table.len() <= seq as usize {
        table.resize(seq as usize + 1, Settled::EMPTY);
    }
    table[seq as usize] = Settled::of(rec);
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
        v.extend([
            l.acks_reported(),
            l.naks_reported(),
            l.true_rtt_ms().unwrap_or(-1.0).to_bits(),
            l.true_loss_percent().to_bits(),
        ]);
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

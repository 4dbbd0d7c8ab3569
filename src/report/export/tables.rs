//! The three exported tables, each produced row by row from a recording's model.
//!
//! Nothing here folds events: packets are the packet log's rows joined with the recording's
//! `PacketLedger` (the one ground truth), messages and chunks are the message and chunk indexes'
//! records, and the series are the store's samples, the ones the plots draw. The column lists are
//! an interface people script against: add columns at the end (before `lane`), never rename.

use std::io;

use ackscope_protocol::{Dir, DropReason, RefuseReason, Side, SimTime};

use super::cells::{Cell, RowSink};
use crate::model::connection::Connection;
use crate::model::index::{ChunkRecord, MessageRecord};
use crate::model::{Recording, Sample};

/// One recording to export and the name its rows carry in the `lane` column.
pub struct Lane<'a> {
    pub label: String,
    pub rec: &'a Recording,
    /// Which rows to write (every one unless a display filter chose: `export --filter`).
    pub keep: Keep,
}

/// The rows of a lane a filter kept: packet log rows and message index rows, ascending. `None`
/// writes every row; `Some` writes those (and, for messages, no chunk rows: a filter runs over
/// messages, not chunks).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keep {
    pub packets: Option<Vec<u32>>,
    pub messages: Option<Vec<u32>>,
}

impl Lane<'_> {
    /// The connections whose rows are written, client by client: every one, or the first (the
    /// one a display filter's rows index) when a filter chose rows.
    fn connections(&self, filtered: bool) -> &[Connection] {
        let all = self.rec.clients();
        if filtered {
            &all[..all.len().min(1)]
        } else {
            all
        }
    }

    /// The packet rows of `conn` to write.
    fn packet_indexes<'a>(&'a self, conn: &'a Connection) -> Box<dyn Iterator<Item = usize> + 'a> {
        match &self.keep.packets {
            Some(rows) => Box::new(rows.iter().map(|&i| i as usize)),
            None => Box::new(0..conn.packets.len()),
        }
    }
}

/// The `client` column: the client whose connection a row is of.
fn client_cell(conn: &Connection) -> Cell<'static> {
    Cell::Int(conn.client.into())
}

/// Every link send, in send order per lane.
pub const PACKET_COLUMNS: &[&str] = &[
    "time_s",
    "side",
    "dir",
    "link_id",
    "seq",
    "bytes",
    "fate",
    "deliver_time_s",
    "delay_ms",
    "received_s",
    "acked_s",
    "nakked_s",
    "msgs",
    "resends",
    "carried",
    "client",
    "lane",
];

/// Every message (then every chunk) in queue order per lane.
pub const MESSAGE_COLUMNS: &[&str] = &[
    "side",
    "message_id",
    "kind",
    "bytes",
    "queued_s",
    "first_send_s",
    "sends",
    "delivered_s",
    "latency_ms",
    "spurious_resends",
    "acked_s",
    "deliveries",
    "refused",
    "client",
    "lane",
];

/// One row per stats instant per side, in time order per lane (side A first at equal times).
pub const SERIES_COLUMNS: &[&str] = &[
    "time_s",
    "side",
    "rtt_smoothed_ms",
    "rtt_display_ms",
    "rtt_raw_ms",
    "rtt_samples",
    "true_rtt_ms",
    "loss_estimate_percent",
    "loss_true_percent",
    "sent_kbps",
    "received_kbps",
    "acked_kbps",
    "budget_available_kbps",
    "budget_spent_kbps",
    "flow_good",
    "client",
    "loss_effective_percent",
    "lane",
];

fn side_name(side: Side) -> &'static str {
    match side {
        Side::A => "A",
        Side::B => "B",
    }
}

/// Directions as the `--set` names spell them.
fn dir_name(dir: Dir) -> &'static str {
    match dir {
        Dir::AtoB => "a_to_b",
        Dir::BtoA => "b_to_a",
    }
}

fn drop_name(reason: DropReason) -> &'static str {
    match reason {
        DropReason::Random => "dropped_loss",
        DropReason::Burst => "dropped_burst",
        DropReason::QueueFull => "dropped_queue",
        DropReason::Mtu => "dropped_mtu",
    }
}

fn refuse_name(reason: RefuseReason) -> &'static str {
    match reason {
        RefuseReason::SendQueueFull => "send_queue_full",
        RefuseReason::TooLarge => "too_large",
        RefuseReason::Closed => "closed",
    }
}

fn since(from: SimTime, to: Option<SimTime>) -> Cell<'static> {
    to.map_or(Cell::Empty, |t| Cell::Millis(t.saturating_since(from).0))
}

/// Rows of the packets table.
pub fn packet_rows(lanes: &[Lane]) -> u64 {
    lanes
        .iter()
        .map(|l| match &l.keep.packets {
            Some(rows) => rows.len() as u64,
            None => l.rec.clients().iter().map(|c| c.packets.len() as u64).sum(),
        })
        .sum()
}

/// Writes the packets table: the link's verdict on each send is the ledger's; a send neither
/// dropped nor delivered when the recording ends is `in_flight`.
pub fn write_packets(lanes: &[Lane], sink: &mut dyn RowSink) -> io::Result<()> {
    let mut carried = String::new();
    for lane in lanes {
        for conn in lane.connections(lane.keep.packets.is_some()) {
            write_packets_of(lane, conn, sink, &mut carried)?;
        }
    }
    Ok(())
}

/// One connection's rows of the packets table.
fn write_packets_of(lane: &Lane, conn: &Connection, sink: &mut dyn RowSink, carried: &mut String) -> io::Result<()> {
    {
        for i in lane.packet_indexes(conn) {
            // Every row of the index has a ledger record with its direction and sequence.
            let Some(row) = conn.packets.row(i, &conn.ledger) else { continue };
            let fate = match (row.dropped, row.delivered_at) {
                (Some(reason), _) => drop_name(reason),
                (None, Some(_)) if row.duplicated => "duplicated",
                (None, Some(_)) => "delivered",
                (None, None) => "in_flight",
            };
            carried.clear();
            row.contents.write_summary(carried);
            sink.row(&[
                Cell::Secs(row.time.0),
                Cell::Text(side_name(row.dir.sender())),
                Cell::Text(dir_name(row.dir)),
                Cell::Int(row.uid),
                Cell::Int(row.seq.into()),
                Cell::Int(row.bytes.into()),
                Cell::Text(fate),
                Cell::at(row.delivered_at),
                since(row.time, row.delivered_at),
                Cell::at(row.received_at),
                Cell::at(row.acked_at),
                Cell::at(row.nakked_at),
                Cell::Int(row.contents.msgs.into()),
                Cell::Int(row.contents.resends.into()),
                Cell::Text(carried),
                client_cell(conn),
                Cell::Text(&lane.label),
            ])?;
        }
    }
    Ok(())
}

/// Rows of the messages table.
pub fn message_rows(lanes: &[Lane]) -> u64 {
    lanes
        .iter()
        .map(|l| match &l.keep.messages {
            Some(rows) => rows.len() as u64,
            None => l.rec.clients().iter().map(|c| (c.messages.len() + c.chunks.len()) as u64).sum(),
        })
        .sum()
}

/// Writes the messages table: each message as the message index knows it, then each chunk (kind
/// `chunk`) as the chunk index knows it.
pub fn write_messages(lanes: &[Lane], sink: &mut dyn RowSink) -> io::Result<()> {
    for lane in lanes {
        for conn in lane.connections(lane.keep.messages.is_some()) {
            if let Some(rows) = &lane.keep.messages {
                let all = conn.messages.messages();
                for m in rows.iter().filter_map(|&i| all.get(i as usize)) {
                    sink.row(&message_cells(m, lane, conn))?;
                }
                continue;
            }
            for m in conn.messages.messages() {
                sink.row(&message_cells(m, lane, conn))?;
            }
            for c in conn.chunks.chunks() {
                sink.row(&chunk_cells(c, lane, conn))?;
            }
        }
    }
    Ok(())
}

fn message_cells<'a>(m: &MessageRecord, lane: &'a Lane, conn: &Connection) -> [Cell<'a>; 15] {
    [
        Cell::Text(side_name(m.side)),
        Cell::Int(m.id),
        Cell::Text(if m.reliable { "reliable" } else { "unreliable" }),
        Cell::Int(m.bytes.into()),
        Cell::Secs(m.queued_at.0),
        Cell::at(m.sends.first().map(|s| s.time)),
        Cell::Int(m.sends.len() as u64),
        Cell::at(m.delivered_at),
        since(m.queued_at, m.delivered_at),
        Cell::Int(m.sends.iter().filter(|s| s.spurious).count() as u64),
        Cell::at(m.acked_at),
        Cell::Int(m.deliveries.into()),
        m.refused.map_or(Cell::Empty, |(_, r)| Cell::Text(refuse_name(r))),
        client_cell(conn),
        Cell::Text(&lane.label),
    ]
}

/// A chunk as a message row: `sends` counts slice sends (the fragmentation baseline, which has
/// none, counts its block attempts), `spurious_resends` the slice sends made after the receiver
/// had stored that slice, `acked_s` when the sender learned every slice arrived.
fn chunk_cells<'a>(c: &ChunkRecord, lane: &'a Lane, conn: &Connection) -> [Cell<'a>; 15] {
    let slice_sends = c.slices.iter().flat_map(|s| s.sends.iter());
    let (first_send, sends) = match slice_sends.clone().min() {
        Some(&first) => (Some(first), slice_sends.count() as u64),
        None => (c.attempts.first().map(|a| a.1), c.attempts.len() as u64),
    };
    let spurious: usize =
        c.slices.iter().map(|s| s.received_at.map_or(0, |r| s.sends.iter().filter(|&&t| t > r).count())).sum();
    [
        Cell::Text(side_name(c.side)),
        Cell::Int(c.chunk.into()),
        Cell::Text("chunk"),
        Cell::Int(c.bytes.into()),
        Cell::Secs(c.started_at.0),
        Cell::at(first_send),
        Cell::Int(sends),
        Cell::at(c.delivered_at),
        since(c.started_at, c.delivered_at),
        Cell::Int(spurious as u64),
        Cell::at(c.completed_at),
        Cell::Int(c.delivered_at.is_some().into()),
        Cell::Empty,
        client_cell(conn),
        Cell::Text(&lane.label),
    ]
}

/// Rows of the series table.
pub fn series_rows(lanes: &[Lane]) -> u64 {
    lanes
        .iter()
        .flat_map(|l| l.rec.clients())
        .flat_map(|c| Side::BOTH.map(|s| c.store.side(s).rtt_smoothed_ms.len() as u64))
        .sum()
}

/// Microseconds of a sample's time (samples keep seconds as f64; events are whole microseconds).
fn sample_us(s: &Sample) -> u64 {
    (s.t_s * 1e6).round().max(0.0) as u64
}

/// A read position in a time-ordered series, moved forward only.
#[derive(Default, Clone, Copy)]
struct Cursor {
    next: usize,
}

impl Cursor {
    /// The samples after the previous call up to and including `t_us`.
    fn take<'s>(&mut self, series: &'s [Sample], t_us: u64) -> &'s [Sample] {
        let from = self.next.min(series.len());
        let n = series[from..].partition_point(|s| sample_us(s) <= t_us);
        self.next = from + n;
        &series[from..from + n]
    }
}

/// What one side's rows carry over from the previous row.
#[derive(Default, Clone, Copy)]
struct SideState {
    stats: usize,
    loss: Cursor,
    effective: Cursor,
    raw: Cursor,
    budget: Cursor,
    flow: Cursor,
    flow_good: Option<f64>,
}

fn mean(samples: &[Sample]) -> Cell<'static> {
    if samples.is_empty() {
        return Cell::Empty;
    }
    Cell::Float(samples.iter().map(|s| s.y).sum::<f64>() / samples.len() as f64)
}

/// Writes the series table: the store's stats samples of both sides merged by time. Series not
/// sampled at stats instants are joined as of each row: `rtt_raw_ms` is the last raw RTT sample
/// since the side's previous row (`rtt_samples` how many), `true_rtt_ms` and `flow_good` the
/// latest value at or before the row, the budget columns the mean of the ticks since the side's
/// previous row; empty where there is none. `loss_estimate_percent` is empty where the side had
/// judged no packet yet (no estimate); `loss_effective_percent` is the link's drops plus the
/// packets the receiver discarded unacked.
pub fn write_series(lanes: &[Lane], sink: &mut dyn RowSink) -> io::Result<()> {
    for lane in lanes {
        for conn in lane.rec.clients() {
            write_series_of(lane, conn, sink)?;
        }
    }
    Ok(())
}

/// One connection's rows of the series table.
fn write_series_of(lane: &Lane, conn: &Connection, sink: &mut dyn RowSink) -> io::Result<()> {
    {
        let store = &conn.store;
        let series = Side::BOTH.map(|s| store.side(s));
        let mut state = [SideState::default(); 2];
        let mut true_rtt = Cursor::default();
        let mut true_rtt_ms = None;
        loop {
            let next = |i: usize| series[i].rtt_smoothed_ms.get(state[i].stats).map(sample_us);
            let i = match (next(0), next(1)) {
                (None, None) => break,
                (Some(a), Some(b)) => usize::from(b < a),
                (a, _) => usize::from(a.is_none()),
            };
            let (s, st) = (series[i], &mut state[i]);
            let k = st.stats;
            st.stats += 1;
            let t_us = sample_us(&s.rtt_smoothed_ms[k]);
            let raw = st.raw.take(&s.rtt_raw_ms, t_us);
            let from = st.budget.next;
            let available = st.budget.take(&s.budget_available, t_us);
            // Pushed together, so the same positions.
            let spent = s.budget_spent.get(from..from + available.len()).unwrap_or(&[]);
            if let Some(f) = st.flow.take(&s.flow_good, t_us).last() {
                st.flow_good = Some(f.y);
            }
            if let Some(r) = true_rtt.take(&store.true_rtt_ms, t_us).last() {
                true_rtt_ms = Some(r.y);
            }
            let y = |v: &[Sample]| v.get(k).map_or(Cell::Empty, |p| Cell::Float(p.y));
            // Sampled at some of the stats instants only: the value at this one, if any.
            let at_row = |taken: &[Sample]| taken.last().filter(|p| sample_us(p) == t_us).map(|p| p.y);
            let loss_estimate = at_row(st.loss.take(&s.loss_estimate_percent, t_us));
            // The effective loss is kept only once it differs from the true loss (store doc).
            let effective = at_row(st.effective.take(&s.loss_effective_percent, t_us))
                .or_else(|| s.loss_true_percent.get(k).map(|p| p.y));
            sink.row(&[
                Cell::Secs(t_us),
                Cell::Text(side_name(Side::BOTH[i])),
                y(&s.rtt_smoothed_ms),
                y(&s.rtt_display_ms),
                raw.last().map_or(Cell::Empty, |p| Cell::Float(p.y)),
                Cell::Int(raw.len() as u64),
                true_rtt_ms.map_or(Cell::Empty, Cell::Float),
                loss_estimate.map_or(Cell::Empty, Cell::Float),
                y(&s.loss_true_percent),
                y(&s.sent_kbps),
                y(&s.received_kbps),
                y(&s.acked_kbps),
                mean(available),
                mean(spent),
                st.flow_good.map_or(Cell::Empty, |g| Cell::Int(g as u64)),
                client_cell(conn),
                effective.map_or(Cell::Empty, Cell::Float),
                Cell::Text(&lane.label),
            ])?;
        }
    }
    Ok(())
}

//! Every client of a lane side by side: one row of figures per client at an instant (the Clients
//! table, `ackscope summary` of a stream), the metrics a client can be plotted by, and the
//! spread of one metric across clients over time (the all-clients plot's band).
//!
//! Figures are the server's view of each connection where there is a choice (side A is the
//! server, side B the client): RTT and estimated loss are the server's estimates, beside the
//! link's truth for the server-to-client direction; bandwidth is each side's own sending rate.
//! All of them are read from series and tallies the connection already keeps, with binary
//! searches; only the message latency percentiles sort, and the table recomputes them at most a
//! few times a second.

use ackscope_protocol::{ClientId, Side, SimTime};
use serde::Serialize;

use super::connection::Connection;
use super::recording::Recording;
use super::store::Sample;

/// What the all-clients plot and the sparklines show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Metric {
    /// The server's smoothed RTT estimate.
    #[default]
    Rtt,
    /// The server's loss estimate (server to client).
    LossEstimated,
    /// The link's true loss, server to client.
    LossTrue,
    /// The server's sending rate to the client.
    DownKbps,
    /// The client's sending rate to the server.
    UpKbps,
}

impl Metric {
    pub const ALL: [Metric; 5] =
        [Metric::Rtt, Metric::LossEstimated, Metric::LossTrue, Metric::DownKbps, Metric::UpKbps];

    /// The metric's name with its unit, as menus and axes show it.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Rtt => "RTT (ms)",
            Metric::LossEstimated => "loss estimated (%)",
            Metric::LossTrue => "loss true (%)",
            Metric::DownKbps => "server -> client (kbps)",
            Metric::UpKbps => "client -> server (kbps)",
        }
    }

    /// The series of `c` it reads, from its first real sample on.
    ///
    /// An endpoint reports a smoothed RTT of 0 in every stats sample before its first RTT
    /// sample: that is no measurement, and a table, sparkline or band reading it would show a
    /// client with a perfect link. Those leading samples are left out, so "no sample" reads as
    /// none (`-` in the table, `null` in JSON), as the estimates panel shows it.
    pub fn series(self, c: &Connection) -> &[Sample] {
        let (a, b) = (c.store.side(Side::A), c.store.side(Side::B));
        match self {
            Metric::Rtt => measured_rtt(&a.rtt_smoothed_ms, &a.rtt_raw_ms),
            Metric::LossEstimated => &a.loss_estimate_percent,
            Metric::LossTrue => &a.loss_true_percent,
            Metric::DownKbps => &a.sent_kbps,
            Metric::UpKbps => &b.sent_kbps,
        }
    }
}

/// `smoothed` from its first measured value: from the first raw RTT sample on (in `raw`), or
/// from its first non-zero value where the recording has no raw samples (a game's stream that
/// reports only its smoothed figure).
fn measured_rtt<'a>(smoothed: &'a [Sample], raw: &[Sample]) -> &'a [Sample] {
    let start = match raw.first() {
        Some(first) => smoothed.partition_point(|p| p.t_s < first.t_s && p.y == 0.0),
        None => smoothed.iter().position(|p| p.y != 0.0).unwrap_or(smoothed.len()),
    };
    &smoothed[start..]
}

/// The value of `pts` (in time order) in force at `t_s`: the last sample at or before it.
pub fn value_at(pts: &[Sample], t_s: f64) -> Option<f64> {
    let n = pts.partition_point(|p| p.t_s <= t_s);
    n.checked_sub(1).map(|i| pts[i].y)
}

/// One client's figures at an instant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientRow {
    pub client: ClientId,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    pub rtt_ms: Option<f64>,
    pub true_rtt_ms: Option<f64>,
    pub loss_estimated_percent: Option<f64>,
    pub loss_true_percent: Option<f64>,
    pub down_kbps: Option<f64>,
    pub up_kbps: Option<f64>,
    /// Reliable messages delivered (either way) and the latency percentiles among them.
    pub delivered: usize,
    pub message_p95_ms: Option<f64>,
    pub message_p99_ms: Option<f64>,
    /// Messages and slices sent again, for any cause.
    pub resends: usize,
    /// Link sends so far (both ways) and how many the link dropped.
    pub packets: usize,
    pub anomalies: usize,
}

impl ClientRow {
    /// `c`'s figures at `t` (a client of `rec`, which names it).
    pub fn at(rec: &Recording, c: &Connection, t: SimTime) -> Self {
        let t_s = t.as_secs_f64();
        let info = rec.info.client(c.client);
        let v = |m: Metric| value_at(m.series(c), t_s);
        let mut latencies: Vec<u64> = c.deliveries_by(t).iter().map(|d| d.1).collect();
        let p95 = percentile_ms(&mut latencies, 0.95);
        let p99 = percentile_ms(&mut latencies, 0.99);
        Self {
            client: c.client,
            name: info.name,
            group: info.group,
            rtt_ms: v(Metric::Rtt),
            true_rtt_ms: value_at(&c.store.true_rtt_ms, t_s),
            loss_estimated_percent: v(Metric::LossEstimated),
            loss_true_percent: v(Metric::LossTrue),
            down_kbps: v(Metric::DownKbps),
            up_kbps: v(Metric::UpKbps),
            delivered: latencies.len(),
            message_p95_ms: p95,
            message_p99_ms: p99,
            resends: c.resends_by(t),
            packets: c.packets.sent_by(t),
            anomalies: c.anomalies.list().partition_point(|a| a.time <= t),
        }
    }

    /// How the client is named: its name, or `client N`.
    pub fn label(&self) -> String {
        if self.name.is_empty() {
            format!("client {}", self.client)
        } else {
            self.name.clone()
        }
    }

    /// The value of a column for sorting (missing values sort first).
    pub fn key(&self, col: Column) -> f64 {
        let o = |v: Option<f64>| v.unwrap_or(f64::NEG_INFINITY);
        match col {
            Column::Client => self.client as f64,
            Column::Rtt => o(self.rtt_ms),
            Column::LossEstimated => o(self.loss_estimated_percent),
            Column::LossTrue => o(self.loss_true_percent),
            Column::DownKbps => o(self.down_kbps),
            Column::UpKbps => o(self.up_kbps),
            Column::P95 => o(self.message_p95_ms),
            Column::P99 => o(self.message_p99_ms),
            Column::Resends => self.resends as f64,
            Column::Anomalies => self.anomalies as f64,
        }
    }
}

/// The `q` quantile of `us` (microseconds, reordered in place) in ms, by the nearest rank.
fn percentile_ms(us: &mut [u64], q: f64) -> Option<f64> {
    if us.is_empty() {
        return None;
    }
    let rank = ((q * us.len() as f64).ceil() as usize).clamp(1, us.len()) - 1;
    let (_, v, _) = us.select_nth_unstable(rank);
    Some(*v as f64 / 1000.0)
}

/// A column of the Clients table, by which it sorts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Column {
    #[default]
    Client,
    Rtt,
    LossEstimated,
    LossTrue,
    DownKbps,
    UpKbps,
    P95,
    P99,
    Resends,
    Anomalies,
}

/// Every client's row of `rec` at `t`, in client order.
pub fn rows_at(rec: &Recording, t: SimTime) -> Vec<ClientRow> {
    rec.clients().iter().map(|c| ClientRow::at(rec, c, t)).collect()
}

/// `rows` sorted by `col` (ties by client id), descending when `descending`.
pub fn sort_rows(rows: &mut [ClientRow], col: Column, descending: bool) {
    rows.sort_by(|a, b| {
        let o = a.key(col).total_cmp(&b.key(col)).then(a.client.cmp(&b.client));
        if descending {
            o.reverse()
        } else {
            o
        }
    });
}

/// The groups clients of `rec` are in, sorted ("" for clients in none).
pub fn groups(rec: &Recording) -> Vec<String> {
    let mut g: Vec<String> = rec.clients().iter().map(|c| rec.info.client(c.client).group).collect();
    g.sort();
    g.dedup();
    g
}

/// The spread of `metric` across `clients` over `[lo_s, hi_s]` in `bins` steps: at each step's
/// time, the 5th, 50th and 95th percentile of every client's value in force then (clients with
/// no value yet left out).
///
/// Each client's series is walked once across the steps (the value in force at each, as
/// [`value_at`] reads it) rather than searched at every step: with 64 clients and 240 steps a
/// search per pair was 15,000 binary searches each time the plot was computed.
pub fn band(clients: &[&Connection], metric: Metric, lo_s: f64, hi_s: f64, bins: usize) -> Vec<[f64; 4]> {
    let bins = bins.max(2);
    let times: Vec<f64> = (0..bins).map(|i| lo_s + (hi_s - lo_s) * i as f64 / (bins - 1) as f64).collect();
    let mut values: Vec<Vec<f64>> = vec![Vec::with_capacity(clients.len()); bins];
    for c in clients {
        let pts = metric.series(c);
        // Samples at or before the current step's time.
        let mut n = pts.partition_point(|p| p.t_s <= times[0]);
        for (t, at) in times.iter().zip(values.iter_mut()) {
            while n < pts.len() && pts[n].t_s <= *t {
                n += 1;
            }
            if let Some(i) = n.checked_sub(1) {
                at.push(pts[i].y);
            }
        }
    }
    let mut out = Vec::with_capacity(bins);
    for (t, mut v) in times.into_iter().zip(values) {
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        let q = |q: f64| v[((q * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)];
        out.push([t, q(0.05), q(0.5), q(0.95)]);
    }
    out
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Event, EventKind, StatsSample};

    use super::*;
    use crate::lane::{ClientInfo, LaneInfo, Origin, Protocol};

    fn stats(t_ms: u64, client: ClientId, rtt_ms: f32) -> Event {
        let stats = StatsSample { rtt_ms, ..StatsSample::default() };
        Event::for_client(SimTime(t_ms * 1000), client, EventKind::Stats { side: Side::A, stats })
    }

    #[test]
    fn each_client_has_its_own_row_and_the_band_spans_them() {
        let info = LaneInfo::new(Origin::Simulated, Protocol::named("x", None));
        let mut rec = Recording::of(info, None);
        rec.info.name_client(ClientInfo { id: 2, name: "bob".into(), group: "4G".into() });
        let mut events = Vec::new();
        for t in 0..10 {
            for k in 1..=20u32 {
                events.push(stats(t * 100, k, k as f32 * 10.0));
            }
        }
        rec.ingest(events);
        let rows = rows_at(&rec, SimTime(1_000_000));
        assert_eq!(rows.len(), 20);
        assert_eq!((rows[1].label(), rows[1].group.as_str(), rows[1].rtt_ms), ("bob".into(), "4G", Some(20.0)));
        let mut sorted = rows.clone();
        sort_rows(&mut sorted, Column::Rtt, true);
        assert_eq!(sorted[0].client, 20);
        assert_eq!(groups(&rec), vec!["".to_string(), "4G".to_string()]);
        let conns: Vec<&Connection> = rec.clients().iter().collect();
        let b = band(&conns, Metric::Rtt, 0.0, 0.9, 10);
        assert_eq!(b.len(), 10);
        assert_eq!(b[5][1..], [20.0, 110.0, 190.0], "p5 / p50 / p95 across 20 clients");
    }

    #[test]
    fn a_client_with_no_rtt_sample_yet_has_no_rtt_not_zero() {
        let info = LaneInfo::new(Origin::Simulated, Protocol::named("x", None));
        let mut rec = Recording::of(info, None);
        let raw = |t_ms: u64| {
            Event::for_client(SimTime(t_ms * 1000), 1, EventKind::RttSample { side: Side::A, rtt_ms: 90.0 })
        };
        // Stats before the first RTT sample report 0: no measurement.
        rec.ingest(vec![stats(0, 1, 0.0), stats(100, 1, 0.0), raw(150), stats(200, 1, 90.0), stats(300, 1, 95.0)]);
        let row = |t_ms: u64| rows_at(&rec, SimTime(t_ms * 1000)).remove(0);
        assert_eq!(row(0).rtt_ms, None, "cursor 0: no sample");
        assert_eq!(row(150).rtt_ms, None, "the sample arrived but no stats since");
        assert_eq!(row(200).rtt_ms, Some(90.0));
        let json = serde_json::to_value(row(0)).unwrap();
        assert!(json["rtt_ms"].is_null(), "{json}");
        let conn = &rec.clients()[0];
        assert_eq!(Metric::Rtt.series(conn).len(), 2, "the sparkline and band start at the first measurement");
        assert!(band(&[conn], Metric::Rtt, 0.0, 0.1, 2).is_empty());
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let mut v: Vec<u64> = (1..=100).map(|ms| ms * 1000).collect();
        assert_eq!(percentile_ms(&mut v, 0.95), Some(95.0));
        assert_eq!(percentile_ms(&mut v, 0.99), Some(99.0));
        assert_eq!(percentile_ms(&mut [], 0.5), None);
    }
}

//! What the proxy counts per client and direction while it relays, and the report it prints.
//!
//! Counting happens on the relay thread as each datagram passes (a few additions and one
//! histogram step), so the report needs no event log: a proxy run without `--out` keeps none.
//! Added delay is the proxy's own measure: the instant a copy left the proxy minus the instant
//! the datagram was read from its socket, on one monotonic clock, so it includes the proxy's own
//! lateness beside the link's configured delay.

use std::net::SocketAddr;

use ackscope_protocol::ClientId;
use serde::Serialize;

/// Significant bits of a histogram bucket: 256 buckets per power of two, so a delay is reported
/// within 0.4 % (exact below 512 µs).
const SUB_BITS: u32 = 8;
const SUB: u64 = 1 << SUB_BITS;

/// A histogram of microsecond values with bounded relative error, kept sparse: a link with a
/// fixed delay fills a bucket or two, jitter a few hundred, so a client costs little however many
/// datagrams it sends.
#[derive(Debug, Clone, Default)]
pub struct DelayHistogram {
    /// `(bucket, count)` sorted by bucket.
    buckets: Vec<(u16, u32)>,
    count: u64,
    min_us: u64,
    max_us: u64,
}

/// The bucket of `v` (values below `2 * SUB` have one each).
fn bucket_of(v: u64) -> u16 {
    if v < 2 * SUB {
        return v as u16;
    }
    let shift = 63 - v.leading_zeros() - SUB_BITS;
    (shift as u64 * SUB + (v >> shift)) as u16
}

/// The smallest and largest value of bucket `b`.
fn bucket_range(b: u16) -> (u64, u64) {
    let b = b as u64;
    if b < 2 * SUB {
        return (b, b);
    }
    let shift = b / SUB - 1;
    let lo = (b - shift * SUB) << shift;
    (lo, lo + (1 << shift) - 1)
}

impl DelayHistogram {
    pub fn record(&mut self, us: u64) {
        // 2^40 µs is 12 days: no delay of a running proxy comes near, and the bucket fits a u16.
        let us = us.min(1 << 40);
        let b = bucket_of(us);
        match self.buckets.binary_search_by_key(&b, |e| e.0) {
            Ok(i) => self.buckets[i].1 = self.buckets[i].1.saturating_add(1),
            Err(i) => self.buckets.insert(i, (b, 1)),
        }
        self.min_us = if self.count == 0 { us } else { self.min_us.min(us) };
        self.max_us = self.max_us.max(us);
        self.count += 1;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The nearest-rank value at quantile `q` (as [`ackscope_protocol::Percentiles`] defines it),
    /// as its bucket's midpoint kept within the values seen; 0 without samples.
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for &(b, n) in &self.buckets {
            seen += n as u64;
            if seen >= rank {
                let (lo, hi) = bucket_range(b);
                let mid = (lo + hi) as f64 / 2.0;
                return mid.clamp(self.min_us as f64, self.max_us as f64);
            }
        }
        self.max_us as f64
    }
}

/// One direction of one client while it is live.
#[derive(Debug, Clone, Default)]
pub struct DirStats {
    /// Datagrams read from the sender.
    pub datagrams: u64,
    /// Their payload bytes.
    pub bytes: u64,
    /// Datagrams the link dropped (any reason).
    pub dropped: u64,
    /// Datagrams the link duplicated.
    pub duplicated: u64,
    /// Copies the proxy sent on to the receiver.
    pub forwarded: u64,
    /// Copies the operating system refused to send (the proxy's own loss; 0 when it keeps up).
    pub send_failed: u64,
    /// Time from reading a datagram to sending each copy on.
    pub added: DelayHistogram,
}

impl DirStats {
    /// The summary printed in the report.
    pub fn summary(&self) -> DirSummary {
        let pct = |n: u64| if self.datagrams == 0 { 0.0 } else { n as f64 * 100.0 / self.datagrams as f64 };
        DirSummary {
            datagrams: self.datagrams,
            bytes: self.bytes,
            dropped: self.dropped,
            dropped_percent: pct(self.dropped),
            duplicated: self.duplicated,
            forwarded: self.forwarded,
            send_failed: self.send_failed,
            added_delay_p50_ms: self.added.quantile_us(0.5) / 1000.0,
            added_delay_p99_ms: self.added.quantile_us(0.99) / 1000.0,
            added_delay_max_ms: self.added.max_us as f64 / 1000.0,
        }
    }
}

/// One direction of one client in the report (`client_to_server`, `server_to_client`).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DirSummary {
    pub datagrams: u64,
    pub bytes: u64,
    pub dropped: u64,
    /// `dropped` as a share of `datagrams`.
    pub dropped_percent: f64,
    pub duplicated: u64,
    pub forwarded: u64,
    pub send_failed: u64,
    /// Added delay of the copies forwarded (read to sent on), nearest rank within 0.4 %.
    pub added_delay_p50_ms: f64,
    pub added_delay_p99_ms: f64,
    pub added_delay_max_ms: f64,
}

/// One client in the report: a live client's figures when the run stopped, an expired one's when
/// it expired (its histograms are gone by then, its percentiles kept).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClientSummary {
    pub client: ClientId,
    /// The client's address as the proxy saw it.
    pub addr: String,
    /// Seconds since the proxy started: first datagram, last datagram from the client.
    pub first_s: f64,
    pub last_s: f64,
    /// Whether it expired (sent nothing for the expiry time) before the run stopped.
    pub expired: bool,
    pub client_to_server: DirSummary,
    pub server_to_client: DirSummary,
    /// What the passive decoder derived from this client's traffic (with `--decode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoded: Option<DecodedFigures>,
}

/// A client's decoded figures per direction, each the sending endpoint's beliefs (acks it got,
/// its RTT, its loss estimate, its resends and spurious resends) beside the link's truth above.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DecodedFigures {
    pub client_to_server: ackscope_protocol::decode::DirStats,
    pub server_to_client: ackscope_protocol::decode::DirStats,
    /// Datagrams of this client no decoder could read, both directions.
    pub malformed: u64,
}

/// Counters of the whole run that belong to no client.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RunCounters {
    /// Datagrams from new clients refused because `max_clients` were live (or no socket could be
    /// opened towards the server for them).
    pub refused_datagrams: u64,
    /// Errors reading a socket other than "nothing to read" (the kernel reports an unreachable
    /// server this way on a client's socket).
    pub receive_errors: u64,
    /// Copies still on a link when the run stopped (never forwarded).
    pub in_flight_at_stop: u64,
    /// Events recorded.
    pub events: u64,
}

/// What `ackscope proxy --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct ProxyReport {
    pub listen: String,
    pub forward: String,
    pub seed: u64,
    /// `--decode` as given, whether anything was decoded, the format read (what `auto` picked)
    /// and the probe's reason.
    pub decode: String,
    pub decoded: bool,
    pub decode_format: Option<String>,
    pub decode_probe: Option<String>,
    /// Wall seconds the proxy ran.
    pub seconds: f64,
    /// Clients seen, and how many of them expired.
    pub clients_seen: u64,
    pub clients_expired: u64,
    #[serde(flatten)]
    pub counters: RunCounters,
    /// Both directions over every client.
    pub client_to_server: DirSummary,
    pub server_to_client: DirSummary,
    /// Bytes of the session written with `--out`.
    pub session_bytes: Option<u64>,
    pub clients: Vec<ClientSummary>,
}

/// Sums of several clients' directions (percentiles are not summed: each total's delay is the
/// worst client's, its p50 the datagram-weighted mean of theirs).
pub fn total(dirs: impl Iterator<Item = DirSummary>) -> DirSummary {
    let mut t = DirSummary::default();
    let mut weighted_p50 = 0.0;
    for d in dirs {
        t.datagrams += d.datagrams;
        t.bytes += d.bytes;
        t.dropped += d.dropped;
        t.duplicated += d.duplicated;
        t.forwarded += d.forwarded;
        t.send_failed += d.send_failed;
        weighted_p50 += d.added_delay_p50_ms * d.forwarded as f64;
        t.added_delay_p99_ms = t.added_delay_p99_ms.max(d.added_delay_p99_ms);
        t.added_delay_max_ms = t.added_delay_max_ms.max(d.added_delay_max_ms);
    }
    if t.datagrams > 0 {
        t.dropped_percent = t.dropped as f64 * 100.0 / t.datagrams as f64;
    }
    if t.forwarded > 0 {
        t.added_delay_p50_ms = weighted_p50 / t.forwarded as f64;
    }
    t
}

impl ProxyReport {
    /// The report of a run that listened on `listen` (the bound address) with `cfg`.
    pub fn new(
        listen: SocketAddr,
        cfg: &super::config::ProxyConfig,
        outcome: &RelayOutcome,
        session_bytes: Option<u64>,
    ) -> Self {
        ProxyReport {
            listen: addr_text(listen),
            forward: addr_text(cfg.forward),
            seed: cfg.scenario.seed,
            decode: cfg.decode_name.clone(),
            decoded: false,
            decode_format: None,
            decode_probe: None,
            seconds: outcome.seconds,
            clients_seen: outcome.clients.len() as u64,
            clients_expired: outcome.clients.iter().filter(|c| c.expired).count() as u64,
            counters: outcome.counters.clone(),
            client_to_server: total(outcome.clients.iter().map(|c| c.client_to_server.clone())),
            server_to_client: total(outcome.clients.iter().map(|c| c.server_to_client.clone())),
            session_bytes,
            clients: outcome.clients.clone(),
        }
    }

    /// The human summary (without `--json`).
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "proxy {} -> {} for {:.1} s, seed {}, decode {}{}\n",
            self.listen,
            self.forward,
            self.seconds,
            self.seed,
            self.decode,
            match &self.decode_format {
                Some(f) => format!(" (read as {f})"),
                None => " (packet level)".into(),
            }
        );
        s += &format!("clients: {} seen, {} expired\n", self.clients_seen, self.clients_expired);
        let line = |name: &str, d: &DirSummary| {
            format!(
                "{name}: {} datagrams, {} bytes, dropped {} ({:.2} %), duplicated {}, forwarded {}, added delay p50 {:.3} ms p99 {:.3} ms{}\n",
                d.datagrams,
                d.bytes,
                d.dropped,
                d.dropped_percent,
                d.duplicated,
                d.forwarded,
                d.added_delay_p50_ms,
                d.added_delay_p99_ms,
                if d.send_failed > 0 { format!(", {} refused by the OS", d.send_failed) } else { String::new() }
            )
        };
        s += &line("client -> server", &self.client_to_server);
        s += &line("server -> client", &self.server_to_client);
        let c = &self.counters;
        if c.refused_datagrams + c.receive_errors + c.in_flight_at_stop > 0 {
            s += &format!(
                "refused (client limit) {}, receive errors {}, in flight at stop {}\n",
                c.refused_datagrams, c.receive_errors, c.in_flight_at_stop
            );
        }
        for cl in self.clients.iter().take(20) {
            s += &format!(
                "  client {} {}: up {} dropped {:.1} %, down {} dropped {:.1} %{}\n",
                cl.client,
                cl.addr,
                cl.client_to_server.datagrams,
                cl.client_to_server.dropped_percent,
                cl.server_to_client.datagrams,
                cl.server_to_client.dropped_percent,
                if cl.expired { " (expired)" } else { "" }
            );
        }
        for cl in self.clients.iter().take(20) {
            let Some(d) = &cl.decoded else { continue };
            for (name, x) in [("client", &d.client_to_server), ("server", &d.server_to_client)] {
                // No RTT sample (nothing acked, or a format the decoder could not read) is said
                // so, never printed as 0.0 ms (issue 27: RTT "no sample" where none exists).
                let rtt = if x.rtt_samples == 0 { "no sample".to_string() } else { format!("{:.1} ms", x.rtt_ms) };
                s += &format!(
                    "  client {} decoded, {name} sends: acked {}, rtt {rtt}, loss estimate {:.1} %, resends {} ({} spurious)\n",
                    cl.client, x.packets_acked, x.loss_percent, x.resends, x.spurious_resends
                );
            }
        }
        if self.clients.len() > 20 {
            s += &format!("  ... {} more clients (--json lists every one)\n", self.clients.len() - 20);
        }
        if let Some(b) = self.session_bytes {
            s += &format!("session written: {b} bytes\n");
        }
        s
    }
}

/// What the relay leaves when it stops: every client's figures and the run's counters.
#[derive(Debug, Clone)]
pub struct RelayOutcome {
    /// In client order.
    pub clients: Vec<ClientSummary>,
    pub counters: RunCounters,
    pub seconds: f64,
}

/// An address as the report writes it.
pub fn addr_text(a: SocketAddr) -> String {
    a.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_hold_their_values() {
        let mut prev = bucket_of(0);
        for v in 1..2_000_000u64 {
            let b = bucket_of(v);
            assert!(b == prev || b == prev + 1, "{v}: {prev} -> {b}");
            let (lo, hi) = bucket_range(b);
            assert!(lo <= v && v <= hi, "{v} in {b} = {lo}..={hi}");
            prev = b;
        }
        assert!(bucket_of(1 << 40) < u16::MAX);
    }

    #[test]
    fn quantiles_follow_nearest_rank_within_the_bucket_width() {
        let mut h = DelayHistogram::default();
        let samples: Vec<u64> = (0..10_000u64).map(|i| 50_000 + (i * 7919) % 2_000).collect();
        for &s in &samples {
            h.record(s);
        }
        let exact = ackscope_protocol::Percentiles::of(samples.iter().map(|&s| s as f64).collect());
        for q in [0.0, 0.5, 0.9, 0.99, 1.0] {
            let (got, want) = (h.quantile_us(q), exact.at(q));
            assert!((got - want).abs() <= want * 0.004 + 1.0, "q {q}: {got} vs {want}");
        }
        let mut small = DelayHistogram::default();
        for v in [3, 9, 12, 40] {
            small.record(v);
        }
        assert_eq!(small.quantile_us(0.5), 9.0);
        assert_eq!(small.quantile_us(1.0), 40.0);
        assert_eq!(DelayHistogram::default().quantile_us(0.5), 0.0);
    }
}

//! A bandwidth cap through the proxy queues as the simulated link does: a UDP sender on loopback
//! offers twice the cap, and the datagrams wait in the link's own queue (buffer bloat: their delay
//! grows to `queue_bytes / rate`), tail-dropped once it is full, leaving at the cap, not in an OS
//! socket buffer (the proxy reads every datagram as it comes). The same arrivals through a fresh
//! link built from the recording's seed and settings meet the identical fates and delays.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ackscope::proxy::rerun::{fates_of, mismatches, rerun_fates};
use ackscope_protocol::DropReason;

use super::*;

const CAP_KBPS: f64 = 800.0;
const QUEUE_BYTES: f64 = 16_384.0;
const PAYLOAD_BYTES: usize = 200;
/// Payload plus the 28 bytes of IPv4 + UDP the link counts (`link.bandwidth_kbps`'s doc).
const WIRE_BYTES: f64 = PAYLOAD_BYTES as f64 + 28.0;
/// Offered: twice the cap, for 1.5 s.
const OFFERED_PER_S: f64 = 2.0 * CAP_KBPS * 1000.0 / 8.0 / WIRE_BYTES;
const SEND_S: f64 = 1.5;

/// A sink that stamps each datagram's arrival: (index, instant).
struct StampingSink {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    got: Arc<Mutex<Vec<(u32, Instant)>>>,
    thread: Option<JoinHandle<()>>,
}

impl StampingSink {
    fn start() -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let _ = socket2::SockRef::from(&socket).set_recv_buffer_size(4 << 20);
        socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let addr = socket.local_addr().unwrap();
        let (stop, got) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(Vec::new())));
        let (s, g) = (stop.clone(), got.clone());
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !s.load(Ordering::Relaxed) {
                if let Ok(n) = socket.recv(&mut buf) {
                    let at = Instant::now();
                    if n == PAYLOAD_BYTES {
                        g.lock().unwrap().push((u32::from_le_bytes(buf[..4].try_into().unwrap()), at));
                    }
                }
            }
        });
        Self { addr, stop, got, thread: Some(thread) }
    }

    fn got(&self) -> Vec<(u32, Instant)> {
        self.got.lock().unwrap().clone()
    }
}

impl Drop for StampingSink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_bandwidth_cap_queues_in_the_link_as_the_simulated_link_does() {
    let sink = StampingSink::start();
    let sets =
        [format!("link.bandwidth_kbps={CAP_KBPS}"), format!("link.queue_bytes={QUEUE_BYTES}"), "seed=5".to_string()];
    let s = scenario(&sets.iter().map(String::as_str).collect::<Vec<_>>());
    let proxy = start(sink.addr, s.clone());
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.connect(proxy.local_addr()).unwrap();
    let mut rec = recording();

    // Sent in small bursts on a schedule (a late sender catches up), each stamped by its index.
    let total = (OFFERED_PER_S * SEND_S) as u32;
    let mut sent_at = Vec::with_capacity(total as usize);
    let t0 = Instant::now();
    let mut buf = [0u8; PAYLOAD_BYTES];
    for i in 0..total {
        let due = t0 + Duration::from_secs_f64(i as f64 / OFFERED_PER_S);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
            drain(&proxy, &mut rec);
        }
        buf[..4].copy_from_slice(&i.to_le_bytes());
        sent_at.push(Instant::now());
        socket.send(&buf).unwrap();
    }
    let done = until(&proxy, &mut rec, 15.0, |r| {
        let up = counts(r, Some(1), Dir::BtoA);
        up.sent == total as u64 && settled(r) && sink.got().len() as u64 == up.delivered
    });
    let up = counts(&rec, Some(1), Dir::BtoA);
    assert!(done, "not settled: {up:?}, sink {}", sink.got().len());
    let end = rec.events.last().unwrap().time;
    let outcome = proxy.stop().unwrap();
    assert_eq!(outcome.clients[0].client_to_server.send_failed, 0);

    // The proxy read every datagram (none waited or died in an OS buffer); every drop is the
    // link's queue's.
    let fates = fates_of(&rec.events);
    let up_fates: Vec<_> = fates.values().filter(|f| f.dir == Some(Dir::BtoA)).collect();
    assert_eq!(up_fates.len() as u32, total);
    assert!(up_fates.iter().all(|f| f.dropped.is_none_or(|r| r == DropReason::QueueFull)));
    // The same arrivals through a fresh link of the same seed and settings: identical fates.
    let rerun = rerun_fates(&s, &rec.events).unwrap();
    let wrong = mismatches(&fates, &rerun, end);
    assert!(
        wrong.is_empty(),
        "{} of {} fates differ from the simulated link's, first: {}",
        wrong.len(),
        fates.len(),
        wrong[0]
    );

    // Buffer bloat in the link's own decisions: a full queue is `QUEUE_BYTES` at the cap; the
    // delay climbs to it, drops begin only when it is reached, and no datagram waits longer.
    let bloat_us = QUEUE_BYTES * 8000.0 / CAP_KBPS;
    let tx_us = WIRE_BYTES * 8000.0 / CAP_KBPS;
    let delay_us = |f: &&ackscope::proxy::rerun::Fate| f.delivered.first().map(|d| d.1 as f64);
    let max_us = up_fates.iter().filter_map(delay_us).fold(0.0, f64::max);
    assert!(max_us <= bloat_us + tx_us && max_us >= bloat_us - 2.0 * tx_us, "largest queue delay {max_us} us");
    let first_drop = up_fates.iter().position(|f| f.dropped.is_some()).expect("the queue filled");
    let before = up_fates[..first_drop].iter().rev().find_map(delay_us).unwrap();
    assert!(before >= bloat_us - 2.0 * tx_us, "first drop with the queue at {before} of {bloat_us} us");
    let dropped = up_fates.iter().filter(|f| f.dropped.is_some()).count() as f64;
    // Twice the cap offered: about half is dropped once the queue is full.
    assert!((0.3..0.55).contains(&(dropped / total as f64)), "dropped {dropped} of {total}");

    // As the receiver measures it: each datagram's one-way time, its arrivals' rate.
    let got = sink.got();
    let mut one_way: BTreeMap<u32, f64> = BTreeMap::new();
    for (i, at) in &got {
        assert!(one_way.insert(*i, at.duration_since(sent_at[*i as usize]).as_secs_f64() * 1e3).is_none());
    }
    // Once the queue is full (after the first drop), the median wait is the full queue's.
    let mut full: Vec<f64> = one_way.range(first_drop as u32..).map(|(_, ms)| *ms).collect();
    full.sort_by(f64::total_cmp);
    let median_ms = full[full.len() / 2];
    let bloat_ms = bloat_us / 1000.0;
    println!("queue delay: link's largest {:.1} ms, receiver's median when full {median_ms:.1} ms, full queue {bloat_ms:.1} ms; dropped {dropped} of {total}", max_us / 1000.0);
    assert!((median_ms - bloat_ms).abs() <= 0.1 * bloat_ms, "median one-way {median_ms} ms, full queue {bloat_ms} ms");
    // The rate it arrives at, over the deliveries behind a full queue: the cap.
    let arrivals: Vec<Instant> = got.iter().filter(|(i, _)| *i as usize >= first_drop).map(|(_, at)| *at).collect();
    let span_s = arrivals.last().unwrap().duration_since(arrivals[0]).as_secs_f64();
    let kbps = (arrivals.len() - 1) as f64 * WIRE_BYTES * 8.0 / 1000.0 / span_s;
    println!("delivered {kbps:.0} kbps at a {CAP_KBPS} kbps cap");
    assert!((kbps - CAP_KBPS).abs() <= 0.1 * CAP_KBPS, "delivered {kbps} kbps at a {CAP_KBPS} kbps cap");
}

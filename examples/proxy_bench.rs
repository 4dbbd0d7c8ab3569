//! The proxy's timing and capacity against a direct path in the same run, on loopback.
//!
//! ```text
//! cargo run --release --example proxy_bench [SECONDS_PER_PHASE] [PHASES]   (defaults: 3, 1234)
//! ```
//!
//! One sender thread stamps each datagram with its send instant (one clock for the whole
//! process); one sink thread reads both paths and takes the one-way time. The paths interleave,
//! so both see the same machine at the same moment. Phases:
//! 1. added latency at 0 ms configured delay: the proxied one-way time minus the direct one's,
//!    p50 and p99, at 1,000 datagrams/s each path, the relay at the normal policy and realtime;
//! 2. a configured 50 ms delay under 1k, 10k and 20k datagrams/s: the proxied one-way time minus
//!    50 ms minus the direct path's median (its error), p1/p50/p99, beside the proxy's own measure;
//!    each rate with the relay thread at the normal policy and at `--realtime` (`REALTIME=0,1`,
//!    the default; `REALTIME=0` when the system refuses it);
//! 3. relay rate: rising offered rates through the proxy (0 ms) and directly, the datagrams each
//!    path lost; the highest rate the proxy relays without losing any it read or should have read,
//!    the relay at the normal policy and realtime (sender and sink at the normal policy);
//! 4. memory: resident size with 10,000 clients that came and expired, then with 1,000 live;
//! 5. a bandwidth cap (`link.bandwidth_kbps`, `link.queue_bytes`, 0 ms delay) offered below and
//!    above its rate: the delivered rate, the one-way time (the queue's delay: buffer bloat up
//!    to `queue_bytes / rate`) p50/p99 and the drops, beside what a full queue and the offered
//!    rate predict (phase `5`, not in the default run).
//!
//! Prints the machine's load average before and after: the figures mean little without it. The
//! benchmark's own sender and sink threads ask for SCHED_FIFO (where the system allows it, as the
//! proxy's `--realtime` does), so on a loaded machine the sink stamps a datagram when it arrives,
//! not when the sink next gets a core: the figures are the proxy's. The first line says whether
//! they got it.

#[path = "support/memory.rs"]
mod memory;

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ackscope::proxy::config::transparent_scenario;
use ackscope::proxy::{Proxy, ProxyConfig, RelayOutcome};
use ackscope_protocol::{Percentiles, Scenario};

const DIRECT: u8 = 0;
const PROXIED: u8 = 1;
const PAYLOAD_BYTES: usize = 64;

/// One-way times (ns) per path, and counts, as the sink saw them.
#[derive(Default)]
struct SinkLog {
    one_way_ns: [Vec<f64>; 2],
    received: [u64; 2],
    /// The first and last arrival (ns since the run's start) per path.
    span_ns: [(u64, u64); 2],
}

/// The sink: a socket and a thread reading it, logging per path.
struct Sink {
    addr: SocketAddr,
    log: Arc<Mutex<SinkLog>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sink {
    /// `rt`: the sink thread asks for SCHED_FIFO (see [`offer`]).
    fn start(t0: Instant, rt: bool) -> Sink {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).unwrap();
        let _ = s.set_recv_buffer_size(4 << 20);
        s.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into()).unwrap();
        let socket: UdpSocket = s.into();
        socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let addr = socket.local_addr().unwrap();
        let log = Arc::new(Mutex::new(SinkLog::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (l, st) = (log.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            if rt {
                measure_at_realtime();
            }
            let mut buf = [0u8; 2048];
            let mut local = SinkLog::default();
            while !st.load(Ordering::Relaxed) {
                if let Ok(n) = socket.recv(&mut buf) {
                    let now = t0.elapsed().as_nanos() as u64;
                    if n >= 9 {
                        let path = buf[0] as usize & 1;
                        let sent = u64::from_le_bytes(buf[1..9].try_into().unwrap());
                        local.one_way_ns[path].push(now.saturating_sub(sent) as f64);
                        if local.received[path] == 0 {
                            local.span_ns[path].0 = now;
                        }
                        local.span_ns[path].1 = now;
                        local.received[path] += 1;
                    }
                }
            }
            *l.lock().unwrap() = local;
        });
        Sink { addr, log, stop, thread: Some(thread) }
    }

    /// Stops the sink after the stragglers arrive; what it logged.
    fn finish(mut self) -> SinkLog {
        std::thread::sleep(Duration::from_millis(300));
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

fn sender(to: SocketAddr) -> UdpSocket {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).unwrap();
    let _ = s.set_send_buffer_size(4 << 20);
    s.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into()).unwrap();
    let socket: UdpSocket = s.into();
    socket.connect(to).unwrap();
    socket
}

/// Sends on `paths` in turn at `rate` datagrams/s in all for `seconds` (0 rate: as fast as it
/// can), each stamped with its path and send instant; how many it sent per path.
/// `rt`: the sending thread asks for SCHED_FIFO (phases 1 and 2; the relay-rate phase's sender
/// sends flat out and stays at the normal policy, as its sink does).
fn offer(t0: Instant, paths: &[(u8, &UdpSocket)], rate: f64, seconds: f64, rt: bool) -> [u64; 2] {
    // On a thread of its own: a real-time main thread would hand its policy to every thread it
    // starts, the proxy's relay thread among them.
    std::thread::scope(|s| {
        s.spawn(|| {
            if rt {
                measure_at_realtime();
            }
            offer_here(t0, paths, rate, seconds)
        })
        .join()
        .expect("the sender thread")
    })
}

fn offer_here(t0: Instant, paths: &[(u8, &UdpSocket)], rate: f64, seconds: f64) -> [u64; 2] {
    let mut sent = [0u64; 2];
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    let mut buf = [0u8; PAYLOAD_BYTES];
    let mut i = 0u64;
    loop {
        if rate > 0.0 {
            let due = start + Duration::from_secs_f64(i as f64 / rate);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        if Instant::now() >= end {
            return sent;
        }
        let (path, socket) = paths[(i % paths.len() as u64) as usize];
        buf[0] = path;
        buf[1..9].copy_from_slice(&(t0.elapsed().as_nanos() as u64).to_le_bytes());
        if socket.send(&buf).is_ok() {
            sent[path as usize] += 1;
        }
        i += 1;
    }
}

/// A proxy on loopback to `forward` with `sets` on the transparent scenario, its batches read
/// and dropped on a thread of their own (what `ackscope proxy` without --out does).
fn proxy(forward: SocketAddr, sets: &[&str], expire: Duration) -> Proxy {
    proxy_with(forward, sets, expire, ackscope::proxy::timer::SPIN, false).expect("the proxy starts")
}

fn proxy_with(
    forward: SocketAddr,
    sets: &[&str],
    expire: Duration,
    spin: Duration,
    realtime: bool,
) -> anyhow::Result<Proxy> {
    let mut s: Scenario = transparent_scenario();
    for a in sets {
        ackscope::params::overrides::apply(&mut s, a).unwrap();
    }
    let mut cfg = ProxyConfig::new("127.0.0.1:0".parse().unwrap(), forward, s);
    cfg.expire_after = expire;
    cfg.spin = spin;
    cfg.realtime = realtime;
    let p = Proxy::start(cfg)?;
    let batches = p.batches().clone();
    std::thread::spawn(move || while batches.recv().is_ok() {});
    Ok(p)
}

/// Puts the calling thread (the benchmark's sender or sink) on SCHED_FIFO where the system allows
/// it: a measuring thread waiting for a core would add its wait to the figures.
fn measure_at_realtime() -> bool {
    ackscope::proxy::priority::request_realtime().is_ok()
}

/// A comma-separated list of numbers from the environment variable `name`, or `default`.
fn env_list(name: &str, default: Vec<u64>) -> Vec<u64> {
    std::env::var(name).map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect()).unwrap_or(default)
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn added_latency(t0: Instant, seconds: f64) {
    println!("1. added latency at 0 ms configured delay, 1,000 datagrams/s each path, {seconds} s:");
    for realtime in env_list("REALTIME", vec![0, 1]) {
        let sink = Sink::start(t0, true);
        let spin = ackscope::proxy::timer::SPIN;
        let p = match proxy_with(sink.addr, &[], Duration::from_secs(30), spin, realtime == 1) {
            Ok(p) => p,
            Err(e) => {
                println!("   relay realtime: not measured: {e:#}");
                continue;
            }
        };
        let (direct, via) = (sender(sink.addr), sender(p.local_addr()));
        offer(t0, &[(DIRECT, &direct), (PROXIED, &via)], 2000.0, seconds, true);
        let log = sink.finish();
        let own = p.stop().unwrap();
        let d = Percentiles::of(log.one_way_ns[0].clone());
        let v = Percentiles::of(log.one_way_ns[1].clone());
        println!("   relay {}:", if realtime == 1 { "realtime" } else { "normal" });
        println!(
            "   direct one-way   p50 {:7.1} us  p99 {:7.1} us  ({} datagrams)",
            d.at(0.5) / 1e3,
            d.at(0.99) / 1e3,
            d.count()
        );
        println!(
            "   proxied one-way  p50 {:7.1} us  p99 {:7.1} us  ({} datagrams)",
            v.at(0.5) / 1e3,
            v.at(0.99) / 1e3,
            v.count()
        );
        println!(
            "   added            p50 {:7.1} us  p99 {:7.1} us   (proxy's own measure, read to sent: p50 {:.1} us, p99 {:.1} us)",
            (v.at(0.5) - d.at(0.5)) / 1e3,
            (v.at(0.99) - d.at(0.99)) / 1e3,
            own.clients[0].client_to_server.added_delay_p50_ms * 1e3,
            own.clients[0].client_to_server.added_delay_p99_ms * 1e3,
        );
    }
}

fn delay_accuracy(t0: Instant, seconds: f64) {
    println!(
        "2. a configured 50 ms delay: proxied one-way - 50 ms - direct p50 (ms), direct path at 1,000/s beside it:"
    );
    let spins = env_list("SPIN_US", vec![ackscope::proxy::timer::SPIN.as_micros() as u64]);
    let realtimes = env_list("REALTIME", vec![0, 1]);
    for rate in [1_000.0, 10_000.0, 20_000.0] {
        for &spin in &spins {
            for &realtime in &realtimes {
                let sink = Sink::start(t0, true);
                let spin_d = Duration::from_micros(spin);
                let p = match proxy_with(
                    sink.addr,
                    &["link.latency_ms=50"],
                    Duration::from_secs(30),
                    spin_d,
                    realtime == 1,
                ) {
                    Ok(p) => p,
                    Err(e) => {
                        println!("   {rate:>6.0}/s relay realtime: not measured: {e:#}");
                        continue;
                    }
                };
                let (direct, via) = (sender(sink.addr), sender(p.local_addr()));
                // One direct datagram per `k` proxied ones.
                let k = (rate / 1000.0) as usize;
                let mut paths = vec![(PROXIED, &via); k];
                paths.push((DIRECT, &direct));
                let sent = offer(t0, &paths, rate + 1000.0, seconds, true);
                let log = sink.finish();
                let own: RelayOutcome = p.stop().unwrap();
                let base = Percentiles::of(log.one_way_ns[0].clone()).at(0.5);
                let err = Percentiles::of(log.one_way_ns[1].iter().map(|x| x - 50e6 - base).collect());
                let c = &own.clients[0].client_to_server;
                let label = format!(
                    "{}{}",
                    if realtimes.len() > 1 || realtime == 1 {
                        if realtime == 1 {
                            " relay realtime"
                        } else {
                            " relay normal  "
                        }
                    } else {
                        ""
                    },
                    if spins.len() > 1 { format!(" spin {spin:>3} us") } else { String::new() }
                );
                println!(
                    "   {:>6.0}/s{label}: error p1 {:+.3}  p50 {:+.3}  p99 {:+.3}  max {:+.3}   received {}/{}   (proxy's own: p50 {:.3} p99 {:.3} ms)",
                    rate,
                    ms(err.at(0.01)),
                    ms(err.at(0.5)),
                    ms(err.at(0.99)),
                    ms(err.max()),
                    log.received[1],
                    sent[1],
                    c.added_delay_p50_ms,
                    c.added_delay_p99_ms
                );
            }
        }
    }
}

fn relay_rate(t0: Instant, seconds: f64) {
    println!(
        "3. relay rate, 0 ms delay, {PAYLOAD_BYTES}-byte datagrams, {seconds} s per rate (lost = sent - received):"
    );
    for realtime in env_list("REALTIME", vec![0, 1]) {
        let mut best = 0.0;
        let label = if realtime == 1 { "realtime" } else { "normal" };
        for rate in [50_000.0, 100_000.0, 150_000.0, 200_000.0, 0.0] {
            let sink = Sink::start(t0, false);
            let direct = sender(sink.addr);
            let d_sent = offer(t0, &[(DIRECT, &direct)], rate, seconds / 2.0, false)[0];
            let d_log = sink.finish();
            let sink = Sink::start(t0, false);
            let spin = ackscope::proxy::timer::SPIN;
            let p = match proxy_with(sink.addr, &[], Duration::from_secs(30), spin, realtime == 1) {
                Ok(p) => p,
                Err(e) => {
                    println!("   relay realtime: not measured: {e:#}");
                    break;
                }
            };
            let via = sender(p.local_addr());
            let v_sent = offer(t0, &[(PROXIED, &via)], rate, seconds, false)[1];
            let v_log = sink.finish();
            let own = p.stop().unwrap();
            let c = &own.clients[0].client_to_server;
            let achieved = v_sent as f64 / seconds;
            let lost = v_sent - v_log.received[1];
            println!(
                "   relay {label:<8} offered {:>9}: direct sent {:>8} lost {:>6} | proxied sent {:>8} ({:>7.0}/s) proxy read {:>8} forwarded {:>8} lost {:>6} (OS refused {})",
                if rate > 0.0 { format!("{rate:.0}/s") } else { "max".into() },
                d_sent,
                d_sent - d_log.received[0],
                v_sent,
                achieved,
                c.datagrams,
                c.forwarded,
                lost,
                c.send_failed
            );
            if lost == 0 && achieved > best {
                best = achieved;
            }
        }
        println!("   relay {label}: highest rate relayed without loss: {best:.0} datagrams/s");
    }
}

fn memory_figure() {
    let sink = Sink::start(Instant::now(), false);
    let p = proxy(sink.addr, &[], Duration::from_secs(1));
    let base = memory::status_mib("VmRSS:");
    let payload = [0u8; PAYLOAD_BYTES];
    // 10,000 new clients in groups of 250, each group answered before the next comes (a new client
    // costs the proxy a socket, a bind, a connect and a registration: a burst of 10,000 would
    // overflow its receive buffer before it has read them).
    let mut seen = 0u64;
    for group in 0..40 {
        // Each client on an address of its own in 127/8: a closed socket's port may be handed to
        // the next one at once, which the proxy would rightly take for the same client.
        let sockets: Vec<UdpSocket> =
            (0..250).map(|i| UdpSocket::bind(format!("127.1.{group}.{}:0", i + 1)).unwrap()).collect();
        for s in &sockets {
            s.send_to(&payload, p.local_addr()).unwrap();
            s.send_to(&payload, p.local_addr()).unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while seen < (group + 1) * 250 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
            let st = p.status().unwrap();
            seen = (st.live_clients + st.expired_summaries) as u64;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut st = p.status().unwrap();
    while (st.live_clients > 0 || st.expired_summaries < 10_000) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        st = p.status().unwrap();
    }
    let expired = memory::status_mib("VmRSS:");
    let st_expired = st;
    let live: Vec<UdpSocket> = (0..1_000).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
    let sent = AtomicU64::new(0);
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        for s in &live {
            s.send_to(&payload, p.local_addr()).unwrap();
            sent.fetch_add(1, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let with_live = memory::status_mib("VmRSS:");
    let st_live = p.status().unwrap();
    let own = p.stop().unwrap();
    drop(sink);
    println!("4. memory (resident, this whole process: proxy, sink, the clients' sockets):");
    println!("   after start                         {base:7.1} MiB");
    println!("   10,000 clients came and expired     {expired:7.1} MiB   {st_expired:?}");
    println!("   + 1,000 live clients for 3 s        {with_live:7.1} MiB   {st_live:?}");
    println!(
        "   peak {:.1} MiB; {} clients in the report, {} datagrams from the live ones",
        memory::status_mib("VmHWM:"),
        own.clients.len(),
        sent.load(Ordering::Relaxed)
    );
}

fn bandwidth_cap(t0: Instant, seconds: f64) {
    const CAP_KBPS: f64 = 1000.0;
    const QUEUE_BYTES: f64 = 32_768.0;
    // The link counts IPv4 + UDP headers (28 bytes) with the payload.
    let wire_bytes = PAYLOAD_BYTES as f64 + 28.0;
    let full_ms = QUEUE_BYTES * 8.0 / CAP_KBPS;
    println!(
        "5. bandwidth cap {CAP_KBPS} kbps, queue {QUEUE_BYTES} bytes (full: {full_ms:.1} ms), 0 ms delay, \
         {PAYLOAD_BYTES}-byte datagrams ({wire_bytes} on the wire), {seconds} s per load:"
    );
    for load in [0.5, 1.5, 2.0, 4.0] {
        let rate = load * CAP_KBPS * 1000.0 / 8.0 / wire_bytes;
        let sink = Sink::start(t0, true);
        let sets = [format!("link.bandwidth_kbps={CAP_KBPS}"), format!("link.queue_bytes={QUEUE_BYTES}")];
        let p = proxy(sink.addr, &sets.iter().map(String::as_str).collect::<Vec<_>>(), Duration::from_secs(30));
        let via = sender(p.local_addr());
        let sent = offer(t0, &[(PROXIED, &via)], rate, seconds, true)[1];
        // The queue drains after the sender stops: wait for its last copy before counting.
        let deadline = Instant::now() + Duration::from_secs(10);
        while p.status().map(|s| s.in_flight > 0).unwrap_or(false) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let log = sink.finish();
        let own = p.stop().unwrap();
        let c = &own.clients[0].client_to_server;
        let (first, last) = log.span_ns[1];
        let span_s = (last.saturating_sub(first)) as f64 / 1e9;
        let kbps = log.received[1].saturating_sub(1) as f64 * wire_bytes * 8.0 / 1000.0 / span_s.max(1e-9);
        let q = Percentiles::of(log.one_way_ns[1].clone());
        // Above the cap the link sends at the cap for the whole run and one full queue after it;
        // the rest is dropped.
        let leaves = (CAP_KBPS * 1000.0 / 8.0 * seconds + QUEUE_BYTES) / wire_bytes;
        let predicted = (sent as f64 - leaves).max(0.0);
        println!(
            "   offered {:>4.0} kbps ({load}x, {rate:>5.0}/s): delivered {kbps:>6.1} kbps; one-way p50 {:>6.1} ms p99 {:>6.1} ms; \
             dropped {} of {sent} ({:.1} %; at the cap plus a full queue: {predicted:.0}), all by the link's queue: {}",
            load * CAP_KBPS,
            ms(q.at(0.5)),
            ms(q.at(0.99)),
            c.dropped,
            100.0 * c.dropped as f64 / sent.max(1) as f64,
            c.dropped == sent - log.received[1] && c.send_failed == 0
        );
    }
}

fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3.0);
    let phases = std::env::args().nth(2).unwrap_or_else(|| "1234".into());
    let t0 = Instant::now();
    let measuring_rt = std::thread::spawn(measure_at_realtime).join().unwrap_or(false);
    println!(
        "proxy_bench: {seconds} s per phase, load average before: {}; phases 1-2 sender and sink threads {}",
        load(),
        if measuring_rt { "at SCHED_FIFO" } else { "at the normal policy (SCHED_FIFO refused)" }
    );
    if phases.contains('1') {
        added_latency(t0, seconds);
    }
    if phases.contains('2') {
        delay_accuracy(t0, seconds);
    }
    if phases.contains('3') {
        relay_rate(t0, seconds);
    }
    if phases.contains('4') {
        memory_figure();
    }
    if phases.contains('5') {
        bandwidth_cap(t0, seconds);
    }
    println!("load average after: {}", load());
}

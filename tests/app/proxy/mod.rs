//! The conditioning proxy (`ackscope::proxy`, `ackscope proxy`) with real sockets on loopback:
//! an echo server behind it, clients in front, the recording checked against what was sent and
//! against a re-run of its link decisions. Every wait is a condition with a deadline.

mod bandwidth;
mod cli;
mod clients;
mod decode;
mod echo;
mod enet;
mod enet_trail;
mod kcp;
mod kcptun;
mod robustness;

use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ackscope::model::limits::LiveLimits;
use ackscope::proxy::config::transparent_scenario;
use ackscope::proxy::{Proxy, ProxyConfig, Recording};
use ackscope_protocol::{ClientId, Dir, EventKind, Scenario};

/// What a server got: source address and bytes, in arrival order.
type Log = Arc<Mutex<Vec<(SocketAddr, Vec<u8>)>>>;
/// When each datagram of a log arrived (read from the socket), in the same order.
type Stamps = Arc<Mutex<Vec<Instant>>>;

/// A UDP server on loopback that sends every datagram back to its sender (or only keeps it) and
/// logs what it got: source address and bytes.
pub struct Server {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    log: Log,
    stamps: Stamps,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// An echo server on `bind` (e.g. "127.0.0.1:0").
    pub fn echo(bind: &str) -> Self {
        Self::start(bind, true)
    }

    /// A server that only logs.
    pub fn sink(bind: &str) -> Self {
        Self::start(bind, false)
    }

    fn start(bind: &str, echo: bool) -> Self {
        let socket = UdpSocket::bind(bind).expect("bind the server");
        // A burst of a hundred clients' datagrams released together by their links overflows
        // the default receive buffer (~200 KB of small datagrams' kernel overhead): room for it,
        // so only the link drops.
        let _ = socket2::SockRef::from(&socket).set_recv_buffer_size(4 << 20);
        socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let addr = socket.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let log: Log = Arc::new(Mutex::new(Vec::new()));
        let stamps: Stamps = Arc::new(Mutex::new(Vec::new()));
        let (s, l, st) = (stop.clone(), log.clone(), stamps.clone());
        let thread = std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !s.load(Ordering::Relaxed) {
                if let Ok((n, from)) = socket.recv_from(&mut buf) {
                    let at = Instant::now();
                    if echo {
                        let _ = socket.send_to(&buf[..n], from);
                    }
                    l.lock().unwrap().push((from, buf[..n].to_vec()));
                    st.lock().unwrap().push(at);
                }
            }
        });
        Self { addr, stop, log, stamps, thread: Some(thread) }
    }

    /// When each datagram of [`Self::log`] was read, in the same order (a lock apart: compare
    /// lengths or take both once the traffic is over).
    pub fn arrivals(&self) -> Vec<Instant> {
        self.stamps.lock().unwrap().clone()
    }

    pub fn received(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    pub fn log(&self) -> Vec<(SocketAddr, Vec<u8>)> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A client socket connected to the proxy, with a thread collecting what comes back.
pub struct Client {
    pub socket: UdpSocket,
    stop: Arc<AtomicBool>,
    got: Arc<Mutex<Vec<Vec<u8>>>>,
    stamps: Stamps,
    thread: Option<JoinHandle<()>>,
}

impl Client {
    /// Sends `probe` every 20 ms until a datagram comes back (the proxy is up), at most 10 s;
    /// the probes sent.
    pub fn send_until_answered(&self, probe: &[u8]) -> usize {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut probes = 0;
        while self.count() == 0 && Instant::now() < deadline {
            self.send(probe);
            probes += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(self.count() > 0, "the proxy never answered");
        probes
    }

    pub fn to(proxy: SocketAddr) -> Self {
        let bind = if proxy.is_ipv6() { "[::1]:0" } else { "127.0.0.1:0" };
        let socket = UdpSocket::bind(bind).unwrap();
        let _ = socket2::SockRef::from(&socket).set_recv_buffer_size(1 << 20);
        socket.connect(proxy).unwrap();
        let reader = socket.try_clone().unwrap();
        reader.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let got = Arc::new(Mutex::new(Vec::new()));
        let stamps: Stamps = Arc::new(Mutex::new(Vec::new()));
        let (s, g, st) = (stop.clone(), got.clone(), stamps.clone());
        let thread = std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !s.load(Ordering::Relaxed) {
                if let Ok(n) = reader.recv(&mut buf) {
                    let at = Instant::now();
                    g.lock().unwrap().push(buf[..n].to_vec());
                    st.lock().unwrap().push(at);
                }
            }
        });
        Self { socket, stop, got, stamps, thread: Some(thread) }
    }

    /// When each datagram of [`Self::received`] was read, in the same order.
    pub fn arrivals(&self) -> Vec<Instant> {
        self.stamps.lock().unwrap().clone()
    }

    pub fn send(&self, bytes: &[u8]) {
        self.socket.send(bytes).expect("send to the proxy");
    }

    pub fn received(&self) -> Vec<Vec<u8>> {
        self.got.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.got.lock().unwrap().len()
    }

    /// The address the proxy sees this client by.
    pub fn local_addr(&self) -> SocketAddr {
        self.socket.local_addr().unwrap()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `ackscope proxy --listen LISTEN --forward FORWARD` then `args`, its report (stdout) and its
/// messages (stderr) piped for `wait_with_output` or [`stop_proxy`].
pub fn spawn_proxy(listen: SocketAddr, forward: SocketAddr, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["proxy", "--listen", &listen.to_string(), "--forward", &forward.to_string()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ackscope proxy")
}

/// `ackscope peer --side SIDE --bind BIND --connect CONNECT` then `args`, output piped.
pub fn spawn_peer(side: &str, bind: SocketAddr, connect: SocketAddr, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["peer", "--side", side, "--bind", &bind.to_string(), "--connect", &connect.to_string()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ackscope peer")
}

/// The JSON a finished `ackscope` process printed, after asserting it succeeded (`what` names it).
pub fn json_of_output(out: Output, what: &str) -> serde_json::Value {
    assert!(out.status.success(), "{what} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// Ends a proxy from [`spawn_proxy`] once every party of its traffic has finished, rather than
/// waiting out its `--seconds` (a cap it should not reach): SIGTERM, after which it finishes its
/// session file and prints its report as at the deadline. Asserts it exited cleanly.
pub fn stop_proxy(child: Child) -> Output {
    #[cfg(unix)]
    {
        use nix::sys::signal::{kill, Signal};
        use nix::unistd::Pid;
        let pid = i32::try_from(child.id()).expect("a pid");
        kill(Pid::from_raw(pid), Signal::SIGTERM).expect("SIGTERM the proxy");
    }
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "the proxy: {}", String::from_utf8_lossy(&done.stderr));
    done
}

/// The payload of datagram `i`: its index, then bytes drawn from it, `20 + i % 200` long, so an
/// altered or misdelivered datagram is caught by [`index_of`].
pub fn payload(i: u32) -> Vec<u8> {
    let mut v = i.to_le_bytes().to_vec();
    let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..16 + i % 200 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x as u8);
    }
    v
}

/// The index a payload made by [`payload`] carries, if it is exactly that payload.
pub fn index_of(bytes: &[u8]) -> Option<u32> {
    let i = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
    (payload(i) == bytes).then_some(i)
}

/// The scenario without a file, with `--set`-style overrides.
pub fn scenario(sets: &[&str]) -> Scenario {
    let mut s = transparent_scenario();
    for a in sets {
        ackscope::params::overrides::apply(&mut s, a).unwrap();
    }
    s
}

/// A proxy on loopback (the family of `forward`) to `forward`, keeping bytes.
pub fn start(forward: SocketAddr, scenario: Scenario) -> Proxy {
    let listen = if forward.is_ipv6() { "[::1]:0" } else { "127.0.0.1:0" };
    let mut cfg = ProxyConfig::new(listen.parse().unwrap(), forward, scenario);
    cfg.keep_bytes = true;
    Proxy::start(cfg).expect("start the proxy")
}

pub fn recording() -> Recording {
    Recording::new(LiveLimits::default())
}

/// Takes in every batch the proxy has handed over so far.
pub fn drain(proxy: &Proxy, rec: &mut Recording) {
    for b in proxy.batches().try_iter() {
        rec.take(b);
    }
}

/// Reads batches into `rec` until `cond` holds or `secs` pass; whether it held.
pub fn until(proxy: &Proxy, rec: &mut Recording, secs: f64, mut cond: impl FnMut(&Recording) -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    loop {
        drain(proxy, rec);
        if cond(rec) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        if let Ok(b) = proxy.batches().recv_timeout(Duration::from_millis(20)) {
            rec.take(b);
        }
    }
}

/// Counts per direction of the recording: (sent, dropped, delivered copies, duplicated).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Counts {
    pub sent: u64,
    pub dropped: u64,
    pub delivered: u64,
    pub duplicated: u64,
}

pub fn counts(rec: &Recording, client: Option<ClientId>, dir: Dir) -> Counts {
    let mut c = Counts::default();
    for e in rec.events.iter().filter(|e| client.is_none_or(|k| e.client == k)) {
        match e.kind {
            EventKind::LinkSent { dir: d, .. } if d == dir => c.sent += 1,
            EventKind::LinkDropped { dir: d, .. } if d == dir => c.dropped += 1,
            EventKind::LinkDelivered { dir: d, .. } if d == dir => c.delivered += 1,
            EventKind::LinkDuplicated { dir: d, .. } if d == dir => c.duplicated += 1,
            _ => {}
        }
    }
    c
}

/// Every send of the recording has met its end (dropped, or each of its copies delivered).
pub fn settled(rec: &Recording) -> bool {
    Dir::BOTH.iter().all(|&d| {
        let c = counts(rec, None, d);
        c.dropped + c.delivered == c.sent + c.duplicated
    })
}

//! A minimal conditioning UDP relay for the real-library decoder tests: one client and one
//! server on loopback, each direction dropping a seeded share and delaying the rest, and feeding
//! a passive [`Decoder`] every datagram as it arrives and its fate when decided (a drop at once, a
//! delivery when the datagram is forwarded).
//!
//! The client sends to [`Relay::client_addr`]; the relay forwards from a socket of its own to the
//! server, whose replies go back to the client's address. Two reader threads only queue what
//! their sockets receive; the relay thread stamps arrivals, decides fates and forwards each
//! datagram at its due instant, waiting on the queue with a timeout until the next one.
#![allow(dead_code)]

use std::collections::BinaryHeap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ackscope_protocol::decode::{Datagram, DecodeChoice, Decoder, Fate};
use ackscope_protocol::{Dir, SimTime};
use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError};

/// What the relay did, per direction (`Dir::index`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RelayCounts {
    pub datagrams: [u64; 2],
    pub dropped: [u64; 2],
    /// Extra delay beyond the configured one at forwarding, microseconds (max).
    pub max_lateness_us: u64,
}

/// A running relay; [`Relay::stop`] joins its threads and hands back the decoder.
pub struct Relay {
    client_addr: SocketAddr,
    server_side_addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<(Decoder, RelayCounts)>>,
}

/// Seeded drop decisions (xorshift64*).
struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A datagram waiting for its delivery instant (earliest first, then arrival order).
#[derive(PartialEq, Eq)]
struct Due {
    at_us: u64,
    uid: u64,
    dir: Dir,
    bytes: Vec<u8>,
}
impl Ord for Due {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.at_us, o.uid).cmp(&(self.at_us, self.uid))
    }
}
impl PartialOrd for Due {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

fn reader(
    socket: UdpSocket,
    dir: Dir,
    tx: crossbeam_channel::Sender<(Instant, Dir, SocketAddr, Vec<u8>)>,
    stop: Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; 65_536];
    socket.set_read_timeout(Some(Duration::from_millis(20))).expect("read timeout");
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, from)) = socket.recv_from(&mut buf) {
            if tx.send((Instant::now(), dir, from, buf[..n].to_vec())).is_err() {
                return;
            }
        }
    }
}

impl Relay {
    /// Relays between a client (whoever sends to [`Self::client_addr`]) and `server`, dropping
    /// `loss` of the datagrams each way (seeded) and delaying the others by `delay`.
    pub fn start(server: SocketAddr, loss: f64, delay: Duration, seed: u64, choice: DecodeChoice) -> Relay {
        let front = UdpSocket::bind("127.0.0.1:0").expect("bind the relay's client side");
        let back = UdpSocket::bind("127.0.0.1:0").expect("bind the relay's server side");
        back.connect(server).expect("connect to the server");
        let client_addr = front.local_addr().unwrap();
        let server_side_addr = back.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = unbounded();
        let readers =
            [(front.try_clone().unwrap(), Dir::AtoB), (back.try_clone().unwrap(), Dir::BtoA)].map(|(s, dir)| {
                let (tx, stop) = (tx.clone(), stop.clone());
                std::thread::spawn(move || reader(s, dir, tx, stop))
            });
        drop(tx);
        let stop2 = stop.clone();
        let thread = std::thread::spawn(move || {
            let out = relay_loop(front, back, rx, loss, delay, seed, choice, &stop2);
            for r in readers {
                let _ = r.join();
            }
            out
        });
        Relay { client_addr, server_side_addr, stop, thread: Some(thread) }
    }

    pub fn client_addr(&self) -> SocketAddr {
        self.client_addr
    }

    /// The address the server sees the relayed client at (for a server that only talks to
    /// one address).
    pub fn server_side_addr(&self) -> SocketAddr {
        self.server_side_addr
    }

    /// Stops the relay (datagrams still queued are dropped unreported) and returns its decoder.
    pub fn stop(mut self) -> (Decoder, RelayCounts) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().expect("running").join().expect("relay thread")
    }
}

#[allow(clippy::too_many_arguments)]
fn relay_loop(
    front: UdpSocket,
    back: UdpSocket,
    rx: Receiver<(Instant, Dir, SocketAddr, Vec<u8>)>,
    loss: f64,
    delay: Duration,
    seed: u64,
    choice: DecodeChoice,
    stop: &AtomicBool,
) -> (Decoder, RelayCounts) {
    let start = Instant::now();
    let us = |t: Instant| t.saturating_duration_since(start).as_micros() as u64;
    let mut decoder = Decoder::new(choice);
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut counts = RelayCounts::default();
    let mut queue: BinaryHeap<Due> = BinaryHeap::new();
    let mut client: Option<SocketAddr> = None;
    let mut uid = 0u64;
    let delay_us = delay.as_micros() as u64;
    while !stop.load(Ordering::Relaxed) {
        let now = us(Instant::now());
        while queue.peek().is_some_and(|d| d.at_us <= now) {
            let d = queue.pop().unwrap();
            let sent = match d.dir {
                Dir::AtoB => back.send(&d.bytes).is_ok(),
                Dir::BtoA => client.is_some_and(|c| front.send_to(&d.bytes, c).is_ok()),
            };
            let at = us(Instant::now());
            counts.max_lateness_us = counts.max_lateness_us.max(at - d.at_us);
            decoder.fate(d.uid, if sent { Fate::Delivered { at: SimTime(at) } } else { Fate::Dropped });
        }
        let wait =
            queue.peek().map_or(Duration::from_millis(20), |d| Duration::from_micros(d.at_us.saturating_sub(now)));
        match rx.recv_timeout(wait.min(Duration::from_millis(20))) {
            Ok((arrived, dir, from, bytes)) => {
                if dir == Dir::AtoB {
                    client = Some(from);
                }
                uid += 1;
                let t = us(arrived);
                counts.datagrams[dir.index()] += 1;
                decoder.datagram(Datagram { uid, time: SimTime(t), dir, client: 1, bytes: &bytes });
                if rng.unit() < loss {
                    counts.dropped[dir.index()] += 1;
                    decoder.fate(uid, Fate::Dropped);
                } else {
                    queue.push(Due { at_us: t + delay_us, uid, dir, bytes });
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    decoder.finish_probe();
    (decoder, counts)
}

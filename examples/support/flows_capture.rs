//! A capture of many flows for the capture examples: `clients` clients of one server, each
//! sending one unique datagram a second to the server and getting one back, every copy delivered
//! 30 ms later, on two interfaces (`sent`, `delivered`) as a capture on both sides of a link
//! would be (the shape of `tests/app/capture_flows.rs`'s, longer).

use std::io::{BufWriter, Write};
use std::net::Ipv4Addr;
use std::path::Path;

use ackscope::capture::{CaptureWriter, Udp};

const SERVER: (Ipv4Addr, u16) = (Ipv4Addr::new(10, 0, 0, 1), 7000);

fn client(k: u32) -> (Ipv4Addr, u16) {
    (Ipv4Addr::new(10, 2, (k >> 8) as u8, k as u8), 40_000 + (k % 1000) as u16)
}

/// Writes the capture at `path`, a second at a time (each second's packets sorted by time); the
/// packets written.
pub fn generate(path: &Path, clients: u32, secs: u64) -> u64 {
    let out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    let mut w = CaptureWriter::new(out, "many flows").expect("writer");
    let sent = w.add_interface("sent", "as sent").expect("interface");
    let delivered = w.add_interface("delivered", "as delivered").expect("interface");
    // Each second's last copy (client `clients`' reply, 70 ms after its send at most 1 s in)
    // lands before the next second's second half: packets are written in order per window
    // of two seconds, carried over.
    let mut pending: Vec<(u64, u32, Udp)> = Vec::new();
    let mut written = 0u64;
    for s in 0..=secs {
        if s < secs {
            for k in 1..=clients {
                let t = s * 1_000_000 + u64::from(k) * (1_000_000 / u64::from(clients + 1));
                let up = Udp { src: client(k), dst: SERVER, payload: format!("up {k} {s}").into_bytes() };
                let down = Udp { src: SERVER, dst: client(k), payload: format!("down {k} {s}").into_bytes() };
                pending.push((t, sent, up.clone()));
                pending.push((t + 30_000, delivered, up));
                pending.push((t + 40_000, sent, down.clone()));
                pending.push((t + 70_000, delivered, down));
            }
        }
        pending.sort_by_key(|p| p.0);
        // Everything before the next second's first send is final.
        let upto = (s + 1) * 1_000_000;
        let cut = pending.partition_point(|p| p.0 < upto);
        for (t, i, udp) in pending.drain(..cut) {
            w.write_udp(i, t, &udp, "").expect("write");
            written += 1;
        }
    }
    w.into_inner().flush().expect("flush");
    written
}

//! A large capture for the capture examples (capture_open, capture_scale): a 10-minute Glenn run
//! at 250 packets/s each way (5 % loss, 10 ms jitter each way) exported as pcapng (`sent` and
//! `delivered` interfaces, packet comments), then repeated end to end with its times shifted
//! until the file holds enough (each repeat 10 minutes and 5 s after the one before, so no
//! delivered copy can match a send of another repeat).

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use ackscope::capture::{write_capture, CaptureReader, CaptureWriter, Udp};
use ackscope_protocol::{Dir, Scenario, Strategy};

/// How much to write: at least this many MB, or exactly this many packets.
#[derive(Clone, Copy)]
pub enum Target {
    Megabytes(u64),
    Packets(u64),
}

/// The run repeated: Glenn at 250 packets/s each way, 5 % loss and 10 ms jitter each way.
pub fn scenario() -> Scenario {
    let mut s = Scenario { strategy: Strategy::Glenn, send_rate_pps: 250.0, seed: 1, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 5.0;
        l.jitter_ms = 10.0;
    }
    s
}

/// What writing the capture measured.
pub struct Generated {
    pub packets: u64,
    pub bytes: u64,
    /// The session's own export (`write_capture`, to memory): packets and seconds.
    pub export_packets: u64,
    pub export_s: f64,
    /// Writing the whole file through the pcapng writer (to disk), in seconds.
    pub write_s: f64,
}

/// Writes the capture at `path`, printing what it wrote.
pub fn generate(path: &Path, target: Target) -> Generated {
    let t = Instant::now();
    let secs = 600.0;
    let run = ackscope::report::run(&scenario(), secs);
    let e = Instant::now();
    let mut one = Vec::new();
    let summary = write_capture(&run.session, &mut one).expect("export");
    let export_s = e.elapsed().as_secs_f64();
    let mut reader = CaptureReader::new(&one[..], "generated").expect("read back");
    let mut packets = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.expect("a packet");
        let link = reader.interfaces()[p.interface as usize].linktype;
        let udp: Udp = p.udp(link).expect("IPv4/UDP");
        packets.push((p.interface, p.time_ns / 1000, udp, p.comment));
    }
    let interfaces = reader.interfaces().to_vec();
    let w0 = Instant::now();
    let out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    let mut w = CaptureWriter::new(out, "a Glenn run repeated").expect("writer");
    for i in &interfaces {
        w.add_interface(&i.name, &i.description).expect("interface");
    }
    let period_us = (secs * 1e6) as u64 + 5_000_000;
    // Whole repeats until the size is reached, or packets until the count is.
    let limit = match target {
        Target::Megabytes(mb) => (mb * 1_000_000).div_ceil(one.len() as u64) * packets.len() as u64,
        Target::Packets(n) => n,
    };
    let mut written = 0u64;
    'file: for repeat in 0.. {
        for (iface, time_us, udp, comment) in &packets {
            if written >= limit {
                break 'file;
            }
            w.write_udp(*iface, time_us + repeat * period_us, udp, comment).expect("write");
            written += 1;
        }
    }
    w.into_inner().flush().expect("flush");
    let write_s = w0.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    println!(
        "generated {:.0} MB, {written} packets: a {secs} s run ({} packets, {:.1} MB) repeated, in {:.1} s",
        bytes as f64 / 1e6,
        packets.len(),
        one.len() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    Generated { packets: written, bytes, export_packets: summary.sent + summary.delivered, export_s, write_s }
}

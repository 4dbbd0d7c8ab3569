//! Captures of many flows: copies are never paired across clients, and a capture of 1,000
//! flows opens with memory bounded by the matching window, not by the file.
//!
//! The captures are written here with ackscope's pcapng writer, as a capture on both sides of a
//! link would be: interface 0 every datagram as sent, interface 1 every copy as delivered.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::Path;

use ackscope::capture::import::{ImportOptions, Importer, MATCH_WINDOW_NS};
use ackscope::capture::records;
use ackscope::capture::{CaptureWriter, Udp};
use ackscope_protocol::decode::DecodeChoice;
use ackscope_protocol::{ClientId, Dir, EventKind, TraceFate};

use crate::capture_import::temp_path;

const SERVER: (Ipv4Addr, u16) = (Ipv4Addr::new(10, 0, 0, 1), 7000);

fn client(k: u32) -> (Ipv4Addr, u16) {
    (Ipv4Addr::new(10, 2, (k >> 8) as u8, k as u8), 40_000 + (k % 1000) as u16)
}

/// One packet of a capture being written: time (µs), interface, datagram.
type Pkt = (u64, u32, Udp);

fn write(path: &Path, mut packets: Vec<Pkt>) {
    packets.sort_by_key(|p| p.0);
    let mut w = CaptureWriter::new(std::fs::File::create(path).unwrap(), "test").unwrap();
    let sent = w.add_interface("sent", "as sent").unwrap();
    let delivered = w.add_interface("delivered", "as delivered").unwrap();
    for (t, i, udp) in &packets {
        w.write_udp(if *i == 0 { sent } else { delivered }, *t, udp, "").unwrap();
    }
}

#[test]
fn identical_datagrams_of_two_clients_are_never_each_others_copies() {
    // Two clients of one server send the same bytes (a constant keepalive) 20 ms apart each;
    // client 1's all arrive 10 ms later, client 2's are all lost. Its sends share the server
    // end with client 1's on the same interface: they are sends, never client 1's copies.
    let beat = b"keepalive".to_vec();
    let mut packets = Vec::new();
    for n in 0..200u64 {
        let t = 1_000 + n * 20_000;
        let c1 = Udp { src: client(1), dst: SERVER, payload: beat.clone() };
        packets.push((t, 0, c1.clone()));
        packets.push((t + 10_000, 1, c1));
        packets.push((t + 5_000, 0, Udp { src: client(2), dst: SERVER, payload: beat.clone() }));
    }
    let path = temp_path("two-clients-identical.pcapng");
    write(&path, packets);

    let recs = records::load(&path).unwrap();
    let to_server = recs.trace.dir(Dir::BtoA);
    println!("{:?}", recs.info);
    // Client 1's sends, each delivered once 10 ms later; client 2's stream has no receiver
    // side (nothing of it arrived), so it gives no fates: it is one-sided, never client 1's.
    assert_eq!(to_server.len(), 200, "client 1's sends only: {:?}", recs.info);
    for p in to_server.iter() {
        assert_eq!((p.sent.0 - 1_000) % 20_000, 0, "a send of client 1: {:?}", p.sent);
        assert_eq!(p.fate, TraceFate::Delivered(vec![10_000]), "a copy 10 ms after its send, at {:?}", p.sent);
    }
    assert_eq!(recs.info.paired_flows, 1, "client 1's path only: {:?}", recs.info);
    assert_eq!((recs.info.one_sided_flows, recs.info.one_sided_packets), (1, 200), "{:?}", recs.info);

    // The import (`summary`, the window) keeps the same rule: client 1 lost nothing, client 2
    // everything it was seen to send.
    let opts = ImportOptions { decode: DecodeChoice::None, ..Default::default() };
    let mut importer = Importer::open(&path, &opts).unwrap();
    while !importer.next_batch(1 << 12).is_empty() {}
    let summary = importer.summary(&path);
    assert_eq!(summary.clients.len(), 2);
    let truth = |k: usize| summary.clients[k].client_to_server.truth;
    let (t1, t2) = (truth(0), truth(1));
    println!("{t1:?} / {t2:?}");
    assert!(t1.two_sided, "{t1:?}");
    assert_eq!((t1.delivered, t1.dropped), (200, 0), "{t1:?}");
    assert_eq!(t2.delivered, 0, "client 2's datagrams were never delivered: {t2:?}");
}

/// A capture of `clients` flows, each sending one unique datagram a second to the server and
/// getting one back, for `secs` seconds, every copy delivered 30 ms later; the datagrams sent.
fn many_flows(path: &Path, clients: u32, secs: u64) -> u64 {
    let mut packets = Vec::new();
    for s in 0..secs {
        for k in 1..=clients {
            let t = s * 1_000_000 + u64::from(k) * 997;
            let up = Udp { src: client(k), dst: SERVER, payload: format!("up {k} {s}").into_bytes() };
            let down = Udp { src: SERVER, dst: client(k), payload: format!("down {k} {s}").into_bytes() };
            packets.push((t, 0, up.clone()));
            packets.push((t + 30_000, 1, up));
            packets.push((t + 40_000, 0, down.clone()));
            packets.push((t + 70_000, 1, down));
        }
    }
    write(path, packets);
    u64::from(clients) * secs * 2
}

#[test]
fn a_capture_of_a_thousand_flows_opens_with_memory_bounded_by_the_window() {
    let (clients, secs) = (1000, 30);
    let path = temp_path("thousand-flows.pcapng");
    let sends = many_flows(&path, clients, secs);
    let opts = ImportOptions { decode: DecodeChoice::Auto, ..Default::default() };
    let mut importer = Importer::open(&path, &opts).unwrap();
    let (mut events, mut held_max, mut stats) = (0usize, 0usize, 0u64);
    // Per client: the uids of its sends, lowest, highest and how many.
    let mut uids: BTreeMap<ClientId, (u64, u64, u64)> = BTreeMap::new();
    loop {
        let batch = importer.next_batch(4096);
        held_max = held_max.max(importer.held());
        if batch.is_empty() {
            break;
        }
        events += batch.len();
        for e in &batch {
            match e.kind {
                EventKind::Stats { .. } => stats += 1,
                EventKind::LinkSent { uid, .. } => {
                    let u = uids.entry(e.client).or_insert((uid, uid, 0));
                    *u = (u.0.min(uid), u.1.max(uid), u.2 + 1);
                }
                _ => {}
            }
        }
    }
    let summary = importer.summary(&path);
    // What the window of capture time holds: the sends of MATCH_WINDOW_NS and one second of
    // slack either side (a batch is read past the window's edge), each with its copy's input.
    let per_second = u64::from(clients) * 2;
    let window_s = MATCH_WINDOW_NS / 1_000_000_000 + 2;
    let bound = (2 * per_second * window_s) as usize;
    println!(
        "{} flows, {sends} sends, {events} events; held at most {held_max} (bound {bound})",
        summary.clients.len()
    );
    assert_eq!(summary.clients.len(), clients as usize, "each flow a client");
    for c in &summary.clients {
        for t in [&c.client_to_server.truth, &c.server_to_client.truth] {
            assert!(t.two_sided, "client {}: {t:?}", c.client);
            assert_eq!((t.delivered, t.dropped), (secs, 0), "client {}: {t:?}", c.client);
        }
    }
    assert!(held_max <= bound, "held {held_max} > {bound}: memory grows with the file, not the window");
    // Each client's sends have dense uids: its ledger and packet index are tables from its first
    // uid to its last, which spanned every flow's sends when the uids counted over all flows.
    assert_eq!(uids.len(), clients as usize);
    for (client, (lo, hi, n)) in &uids {
        assert_eq!(hi - lo + 1, *n, "client {client:?}: {n} sends over uids {lo}..={hi}");
    }
    // The decoder's estimates are sampled around each client's traffic, not every 100 ms for
    // every client (20 a second each, five times the traffic).
    assert!(stats <= 3 * sends * 2, "{stats} stats samples for {} datagrams", sends * 2);
    assert!(held_max as u64 * 3 < sends, "held {held_max} of {sends}: the window is a small part of the file");
}

#[test]
fn the_first_look_reads_the_ends_a_full_read_sees_once_per_file() {
    use ackscope::capture::import::read::Packets;
    use std::collections::BTreeSet;
    let path = temp_path("first-look.pcapng");
    many_flows(&path, 40, 3);
    let opts = ImportOptions::default();
    let pairs = opts.first_look.pairs(&path).unwrap();
    // Every pair of ends a full read of the datagrams sees, each once (the order ignored).
    let key = |(x, y): (std::net::SocketAddr, std::net::SocketAddr)| (x.min(y), x.max(y));
    let mut full = BTreeSet::new();
    let mut packets = Packets::open(&path).unwrap();
    while let Some(p) = packets.next_udp() {
        full.insert(key((p.src, p.dst)));
    }
    let looked: BTreeSet<_> = pairs.iter().copied().map(key).collect();
    assert_eq!(looked.len(), pairs.len(), "each pair once");
    assert_eq!(looked, full);
    assert_eq!(full.len(), 40, "one pair per flow (both directions, both interfaces)");
    // A clone of the options (the window's lane naming, then its reader) reads the file once.
    let again = opts.clone().first_look.pairs(&path).unwrap();
    assert!(std::sync::Arc::ptr_eq(&pairs, &again), "read again");
    // The same path rewritten with other flows is read anew.
    many_flows(&path, 7, 2);
    assert_eq!(opts.first_look.pairs(&path).unwrap().len(), 7);
}

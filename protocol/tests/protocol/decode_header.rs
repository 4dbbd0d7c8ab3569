//! The described-header decoder as README shows it: the made-up game's RON description parses,
//! is valid, and reads that game's packets: acks (bit 0 the packet before the ack), RTT from the
//! ack's arrival, and resends of its message id.

use ackscope_protocol::decode::{Datagram, DecodeArg, DecodeChoice, Decoder, Fate, FormatKind, HeaderSpec};
use ackscope_protocol::{Dir, EventKind, SimTime};

/// The RON block of README's "Passive decoding" section.
fn readme_spec() -> HeaderSpec {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let at = readme.find("name: \"skirmish\"").expect("README shows the skirmish header");
    let start = readme[..at].rfind("```ron\n").unwrap() + 7;
    let end = start + readme[start..].find("```").unwrap();
    ron::from_str(&readme[start..end]).unwrap_or_else(|e| panic!("README's header description: {e}"))
}

/// A Skirmish packet: magic, sequence, ack, 16 ack bits, message id (big-endian).
fn packet(seq: u16, ack: u16, bits: u16, msg: u16) -> Vec<u8> {
    [0x534Bu16, seq, ack, bits, msg].iter().flat_map(|v| v.to_be_bytes()).chain([0xAA; 20]).collect()
}

#[test]
fn readmes_header_description_reads_the_games_packets() {
    let spec = readme_spec();
    spec.validate().unwrap();
    let arg: DecodeArg = "header:skirmish.ron".parse().unwrap();
    let choice = arg.choice(Some(spec)).unwrap();
    assert!(matches!(choice, DecodeChoice::Format(FormatKind::Header(_))));
    let mut d = Decoder::new(choice);
    let send = |d: &mut Decoder, uid, t_ms: u64, dir, bytes: Vec<u8>, deliver: bool| {
        d.datagram(Datagram { uid, time: SimTime(t_ms * 1000), dir, client: 1, bytes: &bytes });
        d.fate(uid, if deliver { Fate::Delivered { at: SimTime((t_ms + 40) * 1000) } } else { Fate::Dropped });
    };
    // The client sends 10, 11 (lost), 12 and resends message 7 in 12; the server acks 12 with
    // bit 1 set: 12 itself, and 10 (bit 0 names 11, not received).
    send(&mut d, 1, 0, Dir::AtoB, packet(10, 0, 0, 7), true);
    send(&mut d, 2, 20, Dir::AtoB, packet(11, 0, 0, 8), false);
    send(&mut d, 3, 40, Dir::AtoB, packet(12, 0, 0, 7), true);
    send(&mut d, 4, 90, Dir::BtoA, packet(500, 12, 0b10, 1), true);
    let acked: Vec<_> = d
        .take_events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::PacketAcked { side, seq } => Some((e.time.0, side, seq)),
            _ => None,
        })
        .collect();
    use ackscope_protocol::Side::A;
    assert_eq!(acked, vec![(130_000, A, 12), (130_000, A, 10)]);
    let s = d.client_stats(1).unwrap().dirs[0];
    assert_eq!((s.rtt_samples, s.rtt_min_ms, s.rtt_max_ms), (2, 90.0, 130.0));
    assert_eq!((s.resends, s.spurious_resends), (1, 1), "message 7 again after its first copy arrived");
    let records = d.take_records();
    let names: Vec<_> = records[0].fields.iter().map(|f| (f.name.as_str(), f.start_bit, f.bits)).collect();
    assert_eq!(
        names[..5],
        [("protocol id", 0, 16), ("sequence", 16, 16), ("ack", 32, 16), ("ack bits", 48, 16), ("message id", 64, 16)]
    );
}

#[test]
fn decode_names_are_parsed_and_bad_ones_refused_with_the_valid_ones() {
    for name in ackscope_protocol::decode::DECODE_NAMES {
        assert!(name.parse::<DecodeArg>().is_ok(), "{name}");
    }
    let e = "enets".parse::<DecodeArg>().unwrap_err();
    assert!(e.contains("enet") && e.contains("header:FILE"), "{e}");
    assert!("header:".parse::<DecodeArg>().is_err());
    let mut bad = readme_spec();
    bad.ack_bits.as_mut().unwrap().bytes = 9;
    let e = DecodeArg::HeaderFile("g.ron".into()).choice(Some(bad)).unwrap_err();
    assert!(e.contains("g.ron") && e.contains("ack_bits.bytes"), "{e}");
}

//! Reused buffers change nothing: a payload written or decoded into a buffer that held something
//! else (the endpoints recycle the buffers of acked and delivered messages) is exactly the one
//! written or decoded into a fresh buffer.

use ackscope_protocol::workload::{make_payload, make_payload_into};
use ackscope_protocol::*;
use proptest::prelude::{any, prop, prop_assert_eq, proptest, ProptestConfig};

/// Dirty buffers of the given lengths (content and capacity unlike any payload's).
fn dirty(lengths: &[usize]) -> Vec<Vec<u8>> {
    lengths.iter().map(|&n| vec![0xA5; n]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn a_payload_made_in_a_used_buffer_is_the_fresh_one(id in any::<u64>(), bytes in 0u32..600, old in 0usize..700) {
        for side in Side::BOTH {
            let mut buf = vec![0x5A; old];
            make_payload_into(side, id, bytes, &mut buf);
            prop_assert_eq!(&buf, &make_payload(side, id, bytes));
        }
    }

    #[test]
    fn decoding_into_used_buffers_gives_what_a_fresh_decode_gives(
        reliable in prop::collection::vec((any::<u16>(), 8u32..400), 0..6),
        unreliable in prop::collection::vec(8u32..300, 0..4),
        spare in prop::collection::vec(0usize..500, 0..8),
        previous in prop::collection::vec(8u32..100, 0..3),
        corrupt in prop::option::of((any::<prop::sample::Index>(), any::<u8>())),
    ) {
        let f = MessageFactory::default();
        let mut ids: Vec<u16> = reliable.iter().map(|(id, _)| *id).collect();
        ids.sort_unstable();
        ids.dedup();
        let msg = |reliable: bool, id: u64, n: u32| f.wrap(reliable, make_payload(Side::A, id, n)).unwrap();
        let mut p = DecodedPayload {
            reliable: ids.iter().zip(&reliable).map(|(&id, &(_, n))| (id, msg(true, id as u64, n))).collect(),
            unreliable: unreliable.iter().enumerate().map(|(i, &n)| msg(false, 1000 + i as u64, n)).collect(),
        };
        let mut bytes = encode_payload(&f, &mut p).unwrap();
        if let Some((at, x)) = corrupt {
            let i = at.index(bytes.len());
            bytes[i] ^= x;
        }
        // What the last packet left: messages whose buffers go to the spares first.
        let mut out = DecodedPayload {
            reliable: previous.iter().enumerate().map(|(i, &n)| (i as u16, msg(true, i as u64, n))).collect(),
            unreliable: previous.iter().map(|&n| msg(false, 7, n)).collect(),
        };
        let mut spare = dirty(&spare);
        let reused = decode_payload_reusing(&f, &bytes, &mut out, &mut spare);
        match decode_payload(&f, &bytes) {
            Ok(fresh) => {
                prop_assert_eq!(reused, Ok(()));
                prop_assert_eq!(&out, &fresh);
                if corrupt.is_none() {
                    prop_assert_eq!(&out, &p);
                }
            }
            Err(e) => prop_assert_eq!(reused, Err(e)),
        }
    }
}

/// Over a whole glenn run with loss (resends, duplicates dropped, acked buffers reused), every
/// message delivered passes the receiver's content check: no reused buffer's old bytes ever
/// reach the wire or the application.
#[test]
fn glenn_run_over_loss_delivers_intact_messages() {
    for seed in [3, 17, 2024] {
        let scenario = Scenario { seed, strategy: Strategy::Glenn, ..Scenario::default() };
        let mut sim = Simulation::new(scenario);
        sim.run_until(SimTime(30_000_000));
        let m = reliable_metrics(sim.events());
        assert!(m.delivered > 500, "seed {seed}: {m:?}");
        assert_eq!(m.corrupted, 0, "seed {seed}: {m:?}");
        assert_eq!(m.duplicated, 0, "seed {seed}: {m:?}");
    }
}

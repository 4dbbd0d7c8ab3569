//! Re-making a proxy recording's link decisions from its events and seed.
//!
//! A link's decisions are a function of the seed, the client, the send instants, the sizes and the
//! settings in force, all of which the recording holds (`LinkSent` with time and size, each
//! change as a `ParamChanged` at its instant). Replaying them through fresh links built by the same
//! rules ([`super::apply`]) gives each datagram's fate again; [`mismatches`] compares the two. What
//! was still in flight when the proxy stopped has a fate in the re-run only: deliveries after the
//! recording's end are left out of the comparison.

use std::collections::BTreeMap;

use ackscope_protocol::{
    Action, ClientId, Dir, DropReason, Event, EventKind, Link, ParamChange, Scenario, SimTime, RUN_WIDE,
};
use anyhow::Result;

use super::apply::{apply_to_pair, client_links, client_seed, pair_of};

/// What became of one datagram on its link.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fate {
    pub dir: Option<Dir>,
    pub sent_at: SimTime,
    pub bytes: u32,
    pub dropped: Option<DropReason>,
    pub duplicated: bool,
    /// Each copy delivered: when, after what link delay (µs).
    pub delivered: Vec<(SimTime, u32)>,
}

/// Every datagram's fate by `(client, uid)`, from link events.
pub fn fates_of(events: &[Event]) -> BTreeMap<(ClientId, u64), Fate> {
    let mut out: BTreeMap<(ClientId, u64), Fate> = BTreeMap::new();
    for e in events {
        match e.kind {
            EventKind::LinkSent { dir, uid, bytes } => {
                let f = out.entry((e.client, uid)).or_default();
                (f.dir, f.sent_at, f.bytes) = (Some(dir), e.time, bytes);
            }
            EventKind::LinkDropped { uid, reason, .. } => {
                out.entry((e.client, uid)).or_default().dropped = Some(reason)
            }
            EventKind::LinkDuplicated { uid, .. } => out.entry((e.client, uid)).or_default().duplicated = true,
            EventKind::LinkDelivered { uid, delay_us, .. } => {
                out.entry((e.client, uid)).or_default().delivered.push((e.time, delay_us))
            }
            _ => {}
        }
    }
    out
}

/// The fates the links of `scenario` give the datagrams the recording's events sent, re-made
/// from scratch (every copy delivered, however long after the recording's end).
pub fn rerun_fates(scenario: &Scenario, events: &[Event]) -> Result<BTreeMap<(ClientId, u64), Fate>> {
    let mut run_wide = Scenario { script: Vec::new(), ..scenario.clone() };
    let mut links: BTreeMap<ClientId, [Link; 2]> = BTreeMap::new();
    let mut out = Vec::new();
    for e in events {
        match &e.kind {
            EventKind::ParamChanged { name, value } => {
                let action = Action::Set(ParamChange::parse(name, value));
                let targets: Vec<ClientId> = if e.client == RUN_WIDE {
                    if let Some((pair, _)) = apply_to_pair(&run_wide, run_wide.link.clone(), &action)? {
                        run_wide.link = pair;
                    }
                    links.keys().copied().collect()
                } else {
                    vec![e.client]
                };
                for k in targets {
                    let Some(l) = links.get_mut(&k) else { continue };
                    let pair = pair_of(l[0].config(), l[1].config());
                    if let Some((pair, _)) = apply_to_pair(&run_wide, pair, &action)? {
                        for d in Dir::BOTH {
                            if l[d.index()].config() != pair.get(d) {
                                l[d.index()].set_config_at(e.time, *pair.get(d));
                            }
                        }
                    }
                }
            }
            EventKind::LinkSent { dir, uid, bytes } => {
                let l = links.entry(e.client).or_insert_with(|| {
                    let pair = client_links(&run_wide, e.client);
                    let seed = client_seed(run_wide.seed, e.client);
                    [Link::new(Dir::AtoB, pair.a_to_b, seed), Link::new(Dir::BtoA, pair.b_to_a, seed)]
                });
                let first = out.len();
                l[dir.index()].send(e.time, *uid, vec![0; *bytes as usize], &mut out);
                for o in &mut out[first..] {
                    o.client = e.client;
                }
            }
            _ => {}
        }
    }
    for (&client, l) in &mut links {
        for link in l.iter_mut() {
            let first = out.len();
            while link.pop_due(SimTime(u64::MAX), &mut out).is_some() {}
            for o in &mut out[first..] {
                o.client = client;
            }
        }
    }
    Ok(fates_of(&out))
}

/// Where a recording's fates differ from a re-run's: one line per datagram, none when they agree.
/// Deliveries the re-run makes after `end` (the recording's last instant) are not compared.
pub fn mismatches(
    recorded: &BTreeMap<(ClientId, u64), Fate>,
    rerun: &BTreeMap<(ClientId, u64), Fate>,
    end: SimTime,
) -> Vec<String> {
    let mut out = Vec::new();
    for (key, want) in rerun {
        let mut want = want.clone();
        want.delivered.retain(|(at, _)| *at <= end);
        match recorded.get(key) {
            Some(got) if *got == want => {}
            got => out.push(format!("client {} uid {}: recorded {got:?}, re-run {want:?}", key.0, key.1)),
        }
    }
    for key in recorded.keys().filter(|k| !rerun.contains_key(k)) {
        out.push(format!("client {} uid {}: recorded but not sent in the re-run", key.0, key.1));
    }
    out
}

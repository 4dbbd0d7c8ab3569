//! `auto`: which format does this traffic speak? Every candidate reads the first datagrams; the
//! first (in the candidates' order) that reads all of them wins, else the one that reads the most
//! if that is at least three in four, else none. The datagrams and fates seen meanwhile are held
//! and replayed through the winner, so nothing is lost to probing.

use serde::{Deserialize, Serialize};

use crate::event::{ClientId, Dir, SimTime};

use super::choice::FormatKind;
use super::datagram::{Datagram, Fate};

/// Datagrams probed before deciding.
pub const PROBE_DATAGRAMS: usize = 8;

/// What probing picked and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// None: no format fits; the traffic is shown at packet level.
    pub picked: Option<FormatKind>,
    /// One line: the pick and the evidence ("enet: 8 of 8 datagrams read as enet; kcp 0 of 8, ...").
    pub reason: String,
    /// Per candidate, in the order tried: its name and how many of the probed datagrams it read.
    pub scores: Vec<(String, u32)>,
    pub probed: u32,
}

/// Held until the decision, then replayed.
pub(super) enum Input {
    Datagram { uid: u64, time: SimTime, dir: Dir, client: ClientId, bytes: Vec<u8> },
    Fate { uid: u64, fate: Fate },
}

pub(super) struct Prober {
    candidates: Vec<FormatKind>,
    ok: Vec<u32>,
    seen: u32,
    backlog: Vec<Input>,
}

impl Prober {
    pub fn new(candidates: Vec<FormatKind>) -> Self {
        let ok = vec![0; candidates.len()];
        Self { candidates, ok, seen: 0, backlog: Vec::new() }
    }

    pub fn datagram(&mut self, d: &Datagram<'_>) {
        self.seen += 1;
        for (k, ok) in self.candidates.iter().zip(&mut self.ok) {
            // A fresh reader per datagram: formats that keep state (reassembly) judge each
            // datagram on its own here.
            if k.make().parse(d.dir, d.bytes).is_ok() {
                *ok += 1;
            }
        }
        let bytes = d.bytes.to_vec();
        self.backlog.push(Input::Datagram { uid: d.uid, time: d.time, dir: d.dir, client: d.client, bytes });
    }

    pub fn fate(&mut self, uid: u64, fate: Fate) {
        self.backlog.push(Input::Fate { uid, fate });
    }

    pub fn ready(&self) -> bool {
        self.seen as usize >= PROBE_DATAGRAMS
    }

    pub fn finish(self) -> (ProbeResult, Vec<Input>) {
        let n = self.seen;
        let scores: Vec<(String, u32)> =
            self.candidates.iter().zip(&self.ok).map(|(k, ok)| (k.name().to_string(), *ok)).collect();
        let all = self.candidates.iter().zip(&self.ok).position(|(_, ok)| n > 0 && *ok == n);
        let best = self
            .ok
            .iter()
            .enumerate()
            .filter(|(_, ok)| n > 0 && **ok * 4 >= n * 3)
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))
            .map(|(i, _)| i);
        let pick = all.or(best);
        let evidence: Vec<String> = scores.iter().map(|(name, ok)| format!("{name} {ok}/{n}")).collect();
        let reason = match pick {
            Some(i) => format!(
                "{}: read {} of the first {n} datagrams{} (scores: {})",
                scores[i].0,
                self.ok[i],
                if all.is_some() { ", the first format to read them all" } else { ", the most of any format" },
                evidence.join(", ")
            ),
            None if n == 0 => "no datagrams to probe".to_string(),
            None => format!(
                "no format read 3 in 4 of the first {n} datagrams: packet level only (scores: {})",
                evidence.join(", ")
            ),
        };
        let picked = pick.map(|i| self.candidates[i].clone());
        (ProbeResult { picked, reason, scores, probed: n }, self.backlog)
    }
}

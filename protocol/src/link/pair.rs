//! Both directions of a run's link (`link.a_to_b`, `link.b_to_a`, `link.trace`), as a scenario
//! holds them, and the link each direction runs.

use serde::{Deserialize, Serialize};

use super::{Link, LinkConfig, Replay};
use crate::event::Dir;

/// Both directions of the link.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinkPair {
    pub a_to_b: LinkConfig,
    pub b_to_a: LinkConfig,
    /// `link.trace`: a capture or session file whose link this run replays packet by packet
    /// ([`super::trace`]); the app reads it when a run starts into [`Self::replay`].
    /// Left out of files while unset, so scenarios without it read and write as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The trace read for `trace` (in memory only).
    #[serde(skip)]
    pub replay: Replay,
}

impl LinkPair {
    pub fn get(&self, dir: Dir) -> &LinkConfig {
        match dir {
            Dir::AtoB => &self.a_to_b,
            Dir::BtoA => &self.b_to_a,
        }
    }
    pub fn get_mut(&mut self, dir: Dir) -> &mut LinkConfig {
        match dir {
            Dir::AtoB => &mut self.a_to_b,
            Dir::BtoA => &mut self.b_to_a,
        }
    }

    /// The link of `dir` for a run seeded `seed`: the seeded lossy link of its settings,
    /// replaying the trace the app loaded for `link.trace` when there is one ([`super::trace`]).
    pub fn build(&self, dir: Dir, seed: u64) -> Link {
        let link = Link::new(dir, *self.get(dir), seed);
        match self.replay.trace() {
            Some(t) => link.replaying(t.clone()),
            None => link,
        }
    }
}

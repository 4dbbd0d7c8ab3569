//! Recordings written as JSON-lines event streams (`ackscope export --events`): the header says
//! what each lane runs and who its clients are, then each lane's events follow in time order.

use std::path::Path;

use anyhow::Result;

use ackscope_protocol::Event;

use super::jsonl::{write, LaneHeader, StreamHeader, VERSION};
use crate::lane::LaneInfo;

/// One lane to write: its description and its events. A pair of borrows rather than the model's
/// `Recording`, so the file formats stay below the model (which builds recordings from them).
pub type LaneEvents<'a> = (&'a LaneInfo, &'a [Event]);

/// The stream header describing `lanes` (their first protocol, its wire format, the clients the
/// first lane named).
pub fn header_of(lanes: &[LaneEvents<'_>]) -> StreamHeader {
    let lane = |(info, _): &LaneEvents<'_>| {
        let p = info.first();
        LaneHeader { protocol: Some(p.name.clone()), wire: Some(p.wire.name().to_string()) }
    };
    StreamHeader {
        ackscope_events: VERSION,
        producer: format!("ackscope {}", env!("CARGO_PKG_VERSION")),
        lane: lanes.first().map(lane).unwrap_or_default(),
        more_lanes: lanes.iter().skip(1).map(lane).collect(),
        clients: lanes.first().map(|(info, _)| info.named_clients().cloned().collect()).unwrap_or_default(),
    }
}

/// Writes every event of `lanes` to `path` as a JSON-lines stream, atomically (a failed write
/// leaves the previous file); the events written.
pub fn save_events(lanes: &[LaneEvents<'_>], path: &Path) -> Result<u64> {
    let mut bytes = Vec::new();
    let events: Vec<&[Event]> = lanes.iter().map(|&(_, events)| events).collect();
    let n = write(&mut bytes, &header_of(lanes), &events)?;
    super::write_atomic(path, &bytes, None)?;
    Ok(n)
}

//! Recordings written as JSON-lines event streams (`ackscope export --events`): the header says
//! what each lane runs and who its clients are, then each lane's events follow in time order.

use std::path::Path;

use anyhow::Result;

use super::jsonl::{write, LaneHeader, StreamHeader, VERSION};
use crate::model::Recording;

/// The stream header describing `lanes` (their first protocol, its wire format, the clients the
/// first lane named).
pub fn header_of(lanes: &[Recording]) -> StreamHeader {
    let lane = |r: &Recording| {
        let p = r.info.first();
        LaneHeader { protocol: Some(p.name.clone()), wire: Some(p.wire.name().to_string()) }
    };
    StreamHeader {
        ackscope_events: VERSION,
        producer: format!("ackscope {}", env!("CARGO_PKG_VERSION")),
        lane: lanes.first().map(lane).unwrap_or_default(),
        more_lanes: lanes.iter().skip(1).map(lane).collect(),
        clients: lanes.first().map(|r| r.info.named_clients().cloned().collect()).unwrap_or_default(),
    }
}

/// Writes every event of `lanes` to `path` as a JSON-lines stream, atomically (a failed write
/// leaves the previous file); the events written.
pub fn save_events(lanes: &[Recording], path: &Path) -> Result<u64> {
    let mut bytes = Vec::new();
    let events: Vec<&[ackscope_protocol::Event]> = lanes.iter().map(Recording::events).collect();
    let n = write(&mut bytes, &header_of(lanes), &events)?;
    super::write_atomic(path, &bytes, None)?;
    Ok(n)
}

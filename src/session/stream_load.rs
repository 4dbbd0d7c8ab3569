//! Opening a session while it is parsed: the header first, then the events block by block, so
//! the window draws the part read so far instead of waiting for the whole file.
//!
//! A 10-million-event session took 9 s to read, check and parse and 3 s more to index before
//! the window showed anything. Here the header (scenario, actions) is parsed and validated first
//! and sent as [`Loading::Header`]; the events follow as [`Loading::Events`] blocks, in order, as
//! soon as the parser workers ([`super::fast_load`]) have them, and the window indexes them while
//! the rest is parsed. The checksum, which must cover the whole text, is computed at the same
//! time on a thread of its own: a mismatch ends the load with the same error as [`super::load`]
//! (the window then drops what it showed).
//!
//! Files not laid out as ackscope writes them, scenarios, A/B sessions and any line the fast
//! parser refuses take the ordinary path, [`super::load_with_progress`]'s, and come back whole.

use std::path::Path;
use std::sync::Arc;

use ackscope_protocol::Event;
use anyhow::{anyhow, Result};

use super::{check_sum, check_version, default_verify, fast_load, finish_header_of, from_text_with, read_text};
use super::{Phase, Progress, Session, Verify, CHECKSUM_KEY};

/// What a streaming load hands over before it ends, in this order.
pub enum Loading {
    /// The session without its events, checked and validated, and how many events follow (the
    /// event section's line count: a bound, exact for files ackscope writes).
    Header(Box<Session>, usize),
    /// The next events, in order.
    Events(Vec<Event>),
}

/// Loads `path`, handing the header and then its events to `send` as they are parsed.
///
/// `Ok(None)`: the events all went through `send` and were verified. `Ok(Some(session))`: the
/// file was read the ordinary way and this is all of it; whatever `send` got before is not the
/// file's and must be replaced by it. An error: the file is refused (what `send` got too).
pub fn load_streaming(path: &Path, progress: &Arc<Progress>, mut send: impl FnMut(Loading)) -> Result<Option<Session>> {
    let origin = path.display().to_string();
    let text = read_text(path, &origin, Some(progress))?;
    let verify = default_verify();
    let version = check_version(&text, &origin)?;
    let streamable = fast_load::split(&text).filter(|(header, section)| {
        header.ab.is_none()
            && header.ab_events.is_empty()
            && !section.is_empty()
            && (verify == Verify::Skip || text.rfind(CHECKSUM_KEY).is_some())
    });
    let Some((mut header, section)) = streamable else {
        return from_text_with(&text, &origin, Some(progress), verify).map(Some);
    };
    // The checksum is checked below: the header is refused here only for what it says itself.
    finish_header_of(&mut header, &origin, version, verify, true, true)?;
    let lines = section.bytes().filter(|&b| b == b'\n').count();
    progress.start(Phase::Parsing, lines as u64);
    send(Loading::Header(Box::new(header), lines));
    let (parsed, summed) = std::thread::scope(|scope| {
        let sum = scope.spawn(|| match verify {
            Verify::Checksum => check_sum(&text, &origin, None).map(|_| ()),
            Verify::Skip => Ok(()),
        });
        let parsed = fast_load::parse_section(section, Some(progress), |block| send(Loading::Events(block)));
        (parsed, sum.join().unwrap_or_else(|_| Err(anyhow!("{origin}: the checksum thread failed"))))
    });
    if progress.is_cancelled() {
        return Err(anyhow!("{origin}: cancelled"));
    }
    summed?;
    if !parsed {
        // A line only `ron` reads, or an error `ron` should word: the ordinary path decides.
        return from_text_with(&text, &origin, Some(progress), verify).map(Some);
    }
    Ok(None)
}

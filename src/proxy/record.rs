//! Where a proxy run's batches go: a session file written as the run goes on (`--out`), or a
//! recording in memory (tests, and the window's source later).
//!
//! The session file is format version 3 with origin "proxy" (where it listened, the server it
//! forwarded to): every event names its client, so each source address is one client of the
//! recording with its own send ids; the scenario in the header is the link every client got.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use ackscope_protocol::{ClientId, Event, Scenario, SimTime, Step};
use anyhow::{anyhow, Context, Result};

use super::batch::Batch;
use super::bytes::ByteStore;
use super::stats::addr_text;
use crate::lane::{ClientInfo, Protocol};
use crate::model::limits::LiveLimits;
use crate::model::Origin;
use crate::session::stream::SessionStream;
use crate::session::{Session, Transport};

/// A session file being written while the proxy runs: streamed into a temporary file beside
/// the target (events are not held in memory), renamed over it when finished, so the target is
/// never half-written; a failed or abandoned run removes the temporary file.
///
/// The file names the protocol the lane runs ([`Self::set_protocol`]: what the decoder picked)
/// and each client by its address ([`Self::name_clients`]); both stand after the events
/// ([`SessionStream::create_described_later`]), so they are right however late they are learnt.
/// The file is opened at the first events (actions before them wait).
pub struct SessionOut {
    stream: Option<SessionStream>,
    header: Session,
    /// Actions given before the file was opened.
    pending_actions: Vec<Step>,
    finished: bool,
    tmp: PathBuf,
    path: PathBuf,
    /// The datagrams' bytes, written with the last trailer ([`Self::keep_payloads`]).
    payloads: Vec<crate::session::payloads::SavedPayload>,
}

impl SessionOut {
    /// Starts writing `path` for a proxy run of `scenario` listening on `listen`, forwarding to
    /// `forward` (the temporary file is created now, so an unwritable place fails before the run).
    pub fn create(path: &Path, scenario: &Scenario, listen: SocketAddr, forward: SocketAddr) -> Result<Self> {
        let origin = path.display().to_string();
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = path.file_name().ok_or_else(|| anyhow!("{origin}: not a file name"))?.to_string_lossy();
        // The temporary name `session::remove_stale_temps` recognises and tidies after a kill.
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        std::fs::File::create(&tmp).with_context(|| format!("{origin}: cannot write"))?;
        let mut header = Session::scenario_only(scenario.clone());
        // Real time on real sockets: a re-run cannot reproduce the traffic.
        header.transport = Transport::Udp;
        header.origin = Some(Origin::Proxy { listen: addr_text(listen), upstream: addr_text(forward) });
        let mut out = Self {
            stream: None,
            header,
            pending_actions: Vec::new(),
            finished: false,
            tmp,
            path: path.to_path_buf(),
            payloads: Vec::new(),
        };
        out.set_protocol(&crate::proxy::decode::lane_protocol(None));
        Ok(out)
    }

    /// Names what the lane runs (the decoder's pick), written with the file's next flush.
    pub fn set_protocol(&mut self, protocol: &Protocol) {
        let (name, wire) = (Some(protocol.name.clone()), Some(protocol.wire.name().to_string()));
        if self.header.protocol != name || self.header.wire != wire {
            self.header.protocol = name;
            self.header.wire = wire;
            self.describe();
        }
    }

    /// Names the clients that arrived by their address, as the window's proxy source does.
    pub fn name_clients(&mut self, joined: &[(ClientId, SocketAddr, SimTime)]) {
        if joined.is_empty() {
            return;
        }
        for (id, addr, _) in joined {
            self.header.clients.push(ClientInfo { id: *id, name: addr_text(*addr), group: String::new() });
        }
        self.describe();
    }

    /// Hands the description as it stands to the file (it stands after the events).
    fn describe(&mut self) {
        if let Some(stream) = self.stream.as_mut() {
            let h = &self.header;
            stream.describe(h.protocol.clone(), h.wire.clone(), h.clients.clone());
        }
    }

    /// Appends a batch's events and run-wide actions, naming its clients.
    pub fn append(&mut self, batch: &Batch) -> Result<()> {
        self.name_clients(&batch.joined);
        self.append_events(&batch.events, &batch.actions)
    }

    /// Appends events (in time order after what was appended) and actions; the file is opened
    /// with the header as it stands at the first events.
    pub fn append_events(&mut self, events: &[Event], actions: &[Step]) -> Result<()> {
        if self.stream.is_none() {
            if events.is_empty() {
                self.pending_actions.extend_from_slice(actions);
                return Ok(());
            }
            self.open()?;
        }
        let stream = self.stream.as_mut().expect("opened");
        stream.append(events, actions)
    }

    fn open(&mut self) -> Result<()> {
        let stream = SessionStream::create_described_later(&self.tmp, &self.header)
            .with_context(|| format!("{}: cannot write", self.path.display()))?;
        self.stream = Some(stream);
        let pending = std::mem::take(&mut self.pending_actions);
        if !pending.is_empty() {
            self.stream.as_mut().expect("opened").append(&[], &pending)?;
        }
        Ok(())
    }

    /// The exact bytes of the datagrams relayed (what the proxy read), saved in the file when it
    /// is finished so a reopened recording shows them as sent.
    pub fn keep_payloads(&mut self, payloads: Vec<crate::session::payloads::SavedPayload>) {
        self.payloads = payloads;
    }

    /// Finishes the file covering `duration` and renames it into place: its size.
    pub fn finish(mut self, duration: SimTime) -> Result<u64> {
        if self.stream.is_none() {
            self.open()?;
        }
        let mut stream = self.stream.take().expect("opened");
        stream.set_duration(duration.0);
        stream.keep_payloads(std::mem::take(&mut self.payloads));
        let bytes = stream.finish()?;
        std::fs::rename(&self.tmp, &self.path)
            .with_context(|| format!("{}: cannot replace the file", self.path.display()))?;
        self.finished = true;
        Ok(bytes)
    }
}

impl Drop for SessionOut {
    fn drop(&mut self) {
        if !self.finished {
            self.stream.take();
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A proxy run kept in memory: every event and action, each client's address, the bytes.
#[derive(Debug)]
pub struct Recording {
    pub events: Vec<Event>,
    pub actions: Vec<Step>,
    pub clients: Vec<(ClientId, std::net::SocketAddr, SimTime)>,
    pub expired: Vec<(ClientId, SimTime)>,
    pub bytes: ByteStore,
}

impl Recording {
    pub fn new(limits: LiveLimits) -> Self {
        Self {
            events: Vec::new(),
            actions: Vec::new(),
            clients: Vec::new(),
            expired: Vec::new(),
            bytes: ByteStore::new(limits),
        }
    }

    /// Takes in a batch.
    pub fn take(&mut self, b: Batch) {
        self.events.extend(b.events);
        self.actions.extend(b.actions);
        self.clients.extend(b.joined);
        self.expired.extend(b.expired);
        for d in b.datagrams {
            self.bytes.push(d);
        }
        for f in b.forwards {
            self.bytes.forwarded(f);
        }
    }
}

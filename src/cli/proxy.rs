//! `ackscope proxy`: a conditioning UDP relay between game clients and a server.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackscope_protocol::{Scenario, SimTime};
use anyhow::{bail, Context, Result};
use clap::Args;

use super::common::{fail, print, MAX_SECONDS};
use crate::capture::relayed::RelayedCapture;
use crate::model::limits::LiveLimits;
use crate::model::payloads::Payloads;
use crate::params::{self, overrides};
use crate::proxy::config::{transparent_scenario, DEFAULT_EXPIRE_S, DEFAULT_MAX_CLIENTS};
use crate::proxy::decode::{self, ProxyDecoder};
use crate::proxy::{Batch, DecodeChoice, Proxy, ProxyConfig, ProxyReport, SessionOut};
use crate::report::export::atomic::AtomicFile;
use crate::runtime::udp::resolve;
use crate::session::{self, Verify};

const NOTES: &str = "\
Each client (by source address) is one client of the recording, numbered from 1 in order of \
arrival, with its own instance of the scenario's link in each direction (side A is the server, \
side B the client: link.b_to_a conditions what clients send, link.a_to_b what the server sends), \
seeded per client and changed by the scenario's script on the proxy's clock. Without a SCENARIO \
the link is transparent (0 ms, 0 % loss, MTU 9000) and --set link... impairs it. Clients silent \
for --expire-s seconds expire. Without --seconds the proxy runs until Ctrl+C (or SIGTERM); \
either ends a timed run early too. Then it prints its report and finishes its session file.

Example: clients send to port 7000, the server listens on 7777, 50 ms and 20 % loss each way:
  ackscope proxy --listen 127.0.0.1:7000 --forward 127.0.0.1:7777 \\
      --set link.latency_ms=50 --set link.loss_percent=20 --seconds 60 --json";

/// Arguments of `ackscope proxy`.
#[derive(Args, Debug)]
#[command(after_help = NOTES)]
pub struct ProxyArgs {
    /// Address game clients send to, e.g. 127.0.0.1:7000 or [::1]:7000.
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// The real server's address.
    #[arg(long, value_name = "ADDR")]
    pub forward: String,
    /// Local address of the sockets towards the server (default: an ephemeral port per client).
    /// A fixed port serves one client: for a server that must be told its client's address, as
    /// `ackscope peer --connect` must.
    #[arg(long, value_name = "ADDR")]
    pub upstream: Option<String>,
    /// Scenario (or session) file whose link (and script) every client gets; a transparent link
    /// without one.
    pub scenario: Option<PathBuf>,
    /// Override any scenario parameter by dotted name, e.g. link.loss_percent=10 (both
    /// directions) or link.b_to_a.latency_ms=80 (client to server); repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Wall seconds to relay before printing the report (without it: until Ctrl+C, which also
    /// ends a timed run early).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Record the session (every datagram's link events, per client) to this file.
    #[arg(long, value_name = "SESSION.ron")]
    pub out: Option<PathBuf>,
    /// Write what the proxy relayed as a pcapng capture with both sides of its link (each
    /// datagram as it arrived, each copy as it left; `ackscope fit` reads it).
    #[arg(long, value_name = "FILE.pcapng")]
    pub pcapng: Option<PathBuf>,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// Which decoder reads the payloads: auto, ackscope, reliable, glenn, ue4, chunks, fragments,
    /// dnm, rellikt, enet, kcp, kcptun, header:FILE.ron, none.
    #[arg(long, value_name = "DECODER", default_value = "auto")]
    pub decode: String,
    /// Seconds a client may send nothing before it expires.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_EXPIRE_S)]
    pub expire_s: f64,
    /// Clients served at once; datagrams of further new clients are dropped and counted.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CLIENTS)]
    pub max_clients: usize,
    /// Run the relay thread at a real-time priority (SCHED_FIFO, Linux), so delays are honoured
    /// while other processes keep the cores busy; needs root, CAP_SYS_NICE or RLIMIT_RTPRIO.
    #[arg(long)]
    pub realtime: bool,
}

/// The scenario the arguments ask for: the file's (transparent without one), `--set` applied,
/// checked against the parameter table.
fn scenario_from(args: &ProxyArgs) -> Result<Scenario> {
    let mut s = match &args.scenario {
        Some(p) => session::load_verified(p, Verify::Checksum)?.scenario,
        None => transparent_scenario(),
    };
    overrides::apply_all(&mut s, &args.set)?;
    params::validate::scenario(&s)?;
    Ok(s)
}

/// The proxy the arguments describe, or why they cannot.
fn config(args: &ProxyArgs) -> Result<ProxyConfig> {
    if let Some(s) = args.seconds.filter(|s| !(s.is_finite() && *s > 0.0 && *s <= MAX_SECONDS)) {
        bail!("--seconds must be a positive number up to {MAX_SECONDS}, got {s}");
    }
    if !(args.expire_s.is_finite() && args.expire_s > 0.0 && args.expire_s <= MAX_SECONDS) {
        bail!("--expire-s must be a positive number of seconds up to {MAX_SECONDS}, got {}", args.expire_s);
    }
    if args.max_clients == 0 {
        bail!("--max-clients must be at least 1");
    }
    let decode = decode::choice(&args.decode)?;
    let listen = resolve(&args.listen).context("--listen")?;
    let forward = resolve(&args.forward).context("--forward")?;
    let mut cfg = ProxyConfig::new(listen, forward, scenario_from(args)?);
    cfg.expire_after = Duration::from_secs_f64(args.expire_s);
    cfg.max_clients = args.max_clients;
    cfg.realtime = args.realtime;
    // Decoding, the capture and the session file (which saves them) need each datagram's bytes
    // beside its events.
    cfg.keep_bytes = decode != DecodeChoice::None || args.pcapng.is_some() || args.out.is_some();
    cfg.decode = decode;
    cfg.decode_name = args.decode.trim().to_string();
    cfg.upstream_bind = args.upstream.as_deref().map(resolve).transpose().context("--upstream")?;
    Ok(cfg)
}

/// Relays until `--seconds` pass or Ctrl+C (whichever comes first), writing the session as it goes; the report.
fn run(args: &ProxyArgs) -> Result<ProxyReport> {
    let cfg = config(args)?;
    let mut out =
        args.out.as_ref().map(|p| SessionOut::create(p, &cfg.scenario, cfg.listen, cfg.forward)).transpose()?;
    let mut decoder = (cfg.decode != DecodeChoice::None).then(|| ProxyDecoder::new(cfg.decode.clone()));
    let mut capture = match &args.pcapng {
        Some(p) => Some(RelayedCapture::new(AtomicFile::create(p)?, cfg.forward)?),
        None => None,
    };
    // Ctrl+C (or SIGTERM) ends the relay early with --seconds too, and the report and the
    // session file are finished as at the deadline: an interrupted timed run keeps what it
    // recorded rather than dying with a half-written file. Installed before the proxy listens,
    // so a stop that follows any relayed datagram is always the handler's.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst)).context("cannot handle Ctrl+C")?;
    let proxy = Proxy::start(cfg.clone())?;
    eprintln!("ackscope: proxy listening on {}, forwarding to {} (Ctrl+C stops it)", proxy.local_addr(), cfg.forward);
    let local = proxy.local_addr();
    let deadline = args.seconds.map(|s| Instant::now() + Duration::from_secs_f64(s));
    // The bytes the session file keeps, to the window's live memory caps.
    let kept = Payloads::shared(LiveLimits::default());
    let mut take = |batch: Batch, out: &mut Option<SessionOut>| -> Result<()> {
        if let Some(c) = capture.as_mut() {
            c.take(&batch)?;
        }
        if out.is_some() {
            for d in &batch.datagrams {
                kept.keep(d.client, d.uid, d.at, &d.bytes);
            }
        }
        let events = match decoder.as_mut() {
            Some(d) => d.feed(&batch),
            None => batch.events,
        };
        // The lane is described by what the decoder picked, its clients by their addresses.
        if let Some(o) = out.as_mut() {
            o.name_clients(&batch.joined);
            if let Some(d) = decoder.as_ref().filter(|d| !d.deciding()) {
                o.set_protocol(&d.protocol());
            }
        }
        match out.as_mut() {
            Some(o) => o.append_events(&events, &batch.actions),
            None => Ok(()),
        }
    };
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        if let Ok(batch) = proxy.batches().recv_timeout(Duration::from_millis(50)) {
            take(batch, &mut out)?;
        }
    }
    let (outcome, rest) = proxy.stop_with_batches()?;
    for batch in rest.try_iter() {
        take(batch, &mut out)?;
    }
    let end = SimTime::from_secs_f64(outcome.seconds);
    if let Some(d) = decoder.as_mut() {
        let last = d.finish(end);
        if let Some(o) = out.as_mut() {
            o.set_protocol(&d.protocol());
            o.append_events(&last, &[])?;
        }
    }
    if let (Some(c), Some(path)) = (capture, &args.pcapng) {
        let packets = c.packets();
        let bytes = c.into_inner().commit()?;
        eprintln!("ackscope: wrote {} ({packets} packets, {bytes} bytes): ackscope fit reads it", path.display());
    }
    let session_bytes = match out {
        Some(mut o) => {
            o.keep_payloads(crate::model::payloads::saved(&kept));
            Some(o.finish(end)?)
        }
        None => None,
    };
    let report = ProxyReport::new(local, &cfg, &outcome, session_bytes);
    Ok(match &decoder {
        Some(d) => report.with_decoded(d),
        None => report,
    })
}

/// Runs the proxy and prints its report.
pub fn main(args: ProxyArgs) -> ExitCode {
    match run(&args) {
        Ok(report) => print(&report, args.json, ProxyReport::to_text),
        Err(e) => fail(format!("{e:#}")),
    }
}

//! Every format a passive decoder can be set to, by name ([`FormatKind`]), and what the user asked
//! for (`--decode`: [`DecodeArg`], [`DecodeChoice`]).

use serde::{Deserialize, Serialize};

use super::format::WireFormat;
use super::header::HeaderSpec;

/// Every format a decoder can be set to, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FormatKind {
    /// reliable.io's packet header and its fragments, opaque payload (ackscope's `acks`, `peer --raw`).
    Reliable,
    /// Glenn's messages after reliable.io's header (ackscope's `glenn` and `hybrid`).
    Glenn,
    /// UE4 packets and bunches (ackscope's `ue4`).
    Ue4,
    /// Glenn's large blocks: slices and slice acks (ackscope's `chunks`).
    Chunks,
    /// ackscope's fragmentation baseline (`fragments`).
    Fragments,
    /// Delivery notification ranges (ackscope's `dnm`).
    Dnm,
    /// rellikt's header (ackscope's `rellikt`).
    Rellikt,
    /// ENet's protocol header and commands.
    Enet,
    /// KCP segments as the reference library sends them.
    Kcp,
    /// KCP inside kcptun's frame (16-byte nonce, CRC32), encryption and FEC off.
    Kcptun,
    /// A game's own reliable.io-style header, described declaratively.
    Header(HeaderSpec),
}

impl FormatKind {
    /// Every ackscope wire format, in the order `auto` tries them (tagged formats first, the
    /// least distinctive last).
    pub const ACKSCOPE: [FormatKind; 7] = [
        FormatKind::Chunks,
        FormatKind::Dnm,
        FormatKind::Rellikt,
        FormatKind::Glenn,
        FormatKind::Reliable,
        FormatKind::Fragments,
        FormatKind::Ue4,
    ];

    /// The formats `auto` tries, in order: the foreign protocols with the strictest structure
    /// first, then ackscope's own.
    pub fn auto_candidates() -> Vec<FormatKind> {
        let mut v = vec![FormatKind::Kcptun, FormatKind::Kcp, FormatKind::Enet];
        v.extend(Self::ACKSCOPE.iter().cloned());
        v
    }

    pub fn name(&self) -> &'static str {
        match self {
            FormatKind::Reliable => "reliable",
            FormatKind::Glenn => "glenn",
            FormatKind::Ue4 => "ue4",
            FormatKind::Chunks => "chunks",
            FormatKind::Fragments => "fragments",
            FormatKind::Dnm => "dnm",
            FormatKind::Rellikt => "rellikt",
            FormatKind::Enet => "enet",
            FormatKind::Kcp => "kcp",
            FormatKind::Kcptun => "kcptun",
            FormatKind::Header(_) => "header",
        }
    }

    /// A fresh format for one client's traffic.
    pub fn make(&self) -> Box<dyn WireFormat> {
        use super::{blocks, enet, glenn, kcp, notify, reliable, ue4};
        match self {
            FormatKind::Reliable => Box::new(reliable::ReliableFormat::default()),
            FormatKind::Glenn => Box::new(glenn::GlennFormat::default()),
            FormatKind::Ue4 => Box::new(ue4::Ue4Format::default()),
            FormatKind::Chunks => Box::new(blocks::ChunkFormat::default()),
            FormatKind::Fragments => Box::new(blocks::BaselineFormat::default()),
            FormatKind::Dnm => Box::new(notify::DnmFormat::default()),
            FormatKind::Rellikt => Box::new(notify::RelliktFormat::default()),
            FormatKind::Enet => Box::new(enet::EnetFormat),
            FormatKind::Kcp => Box::new(kcp::KcpFormat { framed: false }),
            FormatKind::Kcptun => Box::new(kcp::KcpFormat { framed: true }),
            FormatKind::Header(spec) => Box::new(spec.clone()),
        }
    }
}

/// What the user asked for (`--decode auto|ackscope|reliable|enet|kcp|header:FILE.ron|none`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DecodeChoice {
    /// Probe the first datagrams against every format.
    Auto,
    /// Probe against ackscope's own formats only.
    Ackscope,
    /// One format.
    Format(FormatKind),
    /// Packet level only: sizes, gaps, fates.
    None,
}

/// A `--decode` value the caller still has to complete: `header:FILE` names a file the caller
/// reads (this crate does no I/O) and turns into a [`HeaderSpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeArg {
    Auto,
    Ackscope,
    None,
    /// A named format (`reliable`, `glenn`, `ue4`, `chunks`, `fragments`, `dnm`, `rellikt`,
    /// `enet`, `kcp`, `kcptun`).
    Named(&'static str),
    /// `header:FILE`: the file's path.
    HeaderFile(String),
}

/// The names `--decode` takes besides `header:FILE`.
pub const DECODE_NAMES: [&str; 13] = [
    "auto",
    "ackscope",
    "none",
    "reliable",
    "glenn",
    "ue4",
    "chunks",
    "fragments",
    "dnm",
    "rellikt",
    "enet",
    "kcp",
    "kcptun",
];

impl std::str::FromStr for DecodeArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some(path) = s.strip_prefix("header:") {
            if path.is_empty() {
                return Err("header: needs a file, e.g. header:game.ron".into());
            }
            return Ok(DecodeArg::HeaderFile(path.to_string()));
        }
        match s {
            "auto" => Ok(DecodeArg::Auto),
            "ackscope" => Ok(DecodeArg::Ackscope),
            "none" => Ok(DecodeArg::None),
            _ => DECODE_NAMES.iter().find(|n| **n == s).map(|n| DecodeArg::Named(n)).ok_or_else(|| {
                format!("unknown decoder '{s}': valid are {}, header:FILE.ron", DECODE_NAMES.join(", "))
            }),
        }
    }
}

impl DecodeArg {
    /// The choice, given the header description read from `header:FILE` when there is one.
    pub fn choice(&self, header: Option<HeaderSpec>) -> Result<DecodeChoice, String> {
        Ok(match self {
            DecodeArg::Auto => DecodeChoice::Auto,
            DecodeArg::Ackscope => DecodeChoice::Ackscope,
            DecodeArg::None => DecodeChoice::None,
            DecodeArg::HeaderFile(path) => {
                let spec = header.ok_or_else(|| format!("header:{path}: no header description given"))?;
                spec.validate().map_err(|e| format!("header:{path}: {e}"))?;
                DecodeChoice::Format(FormatKind::Header(spec))
            }
            DecodeArg::Named(n) => DecodeChoice::Format(match *n {
                "reliable" => FormatKind::Reliable,
                "glenn" => FormatKind::Glenn,
                "ue4" => FormatKind::Ue4,
                "chunks" => FormatKind::Chunks,
                "fragments" => FormatKind::Fragments,
                "dnm" => FormatKind::Dnm,
                "rellikt" => FormatKind::Rellikt,
                "enet" => FormatKind::Enet,
                "kcp" => FormatKind::Kcp,
                "kcptun" => FormatKind::Kcptun,
                other => return Err(format!("unknown decoder '{other}'")),
            }),
        })
    }
}

//! How much of a live run the window keeps in memory: the caps every store of a live run (the
//! lanes' recordings, the kept packet bytes, the proxy's records) is held to. A model type, so
//! the stores below the app can take it without importing the app.

/// How much of a live run stays in memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiveLimits {
    /// Run time a lane's recording covers at most, in seconds.
    pub window_s: f64,
    /// Memory a live run's recordings may take, in bytes: each lane is trimmed at a part of its
    /// share of it (`app::live_log::TRIM_SHARE`), as `Recording::heap_bytes` counts.
    pub max_bytes: u64,
}

impl Default for LiveLimits {
    /// 30 minutes or 2 GiB, whichever comes first.
    fn default() -> Self {
        Self { window_s: 1800.0, max_bytes: 2 << 30 }
    }
}

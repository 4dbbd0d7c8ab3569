//! Memory figures for the examples that report peak RSS (open_bench, live_memory), read from
//! the kernel's `/proc/self/status` (0 where there is none).

/// A kernel memory figure of this process (`VmHWM`, `VmRSS`) in MiB.
pub fn status_mib(key: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

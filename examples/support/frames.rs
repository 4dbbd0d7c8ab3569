//! Frame figures for the examples that step the whole window headless (frame_bench, open_bench):
//! one frame timed, and frames' count, total and worst, so every bench adds and reports frames
//! the same way.

use std::time::Instant;

use egui_kittest::Harness;

/// Steps one frame of `h`; its wall time in ms.
pub fn step_ms<S>(h: &mut Harness<'static, S>) -> f64 {
    let f = Instant::now();
    h.step();
    f.elapsed().as_secs_f64() * 1000.0
}

/// Frames' count, total and worst time (ms).
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameStats {
    pub n: usize,
    pub total_ms: f64,
    pub worst_ms: f64,
}

impl FrameStats {
    pub fn add(&mut self, ms: f64) {
        self.n += 1;
        self.total_ms += ms;
        self.worst_ms = self.worst_ms.max(ms);
    }

    /// Adds `o`'s frames (frame_bench sums its parts; open_bench has none to sum).
    #[allow(dead_code)]
    pub fn merge(&mut self, o: FrameStats) {
        self.n += o.n;
        self.total_ms += o.total_ms;
        self.worst_ms = self.worst_ms.max(o.worst_ms);
    }

    /// The average frame (0 without frames).
    pub fn mean_ms(&self) -> f64 {
        self.total_ms / self.n.max(1) as f64
    }
}

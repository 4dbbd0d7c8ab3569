//! What the window tests share: stepping frames until the app reaches a state.

use std::time::{Duration, Instant};

use egui_kittest::Harness;

/// Steps frames until `cond` holds on the harness state or `secs` of wall time pass.
pub fn step_until<S>(h: &mut Harness<'static, S>, secs: f64, cond: impl Fn(&S) -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < deadline {
        h.step();
        if cond(h.state()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

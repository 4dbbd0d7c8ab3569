//! Controls that commit one change when the user lets go.
//!
//! A slider reports a new value on every frame of a drag and a text field on every keystroke;
//! sent on as they come, typing 150 into latency ran the link at 1, then 15, then 150 ms and
//! recorded each, and one drag recorded a dozen changes. Here a control shows the value being
//! edited (a preview kept in the view) and commits it once: when the pointer is released, on
//! Enter or when the field loses focus, or when an arrow key held on it is released. Typed text
//! is only read on Enter or focus loss (`update_while_editing(false)`); Escape gives it up.
//!
//! egui 0.37's number field still applies the typed text one frame after Escape (it reads its
//! text on "lost focus" in the frames after, when Escape is no longer down), so a change a
//! control reports within [`ESCAPE_FRAMES`] of Escape on it is dropped here.

use egui::{Key, Response, Ui};

/// Frames after Escape on a control in which its change is dropped.
const ESCAPE_FRAMES: u64 = 3;

/// The value a control shows while the user is still changing it, by the control's name; and
/// the control the user last pressed Escape on, with the frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preview(Option<(String, f64)>, Option<(String, u64)>);

impl Preview {
    /// The value to show for `name`: the one being edited, else the model's `value`.
    pub fn shown(&self, name: &str, value: f64) -> f64 {
        match &self.0 {
            Some((n, v)) if n == name => *v,
            _ => value,
        }
    }

    /// True while a control is being changed.
    pub fn is_editing(&self) -> bool {
        self.0.is_some()
    }

    /// After the control `name` was drawn showing `v` (model value `model`) with response `r`:
    /// the value to commit, once, when the user lets go of a change.
    pub fn commit_on_release(&mut self, ui: &Ui, r: &Response, name: &str, v: f64, model: f64) -> Option<f64> {
        let mine = matches!(&self.0, Some((n, _)) if n == name);
        let frame = ui.ctx().cumulative_pass_nr();
        if r.lost_focus() && ui.input(|i| i.key_pressed(Key::Escape)) {
            self.0 = None;
            self.1 = Some((name.to_string(), frame));
            return None;
        }
        if matches!(&self.1, Some((n, at)) if n == name && frame <= at + ESCAPE_FRAMES) {
            return None;
        }
        if is_held(ui, r) {
            if r.changed() || mine {
                self.0 = Some((name.to_string(), v));
            }
            return None;
        }
        if mine {
            self.0 = None;
        }
        ((mine || r.changed()) && v != model).then_some(v)
    }
}

/// The pointer is down on the control, it is dragged, or an arrow key is held while it has focus.
fn is_held(ui: &Ui, r: &Response) -> bool {
    const ARROWS: [Key; 4] = [Key::ArrowLeft, Key::ArrowRight, Key::ArrowUp, Key::ArrowDown];
    r.is_pointer_button_down_on()
        || r.dragged()
        || (r.has_focus() && ui.input(|i| ARROWS.iter().any(|k| i.key_down(*k))))
}

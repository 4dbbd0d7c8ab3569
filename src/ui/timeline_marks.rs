//! The message timeline's marks and colours: one palette per theme (bright on dark, deep on
//! light, so no mark washes out on white), the send glyphs, and the legend that names every
//! colour and glyph the canvas ([`super::timeline_canvas`]) draws.

use ackscope_protocol::{SendKind, Side};
use egui::{Color32, Pos2, Rect, Sense, Shape, Stroke, StrokeKind, Vec2};

use super::timeline_text::send_kind_name;

/// Every colour the timeline draws with, for one theme.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Palette {
    pub first: Color32,
    pub delay: Color32,
    pub nak: Color32,
    pub redundant: Color32,
    pub timeout: Color32,
    pub ack: Color32,
    pub delivered: Color32,
    pub spurious: Color32,
    pub dropped: Color32,
    pub cursor: Color32,
    pub side_a: Color32,
    pub side_b: Color32,
    pub queued: Color32,
    /// A faint band over the hovered or selected row.
    pub band: Color32,
}

impl Palette {
    /// The palette for a dark (`true`) or light background.
    pub fn new(dark: bool) -> Self {
        if dark {
            Self {
                first: Color32::from_rgb(225, 225, 225),
                delay: Color32::from_rgb(240, 200, 60),
                nak: Color32::from_rgb(235, 90, 235),
                redundant: Color32::from_rgb(150, 150, 150),
                timeout: Color32::from_rgb(120, 200, 255),
                ack: Color32::from_rgb(80, 225, 225),
                delivered: Color32::from_rgb(120, 220, 120),
                spurious: Color32::from_rgb(255, 60, 60),
                dropped: Color32::from_rgb(255, 85, 70),
                cursor: Color32::from_rgb(255, 230, 120),
                side_a: Color32::from_rgb(90, 170, 255),
                side_b: Color32::from_rgb(255, 160, 60),
                queued: Color32::from_gray(150),
                band: Color32::from_rgba_unmultiplied(255, 255, 255, 22),
            }
        } else {
            Self {
                first: Color32::from_rgb(45, 45, 45),
                delay: Color32::from_rgb(165, 115, 0),
                nak: Color32::from_rgb(165, 20, 165),
                redundant: Color32::from_rgb(105, 105, 105),
                timeout: Color32::from_rgb(0, 105, 190),
                ack: Color32::from_rgb(0, 135, 145),
                delivered: Color32::from_rgb(20, 135, 40),
                spurious: Color32::from_rgb(215, 0, 0),
                dropped: Color32::from_rgb(205, 25, 15),
                cursor: Color32::from_rgb(215, 110, 0),
                side_a: Color32::from_rgb(25, 95, 205),
                side_b: Color32::from_rgb(200, 100, 0),
                queued: Color32::from_gray(90),
                band: Color32::from_rgba_unmultiplied(0, 0, 0, 20),
            }
        }
    }

    /// The palette of `ui`'s theme.
    pub fn of(ui: &egui::Ui) -> Self {
        Self::new(ui.visuals().dark_mode)
    }

    pub fn send(&self, kind: SendKind) -> Color32 {
        match kind {
            SendKind::First => self.first,
            SendKind::DelayResend => self.delay,
            SendKind::NakResend => self.nak,
            SendKind::Redundant => self.redundant,
            SendKind::TimeoutResend => self.timeout,
        }
    }

    pub fn side(&self, side: Side) -> Color32 {
        match side {
            Side::A => self.side_a,
            Side::B => self.side_b,
        }
    }
}

/// Draws a send mark: shape and colour by kind; a copy the link dropped is hollow and struck
/// through in the dropped colour, so it never reads as a delivered one.
pub(super) fn send_mark(painter: &egui::Painter, pal: &Palette, c: Pos2, r: f32, kind: SendKind, dropped: bool) {
    let color = pal.send(kind);
    let (fill, stroke) = if dropped { (Color32::TRANSPARENT, Stroke::new(1.3, color)) } else { (color, Stroke::NONE) };
    match kind {
        SendKind::First => {
            painter.circle(c, r, fill, stroke);
        }
        SendKind::Redundant => {
            painter.circle(c, r * 0.7, fill, stroke);
        }
        SendKind::DelayResend => {
            let pts =
                vec![c + Vec2::new(0.0, -r), c + Vec2::new(r, 0.0), c + Vec2::new(0.0, r), c + Vec2::new(-r, 0.0)];
            painter.add(Shape::convex_polygon(pts, fill, stroke));
        }
        SendKind::NakResend => {
            let pts = vec![c + Vec2::new(-r, -r), c + Vec2::new(r, -r), c + Vec2::new(0.0, r)];
            painter.add(Shape::convex_polygon(pts, fill, stroke));
        }
        SendKind::TimeoutResend => {
            let rect = Rect::from_center_size(c, Vec2::splat(r * 1.6));
            painter.rect(rect, 0.0, fill, stroke, StrokeKind::Inside);
        }
    }
    if dropped {
        let d = r + 1.0;
        painter.line_segment([c + Vec2::new(-d, d), c + Vec2::new(d, -d)], Stroke::new(1.6, pal.dropped));
    }
}

/// The spurious box around a send mark.
pub(super) fn spurious_box(painter: &egui::Painter, pal: &Palette, c: Pos2, r: f32) {
    painter.rect_stroke(
        Rect::from_center_size(c, Vec2::splat(r * 2.0 + 3.0)),
        0.0,
        Stroke::new(1.5, pal.spurious),
        StrokeKind::Outside,
    );
}

/// The legend: side colours, every send glyph, dropped vs delivered copies, spurious, ack,
/// delivery, the cursor; all in the theme's palette.
pub(super) fn legend_ui(ui: &mut egui::Ui) {
    let pal = Palette::of(ui);
    let item = |ui: &mut egui::Ui, label: &str, draw: &dyn Fn(&egui::Painter, Pos2)| {
        let (r, p) = ui.allocate_painter(Vec2::splat(12.0), Sense::hover());
        draw(&p, r.rect.center());
        ui.label(egui::RichText::new(label).small());
    };
    ui.horizontal_wrapped(|ui| {
        for side in [Side::A, Side::B] {
            let text = match side {
                Side::A => "sent by A",
                Side::B => "sent by B",
            };
            item(ui, text, &|p, c| {
                p.line_segment([c - Vec2::new(6.0, 0.0), c + Vec2::new(6.0, 0.0)], Stroke::new(4.0, pal.side(side)));
            });
        }
        item(ui, "queued", &|p, c| {
            p.line_segment([c - Vec2::new(0.0, 5.0), c + Vec2::new(0.0, 5.0)], Stroke::new(1.0, pal.queued));
        });
        for kind in
            [SendKind::First, SendKind::DelayResend, SendKind::NakResend, SendKind::Redundant, SendKind::TimeoutResend]
        {
            item(ui, send_kind_name(kind), &|p, c| send_mark(p, &pal, c, 4.5, kind, false));
        }
        item(ui, "copy dropped (hollow, struck)", &|p, c| send_mark(p, &pal, c, 4.0, SendKind::First, true));
        item(ui, "spurious", &|p, c| {
            send_mark(p, &pal, c, 3.5, SendKind::DelayResend, false);
            spurious_box(p, &pal, c, 3.5);
        });
        item(ui, "acked", &|p, c| {
            p.line_segment([c - Vec2::new(0.0, 5.0), c + Vec2::new(0.0, 5.0)], Stroke::new(2.0, pal.ack));
        });
        item(ui, "delivered", &|p, c| {
            p.circle_stroke(c, 4.5, Stroke::new(1.5, pal.delivered));
        });
        item(ui, "cursor", &|p, c| {
            p.line_segment([c - Vec2::new(0.0, 6.0), c + Vec2::new(0.0, 6.0)], Stroke::new(1.5, pal.cursor));
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative luminance contrast (WCAG) between two opaque colours.
    fn contrast(a: Color32, b: Color32) -> f32 {
        let lum = |c: Color32| {
            let ch = |v: u8| {
                let v = v as f32 / 255.0;
                if v <= 0.03928 {
                    v / 12.92
                } else {
                    ((v + 0.055) / 1.055).powf(2.4)
                }
            };
            0.2126 * ch(c.r()) + 0.7152 * ch(c.g()) + 0.0722 * ch(c.b())
        };
        let (x, y) = (lum(a), lum(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn every_mark_stands_out_on_both_themes_backgrounds() {
        for dark in [true, false] {
            let bg = if dark { egui::Visuals::dark() } else { egui::Visuals::light() }.extreme_bg_color;
            let p = Palette::new(dark);
            for (name, c) in [
                ("first", p.first),
                ("delay", p.delay),
                ("nak", p.nak),
                ("redundant", p.redundant),
                ("timeout", p.timeout),
                ("ack", p.ack),
                ("delivered", p.delivered),
                ("spurious", p.spurious),
                ("dropped", p.dropped),
                ("cursor", p.cursor),
                ("side A", p.side_a),
                ("side B", p.side_b),
            ] {
                let k = contrast(c, bg);
                assert!(k >= 2.6, "{name} on {} background: contrast {k:.2}", if dark { "dark" } else { "light" });
            }
        }
    }
}

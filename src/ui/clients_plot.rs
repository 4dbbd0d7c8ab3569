//! The all-clients plot: one metric of every client over time on one axis. Up to
//! [`MAX_LINES`] clients each get a line in the colour of their table row; above that the
//! spread across clients is drawn as a band (the 5th to 95th percentile, the median as a line),
//! so a thousand clients read as one shape, and the focused client is always drawn on top as
//! its own line, so it shows where it sits in the crowd. Click the plot to move the cursor.

use ackscope_protocol::{ClientId, SimTime};
use egui::Color32;
use egui_plot::{Line, Plot, PlotPoints, Polygon, VLine};

use crate::app::AppCommand;
use crate::model::clients::{band, Metric};
use crate::model::{Connection, Recording};

/// Most clients drawn as lines of their own; more are drawn as a band.
pub const MAX_LINES: usize = 16;
/// Steps of the band across the plot's width.
const BAND_STEPS: usize = 240;

/// What the plot drew in the last frame (the tests read it).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PlotState {
    /// Clients drawn as lines, in order.
    pub lines: Vec<ClientId>,
    /// True when the rest were drawn as a band.
    pub band: bool,
}

/// Draws `metric` of the clients `shown` (in the table's order) of `rec`.
#[allow(clippy::too_many_arguments)]
pub fn all_clients_plot_ui(
    rec: &Recording,
    shown: &[ClientId],
    focus: ClientId,
    metric: Metric,
    state: &mut PlotState,
    cursor: SimTime,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let conns: Vec<&Connection> = shown.iter().filter_map(|c| rec.client(*c)).collect();
    let end = rec.end_time().as_secs_f64().max(1e-3);
    let dark = ui.visuals().dark_mode;
    let as_band = conns.len() > MAX_LINES;
    ui.label(if as_band {
        format!("{} of {} clients: p5-p95 band and median; the focused client as a line", metric.label(), conns.len())
    } else {
        format!("{} of every client shown", metric.label())
    });
    let (mut lines, cut) = (Vec::new(), cursor.as_secs_f64());
    let resp = Plot::new("all_clients_plot")
        .height(ui.available_height().max(120.0))
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .x_axis_label("time (s)")
        .include_y(0.0)
        .show(ui, |p| {
            if as_band {
                let b = band(&conns, metric, 0.0, end, BAND_STEPS);
                if !b.is_empty() {
                    let shade = if dark { Color32::from_rgb(90, 140, 200) } else { Color32::from_rgb(60, 100, 170) };
                    let outline: Vec<[f64; 2]> =
                        b.iter().map(|r| [r[0], r[3]]).chain(b.iter().rev().map(|r| [r[0], r[1]])).collect();
                    p.polygon(Polygon::new("p5-p95", PlotPoints::from(outline)).fill_color(shade.gamma_multiply(0.35)));
                    let median: Vec<[f64; 2]> = b.iter().map(|r| [r[0], r[2]]).collect();
                    p.line(Line::new("median", median).color(shade).width(1.5));
                }
            } else {
                for (k, c) in conns.iter().enumerate() {
                    if c.client == focus {
                        continue;
                    }
                    let color = super::lane_colors::client_color(k, dark);
                    p.line(Line::new(rec.info.client(c.client).label(), points(metric, c)).color(color).width(1.2));
                    lines.push(c.client);
                }
            }
            if let Some((k, c)) = conns.iter().enumerate().find(|(_, c)| c.client == focus) {
                let color = if as_band { ui_text(dark) } else { super::lane_colors::client_color(k, dark) };
                let name = format!("{} (focused)", rec.info.client(c.client).label());
                p.line(Line::new(name, points(metric, c)).color(color).width(2.5));
                lines.push(c.client);
            }
            p.vline(VLine::new("", cut).color(Color32::GRAY).width(1.0));
        });
    *state = PlotState { lines, band: as_band };
    if resp.response.clicked() {
        if let Some(pos) = resp.response.interact_pointer_pos() {
            let v = resp.transform.value_from_position(pos);
            cmds.push(AppCommand::SeekTo(SimTime::from_secs_f64(v.x.max(0.0))));
        }
    }
}

fn ui_text(dark: bool) -> Color32 {
    if dark {
        Color32::WHITE
    } else {
        Color32::BLACK
    }
}

/// `metric` of `c` as plot points (at most a few thousand: the series are sampled per stats
/// interval, and a long run is thinned to every n-th sample).
fn points(metric: Metric, c: &Connection) -> PlotPoints<'static> {
    let s = metric.series(c);
    let step = (s.len() / 2000).max(1);
    PlotPoints::from(s.iter().step_by(step).map(|p| [p.t_s, p.y]).collect::<Vec<_>>())
}

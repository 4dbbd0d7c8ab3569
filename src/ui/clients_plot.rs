//! The all-clients plot: one metric of every client over time on one axis. Up to
//! [`MAX_LINES`] clients each get a line in the colour of their table row; above that the
//! spread across clients is drawn as a band (the 5th to 95th percentile, the median as a line),
//! so a thousand clients read as one shape, and the focused client is always drawn on top as
//! its own line, so it shows where it sits in the crowd. Click the plot to move the cursor.

use std::time::{Duration, Instant};

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

/// A line's points, `[t_s, value]`.
type Points = Vec<[f64; 2]>;

/// What the plot drew in the last frame (the tests read it), and what it draws from.
#[derive(Debug, Default, Clone)]
pub struct PlotState {
    /// Clients drawn as lines, in order.
    pub lines: Vec<ClientId>,
    /// True when the rest were drawn as a band.
    pub band: bool,
    /// The lines and band as last computed ([`Shapes`]).
    cache: Option<Shapes>,
}

/// How often the Clients tab's rows and this plot, while they keep changing, are recomputed.
pub const REFRESH: Duration = Duration::from_millis(300);

/// What the plot draws, computed from the recording at most every [`REFRESH`] while it keeps
/// changing (a live run), as the table's rows are: the band's percentiles search and sort every
/// client's value at each of its steps, and were 1-10 ms of each 64-client frame
/// (`examples/live_clients.rs`). A change of metric, clients shown or focus recomputes at once.
#[derive(Debug, Clone)]
struct Shapes {
    /// Recording, events, metric, clients shown and focus it was computed for.
    key: (u64, usize, Metric, Vec<ClientId>, ClientId),
    at: Instant,
    /// The band's outline (p95 forwards, p5 back) and its median, when drawn as a band.
    band: Option<(Points, Points)>,
    /// Clients drawn as lines other than the focused one: id, label, colour slot, points.
    lines: Vec<(ClientId, String, usize, Vec<[f64; 2]>)>,
    /// The focused client, when shown: label, colour slot, points.
    focused: Option<(String, usize, Vec<[f64; 2]>)>,
}

impl Shapes {
    fn of(
        rec: &Recording,
        conns: &[&Connection],
        metric: Metric,
        key: (u64, usize, Metric, Vec<ClientId>, ClientId),
    ) -> Self {
        let focus = key.4;
        let end = rec.end_time().as_secs_f64().max(1e-3);
        let band = (conns.len() > MAX_LINES).then(|| {
            let b = band(conns, metric, 0.0, end, BAND_STEPS);
            let outline = b.iter().map(|r| [r[0], r[3]]).chain(b.iter().rev().map(|r| [r[0], r[1]])).collect();
            (outline, b.iter().map(|r| [r[0], r[2]]).collect())
        });
        let lines = if band.is_some() {
            Vec::new()
        } else {
            let label = |c: &Connection| rec.info.client(c.client).label();
            conns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.client != focus)
                .map(|(k, c)| (c.client, label(c), k, points(metric, c)))
                .collect()
        };
        let focused = conns
            .iter()
            .enumerate()
            .find(|(_, c)| c.client == focus)
            .map(|(k, c)| (format!("{} (focused)", rec.info.client(c.client).label()), k, points(metric, c)));
        Self { key, at: Instant::now(), band, lines, focused }
    }
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
    let key = (rec.id(), rec.len(), metric, conns.iter().map(|c| c.client).collect::<Vec<_>>(), focus);
    let fresh = state.cache.as_ref().is_some_and(|s| {
        let (id, n, m, ref clients, f) = s.key;
        (id, m, clients, f) == (key.0, key.2, &key.3, key.4) && (n == key.1 || s.at.elapsed() < REFRESH)
    });
    if !fresh {
        state.cache = Some(Shapes::of(rec, &conns, metric, key));
    }
    let shapes = state.cache.as_ref().expect("set above");
    let dark = ui.visuals().dark_mode;
    let as_band = shapes.band.is_some();
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
            if let Some((outline, median)) = &shapes.band {
                if !median.is_empty() {
                    let shade = if dark { Color32::from_rgb(90, 140, 200) } else { Color32::from_rgb(60, 100, 170) };
                    let outline = PlotPoints::from(outline.clone());
                    p.polygon(Polygon::new("p5-p95", outline).fill_color(shade.gamma_multiply(0.35)));
                    p.line(Line::new("median", median.clone()).color(shade).width(1.5));
                }
            }
            for (client, label, k, pts) in &shapes.lines {
                let color = super::lane_colors::client_color(*k, dark);
                p.line(Line::new(label.clone(), pts.clone()).color(color).width(1.2));
                lines.push(*client);
            }
            if let Some((label, k, pts)) = &shapes.focused {
                let color = if as_band { ui_text(dark) } else { super::lane_colors::client_color(*k, dark) };
                p.line(Line::new(label.clone(), pts.clone()).color(color).width(2.5));
                lines.push(focus);
            }
            p.vline(VLine::new("", cut).color(Color32::GRAY).width(1.0));
        });
    state.lines = lines;
    state.band = as_band;
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
fn points(metric: Metric, c: &Connection) -> Vec<[f64; 2]> {
    let s = metric.series(c);
    let step = (s.len() / 2000).max(1);
    s.iter().step_by(step).map(|p| [p.t_s, p.y]).collect()
}

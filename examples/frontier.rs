//! The hybrid goal over the compare grid, measured with the sweep library, and README's frontier
//! plot at 5 % loss.
//!
//! For each cell (loss 1/5/20 %, one-way latency 25/100 ms) it sweeps glenn (resend delay incl.
//! 0, RTT-based resend and its factor), ue4 (net speed, keepalive) and hybrid (its knobs) over
//! `SEEDS` seeds of `SECONDS` simulated seconds with the default workload, then prints, cell by
//! cell: the glenn and ue4 defaults, how many hybrid settings no glenn or ue4 setting dominates on
//! (p99 latency, bytes per message), the best hybrid setting that beats both defaults on both
//! figures (if any), and which strategies make the frontier. It writes docs/frontier-5pct.png.
//!
//! Run: `cargo run --release --example frontier` (about a minute on two cores); arguments
//! `SECONDS SEEDS` shrink it (`cargo run --release --example frontier -- 30 2`).

use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;

use ackscope::report::sweep::{self, SweepRow, SweepSpec};
use ackscope_protocol::{Scenario, Strategy};
use plotters::prelude::*;

/// The sweeps behind README's hybrid section.
const VARY: [&str; 10] = [
    "glenn.resend_delay_ms=0,17,33,50,75,100,150,200,300",
    "glenn.rtt_resend=false,true",
    "glenn.rtt_resend_factor=1.25,2",
    "ue4.net_speed_bytes_per_sec=0,5000,10000,20000",
    "ue4.keepalive_ms=50,200,1000",
    "hybrid.rtt_factor=1,1.25,1.5,2",
    "hybrid.redundant_copies=0,1,2",
    "hybrid.redundancy_budget_bytes=48,64,160",
    "hybrid.reorder_tolerance_packets=1,2",
    "hybrid.every_tick=false",
];

/// One cell of the grid: its rows and verdicts.
pub struct Cell {
    pub latency_ms: f64,
    pub loss_percent: f64,
    pub rows: Vec<SweepRow>,
}

fn value(r: &SweepRow, name: &str) -> Option<String> {
    r.values.get(name).map(|v| v.as_str().map_or(v.to_string(), str::to_string))
}

/// The strategy's default settings (the values the sweeps vary, at their defaults).
fn is_default(r: &SweepRow) -> bool {
    let is = |name: &str, v: &str| value(r, name).is_none_or(|x| x == v);
    match r.strategy.as_str() {
        "glenn" => {
            is("glenn.resend_delay_ms", "100")
                && is("glenn.rtt_resend", "false")
                && is("glenn.rtt_resend_factor", "1.25")
        }
        "ue4" => is("ue4.net_speed_bytes_per_sec", "10000") && is("ue4.keepalive_ms", "200"),
        _ => false,
    }
}

fn dominates(a: &SweepRow, b: &SweepRow) -> bool {
    let (ap, ab, bp, bb) = (a.p99_ms, a.bytes_per_message, b.p99_ms, b.bytes_per_message);
    a.lost == 0 && ap <= bp && ab <= bb && (ap < bp || ab < bb)
}

impl Cell {
    fn of(&self, strategy: &str) -> impl Iterator<Item = &SweepRow> {
        let s = strategy.to_string();
        self.rows.iter().filter(move |r| r.strategy == s)
    }

    /// Hybrid settings no glenn or ue4 setting dominates.
    pub fn undominated(&self) -> Vec<&SweepRow> {
        let others: Vec<&SweepRow> = self.rows.iter().filter(|r| r.strategy != "hybrid").collect();
        self.of("hybrid").filter(|h| h.lost == 0 && !others.iter().any(|o| dominates(o, h))).collect()
    }

    /// Hybrid settings better than both defaults on both figures at once.
    pub fn beating_defaults(&self) -> Vec<&SweepRow> {
        let defaults: Vec<&SweepRow> = self.rows.iter().filter(|r| is_default(r)).collect();
        self.of("hybrid")
            .filter(|h| {
                h.lost == 0 && defaults.iter().all(|d| h.p99_ms < d.p99_ms && h.bytes_per_message < d.bytes_per_message)
            })
            .collect()
    }
}

/// Runs one cell.
pub fn cell(latency_ms: f64, loss_percent: f64, seconds: f64, seeds: u32) -> Cell {
    let mut base = Scenario::default();
    for l in [&mut base.link.a_to_b, &mut base.link.b_to_a] {
        l.latency_ms = latency_ms;
        l.loss_percent = loss_percent;
    }
    let spec = SweepSpec {
        base,
        changes: Vec::new(),
        seconds,
        vary: VARY.iter().map(|v| sweep::parse_vary(v).expect("a valid spec")).collect(),
        strategies: vec![Strategy::Glenn, Strategy::Ue4, Strategy::Hybrid],
        seeds,
    };
    let rows = sweep::run(&spec, 0, &AtomicBool::new(false), &|_, _| {}).expect("runs").expect("not cancelled");
    Cell { latency_ms, loss_percent, rows }
}

fn settings(r: &SweepRow) -> String {
    let parts: Vec<String> =
        r.values.iter().map(|(k, v)| format!("{}={}", k.trim_start_matches("hybrid."), v)).collect();
    parts.join(" ")
}

fn report(c: &Cell) -> String {
    let mut out = format!("== {} ms one-way, {} % loss\n", c.latency_ms, c.loss_percent);
    for d in c.rows.iter().filter(|r| is_default(r)) {
        let _ = writeln!(out, "  {} default: p99 {:.1} ms, {:.1} bytes/msg", d.strategy, d.p99_ms, d.bytes_per_message);
    }
    let und = c.undominated();
    let _ = writeln!(
        out,
        "  hybrid settings not dominated by any glenn/ue4 setting: {} of {}",
        und.len(),
        c.of("hybrid").count()
    );
    if let Some(low) = und.iter().min_by(|a, b| a.bytes_per_message.total_cmp(&b.bytes_per_message)) {
        let _ = writeln!(
            out,
            "    cheapest: p99 {:.1} ms, {:.1} bytes/msg ({})",
            low.p99_ms,
            low.bytes_per_message,
            settings(low)
        );
    }
    match c.beating_defaults().into_iter().min_by(|a, b| a.p99_ms.total_cmp(&b.p99_ms)) {
        Some(b) => {
            let _ = writeln!(
                out,
                "  beats both defaults on both figures: p99 {:.1} ms (spread {:.1}), {:.1} bytes/msg ({})",
                b.p99_ms,
                b.p99_ms_spread,
                b.bytes_per_message,
                settings(b)
            );
        }
        None => out.push_str("  no hybrid setting beats both defaults on both figures\n"),
    }
    let mut frontier: Vec<&SweepRow> = c.rows.iter().filter(|r| r.pareto).collect();
    frontier.sort_by(|a, b| a.p99_ms.total_cmp(&b.p99_ms));
    frontier.dedup_by(|a, b| a.p99_ms == b.p99_ms && a.bytes_per_message == b.bytes_per_message);
    let names: Vec<String> =
        frontier.iter().map(|r| format!("{} {:.0}/{:.1}", r.strategy, r.p99_ms, r.bytes_per_message)).collect();
    let _ = writeln!(out, "  frontier (p99 ms/bytes): {}", names.join(", "));
    out
}

fn colour(strategy: &str) -> RGBColor {
    match strategy {
        "glenn" => RGBColor(31, 119, 180),
        "ue4" => RGBColor(214, 39, 40),
        _ => RGBColor(44, 160, 44),
    }
}

/// One panel: every point with its p99 spread across seeds, the frontier, the defaults ringed.
fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    c: &Cell,
) -> Result<(), Box<dyn std::error::Error>> {
    let xmax = c.rows.iter().map(|r| r.p99_ms + r.p99_ms_spread / 2.0).fold(0.0, f64::max) * 1.05;
    let ymin = c.rows.iter().map(|r| r.bytes_per_message).fold(f64::INFINITY, f64::min) * 0.97;
    // Every point inside: a cap on the range once cut the 100 ms panel's frontier off at the top.
    let ymax = c.rows.iter().map(|r| r.bytes_per_message).fold(0.0, f64::max) * 1.03;
    let caption = format!("{} ms one-way latency, {} % loss", c.latency_ms, c.loss_percent);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..xmax, ymin..ymax)?;
    chart
        .configure_mesh()
        .x_desc("p99 latency, ms (bar: spread across seeds)")
        .y_desc("wire bytes per delivered message")
        .label_style(("sans-serif", 14))
        .draw()?;
    for s in ["glenn", "ue4", "hybrid"] {
        let col = colour(s);
        let pts: Vec<&SweepRow> = c.of(s).collect();
        chart.draw_series(pts.iter().map(|r| {
            let half = r.p99_ms_spread / 2.0;
            PathElement::new(
                vec![(r.p99_ms - half, r.bytes_per_message), (r.p99_ms + half, r.bytes_per_message)],
                col.mix(0.35),
            )
        }))?;
        chart
            .draw_series(pts.iter().map(|r| Circle::new((r.p99_ms, r.bytes_per_message), 3, col.filled())))?
            .label(s)
            .legend(move |(x, y)| Circle::new((x, y), 4, col.filled()));
    }
    let mut frontier: Vec<(f64, f64)> =
        c.rows.iter().filter(|r| r.pareto).map(|r| (r.p99_ms, r.bytes_per_message)).collect();
    frontier.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart
        .draw_series(LineSeries::new(frontier, BLACK.stroke_width(1)))?
        .label("frontier")
        .legend(|(x, y)| PathElement::new(vec![(x - 8, y), (x + 8, y)], BLACK));
    for d in c.rows.iter().filter(|r| is_default(r)) {
        let col = colour(&d.strategy);
        chart.draw_series([Circle::new((d.p99_ms, d.bytes_per_message), 8, col.stroke_width(2))])?;
        chart.draw_series([Text::new(
            format!("{} default", d.strategy),
            (d.p99_ms, d.bytes_per_message),
            ("sans-serif", 14).into_font().color(&col),
        )])?;
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    Ok(())
}

/// The 5 % loss cells side by side, as a PNG (plotters draws SVG, resvg rasterises it with
/// egui's bundled font, so no system font is needed).
fn plot(cells: &[&Cell], path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (1200u32, 520u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE)?;
        for (area, c) in root.split_evenly((1, cells.len())).iter().zip(cells) {
            panel(area, c)?;
        }
        root.present()?;
    }
    let mut opt = resvg::usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_font_data(epaint_default_fonts::UBUNTU_LIGHT.to_vec());
    db.set_sans_serif_family("Ubuntu");
    let tree = resvg::usvg::Tree::from_str(&svg, &opt)?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(w, h).ok_or("pixmap")?;
    resvg::render(&tree, resvg::tiny_skia::Transform::identity(), &mut pixmap.as_mut());
    std::fs::write(path, pixmap.encode_png()?)?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map_or(Ok(120.0), |a| a.parse())?;
    let seeds: u32 = args.next().map_or(Ok(3), |a| a.parse())?;
    println!("sweeps: {}\n{seconds} s x {seeds} seeds per point, default workload\n", VARY.join(" "));
    let mut cells = Vec::new();
    for latency_ms in [25.0, 100.0] {
        for loss_percent in [1.0, 5.0, 20.0] {
            let c = cell(latency_ms, loss_percent, seconds, seeds);
            print!("{}", report(&c));
            cells.push(c);
        }
    }
    let undominated = cells.iter().filter(|c| !c.undominated().is_empty()).count();
    let beating = cells.iter().filter(|c| !c.beating_defaults().is_empty()).count();
    println!("\ncells where some hybrid setting is not dominated: {undominated} of 6 (goal: 4)");
    println!("cells where a hybrid setting beats both defaults on both figures: {beating} of 6 (goal: 2)");
    let five: Vec<&Cell> = cells.iter().filter(|c| c.loss_percent == 5.0).collect();
    std::fs::create_dir_all("docs")?;
    plot(&five, "docs/frontier-5pct.png")?;
    println!("wrote docs/frontier-5pct.png");
    Ok(())
}

//! Hybrid's defaults against glenn's and ue4's defaults on a broad grid of links, as README's
//! "hybrid" section quotes it, and the plot beside it.
//!
//! The grid: loss 1, 3, 10 and 30 % and one-way latency 10, 20, 50, 100 and 200 ms (both spaced
//! evenly on a log scale), jitter 0 or 30 ms (reordering), losses independent or in bursts
//! (Gilbert-Elliott, 30 ms on average, the same mean loss): 80 cells, the same both ways. Each
//! cell is `ackscope sweep --seconds SECONDS --seeds SEEDS --strategies glenn,ue4,hybrid` with
//! those `--set link.*` values: default workload and settings, every run drained, seeds 1..=SEEDS
//! (every strategy meets the same link trace at one seed).
//!
//! The verdict, per cell and seed strategy: hybrid *dominates* it when it is better beyond the
//! seed spread on p99 latency or on wire bytes per delivered message (its worst seed better than
//! the other's best) and not worse beyond the seed spread on the other (its best seed no worse
//! than the other's worst); it is *dominated* the other way round; else neither. A cell is won
//! when hybrid dominates both, lost when either dominates it.
//!
//! Run: `cargo run --release --example frontier` (120 s x 5 seeds, under a minute on two cores);
//! `-- SECONDS SEEDS FIRST_SEED GRID NAME=VALUE...` change the runs: `-- 120 5 101` runs seeds
//! 101..=105 (seeds the defaults were not chosen on), GRID `linear` the other grid README quotes
//! (loss 1, 5, 15, 30 %, latency 10, 50, 100, 200 ms; `log` is the default), `between` the 48
//! cells between the log grid's points (loss 1.7, 5.5, 17 %, latency 14, 32, 71, 141 ms, jitter
//! 0 or 15 ms, with and without bursts: links the defaults were not chosen on), and each
//! `hybrid.NAME=VALUE` sets a hybrid parameter away from its default (`-- 120 5 1 log
//! hybrid.redundant_copies=2`). `only=LATENCY/LOSS/JITTER/BURSTS,...` runs only the cells that
//! match one of the patterns (each part a number or `*`, BURSTS `yes`/`no`/`*`; `-- 120 5 201 log
//! only=*/30/0/no,100/1/*/yes`) and prints each figure's smallest and largest seed as well: for
//! looking into a few cells without running the grid. Only the run with no arguments writes
//! README's plot, docs/frontier-grid.png.

use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;

use ackscope::report::sweep::{self, SweepRow, SweepSpec};
use ackscope_protocol::{BurstLoss, Scenario, Strategy};
use plotters::prelude::*;

const LOSSES_PERCENT: [f64; 4] = [1.0, 3.0, 10.0, 30.0];
const LATENCIES_MS: [f64; 5] = [10.0, 20.0, 50.0, 100.0, 200.0];
/// The evenly spaced grid (`linear`).
const LINEAR_LOSSES_PERCENT: [f64; 4] = [1.0, 5.0, 15.0, 30.0];
const LINEAR_LATENCIES_MS: [f64; 4] = [10.0, 50.0, 100.0, 200.0];
const JITTERS_MS: [f64; 2] = [0.0, 30.0];
/// The cells between the log grid's points (`between`): each loss and latency the geometric
/// mean of two neighbours there, jitter halfway, so no figure sits where the defaults were chosen.
const BETWEEN_LOSSES_PERCENT: [f64; 3] = [1.7, 5.5, 17.0];
const BETWEEN_LATENCIES_MS: [f64; 4] = [14.0, 32.0, 71.0, 141.0];
const BETWEEN_JITTERS_MS: [f64; 2] = [0.0, 15.0];
/// Mean length of a burst in the bursty cells.
const BURST_MS: f64 = 30.0;
const STRATEGIES: [Strategy; 3] = [Strategy::Hybrid, Strategy::Glenn, Strategy::Ue4];

/// One link of the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cell {
    bursts: bool,
    jitter_ms: f64,
    latency_ms: f64,
    loss_percent: f64,
}

/// Which grid: the losses and latencies it crosses.
#[derive(Debug, Clone, Copy)]
struct Grid {
    losses_percent: &'static [f64],
    latencies_ms: &'static [f64],
    jitters_ms: &'static [f64],
}

const LOG_GRID: Grid = Grid { losses_percent: &LOSSES_PERCENT, latencies_ms: &LATENCIES_MS, jitters_ms: &JITTERS_MS };
const LINEAR_GRID: Grid =
    Grid { losses_percent: &LINEAR_LOSSES_PERCENT, latencies_ms: &LINEAR_LATENCIES_MS, jitters_ms: &JITTERS_MS };
const BETWEEN_GRID: Grid = Grid {
    losses_percent: &BETWEEN_LOSSES_PERCENT,
    latencies_ms: &BETWEEN_LATENCIES_MS,
    jitters_ms: &BETWEEN_JITTERS_MS,
};

impl Cell {
    fn all(grid: Grid) -> Vec<Cell> {
        let mut out = Vec::new();
        for bursts in [false, true] {
            for &jitter_ms in grid.jitters_ms {
                for &latency_ms in grid.latencies_ms {
                    for &loss_percent in grid.losses_percent {
                        out.push(Cell { bursts, jitter_ms, latency_ms, loss_percent });
                    }
                }
            }
        }
        out
    }

    /// The default scenario on this link, both ways, from seed `first_seed`.
    fn scenario(self, first_seed: u64) -> Scenario {
        let mut s = Scenario { seed: first_seed, ..Scenario::default() };
        for l in [&mut s.link.a_to_b, &mut s.link.b_to_a] {
            l.latency_ms = self.latency_ms;
            l.jitter_ms = self.jitter_ms;
            if self.bursts {
                // A burst lasts 100 / r ms on average and the link is bad p / (p + r) of the time.
                let r_percent = 100.0 / BURST_MS;
                let p_percent = r_percent * self.loss_percent / (100.0 - self.loss_percent);
                l.loss_percent = 0.0;
                l.burst = BurstLoss { p_percent, r_percent, loss_in_bad_percent: 100.0 };
            } else {
                l.loss_percent = self.loss_percent;
            }
        }
        s
    }
}

/// A pattern of cells (`only=`): latency, loss and jitter (None = any), and bursts.
#[derive(Debug, Clone, Copy)]
struct CellPattern {
    latency_ms: Option<f64>,
    loss_percent: Option<f64>,
    jitter_ms: Option<f64>,
    bursts: Option<bool>,
}

impl CellPattern {
    fn parse(spec: &str) -> Result<Self, String> {
        let parts: Vec<&str> = spec.split('/').collect();
        let bad = || format!("'{spec}': a cell pattern is LATENCY/LOSS/JITTER/BURSTS (numbers or *, BURSTS yes/no/*)");
        let [lat, loss, jit, bursts] = parts[..] else { return Err(bad()) };
        let num = |x: &str| if x == "*" { Ok(None) } else { x.parse::<f64>().map(Some).map_err(|_| bad()) };
        let bursts = match bursts {
            "*" => None,
            "yes" => Some(true),
            "no" => Some(false),
            _ => return Err(bad()),
        };
        Ok(CellPattern { latency_ms: num(lat)?, loss_percent: num(loss)?, jitter_ms: num(jit)?, bursts })
    }

    fn matches(&self, c: &Cell) -> bool {
        self.latency_ms.is_none_or(|x| x == c.latency_ms)
            && self.loss_percent.is_none_or(|x| x == c.loss_percent)
            && self.jitter_ms.is_none_or(|x| x == c.jitter_ms)
            && self.bursts.is_none_or(|b| b == c.bursts)
    }
}

/// A figure across seeds: smallest, largest, mean.
#[derive(Debug, Clone, Copy)]
struct Spread {
    lo: f64,
    hi: f64,
    mean: f64,
}

impl Spread {
    fn of(xs: impl Iterator<Item = f64> + Clone) -> Self {
        let n = xs.clone().count().max(1) as f64;
        let (lo, hi) = xs.clone().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(x), h.max(x)));
        Spread { lo, hi, mean: xs.sum::<f64>() / n }
    }
    /// Better (lower) beyond the seed spread: every seed of `self` below every seed of `other`.
    fn below(self, other: Spread) -> bool {
        self.hi < other.lo
    }
}

/// One strategy's figures in one cell.
#[derive(Debug, Clone, Copy)]
struct Figures {
    p99_ms: Spread,
    bytes: Spread,
    lost: u64,
    /// Means across seeds, for `only=` runs: sends per message and spurious resends per run.
    sends: f64,
    spurious: f64,
}

impl Figures {
    fn of(row: &SweepRow) -> Self {
        Figures {
            p99_ms: Spread::of(row.runs.iter().map(|r| r.p99_ms)),
            bytes: Spread::of(row.runs.iter().map(|r| r.bytes_per_message)),
            lost: row.lost,
            sends: row.sends_per_message,
            spurious: row.spurious_resends,
        }
    }
    /// Better beyond the seed spread on one figure and not worse beyond it on the other.
    fn dominates(&self, o: &Figures) -> bool {
        (self.p99_ms.below(o.p99_ms) && !o.bytes.below(self.bytes))
            || (self.bytes.below(o.bytes) && !o.p99_ms.below(self.p99_ms))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Dominates,
    Dominated,
    Neither,
}

impl Verdict {
    fn of(hybrid: &Figures, other: &Figures) -> Self {
        if hybrid.lost > 0 || other.dominates(hybrid) {
            Verdict::Dominated
        } else if hybrid.dominates(other) {
            Verdict::Dominates
        } else {
            Verdict::Neither
        }
    }
    fn word(self) -> &'static str {
        match self {
            Verdict::Dominates => "dominates",
            Verdict::Dominated => "**dominated**",
            Verdict::Neither => "neither",
        }
    }
}

/// A cell's figures (hybrid, glenn, ue4) and verdicts (vs glenn, vs ue4).
struct Outcome {
    cell: Cell,
    figures: [Figures; 3],
    verdicts: [Verdict; 2],
}

impl Outcome {
    fn won(&self) -> bool {
        self.verdicts.iter().all(|v| *v == Verdict::Dominates)
    }
    fn lost(&self) -> bool {
        self.verdicts.contains(&Verdict::Dominated)
    }
    /// W (dominates both), L (dominated by one), else which one it dominates, if any.
    fn mark(&self) -> &'static str {
        match (self.won(), self.lost(), self.verdicts) {
            (true, _, _) => "W",
            (_, true, _) => "**L**",
            (_, _, [Verdict::Dominates, _]) => "g",
            (_, _, [_, Verdict::Dominates]) => "u",
            _ => "-",
        }
    }
}

fn run_cell(cell: Cell, seconds: f64, seeds: u32, first_seed: u64, settings: &[sweep::Vary]) -> Outcome {
    let spec = SweepSpec {
        base: cell.scenario(first_seed),
        changes: Vec::new(),
        seconds,
        vary: settings.to_vec(),
        strategies: STRATEGIES.to_vec(),
        seeds,
    };
    let rows = sweep::run(&spec, 0, &AtomicBool::new(false), &|_, _| {}).expect("runs").expect("not cancelled");
    let figures: [Figures; 3] = std::array::from_fn(|i| Figures::of(&rows[i]));
    let verdicts = [Verdict::of(&figures[0], &figures[1]), Verdict::of(&figures[0], &figures[2])];
    Outcome { cell, figures, verdicts }
}

fn link_name(c: &Cell) -> String {
    format!("{} ms, jitter {} ms{}", c.latency_ms, c.jitter_ms, if c.bursts { ", bursts" } else { "" })
}

/// One row per cell: each strategy's p99 and bytes as mean (seed spread), and the verdicts.
fn table(outcomes: &[Outcome]) -> String {
    let mut out = String::from(
        "| link (one way) | loss | hybrid p99 ms | bytes/msg | glenn p99 ms | bytes/msg | ue4 p99 ms | bytes/msg | vs glenn | vs ue4 |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let _ = write!(out, "| {} | {} % |", link_name(&o.cell), o.cell.loss_percent);
        for f in &o.figures {
            let _ = write!(
                out,
                " {:.0} ({:.0}) | {:.1} ({:.1}) |",
                f.p99_ms.mean,
                f.p99_ms.hi - f.p99_ms.lo,
                f.bytes.mean,
                f.bytes.hi - f.bytes.lo
            );
        }
        let _ = writeln!(out, " {} | {} |", o.verdicts[0].word(), o.verdicts[1].word());
    }
    out
}

/// The grid at a glance: a row per link, a column per loss.
fn matrix(grid: Grid, outcomes: &[Outcome]) -> String {
    let mut out = String::from("| link (one way) |");
    for l in grid.losses_percent {
        let _ = write!(out, " {l} % |");
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(grid.losses_percent.len()));
    out.push('\n');
    for row in outcomes.chunks(grid.losses_percent.len()) {
        let _ = write!(out, "| {} |", link_name(&row[0].cell));
        for o in row {
            let _ = write!(out, " {} |", o.mark());
        }
        out.push('\n');
    }
    out
}

/// The counts README quotes: cells won, lost and neither, and each seed strategy's verdicts.
fn summary(outcomes: &[Outcome]) -> String {
    let won = outcomes.iter().filter(|o| o.won()).count();
    let lost = outcomes.iter().filter(|o| o.lost()).count();
    let n = outcomes.len();
    let mut out = format!(
        "\nhybrid dominates both in {won} of {n} cells, is dominated in {lost}, neither in {}\n",
        n - won - lost
    );
    for (i, name) in ["glenn", "ue4"].iter().enumerate() {
        let count = |v: Verdict| outcomes.iter().filter(|o| o.verdicts[i] == v).count();
        let _ = writeln!(
            out,
            "vs {name}: dominates in {}, dominated in {}, neither in {}",
            count(Verdict::Dominates),
            count(Verdict::Dominated),
            count(Verdict::Neither)
        );
    }
    out
}

/// Each cell's figures as smallest..largest seed (what the verdicts compare), for `only=` runs.
fn ranges(outcomes: &[Outcome]) -> String {
    let mut out = String::from(
        "| link (one way) | loss | hybrid p99 ms | bytes/msg | sends/msg, spurious | glenn p99 ms | bytes/msg | sends/msg, spurious | ue4 p99 ms | bytes/msg | sends/msg, spurious |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let _ = write!(out, "| {} | {} % |", link_name(&o.cell), o.cell.loss_percent);
        for f in &o.figures {
            let _ = write!(
                out,
                " {:.0}..{:.0} | {:.1}..{:.1} | {:.2}, {:.0} |",
                f.p99_ms.lo, f.p99_ms.hi, f.bytes.lo, f.bytes.hi, f.sends, f.spurious
            );
        }
        out.push('\n');
    }
    out
}

fn colour(strategy: Strategy) -> RGBColor {
    match strategy {
        Strategy::Glenn => RGBColor(31, 119, 180),
        Strategy::Ue4 => RGBColor(214, 39, 40),
        _ => RGBColor(44, 160, 44),
    }
}

/// One panel per loss (no jitter, no bursts): each strategy's p99 against bytes, a point per
/// latency joined in latency order, with bars for the seed spread of p99.
fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    loss: f64,
    cells: &[&Outcome],
) -> Result<(), Box<dyn std::error::Error>> {
    let all = cells.iter().flat_map(|o| o.figures.iter());
    let xmax = all.clone().map(|f| f.p99_ms.hi).fold(0.0, f64::max) * 1.08;
    let ymin = all.clone().map(|f| f.bytes.mean).fold(f64::INFINITY, f64::min) * 0.97;
    let ymax = all.map(|f| f.bytes.mean).fold(0.0, f64::max) * 1.03;
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{loss} % loss"), ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0.0..xmax, ymin..ymax)?;
    chart
        .configure_mesh()
        .x_desc("p99 latency, ms")
        .y_desc("wire bytes per delivered message")
        .label_style(("sans-serif", 13))
        .draw()?;
    for (i, s) in STRATEGIES.iter().enumerate() {
        let col = colour(*s);
        let pts: Vec<(f64, f64)> = cells.iter().map(|o| (o.figures[i].p99_ms.mean, o.figures[i].bytes.mean)).collect();
        chart.draw_series(cells.iter().map(|o| {
            let f = o.figures[i];
            PathElement::new(vec![(f.p99_ms.lo, f.bytes.mean), (f.p99_ms.hi, f.bytes.mean)], col.mix(0.35))
        }))?;
        chart
            .draw_series(LineSeries::new(pts.clone(), col.stroke_width(1)))?
            .label(s.name())
            .legend(move |(x, y)| Circle::new((x, y), 4, col.filled()));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, col.filled())))?;
        chart.draw_series(cells.iter().zip(&pts).map(|(o, &p)| {
            Text::new(format!("{}", o.cell.latency_ms), p, ("sans-serif", 11).into_font().color(&col))
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// The panels as a PNG (plotters draws SVG, resvg rasterises it with egui's bundled font, so no
/// system font is needed).
fn plot(outcomes: &[Outcome], path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (1600u32, 440u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE)?;
        for (area, loss) in root.split_evenly((1, LOSSES_PERCENT.len())).iter().zip(LOSSES_PERCENT) {
            let cells: Vec<&Outcome> = outcomes
                .iter()
                .filter(|o| !o.cell.bursts && o.cell.jitter_ms == 0.0 && o.cell.loss_percent == loss)
                .collect();
            panel(area, loss, &cells)?;
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
    let seeds: u32 = args.next().map_or(Ok(5), |a| a.parse())?;
    let first_seed: u64 = args.next().map_or(Ok(1), |a| a.parse())?;
    let grid = match args.next().as_deref() {
        None | Some("log") => LOG_GRID,
        Some("linear") => LINEAR_GRID,
        Some("between") => BETWEEN_GRID,
        Some(other) => return Err(format!("unknown grid '{other}' (valid: log, linear, between)").into()),
    };
    let mut settings: Vec<String> = Vec::new();
    let mut only: Vec<CellPattern> = Vec::new();
    for a in args {
        match a.strip_prefix("only=") {
            Some(list) => {
                for spec in list.split(',') {
                    only.push(CellPattern::parse(spec)?);
                }
            }
            None => settings.push(a),
        }
    }
    let mut vary = Vec::new();
    for s in &settings {
        if !s.starts_with("hybrid.") {
            return Err(
                format!("'{s}': only hybrid.NAME=VALUE settings may change (the seeds run their defaults)").into()
            );
        }
        vary.push(sweep::parse_vary(s)?);
        if vary.last().is_some_and(|v| v.values.len() != 1) {
            return Err(format!("'{s}': one value per setting").into());
        }
    }
    let readme_run = std::env::args().len() == 1;
    let mut cells = Cell::all(grid);
    if !only.is_empty() {
        cells.retain(|c| only.iter().any(|p| p.matches(c)));
    }
    println!(
        "{} cells x glenn, ue4, hybrid (defaults{}) x {seeds} seeds from {first_seed} x {seconds} s, default \
         workload; figures: mean (spread across seeds)\n",
        cells.len(),
        if settings.is_empty() { String::new() } else { format!("; hybrid with {}", settings.join(" ")) }
    );
    let outcomes: Vec<Outcome> = cells.into_iter().map(|c| run_cell(c, seconds, seeds, first_seed, &vary)).collect();
    print!("{}", table(&outcomes));
    if !only.is_empty() {
        println!("\n{}", ranges(&outcomes));
        print!("{}", summary(&outcomes));
        return Ok(());
    }
    println!("\nW: hybrid dominates both; g / u: only glenn / only ue4; -: neither; L: dominated by one\n");
    print!("{}", matrix(grid, &outcomes));
    print!("{}", summary(&outcomes));
    if readme_run {
        std::fs::create_dir_all("docs")?;
        plot(&outcomes, "docs/frontier-grid.png")?;
        println!("wrote docs/frontier-grid.png");
    }
    Ok(())
}

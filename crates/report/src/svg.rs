//! SVG plots, written by hand: no font files or system libraries are needed (text is left
//! to the viewer's `sans-serif` font; layout uses an estimated character width).
//!
//! Output is deterministic: the same input gives the same bytes.

use std::fmt::Write as _;
use std::path::Path;

use crate::model::{finite, ratio, RunReport, STALL_REASONS};
use crate::text::truncate;
use crate::ReportError;

/// Categorical colours (Tableau 20), used in order.
const PALETTE: [&str; 20] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
    "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
    "#dbdb8d", "#9edae5",
];

const FONT: &str = "font-family=\"sans-serif\"";

/// A point of the correlation plot: one kernel's simulated and measured cycles.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CorrelationPoint {
    pub label: String,
    pub sim_cycles: f64,
    pub hw_cycles: f64,
}

/// Escapes text for SVG character data and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            // Characters XML 1.0 does not allow.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' && c != '\r' => o.push('?'),
            c => o.push(c),
        }
    }
    o
}

/// Formats a coordinate with two decimals (finite).
fn n(x: f64) -> String {
    format!("{:.2}", finite(x))
}

struct Svg {
    body: String,
    w: f64,
    h: f64,
}

impl Svg {
    fn new(w: f64, h: f64) -> Svg {
        Svg {
            body: String::new(),
            w,
            h,
        }
    }

    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, title: Option<&str>) {
        let _ = write!(
            self.body,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"",
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0)),
            fill
        );
        match title {
            Some(t) => {
                let _ = writeln!(self.body, "><title>{}</title></rect>", esc(t));
            }
            None => self.body.push_str("/>\n"),
        }
    }

    fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, extra: &str) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" {}/>",
            n(x1),
            n(y1),
            n(x2),
            n(y2),
            stroke,
            extra
        );
    }

    /// Text; `anchor` is start/middle/end; `rotate` in degrees about (x, y).
    fn text(&mut self, x: f64, y: f64, size: f64, anchor: &str, rotate: f64, s: &str) {
        let tr = if rotate != 0.0 {
            format!(" transform=\"rotate({} {} {})\"", n(rotate), n(x), n(y))
        } else {
            String::new()
        };
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" {FONT} font-size=\"{}\" text-anchor=\"{}\"{}>{}</text>",
            n(x),
            n(y),
            n(size),
            anchor,
            tr,
            esc(s)
        );
    }

    fn polyline(&mut self, pts: &[(f64, f64)], stroke: &str, title: &str) {
        let mut p = String::new();
        for (i, (x, y)) in pts.iter().enumerate() {
            if i > 0 {
                p.push(' ');
            }
            let _ = write!(p, "{},{}", n(*x), n(*y));
        }
        let _ = writeln!(
            self.body,
            "<polyline points=\"{p}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"1.5\"><title>{}</title></polyline>",
            esc(title)
        );
    }

    fn circle(&mut self, x: f64, y: f64, r: f64, fill: &str, title: &str) {
        let _ = writeln!(
            self.body,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" fill-opacity=\"0.8\"><title>{}</title></circle>",
            n(x),
            n(y),
            n(r),
            fill,
            esc(title)
        );
    }

    fn finish(self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">",
            n(self.w),
            n(self.h),
            n(self.w),
            n(self.h)
        );
        let _ = writeln!(
            o,
            "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>",
            n(self.w),
            n(self.h)
        );
        o.push_str(&self.body);
        o.push_str("</svg>\n");
        o
    }
}

/// Approximate rendered width of `s` at `size` px.
fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

/// A "nice" tick step for a linear axis up to `max` with about `target` ticks.
fn nice_step(max: f64, target: f64) -> f64 {
    if !max.is_finite() || max <= 0.0 {
        return 1.0;
    }
    let raw = max / target;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nf = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nf * mag
}

/// Tick label: integers without decimals, others with up to 3 significant decimals.
fn tick_label(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{:.3e}", v)
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn kernel_label(uid: u32, name: &str) -> String {
    format!("{uid}: {name}")
}

/// SVG of stacked bars, one per kernel, of the issue-slot breakdown in percent of all
/// issue slots (`issued` at the bottom, then the stall reasons). Reasons not in
/// [`STALL_REASONS`] are stacked after the known ones, by name.
pub fn stalls_svg(report: &RunReport) -> String {
    // Reasons present in any kernel, known ones in display order first.
    let mut reasons: Vec<String> = STALL_REASONS.iter().map(|s| s.to_string()).collect();
    for k in &report.kernels {
        for r in k.stall_breakdown.keys() {
            if !reasons.contains(r) {
                reasons.push(r.clone());
            }
        }
    }
    reasons.sort_by_key(|r| {
        (
            STALL_REASONS.iter().position(|s| s == r).unwrap_or(usize::MAX),
            r.clone(),
        )
    });

    let nk = report.kernels.len().max(1);
    let labels: Vec<String> = report
        .kernels
        .iter()
        .map(|k| truncate(&kernel_label(k.launch_uid, &k.name), 40))
        .collect();
    let label_h = labels.iter().map(|l| text_width(l, 11.0)).fold(0.0f64, f64::max) * 0.71 + 20.0;
    let bar_w = (600.0 / nk as f64).clamp(6.0, 60.0);
    let gap = bar_w * 0.25;
    let legend_w = reasons.iter().map(|r| text_width(r, 12.0)).fold(0.0f64, f64::max) + 40.0;
    // Labels are rotated by 45° and end under their bar: the first one reaches left by
    // its projected width.
    let first_label = labels.first().map_or(0.0, |l| text_width(l, 11.0) * 0.71);
    let ml = (first_label + 10.0 - gap - bar_w / 2.0).max(60.0);
    let (mt, plot_h): (f64, f64) = (40.0, 360.0);
    let plot_w = nk as f64 * (bar_w + gap) + gap;
    let width = ml + plot_w + 20.0 + legend_w;
    let height = mt + plot_h + label_h + 20.0;
    let mut s = Svg::new(width, height.max(mt + reasons.len() as f64 * 18.0 + 20.0));
    s.text(
        ml + plot_w / 2.0,
        24.0,
        15.0,
        "middle",
        0.0,
        "Issue-slot breakdown per kernel",
    );
    // Axes and y grid.
    for i in 0..=10 {
        let p = i as f64 * 10.0;
        let y = mt + plot_h - plot_h * p / 100.0;
        s.line(ml, y, ml + plot_w, y, "#dddddd", "stroke-width=\"0.5\"");
        s.text(ml - 6.0, y + 4.0, 11.0, "end", 0.0, &format!("{p:.0}%"));
    }
    s.line(ml, mt, ml, mt + plot_h, "black", "");
    s.line(ml, mt + plot_h, ml + plot_w, mt + plot_h, "black", "");
    s.text(16.0, mt + plot_h / 2.0, 12.0, "middle", -90.0, "% of issue slots");

    for (ki, k) in report.kernels.iter().enumerate() {
        let total = k.issue_slots();
        let x = ml + gap + ki as f64 * (bar_w + gap);
        let mut y = mt + plot_h;
        for (ri, r) in reasons.iter().enumerate() {
            let c = k.stall_breakdown.get(r).copied().unwrap_or(0);
            if c == 0 || total == 0 {
                continue;
            }
            let frac = ratio(c, total);
            let h = plot_h * frac;
            y -= h;
            let title = format!(
                "{} — {r}: {c} ({:.1}%)",
                kernel_label(k.launch_uid, &k.name),
                100.0 * frac
            );
            s.rect(x, y, bar_w, h, PALETTE[ri % PALETTE.len()], Some(&title));
        }
        let lx = x + bar_w / 2.0;
        let ly = mt + plot_h + 10.0;
        s.text(lx, ly, 11.0, "end", -45.0, &labels[ki]);
    }
    if report.kernels.is_empty() {
        s.text(
            ml + plot_w / 2.0,
            mt + plot_h / 2.0,
            12.0,
            "middle",
            0.0,
            "no kernels",
        );
    }
    // Legend (top first = last stacked).
    let lx = ml + plot_w + 20.0;
    for (i, (ri, r)) in reasons.iter().enumerate().rev().enumerate() {
        let y = mt + i as f64 * 18.0;
        s.rect(lx, y, 12.0, 12.0, PALETTE[ri % PALETTE.len()], None);
        s.text(lx + 18.0, y + 10.0, 12.0, "start", 0.0, r);
    }
    s.finish()
}

/// SVG of IPC over time, one line per kernel, on the GPU's time axis: a kernel's
/// timeline point `(c, ipc)` is drawn at `start_cycle + c`; when no kernel has a
/// `start_cycle` (all 0), kernels are laid end to end by their `cycles`.
pub fn ipc_svg(report: &RunReport) -> String {
    let all_zero = report.kernels.iter().all(|k| k.start_cycle == 0);
    let mut offsets = Vec::with_capacity(report.kernels.len());
    let mut acc = 0u64;
    for k in &report.kernels {
        offsets.push(if all_zero { acc } else { k.start_cycle });
        acc = acc.saturating_add(k.cycles);
    }
    let mut xmax = 0.0f64;
    let mut ymax = 0.0f64;
    for (k, off) in report.kernels.iter().zip(&offsets) {
        xmax = xmax.max(*off as f64 + k.cycles as f64);
        for &(c, ipc) in &k.ipc_timeline {
            xmax = xmax.max(*off as f64 + c as f64);
            ymax = ymax.max(finite(ipc));
        }
    }
    let xstep = nice_step(xmax, 6.0);
    let ystep = nice_step(ymax, 5.0);
    let xtop = ((xmax / xstep).ceil() * xstep).max(xstep);
    let ytop = ((ymax / ystep).ceil() * ystep).max(ystep);

    let legend: Vec<String> = report
        .kernels
        .iter()
        .map(|k| truncate(&kernel_label(k.launch_uid, &k.name), 48))
        .collect();
    let legend_w = legend.iter().map(|l| text_width(l, 11.0)).fold(0.0f64, f64::max) + 40.0;
    let (ml, mt, pw, ph): (f64, f64, f64, f64) = (70.0, 40.0, 640.0, 340.0);
    let width = ml + pw + 20.0 + legend_w;
    let height = (mt + ph + 60.0).max(mt + legend.len() as f64 * 16.0 + 20.0);
    let mut s = Svg::new(width, height);
    s.text(ml + pw / 2.0, 24.0, 15.0, "middle", 0.0, "IPC over time");
    let px = |x: f64| ml + pw * x / xtop;
    let py = |y: f64| mt + ph - ph * y / ytop;
    let mut t = 0.0;
    while t <= ytop + ystep * 1e-9 {
        let y = py(t);
        s.line(ml, y, ml + pw, y, "#dddddd", "stroke-width=\"0.5\"");
        s.text(ml - 6.0, y + 4.0, 11.0, "end", 0.0, &tick_label(t));
        t += ystep;
    }
    let mut t = 0.0;
    while t <= xtop + xstep * 1e-9 {
        let x = px(t);
        s.line(x, mt + ph, x, mt + ph + 4.0, "black", "");
        s.text(x, mt + ph + 18.0, 11.0, "middle", 0.0, &tick_label(t));
        t += xstep;
    }
    s.line(ml, mt, ml, mt + ph, "black", "");
    s.line(ml, mt + ph, ml + pw, mt + ph, "black", "");
    s.text(ml + pw / 2.0, mt + ph + 40.0, 12.0, "middle", 0.0, "cycle");
    s.text(
        18.0,
        mt + ph / 2.0,
        12.0,
        "middle",
        -90.0,
        "IPC (thread insts / cycle)",
    );
    for (i, (k, off)) in report.kernels.iter().zip(&offsets).enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = k
            .ipc_timeline
            .iter()
            .map(|&(c, ipc)| (px(*off as f64 + c as f64), py(finite(ipc).max(0.0))))
            .collect();
        let title = kernel_label(k.launch_uid, &k.name);
        if pts.len() == 1 {
            s.circle(pts[0].0, pts[0].1, 3.0, color, &title);
        } else if !pts.is_empty() {
            s.polyline(&pts, color, &title);
        }
        let y = mt + i as f64 * 16.0;
        let lx = ml + pw + 20.0;
        s.line(lx, y + 6.0, lx + 14.0, y + 6.0, color, "stroke-width=\"2\"");
        s.text(lx + 20.0, y + 10.0, 11.0, "start", 0.0, &legend[i]);
    }
    s.finish()
}

/// SVG log-log scatter of simulated (y) against measured (x) cycles with the y = x line;
/// the title carries MAPE and Pearson correlation of the points. Points with a
/// non-positive or non-finite value cannot be drawn on log axes and are left out.
pub fn correlation_svg(points: &[CorrelationPoint]) -> String {
    let good: Vec<&CorrelationPoint> = points
        .iter()
        .filter(|p| {
            p.sim_cycles.is_finite() && p.hw_cycles.is_finite() && p.sim_cycles > 0.0 && p.hw_cycles > 0.0
        })
        .collect();
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for p in &good {
        lo = lo.min(p.sim_cycles.min(p.hw_cycles));
        hi = hi.max(p.sim_cycles.max(p.hw_cycles));
    }
    if good.is_empty() {
        lo = 1.0;
        hi = 10.0;
    }
    let dlo = lo.log10().floor();
    let mut dhi = hi.log10().ceil();
    if dhi <= dlo {
        dhi = dlo + 1.0;
    }
    let (ml, mt, side) = (80.0, 50.0, 440.0);
    let mut s = Svg::new(ml + side + 30.0, mt + side + 60.0);
    let sims: Vec<f64> = good.iter().map(|p| p.sim_cycles).collect();
    let hws: Vec<f64> = good.iter().map(|p| p.hw_cycles).collect();
    let stats = crate::correlate::Metrics::compute(&sims, &hws);
    let sub = match (stats.mape, stats.pearson) {
        (Some(m), Some(r)) => format!("n = {}, MAPE = {m:.1}%, r = {r:.4}", good.len()),
        (Some(m), None) => format!("n = {}, MAPE = {m:.1}%", good.len()),
        _ => format!("n = {}", good.len()),
    };
    s.text(
        ml + side / 2.0,
        20.0,
        15.0,
        "middle",
        0.0,
        "Simulated vs measured cycles",
    );
    s.text(ml + side / 2.0, 38.0, 12.0, "middle", 0.0, &sub);
    let map = |v: f64| (v.log10() - dlo) / (dhi - dlo) * side;
    let px = |v: f64| ml + map(v);
    let py = |v: f64| mt + side - map(v);
    let mut d = dlo;
    while d <= dhi + 1e-9 {
        let v = 10f64.powf(d);
        s.line(px(v), mt, px(v), mt + side, "#dddddd", "stroke-width=\"0.5\"");
        s.line(ml, py(v), ml + side, py(v), "#dddddd", "stroke-width=\"0.5\"");
        if d < dhi - 1e-9 {
            for m in 2..10 {
                let v = v * m as f64;
                s.line(px(v), mt, px(v), mt + side, "#f0f0f0", "stroke-width=\"0.5\"");
                s.line(ml, py(v), ml + side, py(v), "#f0f0f0", "stroke-width=\"0.5\"");
            }
        }
        let lab = format!("1e{}", d as i64);
        s.text(px(v), mt + side + 18.0, 11.0, "middle", 0.0, &lab);
        s.text(ml - 6.0, py(v) + 4.0, 11.0, "end", 0.0, &lab);
        d += 1.0;
    }
    s.line(ml, mt, ml, mt + side, "black", "");
    s.line(ml, mt + side, ml + side, mt + side, "black", "");
    // y = x.
    s.line(
        ml,
        mt + side,
        ml + side,
        mt,
        "#888888",
        "stroke-dasharray=\"5,4\"",
    );
    s.text(
        ml + 8.0,
        mt + 16.0,
        11.0,
        "start",
        0.0,
        "dashed: simulated = measured",
    );
    s.text(
        ml + side / 2.0,
        mt + side + 44.0,
        12.0,
        "middle",
        0.0,
        "measured cycles",
    );
    s.text(20.0, mt + side / 2.0, 12.0, "middle", -90.0, "simulated cycles");
    for p in &good {
        let title = format!(
            "{}: sim {} hw {} ({:+.1}%)",
            p.label,
            p.sim_cycles,
            p.hw_cycles,
            100.0 * (p.sim_cycles - p.hw_cycles) / p.hw_cycles
        );
        s.circle(px(p.hw_cycles), py(p.sim_cycles), 4.0, PALETTE[0], &title);
    }
    s.finish()
}

fn write_file(path: &Path, text: &str) -> Result<(), ReportError> {
    std::fs::write(path, text).map_err(|source| ReportError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// A grouped bar chart: one group of bars per category (e.g. a program), one bar per series
/// (e.g. a configuration), with an optional horizontal reference line (e.g. speed-up 1).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<String>,
    /// `values[series][category]`; `None` draws no bar.
    pub values: Vec<Vec<Option<f64>>>,
    pub reference: Option<f64>,
}

/// SVG of a [`BarChart`], values written above the bars; deterministic like the other plots.
pub fn bar_chart_svg(c: &BarChart) -> String {
    let ns = c.series.len().max(1);
    let ng = c.categories.len().max(1);
    let vals = c
        .values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite());
    let vmax = vals.fold(c.reference.unwrap_or(0.0), f64::max).max(1e-9) * 1.12;
    let step = nice_step(vmax, 6.0);
    let top = (vmax / step).ceil() * step;
    let bar_w = (480.0 / (ng * ns) as f64).clamp(6.0, 28.0);
    let group_w = bar_w * ns as f64 + bar_w;
    let labels: Vec<String> = c.categories.iter().map(|l| truncate(l, 30)).collect();
    let label_h = labels.iter().map(|l| text_width(l, 11.0)).fold(0.0f64, f64::max) * 0.71 + 20.0;
    let legend_w = c
        .series
        .iter()
        .map(|s| text_width(s, 12.0))
        .fold(0.0f64, f64::max)
        + 40.0;
    let (ml, mt, plot_h) = (70.0, 40.0, 300.0);
    let plot_w = ng as f64 * group_w + bar_w;
    let width = ml + plot_w + 20.0 + legend_w;
    let height = (mt + plot_h + label_h + 20.0).max(mt + ns as f64 * 18.0 + 20.0);
    let mut s = Svg::new(width, height);
    s.text(ml + plot_w / 2.0, 24.0, 15.0, "middle", 0.0, &c.title);
    let y_of = |v: f64| mt + plot_h - plot_h * (finite(v).clamp(0.0, top) / top);
    let mut t = 0.0;
    while t <= top + step * 1e-6 {
        let y = y_of(t);
        s.line(ml, y, ml + plot_w, y, "#dddddd", "stroke-width=\"0.5\"");
        s.text(ml - 6.0, y + 4.0, 11.0, "end", 0.0, &tick_label(t));
        t += step;
    }
    s.line(ml, mt, ml, mt + plot_h, "black", "");
    s.line(ml, mt + plot_h, ml + plot_w, mt + plot_h, "black", "");
    s.text(16.0, mt + plot_h / 2.0, 12.0, "middle", -90.0, &c.y_label);
    for (g, label) in labels.iter().enumerate() {
        let gx = ml + bar_w + g as f64 * group_w;
        for (si, name) in c.series.iter().enumerate() {
            let Some(v) = c
                .values
                .get(si)
                .and_then(|r| r.get(g))
                .copied()
                .flatten()
                .filter(|v| v.is_finite())
            else {
                continue;
            };
            let x = gx + si as f64 * bar_w;
            let y = y_of(v);
            let title = format!("{} — {name}: {}", c.categories[g], tick_label(v));
            s.rect(
                x,
                y,
                bar_w * 0.9,
                mt + plot_h - y,
                PALETTE[si % PALETTE.len()],
                Some(&title),
            );
            s.text(x + bar_w * 0.45, y - 3.0, 8.0, "middle", 0.0, &format!("{v:.2}"));
        }
        let lx = gx + bar_w * ns as f64 / 2.0;
        s.text(lx, mt + plot_h + 10.0, 11.0, "end", -45.0, label);
    }
    if let Some(r) = c.reference {
        let y = y_of(r);
        s.line(ml, y, ml + plot_w, y, "#444444", "stroke-dasharray=\"4 3\"");
    }
    let lx = ml + plot_w + 20.0;
    for (si, name) in c.series.iter().enumerate() {
        let y = mt + si as f64 * 18.0;
        s.rect(lx, y, 12.0, 12.0, PALETTE[si % PALETTE.len()], None);
        s.text(lx + 18.0, y + 10.0, 12.0, "start", 0.0, name);
    }
    s.finish()
}

/// Writes [`stalls_svg`] to `path`.
pub fn plot_stalls(report: &RunReport, path: impl AsRef<Path>) -> Result<(), ReportError> {
    write_file(path.as_ref(), &stalls_svg(report))
}

/// Writes [`ipc_svg`] to `path`.
pub fn plot_ipc(report: &RunReport, path: impl AsRef<Path>) -> Result<(), ReportError> {
    write_file(path.as_ref(), &ipc_svg(report))
}

/// Writes [`correlation_svg`] to `path`.
pub fn plot_correlation(points: &[CorrelationPoint], path: impl AsRef<Path>) -> Result<(), ReportError> {
    write_file(path.as_ref(), &correlation_svg(points))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(esc("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
        assert_eq!(esc("x\u{1}y"), "x?y");
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(100.0, 5.0), 20.0);
        assert_eq!(nice_step(0.0, 5.0), 1.0);
        assert_eq!(nice_step(f64::NAN, 5.0), 1.0);
        assert_eq!(tick_label(2.0), "2");
        assert_eq!(tick_label(0.25), "0.25");
    }

    #[test]
    fn bar_chart_draws_one_bar_per_value() {
        let c = BarChart {
            title: "t".into(),
            y_label: "speed-up".into(),
            categories: vec!["a".into(), "b".into()],
            series: vec!["x".into(), "y".into()],
            values: vec![vec![Some(1.5), None], vec![Some(0.5), Some(f64::NAN)]],
            reference: Some(1.0),
        };
        let svg = bar_chart_svg(&c);
        assert_eq!(svg.matches("<title>").count(), 2, "one bar per finite value");
        assert!(svg.contains("a — x: 1.5") && svg.contains("a — y: 0.5"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        assert!(bar_chart_svg(&BarChart::default()).starts_with("<svg"));
    }

    #[test]
    fn empty_inputs_render() {
        let r = RunReport::default();
        assert!(stalls_svg(&r).starts_with("<svg"));
        assert!(ipc_svg(&r).starts_with("<svg"));
        assert!(correlation_svg(&[]).starts_with("<svg"));
        let bad = [CorrelationPoint {
            label: "k".into(),
            sim_cycles: 0.0,
            hw_cycles: f64::NAN,
        }];
        let s = correlation_svg(&bad);
        assert!(!s.contains("NaN") && !s.contains("inf"));
    }
}

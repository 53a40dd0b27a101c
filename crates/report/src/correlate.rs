//! Correlation of simulated kernel cycles with hardware measurements.
//!
//! Input: a simple CSV (`kernel,launch_id,cycles`) or an Nsight Compute CSV export (raw
//! page, one column per metric, or details page, one row per metric); see
//! `docs/report.md`. Matching, error metrics and the percentile method are documented on
//! [`correlate`] and [`Metrics`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::csv::{self, Record};
use crate::model::RunReport;
use crate::svg::CorrelationPoint;
use crate::ReportError;

/// One measured kernel launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HwKernel {
    pub name: String,
    /// Launch id in sassim's numbering (1-based like `kernel_launch_uid`); for Nsight
    /// Compute exports, the 0-based `ID` column plus 1.
    pub launch_id: Option<u32>,
    /// 0-based position among the kernels of the file.
    pub order: usize,
    /// Measured cycles.
    pub cycles: f64,
}

/// Cycle metrics recognised in Nsight Compute exports, most preferred first.
pub const NCU_CYCLE_METRICS: [&str; 6] = [
    "gpu__cycles_elapsed.max",
    "gpc__cycles_elapsed.max",
    "sm__cycles_elapsed.avg",
    "sm__cycles_elapsed.max",
    "gpu__cycles_elapsed.avg",
    // Details page (SpeedOfLight section) display name of gpc__cycles_elapsed.max.
    "Elapsed Cycles",
];

/// Reads measured kernel cycles from `path` (format detected from the header).
pub fn read_hw_csv(path: impl AsRef<Path>) -> Result<Vec<HwKernel>, ReportError> {
    let path = path.as_ref();
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ReportError::Io {
        path: shown.clone(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        // Line of the first invalid byte.
        let good = e.as_bytes().get(..e.utf8_error().valid_up_to()).unwrap_or(&[]);
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        ReportError::Parse {
            path: shown.clone(),
            line,
            message: "not valid UTF-8".to_string(),
        }
    })?;
    parse_hw_csv(&text, &shown)
}

/// Parses measured kernel cycles from CSV `text`; `source` names the file in errors.
pub fn parse_hw_csv(text: &str, source: &str) -> Result<Vec<HwKernel>, ReportError> {
    let err = |line: usize, message: String| ReportError::Parse {
        path: source.to_string(),
        line,
        message,
    };
    // Blank out tool log lines (`==PROF== …`, `==WARNING== …`) and `#` comments, keeping
    // line numbers.
    let cleaned: String = text
        .split_inclusive('\n')
        .map(|l| {
            let t = l.trim_start_matches('\u{feff}').trim_start();
            if t.starts_with("==") || t.starts_with('#') {
                "\n"
            } else {
                l
            }
        })
        .collect();
    let records = csv::parse(&cleaned).map_err(|(line, m)| err(line, m))?;
    let Some((header, rows)) = records.split_first() else {
        return Err(err(1, "empty file: no header line".to_string()));
    };
    let cols: Vec<String> = header.fields.iter().map(|f| f.trim().to_string()).collect();
    let find = |names: &[&str]| -> Option<usize> {
        cols.iter()
            .position(|c| names.iter().any(|n| c.eq_ignore_ascii_case(n)))
    };
    let kernel_name = find(&["Kernel Name"]);
    let metric_name = find(&["Metric Name"]);
    let metric_value = find(&["Metric Value"]);
    if let (Some(kn), Some(mn), Some(mv)) = (kernel_name, metric_name, metric_value) {
        let unit = find(&["Metric Unit"]);
        let id = find(&["ID"]);
        return parse_ncu_long(rows, kn, mn, mv, unit, id, &err);
    }
    if let Some(kn) = kernel_name {
        let metric = NCU_CYCLE_METRICS.iter().find_map(|m| find(&[m])).ok_or_else(|| {
            err(
                header.line,
                format!(
                    "Nsight Compute CSV without a cycle metric column (expected one of {})",
                    NCU_CYCLE_METRICS.join(", ")
                ),
            )
        })?;
        let id = find(&["ID"]);
        return parse_ncu_wide(rows, kn, metric, id, &err);
    }
    let kernel = find(&["kernel", "kernel_name", "name"]);
    let cycles = find(&["cycles"]);
    if let (Some(k), Some(c)) = (kernel, cycles) {
        let id = find(&["launch_id", "launch_uid", "id"]);
        return parse_simple(rows, k, id, c, &err);
    }
    Err(err(
        header.line,
        format!(
            "unrecognised header {:?}: expected `kernel,launch_id,cycles` or an Nsight Compute \
             CSV with \"Kernel Name\" and a cycle metric",
            header.fields.join(",")
        ),
    ))
}

fn field<'a>(r: &'a Record, i: usize, what: &str) -> Result<&'a str, (usize, String)> {
    r.fields.get(i).map(|s| s.trim()).ok_or_else(|| {
        (
            r.line,
            format!(
                "missing {what} column: expected at least {} fields, found {}",
                i + 1,
                r.fields.len()
            ),
        )
    })
}

/// Parses a non-negative number, allowing thousands separators (`,`, spaces, `'`).
fn parse_number(s: &str) -> Option<f64> {
    let t = s.trim();
    let v = match t.parse::<f64>() {
        Ok(v) => v,
        Err(_) => {
            let cleaned: String = t
                .chars()
                .filter(|c| !matches!(c, ',' | ' ' | '\'' | '\u{a0}' | '\u{202f}'))
                .collect();
            if cleaned.is_empty() || !cleaned.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return None;
            }
            cleaned.parse::<f64>().ok()?
        }
    };
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// Scale of an ncu cycle unit (`cycle`, `Kcycle`, `Mcycle`, `Gcycle`); `None` for other
/// units. Empty means unscaled.
fn unit_scale(u: &str) -> Option<f64> {
    match u.trim().to_ascii_lowercase().as_str() {
        "" | "cycle" | "cycles" => Some(1.0),
        "kcycle" | "kcycles" => Some(1e3),
        "mcycle" | "mcycles" => Some(1e6),
        "gcycle" | "gcycles" => Some(1e9),
        _ => None,
    }
}

type ErrFn<'a> = dyn Fn(usize, String) -> ReportError + 'a;

fn parse_simple(
    rows: &[Record],
    k: usize,
    id: Option<usize>,
    c: usize,
    err: &ErrFn<'_>,
) -> Result<Vec<HwKernel>, ReportError> {
    let mut out = Vec::new();
    for r in rows {
        let e = |(l, m): (usize, String)| err(l, m);
        let name = field(r, k, "kernel").map_err(e)?.to_string();
        let launch_id =
            match id {
                Some(i) => {
                    let s = field(r, i, "launch_id").map_err(e)?;
                    if s.is_empty() {
                        None
                    } else {
                        Some(s.parse::<u32>().map_err(|_| {
                            err(r.line, format!("launch_id {s:?} is not a non-negative integer"))
                        })?)
                    }
                }
                None => None,
            };
        if name.is_empty() && launch_id.is_none() {
            return Err(err(
                r.line,
                "kernel has neither a name nor a launch_id".to_string(),
            ));
        }
        let cs = field(r, c, "cycles").map_err(e)?;
        let cycles = parse_number(cs)
            .ok_or_else(|| err(r.line, format!("cycles {cs:?} is not a non-negative number")))?;
        out.push(HwKernel {
            name,
            launch_id,
            order: out.len(),
            cycles,
        });
    }
    Ok(out)
}

fn ncu_id(s: &str, line: usize, err: &ErrFn<'_>) -> Result<Option<u32>, ReportError> {
    let id = s
        .parse::<u32>()
        .map_err(|_| err(line, format!("ID {s:?} is not a non-negative integer")))?;
    Ok(id.checked_add(1))
}

fn parse_ncu_wide(
    rows: &[Record],
    kn: usize,
    metric: usize,
    id: Option<usize>,
    err: &ErrFn<'_>,
) -> Result<Vec<HwKernel>, ReportError> {
    let mut out = Vec::new();
    let mut scale = 1.0;
    for (ri, r) in rows.iter().enumerate() {
        let e = |(l, m): (usize, String)| err(l, m);
        let value = field(r, metric, "metric").map_err(e)?;
        let id_s = match id {
            Some(i) => Some(field(r, i, "ID").map_err(e)?),
            None => None,
        };
        let name_s = field(r, kn, "Kernel Name").map_err(e)?;
        // The units row (`--page raw` prints it after the header): empty ID/name, unit text.
        if ri == 0 && name_s.is_empty() && !matches!(id_s, Some(s) if !s.is_empty()) {
            scale = unit_scale(value)
                .ok_or_else(|| err(r.line, format!("metric unit {value:?} is not a cycle unit")))?;
            continue;
        }
        let launch_id = match id_s {
            Some(s) => ncu_id(s, r.line, err)?,
            None => None,
        };
        let cycles = parse_number(value)
            .ok_or_else(|| err(r.line, format!("metric value {value:?} is not a number")))?
            * scale;
        out.push(HwKernel {
            name: name_s.to_string(),
            launch_id,
            order: out.len(),
            cycles,
        });
    }
    Ok(out)
}

fn parse_ncu_long(
    rows: &[Record],
    kn: usize,
    mn: usize,
    mv: usize,
    unit: Option<usize>,
    id: Option<usize>,
    err: &ErrFn<'_>,
) -> Result<Vec<HwKernel>, ReportError> {
    // Kernels in order of first appearance: (first line, id, name, metric -> (line, value, unit)).
    struct K {
        line: usize,
        id: Option<u32>,
        name: String,
        metrics: BTreeMap<String, (usize, String, String)>,
    }
    let mut ks: Vec<K> = Vec::new();
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows {
        let e = |(l, m): (usize, String)| err(l, m);
        let name = field(r, kn, "Kernel Name").map_err(e)?;
        let id_s = match id {
            Some(i) => Some(field(r, i, "ID").map_err(e)?),
            None => None,
        };
        let launch_id = match id_s {
            Some(s) => ncu_id(s, r.line, err)?,
            None => None,
        };
        // Rows of one ID form one kernel; without an ID column, consecutive rows of the
        // same name do.
        let existing = match id_s {
            Some(s) => by_key.get(s).copied(),
            None => ks.last().filter(|k| k.name == name).map(|_| ks.len() - 1),
        };
        let idx = match existing {
            Some(i) => i,
            None => {
                ks.push(K {
                    line: r.line,
                    id: launch_id,
                    name: name.to_string(),
                    metrics: BTreeMap::new(),
                });
                if let Some(s) = id_s {
                    by_key.insert(s.to_string(), ks.len() - 1);
                }
                ks.len() - 1
            }
        };
        let m = field(r, mn, "Metric Name").map_err(e)?;
        let v = field(r, mv, "Metric Value").map_err(e)?;
        let u = match unit {
            Some(i) => field(r, i, "Metric Unit").map_err(e)?,
            None => "",
        };
        ks[idx]
            .metrics
            .entry(m.to_string())
            .or_insert((r.line, v.to_string(), u.to_string()));
    }
    let mut out = Vec::new();
    for k in ks {
        let Some((line, v, u)) = NCU_CYCLE_METRICS
            .iter()
            .find_map(|m| k.metrics.get(*m))
            .filter(|(_, _, u)| unit_scale(u).is_some())
        else {
            return Err(err(
                k.line,
                format!(
                    "kernel {:?} has no cycle metric (expected one of {} in cycles)",
                    k.name,
                    NCU_CYCLE_METRICS.join(", ")
                ),
            ));
        };
        let scale = unit_scale(u).unwrap_or(1.0);
        let cycles =
            parse_number(v).ok_or_else(|| err(*line, format!("metric value {v:?} is not a number")))? * scale;
        out.push(HwKernel {
            name: k.name,
            launch_id: k.id,
            order: out.len(),
            cycles,
        });
    }
    Ok(out)
}

/// The base identifier of a kernel name, mangled (`_Z6vecAddIfEvPT_…` → `vecAdd`,
/// `_ZN2ns3fooEv` → `foo`) or demangled (`void ns::foo<float>(float*)` → `foo`).
pub fn base_name(name: &str) -> String {
    let name = name.trim();
    if let Some(rest) = name.strip_prefix("_Z") {
        let b = rest.as_bytes();
        let mut i = 0;
        if b.get(i) == Some(&b'L') {
            i += 1;
        }
        let nested = b.get(i) == Some(&b'N');
        if nested {
            i += 1;
            while matches!(b.get(i), Some(b'K' | b'V' | b'r')) {
                i += 1;
            }
        }
        let mut last = None;
        while i < b.len() && b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let Ok(len) = rest[start..i].parse::<usize>() else {
                break;
            };
            let Some(id) = rest.get(i..i.saturating_add(len)) else {
                break;
            };
            last = Some(id.to_string());
            i += len;
            if !nested {
                break;
            }
        }
        if let Some(l) = last {
            return l;
        }
        return name.to_string();
    }
    let mut s = name;
    if let Some(p) = s.find('(') {
        s = &s[..p];
    }
    // Drop template arguments (outermost `<…>` at the end of the qualified name).
    if let Some(p) = s.find('<') {
        s = &s[..p];
    }
    let s = s.split_whitespace().last().unwrap_or("");
    s.rsplit("::").next().unwrap_or("").to_string()
}

/// Whether a simulated and a measured kernel name denote the same kernel: equal, or
/// equal [`base_name`]s.
pub fn names_match(sim: &str, hw: &str) -> bool {
    if sim == hw {
        return true;
    }
    let (a, b) = (base_name(sim), base_name(hw));
    !a.is_empty() && a == b
}

/// Error metrics over matched kernels with measured cycles > 0.
///
/// * APE_i = |sim_i − hw_i| / hw_i × 100
/// * MAPE = mean of APE_i
/// * Pearson r of (sim_i, hw_i); `None` below 2 kernels or with zero variance
/// * NRMSE = sqrt(mean((sim_i − hw_i)²)) / mean(hw_i)
/// * p90 APE: nearest-rank 90th percentile, the ⌈0.9·n⌉-th smallest APE
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub kernels: usize,
    pub mape: Option<f64>,
    pub pearson: Option<f64>,
    pub nrmse: Option<f64>,
    pub p90_ape: Option<f64>,
}

impl Metrics {
    /// Metrics of paired values; pairs with `hw <= 0` or non-finite values are ignored.
    pub fn compute(sim: &[f64], hw: &[f64]) -> Metrics {
        let pairs: Vec<(f64, f64)> = sim
            .iter()
            .zip(hw)
            .filter(|(s, h)| s.is_finite() && h.is_finite() && **h > 0.0)
            .map(|(s, h)| (*s, *h))
            .collect();
        let n = pairs.len();
        if n == 0 {
            return Metrics::default();
        }
        let nf = n as f64;
        let mut apes: Vec<f64> = pairs.iter().map(|(s, h)| (s - h).abs() / h * 100.0).collect();
        let mape = apes.iter().sum::<f64>() / nf;
        apes.sort_by(f64::total_cmp);
        let rank = ((0.9 * nf).ceil() as usize).clamp(1, n);
        let p90 = apes[rank - 1];
        let mean_s = pairs.iter().map(|p| p.0).sum::<f64>() / nf;
        let mean_h = pairs.iter().map(|p| p.1).sum::<f64>() / nf;
        let mse = pairs.iter().map(|(s, h)| (s - h) * (s - h)).sum::<f64>() / nf;
        let nrmse = mse.sqrt() / mean_h;
        let pearson = if n >= 2 {
            let cov: f64 = pairs.iter().map(|(s, h)| (s - mean_s) * (h - mean_h)).sum();
            let vs: f64 = pairs.iter().map(|(s, _)| (s - mean_s).powi(2)).sum();
            let vh: f64 = pairs.iter().map(|(_, h)| (h - mean_h).powi(2)).sum();
            let d = (vs * vh).sqrt();
            (d > 0.0 && d.is_finite()).then(|| cov / d)
        } else {
            None
        };
        let fin = |x: f64| x.is_finite().then_some(x);
        Metrics {
            kernels: n,
            mape: fin(mape),
            pearson: pearson.and_then(fin),
            nrmse: fin(nrmse),
            p90_ape: fin(p90),
        }
    }
}

/// One simulated kernel paired with its measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelMatch {
    pub launch_uid: u32,
    pub name: String,
    pub hw_name: String,
    pub hw_launch_id: Option<u32>,
    pub hw_order: usize,
    /// `"launch_id"` or `"order+name"`.
    pub matched_by: String,
    pub sim_cycles: u64,
    pub hw_cycles: f64,
    /// Absolute percentage error; `None` when the measurement is 0.
    pub ape: Option<f64>,
}

/// A simulated kernel without measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnmatchedSim {
    pub launch_uid: u32,
    pub name: String,
}

/// Result of [`correlate`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CorrelationReport {
    /// Matched kernels in simulated launch order.
    pub kernels: Vec<KernelMatch>,
    pub unmatched_sim: Vec<UnmatchedSim>,
    pub unmatched_hw: Vec<HwKernel>,
    pub metrics: Metrics,
    pub warnings: Vec<String>,
}

impl CorrelationReport {
    /// Points for [`crate::plot_correlation`].
    pub fn points(&self) -> Vec<CorrelationPoint> {
        self.kernels
            .iter()
            .map(|k| CorrelationPoint {
                label: format!("{}: {}", k.launch_uid, k.name),
                sim_cycles: k.sim_cycles as f64,
                hw_cycles: k.hw_cycles,
            })
            .collect()
    }
}

/// Pairs the simulated kernels of `sim` with the measured `hw` kernels and computes the
/// error metrics.
///
/// Matching: (1) a measured kernel with a `launch_id` is paired with the simulated kernel
/// of that `launch_uid` (a warning is recorded when the names do not
/// [`names_match`]); (2) every measured kernel still unpaired, in file order, is paired
/// with the first unpaired simulated kernel, in launch order, whose name matches, so the
/// k-th measurement of a kernel pairs with its k-th simulated launch.
pub fn correlate(sim: &RunReport, hw: &[HwKernel]) -> CorrelationReport {
    let mut rep = CorrelationReport::default();
    let mut sim_used = vec![false; sim.kernels.len()];
    let mut hw_pair: Vec<Option<(usize, &'static str)>> = vec![None; hw.len()];
    for (hi, h) in hw.iter().enumerate() {
        let Some(id) = h.launch_id else { continue };
        if let Some(si) = sim
            .kernels
            .iter()
            .enumerate()
            .position(|(i, k)| !sim_used[i] && k.launch_uid == id)
        {
            sim_used[si] = true;
            hw_pair[hi] = Some((si, "launch_id"));
            let sk = &sim.kernels[si];
            if !h.name.is_empty() && !names_match(&sk.name, &h.name) {
                rep.warnings.push(format!(
                    "launch {id}: simulated kernel {:?} and measured kernel {:?} have different names",
                    sk.name, h.name
                ));
            }
        }
    }
    for (hi, h) in hw.iter().enumerate() {
        if hw_pair[hi].is_some() || h.name.is_empty() {
            continue;
        }
        if let Some(si) = sim
            .kernels
            .iter()
            .enumerate()
            .position(|(i, k)| !sim_used[i] && names_match(&k.name, &h.name))
        {
            sim_used[si] = true;
            hw_pair[hi] = Some((si, "order+name"));
        }
    }
    let mut by_sim: Vec<Option<(usize, &'static str)>> = vec![None; sim.kernels.len()];
    for (hi, p) in hw_pair.iter().enumerate() {
        match p {
            Some((si, how)) => by_sim[*si] = Some((hi, how)),
            None => rep.unmatched_hw.push(hw[hi].clone()),
        }
    }
    for (si, k) in sim.kernels.iter().enumerate() {
        match by_sim[si] {
            Some((hi, how)) => {
                let h = &hw[hi];
                let ape = (h.cycles > 0.0 && h.cycles.is_finite())
                    .then(|| (k.cycles as f64 - h.cycles).abs() / h.cycles * 100.0);
                if ape.is_none() {
                    rep.warnings.push(format!(
                        "launch {}: measured cycles {} give no percentage error; left out of the metrics",
                        k.launch_uid, h.cycles
                    ));
                }
                rep.kernels.push(KernelMatch {
                    launch_uid: k.launch_uid,
                    name: k.name.clone(),
                    hw_name: h.name.clone(),
                    hw_launch_id: h.launch_id,
                    hw_order: h.order,
                    matched_by: how.to_string(),
                    sim_cycles: k.cycles,
                    hw_cycles: h.cycles,
                    ape,
                });
            }
            None => rep.unmatched_sim.push(UnmatchedSim {
                launch_uid: k.launch_uid,
                name: k.name.clone(),
            }),
        }
    }
    let s: Vec<f64> = rep.kernels.iter().map(|k| k.sim_cycles as f64).collect();
    let h: Vec<f64> = rep.kernels.iter().map(|k| k.hw_cycles).collect();
    rep.metrics = Metrics::compute(&s, &h);
    rep
}

/// Text rendering of a [`CorrelationReport`]: one row per matched kernel, the unmatched
/// kernels, and the metrics.
pub fn render_correlation(c: &CorrelationReport) -> String {
    let mut o = String::new();
    let name_w = c
        .kernels
        .iter()
        .map(|k| crate::text::truncate(&k.name, 40).chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        o,
        "{:>5}  {:<name_w$}  {:>12}  {:>14}  {:>8}  matched by",
        "#", "kernel", "sim cycles", "hw cycles", "APE %"
    );
    for k in &c.kernels {
        let ape = k.ape.map_or("-".to_string(), |a| format!("{a:.2}"));
        let _ = writeln!(
            o,
            "{:>5}  {:<name_w$}  {:>12}  {:>14.1}  {:>8}  {}",
            k.launch_uid,
            crate::text::truncate(&k.name, 40),
            k.sim_cycles,
            k.hw_cycles,
            ape,
            k.matched_by
        );
    }
    for u in &c.unmatched_sim {
        let _ = writeln!(o, "unmatched simulated kernel {}: {}", u.launch_uid, u.name);
    }
    for h in &c.unmatched_hw {
        let id = h.launch_id.map_or("-".to_string(), |i| i.to_string());
        let _ = writeln!(
            o,
            "unmatched measured kernel #{} (launch id {id}): {}",
            h.order, h.name
        );
    }
    for w in &c.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    let f = |x: Option<f64>, d: usize| x.map_or("-".to_string(), |v| format!("{v:.d$}"));
    let m = &c.metrics;
    let _ = writeln!(
        o,
        "kernels {}  MAPE {}%  p90 APE {}% (nearest rank)  Pearson r {}  NRMSE {}",
        m.kernels,
        f(m.mape, 2),
        f(m.p90_ape, 2),
        f(m.pearson, 4),
        f(m.nrmse, 4)
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_names() {
        assert_eq!(base_name("_Z6vecAddIfEvPT_S1_S1_i"), "vecAdd");
        assert_eq!(base_name("_ZN2ns3fooEv"), "foo");
        assert_eq!(base_name("_ZL3barv"), "bar");
        assert_eq!(base_name("void ns::foo<float>(float*, int)"), "foo");
        assert_eq!(base_name("vecAdd"), "vecAdd");
        assert_eq!(base_name("_Z99x"), "_Z99x");
        assert!(names_match(
            "_Z6vecAddIfEvPT_S1_S1_i",
            "void vecAdd<float>(float *, float *, float *, int)"
        ));
        assert!(!names_match("_Z3fooi", "bar(int)"));
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("1,234,567"), Some(1234567.0));
        assert_eq!(parse_number("1 234.5"), Some(1234.5));
        assert_eq!(parse_number("12.5"), Some(12.5));
        assert_eq!(parse_number("n/a"), None);
        assert_eq!(parse_number("-3"), None);
        assert_eq!(parse_number("inf"), None);
    }

    #[test]
    fn single_point_metrics() {
        let m = Metrics::compute(&[110.0], &[100.0]);
        assert_eq!(m.kernels, 1);
        assert!((m.mape.unwrap() - 10.0).abs() < 1e-12);
        assert_eq!(m.pearson, None);
        assert!((m.p90_ape.unwrap() - 10.0).abs() < 1e-12);
        assert_eq!(Metrics::compute(&[1.0], &[0.0]), Metrics::default());
    }
}

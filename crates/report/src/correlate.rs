//! Correlation of simulated kernel cycles with hardware measurements.
//!
//! Input: the measurements read by [`crate::hwdata`] (simple CSV, Nsight Compute, Nsight
//! Systems, nvprof, Accel-Sim's hardware statistics; `docs/report.md`). Matching, error
//! metrics and the percentile method are documented on [`correlate`] and [`Metrics`].

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::model::RunReport;
use crate::svg::CorrelationPoint;

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
    /// The metrics of each kernel (by [`base_name`]), when more than one kernel was matched.
    #[serde(default)]
    pub by_kernel: Vec<(String, Metrics)>,
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
    let mut names: Vec<String> = rep.kernels.iter().map(|k| base_name(&k.name)).collect();
    names.sort();
    names.dedup();
    if names.len() > 1 {
        for n in names {
            let (s, h): (Vec<f64>, Vec<f64>) = rep
                .kernels
                .iter()
                .filter(|k| base_name(&k.name) == n)
                .map(|k| (k.sim_cycles as f64, k.hw_cycles))
                .unzip();
            rep.by_kernel.push((n, Metrics::compute(&s, &h)));
        }
    }
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
    for (n, m) in &c.by_kernel {
        let _ = writeln!(
            o,
            "kernel {n}: {} matched, MAPE {}%, p90 APE {}%, Pearson r {}",
            m.kernels,
            f(m.mape, 2),
            f(m.p90_ape, 2),
            f(m.pearson, 4)
        );
    }
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
    fn single_point_metrics() {
        let m = Metrics::compute(&[110.0], &[100.0]);
        assert_eq!(m.kernels, 1);
        assert!((m.mape.unwrap() - 10.0).abs() < 1e-12);
        assert_eq!(m.pearson, None);
        assert!((m.p90_ape.unwrap() - 10.0).abs() < 1e-12);
        assert_eq!(Metrics::compute(&[1.0], &[0.0]), Metrics::default());
    }
}

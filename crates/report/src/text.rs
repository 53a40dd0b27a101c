//! Readable summary and the end-of-run table.

use std::fmt::Write as _;

use crate::model::{ratio, CacheCounters, HostStats, KernelReport, RunReport, ISSUED};

/// A readable multi-line summary of the run: per kernel its shape, cycles, IPC,
/// occupancy, issue-slot breakdown, caches and DRAM, then the totals.
pub fn summary(report: &RunReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "sassim {} on {}: {} kernel(s)",
        or_dash(&report.sim_version),
        or_dash(&report.gpu),
        report.kernels.len()
    );
    for w in &report.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    for k in &report.kernels {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "kernel {} {} [{}]",
            k.launch_uid,
            or_dash(&k.name),
            or_dash(&k.mode)
        );
        let _ = writeln!(
            o,
            "  grid ({},{},{}) block ({},{},{}), {} CTAs",
            k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.ctas
        );
        let _ = writeln!(
            o,
            "  cycles {} (bare kernel {}), warp insts {}, thread insts {}, IPC {:.4}, occupancy {:.2}%",
            k.cycles,
            k.busy_cycles(),
            k.warp_insts,
            k.thread_insts,
            ratio(k.thread_insts, k.busy_cycles()),
            pct(k.occupancy)
        );
        write_slots(&mut o, k);
        write_mem(
            &mut o,
            MemView {
                rfc_reads: k.rfc_reads,
                rfc_hits: k.rfc_hits,
                l0i_hits: k.l0i_hits,
                l0i_misses: k.l0i_misses,
                l1d: &k.l1d,
                l2: &k.l2,
                dram_reads: k.dram_reads,
                dram_writes: k.dram_writes,
                dram_row_hits: k.dram_row_hits,
                dram_row_misses: k.dram_row_misses,
            },
        );
        if !k.extra.is_empty() {
            let extra: Vec<String> = k.extra.iter().map(|(n, v)| format!("{n} {v}")).collect();
            let _ = writeln!(o, "  other: {}", extra.join(", "));
        }
        for w in &k.warnings {
            let _ = writeln!(o, "  warning: {w}");
        }
    }
    let t = &report.total;
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "total: {} kernel(s), cycles {} (bare {}), warp insts {}, thread insts {}, IPC {:.4}, occupancy {:.2}%",
        report.kernels.len(),
        t.cycles,
        t.bare_cycles,
        t.warp_insts,
        t.thread_insts,
        ratio(t.thread_insts, t.bare_cycles),
        pct(t.occupancy)
    );
    write_mem(
        &mut o,
        MemView {
            rfc_reads: t.rfc_reads,
            rfc_hits: t.rfc_hits,
            l0i_hits: t.l0i_hits,
            l0i_misses: t.l0i_misses,
            l1d: &t.l1d,
            l2: &t.l2,
            dram_reads: t.dram_reads,
            dram_writes: t.dram_writes,
            dram_row_hits: t.dram_row_hits,
            dram_row_misses: t.dram_row_misses,
        },
    );
    if let Some(h) = &report.host {
        let _ = writeln!(o, "{}", host_line(h));
    }
    o
}

struct MemView<'a> {
    rfc_reads: u64,
    rfc_hits: u64,
    l0i_hits: u64,
    l0i_misses: u64,
    l1d: &'a CacheCounters,
    l2: &'a CacheCounters,
    dram_reads: u64,
    dram_writes: u64,
    dram_row_hits: u64,
    dram_row_misses: u64,
}

fn write_slots(o: &mut String, k: &KernelReport) {
    let total = k.issue_slots();
    if total == 0 {
        return;
    }
    let mut v: Vec<(&String, u64)> = k
        .stall_breakdown
        .iter()
        .filter(|(_, &c)| c > 0)
        .map(|(n, &c)| (n, c))
        .collect();
    // Issued first, then stalls largest first.
    v.sort_by(|a, b| {
        (b.0 == ISSUED)
            .cmp(&(a.0 == ISSUED))
            .then(b.1.cmp(&a.1))
            .then_with(|| a.0.cmp(b.0))
    });
    let parts: Vec<String> = v
        .iter()
        .map(|(n, c)| format!("{n} {:.1}%", 100.0 * ratio(*c, total)))
        .collect();
    let _ = writeln!(o, "  issue slots ({total}): {}", parts.join(", "));
}

fn write_mem(o: &mut String, m: MemView<'_>) {
    let _ = writeln!(
        o,
        "  RFC hits {}/{} ({:.1}%), L0I hits {}/{} ({:.1}%)",
        m.rfc_hits,
        m.rfc_reads,
        100.0 * ratio(m.rfc_hits, m.rfc_reads),
        m.l0i_hits,
        m.l0i_hits.saturating_add(m.l0i_misses),
        100.0 * ratio(m.l0i_hits, m.l0i_hits.saturating_add(m.l0i_misses)),
    );
    let _ = writeln!(
        o,
        "  L1D accesses {} misses {} ({:.1}%), L2 accesses {} misses {} ({:.1}%)",
        m.l1d.accesses,
        m.l1d.misses,
        100.0 * m.l1d.miss_rate(),
        m.l2.accesses,
        m.l2.misses,
        100.0 * m.l2.miss_rate()
    );
    let _ = writeln!(
        o,
        "  DRAM reads {} writes {}, row hits {} misses {}",
        m.dram_reads, m.dram_writes, m.dram_row_hits, m.dram_row_misses
    );
}

/// The end-of-run table: one row per kernel (uid, name, cycles, IPC, the three largest
/// stall reasons in percent of all issue slots), a total row, and the simulator's speed.
/// `cycles` is the kernel's duration with its launch cost (a profiler's kernel duration);
/// IPC is over the bare kernel.
pub fn table(report: &RunReport, host: &HostStats) -> String {
    table_with(report, host, false)
}

/// [`table`] with a column of the bare kernel's cycles (no launch cost) when `bare`.
pub fn table_with(report: &RunReport, host: &HostStats, bare: bool) -> String {
    const NAME_MAX: usize = 40;
    let mut header = vec!["#", "kernel", "cycles"];
    if bare {
        header.push("bare cycles");
    }
    header.extend(["IPC", "top stalls (% of issue slots)"]);
    let stalls_of = |k: &KernelReport| {
        let stalls: Vec<String> = k
            .top_stalls(3)
            .iter()
            .map(|(n, p)| format!("{n} {p:.1}%"))
            .collect();
        if stalls.is_empty() {
            "-".to_string()
        } else {
            stalls.join(", ")
        }
    };
    let row = |uid: String, name: String, cycles: u64, busy: u64, insts: u64, stalls: String| {
        let mut r = vec![uid, name, cycles.to_string()];
        if bare {
            r.push(busy.to_string());
        }
        r.push(format!("{:.4}", ratio(insts, busy)));
        r.push(stalls);
        r
    };
    let mut rows: Vec<Vec<String>> = Vec::new();
    for k in &report.kernels {
        rows.push(row(
            k.launch_uid.to_string(),
            truncate(&k.name, NAME_MAX),
            k.cycles,
            k.busy_cycles(),
            k.thread_insts,
            stalls_of(k),
        ));
    }
    let t = &report.total;
    let total_k = KernelReport {
        stall_breakdown: t.stall_breakdown.clone(),
        ..KernelReport::default()
    };
    let total_row = row(
        String::new(),
        "total".to_string(),
        t.cycles,
        t.bare_cycles,
        t.thread_insts,
        stalls_of(&total_k),
    );
    let n = header.len();
    let mut w = vec![0usize; n];
    for (i, h) in header.iter().enumerate() {
        w[i] = h.chars().count();
    }
    for r in rows.iter().chain(std::iter::once(&total_row)) {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut o = String::new();
    let fmt_row = |o: &mut String, r: &[&str]| {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            if i == n - 1 {
                line.push_str(c);
            } else if i == 1 {
                let _ = write!(line, "{:<width$}", c, width = w[i]);
            } else {
                let _ = write!(line, "{:>width$}", c, width = w[i]);
            }
        }
        let _ = writeln!(o, "{line}");
    };
    fmt_row(&mut o, &header);
    let rule = w[..n - 1].iter().sum::<usize>() + 2 * (n - 1) + w[n - 1];
    let _ = writeln!(o, "{}", "-".repeat(rule));
    for r in &rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        fmt_row(&mut o, &cells);
    }
    let _ = writeln!(o, "{}", "-".repeat(rule));
    let cells: Vec<&str> = total_row.iter().map(String::as_str).collect();
    fmt_row(&mut o, &cells);
    let _ = writeln!(o, "{}", host_line(host));
    o
}

fn host_line(h: &HostStats) -> String {
    let mut s = format!(
        "simulator: {:.3} s wall, {} warp-insts/s, {} cycles/s",
        h.wall_seconds,
        si(h.warp_insts_per_s),
        si(h.cycles_per_s)
    );
    if h.threads > 0 {
        let _ = write!(s, ", {} thread(s)", h.threads);
    }
    s
}

/// `1.23 M` style number (k, M, G), plain below 1000.
fn si(x: f64) -> String {
    if !x.is_finite() {
        return "-".to_string();
    }
    let a = x.abs();
    if a >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if a >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if a >= 1e3 {
        format!("{:.2} k", x / 1e3)
    } else {
        format!("{x:.1}")
    }
}

fn pct(x: f64) -> f64 {
    if x.is_finite() {
        100.0 * x
    } else {
        0.0
    }
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}

/// At most `max` characters, with `…` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_units() {
        assert_eq!(si(12.0), "12.0");
        assert_eq!(si(1234.0), "1.23 k");
        assert_eq!(si(2.5e6), "2.50 M");
        assert_eq!(si(f64::NAN), "-");
    }

    #[test]
    fn truncates_by_chars() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}

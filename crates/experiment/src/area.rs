//! The dependence-management area model of MICRO'25 §7.5 (Table 7), for any preset.
//!
//! * Control bits: per warp, `dependence_counters` counters of ceil(log2(max + 1)) bits, a stall
//!   counter of ceil(log2(max_stall_counter + 1)) bits and a yield bit (6 x 6 + 4 + 1 = 41).
//! * Scoreboards: one entry per writable register per warp (regular registers up to
//!   `max_regs_per_thread`, RZ excluded; uniform, predicate and uniform predicate registers minus
//!   the constant one of each: 255 + 63 + 7 + 7 = 332). The RAW/WAW scoreboard has one bit per
//!   entry; the WAR scoreboard counts up to `c` consumers in log2(c + 1) bits per entry
//!   (332 + 332 x 6 = 2324 bits per warp for c = 63). Unlimited consumers have no finite size.
//! * Overhead = bits per warp x warps per SM / the SM's regular register file in bits
//!   (65,536 x 32 = 256 KB on the A6000): 0.09 % and 5.32 %.

use sassim_config::GpuConfig;

/// Bits to count 0 ..= n.
fn bits_for(n: u64) -> u64 {
    u64::from(64 - n.leading_zeros()).max(1)
}

/// Area of both mechanisms for one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct AreaModel {
    pub gpu: String,
    pub warps_per_sm: u64,
    pub rf_bits: u64,
    pub control_bits_per_warp: u64,
    pub scoreboard_entries: u64,
}

impl AreaModel {
    pub fn new(cfg: &GpuConfig) -> AreaModel {
        let i = &cfg.issue;
        let r = &cfg.regfile;
        let yield_bit = u64::from(i.yield_enabled);
        let control = u64::from(i.dependence_counters) * bits_for(u64::from(i.dependence_counter_max))
            + bits_for(u64::from(i.max_stall_counter))
            + yield_bit;
        let entries = u64::from(cfg.gpu.max_regs_per_thread)
            + u64::from(r.uniform_regs_per_warp.saturating_sub(1))
            + u64::from(r.predicate_regs_per_warp.saturating_sub(1))
            + u64::from(r.uniform_predicate_regs_per_warp.saturating_sub(1));
        AreaModel {
            gpu: cfg.gpu.name.clone(),
            warps_per_sm: u64::from(cfg.gpu.max_warps_per_sm),
            rf_bits: u64::from(cfg.gpu.regs_per_sm) * 32,
            control_bits_per_warp: control,
            scoreboard_entries: entries,
        }
    }

    /// Scoreboard bits per warp with at most `consumers` in-flight consumers per register.
    pub fn scoreboard_bits_per_warp(&self, consumers: u64) -> u64 {
        self.scoreboard_entries + self.scoreboard_entries * bits_for(consumers)
    }

    /// Overhead relative to the register file, in percent.
    pub fn percent(&self, bits_per_warp: u64) -> f64 {
        100.0 * (bits_per_warp * self.warps_per_sm) as f64 / self.rf_bits.max(1) as f64
    }

    pub fn control_bits_percent(&self) -> f64 {
        self.percent(self.control_bits_per_warp)
    }

    pub fn scoreboard_percent(&self, consumers: u64) -> f64 {
        self.percent(self.scoreboard_bits_per_warp(consumers))
    }
}

/// Consumer limits of Table 7 (unlimited has no finite area).
pub const TABLE7_CONSUMERS: [u64; 3] = [1, 3, 63];

/// Markdown table of the model for every preset.
pub fn markdown_table() -> String {
    let mut s = String::from(
        "| GPU | warps/SM | RF (KB) | control bits (bits/warp) | control bits | scoreboard, 1 consumer | 3 | 63 | unlimited |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in sassim_config::list_presets() {
        let Ok(cfg) = GpuConfig::preset(&p.name) else {
            continue;
        };
        let a = AreaModel::new(&cfg);
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.2}% |",
            a.gpu,
            a.warps_per_sm,
            a.rf_bits / 8 / 1024,
            a.control_bits_per_warp,
            a.control_bits_percent()
        ));
        for c in TABLE7_CONSUMERS {
            s.push_str(&format!(" {:.2}% |", a.scoreboard_percent(c)));
        }
        s.push_str(" - |\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table7_area_of_the_a6000_and_hopper() {
        // MICRO'25 §7.5: 41 bits per warp, 1968 per SM = 0.09 %; 332 entries; 2324 bits per
        // warp with 63 consumers = 111,552 per SM = 5.32 %; 1 and 3 consumers 1.52 % and 2.28 %.
        let a = AreaModel::new(&GpuConfig::preset("rtx-a6000").unwrap());
        assert_eq!(a.control_bits_per_warp, 41);
        assert_eq!(a.control_bits_per_warp * a.warps_per_sm, 1968);
        assert_eq!(a.scoreboard_entries, 332);
        assert_eq!(a.scoreboard_bits_per_warp(63), 2324);
        assert_eq!(a.scoreboard_bits_per_warp(63) * a.warps_per_sm, 111_552);
        assert_eq!(a.rf_bits, 256 * 1024 * 8);
        let r2 = |x: f64| (x * 100.0).round() / 100.0;
        assert_eq!(r2(a.control_bits_percent()), 0.09);
        assert_eq!(r2(a.scoreboard_percent(1)), 1.52);
        assert_eq!(r2(a.scoreboard_percent(3)), 2.28);
        assert_eq!(r2(a.scoreboard_percent(63)), 5.32);
        // Hopper, 64 warps per SM: 0.13 % and 7.09 %.
        let h = AreaModel::new(&GpuConfig::preset("h100").unwrap());
        assert_eq!(h.warps_per_sm, 64);
        assert_eq!(r2(h.control_bits_percent()), 0.13);
        assert_eq!(r2(h.scoreboard_percent(63)), 7.09);
    }

    #[test]
    fn every_preset_has_a_row() {
        let t = markdown_table();
        assert_eq!(t.lines().count(), 2 + sassim_config::list_presets().len());
        assert!(
            t.contains("| rtx-a6000 | 48 | 256 | 41 | 0.09% | 1.52% | 2.28% | 5.32% | - |"),
            "{t}"
        );
    }
}

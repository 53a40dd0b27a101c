//! Consistency checks between values. The range of every single value is in the table of
//! [`crate::limits`]; errors name the key and what it must satisfy.

// `u64::is_multiple_of` needs Rust 1.87; the workspace MSRV is 1.80.
#![allow(clippy::manual_is_multiple_of)]

use crate::error::{ConfigError, Result};
use crate::schema::GpuConfig;

fn inconsistent(key: &str, reason: String) -> Result<()> {
    Err(ConfigError::Inconsistent {
        key: key.into(),
        reason,
    })
}

/// `size` must hold a whole number of sets of `assoc` lines (products in u64: no overflow).
fn cache_geometry(prefix: &str, size: u64, line: u32, assoc: u32) -> Result<()> {
    let set = u64::from(line) * u64::from(assoc);
    if size == 0 || set == 0 || size % set != 0 {
        return inconsistent(
            &format!("{prefix}size"),
            format!("size {size} B is not a multiple of line ({line} B) x assoc ({assoc})"),
        );
    }
    Ok(())
}

impl GpuConfig {
    /// Check every value against its allowed range ([`crate::limits::LIMITS`]) and the
    /// cross-field invariants the model relies on.
    pub fn validate(&self) -> Result<()> {
        let value = toml::Value::try_from(self).map_err(|e| ConfigError::Parse {
            origin: self.gpu.name.clone(),
            message: e.to_string(),
        })?;
        crate::limits::check_value(&value)?;
        let g = &self.gpu;
        if g.name.trim().is_empty() {
            return inconsistent("gpu.name", "must not be empty".into());
        }
        if !g.arch.starts_with("sm_") || g.arch[3..].parse::<u32>().is_err() {
            return inconsistent("gpu.arch", format!("`{}` must look like `sm_86`", g.arch));
        }
        if g.max_warps_per_sm % g.subcores_per_sm != 0 {
            return inconsistent(
                "gpu.max_warps_per_sm",
                format!("must be a multiple of subcores_per_sm ({})", g.subcores_per_sm),
            );
        }

        let f = &self.frontend;
        cache_geometry(
            "frontend.l0i_",
            f.l0i_size_bytes.into(),
            f.l0i_line_bytes,
            f.l0i_assoc,
        )?;
        cache_geometry(
            "frontend.l1i_",
            f.l1i_size_bytes.into(),
            f.l1i_line_bytes,
            f.l1i_assoc,
        )?;
        if f.kernel_code_spacing % u64::from(f.instruction_bytes) != 0 {
            return inconsistent(
                "frontend.kernel_code_spacing",
                format!(
                    "{:#x} must be a multiple of instruction_bytes ({})",
                    f.kernel_code_spacing, f.instruction_bytes
                ),
            );
        }

        let c = &self.const_cache;
        for (k, cc) in [("l0_fl", &c.l0_fl), ("l0_vl", &c.l0_vl)] {
            cache_geometry(
                &format!("const_cache.{k}."),
                cc.size_bytes.into(),
                cc.line_bytes,
                cc.assoc,
            )?;
        }

        let l1 = &self.l1d;
        cache_geometry("l1d.", u64::from(l1.size_kb) * 1024, l1.line_bytes, l1.assoc)?;
        if l1.sector_bytes > l1.line_bytes || l1.line_bytes / l1.sector_bytes > 8 {
            return inconsistent(
                "l1d.sector_bytes",
                format!(
                    "{} B: a line ({} B) must hold 1 to 8 sectors",
                    l1.sector_bytes, l1.line_bytes
                ),
            );
        }
        // The memory hierarchy keeps at least half of the unified array as L1D (the
        // carve-out is capped at half): that half must hold one line per set.
        let sets = u64::from(l1.size_kb) * 1024 / (u64::from(l1.line_bytes) * u64::from(l1.assoc));
        if u64::from(l1.size_kb) * 512 < sets * u64::from(l1.line_bytes) {
            return inconsistent(
                "l1d.assoc",
                format!(
                    "{}: with a shared-memory carve-out of half the array, {sets} sets of {} B lines do not fit",
                    l1.assoc, l1.line_bytes
                ),
            );
        }

        let l2 = &self.l2;
        if l2.sector_bytes > l2.line_bytes || l2.line_bytes / l2.sector_bytes > 8 {
            return inconsistent(
                "l2.sector_bytes",
                format!(
                    "{} B: a line ({} B) must hold 1 to 8 sectors",
                    l2.sector_bytes, l2.line_bytes
                ),
            );
        }
        let bytes = u64::from(l2.size_kb) * 1024;
        let slices = u64::from(l2.partitions) * u64::from(l2.sub_partitions_per_partition);
        if bytes % slices != 0 {
            return inconsistent(
                "l2.size_kb",
                format!(
                    "{} KB does not split evenly over {slices} slices (partitions x sub_partitions_per_partition)",
                    l2.size_kb
                ),
            );
        }
        cache_geometry("l2.", bytes / slices, l2.line_bytes, l2.assoc)?;
        // The hierarchy uses the L1 line for both levels (docs/memory.md).
        if u64::from(l2.assoc) * u64::from(l2.line_bytes) < u64::from(l1.line_bytes) {
            return inconsistent(
                "l2.assoc",
                format!(
                    "{} ways of {} B hold less than one {} B L1 line",
                    l2.assoc, l2.line_bytes, l1.line_bytes
                ),
            );
        }
        // A slice's interleave chunk holds whole lines (of the L1 line both levels use).
        if l2.interleave_bytes < l1.line_bytes {
            return inconsistent(
                "l2.interleave_bytes",
                format!(
                    "{} B is less than one {} B line (l1d.line_bytes)",
                    l2.interleave_bytes, l1.line_bytes
                ),
            );
        }

        let d = &self.dram;
        if d.banks % d.bank_groups != 0 {
            return inconsistent("dram.bank_groups", "must divide dram.banks".into());
        }
        // One burst moves one sector (sassim-memory's DRAM model).
        let burst = u64::from(d.bus_width_bytes) * u64::from(d.burst_length);
        if burst != u64::from(l1.sector_bytes) {
            return inconsistent(
                "dram.burst_length",
                format!(
                    "bus_width_bytes ({}) x burst_length ({}) = {burst} B must equal the sector size l1d.sector_bytes ({} B)",
                    d.bus_width_bytes, d.burst_length, l1.sector_bytes
                ),
            );
        }
        let min_row = u64::from(l1.line_bytes) * (u64::from(d.bank_groups) / 2).max(1);
        if u64::from(d.row_bytes) < min_row {
            return inconsistent(
                "dram.row_bytes",
                format!(
                    "{} B is less than l1d.line_bytes x bank_groups / 2 = {min_row} B",
                    d.row_bytes
                ),
            );
        }
        let tm = &d.timing;
        if tm.t_rc < tm.t_ras {
            return inconsistent(
                "dram.timing.t_rc",
                format!("t_rc ({}) < t_ras ({})", tm.t_rc, tm.t_ras),
            );
        }
        self.try_opcode_table()?;
        Ok(())
    }
}

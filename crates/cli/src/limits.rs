//! The limits every simulating command takes: simulated cycles, wall-clock time, memory
//! (docs/reliability.md).

use anyhow::{anyhow, bail, Result};
use sassim_gpu::footprint::{self, Footprint};
use std::time::{Duration, Instant};

fn seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("`{s}`: seconds must be finite and >= 0"));
    }
    Ok(v)
}

#[derive(clap::Args, Clone, Debug)]
pub struct Limits {
    /// Stop each kernel after this many simulated cycles (0 = no limit); the run ends with
    /// the statistics of the cycles simulated and exit status 3.
    #[arg(long, default_value_t = 0)]
    pub max_cycles: u64,
    /// Stop after this many seconds of wall-clock time (0 = no limit), like --max-cycles.
    #[arg(long, value_name = "SECONDS", default_value = "0", value_parser = seconds)]
    pub max_wall: f64,
    /// Refuse to start when the estimated memory of the configuration and inputs exceeds
    /// this (e.g. 4G, 512M; 0 = no limit). Default: half of this machine's memory.
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
    /// Report a deadlock after this many cycles without progress (0 = never): no memory
    /// change, exit, barrier release or register write that changes a value.
    #[arg(long, default_value_t = 200_000)]
    pub deadlock_cycles: u64,
}

impl Limits {
    /// The wall-clock deadline, counted from now.
    pub fn deadline(&self) -> Option<Instant> {
        (self.max_wall > 0.0).then(|| Instant::now() + Duration::from_secs_f64(self.max_wall))
    }

    /// The memory limit and where it comes from; `None` = no limit.
    pub fn memory(&self) -> Result<Option<(u64, String)>> {
        match &self.max_memory {
            Some(s) => {
                let v = footprint::parse_size(s).map_err(|e| anyhow!("--max-memory {e}"))?;
                Ok((v > 0).then(|| (v, format!("--max-memory {s}"))))
            }
            None => Ok(footprint::default_limit().map(|l| {
                (
                    l,
                    format!(
                        "half of this machine's {}; --max-memory changes it",
                        footprint::human(l * 2)
                    ),
                )
            })),
        }
    }

    /// Refuse `fp` beyond the memory limit.
    pub fn check(&self, fp: &Footprint) -> Result<()> {
        if let Some((limit, how)) = self.memory()? {
            if let Err(e) = fp.check(limit, &how) {
                bail!("{e}");
            }
        }
        Ok(())
    }
}

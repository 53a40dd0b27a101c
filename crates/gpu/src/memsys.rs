//! The memory model behind the SMs' memory arbiters: fixed hit latencies (the SM
//! pipeline alone) or the L1/shared + interconnect + L2 + DRAM hierarchy of
//! `sassim-memory`.

use sassim_config::GpuConfig;
use sassim_timing::config::hit_latencies;
use sassim_timing::{DataMemory, FixedLatencyMemory, Sm};
use serde::Serialize;

/// Memory statistics of one kernel.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MemReport {}

pub enum MemModel {
    Fixed(sassim_timing::HitLatencies),
}

impl MemModel {
    pub fn new(cfg: &GpuConfig, _num_sms: usize, _hierarchy: bool) -> Self {
        MemModel::Fixed(hit_latencies(cfg))
    }

    /// The data memory of SM `sm`.
    pub fn sm_memory(&mut self, _sm: usize) -> Box<dyn DataMemory> {
        match self {
            MemModel::Fixed(lat) => Box::new(FixedLatencyMemory { lat: *lat }),
        }
    }

    /// Advance everything beyond the SMs by one core cycle, after the SMs ticked.
    pub fn tick<W>(&mut self, _cycle: u64, _sms: &mut [Sm<W>]) {}

    pub fn report<W>(&mut self, _sms: &mut [Sm<W>]) -> Option<MemReport> {
        None
    }
}

/// Copy the memory statistics into a kernel report.
pub fn fill_report(_m: &MemReport, _k: &mut sassim_report::KernelReport) {}

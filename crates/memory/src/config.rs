//! Configuration of the memory hierarchy.
//!
//! These structs are owned by `sassim-memory` so that it does not depend on the preset
//! crate; the GPU builder maps `sassim-config` preset sections (`[l1d]`, `[l2]`, `[icnt]`,
//! `[dram]`) onto them. Every field has a default; [`MemoryConfig::default`] is the
//! T4-like configuration ([`MemoryConfig::t4_like`]), calibrated so that an L1 hit takes
//! 32 core cycles and an L2 hit 188 core cycles from the moment the access reaches the
//! SM's shared memory structures (Jia et al., "Dissecting the NVidia Turing T4 GPU via
//! Microbenchmarking", Fig. 3.5 / Table 3.1). See `docs/memory.md` for the breakdown.
//!
//! Units: latencies are in cycles of the component's own clock domain (L1/shared: core
//! clock; interconnect: icnt clock; L2: L2 clock; DRAM timing: DRAM command clock).

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// Write policy, write allocation, index hashing and DRAM technology: the preset's own
/// types (`sassim-config`), so a preset maps onto this crate's configuration directly.
pub use sassim_config::{DramType, Hashing, WriteAllocate, WritePolicy};

/// Clock domains (MHz). The DRAM command clock is derived from the DRAM config
/// (`data_rate_mtps / transfers_per_cmd_cycle`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClockConfig {
    /// SM clock. T4 boost 1590 MHz (T4 paper Table 3.1).
    pub core_mhz: f64,
    /// Interconnect clock.
    pub icnt_mhz: f64,
    /// L2 clock.
    pub l2_mhz: f64,
}

impl Default for ClockConfig {
    fn default() -> Self {
        Self {
            core_mhz: 1590.0,
            icnt_mhz: 1590.0,
            l2_mhz: 1590.0,
        }
    }
}

/// `[l1d]`: the L1 data cache (unified with shared memory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct L1dConfig {
    /// Unified L1D + shared-memory capacity in KB (T4/Turing: 96, Ampere: 128).
    pub unified_kb: u32,
    /// Line size in bytes (128 on Volta+; T4 paper Table 3.1 "update granularity 128").
    pub line_bytes: u32,
    /// Sector size in bytes (32; T4 paper Table 3.1 "load granularity 32").
    pub sector_bytes: u32,
    /// Number of sets; the associativity follows from the L1 share of the unified
    /// capacity (GPGPU-Sim adaptive L1: `S:4:128:...`, 4 sets).
    pub sets: u32,
    /// Hit latency in core cycles, from arrival at the SM's shared structures to the
    /// data being ready for write-back. T4: 32 (T4 paper Fig. 3.5).
    pub latency: u32,
    /// Cycles from an L2 response reaching the SM to the data being ready for
    /// write-back (fill + data return).
    pub fill_latency: u32,
    /// Cycles an access needs before a miss is put in the miss queue (tag lookup).
    pub miss_latency: u32,
    /// MSHR entries (one per outstanding line). Accel-Sim RTX 2060: 256; MICRO'25 A6000: 384.
    pub mshr_entries: u32,
    /// Maximum requests merged into one MSHR entry. Accel-Sim 2060: 32; A6000: 48.
    pub mshr_max_merge: u32,
    /// Miss queue entries (requests waiting for the interconnect). Accel-Sim: 16-32.
    pub miss_queue_entries: u32,
    /// L2 requests sent to the interconnect per core cycle.
    pub requests_per_cycle: u32,
    /// Store policy. Volta+: write-back for local, write-through for global.
    pub write_policy: WritePolicy,
    /// Store-miss allocation for write-back stores (local memory).
    pub write_allocate: WriteAllocate,
    /// Set index function (GPGPU-Sim L1: linear).
    pub hashing: Hashing,
    /// Outstanding missed warp requests tracked per SM
    /// (`-memmory_max_concurrent_requests_standard_per_sm 1024`).
    pub max_pending_requests: u32,
}

impl Default for L1dConfig {
    fn default() -> Self {
        Self {
            unified_kb: 96,
            line_bytes: 128,
            sector_bytes: 32,
            sets: 4,
            latency: 32,
            fill_latency: 4,
            miss_latency: 4,
            mshr_entries: 256,
            mshr_max_merge: 32,
            miss_queue_entries: 16,
            requests_per_cycle: 1,
            write_policy: WritePolicy::LocalWbGlobalWt,
            write_allocate: WriteAllocate::LazyFetchOnRead,
            hashing: Hashing::Linear,
            max_pending_requests: 1024,
        }
    }
}

/// `[shared]`: shared memory (carved out of the unified L1D capacity).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SharedMemConfig {
    /// Shared-memory carve-out in KB; the L1D gets `unified_kb - carveout_kb`.
    /// T4: 32 or 64 (T4 paper Table 3.1); default 32 → 64 KB L1D.
    pub carveout_kb: u32,
    /// Banks (32, T4 paper Table 3.1).
    pub banks: u32,
    /// Bank width in bytes (4, T4 paper Table 3.1).
    pub bank_width_bytes: u32,
    /// No-conflict load latency in core cycles from arrival at the shared structures.
    /// T4: 19 (T4 paper Table 3.1).
    pub latency: u32,
    /// Extra cycles of an uncontended shared atomic over a shared load
    /// (T4 paper Table 4.2: 8 cycles, measured as the increment over a dependent load).
    pub atomic_latency: u32,
    /// Extra cycles per additional lane hitting the same address
    /// (T4 Table 4.2: 8 → 69 cycles from 1 to 32 lanes ≈ 2 per lane).
    pub atomic_conflict_cycles: f64,
}

impl Default for SharedMemConfig {
    fn default() -> Self {
        Self {
            carveout_kb: 32,
            banks: 32,
            bank_width_bytes: 4,
            latency: 19,
            atomic_latency: 8,
            atomic_conflict_cycles: 2.0,
        }
    }
}

/// `[l2]`: L2 cache, partitions and sub-partitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct L2Config {
    /// Total L2 size in KB (T4: 4096, T4 paper Table 3.1).
    pub size_kb: u32,
    /// Memory partitions (one DRAM controller each). T4: 16 (256-bit bus of 16-bit
    /// GDDR6 channels, same convention as the MICRO'25 configs: A6000 384-bit → 24).
    pub partitions: u32,
    /// L2 slices per partition (2 in all MICRO'25 configs except 5070 Ti: 8).
    pub sub_partitions_per_partition: u32,
    pub line_bytes: u32,
    pub sector_bytes: u32,
    /// Associativity (16; MICRO'25 `S:64:128:16`).
    pub assoc: u32,
    /// ROP/tag pipeline latency in L2 cycles, paid by every request between leaving the
    /// interconnect and the tag lookup (GPGPU-Sim `-gpgpu_l2_rop_latency`).
    /// Calibrated: T4 L2 hit = 188 core cycles from the L1 access.
    pub latency: u32,
    /// Cycles from a tag hit or a DRAM fill to the response being ready to send.
    pub fill_latency: u32,
    /// Partition (slice) selection hash. Accel-Sim Volta+ configs: IPOLY.
    pub hashing: Hashing,
    /// Set index hash inside a slice (MICRO'25 `L:B:m:L:P` → IPOLY).
    pub set_hashing: Hashing,
    /// Interleaving granularity across slices in bytes (`dramid@8` → 256).
    pub interleave_bytes: u32,
    pub write_policy: WritePolicy,
    pub write_allocate: WriteAllocate,
    /// MSHR entries per slice (MICRO'25 `A:192:96`).
    pub mshr_entries: u32,
    pub mshr_max_merge: u32,
    /// Bytes per L2 cycle through the slice's data port (GPGPU-Sim: 32).
    pub data_port_bytes: u32,
    /// Queues (`-gpgpu_dram_partition_queues 64:64:64:64`): icnt→L2, L2→DRAM,
    /// DRAM→L2, L2→icnt.
    pub queue_icnt_to_l2: u32,
    pub queue_l2_to_dram: u32,
    pub queue_dram_to_l2: u32,
    pub queue_l2_to_icnt: u32,
    /// Cycles of the atomic unit for one uncontended atomic (added to the hit latency).
    pub atomic_latency: u32,
    /// Atomic-unit cycles per additional lane on the same address
    /// (T4 Table 4.2 global atomics: 76 → 116 from 1 to 32 lanes ≈ 1.3).
    pub atomic_conflict_cycles: f64,
}

impl Default for L2Config {
    fn default() -> Self {
        Self {
            size_kb: 4096,
            partitions: 16,
            sub_partitions_per_partition: 2,
            line_bytes: 128,
            sector_bytes: 32,
            assoc: 16,
            latency: 158,
            fill_latency: 2,
            hashing: Hashing::Ipoly,
            set_hashing: Hashing::Ipoly,
            interleave_bytes: 256,
            write_policy: WritePolicy::WriteBack,
            write_allocate: WriteAllocate::LazyFetchOnRead,
            mshr_entries: 192,
            mshr_max_merge: 96,
            data_port_bytes: 32,
            queue_icnt_to_l2: 64,
            queue_l2_to_dram: 64,
            queue_dram_to_l2: 64,
            queue_l2_to_icnt: 64,
            atomic_latency: 8,
            atomic_conflict_cycles: 1.3,
        }
    }
}

/// `[icnt]`: crossbar between SMs and L2 slices (one network per direction).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IcntConfig {
    /// Traversal latency in icnt cycles (excluding serialization).
    pub latency: u32,
    /// Flit size in bytes (MICRO'25 `-icnt_flit_size 40`).
    pub flit_bytes: u32,
    /// Flits per icnt cycle per port; bandwidth per port and direction is
    /// `flit_bytes * flits_per_cycle` bytes/cycle.
    pub flits_per_cycle: u32,
    /// Packet header bytes (address + command); data bytes are added for writes/reads.
    pub header_bytes: u32,
    /// Requests buffered per SM before `push` returns false.
    pub input_queue_entries: u32,
    /// Responses buffered per L2 slice before the slice stalls.
    pub output_queue_entries: u32,
    /// Packets in flight or buffered per destination port (credits).
    pub dest_queue_entries: u32,
}

impl Default for IcntConfig {
    fn default() -> Self {
        Self {
            latency: 8,
            flit_bytes: 40,
            flits_per_cycle: 1,
            header_bytes: 8,
            input_queue_entries: 32,
            output_queue_entries: 32,
            dest_queue_entries: 64,
        }
    }
}

/// DRAM timing in DRAM command-clock cycles (GPGPU-Sim `-gpgpu_dram_timing_opt` names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DramTiming {
    /// Column-to-column, different bank group (tCCDS).
    pub t_ccd: u32,
    /// Column-to-column, same bank group.
    pub t_ccdl: u32,
    /// Activate-to-activate, different banks.
    pub t_rrd: u32,
    /// Activate-to-column.
    pub t_rcd: u32,
    /// Activate-to-precharge.
    pub t_ras: u32,
    /// Precharge-to-activate.
    pub t_rp: u32,
    /// Activate-to-activate, same bank.
    pub t_rc: u32,
    /// Read latency (column command to first data).
    pub t_cl: u32,
    /// Write latency.
    pub t_wl: u32,
    /// Write-to-read turnaround after the write data (GPGPU-Sim tCDLR).
    pub t_wtr: u32,
    /// Write recovery (end of write data to precharge).
    pub t_wr: u32,
    /// Read-to-write command spacing.
    pub t_rtw: u32,
    /// Read-to-precharge (GPGPU-Sim RTPL).
    pub t_rtp: u32,
}

impl Default for DramTiming {
    /// MICRO'25 peer config, RTX A6000 / RTX 3080 / 3090 / 5070 Ti (GDDR6, 16 banks,
    /// 4 bank groups): `CCD=4 RRD=12 RCD=24 RAS=55 RP=24 RC=78 CL=24 WL=8 CDLR=10 WR=24
    /// CCDL=6 RTPL=4`; tRTW = CL + burst + 2 − WL (GPGPU-Sim's derivation).
    fn default() -> Self {
        Self {
            t_ccd: 4,
            t_ccdl: 6,
            t_rrd: 12,
            t_rcd: 24,
            t_ras: 55,
            t_rp: 24,
            t_rc: 78,
            t_cl: 24,
            t_wl: 8,
            t_wtr: 10,
            t_wr: 24,
            t_rtw: 22,
            t_rtp: 4,
        }
    }
}

/// A preset's `[dram.timing]` (every field stated there) as the memory system's timing.
impl From<&sassim_config::schema::DramTiming> for DramTiming {
    fn from(t: &sassim_config::schema::DramTiming) -> Self {
        // Destructured, so that a field added to either is a compile error here.
        let sassim_config::schema::DramTiming {
            t_ccd,
            t_ccdl,
            t_rrd,
            t_rcd,
            t_ras,
            t_rp,
            t_rc,
            t_cl,
            t_wl,
            t_wtr,
            t_wr,
            t_rtw,
            t_rtp,
        } = *t;
        Self {
            t_ccd,
            t_ccdl,
            t_rrd,
            t_rcd,
            t_ras,
            t_rp,
            t_rc,
            t_cl,
            t_wl,
            t_wtr,
            t_wr,
            t_rtw,
            t_rtp,
        }
    }
}

/// `[dram]`: DRAM channels (one controller per channel, FR-FCFS, open page).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DramConfig {
    #[serde(rename = "type")]
    pub dram_type: DramType,
    /// Data rate per pin in MT/s (T4: 10000, i.e. 5001 MHz GDDR6; A6000: 16000).
    pub data_rate_mtps: f64,
    /// Data transfers per command-clock cycle (GDDR6/6X/7: 4 in GPGPU-Sim's
    /// `-dram_data_command_freq_ratio 4`; HBM: 2). Command clock = data rate / this.
    pub transfers_per_cmd_cycle: u32,
    /// Channels per memory partition.
    pub channels_per_partition: u32,
    /// Data bus width of one channel in bits (GDDR6: 16, HBM2e pseudo-channel: 64).
    pub bus_width_bits: u32,
    /// Burst length in transfers; bytes per burst = bus_width_bits / 8 × burst_length,
    /// which must equal the L2 sector size (32).
    pub burst_length: u32,
    pub banks: u32,
    pub bank_groups: u32,
    /// Row (page) size per bank in bytes.
    pub row_bytes: u32,
    /// FR-FCFS scheduler queue entries per channel (A6000: 224, 2080 Ti: 192).
    pub sched_queue_entries: u32,
    /// Completed reads waiting to go back to L2 (A6000: 224).
    pub return_queue_entries: u32,
    /// Fixed pipeline latency (L2 cycles) between an L2 miss and the DRAM controller
    /// (GPGPU-Sim `-dram_latency`, but calibrated: T4 L2 miss ≈ 296 core cycles).
    pub latency: u32,
    pub timing: DramTiming,
}

impl Default for DramConfig {
    fn default() -> Self {
        // T4: GDDR6 5001 MHz → 10 Gb/s per pin; Turing timings from the MICRO'25 2080 Ti config.
        let mut d = Self::preset(DramType::Gddr6);
        d.data_rate_mtps = 10000.0;
        d.sched_queue_entries = 192;
        d.return_queue_entries = 192;
        d.latency = 71;
        d.timing = DramTiming {
            t_ccd: 4,
            t_ccdl: 4,
            t_rrd: 10,
            t_rcd: 20,
            t_ras: 50,
            t_rp: 20,
            t_rc: 62,
            t_cl: 20,
            t_wl: 8,
            t_wtr: 9,
            t_wr: 20,
            t_rtw: 18,
            t_rtp: 4,
        };
        d
    }
}

impl DramConfig {
    /// Defaults per memory technology. GDDR6 is the MICRO'25 A6000 config; the others
    /// keep GDDR6's nanosecond timings rescaled to their command clock (approximations,
    /// see docs/memory.md), with technology-specific width, burst and clock ratio.
    pub fn preset(t: DramType) -> Self {
        let gddr6 = Self {
            dram_type: DramType::Gddr6,
            data_rate_mtps: 16000.0,
            transfers_per_cmd_cycle: 4,
            channels_per_partition: 1,
            bus_width_bits: 16,
            burst_length: 16,
            banks: 16,
            bank_groups: 4,
            row_bytes: 2048,
            sched_queue_entries: 224,
            return_queue_entries: 224,
            latency: 60,
            timing: DramTiming::default(),
        };
        let base_clock = gddr6.cmd_clock_mhz();
        let rescale = |d: &mut DramConfig| {
            let f = d.cmd_clock_mhz() / base_clock;
            let s = |c: u32| ((c as f64) * f).round().max(1.0) as u32;
            let burst = d.burst_cycles();
            let t = &mut d.timing;
            *t = DramTiming {
                t_ccd: burst,
                t_ccdl: (s(t.t_ccdl)).max(burst),
                t_rrd: s(t.t_rrd),
                t_rcd: s(t.t_rcd),
                t_ras: s(t.t_ras),
                t_rp: s(t.t_rp),
                t_rc: s(t.t_rc),
                t_cl: s(t.t_cl),
                t_wl: s(t.t_wl),
                t_wtr: s(t.t_wtr),
                t_wr: s(t.t_wr),
                t_rtw: 0,
                t_rtp: s(t.t_rtp),
            };
            t.t_rtw = t.t_cl + burst + 2 - t.t_wl.min(t.t_cl + burst + 1);
        };
        match t {
            DramType::Gddr6 => gddr6,
            DramType::Gddr6x => {
                // PAM4, 19-21 Gb/s (RTX 3080/3090), same 16-bit channel and 32 B access.
                let mut d = Self {
                    dram_type: t,
                    data_rate_mtps: 21000.0,
                    ..gddr6
                };
                rescale(&mut d);
                d
            }
            DramType::Gddr7 => {
                // PAM3, 28-32 Gb/s (RTX 50 series).
                let mut d = Self {
                    dram_type: t,
                    data_rate_mtps: 28000.0,
                    ..gddr6
                };
                rescale(&mut d);
                d
            }
            DramType::Hbm2e => {
                // 64-bit pseudo-channel, BL4 → 32 B, 3.2 Gb/s, DDR command clock 1.6 GHz.
                let mut d = Self {
                    dram_type: t,
                    data_rate_mtps: 3200.0,
                    transfers_per_cmd_cycle: 2,
                    bus_width_bits: 64,
                    burst_length: 4,
                    row_bytes: 1024,
                    ..gddr6
                };
                rescale(&mut d);
                d
            }
            DramType::Hbm3 => {
                // 32-bit pseudo-channel, BL8 → 32 B, 6.4 Gb/s, command clock 3.2 GHz.
                let mut d = Self {
                    dram_type: t,
                    data_rate_mtps: 6400.0,
                    transfers_per_cmd_cycle: 2,
                    bus_width_bits: 32,
                    burst_length: 8,
                    row_bytes: 1024,
                    ..gddr6
                };
                rescale(&mut d);
                d
            }
        }
    }

    /// DRAM command clock in MHz.
    pub fn cmd_clock_mhz(&self) -> f64 {
        self.data_rate_mtps / self.transfers_per_cmd_cycle.max(1) as f64
    }

    /// Command cycles one burst occupies the data bus.
    pub fn burst_cycles(&self) -> u32 {
        self.burst_length
            .div_ceil(self.transfers_per_cmd_cycle.max(1))
            .max(1)
    }

    /// Bytes moved by one burst.
    pub fn burst_bytes(&self) -> u32 {
        self.bus_width_bits / 8 * self.burst_length
    }
}

/// The whole memory-hierarchy configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    pub l1d: L1dConfig,
    pub shared: SharedMemConfig,
    pub l2: L2Config,
    pub icnt: IcntConfig,
    pub dram: DramConfig,
    pub clocks: ClockConfig,
}

impl MemoryConfig {
    /// T4-like (TU104, 40 SMs, 1590 MHz, 4 MB L2, GDDR6 256-bit at 10 Gb/s = 320 GB/s).
    /// Same as `Default`.
    pub fn t4_like() -> Self {
        Self::default()
    }

    /// RTX A6000-like, from the MICRO'25 peer config (`SM86_RTXA6000`): 1800 MHz,
    /// 128 KB unified L1D (`S:4:128:256`, MSHR 384×48, miss queue 32), 100 KB shared,
    /// 24 partitions × 2 slices of 128 KB (6 MB), GDDR6 384-bit at 16 Gb/s = 768 GB/s,
    /// sched/return queues 224. Latencies keep the T4 calibration's structure with the
    /// peer's L2 (ROP) latency of 211.
    pub fn a6000_like() -> Self {
        Self {
            l1d: L1dConfig {
                unified_kb: 128,
                mshr_entries: 384,
                mshr_max_merge: 48,
                miss_queue_entries: 32,
                ..L1dConfig::default()
            },
            shared: SharedMemConfig {
                carveout_kb: 100,
                ..SharedMemConfig::default()
            },
            l2: L2Config {
                size_kb: 6144,
                partitions: 24,
                latency: 175,
                ..L2Config::default()
            },
            icnt: IcntConfig::default(),
            dram: DramConfig::preset(DramType::Gddr6),
            clocks: ClockConfig {
                core_mhz: 1800.0,
                icnt_mhz: 1800.0,
                l2_mhz: 1800.0,
            },
        }
    }

    /// L1D capacity in bytes after the shared-memory carve-out.
    pub fn l1d_bytes(&self) -> u64 {
        (self.l1d.unified_kb.saturating_sub(self.shared.carveout_kb)) as u64 * 1024
    }

    /// Total L2 slices.
    pub fn l2_slices(&self) -> usize {
        (self.l2.partitions * self.l2.sub_partitions_per_partition) as usize
    }

    /// Total DRAM channels.
    pub fn dram_channels(&self) -> usize {
        (self.l2.partitions * self.dram.channels_per_partition) as usize
    }

    /// Peak DRAM bandwidth in bytes per second.
    pub fn theoretical_bandwidth_bytes_per_sec(&self) -> f64 {
        self.dram_channels() as f64 * (self.dram.bus_width_bits as f64 / 8.0) * self.dram.data_rate_mtps * 1e6
    }

    /// Peak DRAM bandwidth in bytes per core cycle.
    pub fn theoretical_bandwidth_bytes_per_core_cycle(&self) -> f64 {
        self.theoretical_bandwidth_bytes_per_sec() / (self.clocks.core_mhz * 1e6)
    }

    /// Checks the invariants the model relies on.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let p2 = |v: u32, what: &'static str| {
            if v == 0 || !v.is_power_of_two() {
                Err(ConfigError::NotPowerOfTwo(what, v))
            } else {
                Ok(())
            }
        };
        p2(self.l1d.line_bytes, "l1d.line_bytes")?;
        p2(self.l1d.sector_bytes, "l1d.sector_bytes")?;
        p2(self.l2.line_bytes, "l2.line_bytes")?;
        p2(self.l2.sector_bytes, "l2.sector_bytes")?;
        p2(self.l2.interleave_bytes, "l2.interleave_bytes")?;
        p2(self.dram.bank_groups, "dram.bank_groups")?;
        p2(self.dram.banks, "dram.banks")?;
        p2(self.dram.row_bytes, "dram.row_bytes")?;
        if self.l1d.line_bytes / self.l1d.sector_bytes > 8 || self.l2.line_bytes / self.l2.sector_bytes > 8 {
            return Err(ConfigError::Invalid("at most 8 sectors per line"));
        }
        if self.l1d.line_bytes != self.l2.line_bytes || self.l1d.sector_bytes != self.l2.sector_bytes {
            return Err(ConfigError::Invalid("L1 and L2 line/sector sizes must match"));
        }
        // A miss of a whole line and the write-back of the dirty line it evicts enter the
        // slice's DRAM queue together; a smaller queue could never take them (the slice's
        // head request would stall for ever).
        if self.l2.queue_l2_to_dram < 2 * (self.l2.line_bytes / self.l2.sector_bytes) {
            return Err(ConfigError::Invalid(
                "l2.queue_l2_to_dram must hold two lines' sectors (a miss and the dirty line it evicts)",
            ));
        }
        if self.l2.interleave_bytes < self.l2.line_bytes {
            return Err(ConfigError::Invalid("l2.interleave_bytes must hold a whole line"));
        }
        if self.dram.burst_bytes() != self.l2.sector_bytes {
            return Err(ConfigError::Invalid(
                "DRAM burst bytes must equal the L2 sector size",
            ));
        }
        if self.dram.banks < self.dram.bank_groups || self.dram.banks > 64 {
            return Err(ConfigError::Invalid("dram.banks must be in bank_groups..=64"));
        }
        if self.dram.sched_queue_entries > 1 << 16 {
            return Err(ConfigError::Invalid(
                "dram.sched_queue_entries must be at most 65536",
            ));
        }
        if self.dram.row_bytes < self.l2.line_bytes * self.dram.bank_groups / 2 {
            return Err(ConfigError::Invalid("dram.row_bytes too small"));
        }
        if self.l1d_bytes() < (self.l1d.line_bytes * self.l1d.sets) as u64 {
            return Err(ConfigError::Invalid("L1D smaller than one way"));
        }
        let l2_slice = self.l2.size_kb as u64 * 1024 / self.l2_slices().max(1) as u64;
        if l2_slice < (self.l2.line_bytes * self.l2.assoc) as u64 {
            return Err(ConfigError::Invalid("L2 slice smaller than one set"));
        }
        if self.clocks.core_mhz <= 0.0
            || self.clocks.icnt_mhz <= 0.0
            || self.clocks.l2_mhz <= 0.0
            || self.dram.cmd_clock_mhz() <= 0.0
        {
            return Err(ConfigError::Invalid("clocks must be positive"));
        }
        if self.shared.banks == 0 || self.shared.banks > 64 || self.shared.bank_width_bytes == 0 {
            return Err(ConfigError::Invalid("shared.banks must be 1..=64"));
        }
        if self.l2.partitions == 0 || self.l2.sub_partitions_per_partition == 0 {
            return Err(ConfigError::Invalid("l2 needs partitions"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_l2_to_dram_queue_must_take_a_miss_and_its_write_back() {
        let mut c = MemoryConfig::default();
        let sectors = c.l2.line_bytes / c.l2.sector_bytes;
        c.l2.queue_l2_to_dram = 2 * sectors;
        assert_eq!(c.validate(), Ok(()));
        c.l2.queue_l2_to_dram = 2 * sectors - 1;
        let e = c.validate().expect_err("too small a queue");
        assert!(e.to_string().contains("l2.queue_l2_to_dram"), "{e}");
    }
}

//! Memory estimate of a simulation before it starts (docs/reliability.md).
//!
//! Every structure whose size a configuration or an input decides is counted with the
//! preset key (or input field) responsible for it: caches and MSHRs of every SM and L2
//! slice, queues, functional registers and shared memory of the resident warps and CTAs,
//! workload buffers, microbenchmark state. The figures are upper estimates of the
//! allocations in `sassim-memory`, `sassim-timing` and `sassim-functional` (per-entry sizes
//! below, rounded up); [`Footprint::check`] refuses a simulation whose total exceeds a
//! limit and names the largest part, its key and its figure.

use sassim_config::GpuConfig;

/// Bytes per cache line of tag state (tag, sector masks, LRU order and fill maps).
const LINE_STATE: u64 = 64;
/// Bytes per MSHR waiter and per queue entry (a request or response record).
const ENTRY: u64 = 64;
/// Bytes of functional state per register per warp (32 lanes x 4 bytes).
const WARP_REG: u64 = 128;
/// Registers per warp the functional engine allocates at most.
const MAX_WARP_REGS: u64 = 256;
/// Bytes of the functional engine's record of one warp and its share of its CTA's record,
/// besides registers and shared memory (thread ids, uniform registers and predicates,
/// control-flow state): 1.6 KB per one-warp CTA measured. The records of retired CTAs are
/// reused, so only the resident warps' records count (microbenchmarks keep all of them).
const WARP_RECORD: u64 = 2048;

/// One part of the estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// What it is, with the product that gives its size.
    pub what: String,
    /// The key or input field that decides it.
    pub key: String,
    pub bytes: u64,
}

/// The memory a simulation is estimated to need.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Footprint {
    pub parts: Vec<Part>,
}

/// `1.5 GiB`, `12.0 MiB`, `512 B`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

/// A size with an optional K/M/G/T suffix (powers of 1024); `0` means no limit.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        None => (t, 1u64),
        Some((i, _)) => {
            let m = match t[i..].to_ascii_uppercase().trim_end_matches(['B', 'I']) {
                "" => 1,
                "K" => 1 << 10,
                "M" => 1 << 20,
                "G" => 1 << 30,
                "T" => 1 << 40,
                _ => return Err(format!("`{s}`: expected a size like 4G, 512M or 0")),
            };
            (&t[..i], m)
        }
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: expected a size like 4G, 512M or 0"))?;
    if !(v.is_finite() && v >= 0.0) || v * mult as f64 > u64::MAX as f64 {
        return Err(format!("`{s}`: expected a size like 4G, 512M or 0"));
    }
    Ok((v * mult as f64) as u64)
}

/// Physical memory of this machine (`/proc/meminfo`), if known.
pub fn machine_memory() -> Option<u64> {
    meminfo("MemTotal:")
}

/// Memory this machine has free for new work now (`MemAvailable` of `/proc/meminfo`), if
/// known.
pub fn available_memory() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// Field `key` of `/proc/meminfo`, in bytes (the file gives kB).
fn meminfo(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The default limit: half of the machine's memory (no limit where it is unknown).
pub fn default_limit() -> Option<u64> {
    machine_memory().map(|m| m / 2)
}

impl Footprint {
    fn add(&mut self, what: String, key: &str, bytes: u64) {
        self.parts.push(Part {
            what,
            key: key.to_string(),
            bytes,
        });
    }

    pub fn total(&self) -> u64 {
        self.parts.iter().fold(0u64, |a, p| a.saturating_add(p.bytes))
    }

    /// The largest part.
    pub fn largest(&self) -> Option<&Part> {
        self.parts.iter().max_by_key(|p| p.bytes)
    }

    /// Append another estimate (a workload's inputs to its configuration's).
    pub fn extend(&mut self, other: Footprint) {
        self.parts.extend(other.parts);
    }

    /// `Err` naming the figure, the limit and the largest part when the total exceeds
    /// `limit` (`how` says where the limit comes from).
    pub fn check(&self, limit: u64, how: &str) -> Result<(), String> {
        let total = self.total();
        if total <= limit {
            return Ok(());
        }
        let big = self
            .largest()
            .map(|p| {
                format!(
                    "; the largest part is {} from `{}`: {}",
                    human(p.bytes),
                    p.key,
                    p.what
                )
            })
            .unwrap_or_default();
        Err(format!(
            "the simulation would need about {} of memory, more than the limit of {} ({how}){big}",
            human(total),
            human(limit)
        ))
    }

    /// The structures a configuration allocates: `sms` simulated SMs (at most
    /// `gpu.num_sms`) with the memory hierarchy.
    pub fn of_config(g: &GpuConfig) -> Footprint {
        let mut f = Footprint::default();
        let sms = u64::from(g.gpu.num_sms);
        let n = |k: u32| u64::from(k);
        let l1 = &g.l1d;
        let l1_lines = n(l1.size_kb) * 1024 / n(l1.line_bytes).max(1);
        f.add(
            format!("L1D tags: {sms} SMs x {l1_lines} lines x {LINE_STATE} B"),
            "l1d.size_kb",
            sms * l1_lines * LINE_STATE,
        );
        let l1_mshr = n(l1.mshr_entries) * n(l1.mshr_max_merge) * ENTRY;
        f.add(
            format!(
                "L1D MSHRs: {sms} SMs x {} entries x {} merged requests x {ENTRY} B",
                l1.mshr_entries, l1.mshr_max_merge
            ),
            if l1.mshr_max_merge >= l1.mshr_entries {
                "l1d.mshr_max_merge"
            } else {
                "l1d.mshr_entries"
            },
            sms * l1_mshr,
        );
        let slots = n(g.mem_pipeline.max_outstanding_requests);
        f.add(
            format!("pending requests: {sms} SMs x {slots} x 2 x {ENTRY} B"),
            "mem_pipeline.max_outstanding_requests",
            sms * slots * 2 * ENTRY,
        );
        f.add(
            format!(
                "L1D miss queues: {sms} SMs x {} x {ENTRY} B",
                l1.miss_queue_entries
            ),
            "l1d.miss_queue_entries",
            sms * n(l1.miss_queue_entries) * ENTRY,
        );
        let fe = &g.frontend;
        let sub = n(g.gpu.subcores_per_sm);
        let icache = sub * n(fe.l0i_size_bytes) / n(fe.l0i_line_bytes).max(1)
            + n(fe.l1i_size_bytes) / n(fe.l1i_line_bytes).max(1);
        f.add(
            format!("instruction caches: {sms} SMs x {icache} lines x {LINE_STATE} B"),
            "frontend.l1i_size_bytes",
            sms * icache * LINE_STATE,
        );
        let l2 = &g.l2;
        let slices = n(l2.partitions) * n(l2.sub_partitions_per_partition);
        let l2_lines = n(l2.size_kb) * 1024 / n(l1.line_bytes).max(1);
        f.add(
            format!("L2 tags: {l2_lines} lines x {LINE_STATE} B"),
            "l2.size_kb",
            l2_lines * LINE_STATE,
        );
        f.add(
            format!(
                "L2 MSHRs: {slices} slices x {} entries x {} merged requests x {ENTRY} B",
                l2.mshr_entries, l2.mshr_max_merge
            ),
            if l2.mshr_max_merge >= l2.mshr_entries {
                "l2.mshr_max_merge"
            } else {
                "l2.mshr_entries"
            },
            slices * n(l2.mshr_entries) * n(l2.mshr_max_merge) * ENTRY,
        );
        let q = n(l2.queue_icnt_to_l2)
            + n(l2.queue_l2_to_dram)
            + n(l2.queue_dram_to_l2)
            + n(l2.queue_l2_to_icnt)
            + n(l2.latency);
        f.add(
            format!("L2 queues: {slices} slices x {q} x {ENTRY} B"),
            "l2.queue_icnt_to_l2",
            slices * q * ENTRY,
        );
        let ic = &g.icnt;
        let flits = n(ic.input_buffer_flits) + n(ic.output_buffer_flits) + n(ic.ejection_buffer_entries);
        f.add(
            format!("interconnect buffers: ({sms} SMs + {slices} slices) x {flits} x {ENTRY} B"),
            "icnt.input_buffer_flits",
            (sms + slices) * flits * ENTRY,
        );
        let d = &g.dram;
        let chans = n(l2.partitions) * n(d.channels_per_partition);
        f.add(
            format!(
                "DRAM queues: {chans} channels x ({} + {}) x {ENTRY} B",
                d.sched_queue_entries, d.return_queue_entries
            ),
            "dram.sched_queue_entries",
            chans * (n(d.sched_queue_entries) + n(d.return_queue_entries) + 8) * ENTRY,
        );
        let warps = sms * n(g.gpu.max_warps_per_sm);
        f.add(
            format!(
                "registers and records of resident warps: {sms} SMs x {} warps x ({MAX_WARP_REGS} x {WARP_REG} B + {WARP_RECORD} B)",
                g.gpu.max_warps_per_sm
            ),
            "gpu.max_warps_per_sm",
            warps * (MAX_WARP_REGS * WARP_REG + WARP_RECORD),
        );
        f.add(
            format!(
                "shared memory of resident CTAs: {sms} SMs x {} KB",
                g.gpu.shared_mem_per_sm_max_kb
            ),
            "gpu.shared_mem_per_sm_max_kb",
            sms * (n(g.gpu.shared_mem_per_sm_max_kb) + 64) * 1024,
        );
        f
    }

    /// A launch spec's buffers: each is held about four times while it is prepared and
    /// simulated (initial values, device copy, host-reference copy, expected output).
    pub fn of_spec(spec: &sassim_workload::Spec) -> Footprint {
        let mut f = Footprint::default();
        for b in &spec.buffers {
            let bytes = (b.count as u64).saturating_mul(b.elem.size() as u64);
            f.add(
                format!(
                    "buffer `{}`: {} x {} B x 4 copies",
                    b.name,
                    b.count,
                    b.elem.size()
                ),
                &format!("[[buffer]] {} count", b.name),
                bytes.saturating_mul(4),
            );
        }
        f
    }

    /// A microbenchmark: every warp's registers and shared memory are kept to be reported,
    /// and its initial memory contents are copied into the simulated memories.
    pub fn of_microbench(mb: &sassim_sass::microbench::Microbench, file: &str) -> Footprint {
        let mut f = Footprint::default();
        let ctas: u64 = mb.grid.iter().map(|&d| u64::from(d)).product();
        let warps = ctas
            * mb.block
                .iter()
                .map(|&d| u64::from(d))
                .product::<u64>()
                .div_ceil(32);
        f.add(
            format!(
                "{warps} warps kept with their registers and records, {ctas} CTAs with 48 KB shared memory"
            ),
            &format!("{file}: .grid"),
            warps * (MAX_WARP_REGS * WARP_REG + WARP_RECORD) + ctas * 64 * 1024,
        );
        let init: u64 = mb
            .global
            .iter()
            .chain(&mb.shared)
            .map(|m| m.bytes.len() as u64)
            .sum();
        f.add(
            format!("{init} B of .global/.shared contents x 2"),
            &format!("{file}: .global/.shared"),
            init * 2,
        );
        f
    }
}

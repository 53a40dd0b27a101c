//! After issue: the Control stage (dependence-counter increments), Allocate
//! (register-file read ports and the RFC for fixed-latency instructions) and the
//! register reads of variable-latency instructions (M25 A5.2, A8, rules 16–29).

use crate::config::CoreConfig;
use crate::sleep::{ACTED, NEVER};
use crate::sm::Sm;
use crate::state::{Event, MemEntry, Stage};
use sassim_isa::ArchReg;

impl<W> Sm<W> {
    /// Port-cycles per bank for `need` register reads per bank (scaled in place: an operand
    /// costs warp-width / port-width port-cycles) and the cycles the reads take: at least
    /// `read_cycles`, longer when one bank needs more port-cycles than its ports give.
    fn read_window(cfg: &CoreConfig, need: &mut [u8; 8]) -> u32 {
        let per_op = cfg.rf_operand_port_cycles;
        let ports = cfg.rf_read_ports_per_bank.max(1);
        let mut window = cfg.rf_read_cycles;
        for n in need.iter_mut().take(cfg.rf_banks as usize) {
            if *n == 0 {
                continue;
            }
            *n = n.saturating_mul(per_op);
            // (One port per bank in every preset: no division then.)
            let cycles = if ports == 1 {
                u32::from(*n)
            } else {
                u32::from(*n).div_ceil(ports)
            };
            window = window.max(cycles);
        }
        window
    }

    /// Returns when it could act next (`crate::sleep`).
    pub(crate) fn allocate_stage(&mut self, sc: usize, now: u64) -> u64 {
        let Some(st) = self.subcores[sc].allocate else {
            return NEVER;
        };
        if st.entered >= now {
            return st.entered + 1;
        }
        let sidx = st.sidx;
        let banks = self.cfg.rf_banks;
        let warp = self.warps[st.slot].exec_id;
        let read_cycles = self.cfg.rf_read_cycles;
        let mut need = [0u8; 8];
        let inst = &self.code[sidx];
        // Peek the RFC without changing it: which reads need a port.
        let s = &mut self.subcores[sc];
        if !self.cfg.rf_ideal {
            // Each (bank, slot) is read at most once per instruction, so peeking is exact.
            for (k, b, r) in inst.bank_reads(banks) {
                let hit = self.cfg.rfc_enabled && s.rfc.peek(warp, b, k, r);
                if !hit {
                    need[b as usize] += 1;
                }
            }
            // A slow bank (`regfile.bank_latency`): an instruction reading one stays longer.
            let slow = u64::from(self.cfg.rf_bank_latency.saturating_sub(1));
            if slow > 0 && need.iter().any(|&n| n > 0) && now <= st.entered + slow {
                self.stats.allocate_stall_cycles += 1;
                return ACTED;
            }
            let window = Self::read_window(&self.cfg, &mut need);
            // The port schedule's window starts at the current cycle (it is only looked
            // at here and in the variable-latency read stage).
            s.ports.advance(now);
            if !s.ports.fits(now + 1, window, &need[..banks as usize]) {
                self.stats.allocate_stall_cycles += 1;
                return ACTED;
            }
            s.ports.reserve(now + 1, window, &need[..banks as usize]);
        }
        let mut hits = Vec::new();
        let mut reads = Vec::new();
        if self.cfg.rf_org != sassim_config::RegFileOrganisation::Baseline {
            // LTRF: every operand comes from the warp's register-cache partition.
            self.stats.ltrf_cache_reads += inst.bank_reads(banks).count() as u64;
        }
        for (k, b, r) in inst.bank_reads(banks) {
            let reuse = inst.srcs[k].reuse;
            let hit = self.cfg.rfc_enabled && s.rfc.read(warp, b, k, r, reuse);
            self.stats.rfc_reads += 1;
            if hit {
                self.stats.rfc_hits += 1;
            } else {
                self.stats.rf_bank_reads += 1;
            }
            if self.record {
                if hits.len() <= k {
                    hits.resize(k + 1, false);
                }
                hits[k] = hits[k] || hit;
                reads.push(crate::state::RfcRead { slot: k, reg: r, hit });
            }
        }
        s.allocate = None;
        let delay = now.saturating_sub(st.issue + 2);
        let lat = inst.latency as u64;
        let vis_fixed = st.issue + lat + delay;
        // Memory instructions read regular registers one cycle late (rule 24); results of the
        // uniform datapath reach them in time: ptxas places `LDG [UR4]` two cycles after the
        // `ULDC.64 UR4` it reads (sm_75 `consttab`; sm_90 `desc[UR4]` likewise).
        let vis_var = if inst.uniform_dest {
            vis_fixed
        } else {
            vis_fixed + self.cfg.var_consumer_extra_cycles as u64
        };
        // Bank of the destination for load write-back arbitration.
        for r in &inst.writes {
            if let ArchReg::R(i) = r {
                let ring = (vis_fixed % 64) as usize;
                if s.fixed_wb_cycle[ring] != vis_fixed {
                    s.fixed_wb_cycle[ring] = vis_fixed;
                    s.fixed_wb[ring] = 0;
                }
                s.fixed_wb[ring] |= 1 << crate::inst::bank_of(u32::from(*i), banks).min(7);
            }
        }
        let has_read_sb = inst.ctrl.read_sb.is_some() || !self.uses_control_bits;
        let has_write = inst.ctrl.write_sb.is_some() || !self.uses_control_bits;
        let pc = inst.pc;
        if self.record {
            let n = inst.srcs.len();
            hits.resize(n, false);
            self.warps[st.slot]
                .log
                .rfc
                .push(crate::state::RfcLog { pc, hits, reads });
        }
        if has_read_sb {
            self.schedule(now + read_cycles as u64, Event::ReadDone { slot: st.slot, sidx });
        }
        if has_write {
            self.schedule(vis_fixed, Event::FixedDone { slot: st.slot, sidx });
        }
        // The values become visible to consumers on the compiler's schedule (issue + latency):
        // a delay in Allocate back-pressures the pipeline behind the producer, so the stall
        // counter that covers a producer is the same whatever the port conflicts (M25 5.3,
        // rule 22). Consumers execute at issue here, so they commit the value by its undelayed
        // time; the timing (write-back slot, counter release) keeps the delay.
        self.warps[st.slot].pending.push(crate::state::PendingResult {
            visible_fixed: vis_fixed - delay,
            visible_mem: vis_var - delay,
            slab: st.writes,
            inst: sidx,
        });
        ACTED
    }
    /// Returns when it could act next (`crate::sleep`).
    pub(crate) fn var_read_stage(&mut self, sc: usize, now: u64) -> u64 {
        let Some(st) = self.subcores[sc].var_q.front().copied() else {
            return NEVER;
        };
        if st.entered > now {
            return st.entered;
        }
        let banks = self.cfg.rf_banks;
        let read_cycles = self.cfg.rf_read_cycles;
        let inst = &self.code[st.sidx];
        let mut need = [0u8; 8];
        for (_, b, _) in inst.bank_reads(banks) {
            need[b as usize] += 1;
        }
        // Multi-register operands (tensor-core fragments: up to 10 registers for an
        // HMMA.16816.F32) are read through the same ports as every operand, one 32-bit
        // register of the warp per port-cycle (M25 §6: "we accurately model the timing for
        // reading/writing operands that use multiple registers"): the read takes as many
        // cycles as the busiest bank needs, at least `read_cycles`.
        let window = Self::read_window(&self.cfg, &mut need);
        let s = &mut self.subcores[sc];
        if !self.cfg.rf_ideal {
            s.ports.advance(now);
            if !s.ports.fits(now, window, &need[..banks as usize]) {
                // (When the ports fit again is not worked out: the stage looks every cycle.)
                return ACTED;
            }
            s.ports.reserve(now, window, &need[..banks as usize]);
        }
        let read_cycles = if self.cfg.rf_ideal { read_cycles } else { window };
        s.var_q.pop_front();
        let unit = inst.unit;
        let lat = inst.latency as u64;
        let initiation = inst.initiation as u64;
        let mut start = now + read_cycles as u64;
        if self.unit_shared(unit) {
            start = start.max(self.shared_unit_free[unit]);
            // One SM-wide unit (FP64 on consumer parts): a warp takes its initiation interval
            // or its lanes' cycles (2 lanes: 16 cycles per warp), whichever is longer.
            let ii = (self.cfg.units[unit].initiation_interval as u64).max(inst.latch_cycles as u64);
            self.shared_unit_free[unit] = start + ii.max(1);
        } else if inst.unit_ii > 0 {
            // A variable-latency tensor-core instruction waits for the sub-core's tensor unit
            // (also taken by fixed-latency MMAs at issue) and holds it for its initiation interval.
            let bw = self.cfg.gmma_smem_bytes_per_cycle as u64;
            if inst.smem_operand_bytes > 0 && bw > 0 {
                // Warpgroup MMA: its shared-memory operands stream through the SM-wide port
                // while it computes: it starts no earlier than its turn on the port, which it
                // holds for bytes / bandwidth cycles.
                // `gmma_smem_free` counts in bytes (1/bw cycles), so that quarter-warpgroup
                // shares that are not whole cycles add up exactly.
                let free = self.gmma_smem_free.max(start * bw);
                self.gmma_smem_free = free + inst.smem_operand_bytes as u64;
                start = free.div_ceil(bw);
            }
            let s = &mut self.subcores[sc];
            start = start.max(s.unit_free[unit]);
            s.unit_free[unit] = start + inst.unit_ii as u64;
        } else if inst.mem.is_none() {
            // The sub-core's unit (SFU, tensor core…) accepts one instruction per initiation
            // interval: its lanes (a 4-lane SFU takes 8 cycles per warp) or the opcode's own.
            let s = &mut self.subcores[sc];
            start = start.max(s.var_unit_free[unit]);
            s.var_unit_free[unit] = start + initiation;
        }
        self.schedule(
            now + read_cycles as u64 - 1,
            Event::ReadDone {
                slot: st.slot,
                sidx: st.sidx,
            },
        );
        self.schedule(
            start + lat,
            Event::Writeback {
                slot: st.slot,
                sidx: st.sidx,
                writes: st.writes,
            },
        );
        ACTED
    }
    /// Returns when it could act next (`crate::sleep`): while it waits for Allocate, when
    /// Allocate could.
    pub(crate) fn control_stage(&mut self, sc: usize, now: u64) -> u64 {
        let Some(st) = self.subcores[sc].control else {
            return NEVER;
        };
        if st.entered >= now {
            return st.entered + 1;
        }
        let mut wake = NEVER;
        let inst = &self.code[st.sidx];
        let (fixed, is_mem) = (inst.fixed, inst.mem.is_some());
        let w = &mut self.warps[st.slot];
        if st.entered + 1 == now && self.uses_control_bits {
            // Dependence counters are incremented in Control, visible next cycle (rule 9).
            if inst.ctrl.write_sb.is_some() || inst.ctrl.read_sb.is_some() {
                self.staged.push(st.slot);
                wake = ACTED;
            }
            if let Some(s) = inst.ctrl.write_sb {
                w.sb_staged[s as usize % crate::inst::DEP_COUNTERS] += 1;
            }
            if let Some(s) = inst.ctrl.read_sb {
                w.sb_staged[s as usize % crate::inst::DEP_COUNTERS] += 1;
            }
        }
        let s = &mut self.subcores[sc];
        let moved = if is_mem {
            let e = MemEntry {
                st: Stage { entered: now, ..st },
                arrive: now + 1,
                arb_ready: None,
            };
            s.mem_q.push_back(e);
            s.addr_waiting += 1;
            true
        } else if fixed {
            if s.allocate.is_none() {
                s.allocate = Some(Stage { entered: now, ..st });
                true
            } else {
                false
            }
        } else {
            s.var_q.push_back(Stage {
                entered: now + 1,
                ..st
            });
            true
        };
        if moved {
            s.control = None;
            wake = ACTED;
        }
        wake
    }
}

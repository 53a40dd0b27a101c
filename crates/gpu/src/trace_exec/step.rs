//! The SMs' step of a trace-driven kernel: each SM with its part of the trace
//! (`crate::trace_part`), on the GPU's threads, at its interconnect port when the memory
//! model has ports; the instructions each issued are summed in SM order.

use super::TraceKernel;
use crate::parallel::{each_at_port, each_sm};
use crate::trace_part::{PartExec, TraceCode, TracePart};

impl TraceKernel {
    /// The SMs' step (`KernelSource::tick_sms`, or `tick_sms_at` with `ports`).
    pub(super) fn step(
        &mut self,
        sms: &mut [sassim_timing::Sm<()>],
        notes: &mut [crate::parallel::SmNote],
        ports: Option<crate::memsys::SmPorts<'_>>,
        threads: &crate::parallel::Threads,
        cycle: u64,
    ) -> Result<(), String> {
        self.parts_for(sms.len());
        let code = &self.code;
        let n = sms.len();
        let useful = crate::parallel::useful_threads(threads, notes);
        let r = match ports {
            Some(ps) => {
                let (at, delivered_at) = (&ps.at, ps.delivered_at);
                let tick = |first: usize,
                            sms: &mut [sassim_timing::Sm<()>],
                            parts: &mut [TracePart],
                            notes: &mut [crate::parallel::SmNote],
                            ports: &mut [sassim_memory::SmPort]| {
                    each_at_port(first, sms, parts, notes, ports, |_, sm, p, note, port| {
                        tick_part(sm, p, code, cycle, note, Some((port, at, delivered_at)))
                    })
                };
                threads.for_parts4(useful, sms, &mut self.parts[..n], notes, ps.ports, &tick)
            }
            None => {
                let tick = |first: usize,
                            sms: &mut [sassim_timing::Sm<()>],
                            parts: &mut [TracePart],
                            notes: &mut [crate::parallel::SmNote]| {
                    each_sm(first, sms, parts, notes, |_, sm, p, note| {
                        tick_part(sm, p, code, cycle, note, None)
                    })
                };
                threads.for_parts3(useful, sms, &mut self.parts[..n], notes, &tick)
            }
        };
        self.issued_total += notes.iter().map(|n| u64::from(n.progress)).sum::<u64>();
        r
    }
}

/// One SM's step with its part of the trace (`parallel::tick_sm`, or `tick_sm_at` with
/// `port`), its instructions issued in its note.
#[inline(always)]
pub(super) fn tick_part(
    sm: &mut sassim_timing::Sm<()>,
    p: &mut TracePart,
    code: &TraceCode,
    cycle: u64,
    note: &mut crate::parallel::SmNote,
    port: Option<crate::parallel::PortOf<'_>>,
) -> Result<(), String> {
    let before = p.issued;
    let mut e = PartExec { code, p };
    match port {
        Some(port) => crate::parallel::tick_sm_at(sm, &mut e, cycle, note, port)?,
        None => crate::parallel::tick_sm(sm, &mut e, cycle, note)?,
    }
    note.progress = (e.p.issued - before) as u32;
    Ok(())
}

//! Thread-block clusters at run time (sm_90+): which CTA holds which rank of a cluster,
//! distributed shared memory (a CTA's shared-window address carries the rank of the CTA it
//! names in bits 31–24), and the cluster barrier (`UCGABAR_ARV` / `UCGABAR_WAIT`, PTX
//! `barrier.cluster.arrive` / `.wait`).
//!
//! Facts and their sources: docs/validation/hopper-isa-facts.md §6. The barrier counts one
//! arrival per warp per phase and releases when every warp of the cluster that has not exited
//! has arrived — warps of CTAs that have not started yet (the timing model dispatches a
//! cluster's CTAs one after the other) are counted as expected.

use super::*;
use std::collections::HashMap;

/// The `at_barrier` id of a warp waiting at the cluster barrier (CTA barriers are 0–15).
pub(super) const CLUSTER_BARRIER: u32 = 16;
/// Bits 31–24 of a shared-window address name the CTA's rank in its cluster.
pub(super) const RANK_SHIFT: u32 = 24;
const OFFSET_MASK: u64 = (1 << RANK_SHIFT) - 1;

/// One cluster's barrier.
#[derive(Debug, Clone, Copy, Default)]
struct ClusterBarrier {
    /// Completed phases.
    phase: u32,
    /// Warps arrived in the current phase.
    arrived: u32,
    /// Warps of the cluster that have exited.
    exited: u32,
}

/// Cluster bookkeeping of one launch.
#[derive(Debug, Default)]
pub(super) struct Clusters {
    /// Linear CTA id → CTA record, for running CTAs of cluster launches.
    cta_of: HashMap<u32, usize>,
    bars: HashMap<u32, ClusterBarrier>,
}

impl Clusters {
    /// Hash cluster `cl`'s barrier (livelock probes: arrivals without a release are not
    /// progress, so they are part of a warp's state).
    pub(super) fn hash_barrier(&self, cl: u32, h: &mut impl std::hash::Hasher) {
        let b = self
            .bars
            .get(&cl)
            .map_or([0; 3], |b| [b.phase, b.arrived, b.exited]);
        b.iter().for_each(|&v| h.write_u32(v));
    }
}

impl KernelExec {
    fn geom(&self) -> ClusterGeom {
        self.launch.clusters()
    }

    /// (cluster linear id, rank) of a linear CTA id.
    pub(super) fn cluster_position(&self, linear: u32) -> (u32, u32) {
        let g = self.geom();
        (g.cluster_index(linear), g.position(linear).2)
    }

    pub(super) fn cluster_started(&mut self, linear: u32, cidx: usize) {
        if self.launch.cluster_size() > 1 {
            self.clusters.cta_of.insert(linear, cidx);
        }
    }

    pub(super) fn cluster_retired(&mut self, linear: u32) {
        self.clusters.cta_of.remove(&linear);
    }

    /// The CTA record and shared offset a shared::cluster address of CTA `cta` names: bits
    /// 31–24 the target rank (its own rank for its own memory), bits 23–0 the offset. Outside
    /// a cluster launch only rank 0 (the CTA itself) exists. `None`: no such CTA is running.
    pub(super) fn cluster_smem(&self, cta: usize, addr: u64) -> Option<(usize, u64)> {
        let rank = (addr >> RANK_SHIFT) as u32;
        let off = addr & OFFSET_MASK;
        let c = &self.ctas[cta];
        if rank == c.rank {
            return Some((cta, off));
        }
        let n = self.launch.cluster_size();
        if n <= 1 || rank >= n {
            return None;
        }
        let g = self.geom();
        let (cid, _, _) = g.position(c.linear);
        let target = g.cluster_cta(cid, rank);
        self.clusters.cta_of.get(&target).map(|&i| (i, off))
    }

    fn warps_per_cluster(&self) -> u32 {
        let per_cta = match &self.opts.active_warps {
            Some(a) => a.iter().filter(|&&w| w < self.launch.warps_per_cta()).count() as u32,
            None => self.launch.warps_per_cta(),
        };
        per_cta * self.launch.cluster_size()
    }

    /// A warp of CTA `cta` exited: it no longer counts for its cluster's barrier.
    pub(super) fn cluster_warp_exited(&mut self, cta: usize) {
        if self.launch.cluster_size() <= 1 {
            return;
        }
        let cl = self.ctas[cta].cluster;
        self.clusters.bars.entry(cl).or_default().exited += 1;
        self.try_release_cluster(cl);
    }

    /// `UCGABAR_ARV`: warp `wi` arrives at its cluster's barrier.
    pub(super) fn cluster_arrive(&mut self, wi: usize) {
        let cl = self.ctas[self.warps[wi].cta].cluster;
        let b = self.clusters.bars.entry(cl).or_default();
        b.arrived += 1;
        self.warps[wi].cga_arrived = b.phase + 1;
        self.try_release_cluster(cl);
    }

    /// `UCGABAR_WAIT`: whether warp `wi` may go on (the phase it arrived in has completed);
    /// otherwise it waits at [`CLUSTER_BARRIER`] until the release. A warp that did not
    /// arrive waits for the current phase.
    pub(super) fn cluster_wait(&mut self, wi: usize) {
        let cl = self.ctas[self.warps[wi].cta].cluster;
        let phase = self.clusters.bars.entry(cl).or_default().phase;
        let arrived_in = self.warps[wi].cga_arrived;
        let done = arrived_in != 0 && phase >= arrived_in;
        if !done {
            self.warps[wi].at_barrier = Some(CLUSTER_BARRIER);
            if arrived_in == 0 {
                self.warps[wi].cga_arrived = phase + 1;
            }
        }
    }

    fn try_release_cluster(&mut self, cl: u32) {
        let need = self.warps_per_cluster();
        let Some(b) = self.clusters.bars.get_mut(&cl) else {
            return;
        };
        if b.arrived == 0 || b.arrived + b.exited < need {
            return;
        }
        b.phase += 1;
        b.arrived = 0;
        let phase = b.phase;
        self.progress += 1;
        for w in self.warps.iter_mut() {
            if w.at_barrier == Some(CLUSTER_BARRIER)
                && !w.exited
                && self.ctas[w.cta].cluster == cl
                && w.cga_arrived <= phase
            {
                w.at_barrier = None;
            }
        }
    }
}

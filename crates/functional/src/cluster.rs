//! Thread-block clusters (sm_90+): how a grid divides into clusters, the PTX cluster special
//! registers of a CTA, and the order in which CTAs are dispatched (a cluster's CTAs together).
//!
//! PTX ISA ("Special registers"): `%cluster_ctaid` = `%ctaid` mod the cluster dimensions,
//! `%clusterid` = `%ctaid` / the cluster dimensions, `%nclusterid` = grid / cluster,
//! `%cluster_ctarank` = the x-fastest linearisation of `%cluster_ctaid`, `%cluster_nctarank` =
//! CTAs per cluster. The grid must be a whole number of clusters in every dimension.

/// Most CTAs in a cluster: 8 portable, 16 with `cudaFuncAttributeNonPortableClusterSizeAllowed`
/// on H100 (CUDA 13.5 `cuda.h`; the TMA multicast mask has 16 bits).
pub const MAX_CLUSTER_CTAS: u32 = 16;

/// The cluster geometry of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterGeom {
    pub grid: [u32; 3],
    /// `[1, 1, 1]` without clusters.
    pub cluster: [u32; 3],
}

impl ClusterGeom {
    /// CTAs per cluster (1 without clusters; saturates for nonsense shapes, which
    /// [`error`](Self::error) refuses).
    pub fn size(&self) -> u32 {
        self.cluster.iter().fold(1u32, |a, &d| a.saturating_mul(d))
    }

    /// Why the cluster dimensions do not fit the grid or the hardware, if they do not.
    pub fn error(&self) -> Option<String> {
        let c = self.cluster;
        if self.size() > MAX_CLUSTER_CTAS {
            return Some(format!(
                "a cluster of {}x{}x{} CTAs exceeds the {MAX_CLUSTER_CTAS} CTAs a cluster may have",
                c[0], c[1], c[2]
            ));
        }
        if c.contains(&0) || (0..3).any(|d| !self.grid[d].is_multiple_of(c[d])) {
            return Some(format!(
                "cluster dimensions {}x{}x{} do not divide the grid {}x{}x{}",
                c[0], c[1], c[2], self.grid[0], self.grid[1], self.grid[2]
            ));
        }
        None
    }

    /// Clusters per grid dimension (`%nclusterid`).
    pub fn clusters_per_grid(&self) -> [u32; 3] {
        let c = self.cluster;
        [
            self.grid[0] / c[0].max(1),
            self.grid[1] / c[1].max(1),
            self.grid[2] / c[2].max(1),
        ]
    }

    /// The linear CTA id (x fastest) of rank `rank` of cluster `cid`.
    pub fn cluster_cta(&self, cid: [u32; 3], rank: u32) -> u32 {
        let c = self.cluster.map(|d| d.max(1));
        let r = [rank % c[0], (rank / c[0]) % c[1], rank / (c[0] * c[1])];
        let x = cid[0] * c[0] + r[0];
        let y = cid[1] * c[1] + r[1];
        let z = cid[2] * c[2] + r[2];
        x + self.grid[0] * (y + self.grid[1] * z)
    }

    /// `%ctaid` of a linear CTA id.
    pub fn ctaid(&self, linear: u32) -> [u32; 3] {
        let g = self.grid;
        [linear % g[0], (linear / g[0]) % g[1], linear / (g[0] * g[1])]
    }

    /// (`%clusterid`, `%cluster_ctaid`, `%cluster_ctarank`) of a linear CTA id.
    pub fn position(&self, linear: u32) -> ([u32; 3], [u32; 3], u32) {
        let c = self.cluster.map(|d| d.max(1));
        let id = self.ctaid(linear);
        let cid = [id[0] / c[0], id[1] / c[1], id[2] / c[2]];
        let within = [id[0] % c[0], id[1] % c[1], id[2] % c[2]];
        let rank = within[0] + c[0] * (within[1] + c[1] * within[2]);
        (cid, within, rank)
    }

    /// The linear id of the cluster holding linear CTA `linear` (x-fastest in `%clusterid`).
    pub fn cluster_index(&self, linear: u32) -> u32 {
        let (cid, _, _) = self.position(linear);
        let cg = self.clusters_per_grid();
        cid[0] + cg[0] * (cid[1] + cg[1] * cid[2])
    }

    /// The linear CTA id of the `i`-th CTA in dispatch order: cluster after cluster (clusters
    /// in x-fastest order of `%clusterid`), within a cluster by rank; the identity without
    /// clusters.
    pub fn dispatch_order(&self, i: u32) -> u32 {
        let n = self.size();
        if n <= 1 {
            return i;
        }
        let (cluster, rank) = (i / n, i % n);
        let cg = self.clusters_per_grid();
        let cid = [
            cluster % cg[0],
            (cluster / cg[0]) % cg[1],
            cluster / (cg[0] * cg[1]),
        ];
        self.cluster_cta(cid, rank)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_order_keeps_clusters_together() {
        let g = ClusterGeom {
            grid: [4, 2, 1],
            cluster: [2, 2, 1],
        };
        // Cluster 0 = CTAs (0,0) (1,0) (0,1) (1,1) = linear 0 1 4 5; cluster 1 = 2 3 6 7.
        let order: Vec<u32> = (0..8).map(|i| g.dispatch_order(i)).collect();
        assert_eq!(order, [0, 1, 4, 5, 2, 3, 6, 7]);
        assert_eq!(g.position(6), ([1, 0, 0], [0, 1, 0], 2));
        assert_eq!((g.cluster_index(5), g.cluster_index(6)), (0, 1));
        assert_eq!(g.error(), None);
        let bad = ClusterGeom {
            grid: [3, 1, 1],
            cluster: [2, 1, 1],
        };
        assert!(bad.error().is_some());
        // More than 16 CTAs per cluster (or a shape whose product overflows) is refused.
        for c in [[17, 1, 1], [4, 4, 2], [65536, 65536, 2]] {
            let g = ClusterGeom {
                grid: [c[0] * 2, c[1], c[2]],
                cluster: c,
            };
            assert!(g.error().is_some_and(|e| e.contains("exceeds")), "{c:?}");
        }
        let none = ClusterGeom {
            grid: [5, 1, 1],
            cluster: [1, 1, 1],
        };
        assert_eq!(
            (0..5).map(|i| none.dispatch_order(i)).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
    }
}

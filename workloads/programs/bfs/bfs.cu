// bfs: breadth-first search over a directed graph in CSR form, level-synchronous.
//
// The host generates the graph (fixed seed): node v has 1..MAXDEG out-edges to random nodes.
// Kernels:
//   bfs_init  - level[v] = -1, level[src] = 0                               (1 launch)
//   bfs_step  - every node on level `cur` sets level = cur+1 on its unvisited neighbours and
//               raises a device flag                                        (1 launch per level)
// Host loop: clear the flag (cudaMemset), launch bfs_step, copy the flag back (cudaMemcpy);
// stop when no node was added. The levels are compared exactly with a host BFS.
// Arguments: bfs [NODES=4096 [MAXDEG=6 [SEED=1]]]
// Default: 4096 nodes, 14512 edges, 13 levels -> 13 bfs_step launches + 1 bfs_init.
// Exercises: a data-dependent number of launches, cudaMemset, small device-to-host copies
// between launches, divergent loops over edges, benign write races (all write the same value).
#include "check.h"

#include <vector>

__global__ void bfs_init(int* level, int n, int src)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n)
        level[v] = (v == src) ? 0 : -1;
}

__global__ void bfs_step(const int* __restrict__ row, const int* __restrict__ col, int* level, int n, int cur,
                         int* changed)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || level[v] != cur)
        return;
    bool added = false;
    for (int e = row[v]; e < row[v + 1]; ++e) {
        int u = col[e];
        if (level[u] < 0) {
            level[u] = cur + 1;
            added = true;
        }
    }
    if (added)
        *changed = 1;
}

int main(int argc, char** argv)
{
    const int n = (int)arg_int(argc, argv, 1, 4096, 1, 1 << 24, "NODES");
    const int maxdeg = (int)arg_int(argc, argv, 2, 6, 1, 64, "MAXDEG");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 3, 1, 0, 1L << 40, "SEED");

    // CSR graph.
    Rng rng(seed);
    std::vector<int> row(n + 1), col;
    col.reserve((size_t)n * (maxdeg + 1) / 2);
    for (int v = 0; v < n; ++v) {
        row[v] = (int)col.size();
        int d = 1 + (int)rng.below(maxdeg);
        for (int k = 0; k < d; ++k)
            col.push_back((int)rng.below(n));
    }
    row[n] = (int)col.size();
    const int m = row[n];

    // Host reference: queue-based BFS from node 0.
    std::vector<int> ref(n, -1), queue;
    queue.reserve(n);
    ref[0] = 0;
    queue.push_back(0);
    for (size_t h = 0; h < queue.size(); ++h) {
        int v = queue[h];
        for (int e = row[v]; e < row[v + 1]; ++e)
            if (ref[col[e]] < 0) {
                ref[col[e]] = ref[v] + 1;
                queue.push_back(col[e]);
            }
    }
    int ref_levels = 0;
    for (int v = 0; v < n; ++v)
        ref_levels = ref[v] + 1 > ref_levels ? ref[v] + 1 : ref_levels;

    int *d_row, *d_col, *d_level, *d_changed;
    CK(cudaMalloc(&d_row, sizeof(int) * (n + 1)));
    CK(cudaMalloc(&d_col, sizeof(int) * m));
    CK(cudaMalloc(&d_level, sizeof(int) * n));
    CK(cudaMalloc(&d_changed, sizeof(int)));
    CK(cudaMemcpy(d_row, row.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_col, col.data(), sizeof(int) * m, cudaMemcpyHostToDevice));

    const int threads = 256, blocks = (n + threads - 1) / threads;
    bfs_init<<<blocks, threads>>>(d_level, n, 0);
    CK_LAUNCH();

    int cur = 0, launches = 0;
    for (;; ++cur) {
        if (cur > n) // a level count above n means the kernel never stops adding nodes
            fail("bfs did not terminate");
        CK(cudaMemset(d_changed, 0, sizeof(int)));
        bfs_step<<<blocks, threads>>>(d_row, d_col, d_level, n, cur, d_changed);
        CK_LAUNCH();
        ++launches;
        int changed = 0;
        CK(cudaMemcpy(&changed, d_changed, sizeof(int), cudaMemcpyDeviceToHost));
        if (!changed)
            break;
    }

    std::vector<int> level(n);
    CK(cudaMemcpy(level.data(), d_level, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_row));
    CK(cudaFree(d_col));
    CK(cudaFree(d_level));
    CK(cudaFree(d_changed));

    std::printf("bfs: %d nodes, %d edges, %d levels, %d bfs_step launches\n", n, m, ref_levels, launches);
    long bad = count_exact_mismatches("level", level.data(), ref.data(), n);
    if (launches != ref_levels) { // one launch per level; the one on the deepest level adds nothing
        std::printf("mismatch: %d bfs_step launches, want %d\n", launches, ref_levels);
        ++bad;
    }
    return verdict(bad);
}

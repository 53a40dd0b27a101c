// spinlock: the SIMT-deadlock-prone spinlock of the Hanoi paper (section VI-C). Every thread of
// every warp contends for one global lock; the winner leaves the spin loop, increments a plain
// (non-atomic) counter in the critical section and releases the lock. Threads of one warp that
// lost must let the winner run (the compiler emits YIELD in the spin loop and places BSYNC after
// the release). Result: *counter == total number of threads, *lock == 0.
extern "C" __global__ void spinlock(int* lock, volatile unsigned* counter)
{
    while (atomicCAS(lock, 0, 1) != 0) {
        // spin
    }
    __threadfence();
    *counter = *counter + 1;   // critical section
    __threadfence();
    atomicExch(lock, 0);
    __syncwarp();
}

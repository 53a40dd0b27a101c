//! Kernel launch and thread-block (CTA) dispatch: the GPU-wide dispatcher and the per-SM
//! CTA and warp launchers (preset section `[launch]`, docs/model.md "Kernel launch and CTA
//! dispatch").
//!
//! Time line of one launch, all in core cycles of the GPU's clock:
//!
//! ```text
//! start ──kernel_launch_latency──► dispatcher ──(cta_dispatch_cycles per CTA)──► SM queue
//!   SM: arrival ──cta_launch_latency──► CTA start (resources) ──warp_launch_cycles──► warps
//!   last warp exit ──cta_completion_latency──► dispatcher (cta_completion_cycles) ──► room
//!   last completion processed ──kernel_end_latency──► end   (end ≥ start + kernel_min_cycles)
//! ```
//!
//! The dispatcher is a single server whose busy time is kept in 1/1024 cycles, so fractional
//! costs (0.8 cycles per CTA) accumulate exactly and deterministically.

use sassim_config::LaunchConfig;
use sassim_functional::cluster::ClusterGeom;
use std::collections::VecDeque;

/// Fixed-point scale of the dispatcher's and warp launcher's busy times.
const FRAC: u64 = 1024;

fn fixed(cycles: f64) -> u64 {
    // Validated finite and within 0..=1e6 (`[launch]`), so the product fits.
    (cycles * FRAC as f64).round() as u64
}

/// The launch parameters in the form the run loop uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchTiming {
    pub kernel_launch_latency: u64,
    pub kernel_min_cycles: u64,
    pub kernel_end_latency: u64,
    /// Dispatcher busy time per CTA sent, 1/1024 cycles.
    pub dispatch_cost: u64,
    /// Dispatcher busy time per completion processed, 1/1024 cycles.
    pub completion_cost: u64,
    pub sm_cta_queue: u32,
    pub cta_launch_latency: u64,
    /// Warp launcher: 1/1024 cycles between two warp launches of one SM.
    pub warp_launch_cost: u64,
    pub cta_completion_latency: u64,
}

impl LaunchTiming {
    pub fn from_config(l: &LaunchConfig) -> Self {
        LaunchTiming {
            kernel_launch_latency: l.kernel_launch_latency as u64,
            kernel_min_cycles: l.kernel_min_cycles as u64,
            kernel_end_latency: l.kernel_end_latency as u64,
            dispatch_cost: fixed(l.cta_dispatch_cycles),
            completion_cost: fixed(l.cta_completion_cycles),
            sm_cta_queue: l.sm_cta_queue,
            cta_launch_latency: l.cta_launch_latency as u64,
            warp_launch_cost: fixed(l.warp_launch_cycles),
            cta_completion_latency: l.cta_completion_latency as u64,
        }
    }
}

/// A CTA the dispatcher sent: it reaches SM `sm` (index into the kernel's SMs) at `arrive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dispatch {
    pub cta: u32,
    pub sm: usize,
    pub arrive: u64,
}

/// Counters of the dispatcher for one kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchStats {
    pub ctas_dispatched: u32,
    pub completions: u32,
    /// Cycle of the first dispatch and of the last completion processed.
    pub first_dispatch: u64,
    pub last_completion: u64,
    /// Cycles in which a CTA was left to send but no SM had room for it.
    pub no_room_cycles: u64,
}

/// A CTA's completion on its way to the dispatcher ([`Dispatcher::cta_finished`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Completion {
    /// The cycle it reaches the dispatcher.
    at: u64,
    /// The SM the CTA ran on.
    sm: usize,
}

/// The GPU-wide CTA dispatcher (the compute work distributor) of one kernel launch.
#[derive(Debug, Clone)]
pub struct Dispatcher {
    t: LaunchTiming,
    /// End of the current job, 1/1024 cycles.
    busy_until: u64,
    /// The dispatcher starts at this cycle (kernel start + launch latency).
    begin: u64,
    next_cta: u32,
    num_ctas: u32,
    /// Per SM: CTAs the dispatcher may still send (resident limit + queue − outstanding).
    room: Vec<u32>,
    /// The sum of `room` (no SM is searched while it is 0).
    room_total: u64,
    rr: usize,
    /// Completions on their way, in arrival order.
    completions: VecDeque<Completion>,
    /// Thread-block clusters: CTAs per cluster (1 = none), the GPC of every SM, and the SMs
    /// reserved for the rest of the cluster being sent.
    cluster_size: u32,
    geom: Option<ClusterGeom>,
    gpc_of: Vec<usize>,
    reserved: VecDeque<usize>,
    pub stats: DispatchStats,
}

impl Dispatcher {
    /// A dispatcher for `num_ctas` CTAs over `num_sms` SMs that each hold `per_sm` CTAs,
    /// for a kernel that started at `start`.
    pub fn new(t: LaunchTiming, num_sms: usize, per_sm: u32, num_ctas: u32, start: u64) -> Self {
        let begin = start + t.kernel_launch_latency;
        Dispatcher {
            t,
            busy_until: begin * FRAC,
            begin,
            next_cta: 0,
            num_ctas,
            room: vec![per_sm.saturating_add(t.sm_cta_queue); num_sms],
            room_total: u64::from(per_sm.saturating_add(t.sm_cta_queue)) * num_sms as u64,
            rr: 0,
            completions: VecDeque::new(),
            cluster_size: 1,
            geom: None,
            gpc_of: Vec::new(),
            reserved: VecDeque::new(),
            stats: DispatchStats::default(),
        }
    }

    /// Dispatch the thread-block clusters of `geom` (CTAs in `ClusterGeom::dispatch_order`):
    /// all CTAs of a cluster go to SMs of one GPC
    /// (`gpc_of[sm]`), which must have room for the whole cluster at once (CUDA guarantees a
    /// cluster's CTAs are co-scheduled on one GPC). The SMs' launch queues are not used for
    /// cluster CTAs: only resident room counts (`per_sm`), so that no CTA of a cluster waits
    /// behind another cluster's CTA while its siblings run. Returns false if a cluster can
    /// never fit in any GPC.
    pub fn set_clusters(&mut self, geom: ClusterGeom, gpc_of: Vec<usize>, per_sm: u32) -> bool {
        self.cluster_size = geom.size().max(1);
        if self.cluster_size == 1 {
            return true;
        }
        self.geom = Some(geom);
        for r in &mut self.room {
            *r = per_sm;
        }
        self.room_total = u64::from(per_sm) * self.room.len() as u64;
        self.gpc_of = gpc_of;
        let gpcs = self.gpc_of.iter().copied().max().map_or(0, |g| g + 1);
        (0..gpcs).any(|g| {
            let sms = self.gpc_of.iter().filter(|&&x| x == g).count() as u64;
            sms * u64::from(per_sm) >= u64::from(self.cluster_size)
        })
    }

    /// The SM for the next CTA: round-robin over SMs with room; for a cluster's first CTA,
    /// SMs for all its CTAs in the first GPC (in round-robin order) with room for all of them.
    fn pick_sm(&mut self) -> Option<usize> {
        let n = self.room.len();
        if self.cluster_size <= 1 {
            if self.room_total == 0 {
                return None;
            }
            let sm = (0..n).map(|k| (self.rr + k) % n).find(|&s| self.room[s] > 0)?;
            self.room[sm] -= 1;
            self.room_total -= 1;
            self.rr = (sm + 1) % n;
            return Some(sm);
        }
        if let Some(sm) = self.reserved.pop_front() {
            return Some(sm);
        }
        let want = self.cluster_size as usize;
        if self.room_total < want as u64 {
            return None;
        }
        for k in 0..n {
            let first = (self.rr + k) % n;
            if self.room[first] == 0 {
                continue;
            }
            let g = self.gpc_of.get(first).copied().unwrap_or(0);
            // Take SMs of this GPC round-robin from `first`, one CTA per SM per pass.
            let mut room: Vec<(usize, u32)> = (0..n)
                .map(|j| (first + j) % n)
                .filter(|&s| self.gpc_of.get(s).copied().unwrap_or(0) == g && self.room[s] > 0)
                .map(|s| (s, self.room[s]))
                .collect();
            if room.iter().map(|&(_, r)| r as usize).sum::<usize>() < want {
                continue;
            }
            let mut picked = Vec::with_capacity(want);
            while picked.len() < want {
                for (s, r) in room.iter_mut() {
                    if *r > 0 && picked.len() < want {
                        *r -= 1;
                        picked.push(*s);
                    }
                }
            }
            for &s in &picked {
                self.room[s] -= 1;
            }
            self.room_total -= want as u64;
            self.rr = (picked[picked.len() - 1] + 1) % n;
            self.reserved.extend(&picked[1..]);
            return Some(picked[0]);
        }
        None
    }

    /// The first cycle in which the dispatcher may send a CTA to an SM that
    /// [`Dispatcher::may_send_to`] does not name: the end of the kernel launch latency before
    /// the first CTA, never (`u64::MAX`) after it (quanta, `quantum.rs`).
    pub fn sends_from(&self) -> u64 {
        if self.next_cta == 0 && !self.all_dispatched() {
            self.begin
        } else {
            u64::MAX
        }
    }

    /// CTAs are being sent: the first was, and some are left.
    pub fn dispatching(&self) -> bool {
        self.next_cta > 0 && !self.all_dispatched()
    }

    /// Whether the dispatcher may send a CTA to SM `sm` before the SM has finished one more
    /// (CTAs are being sent, [`Dispatcher::dispatching`]): the SM has room, a completion of
    /// it is on its way, or it is reserved for the rest of a thread-block cluster. A CTA goes
    /// only to an SM with room, and only the SM's own completions give it more.
    pub fn may_send_to(&self, sm: usize) -> bool {
        self.dispatching()
            && (self.room.get(sm).is_some_and(|&r| r > 0)
                || self.completions.iter().any(|c| c.sm == sm)
                || self.reserved.contains(&sm))
    }

    /// The work of cycle `now`: completions that have arrived are processed first, then CTAs
    /// are sent round-robin to SMs with room; `out` receives the CTAs sent. Several jobs fit
    /// in one cycle when their costs are below one cycle.
    pub fn step(&mut self, now: u64, out: &mut Vec<Dispatch>) {
        if now < self.begin {
            return;
        }
        let cycle_end = (now + 1) * FRAC;
        let mut blocked = false;
        while self.busy_until < cycle_end {
            let start = self.busy_until.max(now * FRAC);
            if let Some(&Completion { at, sm }) = self.completions.front() {
                if at <= now {
                    self.completions.pop_front();
                    self.busy_until = start + self.t.completion_cost;
                    self.room[sm] += 1;
                    self.room_total += 1;
                    self.stats.completions += 1;
                    self.stats.last_completion = self.busy_until.div_ceil(FRAC);
                    continue;
                }
            }
            if self.next_cta >= self.num_ctas {
                break;
            }
            let Some(sm) = self.pick_sm() else {
                blocked = true;
                break;
            };
            self.busy_until = start + self.t.dispatch_cost;
            if self.stats.ctas_dispatched == 0 {
                self.stats.first_dispatch = now;
            }
            self.stats.ctas_dispatched += 1;
            out.push(Dispatch {
                cta: self
                    .geom
                    .map_or(self.next_cta, |g| g.dispatch_order(self.next_cta)),
                sm,
                arrive: self.busy_until.div_ceil(FRAC).max(now),
            });
            self.next_cta += 1;
        }
        if blocked {
            self.stats.no_room_cycles += 1;
        }
    }

    /// A CTA of SM `sm` finished (its last warp exited) at cycle `now`.
    pub fn cta_finished(&mut self, now: u64, sm: usize) {
        self.completions.push_back(Completion {
            at: now + self.t.cta_completion_latency,
            sm,
        });
    }

    /// Every CTA was sent.
    pub fn all_dispatched(&self) -> bool {
        self.next_cta >= self.num_ctas
    }

    /// The end timestamp of a kernel that started at `start`, once every CTA has finished on
    /// its SM: the completions still on their way are processed in order (nothing else is
    /// left for the dispatcher), then the end latency, no earlier than the minimum duration.
    pub fn finish(&mut self, start: u64) -> u64 {
        while let Some(Completion { at, sm }) = self.completions.pop_front() {
            self.busy_until = self.busy_until.max(at * FRAC) + self.t.completion_cost;
            self.room[sm] += 1;
            self.room_total += 1;
            self.stats.completions += 1;
            self.stats.last_completion = self.busy_until.div_ceil(FRAC);
        }
        let last = self.busy_until.div_ceil(FRAC).max(self.begin);
        (last + self.t.kernel_end_latency).max(start + self.t.kernel_min_cycles)
    }
}

/// A CTA waiting on an SM to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Arrived {
    cta: u32,
    /// Cycle from which it may start (arrival + `cta_launch_latency`).
    ready: u64,
}

/// A warp of a started CTA waiting for the SM's warp launcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpStart {
    pub cta: u32,
    /// Executor warp id and warp index within the CTA.
    pub warp: u32,
    pub in_cta: u32,
    /// Cycle at which it is launched.
    pub at: u64,
}

/// The per-SM side: CTAs that arrived and wait to start, and the warp launcher.
#[derive(Debug, Clone, Default)]
pub struct SmLauncher {
    arrived: VecDeque<Arrived>,
    /// Warps of started CTAs in launch order.
    pub warps: VecDeque<WarpStart>,
    /// The warp launcher is free from this time on (1/1024 cycles).
    launcher_free: u64,
}

impl SmLauncher {
    /// A CTA arrives from the dispatcher.
    pub fn arrive(&mut self, t: &LaunchTiming, d: &Dispatch) {
        self.arrived.push_back(Arrived {
            cta: d.cta,
            ready: d.arrive + t.cta_launch_latency,
        });
    }

    /// The oldest arrived CTA, if it may start at `now` (resources are the caller's check).
    pub fn ready_cta(&self, now: u64) -> Option<u32> {
        self.arrived.front().filter(|a| a.ready <= now).map(|a| a.cta)
    }

    /// Start the oldest arrived CTA at `now` with its warps (executor id, index in the CTA):
    /// the warp launcher launches them one after the other.
    pub fn start_cta(&mut self, t: &LaunchTiming, now: u64, warps: &[(u32, u32)]) {
        let Some(a) = self.arrived.pop_front() else {
            return;
        };
        let mut at = self.launcher_free.max(now * FRAC);
        for &(warp, in_cta) in warps {
            self.warps.push_back(WarpStart {
                cta: a.cta,
                warp,
                in_cta,
                at: at.div_ceil(FRAC),
            });
            at += t.warp_launch_cost;
        }
        self.launcher_free = at;
    }

    /// Warps launched by `now`, in order.
    pub fn launch_due(&mut self, now: u64) -> Option<WarpStart> {
        if self.warps.front().is_some_and(|w| w.at <= now) {
            self.warps.pop_front()
        } else {
            None
        }
    }

    /// Nothing waits on this SM.
    pub fn is_empty(&self) -> bool {
        self.arrived.is_empty() && self.warps.is_empty()
    }

    /// Warps of started CTAs not launched yet.
    pub fn warps_pending(&self) -> usize {
        self.warps.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(d: f64, c: f64) -> LaunchTiming {
        LaunchTiming {
            kernel_launch_latency: 100,
            kernel_min_cycles: 0,
            kernel_end_latency: 5,
            dispatch_cost: fixed(d),
            completion_cost: fixed(c),
            sm_cta_queue: 0,
            cta_launch_latency: 0,
            warp_launch_cost: fixed(2.5),
            cta_completion_latency: 10,
        }
    }

    #[test]
    fn fractional_dispatch_rate_and_room() {
        // 0.4 cycles per CTA: 2 or 3 CTAs per cycle, 5 in 2 cycles; 2 SMs × 2 CTAs of room.
        let mut d = Dispatcher::new(timing(0.4, 0.5), 2, 2, 6, 0);
        let mut out = Vec::new();
        d.step(99, &mut out);
        assert!(out.is_empty(), "nothing before the launch latency");
        d.step(100, &mut out);
        d.step(101, &mut out);
        let sms: Vec<usize> = out.iter().map(|x| x.sm).collect();
        assert_eq!(sms, vec![0, 1, 0, 1], "round-robin until both SMs are full");
        assert_eq!(
            out.iter().map(|x| x.arrive).collect::<Vec<_>>(),
            vec![101, 101, 102, 102]
        );
        // A completion at 101 reaches the dispatcher at 111 and takes half a cycle; SM 1 gets
        // CTA 4 in the same cycle.
        d.cta_finished(101, 1);
        out.clear();
        for c in 102..=111 {
            d.step(c, &mut out);
        }
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].cta, out[0].sm), (4, 1));
        assert_eq!(d.stats.no_room_cycles, 11, "cycles 101..=111 ended without room");
        assert!(!d.all_dispatched());
    }

    #[test]
    fn clusters_wait_for_room_in_one_gpc() {
        // 2 GPCs of 2 SMs, 1 CTA per SM, clusters of 2 CTAs (1-D grid of 6): two clusters
        // fill the GPU; the third waits until both CTAs of one GPC have completed.
        let mut d = Dispatcher::new(timing(0.4, 0.5), 4, 1, 6, 0);
        let geom = ClusterGeom {
            grid: [6, 1, 1],
            cluster: [2, 1, 1],
        };
        assert!(d.set_clusters(geom, vec![0, 0, 1, 1], 1));
        let mut out = Vec::new();
        for c in 100..=102 {
            d.step(c, &mut out);
        }
        let sms: Vec<usize> = out.iter().map(|x| x.sm).collect();
        assert_eq!(sms, vec![0, 1, 2, 3], "a cluster per GPC");
        // One CTA of each GPC completes: 2 SMs have room, but in different GPCs.
        d.cta_finished(102, 0);
        d.cta_finished(102, 2);
        out.clear();
        for c in 103..=120 {
            d.step(c, &mut out);
        }
        assert!(out.is_empty(), "{out:?}");
        // The second CTA of GPC 1 completes (reaching the dispatcher at 131).
        d.cta_finished(121, 3);
        for c in 121..=132 {
            d.step(c, &mut out);
        }
        let sms: Vec<usize> = out.iter().map(|x| x.sm).collect();
        assert_eq!(sms, vec![2, 3], "the third cluster goes to GPC 1");
        assert!(out.iter().all(|x| x.arrive >= 131), "{out:?}");
        assert!(d.all_dispatched());
    }

    /// Quanta (`quantum.rs`): a CTA goes only to an SM that `may_send_to` named at the
    /// quantum's start or that finished a CTA since; before the first CTA none is named and
    /// `sends_from` bounds the quantum instead.
    #[test]
    fn ctas_go_only_to_the_sms_it_may_send_to() {
        let mut d = Dispatcher::new(timing(0.4, 0.5), 3, 1, 7, 0);
        assert_eq!(d.sends_from(), 100);
        assert!(!d.dispatching() && (0..3).all(|s| !d.may_send_to(s)));
        let mut out = Vec::new();
        d.step(100, &mut out);
        d.step(101, &mut out);
        assert_eq!(out.iter().map(|x| x.sm).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(d.sends_from(), u64::MAX);
        assert!(
            d.dispatching() && (0..3).all(|s| !d.may_send_to(s)),
            "every SM is full"
        );
        // SM 1 finishes a CTA: its completion is on its way (10 cycles), it may get one.
        d.cta_finished(105, 1);
        assert_eq!(
            (0..3).map(|s| d.may_send_to(s)).collect::<Vec<_>>(),
            vec![false, true, false]
        );
        out.clear();
        for c in 102..=115 {
            d.step(c, &mut out);
        }
        assert_eq!(out.iter().map(|x| x.sm).collect::<Vec<_>>(), vec![1]);
        assert!((0..3).all(|s| !d.may_send_to(s)));
        // A cluster's SMs are named while reserved (one CTA a cycle: the second waits).
        let mut d = Dispatcher::new(timing(1.0, 0.5), 4, 1, 4, 0);
        let geom = ClusterGeom {
            grid: [4, 1, 1],
            cluster: [2, 1, 1],
        };
        assert!(d.set_clusters(geom, vec![0, 0, 1, 1], 1));
        out.clear();
        d.step(100, &mut out);
        assert_eq!(out.iter().map(|x| x.sm).collect::<Vec<_>>(), vec![0]);
        assert!(d.may_send_to(1), "reserved for the cluster's second CTA");
        assert!(d.may_send_to(2) && d.may_send_to(3), "room");
        assert!(!d.may_send_to(0));
        // Once every CTA is sent, none is named.
        for c in 101..=104 {
            d.step(c, &mut out);
        }
        assert!(d.all_dispatched() && !d.dispatching());
        assert!((0..4).all(|s| !d.may_send_to(s)));
    }

    #[test]
    fn end_waits_for_completions_and_minimum() {
        let mut d = Dispatcher::new(timing(1.0, 2.0), 1, 4, 2, 0);
        let mut out = Vec::new();
        d.step(100, &mut out);
        d.step(101, &mut out);
        assert!(d.all_dispatched());
        d.cta_finished(150, 0);
        d.cta_finished(150, 0);
        // Arrive at 160, processed 160..162 and 162..164; end 164 + 5.
        assert_eq!(d.clone().finish(0), 169);
        let mut t = timing(1.0, 2.0);
        t.kernel_min_cycles = 1000;
        let mut d2 = Dispatcher { t, ..d };
        assert_eq!(d2.finish(0), 1000);
    }

    #[test]
    fn warp_launcher_serialises_warps_of_an_sm() {
        let t = timing(1.0, 1.0);
        let mut s = SmLauncher::default();
        s.arrive(
            &t,
            &Dispatch {
                cta: 0,
                sm: 0,
                arrive: 10,
            },
        );
        s.arrive(
            &t,
            &Dispatch {
                cta: 1,
                sm: 0,
                arrive: 10,
            },
        );
        assert_eq!(s.ready_cta(9), None);
        assert_eq!(s.ready_cta(10), Some(0));
        s.start_cta(&t, 10, &[(0, 0), (1, 1)]);
        s.start_cta(&t, 10, &[(2, 0)]);
        let at: Vec<u64> = s.warps.iter().map(|w| w.at).collect();
        // 2.5 cycles apart: 10, 12.5 → 13, 15
        assert_eq!(at, vec![10, 13, 15]);
        assert_eq!(s.launch_due(12).map(|w| w.warp), Some(0));
        assert_eq!(s.launch_due(12), None);
        assert_eq!(s.warps_pending(), 2);
    }
}

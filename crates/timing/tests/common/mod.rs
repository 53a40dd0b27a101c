//! A mock executor: straight-line code, every warp runs every instruction, no values.
#![allow(dead_code)]

use sassim_timing::{
    decode_kernel, CoreConfig, Executor, FixedLatencyMemory, InstClass, Issued, Sm, WarpLog,
};

pub struct Mock {
    pub pcs: Vec<u64>,
    pub next: Vec<usize>,
    /// Index of a BAR instruction: warps wait there until all arrived.
    pub bar: Option<usize>,
}

impl Executor for Mock {
    type Writes = ();
    fn next_pc(&self, w: u32) -> Option<u64> {
        self.pcs.get(self.next[w as usize]).copied()
    }
    fn blocked(&self, w: u32) -> bool {
        match self.bar {
            Some(b) => self.next[w as usize] == b + 1 && self.next.iter().any(|&n| n <= b),
            None => false,
        }
    }
    fn issue(&mut self, w: u32, _clock: u64, out: &mut Issued<()>) -> Result<(), String> {
        let i = self.next[w as usize];
        self.next[w as usize] += 1;
        *out = Issued {
            pc: self.pcs[i],
            index: i,
            active_mask: u32::MAX,
            exited: i + 1 == self.pcs.len(),
            mem: None,
            writes: (),
        };
        Ok(())
    }
    fn commit(&mut self, _w: u32, _x: &()) {}
}

pub fn classify(ins: &sassim_isa::Instruction) -> InstClass {
    let b = ins.opcode.base.as_str();
    let (unit, fixed, latency) = match b {
        "HADD2" | "HFMA2" => ("fp32", true, 5),
        "FADD" | "FMUL" | "FFMA" => ("fp32", true, 4),
        "LDG" | "LDS" | "STG" | "STS" | "LDC" | "LDGSTS" => ("mem", false, 30),
        "MUFU" => ("sfu", false, 20),
        "BRA" | "EXIT" => ("branch", true, 4),
        _ => ("int", true, 4),
    };
    InstClass {
        unit: unit.into(),
        fixed,
        latency,
        latch_cycles: Some(1),
        initiation: None,
        read_delay: 0,
    }
}

/// Run `src` (microbenchmark dialect) with warps in `slots`; returns the SM and logs.
pub fn run(src: &str, slots: &[usize], cfg: CoreConfig) -> (Sm<()>, Vec<(usize, WarpLog)>) {
    run_with(src, slots, cfg, |_| {})
}

/// As [`run`], with `setup` applied to the SM before the warps are added.
pub fn run_with(
    src: &str,
    slots: &[usize],
    cfg: CoreConfig,
    setup: impl FnOnce(&mut Sm<()>),
) -> (Sm<()>, Vec<(usize, WarpLog)>) {
    let mb = sassim_sass::microbench::parse(src, "test.sass").expect("parse");
    let code = decode_kernel(&mb.kernel.instructions, &cfg, &mut classify);
    let mut sm: Sm<()> = Sm::new(cfg, Box::new(FixedLatencyMemory::default()));
    sm.record = true;
    setup(&mut sm);
    sm.set_kernel(code, 0x10000, true);
    let mut ex = Mock {
        pcs: mb.kernel.instructions.iter().map(|i| i.pc).collect(),
        next: vec![0; slots.len()],
        bar: mb.kernel.instructions.iter().position(|i| i.opcode.base == "BAR"),
    };
    for (k, &s) in slots.iter().enumerate() {
        assert!(sm.add_warp_at(s, k as u32, 0));
    }
    let mut n = 0;
    while !sm.is_idle() && n < 100_000 {
        sm.tick(&mut ex).expect("tick");
        n += 1;
    }
    let logs = sm.take_logs();
    (sm, logs)
}

pub fn clocks(logs: &[(usize, WarpLog)], slot: usize) -> Vec<u64> {
    logs.iter()
        .find(|l| l.0 == slot)
        .map(|l| l.1.clocks.clone())
        .unwrap_or_default()
}

pub fn issue_cycles(logs: &[(usize, WarpLog)], slot: usize) -> Vec<u64> {
    logs.iter()
        .find(|l| l.0 == slot)
        .map(|l| l.1.issues.iter().map(|x| x.cycle).collect())
        .unwrap_or_default()
}

//! Hopper (sm_90) instructions, decoded: warpgroup MMA (`HGMMA`/`IGMMA`/`QGMMA`) and its
//! `WARPGROUP` bookkeeping, the Tensor Memory Accelerator (`UTMALDG`/`UTMASTG`, the bulk copies
//! `UBLKCP`), transaction
//! barriers (`SYNCS`, PTX `mbarrier`), cluster barriers (`UCGABAR_*`) and `ELECT`.
//!
//! SASS forms as ptxas 13.5 prints them (docs/validation/hopper-isa-facts.md §3–6,
//! workloads/programs/wgmma_gemm/SASS-NOTES.md). Execution: `exec/hopper.rs`.

use sassim_isa::{GmmaSpec, Instruction, OperandKind};

/// How a `SYNCS.ARRIVE` changes the barrier (the `AxTy` suffix: A1 = one arrival, AR = count
/// from the register, A0 = none; TR = expect-tx from the register, TX = complete-tx, T0 = none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArriveKind {
    /// Arrivals: `Some(1)` (A1), `None` = from the register (AR), `Some(0)` (A0).
    pub arrivals: Option<u32>,
    /// Transaction bytes from the register: +1 expect (TR), −1 complete (TX), 0 none (T0).
    pub tx_sign: i8,
    /// `.OPTOUT` (`mbarrier.arrive_drop`): the expected count of later phases drops by the
    /// arrivals.
    pub drop: bool,
}

/// A decoded Hopper instruction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HopperOp {
    /// `ELECT Pd, URd, Pg`: the lowest active lane whose `Pg` holds is elected.
    Elect,
    /// `SYNCS.EXCH.64 Rd, [addr], Rs`: 64-bit exchange on a barrier word (`mbarrier.init`).
    SyncsExch,
    /// `SYNCS.ARRIVE.TRANS64[.RED][.kind] Rd, [addr], Rs`.
    SyncsArrive(ArriveKind),
    /// `SYNCS.PHASECHK.TRANS64[.TRYWAIT] Pd, [addr], Rs`: whether the barrier's phase parity
    /// differs from bit 31 of `Rs` (the phase named has completed).
    SyncsPhaseChk,
    /// `SYNCS.CCTL.IV` (`mbarrier.inval`) and other cache controls: nothing to compute.
    SyncsNop,
    /// `UTMALDG.nD [URa], [URb][, URc]` / `UTMASTG.nD [URa], [URb]`.
    Tma { load: bool, dims: u8, multicast: bool },
    /// `UBLKCP.dst.src[.MULTICAST] [URa], [URb], URc`: the non-tensor bulk copy
    /// (`cp.async.bulk`); URc holds the size in 16-byte units (bits 0–15) and the multicast
    /// mask (bits 16–31).
    BulkCopy { dir: BulkDir, multicast: bool },
    /// `UBLKPF.L2 [URa], URb` (`cp.async.bulk.prefetch.L2`) and `UTMACMDFLUSH`
    /// (`cp.async.bulk.commit_group`): nothing to compute.
    BulkNop,
    /// `UCGABAR_ARV` / `UCGABAR_WAIT`.
    ClusterBarrier { wait: bool },
    /// `WARPGROUP.ARRIVE` (`wgmma.fence`).
    WarpgroupArrive,
    /// `WARPGROUP.DEPBAR.LE gsb0, n` (`wgmma.wait_group n`): functionally nothing (the
    /// engine completes each warpgroup MMA at issue); the timing model waits.
    WarpgroupDepbar,
    /// `HGMMA`/`IGMMA`/`QGMMA`.
    Gmma(GmmaOp),
}

/// The direction of a `UBLKCP` (its `.dst.src` suffixes; ptxas 13.5 register blocks):
/// `S.G`: [URa] = shared::cluster destination, URa+1 = its mbarrier; [URb] = 64-bit global
/// source. `S.S`: [URa] as `S.G`; [URb] = shared::cta source. `G.S`: [URa] = 64-bit global
/// destination; [URb] = shared::cta source (completion through the bulk group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkDir {
    SharedFromGlobal,
    SharedFromShared,
    GlobalFromShared,
}

/// A warpgroup MMA and its operand modifiers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GmmaOp {
    pub spec: GmmaSpec,
    /// A comes from registers (the RS form), not from shared memory.
    pub a_regs: bool,
    /// `.tnspA` / `.tnspB`: the shared-memory operand is MN-major.
    pub trans_a: bool,
    pub trans_b: bool,
    /// `.negA` / `.negB`.
    pub neg_a: bool,
    pub neg_b: bool,
    /// Ends a commit group (`gsb0`).
    pub commit: bool,
}

fn arrive_kind(mods: &[&str]) -> Option<ArriveKind> {
    let mut k = ArriveKind {
        arrivals: Some(1),
        tx_sign: 1,
        drop: false,
    };
    for m in mods {
        match *m {
            "ARRIVE" | "TRANS64" | "RED" => {}
            "OPTOUT" => k.drop = true,
            "A1TR" => (k.arrivals, k.tx_sign) = (Some(1), 1),
            "A1T0" => (k.arrivals, k.tx_sign) = (Some(1), 0),
            "A0TR" => (k.arrivals, k.tx_sign) = (Some(0), 1),
            "A0TX" => (k.arrivals, k.tx_sign) = (Some(0), -1),
            "ART0" => (k.arrivals, k.tx_sign) = (None, 0),
            _ => return None,
        }
    }
    Some(k)
}

/// Decode a Hopper opcode; `None` for forms the engine does not implement.
pub fn decode(ins: &Instruction) -> Option<HopperOp> {
    let mods: Vec<&str> = ins.opcode.mods.iter().map(String::as_str).collect();
    let n = ins.operands.len();
    Some(match ins.opcode.base.as_str() {
        "ELECT" if n == 3 => HopperOp::Elect,
        "SYNCS" => match mods.first().copied() {
            Some("EXCH") if mods[1..] == ["64"] && n == 3 => HopperOp::SyncsExch,
            Some("ARRIVE") if n == 3 => HopperOp::SyncsArrive(arrive_kind(&mods)?),
            Some("PHASECHK") if n == 3 && mods[1..].iter().all(|m| matches!(*m, "TRANS64" | "TRYWAIT")) => {
                HopperOp::SyncsPhaseChk
            }
            Some("CCTL") => HopperOp::SyncsNop,
            _ => return None,
        },
        "UTMALDG" | "UTMASTG" => {
            let load = ins.opcode.base == "UTMALDG";
            let mut dims = None;
            let mut multicast = false;
            for m in &mods {
                match *m {
                    "1D" => dims = Some(1),
                    "2D" => dims = Some(2),
                    "3D" => dims = Some(3),
                    "4D" => dims = Some(4),
                    "5D" => dims = Some(5),
                    "MULTICAST" if load => multicast = true,
                    _ => return None,
                }
            }
            if n != 2 + usize::from(multicast) {
                return None;
            }
            HopperOp::Tma {
                load,
                dims: dims?,
                multicast,
            }
        }
        "UBLKCP" if n == 3 => {
            let dir = match mods.get(..2) {
                Some(["S", "G"]) => BulkDir::SharedFromGlobal,
                Some(["S", "S"]) => BulkDir::SharedFromShared,
                Some(["G", "S"]) => BulkDir::GlobalFromShared,
                _ => return None,
            };
            let multicast = match mods[2..] {
                [] => false,
                ["MULTICAST"] if dir == BulkDir::SharedFromGlobal => true,
                _ => return None,
            };
            HopperOp::BulkCopy { dir, multicast }
        }
        "UBLKPF" if n == 2 && mods == ["L2"] => HopperOp::BulkNop,
        "UTMACMDFLUSH" if n == 0 && mods.is_empty() => HopperOp::BulkNop,
        "UCGABAR_ARV" if n == 0 => HopperOp::ClusterBarrier { wait: false },
        "UCGABAR_WAIT" if n == 0 => HopperOp::ClusterBarrier { wait: true },
        "WARPGROUP" => match mods.as_slice() {
            ["ARRIVE"] => HopperOp::WarpgroupArrive,
            ["DEPBAR", "LE"] => HopperOp::WarpgroupDepbar,
            _ => return None,
        },
        "HGMMA" | "IGMMA" | "QGMMA" => {
            let spec = GmmaSpec::parse(&ins.opcode)?;
            let a_regs = sassim_isa::gmma_a_in_registers(ins);
            let di = 1 + usize::from(a_regs);
            let desc = ins.operands.get(di)?;
            if !matches!(desc.kind, OperandKind::GmmaDesc(_)) {
                return None;
            }
            let has = |s: &str| desc.suffixes.iter().any(|x| x.eq_ignore_ascii_case(s));
            for s in &desc.suffixes {
                if !["tnspA", "tnspB", "negA", "negB"]
                    .iter()
                    .any(|w| s.eq_ignore_ascii_case(w))
                {
                    return None;
                }
            }
            let commit = sassim_isa::names_gmma_group(ins);
            // RS form: a negated A is a register negate.
            let neg_a = has("negA") || (a_regs && ins.operands[1].neg);
            let op = GmmaOp {
                spec,
                a_regs,
                trans_a: has("tnspA"),
                trans_b: has("tnspB"),
                neg_a,
                neg_b: has("negB"),
                commit,
            };
            // Transposes and negations exist only for 16-bit floating-point inputs (PTX ISA).
            let fp16 = matches!(spec.a, sassim_isa::GmmaType::F16 | sassim_isa::GmmaType::Bf16);
            if (op.trans_a || op.trans_b) && !fp16 || (a_regs && op.trans_a) {
                return None;
            }
            HopperOp::Gmma(op)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(line: &str) -> Option<HopperOp> {
        let text =
            format!("\tcode for sm_90\n\t\tFunction : k\n        /*0000*/                   {line} ;\n");
        let l = sassim_sass::parse_listing(&text, "t").expect("parse");
        decode(&l.kernels[0].instructions[0])
    }

    /// The `UBLKCP` forms ptxas 13.5 emits for `cp.async.bulk` (global → shared::cluster,
    /// multicast, shared::cta → shared::cluster, shared::cta → global) and its companions.
    #[test]
    fn bulk_copy_forms_decode() {
        let copy = |dir, multicast| Some(HopperOp::BulkCopy { dir, multicast });
        assert_eq!(
            decoded("UBLKCP.S.G [UR8], [UR10], UR4"),
            copy(BulkDir::SharedFromGlobal, false)
        );
        assert_eq!(
            decoded("UBLKCP.S.G.MULTICAST [UR8], [UR10], UR4"),
            copy(BulkDir::SharedFromGlobal, true)
        );
        assert_eq!(
            decoded("UBLKCP.S.S [UR4], [UR8], UR6"),
            copy(BulkDir::SharedFromShared, false)
        );
        assert_eq!(
            decoded("UBLKCP.G.S [UR4], [UR8], UR6"),
            copy(BulkDir::GlobalFromShared, false)
        );
        assert_eq!(decoded("UBLKPF.L2 [UR10], UR6"), Some(HopperOp::BulkNop));
        assert_eq!(decoded("UTMACMDFLUSH"), Some(HopperOp::BulkNop));
        // Multicast only into shared memory; unknown directions are refused.
        assert_eq!(decoded("UBLKCP.G.S.MULTICAST [UR4], [UR8], UR6"), None);
        assert_eq!(decoded("UBLKCP.G.G [UR4], [UR8], UR6"), None);
    }
}

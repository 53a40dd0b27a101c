//! Static instructions built from trace records, for traces without a SASS listing: the
//! opcode string, the destination and source registers, and a memory operand for memory
//! opcodes, with default control bits ([`super::TraceKernel::open`]).

use sassim_isa::{
    AddrReg, Address, ConstBank, ConstRef, ControlBits, Instruction, Opcode, Operand, OperandKind, PredReg,
};
use sassim_trace::{RegKind, TraceInstr};

fn reg_operand(r: &sassim_trace::Reg) -> Operand {
    Operand::new(match r.kind {
        RegKind::R => OperandKind::Reg(sassim_isa::Reg::r(r.num)),
        RegKind::UR => OperandKind::Reg(sassim_isa::Reg::ur(r.num.min(sassim_isa::operand::URZ))),
        RegKind::P => OperandKind::Pred(PredReg {
            uniform: false,
            idx: r.num.min(7),
        }),
        RegKind::UP => OperandKind::Pred(PredReg {
            uniform: true,
            idx: r.num.min(7),
        }),
    })
}

fn mem_operand(r: Option<&sassim_trace::Reg>) -> Operand {
    let regs = r
        .filter(|r| matches!(r.kind, RegKind::R | RegKind::UR))
        .map(|r| AddrReg {
            reg: match r.kind {
                RegKind::UR => sassim_isa::Reg::ur(r.num.min(sassim_isa::operand::URZ)),
                _ => sassim_isa::Reg::r(r.num),
            },
            wide: false,
            scale: 1,
            suffix: None,
        })
        .into_iter()
        .collect();
    Operand::new(OperandKind::Mem(Address {
        desc: None,
        regs,
        offset: 0,
    }))
}

/// Opcodes the timing model treats as memory instructions (`sassim_timing::inst`).
fn is_mem_base(base: &str) -> bool {
    matches!(
        base,
        "LDG"
            | "LD"
            | "STG"
            | "ST"
            | "LDS"
            | "LDSM"
            | "STS"
            | "LDL"
            | "STL"
            | "LDC"
            | "ATOMG"
            | "ATOM"
            | "RED"
            | "ATOMS"
            | "LDGSTS"
    )
}

/// Build a static instruction from a trace record: destinations, then sources; the first
/// source register of a memory opcode becomes its address (a constant reference for
/// LDC). Destinations the tracer does not print (predicates of `ISETP`…) are padded with
/// `PT`/`RZ` so that [`sassim_isa::dest_count`] splits the operands as the trace does.
pub fn synthesize_instruction(opcode: &str, ti: &TraceInstr, pc: u64) -> Instruction {
    let opcode = Opcode::parse(opcode);
    let base = opcode.base.clone();
    let mut ops: Vec<Operand> = ti.dsts().iter().map(reg_operand).collect();
    let mut nd = ops.len();
    let srcs = ti.srcs();
    if base == "LDC" || base == "ULDC" {
        let idx = srcs.first().filter(|r| r.kind == RegKind::R);
        let regs = idx
            .map(|r| AddrReg {
                reg: sassim_isa::Reg::r(r.num),
                wide: false,
                scale: 1,
                suffix: None,
            })
            .into_iter()
            .collect();
        ops.push(Operand::new(OperandKind::Const(ConstRef {
            bank: ConstBank::Imm(0),
            addr: Address {
                desc: None,
                regs,
                offset: 0,
            },
        })));
        ops.extend(srcs.iter().skip(usize::from(idx.is_some())).map(reg_operand));
    } else if base == "LDGSTS" {
        ops.push(mem_operand(srcs.first()));
        ops.push(mem_operand(srcs.get(1)));
        ops.extend(srcs.iter().skip(2).map(reg_operand));
    } else if is_mem_base(&base) {
        ops.push(mem_operand(srcs.first()));
        ops.extend(srcs.iter().skip(1).map(reg_operand));
    } else if let Some(h) = hopper_operands(&base, &opcode, ti) {
        ops.extend(h);
    } else {
        ops.extend(srcs.iter().map(reg_operand));
    }
    let pred_dest = base.ends_with("SETP") || matches!(base.as_str(), "PLOP3" | "UPLOP3" | "FCHK" | "FCHK2");
    let mut ins = Instruction {
        pc,
        guard: None,
        opcode,
        operands: ops,
        ctrl: ControlBits::default(),
        encoding: None,
    };
    let limit = nd + 4;
    while nd < limit && sassim_isa::dest_count(&ins) > nd {
        let pad = if pred_dest {
            OperandKind::Pred(PredReg::PT)
        } else {
            OperandKind::Reg(sassim_isa::Reg::r(sassim_isa::operand::RZ))
        };
        ins.operands.insert(nd, Operand::new(pad));
        nd += 1;
    }
    sassim_isa::infer_widths(&mut ins);
    ins
}

/// The operands of Hopper's warpgroup-MMA instructions as the listing has them, from what
/// the tracer records (Accel-Sim v5: an `HGMMA` lists its descriptor registers as sources and
/// no destination, the accumulators being invisible to the tracer, and a flag for the MMA that
/// ends a commit group; `WARPGROUP.DEPBAR.LE` carries its group count as the first
/// immediate): `gdesc[URa]` (after the A registers of the RS form) and `gsb0`, and
/// `gsb0, n` for the wait. So traced warpgroup MMAs complete on the group counter and
/// `WARPGROUP.DEPBAR` waits for it, as in a listing (docs/model.md "Hopper").
fn hopper_operands(base: &str, opcode: &Opcode, ti: &TraceInstr) -> Option<Vec<Operand>> {
    let gsb0 = || Operand::new(OperandKind::Keyword("gsb0".into()));
    match base {
        "HGMMA" | "IGMMA" | "QGMMA" => {
            let srcs = ti.srcs();
            let desc = srcs.iter().find(|r| r.kind == RegKind::UR)?;
            let mut ops: Vec<Operand> = srcs
                .iter()
                .filter(|r| r.kind == RegKind::R)
                .take(1)
                .map(reg_operand)
                .collect();
            ops.push(Operand::new(OperandKind::GmmaDesc(desc.num)));
            if ti.flags & sassim_trace::flags::GMMA_COMMIT != 0 {
                ops.push(gsb0());
            }
            Some(ops)
        }
        "WARPGROUP" if opcode.has("DEPBAR") => {
            let n = ti.imm[0].clamp(0, 63);
            Some(vec![
                gsb0(),
                Operand::new(OperandKind::Imm(sassim_isa::Imm::Int(n))),
            ])
        }
        _ => None,
    }
}

pub(super) fn filler(pc: u64) -> Instruction {
    Instruction {
        pc,
        guard: None,
        opcode: Opcode::parse("NOP"),
        operands: Vec::new(),
        ctrl: ControlBits::default(),
        encoding: None,
    }
}

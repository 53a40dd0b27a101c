//! SASS instructions and kernels.

use crate::control::ControlBits;
use crate::operand::{Operand, OperandKind, Pred};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Size in bytes of one Volta-and-later instruction.
pub const INSTRUCTION_BYTES: u64 = 16;

/// Opcode with modifiers: `IMAD.WIDE.U32` = base `IMAD`, modifiers `[WIDE, U32]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Opcode {
    pub base: String,
    pub mods: Vec<String>,
}

impl Opcode {
    pub fn parse(s: &str) -> Opcode {
        let mut it = s.split('.');
        let base = it.next().unwrap_or_default().to_string();
        Opcode {
            base,
            mods: it.map(str::to_string).collect(),
        }
    }
    pub fn has(&self, m: &str) -> bool {
        self.mods.iter().any(|x| x == m)
    }
    pub fn mod_refs(&self) -> Vec<&str> {
        self.mods.iter().map(String::as_str).collect()
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)?;
        for m in &self.mods {
            write!(f, ".{m}")?;
        }
        Ok(())
    }
}

/// One static SASS instruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instruction {
    /// Byte offset within its function.
    pub pc: u64,
    /// Guard predicate (`@P0`, `@!P0`, `@PT`); `None` when absent.
    pub guard: Option<Pred>,
    pub opcode: Opcode,
    pub operands: Vec<Operand>,
    pub ctrl: ControlBits,
    /// The two 64-bit words of the encoding (low, high) when the listing had them.
    pub encoding: Option<[u64; 2]>,
}

impl Instruction {
    /// Source operand slots as the reuse flags and the register-file cache see them:
    /// the operands after the destinations, in order (slot k = reuse bit k).
    pub fn source_operands(&self) -> &[Operand] {
        let d = crate::dataflow::dest_count(self).min(self.operands.len());
        &self.operands[d..]
    }
    pub fn dest_operands(&self) -> &[Operand] {
        let d = crate::dataflow::dest_count(self).min(self.operands.len());
        &self.operands[..d]
    }
    /// The branch target operand, if any.
    pub fn target(&self) -> Option<&crate::operand::Target> {
        self.operands.iter().find_map(|o| match &o.kind {
            OperandKind::Target(t) => Some(t),
            _ => None,
        })
    }
    /// Writes the instruction without control code: `@!P0 BRA 0x70`.
    pub fn fmt_body(&self, f: &mut impl fmt::Write) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "@{g} ")?;
        }
        write!(f, "{}", self.opcode)?;
        for (i, o) in self.operands.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            write!(f, "{o}")?;
        }
        Ok(())
    }
    /// The instruction without control code.
    pub fn body(&self) -> String {
        let mut s = String::new();
        let _ = self.fmt_body(&mut s);
        s
    }
}

/// Printed in the microbenchmark dialect: `[B------:R-:W2:-:S01] LDG.E R5, [R12.64] ;`
impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.ctrl)?;
        self.fmt_body(f)?;
        f.write_str(" ;")
    }
}

/// One function of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    /// Instructions in address order; `instructions[i].pc == i * 16` in well-formed code.
    pub instructions: Vec<Instruction>,
    /// Labels and their byte offsets.
    pub labels: BTreeMap<String, u64>,
}

impl Kernel {
    /// Index of the instruction at byte offset `pc`.
    pub fn index_of(&self, pc: u64) -> Option<usize> {
        let i = (pc / INSTRUCTION_BYTES) as usize;
        match self.instructions.get(i) {
            Some(ins) if ins.pc == pc => Some(i),
            _ => self.instructions.iter().position(|x| x.pc == pc),
        }
    }
}

/// A parsed listing: one or more functions for one architecture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Listing {
    /// `sm_86` etc., when the listing says.
    pub arch: Option<String>,
    pub kernels: Vec<Kernel>,
}

impl Listing {
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

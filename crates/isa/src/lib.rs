//! `sassim-isa`: the SASS instruction model shared by every stage of the simulator.
//!
//! - [`control`]: compiler control bits (stall, yield, dependence counters, wait mask, reuse).
//! - [`operand`]: typed operands (registers, predicates, constants, immediates, addresses…).
//! - [`instruction`]: instructions, kernels and listings, printed in the microbenchmark dialect.
//! - [`mma`]: tensor-core instructions (shapes, types, fragment register counts).
//! - [`dataflow`]: destinations, operand widths and the registers each instruction reads and writes.

pub mod control;
pub mod cpu_hint;
pub mod dataflow;
pub mod elem;
pub mod instruction;
pub mod mma;
pub mod operand;

pub use control::{ControlBits, NUM_DEP_COUNTERS};
pub use dataflow::{dest_count, infer_widths, operand_width, regs_read, regs_written, ArchReg};
pub use elem::ElemType;
pub use instruction::{Instruction, Kernel, Listing, Opcode, INSTRUCTION_BYTES};
pub use mma::{
    gmma_a_in_registers, ldsm_matrices, names_gmma_group, GmmaSpec, GmmaType, MmaFamily, MmaSpec, MmaType,
};
pub use operand::{
    AddrReg, Address, ConstBank, ConstRef, Imm, Operand, OperandKind, Pred, PredReg, Reg, RegFile, Target,
};

//! `sassim-cudart`: sassim's CUDA runtime. Built as `libcudart.so.13` and `libcudart.so.12`
//! (the crates in `so13/` and `so12/`), it replaces NVIDIA's runtime library for a program
//! run with `sassim exec`: the program runs natively on the CPU, and every kernel it launches
//! runs on the simulated GPU (functional execution of its SASS plus the timing model).
//!
//! - [`api`]: the exported C functions (runtime API and nvcc's registration entry points);
//! - [`module`]: fat binaries → cubins for the GPU's architecture → device memory,
//!   constant banks and kernels;
//! - [`launch`]: one kernel launch;
//! - [`runtime`]: the state (device, memory, streams, events, errors);
//! - [`config`]: what `sassim exec` passes (GPU, options, results file).
//!
//! See `docs/exec.md`.

pub mod abi;
pub mod api;
pub mod config;
pub mod error;
pub mod launch;
pub mod module;
pub mod runtime;

pub use config::{Event, ExecConfig, CONFIG_ENV};

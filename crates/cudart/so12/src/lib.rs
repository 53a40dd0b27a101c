//! `libcudart.so.12`: sassim's CUDA runtime under the name CUDA 12 programs link
//! (`nvcc -cudart shared`). Every symbol comes from `sassim-cudart`.

pub use sassim_cudart;

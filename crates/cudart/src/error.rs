//! Errors of runtime calls: a CUDA error code for the program and a message for the user.

use crate::abi::cudaError_t;

/// A failed runtime call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtError {
    pub code: cudaError_t,
    pub message: String,
    /// Something the simulator cannot do (an unsupported opcode, call or relocation): the
    /// program sees the error code, and `sassim exec` reports the run as failed.
    pub fatal: bool,
}

impl RtError {
    pub fn new(code: cudaError_t, message: impl Into<String>) -> RtError {
        RtError {
            code,
            message: message.into(),
            fatal: false,
        }
    }
    /// An error that means sassim could not simulate the program faithfully.
    pub fn fatal(code: cudaError_t, message: impl Into<String>) -> RtError {
        RtError {
            code,
            message: message.into(),
            fatal: true,
        }
    }
}

pub type RtResult<T> = Result<T, RtError>;

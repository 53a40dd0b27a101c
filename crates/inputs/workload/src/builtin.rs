//! The built-in workload suite (`workloads/` at the repository root).
//!
//! Specs, CUDA sources and SASS listings are embedded with `include_str!`, so a release binary
//! can run the suite from any directory. [`builtin_suite_dir`] gives the on-disk folder when the
//! binary runs inside the source tree.

use crate::workload::{SpecError, Workload};
use std::path::{Path, PathBuf};

/// Architectures the committed listings were generated for.
pub const ARCHS: &[&str] = &["sm_75", "sm_86", "sm_90"];

/// One embedded built-in workload.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinWorkload {
    pub name: &'static str,
    /// The launch spec (`<name>.toml`).
    pub spec_toml: &'static str,
    /// The CUDA source (`<name>.cu`).
    pub source_cu: &'static str,
    /// `(arch, cuobjdump -sass text)` per arch, e.g. `("sm_86", ...)`. Both 64-bit words of
    /// every instruction are shown.
    pub listings: &'static [(&'static str, &'static str)],
    /// `(arch, nvdisasm -hex text)` per arch (ELF sections, labels, hex words).
    pub nvdisasm: &'static [(&'static str, &'static str)],
    /// `ptxas -v` output for all archs (registers, shared memory, `cmem[0]` size).
    pub ptxas_info: &'static str,
}

impl BuiltinWorkload {
    /// Parses and validates the embedded spec (origin `builtin:<name>`).
    pub fn load(&self) -> Result<Workload, SpecError> {
        let dir = builtin_suite_dir().map(|d| d.join(self.name));
        Workload::parse(
            self.spec_toml,
            &format!("builtin:{}", self.name),
            Some(self.name),
            dir.as_deref(),
        )
    }

    /// Whether the spec leaves `default_suite` at true (an unparsable spec counts as in the
    /// suite, so that running it reports the error).
    pub fn in_default_suite(&self) -> bool {
        toml::from_str::<crate::spec::Spec>(self.spec_toml).map_or(true, |s| s.default_suite)
    }

    /// The cuobjdump listing for `arch` (`"sm_86"` or `"86"`).
    pub fn listing(&self, arch: &str) -> Option<&'static str> {
        find(self.listings, arch)
    }

    /// The nvdisasm listing for `arch`.
    pub fn nvdisasm_listing(&self, arch: &str) -> Option<&'static str> {
        find(self.nvdisasm, arch)
    }
}

fn find(list: &[(&'static str, &'static str)], arch: &str) -> Option<&'static str> {
    let want = arch.strip_prefix("sm_").unwrap_or(arch);
    list.iter()
        .find(|(a, _)| a.strip_prefix("sm_") == Some(want))
        .map(|(_, t)| *t)
}

macro_rules! builtin {
    ($name:literal) => {
        BuiltinWorkload {
            name: $name,
            spec_toml: include_str!(concat!("../../../../workloads/", $name, "/", $name, ".toml")),
            source_cu: include_str!(concat!("../../../../workloads/", $name, "/", $name, ".cu")),
            listings: &[
                (
                    "sm_75",
                    include_str!(concat!(
                        "../../../../workloads/",
                        $name,
                        "/",
                        $name,
                        "_sm75.cuobjdump-sass.txt"
                    )),
                ),
                (
                    "sm_86",
                    include_str!(concat!(
                        "../../../../workloads/",
                        $name,
                        "/",
                        $name,
                        "_sm86.cuobjdump-sass.txt"
                    )),
                ),
                (
                    "sm_90",
                    include_str!(concat!(
                        "../../../../workloads/",
                        $name,
                        "/",
                        $name,
                        "_sm90.cuobjdump-sass.txt"
                    )),
                ),
            ],
            nvdisasm: &[
                (
                    "sm_75",
                    include_str!(concat!(
                        "../../../../workloads/",
                        $name,
                        "/",
                        $name,
                        "_sm75.nvdisasm-hex.txt"
                    )),
                ),
                (
                    "sm_86",
                    include_str!(concat!(
                        "../../../../workloads/",
                        $name,
                        "/",
                        $name,
                        "_sm86.nvdisasm-hex.txt"
                    )),
                ),
                (
                    "sm_90",
                    include_str!(concat!(
                        "../../../../workloads/",
                        $name,
                        "/",
                        $name,
                        "_sm90.nvdisasm-hex.txt"
                    )),
                ),
            ],
            ptxas_info: include_str!(concat!(
                "../../../../workloads/",
                $name,
                "/",
                $name,
                ".ptxas-v.txt"
            )),
        }
    };
}

static BUILTIN: &[BuiltinWorkload] = &[
    builtin!("vecadd"),
    builtin!("saxpy"),
    builtin!("reduce"),
    builtin!("matmul"),
    builtin!("histogram"),
    builtin!("divergent"),
    builtin!("spinlock"),
    builtin!("shfl_reduce"),
    builtin!("flops"),
    builtin!("sgemm"),
];

/// The embedded built-in workloads, in a fixed order.
pub fn builtin() -> Vec<BuiltinWorkload> {
    BUILTIN.to_vec()
}

/// The built-in workloads whose spec does not say `default_suite = false`: what `sassim run`
/// simulates without workload names.
pub fn default_suite() -> Vec<BuiltinWorkload> {
    BUILTIN.iter().filter(|b| b.in_default_suite()).copied().collect()
}

/// One built-in workload by name.
pub fn builtin_named(name: &str) -> Option<BuiltinWorkload> {
    BUILTIN.iter().find(|b| b.name == name).copied()
}

/// Text of `workloads/TOOLCHAIN.txt`: the tool versions that produced the listings.
pub const TOOLCHAIN: &str = include_str!("../../../../workloads/TOOLCHAIN.txt");

/// The `workloads/` folder of the source tree this crate was compiled from, if it still exists.
pub fn builtin_suite_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../workloads");
    d.canonicalize().ok().filter(|p| p.is_dir())
}

/// Spec files of a suite folder: every `<dir>/<name>/<name>.toml`, sorted by name.
pub fn list_suite(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let spec = entry.path().join(format!("{}.toml", name.to_string_lossy()));
        if spec.is_file() {
            out.push(spec);
        }
    }
    out.sort();
    Ok(out)
}

//! `sassim-fuzz`: structure-aware fuzzing of every kind of input sassim reads, on stable
//! Rust (docs/reliability.md).
//!
//! For each [`Kind`] the harness has a seed corpus taken from the repository's own files
//! ([`Corpus::load`]), a mutator that works on tokens and lines rather than bytes
//! ([`mutate`]), an in-process target that runs the parser and validator on an input
//! ([`parse`]) and the command line of a whole simulator run on it ([`sim_args`]).
//! Inputs are pure functions of (seed, index) ([`Corpus::input`]), so a supervisor can
//! rebuild the input that crashed or hung a worker process. The driver is `src/main.rs`.
//!
//! [`Kind::Cubin`] covers what `sassim exec` reads from a program: its `.nv_fatbin` section
//! (fat-binary containers) and the cubins inside. Seeds are the sections and cubins of the
//! program suite (`workloads/programs/bin`); a simulator run splices the mutated bytes back
//! into a copy of the program (same length, so the host code stays intact) and runs it
//! under `sassim exec --functional`.

pub mod mutate;
pub mod sim;

use anyhow::{bail, Context, Result};
use mutate::Rng;
use std::path::{Path, PathBuf};

/// The kinds of input sassim reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// cuobjdump -sass / nvdisasm listings.
    Listing,
    /// Microbenchmark-dialect files.
    Microbench,
    /// Workload launch specs (TOML).
    Spec,
    /// GPU preset files (TOML).
    Preset,
    /// `--set key=value` overrides, one per line.
    Set,
    /// Accel-Sim text traces.
    TraceText,
    /// Accel-Sim traces compressed with xz, gzip or zstd.
    TraceCompressed,
    /// sassim's compact binary traces.
    TraceBinary,
    /// `kernelslist.g`.
    Kernelslist,
    /// `correlate` inputs: a `run --json` report and a hardware CSV, joined by [`SEPARATOR`].
    Correlate,
    /// Cubins and fat binaries of `sassim exec` (see the crate docs).
    Cubin,
}

/// Joins the two files of a [`Kind::Correlate`] input.
pub const SEPARATOR: &[u8] = b"\n=== hardware csv ===\n";

impl Kind {
    pub const ALL: [Kind; 11] = [
        Kind::Listing,
        Kind::Microbench,
        Kind::Spec,
        Kind::Preset,
        Kind::Set,
        Kind::TraceText,
        Kind::TraceCompressed,
        Kind::TraceBinary,
        Kind::Kernelslist,
        Kind::Correlate,
        Kind::Cubin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Listing => "listing",
            Kind::Microbench => "microbench",
            Kind::Spec => "spec",
            Kind::Preset => "preset",
            Kind::Set => "set",
            Kind::TraceText => "trace-text",
            Kind::TraceCompressed => "trace-compressed",
            Kind::TraceBinary => "trace-binary",
            Kind::Kernelslist => "kernelslist",
            Kind::Correlate => "correlate",
            Kind::Cubin => "cubin",
        }
    }

    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.name() == s)
    }

    /// File extension of saved inputs.
    pub fn ext(self) -> &'static str {
        match self {
            Kind::Listing | Kind::Set => "txt",
            Kind::Microbench => "sass",
            Kind::Spec | Kind::Preset => "toml",
            Kind::TraceText => "traceg",
            Kind::TraceCompressed => "traceg.z",
            Kind::TraceBinary => "sbt",
            Kind::Kernelslist => "g",
            Kind::Correlate => "json-csv",
            Kind::Cubin => "cubin",
        }
    }

    /// Whether the kind can be fuzzed in this build.
    pub fn available(self) -> bool {
        true
    }
}

/// The repository root (this crate is `crates/fuzz`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A seed corpus and the material its mutator draws from.
pub struct Corpus {
    pub kind: Kind,
    /// (name, bytes) of every seed.
    pub seeds: Vec<(String, Vec<u8>)>,
    /// Identifiers of all seeds (for identifier replacement).
    pub dict: Vec<Vec<u8>>,
    /// Text versions of binary/compressed seeds (structure-aware mutation before encoding).
    pub text: Vec<Vec<u8>>,
}

fn files(dir: &Path, pred: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            files(&p, pred, out);
        } else if p.file_name().and_then(|n| n.to_str()).is_some_and(pred) {
            out.push(p);
        }
    }
}

/// The first `blocks` thread blocks of a text trace (keeps seeds small: parsing time
/// decides how many inputs a budget runs).
fn first_blocks(text: &[u8], blocks: usize) -> Vec<u8> {
    let s = String::from_utf8_lossy(text);
    let mut out = String::new();
    let mut n = 0;
    for l in s.split_inclusive('\n') {
        out.push_str(l);
        if l.starts_with("#END_TB") {
            n += 1;
            if n == blocks {
                break;
            }
        }
    }
    out.into_bytes()
}

/// The header and the first `warps` warps of the first thread block of a text trace (a
/// seed of a few kilobytes: mutating and parsing it takes microseconds).
fn first_warps(text: &[u8], warps: usize) -> Vec<u8> {
    let s = String::from_utf8_lossy(text);
    let mut out = String::new();
    let mut n = 0;
    for l in s.split_inclusive('\n') {
        if l.starts_with("warp =") {
            n += 1;
            if n > warps {
                break;
            }
        }
        if l.starts_with("#END_TB") {
            break;
        }
        out.push_str(l);
    }
    out.push_str("#END_TB\n");
    out.into_bytes()
}

/// The fixture directories whose `kernel-1.traceg` are the trace seeds.
const TRACE_FIXTURES: [&str; 4] = [
    "vectoradd-sm61-v4-gtx1080",
    "matrixmul-sm61-v4",
    "vectoradd-sm80-v5",
    "bfs-sm80-v3",
];

/// Text trace seeds: the kernel-1 trace of each fixture directory, at most 4 blocks, and
/// its first 2 warps alone.
fn trace_seeds(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for d in TRACE_FIXTURES {
        let p = root.join("fixtures/traces").join(d).join("kernel-1.traceg");
        if let Ok(b) = std::fs::read(&p) {
            out.push((format!("{d}/kernel-1.traceg"), first_blocks(&b, 4)));
            out.push((format!("{d}/kernel-1.traceg (2 warps)"), first_warps(&b, 2)));
        }
    }
    out
}

/// Write `bytes` to a new file at `path`. The old file is removed first: ext4 writes a
/// file that is truncated or renamed over back to disk when it is closed
/// (`auto_da_alloc`), which cost a fuzzed input milliseconds.
pub fn put(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::write(path, bytes)
}

fn encode(kind: Kind, text: &[u8], which: usize, scratch: &Path) -> Result<Vec<u8>> {
    use std::io::Write;
    match kind {
        Kind::TraceCompressed => Ok(match which % 3 {
            0 => {
                let mut e = xz2::write::XzEncoder::new(Vec::new(), 1);
                e.write_all(text)?;
                e.finish()?
            }
            1 => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(text)?;
                e.finish()?
            }
            _ => zstd::encode_all(text, 1)?,
        }),
        Kind::TraceBinary => {
            let from = scratch.join("enc.traceg");
            let to = scratch.join("enc.sbt");
            put(&from, text)?;
            std::fs::remove_file(&to).ok();
            sassim_trace::convert(&from, &to).map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(std::fs::read(&to)?)
        }
        _ => Ok(text.to_vec()),
    }
}

impl Corpus {
    /// The seeds of `kind` from the repository at `root`.
    pub fn load(kind: Kind, root: &Path, scratch: &Path) -> Result<Corpus> {
        let mut seeds = Vec::new();
        let mut text = Vec::new();
        let read = |paths: Vec<PathBuf>, seeds: &mut Vec<(String, Vec<u8>)>| -> Result<()> {
            for p in paths {
                let b = std::fs::read(&p).with_context(|| p.display().to_string())?;
                let name = p.strip_prefix(root).unwrap_or(&p).display().to_string();
                seeds.push((name, b));
            }
            Ok(())
        };
        match kind {
            Kind::Listing => {
                let mut v = Vec::new();
                let pred = |n: &str| n.ends_with(".cuobjdump-sass.txt") || n.ends_with(".nvdisasm-hex.txt");
                files(&root.join("workloads"), &pred, &mut v);
                files(&root.join("fixtures/sass-samples"), &pred, &mut v);
                read(v, &mut seeds)?;
            }
            Kind::Microbench => {
                let mut v = Vec::new();
                files(
                    &root.join("fixtures/sass-samples/microbench"),
                    &|n| n.ends_with(".sass"),
                    &mut v,
                );
                read(v, &mut seeds)?;
            }
            Kind::Spec => {
                let mut v = Vec::new();
                files(&root.join("workloads"), &|n| n.ends_with(".toml"), &mut v);
                read(v, &mut seeds)?;
            }
            Kind::Preset => {
                let mut v = Vec::new();
                files(&root.join("presets"), &|n| n.ends_with(".toml"), &mut v);
                v.retain(|p| !p.to_string_lossy().contains("opcodes"));
                read(v, &mut seeds)?;
            }
            Kind::Set => {
                // Every key of the default preset with its value, one override per line.
                let cfg = sassim_config::GpuConfig::default_preset();
                let v = toml::Value::try_from(&cfg)?;
                let mut lines = Vec::new();
                fn walk(v: &toml::Value, p: &mut Vec<String>, out: &mut Vec<String>) {
                    match v {
                        toml::Value::Table(t) => t.iter().for_each(|(k, c)| {
                            p.push(k.clone());
                            walk(c, p, out);
                            p.pop();
                        }),
                        // Informational keys are refused by `--set`: not seeds.
                        other => {
                            let key = p.join(".");
                            if sassim_config::informational::informational(&key).is_none() {
                                out.push(format!("{key}={other}"));
                            }
                        }
                    }
                }
                walk(&v, &mut Vec::new(), &mut lines);
                for (i, chunk) in lines.chunks(4).enumerate() {
                    seeds.push((format!("preset-keys-{i}"), chunk.join("\n").into_bytes()));
                }
            }
            Kind::TraceText => seeds = trace_seeds(root),
            Kind::TraceCompressed | Kind::TraceBinary => {
                for (i, (n, t)) in trace_seeds(root).into_iter().enumerate() {
                    seeds.push((n, encode(kind, &t, i, scratch)?));
                    text.push(t);
                }
            }
            Kind::Kernelslist => {
                let mut v = Vec::new();
                files(&root.join("fixtures/traces"), &|n| n == "kernelslist.g", &mut v);
                read(v, &mut seeds)?;
            }
            Kind::Correlate => {
                let json = std::fs::read(root.join("crates/fuzz/seeds/run-vecadd.json"))?;
                for csv in ["hw-simple.csv", "hw-ncu-raw.csv"] {
                    let mut b = json.clone();
                    b.extend_from_slice(SEPARATOR);
                    b.extend(std::fs::read(root.join("crates/fuzz/seeds").join(csv))?);
                    seeds.push((format!("run-vecadd.json + {csv}"), b));
                }
            }
            Kind::Cubin => seeds = cubin_seeds(root)?,
        }
        if seeds.is_empty() {
            bail!("no seeds for {} under {}", kind.name(), root.display());
        }
        let mut dict: Vec<Vec<u8>> = seeds.iter().flat_map(|s| mutate::identifiers(&s.1)).collect();
        dict.extend(text.iter().flat_map(|t| mutate::identifiers(t)));
        dict.sort();
        dict.dedup();
        Ok(Corpus {
            kind,
            seeds,
            dict,
            text,
        })
    }

    /// Input `index` of the run seeded by `seed`: a seed mutated 1 to 4 times. `scratch` is
    /// a directory for encoding binary traces.
    pub fn input(&self, seed: u64, index: u64, scratch: &Path) -> (usize, Vec<u8>) {
        let mut r = Rng::new(seed, index);
        let which = r.below(self.seeds.len());
        let other = &self.seeds[r.below(self.seeds.len())].1;
        let rounds = 1 + r.below(4);
        let binary = matches!(self.kind, Kind::TraceCompressed | Kind::TraceBinary | Kind::Cubin);
        if binary && !self.text.is_empty() && r.chance(60) {
            // Structure-aware: mutate the text, then encode it.
            let mut t = self.text[which].clone();
            for _ in 0..rounds {
                mutate::mutate_once(&mut t, &self.text[r.below(self.text.len())], &self.dict, &mut r);
            }
            if let Ok(b) = encode(self.kind, &t, which, scratch) {
                return (which, b);
            }
        }
        let mut b = self.seeds[which].1.clone();
        for _ in 0..rounds {
            if binary {
                mutate::mutate_bytes(&mut b, &mut r);
            } else {
                mutate::mutate_once(&mut b, other, &self.dict, &mut r);
            }
        }
        (which, b)
    }
}

/// Memory budget of one parsed input (the `--max-memory` a fuzzed simulator run gets).
pub const PARSE_MEMORY_BUDGET: u64 = 512 << 20;

/// Blocks read at most from a fuzzed trace (bounds the time of one input).
const MAX_BLOCKS: u64 = 1 << 16;

fn read_trace(path: &Path) -> Result<(), String> {
    let mut r = sassim_trace::KernelTraceReader::open(path).map_err(|e| e.to_string())?;
    let mut n = 0;
    while r.next_block().map_err(|e| e.to_string())?.is_some() && n < MAX_BLOCKS {
        n += 1;
    }
    Ok(())
}

/// Run the parser and validator of `kind` on `input` in this process. `Err` is a clean
/// error (the expected outcome of most inputs); a panic, an abort, a hang or excessive
/// memory is a finding. `scratch` is a private directory for file-based readers; for
/// [`Kind::Kernelslist`] it must hold the fixture kernel traces ([`prepare_scratch`]).
pub fn parse(kind: Kind, input: &[u8], scratch: &Path) -> Result<(), String> {
    let text = || String::from_utf8_lossy(input).into_owned();
    match kind {
        Kind::Listing => {
            let l = sassim_sass::parse_listing(&text(), "fuzz.txt").map_err(|e| e.to_string())?;
            let _ = sassim_sass::disasm_text(&l);
            let _ = sassim_sass::disasm_json(&l);
        }
        Kind::Microbench => {
            let m = sassim_sass::microbench::parse(&text(), "fuzz.sass").map_err(|e| e.to_string())?;
            let _ = sassim_sass::disasm_text(&sassim_isa_listing(m.kernel));
        }
        Kind::Spec => {
            // As `sassim run` does with its memory limit: buffers are refused before they
            // are built when they would exceed the budget.
            let budget = |spec: &sassim_workload::Spec| -> Result<(), String> {
                let bytes = spec.check_sizes()?;
                if bytes.saturating_mul(4) > PARSE_MEMORY_BUDGET {
                    return Err(format!("buffers of {bytes} bytes exceed the fuzzing budget"));
                }
                Ok(())
            };
            sassim_workload::Workload::parse_checked(
                &text(),
                "fuzz.toml",
                Some("fuzz"),
                Some(scratch),
                budget,
            )
            .map_err(|e| e.to_string())?;
        }
        Kind::Preset => {
            let c =
                sassim_config::GpuConfig::from_toml_str(&text(), "fuzz.toml").map_err(|e| e.to_string())?;
            let _ = c.to_toml();
        }
        Kind::Set => {
            let sets: Vec<String> = text().lines().map(str::to_string).collect();
            sassim_config::GpuConfig::load("rtx-a6000", &sets).map_err(|e| e.to_string())?;
        }
        Kind::TraceText | Kind::TraceCompressed | Kind::TraceBinary => {
            let p = scratch.join(format!("fuzz.{}", kind.ext()));
            put(&p, input).map_err(|e| e.to_string())?;
            read_trace(&p)?;
        }
        Kind::Kernelslist => {
            let p = scratch.join("kernelslist.g");
            put(&p, input).map_err(|e| e.to_string())?;
            for c in sassim_trace::read_kernelslist(&p).map_err(|e| e.to_string())? {
                if let sassim_trace::TraceCommand::Kernel { path, .. } = c {
                    // Only files of the scratch directory: a fuzzed name must not send the
                    // reader to the rest of the machine (it would be the machine's files
                    // that are fuzzed).
                    if path.parent() == Some(scratch) && path.is_file() {
                        read_trace(&path)?;
                    }
                }
            }
        }
        Kind::Correlate => {
            let (json, csv) = split_correlate(input);
            let sim = sassim_report::from_json(&String::from_utf8_lossy(json)).map_err(|e| e.to_string())?;
            let hw = sassim_report::parse_hw_csv(&String::from_utf8_lossy(csv), "hw.csv")
                .map_err(|e| e.to_string())?;
            let c = sassim_report::correlate(&sim, &hw);
            let _ = sassim_report::render_correlation(&c);
        }
        Kind::Cubin => {
            // A cubin, or a program's `.nv_fatbin` section with the cubins inside.
            if input.starts_with(b"\x7fELF") {
                let c =
                    sassim_cubin::Cubin::parse(input.to_vec(), "fuzz.cubin").map_err(|e| e.to_string())?;
                let _ = c.sha256();
            } else {
                let fbs = sassim_cubin::FatBinary::parse_section(input, "fuzz.fatbin")
                    .map_err(|e| e.to_string())?;
                for e in fbs.iter().flat_map(|f| &f.entries) {
                    if e.kind == sassim_cubin::EntryKind::Cubin {
                        sassim_cubin::Cubin::parse(e.data.clone(), "fuzz cubin")
                            .map_err(|e| e.to_string())?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Where a program's `.nv_fatbin` section is in its file: (offset, size).
fn fatbin_section(elf: &[u8]) -> Option<(usize, usize)> {
    // ELF64 little-endian section headers: e_shoff at 0x28, e_shentsize 0x3a, e_shnum 0x3c,
    // e_shstrndx 0x3e; a section header has sh_name at 0, sh_offset at 0x18, sh_size at 0x20.
    let u16_at = |o: usize| Some(u16::from_le_bytes(elf.get(o..o + 2)?.try_into().ok()?) as usize);
    let u32_at = |o: usize| Some(u32::from_le_bytes(elf.get(o..o + 4)?.try_into().ok()?) as usize);
    let u64_at = |o: usize| Some(u64::from_le_bytes(elf.get(o..o + 8)?.try_into().ok()?) as usize);
    let (shoff, shentsize, shnum, shstrndx) = (u64_at(0x28)?, u16_at(0x3a)?, u16_at(0x3c)?, u16_at(0x3e)?);
    let sh = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
    let strtab = u64_at(sh(shstrndx)? + 0x18)?;
    for i in 0..shnum {
        let h = sh(i)?;
        let name = strtab.checked_add(u32_at(h)?)?;
        if elf.get(name..name + 11) == Some(b".nv_fatbin\0") {
            return Some((u64_at(h + 0x18)?, u64_at(h + 0x20)?));
        }
    }
    None
}

/// Seeds of [`Kind::Cubin`]: the `.nv_fatbin` section of every program of the suite, and each
/// cubin of those sections (named `<program>#<index>`).
fn cubin_seeds(root: &Path) -> Result<Vec<(String, Vec<u8>)>> {
    let mut v = Vec::new();
    files(
        &root.join("workloads/programs/bin"),
        &|n| !n.starts_with("refuse_static"),
        &mut v,
    );
    let mut seeds = Vec::new();
    for p in v {
        let b = std::fs::read(&p).with_context(|| p.display().to_string())?;
        let Some((off, size)) = fatbin_section(&b) else {
            continue;
        };
        let Some(section) = b.get(off..off + size) else {
            continue;
        };
        let name = p.strip_prefix(root).unwrap_or(&p).display().to_string();
        seeds.push((name.clone(), section.to_vec()));
        if let Ok(fbs) = sassim_cubin::FatBinary::parse_section(section, &name) {
            let cubins = fbs
                .iter()
                .flat_map(|f| &f.entries)
                .filter(|e| e.kind == sassim_cubin::EntryKind::Cubin);
            for (i, e) in cubins.enumerate() {
                seeds.push((format!("{name}#{i}"), e.data.clone()));
            }
        }
    }
    Ok(seeds)
}

fn sassim_isa_listing(k: sassim_isa::Kernel) -> sassim_isa::Listing {
    sassim_isa::Listing {
        arch: None,
        kernels: vec![k],
    }
}

/// The JSON and CSV halves of a [`Kind::Correlate`] input.
pub fn split_correlate(input: &[u8]) -> (&[u8], &[u8]) {
    match input.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        Some(i) => (&input[..i], &input[i + SEPARATOR.len()..]),
        None => (input, &[]),
    }
}

/// Put the kernel trace that `kernelslist.g` seeds name (`kernel-1.traceg`) into
/// `scratch`: the first 4 warps of the matrixmul fixture's (the trace reader has its own
/// kinds; the whole 180 KB trace made each kernelslist input cost milliseconds).
pub fn prepare_scratch(kind: Kind, root: &Path, scratch: &Path) -> Result<()> {
    std::fs::create_dir_all(scratch)?;
    if kind == Kind::Kernelslist {
        let from = root.join("fixtures/traces/matrixmul-sm61-v4/kernel-1.traceg");
        let text = std::fs::read(&from).with_context(|| from.display().to_string())?;
        put(&scratch.join("kernel-1.traceg"), &first_warps(&text, 4))?;
    }
    Ok(())
}

/// `--max-memory` of fuzzed simulator runs: the harness flags a peak RSS above 1 GiB.
pub const SIM_MEMORY_LIMIT: &str = "768M";

/// Write the files of a whole simulator run on `input` into `dir` and return the `sassim`
/// arguments. Runs are bounded by `--max-wall` (seconds) where the command has it.
/// `seed` is the name of the seed the input was mutated from (a listing runs with the
/// launch spec of its workload).
pub fn sim_args(
    kind: Kind,
    seed: &str,
    input: &[u8],
    root: &Path,
    dir: &Path,
    max_wall: u64,
) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let s = |p: &Path| p.display().to_string();
    let wall = [
        "--max-wall".to_string(),
        max_wall.to_string(),
        "--max-memory".into(),
        SIM_MEMORY_LIMIT.into(),
    ];
    let w = |name: &str| root.join("workloads").join(name);
    let run = |rest: Vec<String>| -> Vec<String> {
        let mut a = vec!["run".to_string(), "--jobs".into(), "1".into()];
        a.extend(rest);
        a.extend(wall.iter().cloned());
        a
    };
    Ok(match kind {
        Kind::Listing => {
            let l = dir.join("listing.txt");
            std::fs::write(&l, input)?;
            // workloads/<w>/<w>_smXX...: run it with <w>'s launch spec; other listings
            // (fixtures without a spec) through `disasm`.
            let spec = seed
                .strip_prefix("workloads/")
                .and_then(|r| r.split('/').next())
                .map(|name| w(&format!("{name}/{name}.toml")));
            match spec {
                Some(spec) if spec.is_file() => {
                    let mut a = run(vec![s(&spec), "--listing".into(), s(&l)]);
                    // The listing's own architecture: sm_75 and sm_90 listings on presets of
                    // that architecture.
                    for (sm, gpu) in [("_sm75", "t4"), ("_sm90", "h100")] {
                        if seed.contains(sm) {
                            a.extend(["--gpu".to_string(), gpu.to_string()]);
                        }
                    }
                    a
                }
                _ => vec!["disasm".into(), s(&l)],
            }
        }
        Kind::Microbench => {
            let f = dir.join("fuzz.sass");
            std::fs::write(&f, input)?;
            vec![
                "microbench".into(),
                s(&f),
                "--max-wall".into(),
                max_wall.to_string(),
            ]
        }
        Kind::Spec => {
            // The spec's workload files beside it, as in workloads/<w>/ (or a deeper folder
            // such as workloads/calibration/<w>/).
            let (src_dir, name) = seed
                .strip_prefix("workloads/")
                .map(Path::new)
                .and_then(|rel| Some((rel.parent()?, rel.file_stem()?.to_str()?)))
                .map(|(d, n)| (root.join("workloads").join(d), n.to_string()))
                .filter(|(d, n)| d.join(format!("{n}.ptxas-v.txt")).is_file())
                .unwrap_or_else(|| (w("vecadd"), "vecadd".to_string()));
            let f = dir.join(format!("{name}.toml"));
            std::fs::write(&f, input)?;
            // A listing for the default preset's architecture (sm_86), or the spec's only one.
            let listing = ["_sm86", "_sm90", "_sm75"]
                .iter()
                .map(|a| format!("{name}{a}.cuobjdump-sass.txt"))
                .find(|l| src_dir.join(l).is_file())
                .unwrap_or_else(|| format!("{name}_sm86.cuobjdump-sass.txt"));
            let gpu = [("_sm90", "h100"), ("_sm75", "t4")]
                .iter()
                .find(|(a, _)| listing.contains(a))
                .map(|(_, g)| g.to_string());
            for file in [listing, format!("{name}.ptxas-v.txt")] {
                std::fs::copy(src_dir.join(&file), dir.join(&file))?;
            }
            let mut a = vec![s(&f)];
            if let Some(g) = gpu {
                a.extend(["--gpu".to_string(), g]);
            }
            run(a)
        }
        Kind::Preset => {
            let f = dir.join("gpu.toml");
            std::fs::write(&f, input)?;
            run(vec!["vecadd".into(), "--gpu".into(), s(&f)])
        }
        Kind::Set => {
            let mut a = vec!["vecadd".to_string()];
            // A command line cannot carry a NUL byte (the process would not start); such
            // lines are left to the in-process fuzzing of `parse`.
            for l in String::from_utf8_lossy(input)
                .lines()
                .filter(|l| !l.contains('\0'))
            {
                a.push("--set".into());
                a.push(l.to_string());
            }
            run(a)
        }
        Kind::TraceText | Kind::TraceCompressed | Kind::TraceBinary => {
            let name = format!("kernel-1.{}", kind.ext());
            std::fs::write(dir.join(&name), input)?;
            std::fs::write(dir.join("kernelslist.g"), format!("{name}\n"))?;
            run(vec!["--trace".into(), s(&dir.join("kernelslist.g"))])
        }
        Kind::Kernelslist => {
            prepare_scratch(kind, root, dir)?;
            std::fs::write(dir.join("kernelslist.g"), input)?;
            run(vec!["--trace".into(), s(&dir.join("kernelslist.g"))])
        }
        Kind::Correlate => {
            let (json, csv) = split_correlate(input);
            std::fs::write(dir.join("sim.json"), json)?;
            std::fs::write(dir.join("hw.csv"), csv)?;
            vec![
                "correlate".into(),
                s(&dir.join("sim.json")),
                s(&dir.join("hw.csv")),
            ]
        }
        Kind::Cubin => {
            // The seed's program with the mutated bytes in place of its section (a cubin
            // seed: in place of that cubin inside the section), cut or zero-padded to the
            // original length so the host code is untouched.
            let (prog, cubin) = match seed.split_once('#') {
                Some((p, i)) => (p, i.parse::<usize>().ok()),
                None => (seed, None),
            };
            let mut b = std::fs::read(root.join(prog)).with_context(|| prog.to_string())?;
            let (off, size) = fatbin_section(&b).context("the seed program has no .nv_fatbin")?;
            let (at, len) = match cubin {
                None => (off, size),
                Some(i) => {
                    let section = b[off..off + size].to_vec();
                    let fbs = sassim_cubin::FatBinary::parse_section(&section, prog)
                        .map_err(|e| anyhow::anyhow!("{e}"))?;
                    let c = fbs
                        .iter()
                        .flat_map(|f| &f.entries)
                        .filter(|e| e.kind == sassim_cubin::EntryKind::Cubin)
                        .nth(i)
                        .context("cubin index")?;
                    let pos = section
                        .windows(c.data.len().max(1))
                        .position(|w| w == c.data.as_slice())
                        .context("the cubin is stored compressed")?;
                    (off + pos, c.data.len())
                }
            };
            let mut m = input.to_vec();
            m.resize(len, 0);
            b[at..at + len].copy_from_slice(&m);
            let exe = dir.join("program");
            std::fs::write(&exe, &b)?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755))?;
            vec![
                "exec".into(),
                "--functional".into(),
                "-q".into(),
                "--max-wall".into(),
                max_wall.to_string(),
                "--".into(),
                s(&exe),
            ]
        }
    })
}

//! Fat-binary containers and cubins as nvcc 13.5 writes them: compressed and uncompressed
//! entries, cubin attributes, and the programs of the suite.

use sassim_cubin::{inspect, Compression, Cubin, EntryKind, FatBinary, RuntimeLink};
use std::path::PathBuf;

thread_local! {
    /// This test's own temporary directory, removed when the test (its thread) ends.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("temp dir");
}

/// `name` in this test's own temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

#[test]
fn zstd_compressed_entries_decompress_to_what_cuobjdump_extracts() {
    let bytes = std::fs::read(root().join("fixtures/cuda/scale_zstd.fatbin")).unwrap();
    let (fb, n) = FatBinary::parse(&bytes, "scale_zstd.fatbin").unwrap();
    assert_eq!(n, bytes.len());
    assert_eq!(fb.cubin_archs(), vec![86]);
    assert_eq!(fb.ptx_archs(), vec![90]);
    assert!(fb.entries.iter().all(|e| e.compression == Compression::Zstd));
    let e = fb.entries.iter().find(|e| e.kind == EntryKind::Cubin).unwrap();
    let c = Cubin::parse(e.data.clone(), "scale").unwrap();
    // SHA-256 of `cuobjdump -xelf all scale_zstd.fatbin`'s cubin (fixtures/cuda/README.md).
    assert_eq!(
        c.sha256(),
        "fbe9af8667b37dff1863e54bd2b0816c41428f03741dd15b74ce9f9918637063"
    );
    let k = c.kernel("_Z5scalePffi").expect("kernel");
    // float *x at 0, float a at 8, int n at 12; sm_86 parameters at c[0x0][0x160].
    let p: Vec<(u32, u32)> = k.params.iter().map(|p| (p.offset, p.size)).collect();
    assert_eq!(p, vec![(0, 8), (8, 4), (12, 4)]);
    assert_eq!((k.param_base, k.param_size), (0x160, 16));
    let ptx = fb.entries.iter().find(|e| e.kind == EntryKind::Ptx).unwrap();
    let text = String::from_utf8_lossy(&ptx.data);
    assert!(
        text.contains(".target sm_90") && text.contains(".entry _Z5scalePffi"),
        "{text}"
    );
}

/// The LZ4 block compression of CUDA 11-12 fat binaries (flag 0x2000): a container written
/// here around an lz4-compressed copy of the cubin reads back to the same bytes.
#[test]
fn lz4_compressed_entries_decompress() {
    let bytes = std::fs::read(root().join("fixtures/cuda/scale_zstd.fatbin")).unwrap();
    let (fb, _) = FatBinary::parse(&bytes, "scale").unwrap();
    let cubin = &fb
        .entries
        .iter()
        .find(|e| e.kind == EntryKind::Cubin)
        .unwrap()
        .data;
    let packed = lz4_flex::block::compress(cubin);
    let mut payload = packed.clone();
    payload.resize(packed.len().div_ceil(8) * 8, 0);
    let mut entry = Vec::new();
    entry.extend_from_slice(&2u16.to_le_bytes()); // ELF
    entry.extend_from_slice(&0x101u16.to_le_bytes());
    entry.extend_from_slice(&64u32.to_le_bytes()); // header size
    entry.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    entry.extend_from_slice(&(packed.len() as u32).to_le_bytes());
    entry.extend_from_slice(&0u32.to_le_bytes());
    entry.extend_from_slice(&8u16.to_le_bytes());
    entry.extend_from_slice(&1u16.to_le_bytes());
    entry.extend_from_slice(&86u32.to_le_bytes());
    entry.extend_from_slice(&0u32.to_le_bytes());
    entry.extend_from_slice(&0u32.to_le_bytes());
    entry.extend_from_slice(&(0x2011u64).to_le_bytes()); // LZ4 | Linux | 64-bit
    entry.extend_from_slice(&0u64.to_le_bytes());
    entry.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    assert_eq!(entry.len(), 64);
    entry.extend_from_slice(&payload);
    let mut c = Vec::new();
    c.extend_from_slice(&0xBA55_ED50u32.to_le_bytes());
    c.extend_from_slice(&1u16.to_le_bytes());
    c.extend_from_slice(&16u16.to_le_bytes());
    c.extend_from_slice(&(entry.len() as u64).to_le_bytes());
    c.extend_from_slice(&entry);
    let (back, _) = FatBinary::parse(&c, "lz4").unwrap();
    assert_eq!(back.entries[0].compression, Compression::Lz4);
    assert_eq!(&back.entries[0].data, cubin);
    // A wrong uncompressed size or a cut payload is an error naming the entry, not a panic.
    let mut bad = c.clone();
    bad[16 + 56] ^= 1;
    assert!(FatBinary::parse(&bad, "lz4")
        .unwrap_err()
        .to_string()
        .contains("sm_86"));
    for cut in [8, 20, 40, c.len() - 3] {
        assert!(FatBinary::parse(&c[..cut], "cut").is_err());
    }
}

#[test]
fn programs_of_the_suite_link_the_shared_runtime_and_carry_three_architectures() {
    let bin = root().join("workloads/programs/bin");
    for name in ["bfs", "scan", "printf"] {
        let bytes = std::fs::read(bin.join(name)).unwrap();
        let h = inspect(&bytes, name).unwrap();
        assert_eq!(h.runtime, RuntimeLink::Shared("libcudart.so.13".into()), "{name}");
        let archs: Vec<u32> = h.fatbins.iter().flat_map(|f| f.cubin_archs()).collect();
        for a in [75, 86, 90] {
            assert!(archs.contains(&a), "{name}: {archs:?}");
        }
    }
    let st = std::fs::read(bin.join("refuse_static_rt")).unwrap();
    assert_eq!(inspect(&st, "static").unwrap().runtime, RuntimeLink::Static);
    let ptx = std::fs::read(bin.join("refuse_ptxonly")).unwrap();
    let h = inspect(&ptx, "ptxonly").unwrap();
    assert!(h
        .fatbins
        .iter()
        .any(|f| f.ptx_archs() == vec![86] && f.cubin_archs().is_empty()));
}

#[test]
fn cubin_attributes_of_a_program_kernel() {
    // printf's `work` kernel at sm_86: its stack frame (printf's argument buffer), the
    // external functions vprintf and __assertfail, relocated in constant bank 4.
    let bytes = std::fs::read(root().join("workloads/programs/bin/printf")).unwrap();
    let h = inspect(&bytes, "printf").unwrap();
    let e = h
        .fatbins
        .iter()
        .flat_map(|f| &f.entries)
        .find(|e| e.arch == 86 && e.kind == EntryKind::Cubin && e.data.len() > 4096)
        .unwrap();
    let c = Cubin::parse(e.data.clone(), "printf sm_86").unwrap();
    let work = c.kernels.iter().find(|k| k.name.contains("work")).unwrap();
    assert!(work.frame_size > 0 && work.regs > 0, "{work:?}");
    assert!(c.externs.iter().any(|x| x == "vprintf"), "{:?}", c.externs);
    assert!(c
        .relocs
        .iter()
        .any(|r| r.section == ".nv.constant4" && r.symbol == "vprintf"));
}

/// A disassembler that never finishes is stopped at the deadline (the cubin fuzzer found a
/// damaged cubin on which nvdisasm spins forever; `sassim exec --max-wall 9` then ran past
/// 10 s and left the tool spinning after it was killed).
#[test]
fn a_disassembler_that_hangs_is_stopped_at_the_deadline() {
    use std::os::unix::fs::PermissionsExt;
    let bytes = std::fs::read(root().join("fixtures/cuda/scale_zstd.fatbin")).unwrap();
    let (fb, _) = FatBinary::parse(&bytes, "scale_zstd.fatbin").unwrap();
    let e = fb.entries.iter().find(|e| e.kind == EntryKind::Cubin).unwrap();
    let c = Cubin::parse(e.data.clone(), "scale").unwrap();
    let dir = scratch("hang-tool");
    std::fs::create_dir_all(&dir).unwrap();
    let tool = dir.join("nvdisasm");
    std::fs::write(&tool, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let src = sassim_cubin::SassSource {
        nvdisasm: Some(tool.clone()),
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_millis(500)),
        ..Default::default()
    };
    let t0 = std::time::Instant::now();
    let err = src.listing_text(&c).unwrap_err().to_string();
    let took = t0.elapsed();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    assert!(err.contains("did not finish within 0.5 s"), "{err}");
}

//! Per-architecture SASS opcode tables (`presets/opcodes/sm_*.toml`).
//!
//! A table maps an opcode *base name* (`IMAD`, `LDG`...) to the unit that
//! executes it, whether its latency is fixed (covered by stall counters) or
//! variable (dependence counters), its latency and its issue-latch occupancy.
//! Entries may omit `latency` / `issue_cycles`: they are then taken from the
//! unit in `[units.<unit>]` of the GPU config, so `units.fp32.latency=5`
//! changes every FP32 opcode that does not pin its own latency.
//! Modifier overrides (`[ops.IMAD.modifiers.WIDE]`) patch single fields.
//! Unknown opcodes resolve to the `[default]` class with `known = false`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, Result};
use crate::schema::{TensorLatency, UnitConfig, UnitsConfig};

/// Embedded opcode tables: (name, TOML text).
pub const EMBEDDED_OPCODE_TABLES: &[(&str, &str)] = &[
    ("sm_75", include_str!("../../../presets/opcodes/sm_75.toml")),
    ("sm_86", include_str!("../../../presets/opcodes/sm_86.toml")),
    ("sm_80", include_str!("../../../presets/opcodes/sm_80.toml")),
    ("sm_89", include_str!("../../../presets/opcodes/sm_89.toml")),
    ("sm_90", include_str!("../../../presets/opcodes/sm_90.toml")),
    ("sm_100", include_str!("../../../presets/opcodes/sm_100.toml")),
    ("sm_120", include_str!("../../../presets/opcodes/sm_120.toml")),
];

/// Execution resource an opcode uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    Fp32,
    Int,
    Fp16,
    Sfu,
    Fp64,
    Tensor,
    Uniform,
    Branch,
    Misc,
    /// The memory pipeline (`[mem_pipeline]`).
    Mem,
}

/// Fixed latency (stall counters, result queue, bypass) or variable latency
/// (dependence counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyKind {
    Fixed,
    Variable,
}

/// What a memory-pipeline opcode does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemOp {
    GlobalLoad,
    GlobalStore,
    LocalLoad,
    LocalStore,
    GenericLoad,
    GenericStore,
    SharedLoad,
    SharedStore,
    ConstLoad,
    Ldgsts,
    GlobalAtomic,
    GlobalReduction,
    SharedAtomic,
    Ldsm,
    Stsm,
    Texture,
    Surface,
    /// TMA / bulk copies (Hopper+).
    Bulk,
    /// Memory fences and barriers on memory (MEMBAR, ERRBAR, FENCE).
    Fence,
    /// Thread-block barriers (BAR, warp-group barriers).
    Barrier,
    /// Cache control, special-register reads through the memory unit (S2R, SHFL...).
    Misc,
}

/// A (possibly partial) opcode description as written in the TOML files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpcodeSpec {
    pub unit: Option<UnitKind>,
    pub kind: Option<LatencyKind>,
    /// Dependent-issue latency (fixed) or nominal minimum latency (variable).
    pub latency: Option<u32>,
    /// Cycles the unit's input latch (and issue port) stays busy.
    pub issue_cycles: Option<u32>,
    /// Cycles after issue at which the instruction reads (part of) its sources, later than
    /// other fixed-latency consumers (0): a producer's result may arrive this much later.
    pub read_delay: Option<u32>,
    pub mem: Option<MemOp>,
    pub source: Option<String>,
    /// Per-modifier patches, e.g. `[ops.IMAD.modifiers.WIDE]`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub modifiers: BTreeMap<String, OpcodeSpec>,
}

/// One opcode table file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpcodeFile {
    pub arch: String,
    pub description: String,
    /// Name of a table whose entries are copied first (child entries replace whole parent entries).
    pub inherits: Option<String>,
    pub default: Option<OpcodeSpec>,
    #[serde(default)]
    pub ops: BTreeMap<String, OpcodeSpec>,
}

/// Fully resolved timing class of an opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpcodeInfo {
    pub unit: UnitKind,
    pub kind: LatencyKind,
    pub latency: u32,
    pub issue_cycles: u32,
    /// Minimum cycles between two instructions entering the unit.
    pub initiation_interval: u32,
    /// See [`OpcodeSpec::read_delay`].
    pub read_delay: u32,
    pub mem: Option<MemOp>,
}

/// Result of [`OpcodeTable::lookup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup<'a> {
    pub info: OpcodeInfo,
    /// False when the opcode is not in the table and `info` is the default class.
    pub known: bool,
    /// Where the numbers come from (the `source` string of the entry or patch).
    pub source: &'a str,
}

#[derive(Debug, Clone, Copy)]
struct UnitDefault {
    latency: u32,
    issue_cycles: u32,
    initiation_interval: u32,
}

/// A resolved opcode table.
#[derive(Debug, Clone)]
pub struct OpcodeTable {
    arch: String,
    description: String,
    entries: BTreeMap<String, OpcodeSpec>,
    default: OpcodeSpec,
    units: BTreeMap<UnitKind, UnitDefault>,
    tensor_table: Vec<TensorLatency>,
}

fn known_tables() -> String {
    EMBEDDED_OPCODE_TABLES
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parse an embedded table by name, following `inherits`.
pub fn load_opcode_file(name: &str) -> Result<OpcodeFile> {
    load_opcode_file_depth(name, 0)
}

fn load_opcode_file_depth(name: &str, depth: usize) -> Result<OpcodeFile> {
    // The embedded tables are parsed once per process.
    static PARSED: OnceLock<Mutex<HashMap<String, OpcodeFile>>> = OnceLock::new();
    let key = name.to_ascii_lowercase();
    let parsed = PARSED.get_or_init(Default::default);
    if let Some(f) = parsed.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(f);
    }
    let file = parse_opcode_file(&key, name, depth)?;
    if let Ok(mut m) = parsed.lock() {
        m.insert(key, file.clone());
    }
    Ok(file)
}

fn parse_opcode_file(key: &str, name: &str, depth: usize) -> Result<OpcodeFile> {
    let text = EMBEDDED_OPCODE_TABLES
        .iter()
        .find(|(n, _)| *n == key)
        .map(|(_, t)| *t)
        .ok_or_else(|| ConfigError::UnknownOpcodeTable {
            name: name.to_string(),
            known: known_tables(),
        })?;
    let origin = format!("presets/opcodes/{key}.toml");
    let mut file: OpcodeFile = toml::from_str(text).map_err(|e| ConfigError::Parse {
        origin: origin.clone(),
        message: e.to_string(),
    })?;
    if let Some(parent) = file.inherits.clone() {
        if depth > 8 {
            return Err(ConfigError::Inherits {
                origin,
                reason: "inheritance chain deeper than 8".into(),
            });
        }
        let base = load_opcode_file_depth(&parent, depth + 1)?;
        let mut ops = base.ops;
        ops.extend(std::mem::take(&mut file.ops));
        file.ops = ops;
        if file.default.is_none() {
            file.default = base.default;
        }
    }
    if file.default.is_none() {
        return Err(ConfigError::Parse {
            origin,
            message: "missing [default] opcode class".into(),
        });
    }
    Ok(file)
}

impl OpcodeTable {
    /// Build the table `name` resolved against `units`.
    pub fn for_arch(name: &str, units: &UnitsConfig, warp_size: u32) -> Result<Self> {
        let file = load_opcode_file(name)?;
        Self::from_file(file, units, warp_size)
    }

    /// Resolve a parsed file against `units`.
    pub fn from_file(file: OpcodeFile, units: &UnitsConfig, warp_size: u32) -> Result<Self> {
        let ud = |u: &UnitConfig| UnitDefault {
            latency: u.latency,
            issue_cycles: warp_size.div_ceil(u.lanes.max(1)),
            initiation_interval: u.initiation_interval,
        };
        let mut map = BTreeMap::new();
        map.insert(UnitKind::Fp32, ud(&units.fp32));
        map.insert(UnitKind::Int, ud(&units.int));
        map.insert(UnitKind::Fp16, ud(&units.fp16));
        map.insert(UnitKind::Sfu, ud(&units.sfu));
        map.insert(UnitKind::Fp64, ud(&units.fp64));
        map.insert(
            UnitKind::Tensor,
            UnitDefault {
                latency: units.tensor.latency,
                issue_cycles: warp_size.div_ceil(units.tensor.lanes.max(1)),
                initiation_interval: units.tensor.initiation_interval,
            },
        );
        map.insert(UnitKind::Uniform, ud(&units.uniform));
        map.insert(UnitKind::Branch, ud(&units.branch));
        map.insert(UnitKind::Misc, ud(&units.misc));
        map.insert(
            UnitKind::Mem,
            UnitDefault {
                latency: 1,
                issue_cycles: 1,
                initiation_interval: 1,
            },
        );
        let origin = format!("presets/opcodes/{}.toml", file.arch);
        let default = file.default.unwrap_or_default();
        let check = |name: &str, s: &OpcodeSpec| -> Result<()> {
            let miss = |what: &str| ConfigError::Parse {
                origin: origin.clone(),
                message: format!("opcode `{name}` lacks `{what}`"),
            };
            if s.unit.is_none() {
                return Err(miss("unit"));
            }
            if s.kind.is_none() {
                return Err(miss("kind"));
            }
            if s.source.is_none() {
                return Err(miss("source"));
            }
            Ok(())
        };
        check("[default]", &default)?;
        for (name, spec) in &file.ops {
            check(name, spec)?;
        }
        Ok(Self {
            arch: file.arch,
            description: file.description,
            entries: file.ops,
            default,
            units: map,
            tensor_table: units.tensor.latency_table.clone(),
        })
    }

    /// Replace the class of unknown opcodes (`issue.unknown_opcode_*`): `None` keeps the
    /// table's `[default]` value of that field.
    pub fn override_default(
        &mut self,
        unit: Option<UnitKind>,
        kind: Option<LatencyKind>,
        latency: Option<u32>,
    ) {
        if let Some(u) = unit {
            self.default.unit = Some(u);
            // A unit change without an explicit latency takes the new unit's latency.
            if latency.is_none() {
                self.default.latency = None;
                self.default.issue_cycles = None;
            }
        }
        if let Some(k) = kind {
            self.default.kind = Some(k);
        }
        if let Some(l) = latency {
            self.default.latency = Some(l);
        }
        if unit.is_some() || kind.is_some() || latency.is_some() {
            self.default.source = Some("issue.unknown_opcode_* (preset or --set)".into());
        }
    }

    /// Architecture name of the table.
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// Description of the table.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// All opcode base names in the table.
    pub fn opcodes(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Whether `base` is in the table.
    pub fn contains(&self, base: &str) -> bool {
        self.entries.contains_key(&base.to_ascii_uppercase())
    }

    /// Look up `base` (e.g. `IMAD`) with its modifiers (e.g. `["WIDE", "U32"]`).
    /// Modifier patches are applied in the order the modifiers are given.
    /// Never fails: unknown opcodes get the `[default]` class with `known = false`.
    pub fn lookup<'a>(&'a self, base: &str, modifiers: &[&str]) -> Lookup<'a> {
        let upper;
        let key = if base.bytes().any(|b| b.is_ascii_lowercase()) {
            upper = base.to_ascii_uppercase();
            upper.as_str()
        } else {
            base
        };
        let (spec, known) = match self.entries.get(key) {
            Some(s) => (s, true),
            None => (&self.default, false),
        };
        let mut unit = spec.unit.unwrap_or(UnitKind::Misc);
        let mut kind = spec.kind.unwrap_or(LatencyKind::Fixed);
        let mut latency = spec.latency;
        let mut issue = spec.issue_cycles;
        let mut read_delay = spec.read_delay;
        let mut mem = spec.mem;
        let mut source: &str = spec.source.as_deref().unwrap_or("");
        for m in modifiers {
            if let Some(p) = spec
                .modifiers
                .get(*m)
                .or_else(|| spec.modifiers.get(&m.to_ascii_uppercase()))
            {
                if let Some(u) = p.unit {
                    unit = u;
                    // A unit change without an explicit latency takes the new unit's defaults.
                    if p.latency.is_none() {
                        latency = None;
                    }
                    if p.issue_cycles.is_none() {
                        issue = None;
                    }
                }
                if let Some(k) = p.kind {
                    kind = k;
                }
                if p.latency.is_some() {
                    latency = p.latency;
                }
                if p.issue_cycles.is_some() {
                    issue = p.issue_cycles;
                }
                if p.read_delay.is_some() {
                    read_delay = p.read_delay;
                }
                if p.mem.is_some() {
                    mem = p.mem;
                }
                if let Some(s) = &p.source {
                    source = s;
                }
            }
        }
        let d = self.units[&unit];
        let mut ii = d.initiation_interval;
        if latency.is_none() && unit == UnitKind::Tensor {
            if let Some(row) = self.tensor_row(key, modifiers) {
                latency = Some(row.latency);
                ii = row.initiation_interval;
                if let (Some(rate), Some(macs)) = (row.macs_per_cycle, warpgroup_macs_per_warp(modifiers)) {
                    ii = ii.max(macs.div_ceil(u64::from(rate.max(1))).min(u64::from(u32::MAX)) as u32);
                }
            }
        }
        let issue_cycles = issue.unwrap_or(d.issue_cycles);
        Lookup {
            info: OpcodeInfo {
                unit,
                kind,
                latency: latency.unwrap_or(d.latency),
                issue_cycles,
                initiation_interval: ii.max(issue_cycles),
                read_delay: read_delay.unwrap_or(0),
                mem,
            },
            known,
            source,
        }
    }

    /// First tensor-latency row matching opcode, shape, accumulator type and sparsity (`.SP`).
    fn tensor_row(&self, base: &str, modifiers: &[&str]) -> Option<&TensorLatency> {
        let has = |want: &str| want == "*" || modifiers.iter().any(|m| m.eq_ignore_ascii_case(want));
        let sparse = modifiers.iter().any(|m| m.eq_ignore_ascii_case("SP"));
        self.tensor_table.iter().find(|r| {
            r.opcode.eq_ignore_ascii_case(base) && r.sparse == sparse && has(&r.shape) && has(&r.acc_type)
        })
    }
}

/// One warp's share of a warpgroup MMA (`HGMMA.64x128x16.F32`: shape modifier `MxNxK`):
/// the four warps of the warpgroup each compute M / 4 rows, `(M / 4) · N · K` MACs.
fn warpgroup_macs_per_warp(modifiers: &[&str]) -> Option<u64> {
    modifiers.iter().find_map(|m| {
        let mut it = m.split(['x', 'X']).map(|d| d.parse::<u64>().ok());
        let (m_, n, k) = (it.next()??, it.next()??, it.next()??);
        (it.next().is_none() && m_ > 0).then_some((m_ / 4).max(1) * n * k)
    })
}

//! The experiment file (`experiments/*.toml`, `docs/experiments.md`): GPU presets, `--set`
//! overrides (named configurations and/or swept parameters, cartesian or zipped) and inputs.
//! Every table rejects unknown keys; errors name the file and the key or entry at fault.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Most configurations or runs one experiment may expand to.
pub const MAX_RUNS: usize = 100_000;
/// Longest list of values or entries accepted anywhere in the file.
pub const MAX_LIST: usize = 10_000;

/// The experiment file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    /// Name of the experiment in the database (letters, digits, `-`, `_`, `.`).
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// GPU presets (names, aliases or TOML files relative to the experiment file).
    #[serde(default = "default_gpus")]
    pub gpus: Vec<String>,
    /// Overrides applied to every configuration (`key=value`, as `sassim run --set`).
    #[serde(default)]
    pub set: Vec<String>,
    /// Named configurations: each adds its overrides to `set`.
    #[serde(default, rename = "config")]
    pub configs: Vec<ConfigSpec>,
    /// Swept parameters, combined with every named configuration.
    pub sweep: Option<SweepSpec>,
    /// Built-in workloads by name (shorthand for `[[input]] workload = ...`).
    #[serde(default)]
    pub workloads: Vec<String>,
    /// Inputs of other kinds (launch specs, trace directories, CUDA programs).
    #[serde(default, rename = "input")]
    pub inputs: Vec<InputSpec>,
    /// Options of every run.
    #[serde(default)]
    pub run: RunSpec,
    /// Configuration that `sassim results compare` uses as the base by default.
    pub baseline: Option<String>,
}

fn default_gpus() -> Vec<String> {
    vec![sassim_config::DEFAULT_PRESET.to_string()]
}

/// `[[config]]`: a named set of overrides.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigSpec {
    pub name: String,
    #[serde(default)]
    pub set: Vec<String>,
}

/// How swept parameters combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Combine {
    /// Every combination of the parameters' values.
    #[default]
    Cartesian,
    /// The i-th values of all parameters together (lists of equal length).
    Zip,
}

/// `[sweep]`: parameters and how they combine.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    #[serde(default)]
    pub mode: Combine,
    #[serde(rename = "param")]
    pub params: Vec<ParamSpec>,
}

/// `[[sweep.param]]`: one preset key and its values.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    pub key: String,
    pub values: Vec<toml::Value>,
}

/// `[[input]]`: exactly one of `workload`, `spec`, `trace`, `program`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// Label in the database (default: the workload name, spec or program file stem, or the
    /// trace directory's name).
    pub name: Option<String>,
    /// A built-in workload (`sassim run NAME`).
    pub workload: Option<String>,
    /// A launch spec (`sassim run SPEC.toml`), relative to the experiment file.
    pub spec: Option<String>,
    /// An Accel-Sim trace: its kernelslist.g or the directory holding it.
    pub trace: Option<String>,
    /// SASS listings: `--listing` of a launch spec (at most one) or of a trace.
    #[serde(default)]
    pub listings: Vec<String>,
    /// A CUDA program run by `sassim exec -- PATH ARGS`.
    pub program: Option<ProgramSpec>,
}

/// `program = { path = "...", args = [...] }`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ProgramSpec {
    pub path: String,
    #[serde(default)]
    pub args: Vec<String>,
}

/// `[run]`: options of every run.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Stop a kernel after this many cycles (0 = no limit): `sassim run --max-cycles`.
    #[serde(default)]
    pub max_cycles: u64,
    /// `sassim run --deadlock-cycles` (default: sassim's).
    pub deadlock_cycles: Option<u64>,
    /// Control-flow manager (`hanoi` or `simt`; default: sassim's).
    pub cf: Option<String>,
    /// Kill a run after this many seconds and record it as failed (0 = no limit). Not part of
    /// a run's identity.
    #[serde(default)]
    pub timeout_seconds: f64,
}

/// The kind of an input, with its resolved (absolute) paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum InputKind {
    Workload {
        name: String,
    },
    Spec {
        path: PathBuf,
        listing: Option<PathBuf>,
    },
    Trace {
        kernelslist: PathBuf,
        listings: Vec<PathBuf>,
    },
    Program {
        path: PathBuf,
        args: Vec<String>,
    },
}

impl InputKind {
    pub fn kind_name(&self) -> &'static str {
        match self {
            InputKind::Workload { .. } => "workload",
            InputKind::Spec { .. } => "spec",
            InputKind::Trace { .. } => "trace",
            InputKind::Program { .. } => "program",
        }
    }

    /// Where the input is, for people: the workload name or the main path.
    pub fn location(&self) -> String {
        match self {
            InputKind::Workload { name } => format!("builtin:{name}"),
            InputKind::Spec { path, .. } => path.display().to_string(),
            InputKind::Trace { kernelslist, .. } => kernelslist.display().to_string(),
            InputKind::Program { path, args } => {
                let mut s = path.display().to_string();
                for a in args {
                    s.push(' ');
                    s.push_str(a);
                }
                s
            }
        }
    }
}

/// One configuration of the expanded experiment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Configuration {
    /// Unique within the experiment, e.g. `1R-noRFC` or `stream_buffer_entries=4`.
    pub label: String,
    pub gpu: String,
    /// All overrides in order (`set`, then the configuration's, then the swept values).
    pub overrides: Vec<String>,
}

/// One input of the expanded experiment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    pub label: String,
    #[serde(flatten)]
    pub kind: InputKind,
}

/// An experiment file parsed, validated and expanded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Experiment {
    pub name: String,
    pub description: String,
    /// The file it came from (absolute) and its text.
    pub file: PathBuf,
    pub text: String,
    pub configs: Vec<Configuration>,
    pub inputs: Vec<Input>,
    pub run: RunSpec,
    pub baseline: Option<String>,
}

fn invalid(file: &Path, msg: impl Into<String>) -> Error {
    Error::Experiment {
        file: file.to_path_buf(),
        msg: msg.into(),
    }
}

fn check_list<T>(file: &Path, what: &str, v: &[T]) -> Result<()> {
    if v.len() > MAX_LIST {
        return Err(invalid(
            file,
            format!("`{what}` has {} entries, at most {MAX_LIST}", v.len()),
        ));
    }
    Ok(())
}

fn check_label(file: &Path, what: &str, s: &str) -> Result<()> {
    let ok = !s.is_empty()
        && s.len() <= 200
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.=,+:@".contains(c));
    if !ok {
        return Err(invalid(
            file,
            format!("{what} `{s}`: use 1 to 200 letters, digits or - _ . = , + : @"),
        ));
    }
    Ok(())
}

/// The text of an override value: strings bare (as `--set issue.scheduler=gto`), others as TOML.
fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Experiment {
    /// Reads, validates and expands an experiment file. Every configuration is loaded once
    /// (`GpuConfig::load`), so an unknown key or out-of-range value is reported here, naming
    /// the configuration.
    pub fn load(path: &Path) -> Result<Experiment> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        let file = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        Self::parse(&text, &file)
    }

    /// Parses experiment text; relative paths are taken from `file`'s directory.
    pub fn parse(text: &str, file: &Path) -> Result<Experiment> {
        let f: ExperimentFile =
            toml::from_str(text).map_err(|e| invalid(file, e.to_string().trim_end().to_string()))?;
        let base = file.parent().unwrap_or(Path::new("."));
        check_label(file, "experiment name", &f.name)?;
        check_list(file, "gpus", &f.gpus)?;
        check_list(file, "set", &f.set)?;
        check_list(file, "config", &f.configs)?;
        check_list(file, "workloads", &f.workloads)?;
        check_list(file, "input", &f.inputs)?;
        if f.gpus.is_empty() {
            return Err(invalid(file, "`gpus` is empty"));
        }
        if !(f.run.timeout_seconds.is_finite() && (0.0..=1e7).contains(&f.run.timeout_seconds)) {
            return Err(invalid(file, "`run.timeout_seconds` must be between 0 and 1e7"));
        }
        if let Some(cf) = &f.run.cf {
            if cf != "hanoi" && cf != "simt" {
                return Err(invalid(file, format!("`run.cf` = `{cf}`: use hanoi or simt")));
            }
        }
        // Swept combinations: (label part, overrides).
        let mut combos: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
        if let Some(sw) = &f.sweep {
            check_list(file, "sweep.param", &sw.params)?;
            if sw.params.is_empty() {
                return Err(invalid(file, "`[sweep]` has no `[[sweep.param]]`"));
            }
            for p in &sw.params {
                check_list(file, &format!("values of {}", p.key), &p.values)?;
                if p.values.is_empty() {
                    return Err(invalid(
                        file,
                        format!("sweep parameter `{}` has no values", p.key),
                    ));
                }
                if p.key.is_empty() || p.key.contains('=') {
                    return Err(invalid(
                        file,
                        format!("sweep parameter key `{}` is not a preset key", p.key),
                    ));
                }
            }
            let short = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
            combos = match sw.mode {
                Combine::Zip => {
                    let n = sw.params[0].values.len();
                    if let Some(p) = sw.params.iter().find(|p| p.values.len() != n) {
                        return Err(invalid(
                            file,
                            format!(
                                "zip sweep: `{}` has {} values, `{}` has {n}",
                                p.key,
                                p.values.len(),
                                sw.params[0].key
                            ),
                        ));
                    }
                    (0..n)
                        .map(|i| {
                            let parts: Vec<(String, String)> = sw
                                .params
                                .iter()
                                .map(|p| (p.key.clone(), value_text(&p.values[i])))
                                .collect();
                            (
                                parts
                                    .iter()
                                    .map(|(k, v)| format!("{}={v}", short(k)))
                                    .collect::<Vec<_>>()
                                    .join(","),
                                parts.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                            )
                        })
                        .collect()
                }
                Combine::Cartesian => {
                    let mut acc: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
                    for p in &sw.params {
                        if acc.len().saturating_mul(p.values.len()) > MAX_RUNS {
                            return Err(invalid(
                                file,
                                format!("the sweep has more than {MAX_RUNS} combinations"),
                            ));
                        }
                        let mut next = Vec::with_capacity(acc.len() * p.values.len());
                        for (l, o) in &acc {
                            for v in &p.values {
                                let vt = value_text(v);
                                let part = format!("{}={vt}", short(&p.key));
                                let label = if l.is_empty() { part } else { format!("{l},{part}") };
                                let mut o = o.clone();
                                o.push(format!("{}={vt}", p.key));
                                next.push((label, o));
                            }
                        }
                        acc = next;
                    }
                    acc
                }
            };
        }
        let named: Vec<(String, Vec<String>)> = if f.configs.is_empty() {
            vec![(String::new(), Vec::new())]
        } else {
            f.configs
                .iter()
                .map(|c| (c.name.clone(), c.set.clone()))
                .collect()
        };
        for c in &f.configs {
            check_label(file, "configuration name", &c.name)?;
            check_list(file, &format!("set of {}", c.name), &c.set)?;
        }
        let n_configs = f
            .gpus
            .len()
            .saturating_mul(named.len())
            .saturating_mul(combos.len());
        if n_configs > MAX_RUNS {
            return Err(invalid(
                file,
                format!("{n_configs} configurations, at most {MAX_RUNS}"),
            ));
        }
        let mut configs = Vec::with_capacity(n_configs);
        for g in &f.gpus {
            let gpu = resolve_gpu(base, g);
            for (cname, cset) in &named {
                for (slabel, sset) in &combos {
                    let mut parts = Vec::new();
                    if f.gpus.len() > 1 {
                        parts.push(g.clone());
                    }
                    if !cname.is_empty() {
                        parts.push(cname.clone());
                    }
                    if !slabel.is_empty() {
                        parts.push(slabel.clone());
                    }
                    let label = if parts.is_empty() {
                        g.clone()
                    } else {
                        parts.join("/")
                    };
                    let overrides: Vec<String> = f.set.iter().chain(cset).chain(sset).cloned().collect();
                    configs.push(Configuration {
                        label,
                        gpu: gpu.clone(),
                        overrides,
                    });
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        for c in &configs {
            if !seen.insert(c.label.clone()) {
                return Err(invalid(
                    file,
                    format!("two configurations are labelled `{}`", c.label),
                ));
            }
            sassim_config::GpuConfig::load(&c.gpu, &c.overrides)
                .map_err(|e| invalid(file, format!("configuration `{}`: {e}", c.label)))?;
        }
        if let Some(b) = &f.baseline {
            if !configs.iter().any(|c| &c.label == b) {
                return Err(invalid(
                    file,
                    format!("baseline `{b}` is not one of the configurations"),
                ));
            }
        }
        let mut inputs = Vec::new();
        for w in &f.workloads {
            inputs.push(InputSpec {
                workload: Some(w.clone()),
                ..Default::default()
            });
        }
        inputs.extend(f.inputs.iter().cloned());
        let mut resolved = Vec::with_capacity(inputs.len());
        for (i, s) in inputs.iter().enumerate() {
            resolved.push(resolve_input(file, base, i, s)?);
        }
        if resolved.is_empty() {
            return Err(invalid(
                file,
                "no inputs: give `workloads = [...]` or `[[input]]` tables",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for i in &resolved {
            if !seen.insert(i.label.clone()) {
                return Err(invalid(
                    file,
                    format!("two inputs are labelled `{}`; give one a `name`", i.label),
                ));
            }
        }
        let runs = configs.len().saturating_mul(resolved.len());
        if runs > MAX_RUNS {
            return Err(invalid(file, format!("{runs} runs, at most {MAX_RUNS}")));
        }
        Ok(Experiment {
            name: f.name,
            description: f.description,
            file: file.to_path_buf(),
            text: text.to_string(),
            configs,
            inputs: resolved,
            run: f.run,
            baseline: f.baseline,
        })
    }

    /// Number of runs: configurations x inputs.
    pub fn run_count(&self) -> usize {
        self.configs.len() * self.inputs.len()
    }
}

/// A GPU given as a path (ends in .toml or has a `/`) is made absolute; names stay names.
fn resolve_gpu(base: &Path, g: &str) -> String {
    if g.ends_with(".toml") || g.contains('/') {
        let p = base.join(g);
        p.canonicalize().unwrap_or(p).display().to_string()
    } else {
        g.to_string()
    }
}

fn abs(base: &Path, p: &str) -> PathBuf {
    let p = base.join(p);
    p.canonicalize().unwrap_or(p)
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn resolve_input(file: &Path, base: &Path, i: usize, s: &InputSpec) -> Result<Input> {
    let given = [
        s.workload.is_some(),
        s.spec.is_some(),
        s.trace.is_some(),
        s.program.is_some(),
    ];
    let what = format!("input {}", i + 1);
    if given.iter().filter(|&&g| g).count() != 1 {
        return Err(invalid(
            file,
            format!("{what}: give exactly one of workload, spec, trace, program"),
        ));
    }
    check_list(file, "listings", &s.listings)?;
    let (label, kind) = if let Some(w) = &s.workload {
        if sassim_workload::builtin_named(w).is_none() {
            let names: Vec<_> = sassim_workload::builtin().iter().map(|b| b.name).collect();
            return Err(invalid(
                file,
                format!(
                    "{what}: unknown built-in workload `{w}` (known: {})",
                    names.join(", ")
                ),
            ));
        }
        if !s.listings.is_empty() {
            return Err(invalid(
                file,
                format!("{what}: a built-in workload takes no listings"),
            ));
        }
        (w.clone(), InputKind::Workload { name: w.clone() })
    } else if let Some(p) = &s.spec {
        let path = abs(base, p);
        if !path.is_file() {
            return Err(invalid(
                file,
                format!("{what}: launch spec {} does not exist", path.display()),
            ));
        }
        if s.listings.len() > 1 {
            return Err(invalid(
                file,
                format!("{what}: a launch spec takes at most one listing"),
            ));
        }
        let listing = s.listings.first().map(|l| abs(base, l));
        (stem(&path), InputKind::Spec { path, listing })
    } else if let Some(t) = &s.trace {
        let mut k = abs(base, t);
        if k.is_dir() {
            k = k.join("kernelslist.g");
        }
        if !k.is_file() {
            return Err(invalid(
                file,
                format!("{what}: trace list {} does not exist", k.display()),
            ));
        }
        let label = k
            .parent()
            .and_then(|d| d.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| stem(&k));
        let listings = s.listings.iter().map(|l| abs(base, l)).collect();
        (
            label,
            InputKind::Trace {
                kernelslist: k,
                listings,
            },
        )
    } else {
        let p = s.program.as_ref().expect("one kind given");
        check_list(file, "program args", &p.args)?;
        let path = abs(base, &p.path);
        if !path.is_file() {
            return Err(invalid(
                file,
                format!("{what}: program {} does not exist", path.display()),
            ));
        }
        if !s.listings.is_empty() {
            return Err(invalid(file, format!("{what}: a program takes no listings")));
        }
        (
            stem(&path),
            InputKind::Program {
                path,
                args: p.args.clone(),
            },
        )
    };
    for l in match &kind {
        InputKind::Spec { listing: Some(l), .. } => vec![l.clone()],
        InputKind::Trace { listings, .. } => listings.clone(),
        _ => vec![],
    } {
        if !l.is_file() {
            return Err(invalid(
                file,
                format!("{what}: listing {} does not exist", l.display()),
            ));
        }
    }
    let label = s.name.clone().unwrap_or(label);
    check_label(file, "input name", &label)?;
    Ok(Input { label, kind })
}

//! A sweep plan: the expanded experiment with the identity of every configuration, input and
//! run, and the command line that executes a run as a child `sassim` process.

use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::hash;
use crate::spec::{Experiment, InputKind};
use crate::Result;

/// One run of the plan: configuration x input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedRun {
    pub key: String,
    pub config: usize,
    pub input: usize,
}

/// The expanded experiment with identities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub experiment: Experiment,
    /// `sassim` executable the runs use, and its version (`hash::sim_version`).
    pub sassim: PathBuf,
    pub sim_version: String,
    /// `config_ids[i]` belongs to `experiment.configs[i]`, `input_ids[j]` to `experiment.inputs[j]`.
    pub config_ids: Vec<String>,
    pub input_ids: Vec<String>,
    /// Configuration-major order.
    pub runs: Vec<PlannedRun>,
}

impl Plan {
    /// Hashes every input and configuration and keys every run.
    pub fn new(experiment: Experiment, sassim: &Path) -> Result<Plan> {
        let sim_version = hash::sim_version(sassim)?;
        Self::with_version(experiment, sassim, sim_version)
    }

    /// As [`Plan::new`] with a given simulator version (tests).
    pub fn with_version(experiment: Experiment, sassim: &Path, sim_version: String) -> Result<Plan> {
        let config_ids = experiment
            .configs
            .iter()
            .map(hash::config_id)
            .collect::<Result<Vec<_>>>()?;
        let input_ids = experiment
            .inputs
            .iter()
            .map(|i| hash::input_id(i, experiment.file.parent().unwrap_or(Path::new("."))))
            .collect::<Result<Vec<_>>>()?;
        let file = &experiment.file;
        for (j, id) in config_ids.iter().enumerate() {
            if let Some(i) = config_ids[..j].iter().position(|x| x == id) {
                let (a, b) = (&experiment.configs[i].label, &experiment.configs[j].label);
                return Err(crate::Error::Experiment {
                    file: file.clone(),
                    msg: format!("configurations `{a}` and `{b}` are the same GPU with the same overrides"),
                });
            }
        }
        for (j, id) in input_ids.iter().enumerate() {
            if let Some(i) = input_ids[..j].iter().position(|x| x == id) {
                let (a, b) = (&experiment.inputs[i].label, &experiment.inputs[j].label);
                return Err(crate::Error::Experiment {
                    file: file.clone(),
                    msg: format!("inputs `{a}` and `{b}` have the same contents"),
                });
            }
        }
        let mut runs = Vec::with_capacity(experiment.run_count());
        for (c, cid) in config_ids.iter().enumerate() {
            for (i, iid) in input_ids.iter().enumerate() {
                runs.push(PlannedRun {
                    key: hash::run_key(&sim_version, cid, iid, &experiment.run),
                    config: c,
                    input: i,
                });
            }
        }
        Ok(Plan {
            experiment,
            sassim: sassim.to_path_buf(),
            sim_version,
            config_ids,
            input_ids,
            runs,
        })
    }

    /// Identity of the plan (its runs and the simulator), for task files.
    pub fn plan_id(&self) -> String {
        let keys: Vec<&str> = self.runs.iter().map(|r| r.key.as_str()).collect();
        hash::sha256_hex(keys.join(",").as_bytes())[..24].to_string()
    }

    /// `sassim` arguments that execute `run` and write its statistics to `json`.
    pub fn command(&self, run: &PlannedRun, json: &Path) -> Vec<OsString> {
        let c = &self.experiment.configs[run.config];
        let input = &self.experiment.inputs[run.input];
        let opts = &self.experiment.run;
        let mut a: Vec<OsString> = Vec::new();
        let gpu_args = |a: &mut Vec<OsString>| {
            a.push("--gpu".into());
            a.push(c.gpu.clone().into());
            for o in &c.overrides {
                a.push("--set".into());
                a.push(o.into());
            }
            a.push("--json".into());
            a.push(json.into());
        };
        let run_opts = |a: &mut Vec<OsString>| {
            a.push("--force".into());
            a.push("--jobs".into());
            a.push("1".into());
            if opts.max_cycles > 0 {
                a.push("--max-cycles".into());
                a.push(opts.max_cycles.to_string().into());
            }
            if let Some(d) = opts.deadlock_cycles {
                a.push("--deadlock-cycles".into());
                a.push(d.to_string().into());
            }
            if let Some(cf) = &opts.cf {
                a.push("--cf".into());
                a.push(cf.into());
            }
        };
        match &input.kind {
            InputKind::Workload { name } => {
                a.push("run".into());
                a.push(name.into());
                gpu_args(&mut a);
                run_opts(&mut a);
            }
            InputKind::Spec { path, listing } => {
                a.push("run".into());
                a.push(path.into());
                if let Some(l) = listing {
                    a.push("--listing".into());
                    a.push(l.into());
                }
                gpu_args(&mut a);
                run_opts(&mut a);
            }
            InputKind::Trace {
                kernelslist,
                listings,
            } => {
                a.push("run".into());
                a.push("--trace".into());
                a.push(kernelslist.into());
                for l in listings {
                    a.push("--listing".into());
                    a.push(l.into());
                }
                gpu_args(&mut a);
                run_opts(&mut a);
            }
            InputKind::Program { path, args } => {
                // `sassim exec -- PROGRAM ARGS` (same --gpu/--set/--json options as `run`).
                a.push("exec".into());
                gpu_args(&mut a);
                a.push("--force".into());
                a.push("--".into());
                a.push(path.into());
                a.extend(args.iter().map(OsString::from));
            }
        }
        a
    }
}

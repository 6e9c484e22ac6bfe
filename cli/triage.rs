//! `fabricdoctor triage FILE|DIR|-...`: read logs and pasted tool outputs, print ranked diagnoses.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use fabricdoctor_playbooks::triage::report::render_text;
use fabricdoctor_playbooks::{triage, Input, Playbook};

use crate::args::TriageArgs;
use crate::{exit, output};

/// Most input one run reads: logs of a few hundred ranks fit; a runaway directory does not.
const MAX_TOTAL_BYTES: u64 = 2 << 30;

pub fn run(args: TriageArgs) -> anyhow::Result<i32> {
    let playbooks = Playbook::load(args.playbook_dir.as_deref())?;
    let inputs = read_inputs(&args.inputs)?;
    let report = triage(&inputs, &playbooks);
    if args.json {
        output::emit(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        output::emit(&render_text(&report))?;
    }
    Ok(if report.has_diagnosis() { exit::FINDINGS } else { exit::SUCCESS })
}

/// Every file named, every file under a directory named (recursively, in name order), and stdin for
/// `-` or when nothing is named and stdin is not a terminal. Anything unreadable is an error naming it.
fn read_inputs(paths: &[PathBuf]) -> anyhow::Result<Vec<Input>> {
    let mut inputs = Vec::new();
    let mut total = 0u64;
    if paths.is_empty() {
        if std::io::stdin().is_terminal() {
            bail!("no input: name log files or directories, or pipe a log into `fabricdoctor triage`");
        }
        inputs.push(read_stdin()?);
        return Ok(inputs);
    }
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(read_stdin()?);
            continue;
        }
        collect(path, &mut inputs, &mut total)?;
    }
    Ok(inputs)
}

fn read_stdin() -> anyhow::Result<Input> {
    let mut bytes = Vec::new();
    std::io::stdin().lock().read_to_end(&mut bytes).context("failed to read standard input")?;
    Ok(Input::new("-", bytes))
}

fn collect(path: &Path, inputs: &mut Vec<Input>, total: &mut u64) -> anyhow::Result<()> {
    let metadata = std::fs::metadata(path).with_context(|| format!("failed to read {}", path.display()))?;
    if metadata.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("failed to read directory {}", path.display()))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .with_context(|| format!("failed to read directory {}", path.display()))?;
        entries.sort();
        for entry in entries {
            collect(&entry, inputs, total)?;
        }
        return Ok(());
    }
    *total += metadata.len();
    if *total > MAX_TOTAL_BYTES {
        bail!("inputs exceed {} GiB at {}: name fewer files", MAX_TOTAL_BYTES >> 30, path.display());
    }
    let bytes = std::fs::read(path).with_context(|| format!("failed to read {}", path.display()))?;
    inputs.push(Input::new(path.display().to_string(), bytes));
    Ok(())
}

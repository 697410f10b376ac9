//! The checks made before any work: every output location and flag (`check_flags`), and no output
//! that is one of the command's inputs (`check_not_overwriting_inputs`).

use super::files::{self, check_output, check_outputs_are_not_inputs, need};
use super::lock::{self, OutputLock};
use super::{train, Cli, Function, Res, WORDS};
use attnlab::train::RunSpec;
use std::path::Path;

/// Check every output location and flag before the device opens or any input is read, and take
/// the lock on the checkpoint a run writes (held until the returned value is dropped).
pub fn check_flags(cli: &Cli, spec: &RunSpec) -> Res<Option<OutputLock>> {
    if cli.f16 && cli.function != Function::Convert {
        return Err("--f16 is for convert only (it writes an f16 copy of a checkpoint)".into());
    }
    let fname = format!("{:?}", cli.function).to_lowercase();
    let mut lock = None;
    match cli.function {
        Function::Pretrain | Function::Finetune => {
            let path = need(&cli.writing_params_path, "writing_params_path", &fname)?;
            check_output(path, "--writing_params_path")?;
            let state = train::state_path(path);
            files::remove_stale_temps(&state);
            // The state, and the earlier run's state it may keep aside, are written too.
            let [previous, previous_2] = train::kept_paths(&state);
            for (p, what) in [
                (&state, "the training state"),
                (&previous, "an earlier run's kept training state"),
                (&previous_2, "an earlier run's kept training state"),
            ] {
                if p.is_dir() {
                    return Err(format!(
                        "{} is a folder, where {what} of --writing_params_path {} goes; move it \
                         away or choose another --writing_params_path",
                        p.display(),
                        path.display()
                    ));
                }
            }
            lock = take_lock(path)?;
        }
        Function::Convert => {
            need(&cli.reading_params_path, "reading_params_path", &fname)?;
            let path = need(&cli.writing_params_path, "writing_params_path", &fname)?;
            check_output(path, "--writing_params_path")?;
            lock = take_lock(path)?;
        }
        _ => {
            need(&cli.reading_params_path, "reading_params_path", &fname)?;
            if let Some(p) = &cli.outputs_path {
                check_output(p, "--outputs_path")?;
            }
        }
    }
    if cli.pretrain_corpus_path.is_some() {
        match cli.function {
            Function::Finetune => {
                need(&cli.finetune_corpus_path, "finetune_corpus_path", &fname)?;
            }
            Function::Evaluate | Function::Probe => {
                need(&cli.eval_corpus_path, "eval_corpus_path", &fname)?;
            }
            _ => {}
        }
    }
    check_not_overwriting_inputs(cli)?;
    spec.check(&WORDS).map_err(|e| e.to_string())?;
    if cli.max_questions == Some(0) {
        return Err("--max_questions must be at least 1".into());
    }
    Ok(lock)
}

/// The lock on the checkpoint file `path` names (through a link, the file it names); none for a
/// FIFO or a device, which hold nothing to lose.
fn take_lock(path: &Path) -> Res<Option<OutputLock>> {
    let (dest, direct) = files::destination(path);
    if direct {
        return Ok(None);
    }
    lock::take(&dest, "--writing_params_path").map(Some)
}

/// The command's input files, each with its flag.
fn input_paths(cli: &Cli) -> Vec<(&'static str, &Path)> {
    [
        (
            "the corpus (pretrain_corpus_path)",
            &cli.pretrain_corpus_path,
        ),
        ("--reading_params_path", &cli.reading_params_path),
        ("--finetune_corpus_path", &cli.finetune_corpus_path),
        ("--eval_corpus_path", &cli.eval_corpus_path),
        ("--resume", &cli.resume),
        ("--probe_corpus_path", &cli.probe_corpus_path),
    ]
    .into_iter()
    .filter_map(|(flag, p)| p.as_deref().map(|p| (flag, p)))
    .collect()
}

/// Refuse an output that is one of the inputs (same path, hard link or symlink): the run would
/// read it and then replace it. The training state beside the checkpoint may be the `--resume`
/// file: continuing a run replaces its state, as intended.
pub fn check_not_overwriting_inputs(cli: &Cli) -> Res<()> {
    let inputs = input_paths(cli);
    let mut outputs: Vec<(&str, &Path)> = vec![];
    if let Some(p) = &cli.writing_params_path {
        outputs.push(("--writing_params_path", p));
    }
    if let Some(p) = &cli.outputs_path {
        outputs.push(("--outputs_path", p));
    }
    check_outputs_are_not_inputs(&outputs, &inputs)?;
    if let (Function::Pretrain | Function::Finetune, Some(p)) =
        (cli.function, &cli.writing_params_path)
    {
        let state = train::state_path(p);
        let not_resume: Vec<_> = inputs
            .into_iter()
            .filter(|(f, _)| *f != "--resume")
            .collect();
        check_outputs_are_not_inputs(
            &[("the training state beside --writing_params_path", &state)],
            &not_resume,
        )?;
    }
    Ok(())
}

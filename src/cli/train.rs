//! `pretrain` and `finetune`: a library `Session` from the flags (fresh, from
//! --reading_params_path, or continued from --resume), run to its end behind a progress bar, with
//! the resumable state kept beside the checkpoint.

use super::files::{content_hash, need, read, same_file, write_atomic, write_atomic_pair, Input};
use super::model::{load, load_input};
use super::progress;
use super::{Cli, Res, WORDS};
use attnlab::data::{self, Vocab};
use attnlab::model::GptConfig;
use attnlab::train::{Begin, Hooks, Progress, RunKind, RunSpec, RunStart, Session, Trainer};
use attnlab::{Device, Error};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

/// What every training function shares once the device is open.
pub struct Run<'a> {
    pub cli: &'a Cli,
    pub dev: &'a Rc<Device>,
    pub spec: &'a RunSpec,
    /// The model the flags describe (a checkpoint read must match it).
    pub cfg: GptConfig,
    /// Built from the pretraining corpus, as run.py always does.
    pub vocab: Vocab,
}

impl Run<'_> {
    /// Pretrain on `text` (the corpus, named `name`) or finetune on `tsv`, then save.
    pub fn train(&self, text: &str, name: &str, tsv: Option<Input>) -> Res<()> {
        let (cli, dev, vocab) = (self.cli, self.dev, &self.vocab);
        let tsv = match (self.spec.kind, tsv) {
            (RunKind::Finetune, None) => {
                return Err("finetune needs --finetune_corpus_path PATH".into())
            }
            (_, tsv) => tsv,
        };
        let tc = self.spec.train_config(data::documents(text));
        let (batch, lr) = (tc.batch_size, tc.learning_rate);
        // Said after "resuming …": a rate other than the saved run's.
        let lr_note = std::cell::RefCell::new(None);
        let begin = |cfg: &GptConfig| -> Res<Begin> {
            if let Some(p) = &cli.resume {
                let input = read(p)?;
                *lr_note.borrow_mut() = check_resume_matches(&input, self.spec.kind, batch, lr)?;
                check_resume_pair(&input, cli.writing_params_path.as_deref())?;
                let model = load_input(cli, dev, &input, cfg, vocab).map_err(|e| {
                    format!(
                        "--resume: {e}\n(a damaged state cannot be continued: the run can start \
                         again from step 0 without --resume)"
                    )
                })?;
                return Ok(Begin::Resume {
                    model,
                    bytes: input.bytes,
                    what: input.name,
                });
            }
            match (&cli.reading_params_path, self.spec.kind) {
                (Some(p), RunKind::Finetune) => Ok(Begin::Model(load(cli, dev, p, cfg, vocab)?)),
                _ => Ok(Begin::Fresh),
            }
        };
        let start = RunStart {
            spec: self.spec,
            words: &WORDS,
            corpus: (text, name),
            questions: tsv
                .as_ref()
                .map_or((&[][..], ""), |t| (&t.bytes[..], &t.name[..])),
            vocab: vocab.clone(),
            base: None,
        };
        let session = start
            .start(dev, |cfg| begin(cfg).map_err(Error::Msg))
            .map_err(|e| e.to_string())?;
        let mut session = session;
        session.trainer.run_meta = run_meta(self.spec.kind, batch, lr);
        if let (Some(p), true) = (&cli.resume, session.done()) {
            return Err(format!(
                "--resume {} is at step {}, already the end of this run ({} steps): nothing to \
                 train; raise --max_epochs or --max_steps to go on",
                p.display(),
                session.steps(),
                session.total_steps()
            ));
        }
        if let Some(p) = &cli.resume {
            say!("resuming {} after step {}", p.display(), session.steps());
        }
        if let Some(note) = lr_note.take() {
            say!("{note}");
        }
        let probe = match (&cli.probe_corpus_path, self.spec.kind) {
            (Some(p), RunKind::Pretrain) => {
                let f = read(p)?;
                let mut rows = data::parse_tsv(&f.bytes, &f.name, data::TsvMode::RequireAnswers)
                    .map_err(|e| e.to_string())?;
                rows.truncate(PROBE_PEOPLE);
                let docs = data::CharCorruptionDataset::new(text, name, vocab, 0)
                    .map_err(|e| e.to_string())?;
                let per_epoch = attnlab::train::run::steps_per_epoch(docs.len(), batch);
                Some(RecallLog {
                    docs: docs.docs().to_vec(),
                    rows,
                    per_epoch: per_epoch.max(1) as u64,
                })
            }
            (Some(_), RunKind::Finetune) => {
                return Err(
                    "--probe_corpus_path is for pretrain runs (the probe asks masked spans)".into(),
                )
            }
            (None, _) => None,
        };
        train_and_save(cli, session, probe)
    }
}

/// People a pretraining run's recall is measured on (the first of --probe_corpus_path), and how
/// often (epochs).
const PROBE_PEOPLE: usize = 100;
const PROBE_EVERY: u64 = 10;

/// What a pretraining run needs to log the probe's recall every `PROBE_EVERY` epochs.
struct RecallLog {
    docs: Vec<Vec<u32>>,
    rows: Vec<data::Row>,
    per_epoch: u64,
}

impl RecallLog {
    /// At an epoch end that is a multiple of `PROBE_EVERY` (and the first), the recall line.
    fn line(&self, t: &Trainer, vocab: &Vocab) -> attnlab::Result<Option<String>> {
        let epoch = t.steps / self.per_epoch;
        if !t.steps.is_multiple_of(self.per_epoch)
            || (!epoch.is_multiple_of(PROBE_EVERY) && epoch != 1)
        {
            return Ok(None);
        }
        let r = pollster::block_on(attnlab::train::probe::probe(
            &t.model, &self.docs, vocab, &self.rows,
        ))?;
        Ok(Some(format!("epoch {epoch}: {}", r.line())))
    }
}

const RUN_KEY: &str = "attnlab.run";
const BATCH_KEY: &str = "attnlab.batch_size";
const LR_KEY: &str = "attnlab.learning_rate";
/// The checkpoint a state goes with (`files::content_hash`, or "none"): at the end of a run the
/// checkpoint saved with it; during a run the one at --writing_params_path when the run began.
const CHECKPOINT_KEY: &str = "attnlab.checkpoint";

fn kind_name(kind: RunKind) -> &'static str {
    match kind {
        RunKind::Pretrain => "pretrain",
        RunKind::Finetune => "finetune",
    }
}

/// What a training state records about its run, to be checked when it is resumed.
fn run_meta(kind: RunKind, batch: usize, lr: f64) -> Vec<(String, String)> {
    vec![
        (RUN_KEY.into(), kind_name(kind).into()),
        (BATCH_KEY.into(), batch.to_string()),
        (LR_KEY.into(), lr.to_string()),
    ]
}

/// Refuse to resume a state saved by another kind of run or with another batch size (a state
/// written before these were recorded is taken as it is); a note when this run's learning rate is
/// not the saved run's (allowed: lowering it is a way to go on).
fn check_resume_matches(
    input: &Input,
    kind: RunKind,
    batch: usize,
    lr: f64,
) -> Res<Option<String>> {
    let Ok(meta) = attnlab::model::checkpoint::metadata_of(&input.bytes, &input.name) else {
        return Ok(None); // the loader gives the message for a damaged file
    };
    let name = &input.name;
    if let Some(saved) = meta.get(RUN_KEY) {
        if saved != kind_name(kind) {
            return Err(format!(
                "--resume {name} is the state of a {} run, and this is a {}; continue it with \
                 the function that saved it ({}), or start from its model with \
                 --reading_params_path",
                saved.escape_debug(),
                kind_name(kind),
                saved.escape_debug()
            ));
        }
    }
    if let Some(saved) = meta.get(BATCH_KEY) {
        if !saved.parse::<usize>().is_ok_and(|b| b > 0) {
            return Err(format!(
                "--resume {name} is damaged: it records --batch_size {}, which no run has; it \
                 cannot be continued: start again without --resume",
                saved.escape_debug()
            ));
        }
        if *saved != batch.to_string() {
            return Err(format!(
                "--resume {name} was saved by a run with --batch_size {}, and this one has \
                 --batch_size {batch}; resume with --batch_size {} (the data order and the \
                 steps depend on it)",
                saved.escape_debug(),
                saved.escape_debug()
            ));
        }
    }
    let saved_lr = meta.get(LR_KEY).and_then(|v| v.parse::<f64>().ok());
    Ok(saved_lr.filter(|&saved| saved != lr).map(|saved| {
        format!(
            "note: {name} was saved by a run with --learning_rate {saved}; this one goes on with \
             {lr} (the schedule's warm-up and decay carry on from its step)"
        )
    }))
}

/// Refuse to resume a state when the checkpoint the run would replace at `out` is not the one the
/// state goes with (`CHECKPOINT_KEY`): a checkpoint saved after it (a run stopped between writing
/// its checkpoint and its state) or by another run would be lost. A state that records no
/// checkpoint is taken as it is.
fn check_resume_pair(input: &Input, out: Option<&Path>) -> Res<()> {
    let (Some(out), Ok(meta)) = (
        out,
        attnlab::model::checkpoint::metadata_of(&input.bytes, &input.name),
    ) else {
        return Ok(());
    };
    let Some(want) = meta.get(CHECKPOINT_KEY) else {
        return Ok(());
    };
    let have = checkpoint_hash(out)?;
    if have == "none" || *want == have {
        return Ok(());
    }
    Err(format!(
        "--resume {} does not go with the checkpoint --writing_params_path {}: that checkpoint \
         was saved after this state (a run stopped between saving its checkpoint and its state) \
         or by another run, and resuming would replace it; to keep it, give another \
         --writing_params_path or move {} away, then resume",
        input.name,
        out.display(),
        out.display()
    ))
}

/// The hash of the checkpoint at `path` (`files::content_hash`), or "none" when there is none.
fn checkpoint_hash(path: &Path) -> Res<String> {
    match std::fs::File::open(path) {
        Ok(f) if path.is_file() => content_hash(f).map_err(|e| {
            format!(
                "cannot read {}: {e}; check that it is readable",
                path.display()
            )
        }),
        _ => Ok("none".into()),
    }
}

/// Where a run keeps its resumable training state: `<checkpoint>.resume`.
pub(super) fn state_path(checkpoint: &Path) -> PathBuf {
    let mut name = checkpoint.file_name().unwrap_or_default().to_os_string();
    name.push(".resume");
    checkpoint.with_file_name(name)
}

/// Where an earlier run's training state at `state` is kept when this run would replace it (a
/// fresh run, or one resumed from another file): `<state>.previous`, linked there just before this
/// run first writes its own (`keep_aside`), as a note at its start says. A run stopped at step
/// 1000 and started again without --resume lost those steps at the second run's first save.
fn keep_earlier_state(cli: &Cli, state: &Path) -> Option<PathBuf> {
    if !state.is_file() || cli.resume.as_deref().is_some_and(|r| same_file(r, state)) {
        return None;
    }
    // `.previous`, unless that is the state this run resumes from (then `.previous-2`).
    let previous = kept_paths(state)
        .into_iter()
        .find(|p| cli.resume.as_deref().is_none_or(|r| !same_file(r, p)))?;
    let step = std::fs::read(state)
        .ok()
        .and_then(|b| attnlab::model::checkpoint::metadata_of(&b, "").ok())
        .and_then(|m| m.get("steps").cloned())
        .map_or(String::new(), |s| {
            format!(" (after step {})", s.escape_debug())
        });
    tell!(
        "note: {} holds the training state of an earlier run{step}; this run was not given it \
         as --resume, so it keeps it as {} when it first saves (replacing an older one there); \
         to continue the earlier run instead, stop this one and give the same command plus \
         --resume {}",
        state.display(),
        previous.display(),
        previous.display()
    );
    Some(previous)
}

/// Where an earlier run's state is kept: `<state>.previous`, or `<state>.previous-2` when the
/// first is the state this run resumes from.
pub(super) fn kept_paths(state: &Path) -> [PathBuf; 2] {
    ["previous", "previous-2"].map(|tail| {
        let mut name = state.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{tail}"));
        state.with_file_name(name)
    })
}

/// Keep the earlier run's state (see `keep_earlier_state`) before this run writes its own: a
/// second name for the file (a hard link; a copy where links are not supported), so that the
/// atomic write then replaces only `state`, and a failed write leaves it as it was.
fn keep_aside(state: &Path, keep: &mut Option<PathBuf>) -> Result<(), String> {
    let Some(previous) = keep.take() else {
        return Ok(());
    };
    if !state.is_file() {
        return Ok(());
    }
    let _ = std::fs::remove_file(&previous);
    std::fs::hard_link(state, &previous)
        .or_else(|_| std::fs::copy(state, &previous).map(|_| ()))
        .map_err(|e| {
            format!(
                "could not keep the earlier training state {} as {} ({e}), so it is left as it \
                 was and this run's state is not saved; move it away yourself",
                state.display(),
                previous.display()
            )
        })
}

/// Run the session to its end with a progress bar (and plain per-epoch lines when stderr is no
/// terminal, so logs keep the losses), then save the checkpoint and the state atomically.
fn train_and_save(cli: &Cli, mut session: Session, probe: Option<RecallLog>) -> Res<()> {
    say!(
        "number of parameters: {}",
        session.trainer.model.num_params()
    );
    say!(
        "learning rate (run.py's schedule): {}",
        session.schedule_text(&session.phases())
    );
    let pb = progress::bar(
        session.total_steps(),
        "epoch {msg} [{bar:30}] {pos}/{len} steps, {elapsed_precise} elapsed, ETA {eta}",
    );
    let first_step = session.trainer.steps;
    let start = Instant::now();
    let clock = move || start.elapsed().as_secs_f64();
    let mut report = |p: Progress| {
        pb.set_position(p.step);
        let msg = format!(
            "{}/{}: loss {:.5}, lr {:.6e}, {:.0} tokens/s",
            p.epoch, p.epochs, p.loss, p.lr, p.tokens_per_s
        );
        if p.epoch_end && pb.is_hidden() {
            // A log has no bar: say where the run is and how long it still needs.
            let done = p.step.saturating_sub(first_step).max(1) as f64;
            let left = p.total_steps.saturating_sub(p.step) as f64 * p.elapsed_s / done;
            say!(
                "epoch {msg}, step {}/{}, {} elapsed, about {} left",
                p.step,
                p.total_steps,
                progress::hms(p.elapsed_s),
                progress::hms(left)
            );
        }
        pb.set_message(msg);
    };
    // The resumable state goes beside the checkpoint. The callback runs at an epoch end only
    // after a finite loss was read, which vouches for the state saved at the previous epoch end
    // (training went on from it); so each epoch end writes the previous, now verified, state
    // (at most every 30 s) and keeps the current one in memory. The end of a run writes its own.
    let path = need(&cli.writing_params_path, "writing_params_path", "training")?;
    let state = state_path(path);
    let mut keep = keep_earlier_state(cli, &state);
    // The states saved during the run go with the checkpoint there now (this run replaces it only
    // at its end, with the state that goes with the new one).
    let at_start = checkpoint_hash(path)?;
    session
        .trainer
        .run_meta
        .push((CHECKPOINT_KEY.into(), at_start));
    say!(
        "training state: {} (saved as the run goes; if it stops, the same command plus --resume {} \
         continues it)",
        state.display(),
        state.display()
    );
    let itos = session.vocab.itos_string();
    let mut saved: Option<(f64, u64)> = None;
    let mut pending: Option<(Vec<u8>, u64)> = None;
    let probe_vocab = session.vocab.clone();
    let mut save_state = |t: &Trainer| -> attnlab::Result<()> {
        if let Some(line) = probe
            .as_ref()
            .map(|p| p.line(t, &probe_vocab))
            .transpose()?
            .flatten()
        {
            pb.println(&line);
            if pb.is_hidden() {
                say!("{line}");
            }
        }
        let now = clock();
        if let Some((bytes, step)) = pending.take() {
            if saved.is_none_or(|(at, _)| now - at >= 30.0) {
                keep_aside(&state, &mut keep).map_err(Error::Msg)?;
                write_atomic(&state, &bytes).map_err(Error::Msg)?;
                saved = Some((now, step));
            }
        }
        let bytes = pollster::block_on(t.state_to_bytes(&itos))?;
        super::finite::check(&bytes, &[path, &state], t.steps).map_err(Error::Msg)?;
        pending = Some((bytes, t.steps));
        Ok(())
    };
    let mut hooks = Hooks {
        every: 10,
        clock: &clock,
        on_progress: &mut report,
        on_epoch_end: Some(&mut save_state),
    };
    let result = pollster::block_on(session.run_to_end(&mut hooks));
    pb.finish();
    // The state kept for the next epoch end is not needed past here: freed before the final save.
    drop(pending);
    if let Err(e) = result {
        return Err(match saved {
            None => e.to_string(),
            Some((_, step)) => format!(
                "{e}\nthe last good training state is {} (after step {step}); continue from it \
                 with the same command plus --resume {}",
                state.display(),
                state.display()
            ),
        });
    }
    // Both files are checked before either is written, so a diverged run replaces neither.
    let step = session.steps();
    let bytes = pollster::block_on(session.checkpoint_bytes()).map_err(|e| e.to_string())?;
    super::finite::check(&bytes, &[path, &state], step)?;
    let hash = content_hash(&bytes[..]).map_err(|e| e.to_string())?;
    for (k, v) in session.trainer.run_meta.iter_mut() {
        if k == CHECKPOINT_KEY {
            *v = hash.clone();
        }
    }
    let state_bytes = pollster::block_on(session.state_bytes()).map_err(|e| e.to_string())?;
    super::finite::check(&state_bytes, &[path, &state], step)?;
    keep_aside(&state, &mut keep)?;
    if let Err(e) = write_atomic_pair(&[(path, &bytes), (&state, &state_bytes)]) {
        // The trained model is kept when only its state cannot be written (a full disk holds
        // the smaller file); the state left there records another checkpoint, so --resume
        // refuses it rather than replace this one.
        drop(state_bytes);
        write_atomic(path, &bytes).map_err(|e2| format!("{e}\n{e2}"))?;
        return Err(format!(
            "{e}\nsaved the checkpoint {} (the trained model) without its training state: {} is \
             left as it was and does not go with it (--resume refuses it); free space and train \
             again to have a state to continue from",
            path.display(),
            state.display()
        ));
    }
    say!("saved {}", path.display());
    Ok(())
}

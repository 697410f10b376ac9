//! The command-line runner, with run.py's positional arguments and flags:
//! `attnlab pretrain|finetune|evaluate vanilla|synthesizer [pretrain_corpus_path] --flags`, plus
//! `attnlab london --eval_corpus_path F` for the London baseline, and `attnlab convert` from the
//! course's `torch.save` .params files to our safetensors. Without a corpus path the
//! embedded generated corpus is used (its train/dev TSVs become the finetune/eval defaults).
//! Every user error is one message on stderr and exit code 1; outputs are written atomically.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    match std::env::args_os().nth(1) {
        Some(a) if a == "vit" => vit_cli::main(std::env::args_os().skip(1).collect()),
        _ => cli::main(),
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod vit_cli;

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use attnlab::data::{self, parse_tsv, NameDataset, TsvMode, Vocab};
    use attnlab::model::{checkpoint, memory, torch_params, Gpt, GptConfig, Variant};
    use attnlab::train::{self, run, Hooks, Progress, TrainConfig, Trainer};
    use attnlab::{Device, DeviceChoice};
    use clap::{Parser, ValueEnum};
    use indicatif::{ProgressBar, ProgressStyle};
    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::process::ExitCode;
    use std::rc::Rc;
    use std::time::Instant;

    #[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
    enum Function {
        Pretrain,
        Finetune,
        Evaluate,
        London,
        Corpus,
        Convert,
    }

    #[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
    enum VariantArg {
        Vanilla,
        Synthesizer,
    }

    /// Train and evaluate the CS224N A5 GPT on the GPU (run.py's interface).
    #[derive(Parser, Debug)]
    #[command(name = "attnlab", version)]
    struct Cli {
        /// What to do: pretrain, finetune, evaluate, london (the London baseline), corpus (write
        /// the embedded generated corpus's files to --out_dir), or convert (a course .params file
        /// at --reading_params_path to our safetensors at --writing_params_path).
        #[arg(value_enum)]
        function: Function,
        /// Attention variant (not used by london).
        #[arg(value_enum)]
        variant: Option<VariantArg>,
        /// wiki.txt-style corpus (the vocabulary is always built from it); omit to use the
        /// embedded generated corpus, whose train/dev TSVs then are the finetune/eval defaults.
        pretrain_corpus_path: Option<PathBuf>,
        /// Checkpoint to start from (finetune) or to evaluate: ours (safetensors) or the course's
        /// torch.save(model.state_dict()) .params file (its sizes are read from its shapes).
        #[arg(long = "reading_params_path")]
        reading_params_path: Option<PathBuf>,
        /// Where to save the trained checkpoint (safetensors).
        #[arg(long = "writing_params_path")]
        writing_params_path: Option<PathBuf>,
        /// Birth-place TSV to finetune on.
        #[arg(long = "finetune_corpus_path")]
        finetune_corpus_path: Option<PathBuf>,
        /// TSV of questions (answers optional) to evaluate on.
        #[arg(long = "eval_corpus_path")]
        eval_corpus_path: Option<PathBuf>,
        /// Where to write the predictions, one per line.
        #[arg(long = "outputs_path")]
        outputs_path: Option<PathBuf>,
        /// Override the number of epochs (650 pretrain, 75 finetune, 10 after pretraining).
        #[arg(long = "max_epochs")]
        max_epochs: Option<usize>,
        /// Override the batch size (128 pretrain, 256 finetune).
        #[arg(long = "batch_size")]
        batch_size: Option<usize>,
        /// Override the peak learning rate (6e-3 pretrain, 6e-4 finetune).
        #[arg(long = "learning_rate")]
        learning_rate: Option<f64>,
        /// Stop training after this many optimizer steps (smoke tests and CI; run.py has no such
        /// flag). The learning-rate schedule is the full run's.
        #[arg(long = "max_steps")]
        max_steps: Option<u64>,
        /// pretrain/finetune: continue the run saved in this training state (the `.resume` file a
        /// run writes beside --writing_params_path), with the same other flags as that run.
        #[arg(long)]
        resume: Option<PathBuf>,
        /// evaluate: only the first N questions of the eval file (smoke tests and CI).
        #[arg(long = "max_questions")]
        max_questions: Option<usize>,
        /// Tiny model (2 layers, 4 heads, width 64); with no corpus path, also the tiny corpus.
        #[arg(long)]
        tiny: bool,
        /// corpus: the folder to write wiki.txt, birth_places_train.tsv, birth_dev.tsv and
        /// birth_test.tsv into (created if missing; existing files are replaced).
        #[arg(long = "out_dir")]
        out_dir: Option<PathBuf>,
        /// corpus: the number of people (split 2000:500:437 like the course); default the
        /// embedded corpus's size (800, or 270 with --tiny).
        #[arg(long)]
        people: Option<usize>,
        /// Seed for initialisation, dropout and the corruption draws.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Where to run: auto (a hardware GPU if there is one, else the CPU backend; never a
        /// software GPU adapter), gpu (any wgpu adapter, software ones included) or cpu.
        #[arg(long, value_enum, default_value_t = DeviceArg::Auto)]
        device: DeviceArg,
        /// Override the number of layers (4 in the assignment; 2 with --tiny).
        #[arg(long = "n_layer")]
        n_layer: Option<usize>,
        /// Override the number of attention heads (8; 4 with --tiny).
        #[arg(long = "n_head")]
        n_head: Option<usize>,
        /// Override the width (256; 64 with --tiny).
        #[arg(long = "n_embd")]
        n_embd: Option<usize>,
        /// Override the dropout probability of every dropout layer (0.1 in the assignment; 0
        /// turns dropout off).
        #[arg(long)]
        dropout: Option<f32>,
    }

    #[derive(Clone, Copy, Debug, ValueEnum)]
    enum DeviceArg {
        Auto,
        Gpu,
        Cpu,
    }

    type Res<T> = Result<T, String>;

    pub fn main() -> ExitCode {
        let cli = match Cli::try_parse() {
            Ok(c) => c,
            Err(e) => {
                use clap::error::ErrorKind;
                if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                    let _ = e.print();
                    return ExitCode::SUCCESS;
                }
                let _ = e.print();
                return ExitCode::from(1);
            }
        };
        match run_cli(&cli) {
            Ok(()) => ExitCode::SUCCESS,
            Err(m) => {
                eprintln!("error: {m}");
                ExitCode::from(1)
            }
        }
    }

    /// A named input: a file's bytes, or one of the embedded corpus's texts.
    struct Input {
        name: String,
        bytes: Vec<u8>,
    }

    fn read(path: &Path) -> Res<Input> {
        Ok(Input {
            name: path.display().to_string(),
            bytes: data::read_file(path).map_err(|e| e.to_string())?,
        })
    }

    fn embedded(name: &str, text: &str) -> Input {
        Input {
            name: format!("<embedded {name}>"),
            bytes: text.as_bytes().to_vec(),
        }
    }

    /// The three inputs a function may use: corpus, finetune TSV, eval TSV (None when not given
    /// and not defaulted).
    struct Inputs {
        corpus: Input,
        finetune: Option<Input>,
        eval: Option<Input>,
    }

    fn inputs(cli: &Cli) -> Res<Inputs> {
        match &cli.pretrain_corpus_path {
            Some(p) => Ok(Inputs {
                corpus: read(p)?,
                finetune: cli.finetune_corpus_path.as_deref().map(read).transpose()?,
                eval: cli.eval_corpus_path.as_deref().map(read).transpose()?,
            }),
            None => {
                let c = run::default_corpus(cli.tiny);
                let pick = |p: &Option<PathBuf>, name: &str, text: &str| match p {
                    Some(p) => read(p).map(Some),
                    None => Ok(Some(embedded(name, text))),
                };
                Ok(Inputs {
                    corpus: embedded("wiki.txt", &c.wiki),
                    finetune: pick(&cli.finetune_corpus_path, "train.tsv", &c.train_tsv)?,
                    eval: pick(&cli.eval_corpus_path, "dev.tsv", &c.dev_tsv)?,
                })
            }
        }
    }

    /// Fail before any work when an output could not be written: its folder must exist and the
    /// path must not be a folder.
    fn check_output(path: &Path, flag: &str) -> Res<()> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(format!(
                "{flag} {}: the folder {} does not exist; create it first",
                path.display(),
                dir.display()
            ));
        }
        if path.is_dir() {
            return Err(format!(
                "{flag} {} is a folder; give a file name",
                path.display()
            ));
        }
        Ok(())
    }

    /// Write `<path>.tmp` in the same folder, fsync it, then rename over `path`: a reader never
    /// sees half a file, and a failure leaves no output behind.
    fn write_atomic(path: &Path, bytes: &[u8]) -> Res<()> {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".tmp");
        let tmp = path.with_file_name(name);
        let result = (|| -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            // Fault injection for tests/faults.rs: hold the finished temp file for a while so a
            // test can kill the process between the write and the rename.
            if let Some(ms) = std::env::var("ATTNLAB_FAULT_PAUSE_BEFORE_RENAME_MS")
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
            {
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            std::fs::rename(&tmp, path)
        })();
        result.map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("could not write {}: {e}", path.display())
        })
    }

    fn need<'a>(v: &'a Option<PathBuf>, flag: &str, function: &str) -> Res<&'a Path> {
        v.as_deref()
            .ok_or_else(|| format!("{function} needs --{flag} PATH"))
    }

    fn variant(cli: &Cli) -> Res<Variant> {
        match cli.variant {
            Some(VariantArg::Vanilla) => Ok(Variant::Vanilla),
            Some(VariantArg::Synthesizer) => Ok(Variant::Synthesizer),
            None => Err("give the variant after the function: vanilla or synthesizer".into()),
        }
    }

    fn run_cli(cli: &Cli) -> Res<()> {
        if cli.function == Function::London {
            return london(cli);
        }
        if cli.function == Function::Corpus {
            return corpus(cli);
        }
        let variant = variant(cli)?;
        let fname = format!("{:?}", cli.function).to_lowercase();
        // Check every flag and output location before the GPU starts or any file is read.
        match cli.function {
            Function::Pretrain | Function::Finetune => check_output(
                need(&cli.writing_params_path, "writing_params_path", &fname)?,
                "--writing_params_path",
            )?,
            Function::Convert => {
                need(&cli.reading_params_path, "reading_params_path", &fname)?;
                check_output(
                    need(&cli.writing_params_path, "writing_params_path", &fname)?,
                    "--writing_params_path",
                )?
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
                Function::Evaluate => {
                    need(&cli.eval_corpus_path, "eval_corpus_path", &fname)?;
                }
                _ => {}
            }
        }
        if cli.max_epochs == Some(0) || cli.batch_size == Some(0) {
            return Err("--max_epochs and --batch_size must be at least 1".into());
        }
        if cli.max_steps == Some(0) || cli.max_questions == Some(0) {
            return Err("--max_steps and --max_questions must be at least 1".into());
        }
        if let Some(lr) = cli.learning_rate {
            if !(lr.is_finite() && lr > 0.0) {
                return Err(format!("--learning_rate {lr} must be a positive number"));
            }
        }
        let inp = inputs(cli)?;
        let text = data::text_from_bytes(&inp.corpus.bytes, &inp.corpus.name)
            .map_err(|e| e.to_string())?;
        let vocab = Vocab::from_text(text, &inp.corpus.name).map_err(|e| e.to_string())?;
        println!(
            "data has {} characters, {} unique.",
            text.chars().count(),
            vocab.len()
        );
        let mut cfg = if cli.tiny {
            GptConfig::tiny(variant, vocab.len())
        } else {
            GptConfig::assignment(variant, vocab.len())
        };
        cfg.n_layer = cli.n_layer.unwrap_or(cfg.n_layer);
        cfg.n_head = cli.n_head.unwrap_or(cfg.n_head);
        cfg.n_embd = cli.n_embd.unwrap_or(cfg.n_embd);
        if let Some(p) = cli.dropout {
            (cfg.embd_pdrop, cfg.resid_pdrop, cfg.attn_pdrop) = (p, p, p);
        }
        cfg.validate()
            .map_err(|e| format!("{e} (from --n_layer, --n_head, --n_embd or --dropout)"))?;
        let choice = match cli.device {
            DeviceArg::Auto => DeviceChoice::Auto,
            DeviceArg::Gpu => DeviceChoice::Gpu,
            DeviceArg::Cpu => DeviceChoice::Cpu,
        };
        let gpu = Device::open_blocking(choice).map_err(|e| e.to_string())?;
        println!("device: {} ({})", gpu.describe(), gpu.reason);
        match cli.function {
            Function::Pretrain => pretrain(cli, &gpu, cfg, &vocab, text, &inp.corpus.name),
            Function::Finetune => {
                // run.py's final_tokens counts the pretraining corpus's lines even when finetuning.
                let docs = data::universal_newlines(text).split('\n').count();
                finetune(cli, &gpu, cfg, &vocab, inp.finetune, docs)
            }
            Function::Evaluate => evaluate(cli, &gpu, cfg, &vocab, inp.eval),
            Function::Convert => convert(cli, &gpu, &cfg, &vocab),
            Function::London | Function::Corpus => Err("internal: handled above".into()),
        }
    }

    fn vocab_string(vocab: &Vocab) -> String {
        vocab.itos.iter().collect()
    }

    /// Load a checkpoint that must match `cfg` and the corpus's vocabulary.
    fn load(gpu: &Rc<Device>, path: &Path, cfg: &GptConfig, vocab: &Vocab) -> Res<Gpt> {
        let input = read(path)?;
        if torch_params::is_torch_file(&input.bytes) {
            return load_torch(gpu, &input, cfg, vocab);
        }
        let (model, header) = checkpoint::from_bytes(gpu, &input.bytes, Some(cfg), &input.name)
            .map_err(|e| {
                format!("{e}; use the variant (and --tiny or not) the checkpoint was trained with")
            })?;
        if header.vocab != vocab_string(vocab) {
            return Err(format!(
                "{} was trained with another vocabulary than the one built from {}; pass the \
                 pretrain_corpus_path it was trained with",
                input.name, vocab.source
            ));
        }
        Ok(model)
    }

    /// A course `.params` file (torch.save of a state_dict): it has no config, so the sizes come
    /// from its shapes; the variant, the vocabulary (its size) and, for vanilla, the head count
    /// come from the command line; dropout from the flags, for finetuning.
    fn load_torch(gpu: &Rc<Device>, input: &Input, cfg: &GptConfig, vocab: &Vocab) -> Res<Gpt> {
        let want = torch_params::Expected {
            variant: Some(cfg.variant),
            n_head: Some(cfg.n_head),
            vocab: Some((vocab.len(), &vocab.source)),
        };
        let mut model = torch_params::from_bytes(gpu, &input.bytes, &want, &input.name)
            .map_err(|e| e.to_string())?;
        (
            model.cfg.embd_pdrop,
            model.cfg.resid_pdrop,
            model.cfg.attn_pdrop,
        ) = (cfg.embd_pdrop, cfg.resid_pdrop, cfg.attn_pdrop);
        let c = &model.cfg;
        println!(
            "read {} (PyTorch state_dict): {} model, {} layers, {} heads{}, width {}, block {}",
            input.name,
            c.variant.name(),
            c.n_layer,
            c.n_head,
            match c.variant {
                Variant::Vanilla => " (not stored in the file: --n_head)",
                Variant::Synthesizer => "",
            },
            c.n_embd,
            c.block_size
        );
        Ok(model)
    }

    /// `convert`: a course .params file (or one of our checkpoints) to our safetensors, with the
    /// corpus's vocabulary in its metadata.
    fn convert(cli: &Cli, gpu: &Rc<Device>, cfg: &GptConfig, vocab: &Vocab) -> Res<()> {
        let from = need(&cli.reading_params_path, "reading_params_path", "convert")?;
        let to = need(&cli.writing_params_path, "writing_params_path", "convert")?;
        let model = load(gpu, from, cfg, vocab)?;
        let bytes = pollster::block_on(checkpoint::to_bytes(&model, &vocab_string(vocab)))
            .map_err(|e| e.to_string())?;
        write_atomic(to, &bytes)?;
        println!("wrote {}", to.display());
        Ok(())
    }

    /// Where a run keeps its resumable training state: `<checkpoint>.resume`.
    fn state_path(checkpoint: &Path) -> PathBuf {
        let mut name = checkpoint.file_name().unwrap_or_default().to_os_string();
        name.push(".resume");
        checkpoint.with_file_name(name)
    }

    /// The trainer for a run: fresh from `model`, or continued from `--resume`'s state.
    fn trainer_for(
        cli: &Cli,
        gpu: &Rc<Device>,
        cfg: &GptConfig,
        vocab: &Vocab,
        tc: TrainConfig,
        fresh: impl FnOnce() -> Res<Gpt>,
    ) -> Res<Trainer> {
        match &cli.resume {
            Some(p) => {
                let model = load(gpu, p, cfg, vocab)?;
                let input = read(p)?;
                let t = Trainer::resume(model, tc, &input.bytes, &input.name)
                    .map_err(|e| e.to_string())?;
                println!("resuming {} after step {}", input.name, t.steps);
                Ok(t)
            }
            None => Trainer::new(fresh()?, tc, cli.seed as u32).map_err(|e| e.to_string()),
        }
    }

    fn apply_overrides(cli: &Cli, mut tc: TrainConfig) -> TrainConfig {
        if let Some(e) = cli.max_epochs {
            tc.max_epochs = e;
        }
        if let Some(b) = cli.batch_size {
            tc.batch_size = b;
        }
        if let Some(lr) = cli.learning_rate {
            tc.learning_rate = lr;
        }
        tc.max_steps = cli.max_steps;
        tc
    }

    fn bar(len: u64, template: &str) -> ProgressBar {
        let pb = ProgressBar::new(len);
        if let Ok(style) = ProgressStyle::with_template(template) {
            pb.set_style(style.progress_chars("=> "));
        }
        pb
    }

    /// Run the epoch loop with a progress bar (and plain per-epoch lines when stderr is no
    /// terminal, so logs keep the losses), then save the checkpoint atomically.
    fn train_and_save(
        cli: &Cli,
        mut trainer: Trainer,
        vocab: &Vocab,
        per_epoch: usize,
        go: impl FnOnce(&mut Trainer, &mut Hooks) -> attnlab::Result<f32>,
    ) -> Res<()> {
        let epochs = trainer.cfg.max_epochs;
        println!("number of parameters: {}", trainer.model.num_params());
        let total = ((per_epoch * epochs) as u64).min(trainer.cfg.max_steps.unwrap_or(u64::MAX));
        let pb = bar(
            total,
            "epoch {msg} [{bar:30}] {pos}/{len} steps, {elapsed_precise} elapsed, ETA {eta}",
        );
        let start = Instant::now();
        let clock = move || start.elapsed().as_secs_f64();
        let mut report = |p: Progress| {
            pb.set_position(p.step);
            let msg = format!(
                "{}/{}: loss {:.5}, lr {:.6e}, {:.0} tokens/s",
                p.epoch, p.epochs, p.loss, p.lr, p.tokens_per_s
            );
            if p.epoch_end && pb.is_hidden() {
                println!("epoch {msg}");
            }
            pb.set_message(msg);
        };
        // The resumable state goes beside the checkpoint. The callback runs at an epoch end only
        // after a finite loss was read, which vouches for the state saved at the previous epoch end
        // (training went on from it); so each epoch end writes the previous, now verified, state
        // (at most every 30 s) and keeps the current one in memory. The end of a run writes its own.
        let path = need(&cli.writing_params_path, "writing_params_path", "training")?;
        let state = state_path(path);
        let itos = vocab_string(vocab);
        let mut saved: Option<(f64, u64)> = None;
        let mut pending: Option<(Vec<u8>, u64)> = None;
        let mut save_state = |t: &Trainer| -> attnlab::Result<()> {
            let now = clock();
            if let Some((bytes, step)) = pending.take() {
                if saved.is_none_or(|(at, _)| now - at >= 30.0) {
                    write_atomic(&state, &bytes).map_err(attnlab::Error::Msg)?;
                    saved = Some((now, step));
                }
            }
            pending = Some((pollster::block_on(t.state_to_bytes(&itos))?, t.steps));
            Ok(())
        };
        let mut hooks = Hooks {
            every: 10,
            clock: &clock,
            on_progress: &mut report,
            on_epoch_end: Some(&mut save_state),
        };
        let result = go(&mut trainer, &mut hooks);
        pb.finish();
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
        let bytes = pollster::block_on(checkpoint::to_bytes(&trainer.model, &itos))
            .map_err(|e| e.to_string())?;
        write_atomic(path, &bytes)?;
        let bytes = pollster::block_on(trainer.state_to_bytes(&itos)).map_err(|e| e.to_string())?;
        write_atomic(&state, &bytes)?;
        println!("saved {}", path.display());
        Ok(())
    }

    /// Refuse a model or batch that does not fit the device before anything is allocated.
    fn check_memory(dev: &Device, cfg: &GptConfig, tc: &TrainConfig) -> Res<()> {
        let est = memory::estimate_training(cfg, tc.batch_size, cfg.block_size);
        memory::check_fits(&est, &memory::MemoryLimit::of_device(dev)).map_err(|e| e.to_string())
    }

    fn pretrain(
        cli: &Cli,
        gpu: &Rc<Device>,
        cfg: GptConfig,
        vocab: &Vocab,
        text: &str,
        name: &str,
    ) -> Res<()> {
        let data = data::CharCorruptionDataset::new(text, name, vocab, cli.seed)
            .map_err(|e| e.to_string())?;
        let tc = apply_overrides(cli, TrainConfig::pretrain().with_corpus_docs(data.len()));
        check_memory(gpu, &cfg, &tc)?;
        let per_epoch = run::steps_per_epoch(data.len(), tc.batch_size);
        let trainer = trainer_for(cli, gpu, &cfg, vocab, tc, || {
            Gpt::new(gpu, cfg.clone(), cli.seed).map_err(|e| e.to_string())
        })?;
        train_and_save(cli, trainer, vocab, per_epoch, |t, h| {
            pollster::block_on(train::pretrain(t, &data, h))
        })
    }

    fn finetune(
        cli: &Cli,
        gpu: &Rc<Device>,
        cfg: GptConfig,
        vocab: &Vocab,
        tsv: Option<Input>,
        corpus_docs: usize,
    ) -> Res<()> {
        let tsv = tsv.ok_or("finetune needs --finetune_corpus_path PATH")?;
        let data = NameDataset::new(&tsv.bytes, &tsv.name, vocab).map_err(|e| e.to_string())?;
        let base = match &cli.reading_params_path {
            Some(_) => TrainConfig::finetune_pretrained(),
            None => TrainConfig::finetune_scratch(),
        };
        let tc = apply_overrides(cli, base.with_corpus_docs(corpus_docs));
        check_memory(gpu, &cfg, &tc)?;
        let per_epoch = run::steps_per_epoch(data.len(), tc.batch_size);
        let trainer = trainer_for(cli, gpu, &cfg, vocab, tc, || {
            match &cli.reading_params_path {
                Some(p) => load(gpu, p, &cfg, vocab),
                None => Gpt::new(gpu, cfg.clone(), cli.seed).map_err(|e| e.to_string()),
            }
        })?;
        train_and_save(cli, trainer, vocab, per_epoch, |t, h| {
            pollster::block_on(train::finetune(t, &data, h))
        })
    }

    fn evaluate(
        cli: &Cli,
        gpu: &Rc<Device>,
        cfg: GptConfig,
        vocab: &Vocab,
        tsv: Option<Input>,
    ) -> Res<()> {
        let tsv = tsv.ok_or("evaluate needs --eval_corpus_path PATH")?;
        let mut rows = parse_tsv(&tsv.bytes, &tsv.name, TsvMode::AnswersOptional)
            .map_err(|e| e.to_string())?;
        if let Some(n) = cli.max_questions {
            rows.truncate(n);
        }
        let path = need(&cli.reading_params_path, "reading_params_path", "evaluate")?;
        let model = load(gpu, path, &cfg, vocab)?;
        println!("number of parameters: {}", model.num_params());
        let pb = bar(
            rows.len() as u64,
            "evaluating [{bar:30}] {pos}/{len} questions, ETA {eta}",
        );
        let mut progress = |done: usize, _total: usize| pb.set_position(done as u64);
        let ev = pollster::block_on(run::evaluate(
            &model,
            vocab,
            &rows,
            &tsv.name,
            &mut progress,
        ))
        .map_err(|e| e.to_string())?;
        pb.finish_and_clear();
        if let Some(out) = &cli.outputs_path {
            write_atomic(out, lines(&ev.predictions).as_bytes())?;
            println!(
                "wrote {} predictions to {}",
                ev.predictions.len(),
                out.display()
            );
        }
        let (c, t) = ev.score.unwrap_or((0, 0));
        println!("{}", data::format_accuracy(c, t));
        Ok(())
    }

    fn lines(items: &[String]) -> String {
        items.iter().map(|p| format!("{p}\n")).collect()
    }

    /// The London baseline: "London" for every question; no GPU needed.
    fn london(cli: &Cli) -> Res<()> {
        if let Some(p) = &cli.outputs_path {
            check_output(p, "--outputs_path")?;
        }
        let tsv = match (&cli.eval_corpus_path, &cli.pretrain_corpus_path) {
            (Some(p), _) => read(p)?,
            (None, None) => embedded("dev.tsv", &run::default_corpus(cli.tiny).dev_tsv),
            (None, Some(_)) => return Err("london needs --eval_corpus_path PATH".into()),
        };
        let rows = parse_tsv(&tsv.bytes, &tsv.name, TsvMode::AnswersOptional)
            .map_err(|e| e.to_string())?;
        let (c, t) = data::london_baseline(&rows).map_err(|e| e.to_string())?;
        if let Some(out) = &cli.outputs_path {
            write_atomic(
                out,
                lines(&vec!["London".to_string(); rows.len()]).as_bytes(),
            )?;
        }
        println!("{}", data::format_accuracy(c, t));
        Ok(())
    }

    /// Write the embedded corpus (or one of `--people` people) as the course's four files.
    fn corpus(cli: &Cli) -> Res<()> {
        let dir = need(&cli.out_dir, "out_dir", "corpus")?;
        let c = match cli.people {
            Some(n) if n < 3 => {
                return Err(format!(
                    "--people {n} must be at least 3 (so that train and dev get one each)"
                ))
            }
            Some(n) => data::generate(run::DEFAULT_CORPUS_SEED, n),
            None => run::default_corpus(cli.tiny),
        };
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("could not create the folder {}: {e}", dir.display()))?;
        for (name, text) in [
            ("wiki.txt", &c.wiki),
            ("birth_places_train.tsv", &c.train_tsv),
            ("birth_dev.tsv", &c.dev_tsv),
            ("birth_test.tsv", &c.test_tsv),
        ] {
            write_atomic(&dir.join(name), text.as_bytes())?;
        }
        println!(
            "wrote wiki.txt ({} lines), birth_places_train.tsv ({}), birth_dev.tsv ({}), birth_test.tsv ({}) to {}",
            c.wiki.lines().count(),
            c.train_tsv.lines().count(),
            c.dev_tsv.lines().count(),
            c.test_tsv.lines().count(),
            dir.display()
        );
        Ok(())
    }
}

//! The command line: run.py's arguments and the dispatch to the functions (`checks.rs`: the
//! checks made before any work; `train.rs`: pretrain and finetune; `model.rs`: evaluate, convert,
//! london, corpus).

mod checks;
mod files;
mod finite;
mod lock;
mod model;
mod probe;
mod progress;
mod runtime_dir;
mod train;
mod unused;
pub mod vit;

use attnlab::data::{self, Vocab};
use attnlab::model::Variant;
use attnlab::train::{validate_model, Overrides, RunKind, RunSpec, Words};
use attnlab::{Device, DeviceChoice};
use clap::{Parser, ValueEnum};
use files::inputs;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
enum Function {
    Pretrain,
    Finetune,
    Evaluate,
    London,
    Corpus,
    Convert,
    Probe,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
enum VariantArg {
    Vanilla,
    Synthesizer,
}

/// Train and evaluate the CS224N A5 GPT on the GPU or the CPU (run.py's interface).
#[derive(Parser, Debug)]
#[command(
    name = "attnlab",
    version,
    allow_negative_numbers = true,
    after_help = "Also: `attnlab vit train|evaluate` trains and evaluates the Vision Transformer on \
                  generated digits (`attnlab vit --help` for its flags)."
)]
struct Cli {
    /// What to do: pretrain, finetune, evaluate, london (the London baseline), corpus (write
    /// the embedded generated corpus's files to --out_dir), or convert (a course .params file
    /// at --reading_params_path to our safetensors at --writing_params_path), or probe (what a
    /// pretrained model at --reading_params_path recalls of the birthplaces in
    /// --eval_corpus_path, asked as masked spans of the corpus; not in run.py).
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
    /// pretrain: every 10 epochs, log the probe's recall (see probe) on the first 100 people of
    /// this TSV (not in run.py).
    #[arg(long = "probe_corpus_path")]
    probe_corpus_path: Option<PathBuf>,
    /// probe: the finetuned model's predictions for --eval_corpus_path (as `evaluate
    /// --outputs_path` writes them), for the table of stored × answered.
    #[arg(long = "predictions_path")]
    predictions_path: Option<PathBuf>,
    /// Override the number of epochs (650 pretrain, 75 finetune, 10 after pretraining).
    #[arg(long = "max_epochs")]
    max_epochs: Option<usize>,
    /// Override the batch size (128 pretrain, 256 finetune).
    #[arg(long = "batch_size")]
    batch_size: Option<usize>,
    /// Override the peak learning rate (6e-3 pretrain, 6e-4 finetune).
    // (Hyphen values: "-inf" reaches the range check, which names the flag; clap's reading of it
    // as a flag "-i" suggested a wrong fix.)
    #[arg(long = "learning_rate", allow_hyphen_values = true)]
    learning_rate: Option<f64>,
    /// Where the learning rate's cosine reaches its floor, in epochs' worth of the pretraining
    /// corpus's tokens (run.py: 200, its final_tokens; not a run.py flag). A run of that many
    /// epochs then ends at the floor; run.py's cosine, not clamped, climbs back after it.
    #[arg(long = "lr_decay_epochs")]
    lr_decay_epochs: Option<usize>,
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
    /// convert: store the weights as f16 (half the file; read back as f32). Check with evaluate
    /// that the rounding changes no prediction before shipping such a file.
    #[arg(long)]
    f16: bool,
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
    /// corpus: write as wiki.txt only each person's name and birth sentence (the TSVs are the
    /// same).
    #[arg(long = "births_only", conflicts_with = "birth_notes")]
    births_only: bool,
    /// corpus: write as wiki.txt each person in two short notes of their birthplace, "NAME. Born
    /// in PLACE ." and one other phrasing (the page's middle preset pretrains on that text; the
    /// TSVs are the same).
    #[arg(long = "birth_notes")]
    birth_notes: bool,
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
    #[arg(long, allow_hyphen_values = true)]
    dropout: Option<f64>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DeviceArg {
    Auto,
    Gpu,
    Cpu,
}

type Res<T> = Result<T, String>;

pub fn main() -> ExitCode {
    runtime_dir::for_the_gpu_probe();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            let _ = e.print();
            // A usage error (an unknown flag, a value that is not a number) exits 2, as run.py's
            // argparse does; an error of the run itself exits 1.
            return ExitCode::from(2);
        }
    };
    match run_cli(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            tell!("error: {m}");
            ExitCode::from(1)
        }
    }
}

/// The flags' names in messages about their values.
const WORDS: Words = Words {
    epochs: "--max_epochs",
    batch: "--batch_size",
    lr: "--learning_rate",
    max_steps: "--max_steps",
    dropout: "--dropout",
    decay_epochs: "--lr_decay_epochs",
    model: "--n_layer, --n_head, --n_embd or --dropout",
};

fn variant(cli: &Cli) -> Res<Variant> {
    match cli.variant {
        Some(VariantArg::Vanilla) => Ok(Variant::Vanilla),
        Some(VariantArg::Synthesizer) => Ok(Variant::Synthesizer),
        None => Err("give the variant after the function: vanilla or synthesizer".into()),
    }
}

/// The run the flags describe (evaluate and convert use only its model configuration).
fn spec(cli: &Cli, variant: Variant) -> RunSpec {
    RunSpec {
        kind: match cli.function {
            Function::Finetune => RunKind::Finetune,
            _ => RunKind::Pretrain,
        },
        variant,
        tiny: cli.tiny,
        pretrained: cli.reading_params_path.is_some(),
        overrides: Overrides {
            epochs: cli.max_epochs,
            batch: cli.batch_size,
            lr: cli.learning_rate,
            max_steps: cli.max_steps,
            n_layer: cli.n_layer,
            n_head: cli.n_head,
            n_embd: cli.n_embd,
            dropout: cli.dropout,
            decay_epochs: cli.lr_decay_epochs,
        },
        seed: cli.seed,
    }
}

fn run_cli(cli: &Cli) -> Res<()> {
    if let Some(note) = unused::note(cli, &unused::unused_flags(cli)) {
        tell!("{note}");
    }
    if cli.function == Function::London {
        return model::london(cli);
    }
    if cli.function == Function::Corpus {
        return model::corpus(cli);
    }
    let spec = spec(cli, variant(cli)?);
    // Held to the end of the run: dropping it removes the lock.
    let _lock = checks::check_flags(cli, &spec)?;
    let inp = inputs(cli)?;
    if cli.pretrain_corpus_path.is_none() {
        tell!(
            "note: no pretraining corpus given: the built-in generated corpus is used (its \
             wiki.txt, and its question files for flags not given); give the course's wiki.txt \
             first to use the course's files"
        );
    }
    let text =
        data::text_from_bytes(&inp.corpus.bytes, &inp.corpus.name).map_err(|e| e.to_string())?;
    if data::looks_like_questions(text) {
        tell!(
            "note: {} looks like a questions file (most lines are a question, a tab and a place), \
             not the pretraining text: run.py reads the biographies (wiki.txt) here, and the \
             questions with --finetune_corpus_path or --eval_corpus_path",
            inp.corpus.name
        );
    }
    let vocab = Vocab::from_text(text, &inp.corpus.name).map_err(|e| e.to_string())?;
    say!(
        "data has {} characters, {} unique.",
        text.chars().count(),
        vocab.len()
    );
    let cfg = spec.model_config(vocab.len());
    // A command that reads one of our checkpoints takes the sizes it records.
    let cfg = match cli.function {
        Function::Evaluate | Function::Convert | Function::Probe | Function::Finetune => {
            model::recorded_config(cli, &cfg)?
        }
        _ => cfg,
    };
    if let (Some(h), None) = (cli.n_head, cli.n_embd) {
        if h > 0 && !cfg.n_embd.is_multiple_of(h) {
            return Err(format!(
                "--n_head {h} does not divide the width {}, the default (--n_embd is not given); \
                 give an --n_head that divides {}, or the --n_embd it goes with",
                cfg.n_embd, cfg.n_embd
            ));
        }
    }
    validate_model(&cfg, &WORDS).map_err(|e| e.to_string())?;
    let choice = match cli.device {
        DeviceArg::Auto => DeviceChoice::Auto,
        DeviceArg::Gpu => DeviceChoice::Gpu,
        DeviceArg::Cpu => DeviceChoice::Cpu,
    };
    let dev = Device::open_blocking(choice).map_err(|e| e.to_string())?;
    say!("device: {} ({})", dev.describe(), dev.reason);
    let run = train::Run {
        cli,
        dev: &dev,
        spec: &spec,
        cfg,
        vocab,
    };
    match cli.function {
        Function::Pretrain | Function::Finetune => run.train(text, &inp.corpus.name, inp.finetune),
        Function::Evaluate => model::evaluate(cli, &dev, &run.cfg, &run.vocab, inp.eval),
        Function::Convert => model::convert(cli, &dev, &run.cfg, &run.vocab),
        Function::Probe => probe::probe(cli, &dev, &run.cfg, &run.vocab, text, inp.eval),
        Function::London | Function::Corpus => Err("internal: handled above".into()),
    }
}

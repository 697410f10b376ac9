//! The CLI's functions around a model and the corpus: reading checkpoints (ours or the course's
//! .params), convert, evaluate, the London baseline, and writing the embedded corpus.

use super::files::{check_output, embedded, lines, need, read, write_atomic, Input};
use super::{Cli, Res};
use attnlab::data::{self, parse_tsv, TsvMode, Vocab};
use attnlab::model::{checkpoint, torch_params, Gpt, GptConfig, Variant};
use attnlab::train::run;
use attnlab::Device;
use std::path::Path;
use std::rc::Rc;

/// Load a checkpoint that must match `cfg` and the corpus's vocabulary (and, for a .params file,
/// whose sizes are read from its shapes, the --n_layer and --n_embd the command gives).
pub fn load(cli: &Cli, dev: &Rc<Device>, path: &Path, cfg: &GptConfig, vocab: &Vocab) -> Res<Gpt> {
    load_input(cli, dev, &read(path)?, cfg, vocab)
}

/// `load` of a file already read.
pub fn load_input(
    cli: &Cli,
    dev: &Rc<Device>,
    input: &Input,
    cfg: &GptConfig,
    vocab: &Vocab,
) -> Res<Gpt> {
    if torch_params::is_torch_file(&input.bytes) {
        let model = load_torch(dev, input, cfg, vocab)?;
        let c = &model.cfg;
        for (flag, asked, read, size) in [
            (
                "--n_layer",
                cli.n_layer,
                c.n_layer,
                format!("{} layers", c.n_layer),
            ),
            (
                "--n_embd",
                cli.n_embd,
                c.n_embd,
                format!("width {}", c.n_embd),
            ),
        ] {
            if let Some(a) = asked.filter(|&a| a != read) {
                return Err(format!(
                    "{} holds a model of {size} (read from its shapes), but the command gives \
                     {flag} {a}: give {flag} {read}, or leave it out (a .params file's sizes are \
                     read from it)",
                    input.name
                ));
            }
        }
        return Ok(model);
    }
    let (model, header) = checkpoint::from_bytes(dev, &input.bytes, Some(cfg), &input.name)
        .map_err(|e| {
            let e = e.to_string();
            match checkpoint::header_of(&input.bytes, &input.name) {
                Ok(h) if is_size_mismatch(&e) => format!("{e}; {}", mismatch_fix(&h, cfg, vocab)),
                _ => e,
            }
        })?;
    if header.vocab != vocab.itos_string() {
        return Err(format!(
            "{} was trained with another vocabulary than the one built from {}; pass the \
             pretrain_corpus_path it was trained with",
            input.name, vocab.source
        ));
    }
    Ok(model)
}

/// Whether a checkpoint error is about the model's kind or sizes (which the variant and
/// --tiny choose), not about damage such as truncation or a NaN.
/// What to change in the command so that it matches the checkpoint it reads: the variant, the
/// corpus (another vocabulary), or the sizes; for a file whose header matches but whose tensors do
/// not, that it is damaged.
fn mismatch_fix(h: &checkpoint::Header, cfg: &GptConfig, vocab: &Vocab) -> String {
    let c = &h.cfg;
    if c.variant != cfg.variant {
        return format!(
            "it is a {} model: give {} as the variant",
            c.variant.name(),
            c.variant.name()
        );
    }
    if h.vocab != vocab.itos_string() {
        return format!(
            "it was trained on another text (a vocabulary of {} characters; {} gives {}): pass \
             the pretrain_corpus_path it was trained with",
            h.vocab.chars().count(),
            vocab.source,
            vocab.len()
        );
    }
    if (c.n_layer, c.n_head, c.n_embd) != (cfg.n_layer, cfg.n_head, cfg.n_embd) {
        let tiny = GptConfig::tiny(c.variant, c.vocab_size);
        return if (c.n_layer, c.n_head, c.n_embd) == (tiny.n_layer, tiny.n_head, tiny.n_embd) {
            "give --tiny, the size it was trained with".into()
        } else {
            format!(
                "give the size it was trained with: --n_layer {} --n_head {} --n_embd {}",
                c.n_layer, c.n_head, c.n_embd
            )
        };
    }
    "its header matches this model but its tensors do not: the file is damaged or was not \
     written by attnlab; train or convert it again"
        .into()
}

fn is_size_mismatch(message: &str) -> bool {
    [" was expected", " has no tensor ", ", expected F32 "]
        .iter()
        .any(|n| message.contains(n))
}

/// A course `.params` file (torch.save of a state_dict): it has no config, so the sizes come
/// from its shapes; the variant, the vocabulary (its size) and, for vanilla, the head count
/// come from the command line; dropout from the flags, for finetuning.
fn load_torch(dev: &Rc<Device>, input: &Input, cfg: &GptConfig, vocab: &Vocab) -> Res<Gpt> {
    let want = torch_params::Expected {
        variant: Some(cfg.variant),
        n_head: Some(cfg.n_head),
        vocab: Some((vocab.len(), &vocab.source)),
    };
    let mut model = torch_params::from_bytes(dev, &input.bytes, &want, &input.name)
        .map_err(|e| e.to_string())?;
    (
        model.cfg.embd_pdrop,
        model.cfg.resid_pdrop,
        model.cfg.attn_pdrop,
    ) = (cfg.embd_pdrop, cfg.resid_pdrop, cfg.attn_pdrop);
    let c = &model.cfg;
    say!(
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
pub fn convert(cli: &Cli, dev: &Rc<Device>, cfg: &GptConfig, vocab: &Vocab) -> Res<()> {
    let from = need(&cli.reading_params_path, "reading_params_path", "convert")?;
    let to = need(&cli.writing_params_path, "writing_params_path", "convert")?;
    let model = load(cli, dev, from, cfg, vocab)?;
    let itos = vocab.itos_string();
    let bytes = pollster::block_on(async {
        if cli.f16 {
            checkpoint::to_bytes_f16(&model, &itos).await
        } else {
            checkpoint::to_bytes(&model, &itos).await
        }
    })
    .map_err(|e| e.to_string())?;
    write_atomic(to, &bytes)?;
    let how = if cli.f16 { " (weights as f16)" } else { "" };
    say!("wrote {}{how}", to.display());
    Ok(())
}

pub fn evaluate(
    cli: &Cli,
    dev: &Rc<Device>,
    cfg: &GptConfig,
    vocab: &Vocab,
    tsv: Option<Input>,
) -> Res<()> {
    let tsv = tsv.ok_or("evaluate needs --eval_corpus_path PATH")?;
    let mut rows =
        parse_tsv(&tsv.bytes, &tsv.name, TsvMode::AnswersOptional).map_err(|e| e.to_string())?;
    if let Some(n) = cli.max_questions {
        rows.truncate(n);
    }
    let path = need(&cli.reading_params_path, "reading_params_path", "evaluate")?;
    let model = load(cli, dev, path, cfg, vocab)?;
    say!("number of parameters: {}", model.num_params());
    if cli.outputs_path.is_none() {
        tell!(
            "note: no --outputs_path, so the predictions are only scored, not written (run.py \
             needs it; give it to keep them)"
        );
    }
    let pb = super::progress::bar(
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
    // Questions with a character the vocabulary lacks were not asked (the page says the same).
    if !ev.skipped.is_empty() {
        let scored = rows.first().is_some_and(|r| r.answer.is_some());
        say!("{}", run::skipped_line(&tsv.name, &ev.skipped, scored));
    }
    let cropped = run::cropped_line(&tsv.name, &rows, model.cfg.max_context());
    if !cropped.is_empty() {
        say!("{cropped}");
    }
    if let Some(out) = &cli.outputs_path {
        write_atomic(out, lines(&ev.predictions).as_bytes())?;
        let n = ev.predictions.len();
        say!(
            "wrote {n} prediction{} to {}",
            if n == 1 { "" } else { "s" },
            out.display()
        );
    }
    let (c, t) = ev.score.unwrap_or((0, 0));
    say!("{}", data::format_accuracy(c, t));
    Ok(())
}

/// The London baseline: "London" for every question; no GPU needed.
pub fn london(cli: &Cli) -> Res<()> {
    if let Some(p) = &cli.outputs_path {
        check_output(p, "--outputs_path")?;
    }
    super::checks::check_not_overwriting_inputs(cli)?;
    let tsv = match (&cli.eval_corpus_path, &cli.pretrain_corpus_path) {
        (Some(p), _) => read(p)?,
        (None, None) => {
            tell!(
                "note: no --eval_corpus_path: scoring the built-in generated corpus's dev set; \
                 give the course's birth_dev.tsv to score it"
            );
            embedded("dev.tsv", &run::default_corpus(cli.tiny).dev_tsv)
        }
        (None, Some(_)) => return Err("london needs --eval_corpus_path PATH".into()),
    };
    let rows =
        parse_tsv(&tsv.bytes, &tsv.name, TsvMode::AnswersOptional).map_err(|e| e.to_string())?;
    let (c, t) = data::london_baseline(&rows).map_err(|e| e.to_string())?;
    if let Some(out) = &cli.outputs_path {
        write_atomic(
            out,
            lines(&vec!["London".to_string(); rows.len()]).as_bytes(),
        )?;
    }
    say!("{}", data::format_accuracy(c, t));
    Ok(())
}

/// The most people `corpus --people` generates (about 1.4 KB of text each).
const MAX_PEOPLE: usize = 100_000;

/// The files `corpus` writes, in the order of the corpus's texts.
const CORPUS_FILES: [&str; 4] = [
    "wiki.txt",
    "birth_places_train.tsv",
    "birth_dev.tsv",
    "birth_test.tsv",
];

/// Write the embedded corpus (or one of `--people` people) as the course's four files.
pub fn corpus(cli: &Cli) -> Res<()> {
    let dir = need(&cli.out_dir, "out_dir", "corpus")?;
    let n = match cli.people {
        Some(n) if n < 3 => {
            return Err(format!(
                "--people {n} must be at least 3 (so that train and dev get one each)"
            ))
        }
        Some(n) if n > MAX_PEOPLE => {
            return Err(format!(
                "--people {n} is more than {MAX_PEOPLE}; give at most {MAX_PEOPLE} (the course \
                 has 2937)"
            ))
        }
        n => n,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "--out_dir {} is a file; give a folder (it is created if it does not exist)",
            dir.display()
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("could not create the folder {}: {e}", dir.display()))?;
    for name in CORPUS_FILES {
        check_output(&dir.join(name), "--out_dir")?;
    }
    let c = match n {
        Some(n) => data::generate(run::DEFAULT_CORPUS_SEED, n),
        None => run::default_corpus(cli.tiny),
    };
    let (wiki, cut) = if cli.births_only {
        (&c.births, ", birth sentences only")
    } else if cli.birth_notes {
        (&c.notes, ", two birth notes a person")
    } else {
        (&c.wiki, "")
    };
    for (name, text) in CORPUS_FILES
        .iter()
        .zip([wiki, &c.train_tsv, &c.dev_tsv, &c.test_tsv])
    {
        write_atomic(&dir.join(name), text.as_bytes())?;
    }
    say!(
        "wrote wiki.txt ({} lines{}), birth_places_train.tsv ({}), birth_dev.tsv ({}), birth_test.tsv ({}) to {}",
        wiki.lines().count(),
        cut,
        c.train_tsv.lines().count(),
        c.dev_tsv.lines().count(),
        c.test_tsv.lines().count(),
        dir.display()
    );
    Ok(())
}

/// The model configuration for a command that reads a checkpoint: a checkpoint of ours records its
/// layers, heads and width, so those come from the file; a size flag or --tiny that disagrees with
/// the file is refused with both values. A course `.params` file records no configuration, so its
/// command keeps needing run.py's flags, as run.py does. A file that cannot be read here is left
/// to `load`, which says what is wrong with it.
pub fn recorded_config(cli: &Cli, cfg: &GptConfig) -> Res<GptConfig> {
    let Some(path) = cli.reading_params_path.as_deref() else {
        return Ok(cfg.clone());
    };
    let Ok(input) = read(path) else {
        return Ok(cfg.clone());
    };
    if torch_params::is_torch_file(&input.bytes) {
        return Ok(cfg.clone());
    }
    let Ok(header) = checkpoint::header_of(&input.bytes, &input.name) else {
        return Ok(cfg.clone());
    };
    let file = &header.cfg;
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let sizes = |l: usize, h: usize, w: usize| {
        format!("{l} layer{}, {h} head{}, width {w}", plural(l), plural(h))
    };
    let recorded = sizes(file.n_layer, file.n_head, file.n_embd);
    if cli.tiny {
        let tiny = GptConfig::tiny(file.variant, file.vocab_size);
        if (tiny.n_layer, tiny.n_head, tiny.n_embd) != (file.n_layer, file.n_head, file.n_embd) {
            return Err(format!(
                "--tiny asks for {}, but {} records {recorded}: leave --tiny out (the \
                 checkpoint's sizes are used)",
                sizes(tiny.n_layer, tiny.n_head, tiny.n_embd),
                input.name
            ));
        }
    }
    for (flag, given, value) in [
        ("--n_layer", cli.n_layer, file.n_layer),
        ("--n_head", cli.n_head, file.n_head),
        ("--n_embd", cli.n_embd, file.n_embd),
    ] {
        if let Some(g) = given.filter(|&g| g != value) {
            return Err(format!(
                "{} records {flag} {value} ({recorded}), but the command gives {flag} {g}: \
                 leave {flag} out (the checkpoint's sizes are used) or give {flag} {value}",
                input.name
            ));
        }
    }
    let mut out = cfg.clone();
    (out.n_layer, out.n_head, out.n_embd) = (file.n_layer, file.n_head, file.n_embd);
    if (out.n_layer, out.n_head, out.n_embd) != (cfg.n_layer, cfg.n_head, cfg.n_embd) {
        say!("{} records {recorded}: the model has its sizes", input.name);
    }
    Ok(out)
}

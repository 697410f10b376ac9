//! The course's `.params` files (`torch.save(model.state_dict(), path)`): files written by PyTorch
//! itself (`scripts/make_torch_fixture.py`, committed in `tests/fixtures/torch/`) load into a model
//! whose logits and greedy answers are PyTorch's, on the CPU backend and on the GPU; the CLI loads
//! and converts them; every kind of bad file is refused with a message naming it and what was
//! expected, and the pickle reader never panics on a mangled file.

use attnlab::autograd::Tape;
use attnlab::data;
use attnlab::model::checkpoint;
use attnlab::model::torch_params::{
    config_of, from_bytes, is_torch_zip, read_state_dict, Expected, TorchTensor,
};
use attnlab::model::{Pass, Variant};
use attnlab::train::{run, sample_greedy};
use attnlab::{Device, Tensor};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

mod backends;
mod common;
use backends::devices;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/torch")
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn expected(variant: Variant) -> Value {
    let text = std::fs::read_to_string(dir().join(format!("{}_expected.json", variant.name())))
        .expect("expected-values fixture");
    serde_json::from_str(&text).expect("JSON")
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// What the fixtures' tiny models need: 2 heads (not visible in a vanilla file), vocab 20.
fn tiny_want(variant: Variant) -> Expected<'static> {
    Expected {
        variant: Some(variant),
        n_head: Some(2),
        vocab: Some((20, "the test corpus")),
    }
}

/// The error message of `r`, which must be an error.
fn err<T>(r: attnlab::Result<T>, case: &str) -> String {
    match r {
        Ok(_) => panic!("{case}: accepted"),
        Err(e) => e.to_string(),
    }
}

fn has(message: &str, parts: &[&str]) {
    for p in parts {
        assert!(message.contains(p), "{message:?} does not mention {p:?}");
    }
}

/// The fixtures' models give PyTorch's float64 logits (1e-4 relative, as tests/parity.rs) and its
/// greedy answer (past the block, so the context crop is exercised) on both backends.
#[test]
fn course_params_give_pytorchs_logits_and_answers() {
    for dev in devices() {
        for variant in [Variant::Vanilla, Variant::Synthesizer] {
            let case = format!("{} on {}", variant.name(), dev.kind());
            let name = format!("{}.params", variant.name());
            let bytes = fixture(&name);
            assert!(is_torch_zip(&bytes));
            let model = from_bytes(&dev, &bytes, &tiny_want(variant), &name)
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            let c = &model.cfg;
            assert_eq!(
                (
                    c.variant,
                    c.vocab_size,
                    c.block_size,
                    c.n_layer,
                    c.n_head,
                    c.n_embd
                ),
                (variant, 20, 16, 2, 2, 16),
                "{case}"
            );
            let want = expected(variant);
            let (b, t) = (
                want["b"].as_u64().unwrap() as usize,
                want["t"].as_u64().unwrap() as usize,
            );
            let ids: Vec<u32> = nums(&want["x"]).iter().map(|&v| v as u32).collect();
            let x = Tensor::from_u32(&dev, &[b * t], &ids).unwrap();
            let tape = Tape::new();
            let (logits, _) = model.forward(&tape, &x, b, t, None, &Pass::eval()).unwrap();
            let ours = logits.value().read().unwrap();
            let theirs = nums(&want["logits"]);
            assert_eq!(ours.len(), theirs.len(), "{case}");
            let rms = (theirs.iter().map(|v| v * v).sum::<f64>() / theirs.len() as f64).sqrt();
            let worst = ours
                .iter()
                .zip(&theirs)
                .map(|(&a, &b)| (a as f64 - b).abs() / b.abs().max(rms))
                .fold(0.0, f64::max);
            assert!(
                worst < 1e-4,
                "{case}: logits differ from PyTorch's by {worst:.2e} relative"
            );
            let prompt: Vec<u32> = nums(&want["prompt"]).iter().map(|&v| v as u32).collect();
            let steps = want["steps"].as_u64().unwrap() as usize;
            let out = pollster::block_on(sample_greedy(&model, &prompt, steps)).unwrap();
            let answer: Vec<u32> = nums(&want["greedy"]).iter().map(|&v| v as u32).collect();
            assert_eq!(
                out[prompt.len()..],
                answer[..],
                "{case}: greedy answer differs"
            );
        }
    }
}

/// The reader returns the file's names in order with their shapes; a synthesizer's head count is
/// read from w2 when not given; tensors that are views into one storage at an offset load right.
#[test]
fn state_dict_names_shapes_views_and_inferred_heads() {
    let sd = read_state_dict(&fixture("synthesizer.params"), "synthesizer.params").unwrap();
    // state_dict order: the GPT's own parameter first, then its submodules'.
    assert_eq!(sd[0].0, "pos_emb");
    assert_eq!(sd[0].1.shape, vec![1, 16, 16]);
    assert_eq!(sd[1].0, "tok_emb.weight");
    let w2 = sd.iter().find(|(n, _)| n == "blocks.1.attn.w2").unwrap();
    assert_eq!(w2.1.shape, vec![8, 15]);
    let mask = sd.iter().find(|(n, _)| n == "blocks.0.attn.mask").unwrap();
    assert_eq!(mask.1.values.iter().sum::<f32>(), (16 * 17 / 2) as f32);
    let cfg = config_of(&sd, &Expected::default(), "synthesizer.params").unwrap();
    assert_eq!((cfg.variant, cfg.n_head), (Variant::Synthesizer, 2));

    let sd = read_state_dict(&fixture("views.params"), "views.params").unwrap();
    let get = |n: &str| -> &TorchTensor { &sd.iter().find(|(k, _)| k == n).unwrap().1 };
    let half = |r: std::ops::Range<usize>| r.map(|i| i as f32 * 0.5).collect::<Vec<_>>();
    assert_eq!(get("ln_f.weight").values, half(0..8));
    assert_eq!(get("ln_f.bias").values, half(8..16));
    let small = Expected {
        variant: Some(Variant::Vanilla),
        n_head: Some(2),
        vocab: Some((20, "c")),
    };
    let model = from_bytes(
        &Device::cpu(),
        &fixture("views.params"),
        &small,
        "views.params",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        model.param("ln_f.bias").unwrap().value().read().unwrap(),
        half(8..16)
    );
}

/// Each kind of bad file: the message names the file, what it holds and what was expected.
#[test]
fn bad_files_are_refused_with_what_they_are() {
    let read = |name: &str| read_state_dict(&fixture(name), name);
    let cpu = Device::cpu();
    let small = Expected {
        variant: Some(Variant::Vanilla),
        n_head: Some(2),
        vocab: Some((20, "wiki.txt")),
    };
    let load = |name: &str, want: &Expected| from_bytes(&cpu, &fixture(name), want, name);

    // Not a zip: a safetensors checkpoint, text, nothing, the pre-1.6 format.
    let st = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parity/vanilla.safetensors"),
    )
    .unwrap();
    for (bytes, part) in [
        (st.as_slice(), "starts with"),
        (b"hello world".as_slice(), "68 65 6c 6c"),
        (b"".as_slice(), "it is empty"),
        (
            b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.".as_slice(),
            "legacy format",
        ),
    ] {
        let m = err(read_state_dict(bytes, "m.params"), part);
        has(&m, &["m.params", part]);
    }
    has(
        &err(read("bad_no_pickle.params"), "no pickle"),
        &[
            "bad_no_pickle.params",
            "no <name>/data.pkl",
            "model/version",
        ],
    );
    has(
        &err(read("bad_wrapped.params"), "wrapped"),
        &[
            "bad_wrapped.params",
            "entry 'epoch' is an int (3)",
            "state_dict",
            "checkpoint['model']",
        ],
    );
    has(
        &err(read("bad_whole_model.params"), "whole model"),
        &[
            "bad_whole_model.params",
            "a parity.GPT object",
            "torch.save(model.state_dict(), path)",
        ],
    );
    has(
        &err(read("bad_half.params"), "half"),
        &[
            "bad_half.params",
            "is float16 (torch.HalfStorage), expected float32",
        ],
    );
    has(
        &err(read("bad_strided.params"), "strided"),
        &[
            "'blocks.0.attn.proj.weight' is not contiguous",
            "stride [1, 8]",
        ],
    );
    has(
        &err(load("bad_shape.params", &small), "shape"),
        &[
            "bad_shape.params",
            "'blocks.0.attn.proj.weight' has shape [8, 4], expected [8, 8]",
        ],
    );
    has(
        &err(load("bad_names.params", &small), "names"),
        &[
            "bad_names.params",
            "lacks ln_f.bias",
            "has blocks.0.attn.rope.freqs that the model does not",
        ],
    );
    has(
        &err(load("bad_nan.params", &small), "nan"),
        &[
            "bad_nan.params",
            "'head.weight' holds a non-finite value (NaN) at element 29",
        ],
    );
    // Another variant, head count or vocabulary than asked for.
    let v = fixture("vanilla.params");
    let s = fixture("synthesizer.params");
    let ask = |variant, n_head, vocab| Expected {
        variant: Some(variant),
        n_head,
        vocab: Some((vocab, "wiki.txt")),
    };
    has(
        &err(
            from_bytes(
                &cpu,
                &v,
                &ask(Variant::Synthesizer, Some(2), 20),
                "v.params",
            ),
            "variant",
        ),
        &[
            "v.params holds a vanilla model",
            "a synthesizer model was asked for",
        ],
    );
    has(
        &err(
            from_bytes(
                &cpu,
                &s,
                &ask(Variant::Synthesizer, Some(8), 20),
                "s.params",
            ),
            "heads",
        ),
        &[
            "s.params holds a synthesizer model with 2 heads",
            "8 heads were asked for",
        ],
    );
    has(
        &err(
            from_bytes(&cpu, &v, &ask(Variant::Vanilla, Some(3), 20), "v.params"),
            "heads",
        ),
        &["v.params", "not divisible by n_head = 3"],
    );
    has(
        &err(
            from_bytes(&cpu, &v, &ask(Variant::Vanilla, Some(2), 23), "v.params"),
            "vocab",
        ),
        &[
            "v.params was trained with a vocabulary of 20",
            "wiki.txt gives 23",
            "pretraining corpus",
        ],
    );
}

/// Every truncation of a real file is an error that says so, never a panic.
#[test]
fn truncated_files_are_refused() {
    let bytes = fixture("views.params");
    for n in (0..bytes.len()).step_by(37).chain([bytes.len() - 1]) {
        let m = err(
            read_state_dict(&bytes[..n], "t.params"),
            &format!("cut at {n}"),
        );
        assert!(m.contains("t.params"), "{m}");
        if n >= 4 {
            assert!(m.contains("truncated"), "cut at {n}: {m}");
        }
    }
}

/// The entries of a zip archive, by name.
fn entries(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut v = vec![];
            f.read_to_end(&mut v).unwrap();
            (f.name().to_string(), v)
        })
        .collect()
}

/// A stored zip of `files`.
fn zip_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(vec![]));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, data) in files {
        w.start_file(name.as_str(), opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A storage entry missing or of the wrong length, and thousands of mangled pickles (bytes
/// changed, cut, or repeated, in a valid zip so that the CRC does not catch them first): always an
/// error naming the file (or, rarely, a still-valid state_dict), never a panic or a hang.
#[test]
fn mangled_archives_and_pickles_give_errors_not_panics() {
    let files = entries(&fixture("views.params"));
    assert!(read_state_dict(&zip_of(&files), "rezipped").is_ok());
    let without: Vec<_> = files
        .iter()
        .filter(|(n, _)| n != "views/data/3")
        .cloned()
        .collect();
    has(
        &err(read_state_dict(&zip_of(&without), "z.params"), "missing"),
        &["z.params has no views/data/3"],
    );
    let mut short = files.clone();
    short
        .iter_mut()
        .find(|(n, _)| n == "views/data/3")
        .unwrap()
        .1
        .pop();
    has(
        &err(read_state_dict(&zip_of(&short), "z.params"), "short"),
        &["z.params: views/data/3 has 31 bytes but its tensors need 32"],
    );

    let pkl_at = files
        .iter()
        .position(|(n, _)| n.ends_with("data.pkl"))
        .unwrap();
    let pkl = files[pkl_at].1.clone();
    // Instructions with nothing on the stack (above the last MARK): STOP pops, BUILD reads the top.
    for (bytes, what) in [
        (&b"\x80\x02."[..], "takes a value from an empty stack"),
        (&b"\x80\x02(."[..], "takes a value from an empty stack"),
        (&b"\x80\x02Nb."[..], "needs a value on an empty stack"),
    ] {
        let mut f = files.clone();
        f[pkl_at].1 = bytes.to_vec();
        has(
            &err(read_state_dict(&zip_of(&f), "e.params"), what),
            &["e.params", what],
        );
    }
    let mut rng = SmallRng::seed_from_u64(5);
    let (mut errors, mut oks) = (0, 0);
    for i in 0..3000 {
        let mut p = pkl.clone();
        match i % 3 {
            0 => {
                for _ in 0..rng.gen_range(1..4) {
                    let at = rng.gen_range(0..p.len());
                    p[at] = rng.gen();
                }
            }
            1 => p.truncate(rng.gen_range(0..p.len())),
            _ => {
                let a = rng.gen_range(0..p.len());
                let b = rng.gen_range(a..p.len().min(a + 64));
                let piece = p[a..b].to_vec();
                p.splice(a..a, piece);
            }
        }
        let mut f = files.clone();
        f[pkl_at].1 = p;
        match read_state_dict(&zip_of(&f), "fuzz.params") {
            Ok(_) => oks += 1,
            Err(e) => {
                assert!(e.to_string().starts_with("fuzz.params"), "{e}");
                errors += 1;
            }
        }
    }
    assert!(errors > 2500, "{errors} errors, {oks} accepted");
}

fn cli_dir(tag: &str, corpus: &str) -> common::Scratch {
    let d = common::fresh_dir("torch", tag);
    std::fs::write(d.join("wiki.txt"), corpus).unwrap();
    for f in ["vanilla.params", "bad_half.params"] {
        std::fs::copy(dir().join(f), d.join(f)).unwrap();
    }
    d
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `attnlab convert` writes our safetensors with the same values, the config read from the file
/// and the corpus's vocabulary; `evaluate` answers from the .params file and from the converted
/// checkpoint alike. 18 distinct characters (newline included) give the fixtures' vocab of 20.
#[test]
fn cli_converts_and_evaluates_course_params() {
    let d = cli_dir("ok", "abcdefghijklmnopq\n");
    std::fs::write(d.join("dev.tsv"), "abc\tdef\nqpo\tnml\nhij\tklm\n").unwrap();
    let out = common::run(
        &d,
        &[
            "convert",
            "vanilla",
            "wiki.txt",
            "--reading_params_path",
            "vanilla.params",
            "--writing_params_path",
            "vanilla.safetensors",
            "--n_head",
            "2",
            "--device",
            "cpu",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    common::no_tmp_left(&d);
    let st = std::fs::read(d.join("vanilla.safetensors")).unwrap();
    let cpu: Rc<Device> = Device::cpu();
    let (conv, header) = checkpoint::from_bytes(&cpu, &st, None, "vanilla.safetensors").unwrap();
    assert_eq!(header.vocab, "□⁇\nabcdefghijklmnopq");
    assert_eq!(
        (conv.cfg.block_size, conv.cfg.n_layer, conv.cfg.n_head),
        (16, 2, 2)
    );
    let sd = read_state_dict(&fixture("vanilla.params"), "vanilla.params").unwrap();
    for p in &conv.params {
        let (_, t) = sd.iter().find(|(n, _)| *n == p.name).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&p.var.value().read().unwrap()),
            bits(&t.values),
            "{}",
            p.name
        );
    }

    let out = common::run(
        &d,
        &[
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--reading_params_path",
            "vanilla.params",
            "--eval_corpus_path",
            "dev.tsv",
            "--outputs_path",
            "pred.txt",
            "--n_head",
            "2",
            "--device",
            "cpu",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("wrote 3 predictions"));
    // The converted checkpoint answers the same (the CLI would refuse its block of 16 without a
    // --block_size flag, so it is evaluated through the library the CLI calls).
    let text = std::fs::read_to_string(d.join("wiki.txt")).unwrap();
    let vocab = data::Vocab::from_text(&text, "wiki.txt").unwrap();
    let tsv = std::fs::read(d.join("dev.tsv")).unwrap();
    let rows = data::parse_tsv(&tsv, "dev.tsv", data::TsvMode::AnswersOptional).unwrap();
    let ev = pollster::block_on(run::evaluate(
        &conv,
        &vocab,
        &rows,
        "dev.tsv",
        &mut |_, _| {},
    ))
    .unwrap();
    let preds: String = ev.predictions.iter().map(|p| format!("{p}\n")).collect();
    assert_eq!(std::fs::read_to_string(d.join("pred.txt")).unwrap(), preds);
}

/// A bad .params file or the wrong corpus: exit 1 with a message naming the file and what was
/// expected, and the existing output is left as it was.
#[test]
fn cli_refuses_bad_params_and_keeps_the_output() {
    let d = cli_dir("bad", "abcdefghijklmnopq\n");
    let target = d.join("model.safetensors");
    std::fs::write(&target, b"previous model").unwrap();
    let convert = |dir: &Path, input: &str| {
        common::run(
            dir,
            &[
                "convert",
                "vanilla",
                "wiki.txt",
                "--reading_params_path",
                input,
                "--writing_params_path",
                "model.safetensors",
                "--n_head",
                "2",
                "--device",
                "cpu",
            ],
        )
    };
    let out = convert(&d, "bad_half.params");
    assert_eq!(out.status.code(), Some(1));
    has(
        &stderr(&out),
        &["bad_half.params", "float16", "expected float32"],
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"previous model");

    let d2 = cli_dir("corpus", "abcdefghijklmnopqrs\n");
    std::fs::write(d2.join("model.safetensors"), b"previous model").unwrap();
    let out = convert(&d2, "vanilla.params");
    assert_eq!(out.status.code(), Some(1));
    has(
        &stderr(&out),
        &["vanilla.params", "vocabulary of 20", "wiki.txt gives 22"],
    );
    assert_eq!(
        std::fs::read(d2.join("model.safetensors")).unwrap(),
        b"previous model"
    );
    common::no_tmp_left(&d);
    common::no_tmp_left(&d2);
}

/// A million nested tuples in a megabyte pickle (one TUPLE1 opcode each) are refused, and dropping
/// them does not overflow the stack (containers drop their contents without recursion).
#[test]
fn deeply_nested_pickle_is_refused_without_overflow() {
    let mut pkl = vec![0x80, 2, b']'];
    pkl.extend(std::iter::repeat_n(0x85u8, 1_000_000));
    pkl.push(b'.');
    let zip = zip_of(&[("x/data.pkl".to_string(), pkl)]);
    has(
        &err(read_state_dict(&zip, "deep.params"), "deep"),
        &["deep.params holds a tuple of 1", "expected a state_dict"],
    );
}

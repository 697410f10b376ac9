//! The CLI on `.params` files: `convert` and `evaluate`, and bad files refused with the output kept.

use super::bad_files::zip_of;
use super::{common, dir, err, fixture, has};
use attnlab::data;
use attnlab::model::checkpoint;
use attnlab::model::torch_params::read_state_dict;
use attnlab::train::run;
use attnlab::Device;
use std::path::Path;
use std::rc::Rc;

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

/// A .params file's sizes come from its shapes and its head count from the command: a size flag
/// that contradicts the shapes, or a head count that does not divide its width, is refused with
/// what to give (the flags were ignored, and a head count of 32 read as a damaged file).
#[test]
fn cli_names_the_flag_a_params_file_contradicts() {
    let d = cli_dir("sizes", "abcdefghijklmnopq\n");
    std::fs::write(d.join("q.tsv"), "Where was a born?\tb\n").unwrap();
    let eval = |extra: &[&str]| {
        let args = [
            &[
                "evaluate",
                "vanilla",
                "wiki.txt",
                "--reading_params_path",
                "vanilla.params",
                "--eval_corpus_path",
                "q.tsv",
                "--device",
                "cpu",
            ][..],
            extra,
        ]
        .concat();
        common::run(&d, &args)
    };
    for (extra, needles) in [
        (
            &["--n_head", "2", "--n_layer", "3"][..],
            &[
                "vanilla.params holds a model of 2 layers",
                "give --n_layer 2",
            ][..],
        ),
        (
            &["--n_head", "2", "--n_embd", "32"],
            &[
                "vanilla.params holds a model of width 16",
                "give --n_embd 16",
            ],
        ),
        (
            &["--n_head", "32"],
            &["width 16, which 32 heads do not divide", "a divisor of 16"],
        ),
        (
            &["--n_head", "3"],
            &["--n_head 3 does not divide the width 256, the default"],
        ),
    ] {
        let out = eval(extra);
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        has(&stderr(&out), needles);
    }
    // The sizes it has, given, are accepted.
    let out = eval(&["--n_head", "2", "--n_layer", "2", "--n_embd", "16"]);
    assert!(out.status.success(), "{}", stderr(&out));
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

//! Refusals that keep a user's files and time safe: a learning rate that overflows f32, a resume
//! of another kind of run or batch size, inputs that are no regular file or too big, an absurd
//! `--people`, and messages that name the file and the right fix. Each: exit 1, a message, no
//! panic, and every existing file unchanged.

use attnlab::data::CorpusSizes;
use std::path::Path;

use crate::common;
use common::run;

fn dir(tag: &str) -> common::Scratch {
    common::corpus_dir(
        "safety",
        tag,
        13,
        CorpusSizes {
            train: 6,
            dev: 3,
            test: 2,
        },
    )
}

/// Exit 1, every needle in stderr, none of `absent`, no panic; returns stderr.
fn refused(d: &Path, args: &[&str], needles: &[&str], absent: &[&str]) -> String {
    let e = common::refused(d, args, 1, needles);
    for n in absent {
        assert!(!e.contains(n), "stderr of {args:?} has {n:?}: {e}");
    }
    common::no_tmp_left(d);
    e
}

fn pretrain<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "pretrain",
        "vanilla",
        "wiki.txt",
        "--tiny",
        "--batch_size",
        "4",
        "--writing_params_path",
        out,
    ];
    v.extend(extra);
    v
}

#[test]
fn a_learning_rate_beyond_f32_is_refused_and_the_good_checkpoint_kept() {
    let d = dir("lr");
    let o = run(&d, &pretrain("good.st", &["--max_steps", "1"]));
    assert!(o.status.success());
    let good = std::fs::read(d.join("good.st")).expect("good");
    let state = std::fs::read(d.join("good.st.resume")).expect("state");
    for lr in ["1e39", "3.5e38", "inf"] {
        refused(
            &d,
            &pretrain("good.st", &["--max_steps", "1", "--learning_rate", lr]),
            &["--learning_rate", "at most 3.4e38"],
            &[],
        );
    }
    // A rate that fits f32 but still blows the weights up in one step: nothing is written.
    refused(
        &d,
        &pretrain("good.st", &["--max_steps", "1", "--learning_rate", "1e38"]),
        &[
            "diverged",
            "after step 1",
            "good.st and good.st.resume were not written",
        ],
        &["saved"],
    );
    assert_eq!(std::fs::read(d.join("good.st")).expect("read"), good);
    assert_eq!(
        std::fs::read(d.join("good.st.resume")).expect("read"),
        state
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_resume_of_another_run_kind_or_batch_size_is_refused() {
    let d = dir("resume");
    let o = run(&d, &pretrain("pre.st", &["--max_steps", "1"]));
    assert!(o.status.success());
    refused(
        &d,
        &[
            "finetune",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--batch_size",
            "4",
            "--finetune_corpus_path",
            "train.tsv",
            "--writing_params_path",
            "fine.st",
            "--resume",
            "pre.st.resume",
        ],
        &[
            "--resume pre.st.resume",
            "state of a pretrain run",
            "finetune",
        ],
        &[],
    );
    assert!(!d.join("fine.st").exists());
    refused(
        &d,
        &pretrain("pre.st", &["--resume", "pre.st.resume", "--max_steps", "2"])
            .into_iter()
            .map(|a| if a == "4" { "2" } else { a })
            .collect::<Vec<_>>(),
        &["--batch_size 4", "--batch_size 2", "pre.st.resume"],
        &[],
    );
    // Nothing left to do is said, not passed over with exit 0.
    refused(
        &d,
        &pretrain("pre.st", &["--resume", "pre.st.resume", "--max_steps", "1"]),
        &["pre.st.resume", "already the end", "--max_steps"],
        &[],
    );
    // The same run goes on.
    let o = run(
        &d,
        &pretrain("pre.st", &["--resume", "pre.st.resume", "--max_steps", "2"]),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.contains("--learning_rate"), "{out}");
    // Another learning rate is allowed (lowering it is a way to go on) and said.
    let o = run(
        &d,
        &pretrain(
            "pre.st",
            &[
                "--resume",
                "pre.st.resume",
                "--max_steps",
                "3",
                "--learning_rate",
                "0.001",
            ],
        ),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("pre.st.resume was saved by a run with --learning_rate")
            && out.contains("this one goes on with 0.001"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[cfg(unix)]
#[test]
fn inputs_that_are_no_regular_file_or_too_big_are_refused_naming_them() {
    let d = dir("inputs");
    let fifo = d.join("fifo.txt");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if made {
        refused(
            &d,
            &pretrain("out.st", &["--max_steps", "1"])
                .into_iter()
                .map(|a| if a == "wiki.txt" { "fifo.txt" } else { a })
                .collect::<Vec<_>>(),
            &["fifo.txt", "not a regular file"],
            &[],
        );
    } else {
        println!("skipped the FIFO: mkfifo failed");
    }
    refused(
        &d,
        &[
            "london",
            "--eval_corpus_path",
            "/dev/zero",
            "--outputs_path",
            "out.txt",
        ],
        &["/dev/zero", "not a regular file"],
        &[],
    );
    // A sparse file of 3 GiB: refused from its size, without reading it.
    let big = std::fs::File::create(d.join("big.tsv")).expect("create");
    big.set_len(3 << 30).expect("set_len");
    refused(
        &d,
        &[
            "london",
            "--eval_corpus_path",
            "big.tsv",
            "--outputs_path",
            "out.txt",
        ],
        &["big.tsv", "3221225472 bytes", "2 GiB"],
        &[],
    );
    assert!(!d.join("out.txt").exists() && !d.join("out.st").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn corpus_people_is_bounded() {
    let d = common::fresh_dir("safety", "people");
    for n in ["100001", "1000000000000", &usize::MAX.to_string()] {
        refused(
            &d,
            &["corpus", "--out_dir", "out", "--people", n],
            &["--people", "at most 100000"],
            &[],
        );
    }
    assert!(!d.join("out").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn messages_name_the_file_and_the_right_fix() {
    let d = dir("messages");
    // One row without a final newline: the course's NameDataset drops it.
    std::fs::write(d.join("one.tsv"), "Where was Ab born?\tParis").expect("write");
    refused(
        &d,
        &[
            "finetune",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--finetune_corpus_path",
            "one.tsv",
            "--writing_params_path",
            "fine.st",
        ],
        &["one.tsv", "final newline"],
        &[],
    );
    let o = run(&d, &pretrain("pre.st", &["--max_steps", "1"]));
    assert!(o.status.success());
    let good = std::fs::read(d.join("pre.st")).expect("read");
    std::fs::write(d.join("cut.st"), &good[..good.len() / 2]).expect("write");
    let eval = |ck: &'static str, tiny: bool| {
        let mut v = vec!["evaluate", "vanilla", "wiki.txt"];
        if tiny {
            v.push("--tiny");
        }
        v.extend(["--reading_params_path", ck, "--eval_corpus_path", "dev.tsv"]);
        v
    };
    let fix = "trained with";
    refused(&d, &eval("cut.st", true), &["cut.st", "truncated"], &[fix]);
    // The checkpoint records its sizes, so a command without --tiny takes them from it,
    let o = run(&d, &eval("pre.st", false));
    assert!(
        o.status.success(),
        "a checkpoint's recorded sizes were not used:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // and a fix is added where the command and the checkpoint differ, naming what differs:
    // the variant,
    let mut synth = eval("pre.st", true);
    synth[1] = "synthesizer";
    refused(
        &d,
        &synth,
        &["it is a vanilla model: give vanilla as the variant"],
        &[],
    );
    // the corpus (forgotten: the built-in one has another vocabulary),
    let mut no_corpus = eval("pre.st", true);
    no_corpus.remove(2);
    refused(
        &d,
        &no_corpus,
        &[
            "it was trained on another text",
            "pass the pretrain_corpus_path",
        ],
        &[],
    );
    // and sizes given by flags.
    let sized = ["--n_layer", "1", "--n_head", "2", "--n_embd", "16"];
    let mut args = pretrain("small.st", &["--max_steps", "1"]);
    args.retain(|a| *a != "--tiny");
    args.extend(sized);
    assert!(run(&d, &args).status.success());
    refused(
        &d,
        &eval("small.st", true),
        &[
            "--tiny asks for 2 layers, 4 heads, width 64",
            "small.st records 1 layer, 2 heads, width 16",
            "leave --tiny out",
        ],
        &[],
    );
    let mut wider = eval("small.st", false);
    wider.extend(["--n_embd", "32"]);
    refused(
        &d,
        &wider,
        &[
            "small.st records --n_embd 16",
            "the command gives --n_embd 32",
            "give --n_embd 16",
        ],
        &[],
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Under an address-space limit (`ulimit -v`, as a shared machine or a batch system sets) a run
/// the limit cannot hold is refused with the estimate before it allocates: it used to count only
/// the machine's free memory and then abort mid-step (SIGABRT, "memory allocation … failed").
#[cfg(target_os = "linux")]
#[test]
fn a_run_beyond_the_process_memory_limit_is_refused_not_aborted() {
    let d = dir("ulimit");
    let cmd = format!(
        "ulimit -v 1500000 && exec '{}' pretrain vanilla wiki.txt --device cpu --max_steps 1 \
         --writing_params_path big.st",
        common::BIN
    );
    let o = std::process::Command::new("sh")
        .args(["-c", &cmd])
        .current_dir(&*d)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .expect("sh");
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("does not fit") && e.contains("this process may still use"),
        "{e}"
    );
    assert!(!d.join("big.st").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// `sh -c 'ulimit -v KIB; exec attnlab ARGS'` in `d`: the run under an address-space limit.
#[cfg(target_os = "linux")]
fn under_ulimit(d: &Path, kib: u64, args: &str) -> std::process::Output {
    let cmd = format!("ulimit -v {kib} && exec '{}' {args}", common::BIN);
    std::process::Command::new("sh")
        .args(["-c", &cmd])
        .current_dir(d)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .expect("sh")
}

/// The save is counted with the step: a model whose step fits an 8 GB address space but whose
/// saved state does not (weights and moments read back and serialized, 2.3 GiB each) is refused
/// before training; it used to train, then abort allocating while it serialized, saving nothing.
#[cfg(target_os = "linux")]
#[test]
fn a_run_whose_save_does_not_fit_is_refused_before_training() {
    let d = dir("savefit");
    let o = under_ulimit(
        &d,
        8_000_000,
        "pretrain vanilla wiki.txt --device cpu --n_head 4096 --n_embd 4096 --n_layer 1 \
         --batch_size 1 --max_steps 1 --writing_params_path big.st",
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("does not fit") && e.contains("to save the run"),
        "{e}"
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("number of parameters"));
    assert!(!d.join("big.st").exists() && !d.join("big.st.lock").exists());
}

/// A corpus whose data pipeline (about 8 bytes per byte) exceeds the memory left is refused
/// before it is read, naming it and the size that fits; a sparse 1 GB file under a 4 GB limit
/// used to be read and then abort the process allocating its copies.
#[cfg(target_os = "linux")]
#[test]
fn a_corpus_the_memory_cannot_hold_is_refused_before_reading() {
    let d = dir("bigcorpus");
    let f = std::fs::File::create(d.join("sparse.txt")).expect("create");
    f.set_len(1_000_000_000).expect("sparse file");
    let t0 = std::time::Instant::now();
    let o = under_ulimit(
        &d,
        4_000_000,
        "pretrain vanilla sparse.txt --tiny --device cpu --max_steps 1 --writing_params_path s.st",
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("the corpus sparse.txt is 954 MiB")
            && e.contains("this process may still use")
            && e.contains("give a smaller corpus"),
        "{e}"
    );
    assert!(t0.elapsed().as_secs() < 10, "not refused before reading");
}

/// `bytes` (safetensors) rewritten: `edit` may change each tensor's f32 values, then the metadata
/// entry `key` set to `value` (when given).
fn rewrite(bytes: &[u8], edit: impl Fn(&str, &mut [f32]), meta: Option<(&str, &str)>) -> Vec<u8> {
    use safetensors::{tensor::TensorView, Dtype, SafeTensors};
    let (_, header) = SafeTensors::read_metadata(bytes).expect("header");
    let mut m = header.metadata().clone().unwrap_or_default();
    if let Some((k, v)) = meta {
        m.insert(k.into(), v.into());
    }
    let st = SafeTensors::deserialize(bytes).expect("state");
    let data: Vec<(String, Vec<usize>, Vec<u8>)> = st
        .tensors()
        .into_iter()
        .map(|(name, view)| {
            let mut vals: Vec<f32> = view
                .data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            edit(&name, &mut vals);
            let b = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
            (name, view.shape().to_vec(), b)
        })
        .collect();
    let views = data.iter().map(|(n, s, b)| {
        (
            n.clone(),
            TensorView::new(Dtype::F32, s.clone(), b).expect("view"),
        )
    });
    safetensors::serialize(views, Some(m)).expect("serialize")
}

/// A damaged state is called damaged: a negative second moment is not "lower --learning_rate"
/// (the run did not diverge), and a recorded batch of 0 does not advise "--batch_size 0".
#[test]
fn a_damaged_state_is_called_damaged_not_given_a_wrong_fix() {
    let d = dir("damaged");
    let o = run(&d, &pretrain("pre.st", &["--max_steps", "1"]));
    assert!(o.status.success());
    let state = std::fs::read(d.join("pre.st.resume")).expect("state");
    let negative = rewrite(
        &state,
        |name, vals| {
            if name == "optim.v.head.weight" {
                vals[3] = -1.0;
            }
        },
        None,
    );
    std::fs::write(d.join("neg.st"), negative).expect("write");
    refused(
        &d,
        &pretrain("pre.st", &["--resume", "neg.st", "--max_steps", "3"]),
        &[
            "neg.st is damaged",
            "optim.v.head.weight[3] is negative",
            "without --resume",
        ],
        &["--learning_rate"],
    );
    let zero = rewrite(&state, |_, _| {}, Some(("attnlab.batch_size", "0")));
    std::fs::write(d.join("zero.st"), zero).expect("write");
    refused(
        &d,
        &pretrain("pre.st", &["--resume", "zero.st", "--max_steps", "3"]),
        &["zero.st is damaged", "--batch_size 0, which no run has"],
        &["resume with --batch_size 0"],
    );
}

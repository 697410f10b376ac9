//! Checkpoints refused or kept: a damaged one (truncated, empty, a non-finite weight, the right
//! variant at the wrong size) and a batch too big for the device are refused with exit 1 and no
//! output; a save that fails on the training state leaves the checkpoint and its state together.

use super::errors::fails;
use super::{corpus_dir, stderr};
use crate::common::{no_tmp_left, run, run_env};
use attnlab::data::Vocab;
use attnlab::model::{checkpoint, Gpt, GptConfig, Variant};
use attnlab::Device;

#[test]
fn damaged_checkpoints_and_impossible_sizes_are_refused() {
    let dir = corpus_dir("ckpt");
    let wiki = std::fs::read_to_string(dir.join("wiki.txt")).expect("read");
    let vocab = Vocab::from_text(&wiki, "wiki.txt").expect("vocab");
    let dev = Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"));
    let model = Gpt::new(&dev, GptConfig::tiny(Variant::Vanilla, vocab.len()), 1).expect("model");
    let itos: String = vocab.itos.iter().collect();
    let good = pollster::block_on(checkpoint::to_bytes(&model, &itos)).expect("bytes");
    let eval = |ck: &str| {
        [
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--reading_params_path",
            ck,
            "--eval_corpus_path",
            "dev.tsv",
            "--outputs_path",
            "pred.txt",
        ]
        .map(String::from)
    };
    let fails_on = |ck: &str, needle: &str| {
        let args = eval(ck);
        fails(
            &dir,
            &args.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            needle,
            "pred.txt",
        );
    };
    // Truncated, and bytes flipped inside the tensor data's header.
    std::fs::write(dir.join("trunc.st"), &good[..good.len() / 2]).expect("write");
    fails_on(
        "trunc.st",
        "trunc.st is not a readable safetensors checkpoint",
    );
    std::fs::write(dir.join("empty.st"), b"").expect("write");
    fails_on("empty.st", "empty.st is empty (0 bytes)");
    // A non-finite weight.
    let w = model.param("head.weight").expect("head");
    let mut vals = w.value().read().expect("read");
    vals[5] = f32::NAN;
    w.value().write_f32(&vals).expect("write");
    let nan = pollster::block_on(checkpoint::to_bytes(&model, &itos)).expect("bytes");
    std::fs::write(dir.join("nan.st"), nan).expect("write");
    fails_on("nan.st", "tensor 'head.weight' holds a non-finite value");
    // The right variant at a size the command's flags contradict (a tiny checkpoint, which
    // records its sizes, asked for as 4 layers): refused with both values.
    std::fs::write(dir.join("good.st"), &good).expect("write");
    fails(
        &dir,
        &[
            "evaluate",
            "vanilla",
            "wiki.txt",
            "--n_layer",
            "4",
            "--reading_params_path",
            "good.st",
            "--eval_corpus_path",
            "dev.tsv",
            "--outputs_path",
            "pred.txt",
        ],
        "good.st records --n_layer 2 (2 layers, 4 heads, width 64), but the command gives --n_layer 4",
        "pred.txt",
    );
    // A batch too big for the device is refused before anything is allocated: on the GPU a buffer
    // beyond the binding limit; on the CPU backend an attention map beyond its per-tensor limit.
    for (device, batch, limit) in [
        ("gpu", "4096", "max_storage_buffer_binding_size"),
        ("cpu", "65536", "CPU tensor size limit"),
    ] {
        fails(
            &dir,
            &[
                "pretrain",
                "vanilla",
                "--device",
                device,
                "--batch_size",
                batch,
                "--max_steps",
                "1",
                "--writing_params_path",
                "big.st",
            ],
            limit,
            "big.st",
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A save that cannot write the training state (a full disk, injected after the checkpoint's
/// temporary was written) still writes the checkpoint and says which was kept; the state left
/// there does not go with it, so --resume refuses it; a folder where the state goes is refused
/// before training; a probe file is an input that no output may overwrite.
#[test]
fn a_failed_save_keeps_the_checkpoint_and_its_state_together() {
    let dir = corpus_dir("pair");
    let train = |seed: &'static str, out: &'static str| {
        [
            "pretrain",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--max_epochs",
            "1",
            "--seed",
            seed,
            "--writing_params_path",
            out,
        ]
    };
    let o = run(&dir, &train("1", "m.st"));
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |f: &str| std::fs::read(dir.join(f)).expect("read");
    let (ck, state) = (read("m.st"), read("m.st.resume"));
    let o = run_env(
        &dir,
        &train("2", "m.st"),
        &[("ATTNLAB_FAULT_FAIL_BEFORE_RENAME", ".resume")],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("could not write m.st.resume: injected fault")
            && stderr(&o).contains("saved the checkpoint m.st (the trained model) without its")
            && stderr(&o).contains("m.st.resume is left as it was"),
        "{}",
        stderr(&o)
    );
    assert_ne!(read("m.st"), ck, "the trained model was not kept");
    assert_eq!(
        read("m.st.resume"),
        state,
        "the training state was replaced"
    );
    no_tmp_left(&dir);
    // The old state (seed 1's) does not go with the new checkpoint (seed 2's).
    let kept = read("m.st");
    let mut more = train("1", "m.st").to_vec();
    more[5] = "2";
    more.extend(["--resume", "m.st.resume"]);
    refused(
        &dir,
        &more,
        "--resume m.st.resume does not go with the checkpoint --writing_params_path m.st",
    );
    assert_eq!(read("m.st"), kept);

    std::fs::create_dir(dir.join("f.st.resume")).expect("mkdir");
    fails(&dir, &train("1", "f.st"), "f.st.resume is a folder", "f.st");

    let dev = read("dev.tsv");
    let mut args = train("1", "dev.tsv").to_vec();
    args.extend(["--probe_corpus_path", "dev.tsv"]);
    let o = run(&dir, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is the same file as --probe_corpus_path dev.tsv"),
        "{}",
        stderr(&o)
    );
    assert_eq!(read("dev.tsv"), dev, "the probe file was overwritten");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A checkpoint and its state always go together: a run stopped between renaming its checkpoint
/// and its state leaves the new checkpoint beside the state of an earlier epoch, and --resume of
/// that state is refused with the fix instead of training again over the newer checkpoint; the
/// pair a whole run leaves resumes.
#[test]
fn a_state_that_is_not_its_checkpoints_pair_is_refused() {
    let dir = corpus_dir("mismatch");
    let train = |epochs: &'static str| {
        [
            "pretrain",
            "vanilla",
            "wiki.txt",
            "--tiny",
            "--batch_size",
            "64",
            "--max_epochs",
            epochs,
            "--writing_params_path",
            "k.st",
        ]
    };
    let o = run_env(
        &dir,
        &train("2"),
        &[("ATTNLAB_FAULT_EXIT_AFTER_RENAME", "k.st")],
    );
    assert_eq!(o.status.code(), Some(137), "{}", stderr(&o));
    let read = |f: &str| std::fs::read(dir.join(f)).expect("read");
    let newer = read("k.st");
    // The state there is the first epoch's, saved beside no checkpoint.
    let meta = checkpoint::metadata_of(&read("k.st.resume"), "k.st.resume").expect("state");
    assert_eq!(
        meta.get("attnlab.checkpoint").map(String::as_str),
        Some("none"),
        "{meta:?}"
    );
    let mut resume = train("2").to_vec();
    resume.extend(["--resume", "k.st.resume"]);
    let e = refused(
        &dir,
        &resume,
        "--resume k.st.resume does not go with the checkpoint --writing_params_path k.st",
    );
    assert!(e.contains("give another --writing_params_path"), "{e}");
    assert_eq!(read("k.st"), newer, "the newer checkpoint was replaced");
    // Moved away as the message says, the state resumes; that run's pair resumes in turn.
    std::fs::rename(dir.join("k.st"), dir.join("newer.st")).expect("move");
    let o = run(&dir, &resume);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut again = train("3").to_vec();
    again.extend(["--resume", "k.st.resume"]);
    let o = run(&dir, &again);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Exit 1 with `needle` in stderr and no panic; returns stderr.
fn refused(dir: &std::path::Path, args: &[&str], needle: &str) -> String {
    let o = run(dir, args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
    assert!(e.contains(needle), "stderr lacks {needle:?}: {e}");
    assert!(!e.contains("panicked"), "{e}");
    e
}

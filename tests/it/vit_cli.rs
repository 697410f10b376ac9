//! `attnlab vit train|evaluate` end to end on the CPU backend at a tiny size: a checkpoint is
//! written and evaluated, bad flags and files are one message and exit code 1 (2 for a usage
//! error), and a run whose checkpoint cannot be written leaves the existing file as it was.

use std::path::Path;
use std::process::Command;

fn run(args: &[&str]) -> (bool, String) {
    run_env(args, &[])
}

fn run_env(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_attnlab"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run attnlab");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        // 2 for a usage error (an unknown flag, a value that is not a number), as argparse.
        let usage = text.contains("For more information, try '--help'");
        assert_eq!(out.status.code(), Some(if usage { 2 } else { 1 }), "{text}");
    }
    (out.status.success(), text)
}

fn train(out: &Path) -> (bool, String) {
    train_env(out, &[])
}

fn train_env(out: &Path, env: &[(&str, &str)]) -> (bool, String) {
    run_env(
        &[
            "vit",
            "train",
            "--device",
            "cpu",
            "--steps",
            "40",
            "--batch",
            "16",
            "--width",
            "16",
            "--heads",
            "2",
            "--layers",
            "1",
            "--test-size",
            "100",
            "--eval-every",
            "20",
            "--out",
            out.to_str().unwrap(),
        ],
        env,
    )
}

#[test]
fn vit_cli_trains_saves_and_evaluates() {
    let dir = std::env::temp_dir().join(format!("attnlab-vit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ck = dir.join("v.safetensors");
    let (ok, text) = train(&ck);
    assert!(ok, "{text}");
    // Step 20's line (not a multiple of the 25 steps the loss is read at) gives its loss, not
    // NaN, and says how many images it measured.
    let line = text
        .lines()
        .find(|l| l.starts_with("step 20: loss "))
        .unwrap_or_else(|| panic!("no line for step 20:\n{text}"));
    let loss: f32 = line["step 20: loss ".len()..]
        .split(',')
        .next()
        .and_then(|x| x.parse().ok())
        .unwrap_or(f32::NAN);
    assert!(
        loss.is_finite() && loss > 0.0 && line.ends_with("(of 100 images)"),
        "{line}"
    );
    assert!(ck.is_file() && !dir.join("v.safetensors.tmp").exists());
    let (ok, text) = run(&[
        "vit",
        "evaluate",
        "--device",
        "cpu",
        "--test-size",
        "100",
        "--model",
        ck.to_str().unwrap(),
    ]);
    assert!(
        ok && text.contains("held-out accuracy:") && text.contains("of 100"),
        "{text}"
    );

    // A failed write (injected after the temporary file is written, as a full disk would) leaves
    // the good checkpoint alone and no temporary behind.
    let before = std::fs::read(&ck).unwrap();
    let (ok, text) = train_env(&ck, &[("ATTNLAB_FAULT_FAIL_BEFORE_RENAME", "1")]);
    assert!(!ok && text.contains("could not write"), "{text}");
    assert_eq!(std::fs::read(&ck).unwrap(), before);
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "left behind {name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn vit_cli_refuses_bad_input_with_one_message() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["vit", "train", "--patch", "5"],
            "must divide the image side",
        ),
        (&["vit", "train", "--heads", "3"], "must divide n_embd"),
        (&["vit", "train", "--lr", "2"], "--lr 2 must be in (0, 1)"),
        (&["vit", "train", "--steps", "0"], "--steps"),
        (
            &["vit", "train", "--out", "/nonexistent-folder/v.st"],
            "does not exist",
        ),
        (
            &["vit", "evaluate", "--model", "/nonexistent-file"],
            "cannot read",
        ),
        (
            &[
                "vit",
                "evaluate",
                "--model",
                "Cargo.toml",
                "--device",
                "cpu",
            ],
            "Cargo.toml is text, not a model file",
        ),
        (
            &["vit", "evaluate", "--model", "/dev/zero", "--device", "cpu"],
            "/dev/zero: it is not a regular file",
        ),
        (
            &[
                "vit",
                "evaluate",
                "--model",
                "web/models/builtin-vanilla.safetensors",
                "--device",
                "cpu",
            ],
            "not a ViT",
        ),
        (&["vit", "bogus"], "unrecognized subcommand"),
        (
            &["vit", "train", "--patch", "1", "--batch", "512"],
            "too much memory",
        ),
        (
            &["vit", "train", "--width", "4096", "--heads", "4"],
            "too much memory",
        ),
        (
            &[
                "vit",
                "evaluate",
                "--test-size",
                "1000000",
                "--model",
                "web/models/vit-digits.safetensors",
            ],
            "--test-size 1000000 must be in 1..=100000",
        ),
        // The snake-case spellings of run.py's flags (the rest of the CLI) are taken too.
        (
            &[
                "vit",
                "evaluate",
                "--test_size",
                "0",
                "--model",
                "web/models/vit-digits.safetensors",
            ],
            "--test-size 0 must be in 1..=100000",
        ),
        (
            &["vit", "train", "--eval_every", "10", "--steps", "0"],
            "--steps must be in 1..=1000000",
        ),
        (
            &["vit", "train", "--steps", "18446744073709551615"],
            "--steps must be in 1..=1000000",
        ),
        // A folder that takes no new files (procfs, even for root): refused before training.
        (
            &["vit", "train", "--out", "/proc/v.safetensors"],
            "cannot create files in the folder /proc",
        ),
    ];
    // A ViT of another image size and class count (written by the library, not `vit train`):
    // evaluating it on the digits names both.
    let dir = std::env::temp_dir().join(format!("attnlab-vit-odd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let odd = dir.join("odd.safetensors");
    let dev = attnlab::Device::cpu();
    let cfg = attnlab::model::vit::VitConfig {
        image: 14,
        classes: 2,
        ..attnlab::model::vit::VitConfig::small()
    };
    let model = attnlab::model::vit::Vit::new(&dev, cfg, 0).unwrap();
    let bytes = pollster::block_on(attnlab::model::vit::checkpoint::to_bytes(&model, &[])).unwrap();
    std::fs::write(&odd, bytes).unwrap();
    let (ok, text) = run(&[
        "vit",
        "evaluate",
        "--device",
        "cpu",
        "--model",
        odd.to_str().unwrap(),
    ]);
    assert!(
        !ok && text.contains("reads 14×14 images into 2 classes, but the digits are 28×28 with 10"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"/tmp/\xff.safetensors");
        let out = Command::new(env!("CARGO_BIN_EXE_attnlab"))
            .args(["vit", "evaluate", "--device", "cpu", "--model"])
            .arg(bad)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(
            text.contains("cannot read") && !text.contains("panicked"),
            "{text}"
        );
    }
    for (args, want) in cases {
        let (ok, text) = run(args);
        assert!(!ok && text.contains(want), "{args:?}: {text}");
        assert!(!text.contains("panicked"), "{args:?}: {text}");
    }
}

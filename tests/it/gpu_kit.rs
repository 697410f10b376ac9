//! The GPU machine's kit and check (`scripts/gpu-kit.sh`, `scripts/gpu-check.sh`), tried here with
//! no GPU: `gpu-check.sh --dry-run` on whatever adapter wgpu finds (lavapipe in CI) at tiny sizes,
//! every stage, against a small kit made from this test build (its CLI and `bench`, this very test
//! binary as the kit's one test binary, the embedded corpus's files as the course's). Also the
//! hardware requirement (`ATTNLAB_REQUIRE_HARDWARE_GPU=1`: a software adapter is an error) and the
//! script's errors for a missing kit and a missing `$OUT`. Needs no GPU.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("attnlab-gpu-kit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
}

fn check(args: &[&str], out: Option<&Path>) -> Output {
    let mut c = Command::new("bash");
    c.arg(root().join("scripts/gpu-check.sh"))
        .args(args)
        .current_dir(root())
        .env_remove("OUT")
        .env_remove("ATTNLAB_REQUIRE_HARDWARE_GPU");
    if let Some(o) = out {
        c.env("OUT", o);
    }
    c.output().expect("run gpu-check.sh")
}

/// A kit as gpu-kit.sh lays it out, from this test build (no cargo run inside a test).
fn small_kit(dir: &Path) -> PathBuf {
    let kit = dir.join("kit");
    for sub in ["bin", "tests", "gl", "data", "scripts"] {
        std::fs::create_dir_all(kit.join(sub)).unwrap();
    }
    let attnlab = env!("CARGO_BIN_EXE_attnlab");
    let bench = env!("CARGO_BIN_EXE_bench");
    std::fs::copy(attnlab, kit.join("bin/attnlab")).unwrap();
    std::fs::copy(bench, kit.join("bin/bench")).unwrap();
    std::fs::copy(std::env::current_exe().unwrap(), kit.join("tests/gpu_kit")).unwrap();
    for s in [
        "bench_peers.py",
        "parity.py",
        "gpu-check.sh",
        "gpu-check-lib.sh",
        "long-run.sh",
    ] {
        std::fs::copy(root().join("scripts").join(s), kit.join("scripts").join(s)).unwrap();
    }
    let o = Command::new(attnlab)
        .args(["corpus", "--tiny", "--out_dir"])
        .arg(kit.join("data"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // The course's test questions come without answers; the dev file stands in for them here.
    std::fs::copy(
        kit.join("data/birth_dev.tsv"),
        kit.join("data/birth_test_inputs.tsv"),
    )
    .unwrap();
    std::fs::write(
        kit.join("kit.env"),
        format!(
            "KIT_COMMIT=test\nKIT_BUILT=now\nKIT_RUSTC='test build'\nKIT_TARGET_CPU=native\n\
             KIT_MANIFEST_DIR={}\nKIT_BIN_EXE_attnlab={attnlab}\nKIT_BIN_EXE_bench={bench}\n",
            root().display()
        ),
    )
    .unwrap();
    kit
}

/// What the dry run's stage b runs: cheap, and no GPU needed to pass.
#[test]
fn require_hardware_gpu_refuses_a_software_adapter_and_nothing_else() {
    let info = |require: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_bench"));
        c.args(["--device", "gpu", "--info"]);
        if require {
            c.env("ATTNLAB_REQUIRE_HARDWARE_GPU", "1");
        } else {
            c.env_remove("ATTNLAB_REQUIRE_HARDWARE_GPU");
        }
        c.output().expect("run bench")
    };
    let free = info(false);
    if !free.status.success() {
        // No adapter at all: then the requirement cannot change anything either.
        assert!(text(&free).contains("no GPU adapter"), "{}", text(&free));
        return;
    }
    let t = text(&free);
    assert!(t.contains("adapter: ") && t.contains("limits: "), "{t}");
    let software = t.contains("software adapter: true");
    let required = info(true);
    if software {
        assert!(
            !required.status.success(),
            "a software adapter was accepted:\n{}",
            text(&required)
        );
        let e = text(&required);
        assert!(
            e.contains("ATTNLAB_REQUIRE_HARDWARE_GPU is set") && e.contains("VK_DRIVER_FILES"),
            "the error says why and what to do:\n{e}"
        );
    } else {
        assert!(required.status.success(), "{}", text(&required));
    }
}

/// Without --dry-run a hardware GPU is required: on a software adapter stage a fails, says why,
/// and the GPU stages are skipped rather than run on it. (On a hardware GPU, stage a passes.)
#[test]
fn gpu_check_without_dry_run_refuses_a_software_adapter() {
    let info = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["--device", "gpu", "--info"])
        .env_remove("ATTNLAB_REQUIRE_HARDWARE_GPU")
        .output()
        .expect("run bench");
    let dir = tmp("hw");
    let kit = small_kit(&dir);
    let out = dir.join("out");
    let o = check(
        &[
            "--kit",
            kit.to_str().unwrap(),
            "--stages",
            "a,c",
            "--budget",
            "60",
        ],
        Some(&out),
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap_or_default();
    if text(&info).contains("software adapter: false") {
        assert!(o.status.success(), "{}", text(&o));
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(summary.contains("| a loader | FAILED (1) |"), "{summary}");
    assert!(
        summary.contains("ATTNLAB_REQUIRE_HARDWARE_GPU is set")
            || summary.contains("no GPU adapter"),
        "{summary}"
    );
    assert!(
        summary.contains("| c bench | skipped | 0 | no hardware GPU adapter (stage a) |"),
        "{summary}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gpu_check_says_what_to_do_without_a_kit_or_out() {
    let dir = tmp("errors");
    let o = check(&["--kit", dir.join("none").to_str().unwrap()], Some(&dir));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("scripts/gpu-kit.sh"), "{}", text(&o));
    let kit = small_kit(&dir);
    let o = check(&["--kit", kit.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("OUT is not set"), "{}", text(&o));
    let o = check(
        &["--kit", kit.to_str().unwrap(), "--stages", "x"],
        Some(&dir),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gpu_check_dry_run_passes_every_stage_here() {
    let dir = tmp("dry");
    let kit = small_kit(&dir);
    let out = dir.join("out");
    let runs = dir.join("runs");
    let run = |stages: &str| {
        let mut c = Command::new("bash");
        c.arg(root().join("scripts/gpu-check.sh"))
            .args([
                "--dry-run",
                "--budget",
                "150",
                "--stages",
                stages,
                "--tests",
                "gpu_kit",
            ])
            .arg("--kit")
            .arg(&kit)
            .current_dir(root())
            .env("OUT", &out)
            .env("GPUCHECK_RUNS", &runs)
            .env(
                "GPUCHECK_TEST_FILTER",
                "--exact gpu_kit::require_hardware_gpu_refuses_a_software_adapter_and_nothing_else",
            )
            .env_remove("ATTNLAB_REQUIRE_HARDWARE_GPU");
        c.output().expect("run gpu-check.sh")
    };
    let o = run("a,b,c,d,e");
    let log = std::fs::read_to_string(out.join("log.txt")).unwrap_or_default();
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap_or_default();
    assert!(o.status.success(), "{}\nlog.txt:\n{log}", text(&o));
    assert!(summary.contains("DRY RUN"), "{summary}");
    for (stage, want) in [
        ("a loader", "ok"),
        ("b tests", "ok"),
        ("c bench", "ok"),
        ("e pretrain", "ok"),
    ] {
        assert!(
            summary.contains(&format!("| {stage} | {want} |")),
            "{stage}: {summary}\nlog.txt:\n{log}"
        );
    }
    // d is ok where torch has CUDA, else skipped (torch on the CPU, or no torch at all).
    assert!(
        summary.contains("| d torch | ok |") || summary.contains("| d torch | skipped |"),
        "{summary}"
    );
    assert!(
        log.contains("device: GPU") && log.contains("limits: "),
        "{log}"
    );
    assert!(log.contains("gpu_kit: ok, 1 passed; 0 failed"), "{log}");
    assert!(log.contains("GFLOP/s") || log.contains("ms/step"), "{log}");
    // Stage c times the step with each attention path in one bench process.
    assert!(
        log.contains("attention fused") && log.contains("attention composed"),
        "{log}"
    );
    for f in [
        "pretrain.log",
        "vanilla.pretrain.params",
        "vanilla.finetune.params",
        "vanilla.pretrain.dev.predictions",
        "vanilla.pretrain.test.predictions",
        "finetune.log",
    ] {
        assert!(out.join(f).is_file(), "{f} in $OUT:\n{log}");
    }
    // The run's state stayed outside $OUT, and a second call finds the pretraining done.
    assert!(runs
        .join("dry-pretrain-vanilla/vanilla.pretrain.params.resume")
        .is_file());
    let o = run("e");
    let log = std::fs::read_to_string(out.join("log.txt")).unwrap_or_default();
    assert!(o.status.success(), "{}\n{log}", text(&o));
    let plog = std::fs::read_to_string(out.join("pretrain.log")).unwrap();
    assert_eq!(
        plog.matches(" start at ").count(),
        1,
        "not started again:\n{plog}"
    );
    assert!(
        !plog.contains("no saved state"),
        "a first start is no restart:\n{plog}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Stage f, the page's engine on Dawn (web/test/dawn.mjs), in a dry run: where this checkout has the
/// wasm build (scripts/build-web.sh), Dawn (`cd web && npm ci`) and Node.js 20+, it runs the quick
/// table on whatever adapter Dawn finds (SwiftShader here, found by the script itself) and passes
/// with every self-check; where one is missing the stage is skipped and says which.
#[test]
fn gpu_check_dry_run_runs_the_pages_engine_on_dawn() {
    let dir = tmp("dawn");
    let kit = small_kit(&dir);
    let out = dir.join("out");
    let o = check(
        &[
            "--dry-run",
            "--kit",
            kit.to_str().unwrap(),
            "--stages",
            "dawn",
            "--budget",
            "200",
        ],
        Some(&out),
    );
    let log = std::fs::read_to_string(out.join("log.txt")).unwrap_or_default();
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap_or_default();
    assert!(o.status.success(), "{}\nlog.txt:\n{log}", text(&o));
    let web = root().join("web");
    let node20 = Command::new("node")
        .args(["-p", "+process.versions.node.split('.')[0] >= 20"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "true");
    let missing = [
        ("web/pkg", web.join("pkg/attnlab_bg.wasm").is_file()),
        (
            "Dawn",
            web.join("node_modules/webgpu/dist/linux-x64/dawn.node")
                .is_file(),
        ),
        ("Node.js", node20),
    ]
    .into_iter()
    .find(|(_, here)| !here);
    if let Some((what, _)) = missing {
        assert!(
            summary.contains("| f dawn | skipped |") && log.contains(&format!("SKIP: no {what}")),
            "{what} is missing here, so stage f is skipped and says so:\n{summary}\n{log}"
        );
        return;
    }
    assert!(summary.contains("| f dawn | ok |"), "{summary}\n{log}");
    assert!(
        summary.contains("kernel self-checks (run_checks) / ") && summary.contains(" passed in "),
        "{summary}"
    );
    for want in [
        "| adapter | ",
        "| step tiny vanilla, 1 × 127 full rows (time_step) | ",
        " dispatches, 1 submit, ",
        "| greedy evaluation, built-in dev set (shipped vanilla model) | ",
        "every prediction is the CLI's",
        "all checks passed",
    ] {
        assert!(log.contains(want), "{want}:\n{log}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

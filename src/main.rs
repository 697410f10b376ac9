//! The command-line runner, with run.py's positional arguments and flags:
//! `attnlab pretrain|finetune|evaluate vanilla|synthesizer [pretrain_corpus_path] --flags`, plus
//! `attnlab london --eval_corpus_path F` for the London baseline, and `attnlab convert` from the
//! course's `torch.save` .params files to our safetensors. Without a corpus path the
//! embedded generated corpus is used (its train/dev TSVs become the finetune/eval defaults).
//! Every user error is one message on stderr and exit code 1 (2 for a usage error, as argparse);
//! outputs are written atomically.
//! The front end is in `src/cli/`; runs are set up and driven by the library's `train::RunSpec` and
//! `train::Session`, as the page does.

#[cfg(target_arch = "wasm32")]
fn main() {}

// say!, say_part!, tell!: printing that never panics (src/say.rs).
#[cfg(not(target_arch = "wasm32"))]
#[macro_use]
extern crate attnlab;

#[cfg(not(target_arch = "wasm32"))]
mod cli;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    match std::env::args_os().nth(1) {
        Some(a) if a == "vit" => cli::vit::main(std::env::args_os().skip(1).collect()),
        _ => cli::main(),
    }
}

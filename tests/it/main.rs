//! The integration tests, one binary (each one linked separately took most of the native suite's
//! build): a module per area, named as the file or folder it lives in (`parity::…`,
//! `cli::errors::…`). `common` runs the built CLI; `backends` gives the devices to test on;
//! `same_step` and `f64_ref` are the references several modules share. The op families' tests are
//! their own binary, `tests/ops/`.

mod backends;
mod common;
mod f64_ref;
mod same_step;

mod checkpoint_f16;
mod checks;
mod cli;
mod data;
mod decode;
mod demos;
mod eval_skip;
mod faults;
mod fuzz;
mod gpu_kit;
mod handout;
mod inputs;
mod layers;
mod long_run;
mod model;
mod model_cpu;
mod modules;
mod outputs;
mod overfit;
mod packed;
mod params_layout;
mod parity;
mod parts;
mod pool;
mod probe;
mod readme;
mod resume;
mod runtime;
mod safety;
mod schedule;
mod section2;
mod session;
mod spec;
mod torch_hostile;
mod torch_params;
mod trajectory;
mod trim;
mod vit_cli;
mod vit_cpu;
mod vit_learn;

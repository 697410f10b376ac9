//! The two backends the model-level tests run on (the op tests have the same pair in
//! `tests/ops/common.rs`): the CPU backend, and the GPU on whatever adapter wgpu finds. A missing
//! adapter fails the test: CI must have Mesa's lavapipe.
//! With ATTNLAB_REQUIRE_HARDWARE_GPU=1 (scripts/gpu-check.sh sets it) a software adapter such as
//! lavapipe fails it too: the library's `Gpu::new` refuses it, so every test that opens the GPU,
//! here or directly, needs a hardware GPU then.
#![allow(dead_code)] // each test file uses only some of these

use attnlab::Device;
use std::rc::Rc;

/// The GPU device, for the tests that are about the GPU runtime alone.
pub fn gpu() -> Rc<Device> {
    Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"))
}

/// Both backends, CPU first. Tests loop over them and name `dev.kind()` in their messages.
pub fn devices() -> Vec<Rc<Device>> {
    vec![Device::cpu(), gpu()]
}

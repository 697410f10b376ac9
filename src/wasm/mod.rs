//! The page's engine (wasm32 only): one `Engine` object (`engine.rs`) whose methods, one
//! `#[wasm_bindgen] impl Engine` block per concern file, are the page's whole API, thin async
//! wrappers over ONE shared device, chosen once (`open_device`): WebGPU when the browser offers a
//! hardware adapter, else the CPU backend (f32 kernels with wasm SIMD128, one thread); the user can
//! pick either. Values cross to JS as plain objects via serde-wasm-bindgen; every crate error
//! becomes a JS exception carrying the crate's own message. Besides the `Engine`, the module exports
//! only `start` (run when it is instantiated).

mod ask;
mod bench;
mod cut;
mod demos;
mod engine;
mod eval_split;
mod inputs;
mod js;
mod measure;
mod models;
mod s2_state;
mod section2;
mod spec;
mod steps;
mod train;
mod vit;

use crate::device::{Device, DeviceChoice};
use crate::ops::{self, CheckResult};
pub use engine::Engine;
use js::{err, to_js};
use serde::Serialize;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

impl Engine {
    /// Why the device was lost, kept until the page acknowledges it, even if a new device was
    /// opened.
    pub(crate) fn unseen_loss(&self) -> Option<String> {
        self.lost_reason()
            .or_else(|| self.with(|e| e.unseen_loss.clone()))
    }

    /// Why the shared device was lost, if it was (never on the CPU backend).
    pub(crate) fn lost_reason(&self) -> Option<String> {
        self.with(|e| {
            if e.destroyed {
                return Some("the device was destroyed".into());
            }
            e.device.as_ref().and_then(|g| g.lost_reason())
        })
    }

    /// An error message, replaced by the device-lost reason when the device is gone (the error is
    /// then only a consequence).
    pub(crate) fn lost_or(&self, e: impl std::fmt::Display) -> String {
        match self.unseen_loss() {
            Some(why) => format!(
                "the GPU device was lost ({why}); training stopped. Reload the saved checkpoint to \
                 continue"
            ),
            None => e.to_string(),
        }
    }

    /// `lost_or` as the JS exception.
    pub(crate) fn lost_err(&self, e: impl std::fmt::Display) -> JsError {
        err(self.lost_or(e))
    }

    /// Destroy the shared GPU device (the page's device-lost test) and drop everything on it; on
    /// the CPU backend there is no device to lose, and only the engine's state is dropped.
    pub(crate) fn destroy_device(&self) {
        self.with(|e| {
            e.drop_all();
            if e.device.as_ref().is_some_and(|d| d.destroy()) {
                e.destroyed = true;
            }
        });
    }

    /// Forget a lost device and everything on it, so that the next `device()` opens a new one.
    pub(crate) fn forget_device(&self) {
        let why = self.lost_reason();
        self.with(|e| {
            if why.is_some() {
                e.unseen_loss = why;
            }
            e.drop_all();
            e.device = None;
            e.destroyed = false;
        });
    }

    /// The page has shown the loss: forget it.
    pub(crate) fn acknowledge_loss(&self) {
        self.with(|e| e.unseen_loss = None);
    }

    /// The shared device, opened on first use with the page's choice (and again after a loss).
    pub(crate) async fn device(&self) -> Result<Rc<Device>, JsError> {
        if self.lost_reason().is_some() {
            self.forget_device();
        }
        if let Some(g) = self.with(|e| e.device.clone()) {
            return Ok(g);
        }
        let d = open(self.with(|e| e.choice)).await;
        // The worker serves one call at a time, so no other call opened one meanwhile; keep the
        // first all the same.
        Ok(self.with(|e| e.device.get_or_insert(d).clone()))
    }
}

/// Runs once when the module is instantiated: route Rust panics to the console with a message.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// Whether the browser has the WebGPU API at all (`navigator.gpu`).
fn has_webgpu_api() -> bool {
    let nav = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("navigator"))
        .unwrap_or(JsValue::UNDEFINED);
    if nav.is_undefined() || nav.is_null() {
        return false;
    }
    js_sys::Reflect::get(&nav, &JsValue::from_str("gpu"))
        .map(|g| !g.is_undefined() && !g.is_null())
        .unwrap_or(false)
}

/// Open the device for `choice`, with the reason in the page's words.
async fn open(choice: DeviceChoice) -> Rc<Device> {
    let with_reason = |mut d: Rc<Device>, reason: String| {
        if let Some(m) = Rc::get_mut(&mut d) {
            m.reason = reason;
        }
        d
    };
    let cpu_because = |why: String| with_reason(Device::cpu(), why);
    match choice {
        DeviceChoice::Cpu => cpu_because("you chose the CPU backend (Backend: CPU)".into()),
        DeviceChoice::Gpu | DeviceChoice::Auto => {
            if !has_webgpu_api() {
                return cpu_because(
                    "no WebGPU in this browser (navigator.gpu is missing), so the page runs on \
                     the CPU backend"
                        .into(),
                );
            }
            match Device::gpu().await {
                Err(e) => {
                    let why = match e {
                        crate::Error::NoAdapter(_) => "the browser offers no WebGPU adapter".into(),
                        e => format!("WebGPU could not be opened ({e})"),
                    };
                    cpu_because(format!("{why}, so the page runs on the CPU backend"))
                }
                Ok(d) => {
                    let name = d.adapter().map(|(a, _)| a.name.clone()).unwrap_or_default();
                    let soft = d.is_software_gpu();
                    if choice == DeviceChoice::Auto && soft {
                        drop(d);
                        // The browser often gives a software adapter no name (see Gpu::new).
                        let named = if name == "WebGPU adapter" {
                            String::new()
                        } else {
                            format!(" ({name})")
                        };
                        return cpu_because(format!(
                            "the browser's only WebGPU adapter{named} is a software fallback, \
                             slower than the CPU backend; choose WebGPU under Backend to use it anyway"
                        ));
                    }
                    let why = if choice == DeviceChoice::Gpu {
                        format!(
                            "you chose WebGPU (Backend: WebGPU){}",
                            if soft {
                                "; this adapter is a software fallback"
                            } else {
                                ""
                            }
                        )
                    } else {
                        format!("auto: the browser offers the WebGPU adapter {name}")
                    };
                    with_reason(d, why)
                }
            }
        }
    }
}

/// The adapter part of the device card (WebGPU only).
/// (Spelled out rather than `#[serde(flatten)]`: flatten goes through a map, which arrives in JS
/// as a `Map`.)
#[derive(Serialize)]
struct AdapterInfo<'a> {
    name: &'a str,
    backend: &'a str,
    device_type: &'a str,
    driver: &'a str,
    software: bool,
    limits: &'a crate::device::GpuLimits,
}

/// `{kind, choice, describe, reason, threads, max_tensor_bytes, budget_bytes, adapter}`.
#[derive(Serialize)]
struct DeviceInfo<'a> {
    /// "gpu" or "cpu".
    kind: &'static str,
    /// What was asked for: "auto", "webgpu" or "cpu".
    choice: &'static str,
    /// One line: the adapter, or "CPU backend (1 thread, wasm SIMD128)".
    describe: String,
    /// Why this device runs.
    reason: &'a str,
    /// CPU backend threads (1 in the browser); null on WebGPU.
    threads: Option<usize>,
    max_tensor_bytes: u64,
    /// What a training run may use in total on this device (the CPU backend's wasm32 budget), or
    /// null when only the per-tensor limit is known (WebGPU).
    budget_bytes: Option<u64>,
    adapter: Option<AdapterInfo<'a>>,
}

fn choice_name(c: DeviceChoice) -> &'static str {
    match c {
        DeviceChoice::Auto => "auto",
        DeviceChoice::Gpu => "webgpu",
        DeviceChoice::Cpu => "cpu",
    }
}

fn info_of(d: &Device, choice: DeviceChoice) -> Result<JsValue, JsError> {
    let lim = crate::model::memory::MemoryLimit::of_device(d);
    to_js(&DeviceInfo {
        kind: d.kind(),
        choice: choice_name(choice),
        describe: d.describe(),
        reason: &d.reason,
        threads: d.cpu_threads(),
        max_tensor_bytes: d.max_tensor_bytes(),
        budget_bytes: lim.device_total.map(|(b, _)| b),
        adapter: d.adapter().map(|(a, limits)| AdapterInfo {
            name: &a.name,
            backend: &a.backend,
            device_type: &a.device_type,
            driver: &a.driver,
            software: d.is_software_gpu(),
            limits,
        }),
    })
}

#[wasm_bindgen]
impl Engine {
    /// Open the page's device: `choice` is "auto" (a hardware WebGPU adapter, else the CPU backend),
    /// "webgpu" (any WebGPU adapter, software ones included; the CPU backend if there is none) or
    /// "cpu". Called once when the page loads, before anything else; choosing another backend later
    /// reloads the page. Returns the device's description for the Device card: `{kind, choice, describe,
    /// reason, threads, max_tensor_bytes, budget_bytes, adapter: {name, backend, device_type, driver,
    /// software, limits: {max_buffer_size, ...}} | null}`.
    pub async fn open_device(&self, choice: String) -> Result<JsValue, JsError> {
        let c = match choice.as_str() {
            "auto" => DeviceChoice::Auto,
            "webgpu" | "gpu" => DeviceChoice::Gpu,
            "cpu" => DeviceChoice::Cpu,
            other => {
                return Err(JsError::new(&format!(
                    "unknown backend '{other}': use auto, webgpu or cpu"
                )))
            }
        };
        self.with(|e| {
            if e.choice != c {
                // Everything on the old device goes with it (the page reloads on a switch anyway).
                e.drop_all();
                e.device = None;
                e.choice = c;
            }
        });
        let d = self.device().await?;
        info_of(&d, c)
    }

    /// Run every op family's kernels against the f64 references; returns an array of
    /// `{op, case, max_err, tol, passed}` (WebGPU kernels, or the CPU backend's f32 kernels).
    pub async fn run_checks(&self) -> Result<JsValue, JsError> {
        let _busy = self.busy();
        let g = self.device().await?;
        let rows: Vec<CheckResult> = ops::run_checks(&g).await.map_err(err)?;
        to_js(&rows)
    }

    /// What the engine holds: `{device, run, models: [variant], evaluation, vit, overlaps}`, where
    /// `overlaps` counts device calls that started while another ran (the browser tests expect 0).
    pub fn debug_engine(&self) -> Result<JsValue, JsError> {
        to_js(&self.held())
    }
}

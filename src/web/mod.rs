//! The page's entry points (wasm32 only): thin async wrappers that open one shared `Gpu`, describe
//! it, and run the self-checks. Values cross to JS as plain objects via serde-wasm-bindgen; every
//! crate error becomes a JS exception carrying the crate's own message.

mod bench;
mod demos;
mod page;

use crate::checks::{self, CheckResult};
use crate::gpu::{AdapterSummary, Gpu, GpuLimits};
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

thread_local! {
    /// The page opens one device and keeps it: pipelines and pooled buffers are reused across runs.
    static GPU: RefCell<Option<Rc<Device>>> = const { RefCell::new(None) };
    /// Set when the page destroyed the device itself (the lost callback may come later).
    static DESTROYED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The reason of a loss that the page has not acknowledged yet (`page_reset_device`): a demo
    /// may open a new device in between, and the training page must still learn why its run died.
    static UNSEEN_LOSS: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Why the device was lost, kept until the page acknowledges it, even if a new device was opened.
pub(crate) fn unseen_loss() -> Option<String> {
    lost_reason().or_else(|| UNSEEN_LOSS.with(|u| u.borrow().clone()))
}

/// Why the shared device was lost, if it was.
pub(crate) fn lost_reason() -> Option<String> {
    if DESTROYED.with(|d| d.get()) {
        return Some("the device was destroyed".into());
    }
    GPU.with(|g| g.borrow().as_ref().and_then(|g| g.lost_reason()))
}

/// Destroy the shared device (the page's device-lost test).
pub(crate) fn destroy_device() {
    GPU.with(|g| {
        if let Some(g) = g.borrow().as_ref() {
            g.device.destroy();
            DESTROYED.with(|d| d.set(true));
        }
    });
}

/// Forget a lost device so that the next `gpu()` opens a new one.
pub(crate) fn forget_device() {
    if let Some(why) = lost_reason() {
        UNSEEN_LOSS.with(|u| *u.borrow_mut() = Some(why));
    }
    GPU.with(|g| *g.borrow_mut() = None);
    DESTROYED.with(|d| d.set(false));
}

/// The page has shown the loss: forget it.
pub(crate) fn acknowledge_loss() {
    UNSEEN_LOSS.with(|u| *u.borrow_mut() = None);
}

/// Runs once when the module is instantiated: route Rust panics to the console with a message.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The shared device, opened on first use (and again after it was lost).
async fn gpu() -> Result<Rc<Device>, JsError> {
    if lost_reason().is_some() {
        forget_device();
    }
    if let Some(g) = GPU.with(|g| g.borrow().clone()) {
        return Ok(g);
    }
    let g = Device::gpu()
        .await
        .map_err(|e| JsError::new(&e.to_string()))?;
    GPU.with(|slot| *slot.borrow_mut() = Some(g.clone()));
    Ok(g)
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    serde_wasm_bindgen::to_value(v)
        .map_err(|e| JsError::new(&format!("could not pass the result to JS: {e}")))
}

/// `{name, backend, device_type, driver, limits: {max_buffer_size, ...}}` for the "GPU" card.
/// (Spelled out rather than `#[serde(flatten)]`: flatten goes through a map, which arrives in JS as a `Map`.)
#[derive(Serialize)]
struct Info<'a> {
    name: &'a str,
    backend: &'a str,
    device_type: &'a str,
    driver: &'a str,
    limits: &'a GpuLimits,
}

/// Describe the adapter and the limits the device was opened with. Throws if there is no WebGPU adapter.
#[wasm_bindgen]
pub async fn adapter_info() -> Result<JsValue, JsError> {
    let g = gpu().await?;
    let a: &AdapterSummary = &g.adapter;
    to_js(&Info {
        name: &a.name,
        backend: &a.backend,
        device_type: &a.device_type,
        driver: &a.driver,
        limits: &g.limits,
    })
}

/// Run every op family's GPU-vs-CPU check; returns an array of `{op, case, max_err, tol, passed}`.
#[wasm_bindgen]
pub async fn run_checks() -> Result<JsValue, JsError> {
    let g = gpu().await?;
    let rows: Vec<CheckResult> = checks::run_all(&g)
        .await
        .map_err(|e| JsError::new(&e.to_string()))?;
    to_js(&rows)
}

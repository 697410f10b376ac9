//! The device a run uses, chosen once: a GPU through wgpu (WebGPU in the browser, Vulkan/Metal/DX12
//! natively) or the CPU backend. Tensors carry their device; the op files look at it to pick the
//! WGSL kernel or the CPU one, and nothing above `ops` knows which runs.

use crate::cpu::Cpu;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
pub use crate::gpu::GpuLimits;
use crate::storage::Stats;
use std::cell::Cell;
use std::rc::Rc;

/// The two backends. (One per run, so the GPU variant's size does not matter.)
#[allow(clippy::large_enum_variant)]
pub enum Backend {
    Gpu(Gpu),
    Cpu(Cpu),
}

/// What the user asked for (`--device`, the page's selector).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// A real GPU adapter if there is one, otherwise the CPU backend (never a software adapter).
    Auto,
    /// Whatever adapter wgpu offers, software ones (lavapipe, SwiftShader) included.
    Gpu,
    Cpu,
}

impl std::str::FromStr for DeviceChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(DeviceChoice::Auto),
            "gpu" => Ok(DeviceChoice::Gpu),
            "cpu" => Ok(DeviceChoice::Cpu),
            _ => Err(Error::Msg(format!(
                "unknown device '{s}': use auto, gpu or cpu"
            ))),
        }
    }
}

/// One device with its caches and counters. Cheap to share as `Rc<Device>`.
pub struct Device {
    backend: Backend,
    /// Why this device was chosen, in words for the CLI and the page.
    pub reason: String,
    /// Whether causal attention may run the fused kernels; see `set_fused_attention`.
    fused_attention: Cell<bool>,
}

impl Device {
    /// The CPU backend, with as many threads as the machine offers (one in the browser).
    pub fn cpu() -> Rc<Device> {
        Rc::new(Device {
            backend: Backend::Cpu(Cpu::new()),
            reason: "asked for the CPU".into(),
            fused_attention: Cell::new(false),
        })
    }

    /// The GPU backend on whatever adapter wgpu finds (a software one included). Causal attention
    /// fuses on a hardware adapter and composes on a software one, where the fused kernels ran
    /// slower (`set_fused_attention` says by how much).
    pub async fn gpu() -> Result<Rc<Device>> {
        let g = Gpu::new().await?;
        let fused = !g.is_software();
        Ok(Rc::new(Device {
            backend: Backend::Gpu(g),
            reason: "asked for the GPU".into(),
            fused_attention: Cell::new(fused),
        }))
    }

    /// Native only: block on [`Device::gpu`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn gpu_blocking() -> Result<Rc<Device>> {
        pollster::block_on(Self::gpu())
    }

    /// Open the device the user chose. `Auto` takes a hardware GPU adapter and otherwise the CPU
    /// backend; the reason says which and why.
    pub async fn open(choice: DeviceChoice) -> Result<Rc<Device>> {
        match choice {
            DeviceChoice::Cpu => Ok(Device::cpu()),
            DeviceChoice::Gpu => Device::gpu().await,
            DeviceChoice::Auto => match Gpu::new().await {
                Ok(g) if !g.is_software() => {
                    let reason = format!("auto: found the GPU adapter {}", g.adapter.name);
                    Ok(Rc::new(Device {
                        backend: Backend::Gpu(g),
                        reason,
                        fused_attention: Cell::new(true),
                    }))
                }
                Ok(g) => {
                    let mut d = Device::cpu_device();
                    d.reason = format!(
                        "auto: the only GPU adapter is the software one '{}', slower than the CPU \
                         backend (use --device gpu to run on it anyway)",
                        g.adapter.name
                    );
                    Ok(Rc::new(d))
                }
                Err(e) => {
                    let mut d = Device::cpu_device();
                    d.reason = format!("auto: no GPU adapter ({e})");
                    Ok(Rc::new(d))
                }
            },
        }
    }

    /// Native only: block on [`Device::open`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn open_blocking(choice: DeviceChoice) -> Result<Rc<Device>> {
        pollster::block_on(Self::open(choice))
    }

    fn cpu_device() -> Device {
        Device {
            backend: Backend::Cpu(Cpu::new()),
            reason: String::new(),
            fused_attention: Cell::new(false),
        }
    }

    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The GPU runtime, if this device is one.
    pub fn as_gpu(&self) -> Option<&Gpu> {
        match &self.backend {
            Backend::Gpu(g) => Some(g),
            Backend::Cpu(_) => None,
        }
    }

    pub fn is_cpu(&self) -> bool {
        matches!(self.backend, Backend::Cpu(_))
    }

    /// "cpu" or "gpu", for logs, checkpoints' metadata and the page.
    pub fn kind(&self) -> &'static str {
        match self.backend {
            Backend::Gpu(_) => "gpu",
            Backend::Cpu(_) => "cpu",
        }
    }

    /// A one-line description: the adapter, or the CPU backend with its threads.
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::Gpu(g) => format!("GPU: {}", g.describe()),
            Backend::Cpu(c) => c.describe(),
        }
    }

    /// The largest tensor, in bytes, this device holds.
    pub fn max_tensor_bytes(&self) -> u64 {
        match &self.backend {
            Backend::Gpu(g) => g.limits.max_storage_buffer_binding_size,
            Backend::Cpu(c) => c.max_tensor_bytes(),
        }
    }

    /// The name of the limit in [`Device::max_tensor_bytes`], for error messages.
    pub fn tensor_limit_name(&self) -> &'static str {
        match &self.backend {
            Backend::Gpu(_) => "max_storage_buffer_binding_size",
            Backend::Cpu(_) => "CPU tensor size limit",
        }
    }

    /// Whether tensors live in the host's memory (the CPU backend) rather than the device's own
    /// (a GPU): then the host's memory bounds the whole step, not only what is read back to save.
    pub fn tensors_in_host_memory(&self) -> bool {
        matches!(self.backend, Backend::Cpu(_))
    }

    /// The most rows worth one forward pass when a caller cuts independent rows into chunks (greedy
    /// decoding, evaluation): a GPU fills better with wide chunks; the CPU backend gains nothing
    /// past a few dozen (already thousands of matmul rows), and smaller chunks report progress
    /// more often (the page's evaluation).
    pub fn max_chunk_rows(&self) -> usize {
        match self.backend {
            Backend::Gpu(_) => 256,
            Backend::Cpu(_) => 32,
        }
    }

    /// The row reductions' (softmax, layernorm, cross-entropy) build on a GPU: whether they use
    /// subgroup operations now, and whether the device has them. None on the CPU backend, which
    /// has one build.
    pub fn row_subgroups(&self) -> Option<(bool, bool)> {
        self.as_gpu().map(|g| (g.subgroups(), g.has_subgroups()))
    }

    /// Use the row reductions' subgroup build (`on`, where the GPU has subgroups) or their
    /// workgroup-tree build; nothing to choose on the CPU backend.
    pub fn set_row_subgroups(&self, on: bool) {
        if let Some(g) = self.as_gpu() {
            g.set_subgroups(on);
        }
    }

    /// Whether causal attention may take the fused kernels (`ops::attention::fuses`, which also
    /// wants the GPU backend and a head size it holds): by default on a hardware GPU adapter, not
    /// on a software one (lavapipe, SwiftShader) nor the CPU backend.
    pub fn fused_attention(&self) -> bool {
        self.fused_attention.get()
    }

    /// Let causal attention take the fused kernels (`on`) or make it compose matmul,
    /// causal_softmax, dropout and matmul (the CPU backend's path) on this device: the bench's
    /// `--attention fused|composed`, to time both on one GPU, and the tests, to run the fused path
    /// on a software adapter. There the composed step took 0.80-0.83x the fused one's time
    /// (lavapipe, BENCHMARKS.md), and the page's WebGPU tests on SwiftShader ran faster composed,
    /// hence the default. Set it before building a model: the memory estimate asks too.
    pub fn set_fused_attention(&self, on: bool) {
        self.fused_attention.set(on);
    }

    /// Native only: start (clearing the table) or stop the per-kernel profile, in which every
    /// dispatch is waited for alone. False, and nothing done, where there is none (the CPU
    /// backend, whose ops run as they are called).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn set_profiling(&self, on: bool) -> Result<bool> {
        match self.as_gpu() {
            Some(g) => g.set_profiling(on).map(|()| true),
            None => Ok(false),
        }
    }

    /// The per-kernel profile so far: (kernel, dispatches, seconds), slowest first; empty when
    /// not profiling.
    pub fn profile(&self) -> Vec<(String, u64, f64)> {
        self.as_gpu().map(|g| g.profile()).unwrap_or_default()
    }

    /// The GPU adapter and the limits the kernels were granted, one fact a line (for
    /// `bench --info`); on the CPU backend a line saying there is none.
    pub fn adapter_lines(&self) -> Vec<String> {
        match &self.backend {
            Backend::Gpu(g) => {
                let a = &g.adapter;
                vec![
                    format!("adapter: {}", a.name),
                    format!("backend: {}", a.backend),
                    format!("device type: {}", a.device_type),
                    format!("driver: {}", a.driver),
                    format!("software adapter: {}", g.is_software()),
                    format!("limits: {:?}", g.limits),
                ]
            }
            Backend::Cpu(_) => vec!["no GPU adapter in use: the CPU backend".into()],
        }
    }

    /// Submit recorded GPU work (nothing to do on the CPU, where ops run as they are called).
    pub fn flush(&self) {
        if let Backend::Gpu(g) = &self.backend {
            g.flush();
        }
    }

    /// Wait until all work has finished.
    pub async fn sync(&self) -> Result<()> {
        match &self.backend {
            Backend::Gpu(g) => g.sync().await,
            Backend::Cpu(_) => Ok(()),
        }
    }

    /// Counters: buffers, memory in use and its peak, and (GPU) pipelines, dispatches, submits.
    pub fn stats(&self) -> Stats {
        match &self.backend {
            Backend::Gpu(g) => g.stats(),
            Backend::Cpu(c) => c.stats(),
        }
    }

    /// Start measuring peak memory from now.
    pub fn reset_peak_memory(&self) {
        match &self.backend {
            Backend::Gpu(g) => g.reset_peak_memory(),
            Backend::Cpu(c) => c.reset_peak_memory(),
        }
    }

    /// Free pooled buffers that no tensor holds.
    pub fn trim(&self) {
        match &self.backend {
            Backend::Gpu(g) => g.trim(),
            Backend::Cpu(c) => c.trim(),
        }
    }

    /// The reason the GPU device was lost, if it was (never on the CPU).
    pub fn lost_reason(&self) -> Option<String> {
        self.as_gpu().and_then(|g| g.lost_reason())
    }

    /// Whether this is a GPU whose adapter is a software fallback (lavapipe, SwiftShader), slower
    /// than the CPU backend on the same cores; false on the CPU backend.
    pub fn is_software_gpu(&self) -> bool {
        self.as_gpu().is_some_and(|g| g.is_software())
    }

    /// The GPU adapter and the limits the kernels were granted; None on the CPU backend.
    pub fn adapter(&self) -> Option<(&crate::gpu::AdapterSummary, &crate::gpu::GpuLimits)> {
        self.as_gpu().map(|g| (&g.adapter, &g.limits))
    }

    /// The CPU backend's threads; None on a GPU.
    pub fn cpu_threads(&self) -> Option<usize> {
        match &self.backend {
            Backend::Cpu(c) => Some(c.threads()),
            Backend::Gpu(_) => None,
        }
    }

    /// Destroy the GPU device now (the page's device-lost test): every later use of it fails as
    /// on a real loss. False, and nothing done, on the CPU backend, which has no device to lose.
    pub fn destroy(&self) -> bool {
        match self.as_gpu() {
            Some(g) => {
                g.device.destroy();
                true
            }
            None => false,
        }
    }
}

/// wasm32: end the current task of the page (or worker) and go on in a new one, so a long
/// computation on the CPU backend lets the page paint and handle input at every readback. A message
/// to a channel is used, not a timer: zero-delay timers are clamped to 4 ms once nested and are
/// throttled to one a second (or a minute) in background tabs. Natively there is nothing to do.
pub async fn yield_to_host() {
    #[cfg(target_arch = "wasm32")]
    host::yield_now().await;
}

#[cfg(target_arch = "wasm32")]
mod host {
    use std::cell::RefCell;
    use std::collections::VecDeque;
    use wasm_bindgen::{closure::Closure, JsCast, JsValue};

    /// One channel for the module's lifetime: each yield posts one message and queues its resolver.
    struct Channel {
        port: web_sys::MessagePort,
        waiting: std::rc::Rc<RefCell<VecDeque<js_sys::Function>>>,
    }

    thread_local! {
        static CHANNEL: Option<Channel> = open();
    }

    fn open() -> Option<Channel> {
        let ch = web_sys::MessageChannel::new().ok()?;
        let waiting = std::rc::Rc::new(RefCell::new(VecDeque::<js_sys::Function>::new()));
        let queue = waiting.clone();
        let on_message = Closure::<dyn FnMut()>::new(move || {
            let next = queue.borrow_mut().pop_front();
            if let Some(resolve) = next {
                let _ = resolve.call0(&JsValue::NULL);
            }
        });
        ch.port1()
            .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        // The handler lives as long as the module (one closure, made once).
        on_message.forget();
        Some(Channel {
            port: ch.port2(),
            waiting,
        })
    }

    pub async fn yield_now() {
        let p = js_sys::Promise::new(&mut |resolve, _| {
            let posted = CHANNEL.with(|c| match c {
                Some(c) => {
                    c.waiting.borrow_mut().push_back(resolve.clone());
                    let ok = c.port.post_message(&JsValue::NULL).is_ok();
                    if !ok {
                        c.waiting.borrow_mut().pop_back();
                    }
                    ok
                }
                None => false,
            });
            if !posted {
                let _ = resolve.call0(&JsValue::NULL);
            }
        });
        let _ = wasm_bindgen_futures::JsFuture::from(p).await;
    }
}

//! The GPU runtime: adapter and device set-up on both targets, the pipeline cache, the buffer pool,
//! one command encoder per step, and async readback.
//!
//! Everything is single-threaded (`Rc`/`RefCell`): in the browser wgpu objects are not `Send`, and
//! natively the tests give each thread its own `Gpu`.

mod fill;
mod kernel;
mod matmul_kernel;
mod pool;
mod profile;
mod record;

pub use kernel::{Bind, Binding, Kernel, RowKernel};
pub use matmul_kernel::MatmulKernel;
pub(crate) use pool::PoolBuf;
pub use pool::PoolStats;
pub use record::grid_1d;
// The counters live with the code both backends share; this path stays for callers.
pub use crate::storage::Stats;

use crate::error::{Error, Result};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

/// What the adapter says about itself, in a form the CLI and the page can print.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct AdapterSummary {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
}

/// The limits that the kernels depend on, as granted by the device.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GpuLimits {
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroup_storage_size: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_storage_buffers_per_shader_stage: u32,
    pub min_uniform_buffer_offset_alignment: u32,
}

/// One GPU device with its caches. Cheap to share as `Rc<Gpu>`.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    pub limits: GpuLimits,
    pub(crate) pool: Rc<RefCell<pool::Pool>>,
    pub(crate) rec: RefCell<record::Recorder>,
    pub(crate) counters: Cell<Stats>,
    /// Per-kernel wall time when profiling (native only; see `Gpu::set_profiling`).
    pub(crate) profile: RefCell<Option<std::collections::BTreeMap<String, (u64, f64)>>>,
    /// The matmul kernel products use; see `set_matmul_kernel`.
    matmul_kernel: Cell<MatmulKernel>,
    /// Whether the device was opened with subgroup operations (the adapter offers them).
    has_subgroups: bool,
    /// Whether the row kernels use them now; see `set_subgroups`.
    subgroups: Cell<bool>,
    /// A software adapter (lavapipe, SwiftShader): `--device auto` never picks it.
    software: bool,
    lost: Arc<Mutex<Option<String>>>,
}

/// Set to 1 (native only), a software adapter (lavapipe, SwiftShader) is an error wherever a GPU is
/// opened, `--device gpu` and the tests included: for runs that must prove they ran on a hardware
/// GPU (scripts/gpu-check.sh). Unset, or anything but 1, nothing changes.
pub const REQUIRE_HARDWARE_GPU: &str = "ATTNLAB_REQUIRE_HARDWARE_GPU";

#[cfg(not(target_arch = "wasm32"))]
fn require_hardware_gpu() -> bool {
    std::env::var(REQUIRE_HARDWARE_GPU).is_ok_and(|v| v == "1")
}

/// Natively, one wgpu instance for the whole process, made on first use. Test binaries open a
/// device in each of many threads at once; on an H100 (NVIDIA's Vulkan driver 580) such binaries
/// hung now and then with each of their tests passing alone (results/gpu-h100/), as others have
/// seen when many threads each enumerate the drivers at once.
#[cfg(not(target_arch = "wasm32"))]
fn native_instance() -> wgpu::Instance {
    static INSTANCE: std::sync::OnceLock<wgpu::Instance> = std::sync::OnceLock::new();
    INSTANCE
        .get_or_init(|| {
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
        })
        .clone()
}

/// Natively, devices are opened one at a time (the guard is held while a device is opened; a
/// poisoned lock only means another opening panicked, which leaves nothing to protect).
#[cfg(not(target_arch = "wasm32"))]
fn native_open_lock() -> std::sync::MutexGuard<'static, ()> {
    static OPENING: Mutex<()> = Mutex::new(());
    OPENING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The smallest limits the kernels are written for (WebGPU's defaults).
const NEED_INVOCATIONS: u32 = 256;
const NEED_WG_STORAGE: u32 = 16384;
const NEED_STORAGE_BUFFERS: u32 = 8;

impl Gpu {
    /// Find an adapter and open a device on it. Natively this goes through Vulkan/Metal/DX12
    /// (Mesa's lavapipe where there is no GPU); in the browser through WebGPU.
    // Natively this future is driven by `pollster::block_on` on the opening thread, which does
    // nothing else until it is done, so holding the std lock across its awaits cannot deadlock.
    #[allow(clippy::await_holding_lock)]
    pub async fn new() -> Result<Gpu> {
        #[cfg(not(target_arch = "wasm32"))]
        let _one_at_a_time = native_open_lock();
        #[cfg(not(target_arch = "wasm32"))]
        let instance = native_instance();
        #[cfg(target_arch = "wasm32")]
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                apply_limit_buckets: false,
            })
            .await
            .map_err(|e| Error::NoAdapter(format!("{e}. {}", no_adapter_hint())))?;
        let info = adapter.get_info();
        #[cfg(not(target_arch = "wasm32"))]
        if info.device_type == wgpu::DeviceType::Cpu && require_hardware_gpu() {
            return Err(Error::NoAdapter(format!(
                "{REQUIRE_HARDWARE_GPU} is set, and the adapter wgpu found, '{}' ({:?}, driver '{} \
                 {}'), is a software one: \
                 no hardware GPU's Vulkan driver was found. Check that the Vulkan loader is installed \
                 (`ldconfig -p | grep libvulkan`) and that VK_DRIVER_FILES names the GPU's ICD file \
                 (NVIDIA: /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json or \
                 /usr/share/vulkan/icd.d/nvidia_icd.json); unset {REQUIRE_HARDWARE_GPU} to accept a software adapter",
                info.name, info.backend, info.driver, info.driver_info
            )));
        }
        let al = adapter.limits();
        if al.max_compute_invocations_per_workgroup < NEED_INVOCATIONS
            || al.max_compute_workgroup_storage_size < NEED_WG_STORAGE
            || al.max_storage_buffers_per_shader_stage < NEED_STORAGE_BUFFERS
        {
            return Err(Error::NoAdapter(format!(
                "adapter '{}' offers {} invocations per workgroup, {} bytes of workgroup storage \
                 and {} storage buffers per stage; the kernels need {NEED_INVOCATIONS}, \
                 {NEED_WG_STORAGE} and {NEED_STORAGE_BUFFERS}",
                info.name,
                al.max_compute_invocations_per_workgroup,
                al.max_compute_workgroup_storage_size,
                al.max_storage_buffers_per_shader_stage
            )));
        }
        // Start from WebGPU's defaults and raise only what the kernels and the model's buffers use.
        #[allow(clippy::field_reassign_with_default)]
        let req = {
            let mut req = wgpu::Limits::default();
            req.max_storage_buffer_binding_size = al.max_storage_buffer_binding_size;
            req.max_buffer_size = al.max_buffer_size;
            req.max_compute_workgroup_storage_size = al.max_compute_workgroup_storage_size;
            req.max_compute_invocations_per_workgroup = al.max_compute_invocations_per_workgroup;
            req.max_compute_workgroup_size_x = al.max_compute_workgroup_size_x;
            req.max_compute_workgroup_size_y = al.max_compute_workgroup_size_y;
            req.max_compute_workgroup_size_z = al.max_compute_workgroup_size_z;
            req.max_compute_workgroups_per_dimension = al.max_compute_workgroups_per_dimension;
            req.max_storage_buffers_per_shader_stage = al.max_storage_buffers_per_shader_stage;
            req.max_bind_groups = al.max_bind_groups.min(4);
            req
        };
        // Subgroup operations, where the adapter offers them, for the row kernels' reductions.
        // wgpu's WebGPU backend cannot ask the browser for them, so in the page the engine
        // worker asks (web/engine-worker.js) and says whether it got them.
        let subgroups = adapter.features().contains(wgpu::Features::SUBGROUP);
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("attnlab"),
                required_features: if subgroups {
                    wgpu::Features::SUBGROUP
                } else {
                    wgpu::Features::empty()
                },
                required_limits: req.clone(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|e| {
                Error::Device(format!("could not open a device on '{}': {e}", info.name))
            })?;
        let lost = Arc::new(Mutex::new(None));
        let lost_cb = lost.clone();
        device.set_device_lost_callback(move |reason, msg| {
            if let Ok(mut l) = lost_cb.lock() {
                *l = Some(format!("{reason:?}: {msg}"));
            }
        });
        let limits = GpuLimits {
            max_storage_buffer_binding_size: req.max_storage_buffer_binding_size,
            max_buffer_size: req.max_buffer_size,
            max_compute_workgroup_storage_size: req.max_compute_workgroup_storage_size,
            max_compute_invocations_per_workgroup: req.max_compute_invocations_per_workgroup,
            max_compute_workgroups_per_dimension: req.max_compute_workgroups_per_dimension,
            max_storage_buffers_per_shader_stage: req.max_storage_buffers_per_shader_stage,
            min_uniform_buffer_offset_alignment: req.min_uniform_buffer_offset_alignment,
        };
        let has_subgroups = subgroups || browser_granted_subgroups();
        let rec = record::Recorder::new(&device, &limits);
        let gpu = Gpu {
            adapter: AdapterSummary {
                name: if info.name.is_empty() {
                    "WebGPU adapter".into()
                } else {
                    info.name.clone()
                },
                backend: format!("{:?}", info.backend),
                device_type: format!("{:?}", info.device_type),
                driver: format!("{} {}", info.driver, info.driver_info)
                    .trim()
                    .to_string(),
            },
            limits,
            pool: Rc::new(RefCell::new(pool::Pool::default())),
            rec: RefCell::new(rec),
            counters: Cell::new(Stats::default()),
            profile: RefCell::new(None),
            matmul_kernel: Cell::new(MatmulKernel::default_for(
                info.device_type == wgpu::DeviceType::Cpu,
            )),
            has_subgroups,
            // Not on CPU adapters: on lavapipe the subgroup softmax was the slower (BENCHMARKS.md).
            subgroups: Cell::new(has_subgroups && info.device_type != wgpu::DeviceType::Cpu),
            software: info.device_type == wgpu::DeviceType::Cpu,
            lost,
            device,
            queue,
        };
        Ok(gpu)
    }

    /// A storage buffer of at least `bytes` from the pool, returned to it when dropped.
    pub(crate) fn alloc(&self, bytes: u64) -> PoolBuf {
        let (id, buffer) = self.pool.borrow_mut().take(&self.device, bytes);
        PoolBuf {
            id,
            buffer: Some(buffer),
            pool: Rc::downgrade(&self.pool),
        }
    }

    /// Whether the adapter is a software rasteriser on the CPU (lavapipe, SwiftShader).
    pub fn is_software(&self) -> bool {
        self.software
    }

    /// The matmul kernel products use (at first the adapter type's default; `bench::tune_matmul`
    /// times them all and keeps the fastest).
    pub fn matmul_kernel(&self) -> MatmulKernel {
        self.matmul_kernel.get()
    }

    /// Choose the matmul kernel (the tests run each on whatever adapter they have). Results agree
    /// to rounding; only the speed differs.
    pub fn set_matmul_kernel(&self, k: MatmulKernel) {
        self.matmul_kernel.set(k);
    }

    /// The kernel for products the chosen one cannot take (the vec4 kernels need vec4-able views):
    /// the adapter type's default.
    pub fn matmul_fallback(&self) -> MatmulKernel {
        MatmulKernel::default_for(self.software)
    }

    /// Whether the device has subgroup operations (the adapter offered them and they were asked for).
    pub fn has_subgroups(&self) -> bool {
        self.has_subgroups
    }

    /// Whether the row kernels (softmax, layernorm, cross-entropy) reduce with subgroup
    /// operations now: by default where the device has them, except on CPU adapters.
    pub fn subgroups(&self) -> bool {
        self.subgroups.get()
    }

    /// Turn the row kernels' subgroup builds on or off (on only where the device has them; the
    /// tests and the kernel checks run both). Results agree to rounding; each build is
    /// deterministic on a given device.
    pub fn set_subgroups(&self, on: bool) {
        self.subgroups.set(on && self.has_subgroups);
    }

    /// A one-line description for logs: name, backend and type.
    pub fn describe(&self) -> String {
        let a = &self.adapter;
        format!(
            "{} ({}, {}{})",
            a.name,
            a.backend,
            a.device_type,
            if a.driver.is_empty() {
                String::new()
            } else {
                format!(", {}", a.driver)
            }
        )
    }

    /// The counters so far (buffers, pipelines, bind groups, dispatches, submits).
    pub fn stats(&self) -> Stats {
        let mut s = self.counters.get();
        let p = self.pool.borrow().stats();
        s.buffers_created = p.created;
        s.bytes_created = p.bytes_created;
        s.staging_created = p.staging_created;
        s.bytes_in_use = p.in_use;
        s.peak_bytes_in_use = p.peak_in_use;
        s
    }

    /// Start measuring peak memory (`Stats::peak_bytes_in_use`) from now.
    pub fn reset_peak_memory(&self) {
        self.pool.borrow_mut().reset_peak();
    }

    pub(crate) fn bump(&self, f: impl FnOnce(&mut Stats)) {
        let mut s = self.counters.get();
        f(&mut s);
        self.counters.set(s);
    }

    /// The reason the device was lost, if it was.
    pub fn lost_reason(&self) -> Option<String> {
        self.lost.lock().ok().and_then(|l| l.clone())
    }
}

/// In the browser: whether the engine worker's `requestDevice` wrapper got the `subgroups` feature
/// for the device wgpu just opened (it sets `globalThis.__attnlabSubgroups`). Natively: no.
fn browser_granted_subgroups() -> bool {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Reflect::get(&js_sys::global(), &"__attnlabSubgroups".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        false
    }
}

fn no_adapter_hint() -> &'static str {
    if cfg!(target_arch = "wasm32") {
        "This browser offers no WebGPU adapter: use a current Chrome or Edge (WebGPU is on by \
         default), Firefox 141+ on Windows, or Safari 26+; on Linux start Chrome with \
         --enable-unsafe-webgpu (add --enable-features=Vulkan where needed)"
    } else {
        "Install a Vulkan driver: on Debian/Ubuntu `sudo apt-get install mesa-vulkan-drivers \
         libvulkan1` (Mesa's lavapipe runs without a GPU), or your GPU vendor's driver"
    }
}

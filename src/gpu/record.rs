//! Recording work: compiled pipelines (cached), per-dispatch parameters in one uniform arena
//! (bound at an offset, so a repeated step hits the bind-group cache), one open compute pass on one
//! command encoder until something needs the queue, and async readback.

use super::kernel::{Bind, Binding, Kernel, RowKernel};
use super::Gpu;
use crate::error::{Error, Result};
use std::collections::HashMap;

/// Bytes reserved per dispatch in the uniform arena (also WebGPU's offset alignment).
const SLOT: u64 = 256;
/// Dispatches recorded between two submits at most.
const SLOTS: u64 = 8192;
/// The bind-group cache is dropped when it grows past this many entries.
const MAX_BIND_GROUPS: usize = 65536;

struct Pipeline {
    id: u64,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

pub(crate) struct Recorder {
    modules: HashMap<&'static str, wgpu::ShaderModule>,
    pipelines: HashMap<(&'static str, &'static str), Pipeline>,
    bind_groups: HashMap<Vec<u64>, wgpu::BindGroup>,
    encoder: Option<wgpu::CommandEncoder>,
    pass: Option<wgpu::ComputePass<'static>>,
    arena: wgpu::Buffer,
    arena_cpu: Vec<u8>,
    arena_used: u64,
    slot: u64,
}

impl Recorder {
    pub fn new(device: &wgpu::Device, limits: &super::GpuLimits) -> Recorder {
        let slot = SLOT.max(limits.min_uniform_buffer_offset_alignment as u64);
        let arena = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params arena"),
            size: slot * SLOTS,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Recorder {
            modules: HashMap::new(),
            pipelines: HashMap::new(),
            bind_groups: HashMap::new(),
            encoder: None,
            pass: None,
            arena,
            arena_cpu: vec![0; (slot * SLOTS) as usize],
            arena_used: 0,
            slot,
        }
    }

    fn encoder(&mut self, device: &wgpu::Device) -> &mut wgpu::CommandEncoder {
        self.encoder.get_or_insert_with(|| {
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("step"),
            })
        })
    }
}

/// Workgroup counts for `groups` groups in one dimension, folded into y where x would exceed the
/// per-dimension limit. Kernels compute the flat group index as `wid.x + wid.y * nwg.x`.
pub fn grid_1d(groups: u32, max_per_dim: u32) -> [u32; 3] {
    let groups = groups.max(1);
    if groups <= max_per_dim {
        return [groups, 1, 1];
    }
    let y = groups.div_ceil(max_per_dim);
    [groups.div_ceil(y), y, 1]
}

impl Gpu {
    /// Record one dispatch of `k` with `params` at binding 0 and `bufs` at bindings 1.. .
    pub fn dispatch<P: bytemuck::Pod, B: Bind + ?Sized>(
        &self,
        k: &Kernel,
        params: &P,
        bufs: &[&B],
        groups: [u32; 3],
    ) -> Result<()> {
        let maxd = self.limits.max_compute_workgroups_per_dimension;
        if let Some(&g) = groups.iter().find(|&&g| g > maxd) {
            return Err(Error::Limit {
                limit: "max_compute_workgroups_per_dimension",
                max: maxd as u64,
                requested: g as u64,
                what: format!("kernel {}::{}", k.family, k.entry),
            });
        }
        if groups.contains(&0) {
            return Ok(());
        }
        let bufs = bufs
            .iter()
            .map(|t| {
                t.gpu_binding().ok_or_else(|| {
                    Error::Msg(format!(
                    "kernel {}::{}: tensor {t:?} lives on the CPU while the op runs on the GPU; \
                     create every tensor of a run on one device",
                    k.family, k.entry
                ))
                })
            })
            .collect::<Result<Vec<Binding>>>()?;
        let pbytes = bytemuck::bytes_of(params);
        if pbytes.len() as u64 > SLOT {
            return Err(Error::Msg(format!(
                "kernel {}::{}: params of {} bytes exceed {SLOT}",
                k.family,
                k.entry,
                pbytes.len()
            )));
        }
        if self.rec.borrow().arena_used + self.rec.borrow().slot
            > self.rec.borrow().arena_cpu.len() as u64
        {
            self.flush();
        }
        let mut guard = self.rec.borrow_mut();
        let r = &mut *guard;
        let offset = r.arena_used;
        r.arena_cpu[offset as usize..offset as usize + pbytes.len()].copy_from_slice(pbytes);
        r.arena_used += r.slot;

        if !r.pipelines.contains_key(&(k.family, k.entry)) {
            let module = r.modules.entry(k.family).or_insert_with(|| {
                self.device
                    .create_shader_module(wgpu::ShaderModuleDescriptor {
                        label: Some(k.family),
                        source: wgpu::ShaderSource::Wgsl(k.src.into()),
                    })
            });
            let pipeline = self
                .device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(k.entry),
                    layout: None,
                    module,
                    entry_point: Some(k.entry),
                    compilation_options: Default::default(),
                    cache: None,
                });
            let layout = pipeline.get_bind_group_layout(0);
            let id = r.pipelines.len() as u64 + 1;
            r.pipelines.insert(
                (k.family, k.entry),
                Pipeline {
                    id,
                    pipeline,
                    layout,
                },
            );
            self.bump(|s| s.pipelines_created += 1);
        }
        let p = &r.pipelines[&(k.family, k.entry)];

        // Each pooled buffer is bound whole (its bucket, within the binding limit): the kernels
        // take their sizes from the params, so a bind group depends on the buffers alone and
        // packed steps, whose token counts change every step, reuse theirs (tests/it/pool.rs).
        // A view into an arena is bound to its own bytes, from its offset.
        let max_bind = self.limits.max_storage_buffer_binding_size;
        let mut key = Vec::with_capacity(2 + 3 * bufs.len());
        key.push(p.id);
        key.push(offset);
        for b in &bufs {
            key.push(b.id);
            key.push(b.offset);
            key.push(if b.whole {
                b.buffer.size().min(max_bind).max(b.size)
            } else {
                b.size
            });
        }
        if !r.bind_groups.contains_key(&key) {
            if r.bind_groups.len() >= MAX_BIND_GROUPS {
                r.bind_groups.clear();
            }
            let mut entries = vec![wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &r.arena,
                    offset,
                    size: std::num::NonZeroU64::new(r.slot),
                }),
            }];
            for (i, b) in bufs.iter().enumerate() {
                // The bound size, as the key holds it.
                let size = key[4 + 3 * i];
                entries.push(wgpu::BindGroupEntry {
                    binding: i as u32 + 1,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: b.buffer,
                        offset: b.offset,
                        size: std::num::NonZeroU64::new(size),
                    }),
                });
            }
            let bg = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &p.layout,
                entries: &entries,
            });
            r.bind_groups.insert(key.clone(), bg);
            self.bump(|s| s.bind_groups_created += 1);
        }
        let pipeline = r.pipelines[&(k.family, k.entry)].pipeline.clone();
        let bg = r.bind_groups[&key].clone();
        if r.pass.is_none() {
            let enc = r.encoder(&self.device);
            let pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: None,
            });
            r.pass = Some(pass.forget_lifetime());
        }
        let pass = r.pass.as_mut().expect("pass was just opened");
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
        drop(guard);
        self.bump(|s| s.dispatches += 1);
        #[cfg(not(target_arch = "wasm32"))]
        if self.profile.borrow().is_some() {
            self.time_alone(k)?;
        }
        Ok(())
    }

    /// The build of a row kernel this device runs: with subgroup operations when it has them on.
    pub fn row_kernel<'a>(&self, k: &'a RowKernel) -> &'a Kernel {
        if self.subgroups() {
            &k.subgroup
        } else {
            &k.tree
        }
    }

    /// Every pipeline compiled so far, as `family::entry` (tests check which builds ran).
    pub fn pipelines(&self) -> Vec<String> {
        let r = self.rec.borrow();
        let mut v: Vec<_> = r
            .pipelines
            .keys()
            .map(|(f, e)| format!("{f}::{e}"))
            .collect();
        v.sort();
        v
    }

    /// Submit everything recorded so far. The params arena is written just before the submit,
    /// so the queue sees it before the dispatches that read it.
    pub fn flush(&self) {
        let mut r = self.rec.borrow_mut();
        r.pass = None;
        if let Some(enc) = r.encoder.take() {
            if r.arena_used > 0 {
                self.queue
                    .write_buffer(&r.arena, 0, &r.arena_cpu[..r.arena_used as usize]);
            }
            self.queue.submit([enc.finish()]);
            r.arena_used = 0;
            drop(r);
            self.bump(|s| s.submits += 1);
        }
    }

    /// Record a copy of `bytes` bytes from `src` at `src_offset` into `dst` at `dst_offset`, in
    /// order with the dispatches around it (the open compute pass is closed first; the next
    /// dispatch opens a new one). Offsets and size must be multiples of 4.
    pub fn copy(
        &self,
        src: &wgpu::Buffer,
        src_offset: u64,
        dst: &wgpu::Buffer,
        dst_offset: u64,
        bytes: u64,
    ) {
        if bytes == 0 {
            return;
        }
        let mut r = self.rec.borrow_mut();
        r.pass = None;
        r.encoder(&self.device)
            .copy_buffer_to_buffer(src, src_offset, dst, dst_offset, bytes);
    }

    /// Write bytes into a buffer from byte `at` (a multiple of 4). Work already recorded is
    /// submitted first, because a queue write lands before the next submit's commands and the
    /// buffer may be a recycled one that those commands still read.
    pub fn upload(&self, buffer: &wgpu::Buffer, at: u64, bytes: &[u8]) {
        if self.rec.borrow().encoder.is_some() {
            self.flush();
        }
        let n = bytes.len() & !3;
        self.queue.write_buffer(buffer, at, &bytes[..n]);
        if n < bytes.len() {
            let mut tail = [0u8; 4];
            tail[..bytes.len() - n].copy_from_slice(&bytes[n..]);
            self.queue.write_buffer(buffer, at + n as u64, &tail);
        }
    }

    /// Copy `len` bytes of a buffer from byte `at` (a multiple of 4) back to the CPU. Works the
    /// same natively and in the browser.
    pub async fn read_bytes(&self, buffer: &wgpu::Buffer, at: u64, len: u64) -> Result<Vec<u8>> {
        let bytes = len.max(4).next_multiple_of(4);
        let staging = self.pool.borrow_mut().take_staging(&self.device, bytes);
        {
            let mut r = self.rec.borrow_mut();
            r.pass = None;
            r.encoder(&self.device)
                .copy_buffer_to_buffer(buffer, at, &staging, 0, bytes);
        }
        self.flush();
        let (tx, rx) = futures_channel::oneshot::channel();
        staging
            .slice(0..bytes)
            .map_async(wgpu::MapMode::Read, move |res| {
                let _ = tx.send(res);
            });
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(format!("waiting for the GPU failed: {e}")))?;
        rx.await
            .map_err(|_| Error::Device("the GPU dropped a readback (device lost?)".into()))?
            .map_err(|e| Error::Device(format!("reading a buffer back failed: {e}")))?;
        let out = {
            let view = staging
                .slice(0..bytes)
                .get_mapped_range()
                .map_err(|e| Error::Device(format!("mapping a readback buffer failed: {e}")))?;
            view[..len as usize].to_vec()
        };
        staging.unmap();
        self.pool.borrow_mut().give_back_staging(staging);
        Ok(out)
    }

    /// Wait until all submitted work has finished.
    pub async fn sync(&self) -> Result<()> {
        self.flush();
        let (tx, rx) = futures_channel::oneshot::channel();
        self.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(format!("waiting for the GPU failed: {e}")))?;
        rx.await
            .map_err(|_| Error::Device("the GPU stopped answering (device lost?)".into()))
    }

    /// Free every pooled buffer that no tensor holds, and the bind groups that name them.
    pub fn trim(&self) {
        self.flush();
        self.rec.borrow_mut().bind_groups.clear();
        self.pool.borrow_mut().trim();
    }
}

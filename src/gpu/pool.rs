//! The buffer pool: storage buffers are handed out by size bucket and come back when the last
//! tensor using them is dropped, so a repeated training step allocates nothing after its first.

use crate::storage::bucket;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Weak;

/// A tensor's GPU buffer: goes back to its pool when the last clone of the tensor drops.
pub(crate) struct PoolBuf {
    pub id: u64,
    pub(super) buffer: Option<wgpu::Buffer>,
    pub(super) pool: Weak<RefCell<Pool>>,
}

impl PoolBuf {
    pub fn buffer(&self) -> &wgpu::Buffer {
        self.buffer
            .as_ref()
            .expect("a live tensor always holds its buffer")
    }
}

impl Drop for PoolBuf {
    fn drop(&mut self) {
        if let (Some(pool), Some(buf)) = (self.pool.upgrade(), self.buffer.take()) {
            if let Ok(mut p) = pool.try_borrow_mut() {
                p.give_back(self.id, buf);
            }
        }
    }
}

/// Storage buffers of one size bucket that nobody uses right now.
#[derive(Default)]
pub(crate) struct Pool {
    free: HashMap<u64, Vec<(u64, wgpu::Buffer)>>,
    staging: HashMap<u64, Vec<wgpu::Buffer>>,
    next_id: u64,
    created: u64,
    bytes_created: u64,
    staging_created: u64,
    /// Bytes of storage buffers handed out and not yet given back (live tensors), and the most
    /// since the last `reset_peak`.
    in_use: u64,
    peak_in_use: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    pub created: u64,
    pub bytes_created: u64,
    pub staging_created: u64,
    pub in_use: u64,
    pub peak_in_use: u64,
}

impl Pool {
    pub fn take(&mut self, device: &wgpu::Device, bytes: u64) -> (u64, wgpu::Buffer) {
        let size = bucket(bytes);
        self.in_use += size;
        self.peak_in_use = self.peak_in_use.max(self.in_use);
        // Hand out the free buffer with the smallest id, not the last one returned: a repeated
        // step then gets the same buffers in the same order as the step before (whatever order its
        // tensors were dropped in), so its bind groups are cache hits instead of new ones.
        if let Some(v) = self.free.get_mut(&size) {
            if let Some(i) = v
                .iter()
                .enumerate()
                .min_by_key(|(_, (id, _))| *id)
                .map(|(i, _)| i)
            {
                return v.swap_remove(i);
            }
        }
        self.next_id += 1;
        self.created += 1;
        self.bytes_created += size;
        let buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        (self.next_id, buf)
    }

    pub fn give_back(&mut self, id: u64, buf: wgpu::Buffer) {
        self.in_use = self.in_use.saturating_sub(buf.size());
        self.free.entry(buf.size()).or_default().push((id, buf));
    }

    pub fn take_staging(&mut self, device: &wgpu::Device, bytes: u64) -> wgpu::Buffer {
        let size = bucket(bytes);
        if let Some(b) = self.staging.get_mut(&size).and_then(|v| v.pop()) {
            return b;
        }
        self.staging_created += 1;
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    pub fn give_back_staging(&mut self, buf: wgpu::Buffer) {
        self.staging.entry(buf.size()).or_default().push(buf);
    }

    /// Destroy every buffer that is not in use.
    pub fn trim(&mut self) {
        for (_, v) in self.free.drain() {
            for (_, b) in v {
                b.destroy();
            }
        }
        for (_, v) in self.staging.drain() {
            for b in v {
                b.destroy();
            }
        }
    }

    pub fn stats(&self) -> PoolStats {
        PoolStats {
            created: self.created,
            bytes_created: self.bytes_created,
            staging_created: self.staging_created,
            in_use: self.in_use,
            peak_in_use: self.peak_in_use,
        }
    }

    /// Start a new peak from what is in use now.
    pub fn reset_peak(&mut self) {
        self.peak_in_use = self.in_use;
    }
}

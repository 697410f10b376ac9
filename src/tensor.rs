//! A GPU tensor: a shape over a pooled storage buffer of 4-byte elements (f32, or u32 token ids).
//! Cloning shares the buffer; the buffer goes back to the pool when the last clone is dropped.

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use std::cell::RefCell;
use std::fmt;
use std::rc::{Rc, Weak};

pub(crate) struct PoolBuf {
    id: u64,
    buffer: Option<wgpu::Buffer>,
    pool: Weak<RefCell<crate::gpu::PoolHandle>>,
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

#[derive(Clone)]
pub struct Tensor {
    buf: Rc<PoolBuf>,
    shape: Vec<usize>,
    gpu: Rc<Gpu>,
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor{:?}#{}", self.shape, self.buf.id)
    }
}

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

impl Tensor {
    /// A tensor whose contents are whatever the recycled buffer held: write it before reading it.
    pub fn uninit(gpu: &Rc<Gpu>, shape: &[usize]) -> Result<Tensor> {
        let n = numel(shape);
        let bytes = (n.max(1) * 4) as u64;
        let max = gpu.limits.max_storage_buffer_binding_size;
        if bytes > max {
            return Err(Error::Limit {
                limit: "max_storage_buffer_binding_size",
                max,
                requested: bytes,
                what: format!("a tensor of shape {shape:?} ({bytes} bytes)"),
            });
        }
        let (id, buffer) = gpu.pool.borrow_mut().take(&gpu.device, bytes);
        Ok(Tensor {
            buf: Rc::new(PoolBuf {
                id,
                buffer: Some(buffer),
                pool: Rc::downgrade(&gpu.pool),
            }),
            shape: shape.to_vec(),
            gpu: gpu.clone(),
        })
    }

    /// A tensor filled with `value`.
    pub fn full(gpu: &Rc<Gpu>, shape: &[usize], value: f32) -> Result<Tensor> {
        let t = Tensor::uninit(gpu, shape)?;
        crate::ops::fill::fill(&t, value)?;
        Ok(t)
    }

    pub fn zeros(gpu: &Rc<Gpu>, shape: &[usize]) -> Result<Tensor> {
        Tensor::full(gpu, shape, 0.0)
    }

    pub fn from_f32(gpu: &Rc<Gpu>, shape: &[usize], data: &[f32]) -> Result<Tensor> {
        check_len(shape, data.len())?;
        let t = Tensor::uninit(gpu, shape)?;
        gpu.upload(&t, bytemuck::cast_slice(data));
        Ok(t)
    }

    pub fn from_u32(gpu: &Rc<Gpu>, shape: &[usize], data: &[u32]) -> Result<Tensor> {
        check_len(shape, data.len())?;
        let t = Tensor::uninit(gpu, shape)?;
        gpu.upload(&t, bytemuck::cast_slice(data));
        Ok(t)
    }

    /// Overwrite the contents with `data` (same number of elements).
    pub fn write_f32(&self, data: &[f32]) -> Result<()> {
        check_len(&self.shape, data.len())?;
        self.gpu.upload(self, bytemuck::cast_slice(data));
        Ok(())
    }

    pub fn write_u32(&self, data: &[u32]) -> Result<()> {
        check_len(&self.shape, data.len())?;
        self.gpu.upload(self, bytemuck::cast_slice(data));
        Ok(())
    }

    pub async fn to_vec_f32(&self) -> Result<Vec<f32>> {
        let b = self.gpu.read_bytes(self).await?;
        Ok(bytemuck::pod_collect_to_vec(&b))
    }

    pub async fn to_vec_u32(&self) -> Result<Vec<u32>> {
        let b = self.gpu.read_bytes(self).await?;
        Ok(bytemuck::pod_collect_to_vec(&b))
    }

    /// Native only: block on [`Tensor::to_vec_f32`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(&self) -> Result<Vec<f32>> {
        pollster::block_on(self.to_vec_f32())
    }

    /// The same buffer seen with another shape of the same size.
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor> {
        if numel(shape) != self.numel() {
            return Err(crate::error::shape_err(
                "reshape",
                "element counts differ",
                &self.shape,
                shape,
            ));
        }
        Ok(Tensor {
            buf: self.buf.clone(),
            shape: shape.to_vec(),
            gpu: self.gpu.clone(),
        })
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    pub fn gpu(&self) -> &Rc<Gpu> {
        &self.gpu
    }

    pub(crate) fn nbytes(&self) -> u64 {
        (self.numel() * 4) as u64
    }

    /// Bytes bound for this tensor: its elements, at least one.
    pub(crate) fn bind_size(&self) -> u64 {
        self.nbytes().max(4)
    }

    pub(crate) fn buf_id(&self) -> u64 {
        self.buf.id
    }

    pub(crate) fn buffer(&self) -> &wgpu::Buffer {
        self.buf
            .buffer
            .as_ref()
            .expect("a live tensor always holds its buffer")
    }

    /// Whether two tensors share one buffer.
    pub fn same_buffer(&self, other: &Tensor) -> bool {
        Rc::ptr_eq(&self.buf, &other.buf)
    }
}

fn check_len(shape: &[usize], len: usize) -> Result<()> {
    if numel(shape) != len {
        return Err(Error::Shape(format!(
            "data of {len} elements for a tensor of shape {shape:?} ({} elements)",
            numel(shape)
        )));
    }
    Ok(())
}

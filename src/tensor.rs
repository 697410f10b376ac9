//! A tensor: a shape over pooled storage of 4-byte elements (f32, or u32 token ids) on one device,
//! a GPU buffer or CPU memory, from an element offset (0 unless it is a view into an arena, one
//! storage holding many tensors). Cloning shares the storage; it goes back to its pool when the
//! last clone or view is dropped.

use crate::cpu::CpuBuf;
use crate::device::{Backend, Device};
use crate::error::{Error, Result};
use crate::gpu::{Bind, Binding, PoolBuf};
use std::cell::{Ref, RefMut};
use std::fmt;
use std::rc::Rc;

enum Storage {
    Gpu(PoolBuf),
    Cpu(CpuBuf),
}

#[derive(Clone)]
pub struct Tensor {
    buf: Rc<Storage>,
    /// The first element's index in the storage.
    off: usize,
    /// Whether this is a view into an arena (made by `view`), bound to exactly its bytes.
    view: bool,
    shape: Vec<usize>,
    dev: Rc<Device>,
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor{:?}#{}", self.shape, self.buf_id())?;
        if self.off > 0 {
            write!(f, "+{}", self.off)?;
        }
        Ok(())
    }
}

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Elements between the starts of two views of one arena: 256 bytes, the largest storage-binding
/// offset alignment WebGPU lets a device ask for (`minStorageBufferOffsetAlignment`), so a view's
/// binding is valid on every device. The CPU backend keeps the same layout.
pub const VIEW_ALIGN: usize = 64;

impl Tensor {
    /// A tensor whose contents are whatever the recycled storage held: write it before reading it.
    pub fn uninit(dev: &Rc<Device>, shape: &[usize]) -> Result<Tensor> {
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| {
                Error::Shape(format!("a tensor of shape {shape:?} has too many elements"))
            })?;
        let bytes = (n.max(1) as u64).saturating_mul(4);
        let max = dev.max_tensor_bytes();
        if bytes > max {
            return Err(Error::Limit {
                limit: dev.tensor_limit_name(),
                max,
                requested: bytes,
                what: format!("a tensor of shape {shape:?} ({bytes} bytes)"),
            });
        }
        let buf = match dev.backend() {
            Backend::Gpu(dev) => Storage::Gpu(dev.alloc(bytes)),
            Backend::Cpu(cpu) => Storage::Cpu(cpu.alloc(n)),
        };
        Ok(Tensor {
            buf: Rc::new(buf),
            off: 0,
            view: false,
            shape: shape.to_vec(),
            dev: dev.clone(),
        })
    }

    /// A tensor filled with `value`.
    pub fn full(dev: &Rc<Device>, shape: &[usize], value: f32) -> Result<Tensor> {
        let t = Tensor::uninit(dev, shape)?;
        t.fill(value)?;
        Ok(t)
    }

    pub fn zeros(dev: &Rc<Device>, shape: &[usize]) -> Result<Tensor> {
        Tensor::full(dev, shape, 0.0)
    }

    pub fn from_f32(dev: &Rc<Device>, shape: &[usize], data: &[f32]) -> Result<Tensor> {
        check_len(shape, data.len())?;
        let t = Tensor::uninit(dev, shape)?;
        t.write_bytes(bytemuck::cast_slice(data))?;
        Ok(t)
    }

    pub fn from_u32(dev: &Rc<Device>, shape: &[usize], data: &[u32]) -> Result<Tensor> {
        check_len(shape, data.len())?;
        let t = Tensor::uninit(dev, shape)?;
        t.write_bytes(bytemuck::cast_slice(data))?;
        Ok(t)
    }

    /// Overwrite the contents with `data` (same number of elements).
    pub fn write_f32(&self, data: &[f32]) -> Result<()> {
        check_len(&self.shape, data.len())?;
        self.write_bytes(bytemuck::cast_slice(data))
    }

    pub fn write_u32(&self, data: &[u32]) -> Result<()> {
        check_len(&self.shape, data.len())?;
        self.write_bytes(bytemuck::cast_slice(data))
    }

    fn write_bytes(&self, bytes: &[u8]) -> Result<()> {
        match (&*self.buf, self.dev.backend()) {
            (Storage::Gpu(b), Backend::Gpu(dev)) => {
                dev.upload(b.buffer(), self.off as u64 * 4, bytes);
                Ok(())
            }
            _ => {
                let src: &[f32] = bytemuck::cast_slice(bytes);
                self.f32s_mut()?.copy_from_slice(src);
                Ok(())
            }
        }
    }

    /// Copy `n` elements of `src`, from element `src_at`, into this tensor from element
    /// `dst_at`; recorded in order with the ops around it (no readback). Refuses ranges outside
    /// either tensor and a source that is this tensor.
    pub fn copy_from(&self, dst_at: usize, src: &Tensor, src_at: usize, n: usize) -> Result<()> {
        let fits = |at: usize, len: usize| at.checked_add(n).is_some_and(|end| end <= len);
        if !fits(dst_at, self.numel()) || !fits(src_at, src.numel()) {
            return Err(Error::Shape(format!(
                "copy_from: {n} elements from {src_at} of {:?} into {dst_at} of {:?} fall outside a tensor",
                src.shape, self.shape
            )));
        }
        if self.same_buffer(src) {
            return Err(aliased());
        }
        match (&*self.buf, &*src.buf, self.dev.backend()) {
            (Storage::Gpu(d), Storage::Gpu(s), Backend::Gpu(dev)) => {
                dev.copy(
                    s.buffer(),
                    (src.off + src_at) as u64 * 4,
                    d.buffer(),
                    (self.off + dst_at) as u64 * 4,
                    n as u64 * 4,
                );
                Ok(())
            }
            _ => {
                let from = src.f32s()?;
                self.f32s_mut()?[dst_at..dst_at + n].copy_from_slice(&from[src_at..src_at + n]);
                Ok(())
            }
        }
    }

    /// Set every element to `value`.
    pub fn fill(&self, value: f32) -> Result<()> {
        match self.dev.backend() {
            Backend::Gpu(dev) => {
                let n = u32::try_from(self.numel()).map_err(|_| {
                    Error::Msg(format!(
                        "fill: {} elements do not fit in 32 bits",
                        self.numel()
                    ))
                })?;
                dev.fill(self, n, value)
            }
            Backend::Cpu(_) => {
                self.f32s_mut()?.fill(value);
                Ok(())
            }
        }
    }

    pub async fn to_vec_f32(&self) -> Result<Vec<f32>> {
        match (&*self.buf, self.dev.backend()) {
            (Storage::Gpu(b), Backend::Gpu(dev)) => {
                let b = dev
                    .read_bytes(b.buffer(), self.off as u64 * 4, self.nbytes())
                    .await?;
                Ok(bytemuck::pod_collect_to_vec(&b))
            }
            _ => {
                // A readback is where the GPU backend waits for the device; on the CPU backend it
                // is where a long computation gives the page a turn (nothing natively).
                crate::device::yield_to_host().await;
                Ok(self.f32s()?.to_vec())
            }
        }
    }

    pub async fn to_vec_u32(&self) -> Result<Vec<u32>> {
        let v = self.to_vec_f32().await?;
        Ok(bytemuck::cast_slice(&v).to_vec())
    }

    /// Native only: block on [`Tensor::to_vec_f32`].
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(&self) -> Result<Vec<f32>> {
        pollster::block_on(self.to_vec_f32())
    }

    /// The same storage seen with another shape of the same size.
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
            off: self.off,
            view: self.view,
            shape: shape.to_vec(),
            dev: self.dev.clone(),
        })
    }

    /// The elements `at..at + numel(shape)` of this tensor as a tensor of `shape` over the same
    /// storage (no copy): writes through either land in one place. `at` must be a multiple of
    /// `VIEW_ALIGN` from the storage's start, so the view can be bound on its own.
    pub fn view(&self, at: usize, shape: &[usize]) -> Result<Tensor> {
        let n = numel(shape);
        if at.checked_add(n).is_none_or(|end| end > self.numel()) {
            return Err(Error::Shape(format!(
                "view: {n} elements (shape {shape:?}) from element {at} fall outside {:?}",
                self.shape
            )));
        }
        let off = self.off + at;
        if !off.is_multiple_of(VIEW_ALIGN) {
            return Err(Error::Shape(format!(
                "view: element {off} of its storage is not a multiple of {VIEW_ALIGN}, \
                 so a kernel could not bind it; start views at aligned elements"
            )));
        }
        Ok(Tensor {
            buf: self.buf.clone(),
            off,
            view: true,
            shape: shape.to_vec(),
            dev: self.dev.clone(),
        })
    }

    /// The first element's index in the storage (0 unless this is a view).
    pub fn offset(&self) -> usize {
        self.off
    }

    /// Whether `self` is `arena`'s elements `at..at + self.numel()` (a view of it, or itself).
    pub fn is_view_of(&self, arena: &Tensor, at: usize) -> bool {
        Rc::ptr_eq(&self.buf, &arena.buf)
            && self.off == arena.off + at
            && at + self.numel() <= arena.numel()
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    pub fn device(&self) -> &Rc<Device> {
        &self.dev
    }

    pub(crate) fn nbytes(&self) -> u64 {
        (self.numel() * 4) as u64
    }

    pub(crate) fn buf_id(&self) -> u64 {
        match &*self.buf {
            Storage::Gpu(b) => b.id,
            Storage::Cpu(b) => b.id,
        }
    }

    fn cpu_buf(&self) -> Result<&CpuBuf> {
        match &*self.buf {
            Storage::Cpu(b) => Ok(b),
            Storage::Gpu(_) => Err(Error::Msg(
                "a GPU tensor was given to a CPU kernel (tensors of two devices mixed)".into(),
            )),
        }
    }

    /// The elements of a CPU tensor, to read.
    pub(crate) fn f32s(&self) -> Result<Ref<'_, [f32]>> {
        let (a, n) = (self.off, self.numel());
        let r = self.cpu_buf()?.data.try_borrow().map_err(|_| aliased())?;
        Ok(Ref::map(r, |v| &v[a..a + n]))
    }

    /// The elements of a CPU tensor, to write.
    pub(crate) fn f32s_mut(&self) -> Result<RefMut<'_, [f32]>> {
        let (a, n) = (self.off, self.numel());
        let r = self
            .cpu_buf()?
            .data
            .try_borrow_mut()
            .map_err(|_| aliased())?;
        Ok(RefMut::map(r, |v| &mut v[a..a + n]))
    }

    /// The elements of a CPU tensor of token ids.
    pub(crate) fn u32s(&self) -> Result<Ref<'_, [u32]>> {
        Ok(Ref::map(self.f32s()?, |v| bytemuck::cast_slice(v)))
    }

    /// Whether two tensors share elements of one storage (views of one arena that do not
    /// overlap do not): views are bound to exactly their bytes, so two of them may be bound in one
    /// dispatch (a layer's weight and bias gradients). Arenas keep to one role all the same
    /// (parameters are only read by ops, their gradients only accumulated into), as a native
    /// backend may refuse one buffer bound both read-only and written in one dispatch.
    pub fn same_buffer(&self, other: &Tensor) -> bool {
        let end = |t: &Tensor| t.off + t.numel().max(1);
        Rc::ptr_eq(&self.buf, &other.buf) && self.off < end(other) && other.off < end(self)
    }

    /// Whether two tensors live on the same device.
    pub fn same_device(&self, other: &Tensor) -> bool {
        Rc::ptr_eq(&self.dev, &other.dev)
    }
}

/// A kernel binds a tensor's buffer and its elements (at least one, as WebGPU requires).
impl Bind for Tensor {
    fn gpu_binding(&self) -> Option<Binding<'_>> {
        match &*self.buf {
            Storage::Gpu(b) => Some(Binding {
                buffer: b.buffer(),
                id: b.id,
                offset: self.off as u64 * 4,
                size: self.nbytes().max(4),
                whole: !self.view,
            }),
            Storage::Cpu(_) => None,
        }
    }
}

fn aliased() -> Error {
    Error::Msg(
        "one buffer is passed to an op in two roles (an input that is also its output); pass \
         distinct tensors"
            .into(),
    )
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

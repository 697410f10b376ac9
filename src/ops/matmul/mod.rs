//! Batched strided matmul `C[z] = alpha · A[z]·B[z] (+ bias)`, its backward, a CPU reference and the
//! autograd glue. Operands are [`View`]s, so transposes, head splits and the synthesizer's `w2[:, :T]`
//! slice are strides, not copies. Shapes: A (Z, M, K), B (Z, K, N), C (Z, M, N), Z = Z1·Z2.

pub(crate) mod check;
pub(crate) mod cpu;
pub mod gpu;
// The page's relaxed-SIMD build multiplies with its own packed kernel (fused multiply-add); its
// blocking is tested natively.
#[cfg(any(test, all(target_arch = "wasm32", target_feature = "relaxed-simd")))]
mod packed;
mod reference;

pub use crate::gpu::MatmulKernel;
pub use reference::{matmul_backward_ref, matmul_ref};

use crate::autograd::{Tape, Var};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The GPU kernel products on `dev` use now; None on the CPU backend, which has one kernel.
pub fn kernel(dev: &Device) -> Option<MatmulKernel> {
    dev.as_gpu().map(|g| g.matmul_kernel())
}

/// Use kernel `k` for the products that follow on `dev` (`bench::tune_matmul` times them all);
/// nothing to choose on the CPU backend.
pub fn set_kernel(dev: &Device, k: MatmulKernel) {
    if let Some(g) = dev.as_gpu() {
        g.set_matmul_kernel(k);
    }
}

/// Where element (z1, z2, i, j) of a batched matrix sits: `z1*outer + z2*inner + i*row + j*col`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    pub outer: usize,
    pub inner: usize,
    pub row: usize,
    pub col: usize,
}

impl View {
    /// A plain row-major (rows × cols) matrix, repeated `batch` times back to back.
    pub fn contiguous(rows: usize, cols: usize) -> View {
        View {
            outer: rows * cols,
            inner: rows * cols,
            row: cols,
            col: 1,
        }
    }
    /// The same elements read as the transpose.
    pub fn t(self) -> View {
        View {
            row: self.col,
            col: self.row,
            ..self
        }
    }
    /// Whether every batch reads the same matrix (a weight shared across the batch).
    pub fn broadcast(&self) -> bool {
        self.outer == 0 && self.inner == 0
    }
    fn offset(&self, z1: usize, z2: usize, i: usize, j: usize) -> usize {
        z1 * self.outer + z2 * self.inner + i * self.row + j * self.col
    }
}

/// A whole matmul: batch (Z1, Z2), the matrix sizes and the three views.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub z: (usize, usize),
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a: View,
    pub b: View,
    pub c: View,
    pub alpha: f32,
}

impl Spec {
    /// `C = A·B` for contiguous (M, K) and (K, N) matrices.
    pub fn plain(m: usize, k: usize, n: usize) -> Spec {
        Spec {
            z: (1, 1),
            m,
            n,
            k,
            a: View::contiguous(m, k),
            b: View::contiguous(k, n),
            c: View::contiguous(m, n),
            alpha: 1.0,
        }
    }
    pub fn batches(&self) -> usize {
        self.z.0 * self.z.1
    }
    /// One past the largest element index a view touches, or 0 for an empty product.
    fn extent(v: &View, z: (usize, usize), rows: usize, cols: usize) -> usize {
        if z.0 == 0 || z.1 == 0 || rows == 0 || cols == 0 {
            return 0;
        }
        v.offset(z.0 - 1, z.1 - 1, rows - 1, cols - 1) + 1
    }
    /// Check that every view stays inside its buffer.
    pub fn check(&self, a: usize, b: usize, c: usize, bias: Option<usize>) -> Result<()> {
        let need = [
            ("A", Spec::extent(&self.a, self.z, self.m, self.k), a),
            ("B", Spec::extent(&self.b, self.z, self.k, self.n), b),
            ("C", Spec::extent(&self.c, self.z, self.m, self.n), c),
        ];
        for (name, need, have) in need {
            if need > have {
                return Err(Error::Shape(format!(
                    "matmul (Z={:?}, M={}, N={}, K={}): operand {name} needs {need} elements but its tensor has {have}",
                    self.z, self.m, self.n, self.k
                )));
            }
        }
        if let Some(len) = bias {
            if len < self.n {
                return Err(Error::Shape(format!(
                    "matmul bias has {len} elements but N = {}",
                    self.n
                )));
            }
        }
        Ok(())
    }
}

fn strides(v: &View) -> cpu::Strides {
    cpu::Strides {
        outer: v.outer,
        inner: v.inner,
        row: v.row,
        col: v.col,
    }
}

// ---------------------------------------------------------------------------------------------
// On the tensors' device

/// Record `C (+)= alpha·A·B (+ bias)` on the GPU.
pub fn matmul_into(
    a: &Tensor,
    b: &Tensor,
    bias: Option<&Tensor>,
    c: &Tensor,
    s: &Spec,
    accumulate: bool,
) -> Result<()> {
    s.check(a.numel(), b.numel(), c.numel(), bias.map(|t| t.numel()))?;
    let Some(gpu) = a.device().as_gpu() else {
        let threads = match a.device().backend() {
            crate::device::Backend::Cpu(cpu) => cpu.threads(),
            crate::device::Backend::Gpu(_) => 1,
        };
        let p = cpu::Product {
            z: s.z,
            m: s.m,
            n: s.n,
            k: s.k,
            a: strides(&s.a),
            b: strides(&s.b),
            c: strides(&s.c),
            alpha: s.alpha,
            accumulate,
        };
        let (av, bv, biasv) = (a.f32s()?, b.f32s()?, bias.map(|t| t.f32s()).transpose()?);
        cpu::matmul(&av, &bv, biasv.as_deref(), &mut c.f32s_mut()?, &p, threads);
        return Ok(());
    };
    let has_bias = bias.is_some();
    gpu::matmul(gpu, [a, b, bias.unwrap_or(a), c], s, has_bias, accumulate)
}

/// `dst (+)= Σ over (z, i) of src[z, i, j]`, dst a view with `dv.0` columns (see the shader).
#[allow(clippy::too_many_arguments)]
fn sum_rows_into(
    src: &Tensor,
    sv: &View,
    z: (usize, usize),
    m: usize,
    n: usize,
    dst: &Tensor,
    dv: (usize, usize, usize),
    acc: bool,
) -> Result<()> {
    let Some(gpu) = src.device().as_gpu() else {
        let sv = strides(sv);
        cpu::sum_rows(&src.f32s()?, &sv, z, m, n, &mut dst.f32s_mut()?, dv, acc);
        return Ok(());
    };
    gpu::sum_rows(gpu, src, sv, z, m, n, dst, dv, acc)
}

/// Gradients of `C = alpha·A·B + bias`, accumulated into `da`, `db`, `dbias` (each optional).
#[allow(clippy::too_many_arguments)]
pub fn matmul_backward_into(
    a: &Tensor,
    b: &Tensor,
    dc: &Tensor,
    s: &Spec,
    da: Option<&Tensor>,
    db: Option<&Tensor>,
    dbias: Option<&Tensor>,
) -> Result<()> {
    if let Some(da) = da {
        // dA = alpha · dC · Bᵀ, written through A's view.
        let sa = Spec {
            m: s.m,
            n: s.k,
            k: s.n,
            a: s.c,
            b: s.b.t(),
            c: s.a,
            ..*s
        };
        if s.a.broadcast() && s.batches() > 1 && !a.device().is_cpu() {
            reduce_broadcast(dc, b, da, &sa, s.m, s.k)?;
        } else {
            matmul_into(dc, b, None, da, &sa, true)?;
        }
    }
    if let Some(db) = db {
        // dB = alpha · Aᵀ · dC, written through B's view.
        let sb = Spec {
            m: s.k,
            n: s.n,
            k: s.m,
            a: s.a.t(),
            b: s.c,
            c: s.b,
            ..*s
        };
        if s.b.broadcast() && s.batches() > 1 && !a.device().is_cpu() {
            reduce_broadcast(a, dc, db, &sb, s.k, s.n)?;
        } else {
            matmul_into(a, dc, None, db, &sb, true)?;
        }
    }
    if let Some(dbias) = dbias {
        sum_rows_into(dc, &s.c, s.z, s.m, s.n, dbias, (s.n, 0, 1), true)?;
    }
    Ok(())
}

/// The gradient of an operand shared by every batch: each batch's product goes to its own slice
/// of a scratch tensor (so no two workgroups add to one element), then the slices are summed.
fn reduce_broadcast(
    x: &Tensor,
    y: &Tensor,
    dst: &Tensor,
    s: &Spec,
    rows: usize,
    cols: usize,
) -> Result<()> {
    let z = s.batches();
    let scratch = Tensor::uninit(x.device(), &[z, rows, cols])?;
    let per = View {
        outer: s.z.1 * rows * cols,
        inner: rows * cols,
        row: cols,
        col: 1,
    };
    matmul_into(x, y, None, &scratch, &Spec { c: per, ..*s }, false)?;
    let flat = View {
        outer: s.z.1 * rows * cols,
        inner: rows * cols,
        row: 0,
        col: 1,
    };
    sum_rows_into(
        &scratch,
        &flat,
        s.z,
        1,
        rows * cols,
        dst,
        (cols, s.c.row, s.c.col),
        true,
    )
}

// ---------------------------------------------------------------------------------------------
// Autograd

/// `C = alpha·A·B (+ bias)` on the tape; `out_shape` is the shape of the new tensor C, whose
/// elements the view `s.c` must cover.
pub fn matmul(
    tape: &Tape,
    a: &Var,
    b: &Var,
    bias: Option<&Var>,
    s: Spec,
    out_shape: &[usize],
) -> Result<Var> {
    let c = Tensor::uninit(a.device(), out_shape)?;
    matmul_into(a.value(), b.value(), bias.map(|v| v.value()), &c, &s, false)?;
    let (a2, b2, bias2) = (a.clone(), b.clone(), bias.cloned());
    let mut inputs = vec![a, b];
    if let Some(bv) = bias {
        inputs.push(bv);
    }
    Ok(tape.push("matmul", &inputs, c, move |out| {
        let dc = out.grad_or_zeros()?;
        let da = if a2.requires_grad() {
            Some(a2.grad_or_zeros()?)
        } else {
            None
        };
        let db = if b2.requires_grad() {
            Some(b2.grad_or_zeros()?)
        } else {
            None
        };
        let dbias = match &bias2 {
            Some(v) if v.requires_grad() => Some(v.grad_or_zeros()?),
            _ => None,
        };
        matmul_backward_into(
            a2.value(),
            b2.value(),
            &dc,
            &s,
            da.as_ref(),
            db.as_ref(),
            dbias.as_ref(),
        )
    }))
}

/// PyTorch's `Linear`: `y = x·Wᵀ + b` for x (N, K) and W (OUT, K), giving (N, OUT).
pub fn linear(tape: &Tape, x: &Var, w: &Var, b: Option<&Var>) -> Result<Var> {
    let (xs, ws) = (x.shape(), w.shape());
    let k = *xs.last().unwrap_or(&0);
    if ws.len() != 2 || ws[1] != k {
        return Err(crate::error::shape_err(
            "linear",
            "input (.., K) and weight (OUT, K)",
            xs,
            ws,
        ));
    }
    if let Some(bv) = b {
        if bv.shape() != [ws[0]] {
            return Err(crate::error::shape_err(
                "linear",
                "weight (OUT, K) and bias (OUT)",
                ws,
                bv.shape(),
            ));
        }
    }
    let n = x.value().numel() / k.max(1);
    let out = ws[0];
    let s = Spec {
        z: (1, 1),
        m: n,
        n: out,
        k,
        a: View::contiguous(n, k),
        b: View::contiguous(out, k).t(),
        c: View::contiguous(n, out),
        alpha: 1.0,
    };
    let mut shape = xs.to_vec();
    if let Some(last) = shape.last_mut() {
        *last = out;
    }
    matmul(tape, x, w, b, s, &shape)
}

//! Profiling the kernels: while it is on, every dispatch is submitted and waited for on its own
//! and its wall time added to its kernel's row (`bench --step N --profile`).

use super::Gpu;
#[cfg(not(target_arch = "wasm32"))]
use {
    super::kernel::Kernel,
    crate::{Error, Result},
};

impl Gpu {
    /// Profiling: submit and wait for everything recorded (so far only the dispatch just made,
    /// since the previous one was waited for too) and add the wall time to the kernel's row.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn time_alone(&self, k: &Kernel) -> Result<()> {
        let t0 = std::time::Instant::now();
        self.flush();
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(format!("waiting for the GPU failed: {e}")))?;
        let dt = t0.elapsed().as_secs_f64();
        if let Some(m) = self.profile.borrow_mut().as_mut() {
            let e = m.entry(format!("{}::{}", k.family, k.entry)).or_default();
            e.0 += 1;
            e.1 += dt;
        }
        Ok(())
    }

    /// Start (true, clearing the table) or stop profiling. While on, every dispatch is submitted
    /// and waited for on its own, which makes steps slower but attributes time to kernels.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn set_profiling(&self, on: bool) -> Result<()> {
        pollster::block_on(self.sync())?;
        *self.profile.borrow_mut() = on.then(Default::default);
        Ok(())
    }

    /// The profile so far: (kernel, dispatches, seconds), slowest first.
    pub fn profile(&self) -> Vec<(String, u64, f64)> {
        let mut v: Vec<_> = self
            .profile
            .borrow()
            .iter()
            .flatten()
            .map(|(k, &(n, s))| (k.clone(), n, s))
            .collect();
        v.sort_by(|a, b| b.2.total_cmp(&a.2));
        v
    }
}

// What the demos call their two computations: the kernels that train the GPT on this page's device
// (WebGPU, or the CPU backend's f32 kernels) and the f64 reference beside them. demos.js sets the
// backend once the device is open; the items read these names when they draw.
export const L = { k: 'GPU', ref: 'CPU', kf: 'GPU (f32)', reff: 'CPU (f64)', on: 'the GPU' };

export function setBackend(kind) {
  if (kind === 'cpu')
    Object.assign(L, {
      k: 'f32',
      ref: 'f64',
      kf: 'kernels (f32)',
      reff: 'reference (f64)',
      on: 'the CPU backend',
    });
  else
    Object.assign(L, { k: 'GPU', ref: 'CPU', kf: 'GPU (f32)', reff: 'CPU (f64)', on: 'the GPU' });
}

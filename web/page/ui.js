// Numbers and times as people read them.
export const fmt = {
  loss: (x) => (!Number.isFinite(x) ? String(x) : Math.abs(x) >= 1e4 ? x.toExponential(3) : x.toFixed(4)),
  lr: (x) => x.toExponential(3),
  int: (x) => Math.round(x).toLocaleString(),
  time: (s) => {
    if (!Number.isFinite(s)) return '—';
    s = Math.max(0, Math.round(s));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
    return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
  },
  clock: (t) => new Date(t).toLocaleTimeString(),
};

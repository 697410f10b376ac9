// Focus that never falls to the page's body: when the focused button turns disabled (Pretrain once
// a run starts, Pause once it has paused, Evaluate while it runs), focus moves to an enabled button
// of the same row (Pause, Resume, Stop, ...), which may be enabled a moment later, when the engine
// answers; after a second with none, to the first control of its card. A keyboard user stays where
// they were.
const CONTROLS = 'button:not([disabled]):not([hidden]), select:not([disabled]), input:not([disabled]):not([type=hidden])';
const WAIT_MS = 1000;

export function keepFocus(root = document.body) {
  let last = null;
  // A row whose focused button was disabled with nothing beside it enabled yet: {row, card, timer}.
  let waiting = null;
  const shown = (scope) => [...scope.querySelectorAll(CONTROLS)].find((b) => b.offsetParent !== null);
  const lost = () => document.activeElement === null || document.activeElement === document.body;
  root.addEventListener('focusin', (e) => { last = e.target; });
  new MutationObserver((changes) => {
    for (const c of changes) {
      const el = c.target;
      if (waiting && !el.disabled && waiting.row.contains(el) && lost()) {
        clearTimeout(waiting.timer);
        waiting = null;
        el.focus();
        continue;
      }
      if (el !== last || !el.disabled || !(document.activeElement === el || lost())) continue;
      const row = el.parentElement || root;
      const card = el.closest('section, article') || root;
      const next = shown(row);
      if (next) { next.focus(); continue; }
      if (waiting) clearTimeout(waiting.timer);
      const w = { row, card, timer: setTimeout(() => {
        if (waiting === w) waiting = null;
        const n = lost() && shown(card);
        if (n) n.focus();
      }, WAIT_MS) };
      waiting = w;
    }
  }).observe(root, { subtree: true, attributes: true, attributeFilter: ['disabled'] });
}

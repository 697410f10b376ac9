// Focus that never falls to the page's body: when the focused button turns disabled (Pretrain once
// a run starts, Pause once it has paused, Evaluate while it runs), focus moves to an enabled button
// of the same row (Pause, Resume, Stop, ...), which may be enabled a moment later, when the engine
// answers; after a second with none, to the first control of its card. When the focused control is
// hidden (or a box around it: the evaluation's Stop, the saved run's banner), focus goes to the
// control its `data-focus-next` names (by id), or else the same way. A keyboard user stays where
// they were.
const CONTROLS = 'button:not([disabled]):not([hidden]), select:not([disabled]), input:not([disabled]):not([type=hidden])';
const WAIT_MS = 1000;

export function keepFocus(root = document.body) {
  let last = null;
  // A row whose focused button was disabled with nothing beside it enabled yet: {row, card, timer}.
  let waiting = null;
  const shown = (scope) => [...scope.querySelectorAll(CONTROLS)].find((b) => b.offsetParent !== null);
  const lost = () => document.activeElement === null || document.activeElement === document.body;
  const usable = (b) => b && !b.disabled && !b.hidden && b.offsetParent !== null;
  // Focus `next` now if it can take it, else wait up to a second for its row, then its card.
  const moveTo = (next) => {
    if (usable(next)) { next.focus(); return; }
    const row = next.parentElement || root;
    const card = next.closest('section, article') || root;
    const now = shown(row);
    if (now && !now.contains(last)) { now.focus(); return; }
    if (waiting) clearTimeout(waiting.timer);
    const w = { row, card, timer: setTimeout(() => {
      if (waiting === w) waiting = null;
      const n = lost() && shown(card);
      if (n) n.focus();
    }, WAIT_MS) };
    waiting = w;
  };
  root.addEventListener('focusin', (e) => { last = e.target; });
  new MutationObserver((changes) => {
    for (const c of changes) {
      const el = c.target;
      if (waiting && !el.disabled && !el.hidden && waiting.row.contains(el) && lost()) {
        clearTimeout(waiting.timer);
        waiting = null;
        el.focus();
        continue;
      }
      if (!last || !el.contains(last) || !(el.disabled || el.hidden)) continue;
      if (!(el.contains(document.activeElement) || lost())) continue;
      const hint = last.closest('[data-focus-next]');
      const named = hint && document.getElementById(hint.dataset.focusNext);
      if (named) { moveTo(named); continue; }
      if (el.hidden && el !== last) continue; // a box hidden with no hint: nothing sensible beside it
      moveTo(last);
    }
  }).observe(root, { subtree: true, attributes: true, attributeFilter: ['disabled', 'hidden'] });
}

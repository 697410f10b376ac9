// Focus that never falls to the page's body: when the focused button turns disabled (Pretrain once
// a run starts, Pause once it has paused, Evaluate while it runs), focus moves to an enabled button
// of the same row (Pause, Resume, Stop, ...), which may be enabled a moment later, when the engine
// answers; after a second with none, to the first control of its card. When the focused control is
// hidden (or a box around it: the evaluation's Stop, the saved run's banner), focus goes to the
// control its `data-focus-next` names (by id), or else the same way. When the focused control is
// removed (a table drawn again: the Models card after Keep or Remove), focus goes to its like in the
// same card (the same id, or the same tag and data attributes), or else to the card's first control.
// A keyboard user stays where they were.
const CONTROLS =
  'button:not([disabled]):not([hidden]), select:not([disabled]), input:not([disabled]):not([type=hidden])';
const WAIT_MS = 1000;
// A control named by `data-focus-next` (Pause after Pretrain) may come much later than a second: on
// a slow adapter the run first measures the device.
const WAIT_NAMED_MS = 15000;

export function keepFocus(root = document.body) {
  let last = null;
  // Focus waiting for a control to be enabled: {target (the named control, or null: any control of
  // the row), from (the control that lost focus: back to it if it comes back first, as Pretrain does
  // when a run is refused), row, card, timer}; when the timer fires, the row's or card's first control.
  let waiting = null;
  const shown = (scope) =>
    [...scope.querySelectorAll(CONTROLS)].find((b) => b.offsetParent !== null);
  const lost = () => document.activeElement === null || document.activeElement === document.body;
  const usable = (b) => b && !b.disabled && !b.hidden && b.offsetParent !== null;
  const wait = (target, row, card, ms) => {
    if (waiting) clearTimeout(waiting.timer);
    const w = {
      target,
      from: last,
      row,
      card,
      timer: setTimeout(() => {
        if (waiting === w) waiting = null;
        const n = lost() && (shown(row) || shown(card));
        if (n) n.focus();
      }, ms),
    };
    waiting = w;
  };
  // Focus `next` now if it can take it; a named control is waited for, else a control of its row.
  const moveTo = (next, named) => {
    if (usable(next)) {
      next.focus();
      return;
    }
    const row = next.parentElement || root;
    const card = next.closest('section, article') || root;
    if (named) {
      wait(next, row, card, WAIT_NAMED_MS);
      return;
    }
    const now = shown(row);
    if (now && !now.contains(last)) {
      now.focus();
      return;
    }
    wait(null, row, card, WAIT_MS);
  };
  // The card of the control last focused (a removed control no longer knows its card).
  let lastCard = null;
  // A selector for a control like `el`: its id, or its tag with its data attributes.
  const likeOf = (el) =>
    el.id
      ? `#${CSS.escape(el.id)}`
      : el.localName +
        Object.entries(el.dataset)
          .map(
            ([k, v]) =>
              `[data-${k.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)}="${CSS.escape(v)}"]`,
          )
          .join('');
  root.addEventListener('focusin', (e) => {
    last = e.target;
    lastCard = last.closest('section, article');
  });
  new MutationObserver((changes) => {
    if (last && !last.isConnected && lost() && lastCard && lastCard.isConnected) {
      const like = [...lastCard.querySelectorAll(likeOf(last))].find(usable);
      const next = like || shown(lastCard);
      if (next) next.focus();
    }
    for (const c of changes) {
      if (c.type !== 'attributes') continue;
      const el = c.target;
      if (
        waiting &&
        (waiting.target
          ? el === waiting.target || el === waiting.from
          : waiting.row.contains(el)) &&
        usable(el) &&
        lost()
      ) {
        clearTimeout(waiting.timer);
        waiting = null;
        el.focus();
        continue;
      }
      if (!last || !el.contains(last) || !(el.disabled || el.hidden)) continue;
      if (!(el.contains(document.activeElement) || lost())) continue;
      const hint = last.closest('[data-focus-next]');
      const named = hint && document.getElementById(hint.dataset.focusNext);
      if (named) {
        moveTo(named, true);
        continue;
      }
      if (el.hidden && el !== last) continue; // a box hidden with no hint: nothing sensible beside it
      moveTo(last, false);
    }
  }).observe(root, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ['disabled', 'hidden'],
  });
}

// Formulas as mathematics: KaTeX (the npm package, served from this origin by scripts/serve.py at
// web/vendor/katex/; nothing is fetched from elsewhere). katex.render builds the formula as DOM
// nodes (styles set through the DOM, which the page's Content-Security-Policy allows), into an
// element that holds a plain-text version until then, and keeps it if KaTeX cannot load.
let katex = null;

function loadKatex() {
  if (!katex) {
    katex = (async () => {
      if (!document.querySelector('link[href$="vendor/katex/katex.min.css"]')) {
        const css = document.createElement('link');
        css.rel = 'stylesheet';
        css.href = new URL('../vendor/katex/katex.min.css', import.meta.url).href;
        document.head.appendChild(css);
      }
      return (await import('../vendor/katex/katex.mjs')).default;
    })();
    katex.catch(() => {});
  }
  return katex;
}

// Render `tex` into `el`; resolves to true when KaTeX drew it (false: the plain text stays).
export async function renderTex(el, tex) {
  try {
    const k = await loadKatex();
    k.render(`\\displaystyle ${tex}`, el, {
      throwOnError: true,
      displayMode: false,
      output: 'htmlAndMathml',
    });
    el.classList.add('tex');
    return true;
  } catch (e) {
    el.dataset.texError = String((e && e.message) || e);
    return false;
  }
}

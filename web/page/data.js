// The Data card: the built-in corpus, the served data folder (serve.py --data) and the user's files,
// each checked for its role by the library (file:line messages).
import { $, P, S, data, running } from './core.js';
import { emit } from './events.js';
import { errText, esc, showBox } from './ui.js';
import * as store from './store.js';

// ---------------------------------------------------------------------------------------------
// Data

export const ROLES = {
  wiki: 'pretraining text',
  train: 'finetuning questions',
  dev: 'dev questions',
  test: 'test questions',
};

export function roleFor(name) {
  const n = name.toLowerCase();
  if (n.includes('wiki') || n.endsWith('.txt')) return 'wiki';
  if (n.includes('train')) return 'train';
  if (n.includes('dev')) return 'dev';
  if (n.includes('test')) return 'test';
  return null;
}

// Check a file's text for its role: { info (what the Data card shows), examples (run.py's count:
// wiki.txt's lines, a TSV's questions), vocab (wiki.txt's vocabulary size) }; throws the library's message (file:line:
// what is wrong).
export async function check(role, name, text) {
  if (role === 'wiki') {
    const i = await P.engine.check_corpus(name, text);
    // run.py's examples are text.split('\n'): a final newline adds an empty one, which the schedule counts.
    const lines = i.documents - (/[\r\n]$/.test(text) ? 1 : 0);
    const examples =
      lines === i.documents ? '' : ` (run.py counts ${i.documents.toLocaleString()} examples)`;
    return {
      info:
        `${lines.toLocaleString()} ` +
        `line${lines === 1 ? '' : 's'}${examples}, ${i.chars.toLocaleString()} characters, ` +
        `vocabulary ${i.vocab_size}`,
      examples: i.documents,
      vocab: i.vocab_size,
    };
  }
  const i = await P.engine.check_tsv(name, text, role === 'train');
  return {
    info:
      `${i.rows.toLocaleString()} ` +
      `question${i.rows === 1 ? '' : 's'}${i.answers ? ' with answers' : ' (no answers)'}`,
    examples: i.rows,
  };
}

export async function setData(role, name, text) {
  data[role] = { name, text, ...(await check(role, name, text)) };
}

// A file name that wraps after its underscores, dots and dashes (birth_places_ / train.tsv), not
// inside a word (birth_places_train.t / sv).
const breakable = (name) => esc(name).replace(/([_.\/-])/g, '$1<wbr>');

export function showData() {
  const body = $('data-table').querySelector('tbody');
  body.innerHTML = Object.keys(ROLES)
    .map((r) => {
      const f = data[r];
      return (
        `<tr><td>${ROLES[r]}</td><td>${f ? breakable(f.name) : '<span class="muted">none</span>'}</td>` +
        `<td>${f ? esc(f.info) : ''}</td></tr>`
      );
    })
    .join('');
  const n = (role) => (P.embeddedInfo && P.embeddedInfo[role] ? P.embeddedInfo[role].examples : 0);
  const people = (n('train') + n('dev') + n('test')).toLocaleString('en');
  const src =
    {
      embedded:
        `The built-in generated corpus is loaded: ${people} made-up people with biographies and ` +
        `birthplaces, in the course files’ format but smaller (${n('train')} ` +
        `finetuning, ${n('dev')} dev and ${n('test')} ` +
        'test questions, where the course’s files have 2,000, 500 and 437).',
      notes:
        'The built-in people in two short notes each, “NAME. Born in PLACE .” and one other ' +
        'phrasing of it (the middle preset’s pretraining text: with no other facts to store ' +
        'and two phrasings of each birthplace, its run stores them in under half the epochs the ' +
        'whole biographies need); the questions are the built-in ones.',
      births:
        'The built-in corpus with each biography cut to the person’s name and birth sentence ' +
        '(with the middle preset’s model and ' +
        '650 pretraining epochs it stores more birthplaces than the preset’s run, in about ' +
        'twice its time); the questions are the built-in ones.',
      served: 'Using the data folder the server offers (/data).',
      files:
        'Using your files where you gave one; the table says which file each role reads. They ' +
        'are kept in this browser (never sent anywhere), so a reload reads them again; a button ' +
        'above goes back to the built-in or served files.',
    }[S.dataSource] || '';
  $('data-summary').textContent = src;
  $('use-served').hidden = !P.served;
  // The source in use is the pressed button (none when files of your own are mixed in).
  for (const [id, source] of [
    ['use-embedded', 'embedded'],
    ['use-notes', 'notes'],
    ['use-births', 'births'],
    ['use-served', 'served'],
  ]) {
    $(id).setAttribute('aria-pressed', String(S.dataSource === source));
  }
  emit('data');
}

export async function decodeFile(file) {
  const buf = await file.arrayBuffer();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    throw new Error(`${file.name} is not UTF-8 text; save it as UTF-8 (the course files are)`);
  }
}

export async function loadFiles(files, forced) {
  const msgs = [];
  // The engine checks files between its other calls: say so when one runs (the first measurement
  // of a slow adapter takes tens of seconds), rather than showing nothing until it ends.
  const busy = running();
  if (busy) {
    $('data-summary').textContent =
      `Checking ${files.map((f) => f.name).join(', ')} next: the engine is busy ` +
      `(${busy === 'measure' ? 'timing a few training steps of this device, once' : busy}).`;
  }
  for (const file of files) {
    const role = forced || roleFor(file.name);
    if (!role) {
      msgs.push(
        `${file.name}: cannot tell which file this is; name it like wiki.txt, ` +
          `birth_places_train.tsv, birth_dev.tsv or birth_test_inputs.tsv, or use the picker for ` +
          `its role`,
      );
      continue;
    }
    try {
      await setData(role, file.name, await decodeFile(file));
      data[role].mine = true;
      S.dataSource = 'files';
    } catch (e) {
      msgs.push(errText(e));
    }
  }
  await keepFiles();
  S.dataError = msgs.length ? msgs.join('\n') : null;
  showBox('data-error', msgs.length ? msgs.map((m) => `<p>${esc(m)}</p>`).join('') : null);
  showData();
}

// The student's own files, kept in this browser ("files" in store.js) so that a reload reads them
// again over the built-in or served ones; a button of those forgets them (wireData).
async function keepFiles() {
  const mine = Object.fromEntries(
    Object.entries(data)
      .filter(([, f]) => f && f.mine)
      .map(([r, f]) => [r, { name: f.name, text: f.text }]),
  );
  if (Object.keys(mine).length) await store.put('files', mine).catch(() => {});
}
const forgetFiles = () => store.del('files').catch(() => {});

// At start, after the built-in or served files are in place: the student's kept files over them.
export async function restoreFiles() {
  const kept = await store.get('files').catch(() => null);
  if (!kept || !Object.keys(kept).length) return;
  const msgs = [];
  for (const [role, f] of Object.entries(kept)) {
    if (!ROLES[role] || !f || typeof f.text !== 'string') continue;
    try {
      await setData(role, f.name, f.text);
      data[role].mine = true;
      S.dataSource = 'files';
    } catch (e) {
      msgs.push(`${f.name} (kept from your last visit): ${errText(e)}`);
    }
  }
  S.dataError = msgs.length ? msgs.join('\n') : null;
  showBox('data-error', msgs.length ? msgs.map((m) => `<p>${esc(m)}</p>`).join('') : null);
  showData();
}

const NOTES_TEXT = 'built-in birth notes';
const BIRTHS_TEXT = 'built-in birth sentences';
const EMBEDDED = [
  ['wiki', 'built-in wiki.txt'],
  ['train', 'built-in birth_places_train.tsv'],
  ['dev', 'built-in birth_dev.tsv'],
  ['test', 'built-in birth_test.tsv'],
];

// The built-in corpus and the served folder's files are read and checked by the engine once, when
// the page starts (app-train.js), so that switching between them is immediate, as a click expects.
export async function prepareData() {
  P.embedded = await P.engine.default_corpus();
  P.embeddedInfo = {};
  for (const [role, name] of EMBEDDED)
    P.embeddedInfo[role] = await check(role, name, P.embedded[role]);
  P.embeddedInfo.notes = await check('wiki', NOTES_TEXT, P.embedded.notes);
  P.embeddedInfo.births = await check('wiki', BIRTHS_TEXT, P.embedded.births);
  for (const [role, f] of Object.entries(P.served || {})) {
    try {
      Object.assign(f, await check(role, f.name, f.text));
    } catch (e) {
      f.error = errText(e);
    }
  }
}

function embeddedFiles() {
  for (const [role, name] of EMBEDDED)
    data[role] = { name, text: P.embedded[role], ...P.embeddedInfo[role] };
  showBox('data-error', null);
}

export function useEmbedded() {
  embeddedFiles();
  S.dataSource = 'embedded';
  showData();
}

// The built-in corpus with its pretraining text replaced by the birth notes (the middle preset's).
export function useNotes() {
  embeddedFiles();
  data.wiki = { name: NOTES_TEXT, text: P.embedded.notes, ...P.embeddedInfo.notes };
  S.dataSource = 'notes';
  showData();
}

// The built-in corpus with each biography cut to its birth sentence (650 epochs of it store more
// birthplaces than the birth notes do, in about twice their time).
export function useBirths() {
  embeddedFiles();
  data.wiki = { name: BIRTHS_TEXT, text: P.embedded.births, ...P.embeddedInfo.births };
  S.dataSource = 'births';
  showData();
}

// With `serve.py --data DIR` the server lists the course files at data/manifest.json; without it
// that is a 404 and the built-in corpus stays.
export async function fetchServed() {
  let manifest;
  try {
    const r = await fetch('data/manifest.json', { cache: 'no-store' });
    if (!r.ok) return null;
    manifest = await r.json();
  } catch {
    return null;
  }
  const out = {};
  for (const name of (manifest && manifest.files) || []) {
    const role = roleFor(name);
    if (!role || out[role]) continue;
    const r = await fetch(`data/${encodeURIComponent(name)}`, { cache: 'no-store' });
    if (r.ok) out[role] = { name, text: await r.text() };
  }
  return Object.keys(out).length ? out : null;
}

export function useServed() {
  const msgs = [];
  embeddedFiles(); // roles the folder lacks keep the built-in file
  for (const [role, f] of Object.entries(P.served)) {
    if (f.error) msgs.push(f.error);
    else
      data[role] = {
        name: f.name,
        text: f.text,
        info: f.info,
        examples: f.examples,
        vocab: f.vocab,
      };
  }
  S.dataSource = 'served';
  S.dataError = msgs.length ? msgs.join('\n') : null;
  showBox('data-error', msgs.length ? msgs.map((m) => `<p>${esc(m)}</p>`).join('') : null);
  showData();
}

export function wireData() {
  for (const role of Object.keys(ROLES)) {
    const input = $(`file-${role}`);
    input.addEventListener('change', () => {
      if (input.files.length) loadFiles([...input.files], role);
      input.value = '';
    });
  }
  const drop = $('drop');
  for (const ev of ['dragenter', 'dragover'])
    drop.addEventListener(ev, (e) => {
      e.preventDefault();
      drop.classList.add('over');
    });
  for (const ev of ['dragleave', 'drop'])
    drop.addEventListener(ev, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    loadFiles([...e.dataTransfer.files]);
  });
  // The keyboard's way to the drop zone: one picker for several files, each placed by its name.
  const any = $('file-any');
  $('pick-files').addEventListener('click', () => any.click());
  any.addEventListener('change', () => {
    if (any.files.length) loadFiles([...any.files]);
    any.value = '';
  });
  // Choosing the built-in or served files forgets the student's kept ones.
  $('use-embedded').addEventListener('click', () => {
    forgetFiles();
    useEmbedded();
  });
  $('use-notes').addEventListener('click', () => {
    forgetFiles();
    useNotes();
  });
  $('use-births').addEventListener('click', () => {
    forgetFiles();
    useBirths();
  });
  $('use-served').addEventListener('click', () => {
    if (P.served) {
      forgetFiles();
      useServed();
    }
  });
}

// A few people of the built-in dev set to ask about (the shipped model was trained on the
// built-in corpus; it has never seen the dev set's answers).
// (The corpus is read from the engine once, when the page starts: app-train.js.)
export function builtinDev() {
  if (!P.embedded)
    throw new Error('the built-in corpus is not loaded (the wasm module did not load)');
  return P.embedded.dev
    .split('\n')
    .filter((l) => l.includes('\t'))
    .map((l) => l.split('\t'));
}

// Whether a question is about one of the built-in corpus's people (train, dev or test).
let builtinQuestions = null;
export function builtinPerson(question) {
  if (!P.embedded) return false;
  if (!builtinQuestions) {
    builtinQuestions = new Set(
      [P.embedded.train, P.embedded.dev, P.embedded.test]
        .flatMap((t) => t.split('\n').map((l) => l.split('\t')[0].replace(/\r$/, '')))
        .filter(Boolean),
    );
  }
  return builtinQuestions.has(question);
}

// The gold answer of a question that is in the loaded files or the built-in dev set, for the
// answer's ✓/✗: {answer, file} or null.
export function goldFor(question) {
  const sources = [data.dev, data.test, data.train].filter(Boolean).map((f) => [f.name, f.text]);
  if (P.embedded) sources.push(['the built-in dev set', P.embedded.dev]);
  for (const [file, text] of sources) {
    for (const line of text.split('\n')) {
      const [q, a] = line.replace(/\r$/, '').split('\t');
      if (q === question && a !== undefined) return { answer: a, file };
    }
  }
  return null;
}

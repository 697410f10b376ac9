// The page's persistence: one IndexedDB database ("attnlab", object store "kv") holding
//   "run"               the training run in progress: {kind, variant, spec, wikiName, wiki, tsvName, tsv,
//                       state (Uint8Array: Trainer::state_to_bytes, a safetensors file), steps, total,
//                       losses: [[step, loss]], savedAt, label}
//   "model:vanilla" / "model:synthesizer"   finished models: {bytes (the CLI's checkpoint), label, savedAt}
//   "files"             the student's own data files by role: {wiki|train|dev|test: {name, text}}
// Everything stays in this browser; nothing is sent anywhere.
const DB = 'attnlab';
const STORE = 'kv';
let dbPromise = null;

function open() {
  if (!dbPromise) {
    dbPromise = new Promise((resolve, reject) => {
      if (!('indexedDB' in window)) {
        reject(new Error('this browser has no IndexedDB, so checkpoints cannot be kept'));
        return;
      }
      const req = indexedDB.open(DB, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error || new Error('IndexedDB did not open'));
      req.onblocked = () =>
        reject(new Error('IndexedDB is blocked by another tab of this page; close it and reload'));
    });
    dbPromise.catch(() => {
      dbPromise = null;
    });
  }
  return dbPromise;
}

function request(mode, f) {
  return open().then(
    (db) =>
      new Promise((resolve, reject) => {
        const tx = db.transaction(STORE, mode);
        const req = f(tx.objectStore(STORE));
        tx.oncomplete = () => resolve(req.result);
        tx.onerror = () => reject(tx.error || new Error('IndexedDB transaction failed'));
        tx.onabort = () =>
          reject(tx.error || new Error('IndexedDB transaction aborted (is the disk full?)'));
      }),
  );
}

export const get = (key) => request('readonly', (s) => s.get(key));
export const put = (key, value) => request('readwrite', (s) => s.put(value, key));
export const del = (key) => request('readwrite', (s) => s.delete(key));

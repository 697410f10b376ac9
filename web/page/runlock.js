// One training run at a time in a browser: every tab of the page shares the saved run (store.js's
// "run"), so the tab whose run it is (running or paused) holds the Web Lock "attnlab-run" until the
// run ends, fails or the tab closes (the browser lets go of a closed tab's locks). Another tab then
// neither resumes nor starts a run (either would overwrite the saved state the first tab keeps
// writing); it asks whether the lock is held. Where the browser has no Web Locks, tabs are not told
// apart (as before the lock).
const NAME = 'attnlab-run';
let release = null;

const locks = () => (typeof navigator !== 'undefined' && navigator.locks) || null;

// Take the lock for this tab's run; false when another tab holds it.
export function holdRun() {
  const l = locks();
  if (release || !l) return Promise.resolve(true);
  return new Promise((resolve) => {
    l.request(NAME, { ifAvailable: true }, (lock) => {
      if (!lock) {
        resolve(false);
        return undefined;
      }
      resolve(true);
      return new Promise((done) => {
        release = done;
      });
    }).catch(() => resolve(true));
  });
}

// Let go of the lock (the run ended); nothing when this tab does not hold it.
export function releaseRun() {
  if (release) release();
  release = null;
}

// Whether another tab of the page has a run open.
export async function otherTabHoldsRun() {
  const l = locks();
  if (release || !l) return false;
  try {
    const { held } = await l.query();
    return held.some((h) => h.name === NAME);
  } catch {
    return false;
  }
}

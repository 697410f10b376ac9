// The Train page's cards tell each other what changed through these events, instead of importing
// each other's redraws (which made import circles: models ↔ shipped, models ↔ train,
// eval → train → models → eval):
//   'models'  the engine's models changed (a run finished, a file or the shipped model loaded, the
//             device lost): the Models card reads and draws them (S.models), the Evaluate card
//             its estimate, the demos their E8/E9
//   'data'    a data file changed: the Evaluate card's estimate, the form's sizing
//   'failed'  an engine call failed, {error, what}: the Train card reports it (a lost device
//             included) and offers the saved run
//   'engines' fewer CPU engines run than were asked for (a helper did not start: steps.js fewer),
//             {n, asked, error, …}: the Device card (web/app.js) and the Train card's device line say so
//   'ask'     a question to ask, {question} (a name in the evaluation's table): the Ask card puts
//             it in its box and asks it (when Ask is not busy), with the attention maps
// Listeners are registered by the cards' wire functions (app-train.js calls them first; the
// Device card's in web/app.js). emit runs
// them in that order and waits for each (a listener may be async), so when `await emit('models')`
// returns, S.models is current and every card has drawn it.
const listeners = new Map();

export function on(name, f) {
  if (!listeners.has(name)) listeners.set(name, []);
  listeners.get(name).push(f);
}

export async function emit(name, detail) {
  for (const f of listeners.get(name) || []) await f(detail);
}

// Wraps a Store so every method call is counted: how many store round trips one request makes.

/**
 * @param {import('express-oauth-router').Store} store
 * @returns {{ store: import('express-oauth-router').Store, take(): Record<string, number> }}
 *   `take()` returns the counts since the last take, keyed `part.method`, and resets them.
 */
export function countStoreCalls(store) {
  let counts = {};
  const wrapped = { ...store };
  for (const part of ['clients', 'codes', 'tokens', 'consents']) {
    const original = store[part];
    const copy = {};
    for (const name of Object.keys(original)) {
      const method = original[name];
      copy[name] = typeof method !== 'function' ? method : (...callArgs) => {
        counts[`${part}.${name}`] = (counts[`${part}.${name}`] ?? 0) + 1;
        return method.apply(original, callArgs);
      };
    }
    wrapped[part] = copy;
  }
  return {
    store: wrapped,
    take() {
      const taken = counts;
      counts = {};
      return taken;
    },
  };
}

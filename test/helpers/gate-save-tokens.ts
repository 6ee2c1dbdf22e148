// Holds a store's first saveTokens call at a gate, to put a race's interleaving in a test's hands, not a timer's.
import type { Store, TokenRecord } from '../../src/stores/contract.js';

/** The records the held call was asked to save. */
export interface HeldSave {
  readonly access: TokenRecord;
  readonly refresh: TokenRecord | null;
}

/**
 * Wraps `store` so its first `saveTokens` waits until `open()` is called: `reached` resolves (with what it
 * was asked to save) once that call is waiting. Later calls pass straight through.
 * @see RFC 6749 §4.1.2 (the replay race this makes deterministic).
 */
export function gateSaveTokens(store: Store): { store: Store; reached: Promise<HeldSave>; open(): void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => { open = resolve; });
  let signal!: (held: HeldSave) => void;
  const reached = new Promise<HeldSave>((resolve) => { signal = resolve; });
  let first = true;
  const tokens = {
    ...store.tokens,
    saveTokens: async (...args: Parameters<Store['tokens']['saveTokens']>) => {
      if (first) {
        first = false;
        signal({ access: args[0], refresh: args[1] });
        await gate;
      }
      return store.tokens.saveTokens(...args);
    },
  };
  return { store: { ...store, tokens }, reached, open };
}

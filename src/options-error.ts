// The start-up error for a bad option: its message names the key.

/** Raised at start-up for a bad option; the message names the key. */
export class OptionsError extends TypeError {
  constructor(key: string, problem: string) {
    super(`express-oauth-router: option "${key}" ${problem}`);
    this.name = 'OptionsError';
  }
}

/**
 * Refuses a key of an option object that is not one of `known`, as a misspelt top-level option is refused.
 * @throws OptionsError naming `option.key`.
 */
export function onlyKnownKeys(option: string, value: object, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new OptionsError(`${option}.${key}`, `is not an option (known: ${known.join(', ')})`);
  }
}

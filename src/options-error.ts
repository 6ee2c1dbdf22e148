// The start-up error for a bad option: its message names the key.

/** Raised at start-up for a bad option; the message names the key. */
export class OptionsError extends TypeError {
  constructor(key: string, problem: string) {
    super(`express-oauth-router: option "${key}" ${problem}`);
    this.name = 'OptionsError';
  }
}

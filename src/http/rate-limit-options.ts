// Start-up validation shared by the loginRateLimit and clientAuthRateLimit options.
import { OptionsError, onlyKnownKeys } from '../options-error.js';

/**
 * The option as an object (`undefined` gives `{}`), refusing keys it does not know, like the top level does.
 * @throws OptionsError naming the option or the unknown key.
 * @see RFC 6585 §4 (what the limits answer with).
 */
export function limitOptionsObject<T extends object>(option: string, value: T | undefined, known: readonly string[]): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new OptionsError(option, 'must be an object or false');
  onlyKnownKeys(option, value, known);
  return value;
}

/**
 * A whole number from 1 to `max`, or `fallback` when absent.
 * @throws OptionsError naming `option.key`.
 * @see RFC 6585 §4.
 */
export function positiveCount(option: string, key: string, value: unknown, fallback: number, max = 1e9): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > max) {
    throw new OptionsError(`${option}.${key}`, `must be a positive integer up to ${max}`);
  }
  return value;
}

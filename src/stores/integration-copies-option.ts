// The stores' `maxIntegrationCopies` option: how many integrations one process keeps as last read.

/** Copies kept by default: far past most deployments' number of integrations, about 1–2 KB of heap each. */
export const DEFAULT_INTEGRATION_COPIES = 10_000;

const MAX_INTEGRATION_COPIES = 10_000_000;

/**
 * The bound of a store's integration copies, from its `maxIntegrationCopies` option. Past the bound the copy
 * kept longest goes for each new one, so a registry larger than it reads that share of its integrations from the
 * store again on each token request (half of them at twice the bound, with a random integration per request).
 * @throws TypeError naming the factory and the option for anything but an integer from 1 to 10,000,000.
 * @see RFC 6749 §2.3.1 (the client authentication the copies serve).
 */
export function integrationCopiesOption(factory: string, value: unknown): number {
  if (value === undefined) return DEFAULT_INTEGRATION_COPIES;
  return checkIntegrationCopies(`${factory}: option "maxIntegrationCopies"`, value);
}

/**
 * `value` when it is an integer from 1 to 10,000,000; `subject` names what gave it in the error (the option, or
 * the `max_integration_copies` parameter of an `OAUTH_STORE` URL), the rest of the message being the same.
 * @throws TypeError `<subject> must be an integer from 1 to 10000000 (got <value>)`.
 * @see RFC 6749 §2.3.1 (the client authentication the copies serve).
 */
export function checkIntegrationCopies(subject: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_INTEGRATION_COPIES) {
    throw new TypeError(`${subject} must be an integer from 1 to ${MAX_INTEGRATION_COPIES} (got ${String(value)})`);
  }
  return value;
}

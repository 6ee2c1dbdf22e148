// Loads prom-client (an optional peer dependency) when metrics are created, naming the package when it is missing.
import { isMissing } from '../stores/missing-driver.js';
import { runtimeRequire } from '../runtime-require.js';

/** The prom-client module. */
export type PromClient = typeof import('prom-client');

/**
 * `require()`s prom-client from where this package is installed, so the host's copy (a peer dependency) is
 * the one used and its `Registry` objects are ours too. Only `express-oauth-router/metrics` loads it: a host
 * without metrics never needs it installed.
 * @throws Error "express-oauth-router/metrics needs prom-client: npm install prom-client@15" when it is missing.
 * @see DESIGN §2 (optional peer dependencies).
 */
export function loadPromClient(): PromClient {
  try {
    return runtimeRequire()('prom-client') as PromClient;
  } catch (error) {
    if (isMissing(error, 'prom-client')) {
      throw new Error('express-oauth-router/metrics needs prom-client: npm install prom-client@15', { cause: error });
    }
    throw error;
  }
}

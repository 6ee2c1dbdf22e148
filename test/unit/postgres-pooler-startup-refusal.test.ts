// A pooler that refuses the store's startup parameter (PgBouncer and statement_timeout): the 503 names the fix.
import { describe, expect, it } from 'vitest';
import { rethrowPostgresError } from '../../src/stores/postgres/errors.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';

/** What node-postgres rejects with when PgBouncer refuses a startup parameter (its message, as PgBouncer 1.18 sends it). */
function refusal(parameter: string): Error {
  return Object.assign(new Error(`unsupported startup parameter: ${parameter}`), { code: '08P01', severity: 'FATAL' });
}

function caught(err: unknown): unknown {
  try {
    rethrowPostgresError(err);
  } catch (thrown) {
    return thrown;
  }
  return undefined;
}

describe('a store refused as configured says what to fix (PgBouncer refuses the pool\'s statement_timeout)', () => {
  it('is StoreUnavailableError naming the parameter and PgBouncer\'s ignore_startup_parameters', () => {
    const err = caught(refusal('statement_timeout'));
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toBe(
      'PostgreSQL store unavailable (08P01: the server or pooler refuses the startup parameter statement_timeout; PgBouncer: add it to ignore_startup_parameters)',
    );
  });

  it('names only a parameter name, never the rest of a message it does not recognise', () => {
    const err = caught(refusal('statement_timeout; password=hunter2'));
    expect((err as Error).message).toBe('PostgreSQL store unavailable (08P01)');
  });
});

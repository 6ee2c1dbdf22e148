// What a PostgreSQL failure's 503 says: plain words for the SQLSTATE, never the server's own message.
import { describe, expect, it } from 'vitest';
import { rethrowPostgresError } from '../../src/stores/postgres/errors.js';

/** The message of the StoreUnavailableError that `rethrowPostgresError` throws for a server error with this SQLSTATE. */
function messageFor(code: string, serverMessage: string): string {
  try {
    rethrowPostgresError(Object.assign(new Error(serverMessage), { code, severity: 'FATAL' }));
  } catch (thrown) {
    return (thrown as Error).message;
  }
  throw new Error('rethrowPostgresError returned');
}

describe('a StoreUnavailableError names the SQLSTATE in plain words', () => {
  it('57P01 (admin_shutdown) names both causes, since a shutdown and pg_terminate_backend send the same', () => {
    expect(messageFor('57P01', 'terminating connection due to administrator command')).toBe(
      'PostgreSQL store unavailable (57P01: the server ended the connection: a shutdown, or pg_terminate_backend)',
    );
  });

  it('3D000 says the database does not exist, without the server message naming it', () => {
    expect(messageFor('3D000', 'database "secret_name" does not exist')).toBe('PostgreSQL store unavailable (3D000: no such database)');
  });
});

// oauth-admin with its store's server down: one clear line (or one JSON object) and exit 1, never a hang or exit 13.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runCliWith } from '../helpers/run-cli.js';

// Port 1 on loopback: nothing listens there, so every connection attempt is refused at once.
const DOWN: readonly (readonly [string, string])[] = [
  ['postgres://postgres@127.0.0.1:1/test', 'PostgreSQL store unavailable (ECONNREFUSED)'],
  ['redis://127.0.0.1:1', 'Redis store unavailable (ECONNREFUSED)'],
  ['redis+cluster://127.0.0.1:1', 'Redis store unavailable (All the root nodes are unavailable)'],
];

/** Runs oauth-admin with OAUTH_STORE naming a server that is down. */
function runAgainst(storeUrl: string, args: readonly string[]) {
  return runCliWith(args, { env: { ...process.env, OAUTH_STORE: storeUrl } });
}

describe('oauth-admin when the store cannot be reached', () => {
  it.each(DOWN)('OAUTH_STORE=%s: exits 1 with one stderr line saying the store is unavailable', async (url, message) => {
    const result = await runAgainst(url, ['clients', 'list']);
    expect(result).toEqual({ code: 1, stdout: '', stderr: `oauth-admin: ${message}\n` });
  });

  it.each(DOWN)('OAUTH_STORE=%s with --json: exits 1 with {"error":"store_unavailable"} on stderr', async (url, message) => {
    const result = await runAgainst(url, ['clients', 'show', 'some-client', '--json']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`${JSON.stringify({ error: 'store_unavailable', message })}\n`);
  });

  it('clients create, which may create a store, also exits 1 with store_unavailable instead of hanging', async () => {
    const result = await runAgainst(DOWN[0]![0], ['clients', 'create', '--json', '--name', 'Down', '--flow', 'client_credentials']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toEqual({ error: 'store_unavailable', message: DOWN[0]![1] });
  });
});

// A server that answers but refuses the store as configured: the same store_unavailable, never a bug's `failure`.
const postgresUrl = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const authClusterUrl = process.env.OAUTH_TEST_REDIS_AUTH_CLUSTER_URL ?? '';
const REFUSED: readonly (readonly [string, string])[] = [
  ...(postgresUrl ? [[postgresUrl.replace(/\/[^/?]*(\?|$)/, '/no_such_database_express_oauth$1'), 'PostgreSQL store unavailable (3D000: no such database)'] as const] : []),
  // A role the server does not know: refused at authentication, said in plain words (the server's own names the role).
  ...(postgresUrl ? [[postgresUrl.replace(/\/\/[^@/]*@/, '//no_such_role_express_oauth@'), 'PostgreSQL store unavailable (28000: the server refused this role or host (pg_hba.conf))'] as const] : []),
  // A node of the password-protected cluster, opened as a plain Redis: the AUTH at connect is refused.
  ...(authClusterUrl ? [[authClusterUrl.replace(/^redis\+cluster:/, 'redis:').replace(/:[^:@/]*@/, ':not-the-password@'), 'Redis store unavailable (WRONGPASS)'] as const] : []),
  ...(authClusterUrl ? [[authClusterUrl.replace(/:[^:@/]*@/, ':not-the-password@'), 'Redis store unavailable (All the root nodes are unavailable)'] as const] : []),
];

describe.skipIf(REFUSED.length === 0)('oauth-admin when the store\'s server refuses it (no such database, a wrong password)', () => {
  it.each(REFUSED)('OAUTH_STORE=%s with --json: exits 1 with {"error":"store_unavailable"}', async (url, message) => {
    const result = await runAgainst(url, ['clients', 'list', '--json']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({ error: 'store_unavailable', message });
    expect(result.stderr).not.toContain('not-the-password');
  });
});

describe('oauth-admin --json when a driver warns (node-postgres on sslmode=require)', () => {
  it('stderr holds JSON lines only: the warning as {"warning", "message"}, then the error', async () => {
    const result = await runAgainst('postgres://postgres@127.0.0.1:1/test?sslmode=require', ['clients', 'list', '--json']);
    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, string>);
    expect(lines[0]).toMatchObject({ warning: 'Warning', message: expect.stringContaining('SECURITY WARNING') });
    expect(lines.at(-1)).toEqual({ error: 'store_unavailable', message: 'PostgreSQL store unavailable (ECONNREFUSED)' });
  });

  it.skipIf(!postgresUrl)('sslmode=require against a server that speaks no TLS is store_unavailable too, not a failure', async (context) => {
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    const { rows } = await admin.query<{ ssl: string }>('SHOW ssl');
    await admin.end();
    // A server with TLS would get further and fail on its certificate instead: this case needs one without.
    if (rows[0]?.ssl !== 'off') context.skip();
    const url = new URL(postgresUrl);
    url.searchParams.set('sslmode', 'require');
    const result = await runAgainst(url.href, ['clients', 'list', '--json']);
    expect(result.code).toBe(1);
    const last = JSON.parse(result.stderr.trimEnd().split('\n').at(-1)!) as Record<string, string>;
    expect(last).toEqual({ error: 'store_unavailable', message: 'PostgreSQL store unavailable (The server does not support SSL connections)' });
  });
});

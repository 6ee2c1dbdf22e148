// What a store says when its server drops a connection and no logger was given: one line, message and code only.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { consoleStoreLogger } from '../../src/stores/console-store-logger.js';

const WORKER = fileURLToPath(new URL('./store-warning-worker.ts', import.meta.url));
const PG_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';

/** Every line a console.warn call would print, by calling consoleStoreLogger with console.warn captured. */
function linesOf(message: string, error?: unknown): string[] {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  consoleStoreLogger.warn(message, error);
  const calls = warn.mock.calls;
  warn.mockRestore();
  return calls.map((args) => {
    expect(args.every((a) => typeof a === 'string'), 'console.warn is given strings only, never an object').toBe(true);
    return args.join(' ');
  });
}

describe('the stores\' default logger (no logger option): one line per warning, never the error object', () => {
  afterEach(() => vi.restoreAllMocks());

  it('says the warning, the error\'s message and its code on one line', () => {
    const error = Object.assign(new Error('terminating connection\ndue to administrator command'), {
      code: '57P01',
      client: { connectionParameters: { password: 'pg-password' }, processID: 4242, secretKey: 123456789 },
    });
    const lines = linesOf('express-oauth-router: idle PostgreSQL connection lost', error);
    // The pool's idle connection, and the revocation feed's listener when the server dropped it too: one line each.
    expect(lines).toContain('express-oauth-router: idle PostgreSQL connection lost: terminating connection due to administrator command (57P01)');
    for (const line of lines) expect(line).toMatch(/^express-oauth-router: [^:]+: terminating connection due to administrator command \(57P01\)$/);
  });

  it('an AggregateError (refused on ::1 and 127.0.0.1) is told by its first inner message', () => {
    const inner = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    const error = Object.assign(new AggregateError([inner], ''), { code: 'ECONNREFUSED' });
    expect(linesOf('express-oauth-router: Redis connection lost, reconnecting', error))
      .toEqual(['express-oauth-router: Redis connection lost, reconnecting: connect ECONNREFUSED 127.0.0.1:6379 (ECONNREFUSED)']);
  });

  it('a URL quoted in an error message loses its user:password@', () => {
    const [line] = linesOf('lost', new Error('cannot reach redis://default:s3cret@10.0.0.1:6379 or postgres://u:pw@db/x'));
    expect(line).toBe('lost: cannot reach redis://***@10.0.0.1:6379 or postgres://***@db/x');
  });

  it('a password holding an unencoded @ is masked whole: its userinfo ends at the last @, as URL parsers read it', () => {
    // pg and node-redis read `postgres://u:p@ss@db/x` (WHATWG URL: the last `@` ends the userinfo) and connect.
    const [line] = linesOf('lost', new Error('cannot reach postgres://app:p@ss@db:5432/x or redis://:a@b@c@10.0.0.1:6379 now'));
    expect(line).toBe('lost: cannot reach postgres://***@db:5432/x or redis://***@10.0.0.1:6379 now');
    // Still linear: a 64 KB run of schemes without an `@` is scanned once.
    const started = performance.now();
    linesOf('lost', new Error('x://a'.repeat(13_000)));
    linesOf('lost', new Error(`x://${':'.repeat(65_536)}`));
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('a userinfo after a long message of short words is masked too, and the line cut to 300 characters', () => {
    const [line] = linesOf('lost', new Error(`${'a.'.repeat(32_768)} redis://default:s3cret@10.0.0.1:6379`));
    expect(line).not.toContain('s3cret');
    expect(line!.length).toBeLessThanOrEqual('lost: '.length + 300);
    const [quoted] = linesOf('lost', new Error(`${'a.'.repeat(100)} redis://default:s3cret@10.0.0.1:6379`));
    expect(quoted).toMatch(/ redis:\/\/\*\*\*@10\.0\.0\.1:6379$/);
  });

  it('a warning without an error is the message alone', () => {
    expect(linesOf('express-oauth-router: Redis connection unresponsive, reconnecting')).toEqual(['express-oauth-router: Redis connection unresponsive, reconnecting']);
  });
});

/**
 * The worker on a fresh schema, tagged so the test can have the server drop its connections: `dropConnections()`
 * terminates them, `stop()` sends SIGTERM and resolves with the exit code, `dispose()` kills it and drops the schema.
 */
async function startWorker(env: Record<string, string> = {}) {
  const tag = `eor-warn-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const schema = tag.replace(/-/g, '_');
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}&application_name=${tag}`;
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], { env: { ...process.env, OAUTH_STORE: url, ...env } });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output.stdout += chunk; });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output.stderr += chunk; });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await vi.waitFor(() => expect(output.stdout).toBe('ready\n'), { timeout: 15_000, interval: 50 });
  return {
    output,
    async dropConnections(): Promise<number> {
      const { rowCount } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [tag]);
      return rowCount ?? 0;
    },
    stop(): Promise<number | null> {
      child.kill('SIGTERM');
      return exited;
    },
    async dispose(): Promise<void> {
      child.kill('SIGKILL');
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

describe.skipIf(!PG_URL)('a PostgreSQL store whose idle connection the server drops, with no logger (real server, real process)', () => {
  it('writes one line to stderr with the message and SQLSTATE, and none of pg\'s connection object (secretKey)', { timeout: 30_000 }, async () => {
    const worker = await startWorker();
    try {
      expect(await worker.dropConnections()).toBeGreaterThan(0);
      await vi.waitFor(() => expect(worker.output.stderr).toContain('connection lost'), { timeout: 10_000, interval: 50 });
      await worker.stop();
    } finally {
      await worker.dispose();
    }
    const lines = worker.output.stderr.split('\n').filter((l) => l !== '');
    // The pool's idle connection, and the revocation feed's listener when the server dropped it too: one line each.
    expect(lines).toContain('express-oauth-router: idle PostgreSQL connection lost: terminating connection due to administrator command (57P01)');
    for (const line of lines) expect(line).toMatch(/^express-oauth-router: [^:]+: terminating connection due to administrator command \(57P01\)$/);
    expect(worker.output.stderr).not.toMatch(/secretKey|processID|connectionParameters/);
  });

  it('a host logger that throws from the connection-lost listener does not end the host: the store closes cleanly after', { timeout: 30_000 }, async () => {
    const worker = await startWorker({ OAUTH_TEST_THROWING_LOGGER: '1' });
    let code: number | null;
    try {
      await worker.dropConnections();
      await vi.waitFor(() => expect(worker.output.stderr).toContain('logger called: express-oauth-router: idle PostgreSQL connection lost'), { timeout: 10_000, interval: 50 });
      // An uncaught exception from the listener ends the process with 1 at once; a guarded one leaves it to SIGTERM.
      code = await worker.stop();
    } finally {
      await worker.dispose();
    }
    expect(code, worker.output.stderr).toBe(0);
    expect(worker.output.stderr).not.toContain('the host logger failed');
  });
});

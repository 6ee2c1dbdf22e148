// The example app stopped (SIGTERM) while it still registers the demo integrations: it exits 0 as any stop does.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { startOnFreePorts } from '../helpers/free-port.js';
import { until } from '../helpers/until.js';

const POSTGRES_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const SERVER = resolve(import.meta.dirname, '../../example-app/dist/server.js');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/**
 * Whether a session waits for the lock on `schema`.clients: only the app's seeding reads that table, and the app
 * seeds once it listens. Unlike a connection to its port, which another process holding that port could accept.
 */
async function seedingWaits(admin: pg.Client, schema: string): Promise<boolean> {
  const { rowCount } = await admin.query('SELECT 1 FROM pg_locks WHERE NOT granted AND relation = $1::regclass', [`${schema}.clients`]);
  return Boolean(rowCount);
}

describe.skipIf(!POSTGRES_URL)('example app: a stop that arrives while the demo integrations are registered', () => {
  it('exits 0 without an error once the stores close under the seeding', async () => {
    const schema = `shutdown_seed_${process.pid}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });
    // The tables exist before the app opens, so only the seeding's reads of the integrations wait on the lock.
    await (await createPostgresStore({ connectionString: POSTGRES_URL, schema })).close();
    const holder = new pg.Client({ connectionString: POSTGRES_URL });
    await holder.connect();
    cleanups.push(() => holder.end());
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${schema}.clients IN ACCESS EXCLUSIVE MODE`);

    // On a free port; a start that lost it before binding (EADDRINUSE, before any seeding) is made again on another.
    const app = await startOnFreePorts(1, async ([port]) => {
      const child = spawn(process.execPath, [SERVER], {
        env: { ...process.env, PORT: String(port), OAUTH_STORE: `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}` },
      });
      cleanups.push(async () => child.kill('SIGKILL'));
      const output = { stdout: '', stderr: '' };
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output.stdout += chunk; });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output.stderr += chunk; });
      // At 'close', once all its output is read.
      const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
      await until('the app to listen', async () => child.exitCode !== null || await seedingWaits(admin, schema), { tries: 800 });
      if (child.exitCode !== null) throw new Error(`the app exited with ${await exited}: ${output.stderr}`);
      return { child, output, exited };
    });
    const { child, output, exited } = app;
    expect(output.stdout).not.toContain('listening on');
    child.kill('SIGTERM');
    await new Promise((done) => setTimeout(done, 300));
    await holder.query('COMMIT');

    const code = await exited;
    expect(output.stderr).toBe('');
    expect(code).toBe(0);
  }, 30_000);
});

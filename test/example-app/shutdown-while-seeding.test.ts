// The example app stopped (SIGTERM) while it still registers the demo integrations: it exits 0 as any stop does.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { freePort } from '../helpers/example-app-processes.js';
import { until } from '../helpers/until.js';

const POSTGRES_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const SERVER = resolve(import.meta.dirname, '../../example-app/dist/server.js');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** Whether something accepts connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1', () => { socket.destroy(); done(true); });
    socket.once('error', () => done(false));
  });
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

    const port = await freePort();
    const child = spawn(process.execPath, [SERVER], {
      env: { ...process.env, PORT: String(port), OAUTH_STORE: `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}` },
    });
    cleanups.push(async () => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

    await until('the app to listen', () => accepts(port), { tries: 800 });
    expect(stdout).not.toContain('listening on');
    child.kill('SIGTERM');
    await new Promise((done) => setTimeout(done, 300));
    await holder.query('COMMIT');

    const code = await exited;
    expect(stderr).toBe('');
    expect(code).toBe(0);
  }, 30_000);
});

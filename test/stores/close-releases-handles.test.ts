// Graceful shutdown of every store: after close() no sweep timer, feed connection or pool keeps the process alive.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';

const WORKER = fileURLToPath(new URL('./close-worker.ts', import.meta.url));
const PG_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
// Only a store that leaks a handle gets here: the test fails instead of waiting for the runner's timeout.
const LIMIT_MS = 30_000;

/** Runs the worker; resolves with its exit code and whether it reported close() done, or 'hung'. */
function runWorker(kind: string, target: string): Promise<{ code: number | null; closed: boolean } | 'hung'> {
  return new Promise((resolve) => {
    const child = fork(WORKER, [kind, target], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let closed = false;
    child.on('message', (message: { closed?: boolean }) => {
      closed ||= message.closed === true;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('hung');
    }, LIMIT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, closed });
    });
  });
}

const unique = `${process.pid}_${randomBytes(3).toString('hex')}`;

describe('store close()', () => {
  it('leaves the memory store with no timer: the process exits by itself', async () => {
    expect(await runWorker('memory', '')).toEqual({ code: 0, closed: true });
  });

  it('stops the SQLite sweep and closes the file: the process exits by itself', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'close-sqlite-'));
    try {
      expect(await runWorker('sqlite', join(dir, 'oauth.sqlite'))).toEqual({ code: 0, closed: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!PG_URL)('stops the PostgreSQL sweeper and revocation listener and ends the pool: the process exits by itself', { timeout: LIMIT_MS + 10_000 }, async () => {
    const schema = `close_${unique}`;
    try {
      expect(await runWorker('postgres', schema)).toEqual({ code: 0, closed: true });
    } finally {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });

  it.skipIf(!REDIS_URL)('stops the Redis sweeper and unsubscribes the revocation feed: the process exits by itself', { timeout: LIMIT_MS + 10_000 }, async () => {
    const prefix = `close-${unique}:`;
    try {
      expect(await runWorker('redis', prefix)).toEqual({ code: 0, closed: true });
    } finally {
      const admin = createClient({ url: REDIS_URL });
      await admin.connect();
      for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) if (batch.length) await admin.del(batch);
      await admin.quit();
    }
  });
});

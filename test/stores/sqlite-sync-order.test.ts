// The SQLite store's syncs as the kernel sees them (strace): a token response is written only after the WAL sync covering it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIRECT_URI } from '../helpers/app.js';
import type { SyncOrderReady } from './sqlite-sync-order-worker.js';

// Set by .ci/run; a machine without strace skips this file unless it is set.
const STRACE = process.env.OAUTH_TEST_STRACE;

/** What the host did between two of its HTTP responses, and the response that ended it. */
interface Stretch {
  /** WAL events in order: 'w' a write of frames, 's' a sync of the file. */
  readonly wal: string;
  readonly status: number;
}

/**
 * Splits strace's log (`-y`: file descriptors shown with their path) into the stretches that end at each HTTP
 * response written to a TCP socket.
 */
function stretches(log: string, walPath: string): Stretch[] {
  const result: Stretch[] = [];
  let wal = '';
  for (const line of log.split('\n')) {
    if (line.includes(`<${walPath}>`)) {
      if (/\b(pwrite64|write)\(/.test(line)) wal += 'w';
      else if (/\b(fsync|fdatasync)\(/.test(line)) wal += 's';
      continue;
    }
    const response = /\bwritev?\(\d+<(?:TCP:[^>]*|socket:\[\d+\])>, .*?"HTTP\/1\.1 (\d{3}) /.exec(line);
    if (response) {
      result.push({ wal, status: Number(response[1]) });
      wal = '';
    }
  }
  return result;
}

/** The test host under strace, its ready line, and the WAL stretches between its responses once stopped. */
interface TracedHost {
  readonly ready: SyncOrderReady;
  exchange(code: string, redirectUri: string): Promise<number>;
  /** Stops the host (strace then exits, its log complete) and reads what each response waited for. */
  stop(): Promise<Stretch[]>;
}

/** Starts the worker under strace; `query` opens its store from `sqlite:<file>?<query>` instead. */
async function startTracedHost(dir: string, query?: string): Promise<TracedHost> {
  if (!STRACE || !existsSync(STRACE)) throw new Error(`OAUTH_TEST_STRACE=${STRACE ?? ''} is not an strace binary`);
  const logFile = join(dir, 'strace.log');
  const worker = fileURLToPath(new URL('./sqlite-sync-order-worker.ts', import.meta.url));
  const child = spawn(STRACE, [
    // --seccomp-bpf: only the traced calls stop the host, so it runs at nearly its own speed.
    '-f', '--seccomp-bpf', '-qq', '-y', '-s', '48', '-e', 'trace=pwrite64,write,writev,fsync,fdatasync', '-o', logFile,
    process.execPath, '--import', 'tsx', worker, join(dir, 'oauth.sqlite'), ...(query === undefined ? [] : [query]),
  ], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
  const ready = JSON.parse(line) as SyncOrderReady;
  return {
    ready,
    async exchange(code, redirectUri) {
      const response = await fetch(`http://127.0.0.1:${ready.port}/oauth2/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${ready.clientId}:${ready.clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri }),
      });
      await response.arrayBuffer();
      return response.status;
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        process.kill(ready.pid, 'SIGTERM');
        await exited;
      }
      return stretches(readFileSync(logFile, 'utf8'), join(dir, 'oauth.sqlite-wal'));
    },
  };
}

/** A response with no store write first: everything the host did while starting ends in that stretch. */
async function settleStartup(host: TracedHost): Promise<void> {
  await fetch(`http://127.0.0.1:${host.ready.port}/.well-known/oauth-authorization-server`).then((r) => r.arrayBuffer());
}

describe.skipIf(!STRACE)('SQLite store: the syncs a token response waits for (strace)', () => {
  const dirs: string[] = [];
  const hosts: TracedHost[] = [];

  async function start(query?: string): Promise<TracedHost> {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-sync-order-'));
    dirs.push(dir);
    const host = await startTracedHost(dir, query);
    hosts.push(host);
    return host;
  }

  afterAll(async () => {
    for (const host of hosts) await host.stop().catch(() => undefined);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a code exchange syncs the WAL once, after both its writes (the consume and the tokens) and before its response; a refused one never', async () => {
    const host = await start();
    await settleStartup(host);
    const [first, second, third] = host.ready.codes;
    expect(await host.exchange(first!, REDIRECT_URI)).toBe(200);
    expect(await host.exchange(second!, 'https://client.example/elsewhere')).toBe(400);
    expect(await host.exchange(third!, REDIRECT_URI)).toBe(200);

    const [, ...requests] = await host.stop();
    expect(requests.map((r) => r.status)).toEqual([200, 400, 200]);
    for (const issued of [requests[0]!, requests[2]!]) {
      // Frames of the consume, frames of the tokens, then the one sync, and nothing on the WAL after it.
      expect(issued.wal).toMatch(/^w+s$/);
      expect(issued.wal.split('s')[0]!.length).toBeGreaterThanOrEqual(2);
    }
    // The refused exchange used its code up (frames written) and issued nothing, so nothing waited for a sync:
    // the next synced commit (the third exchange's) covers its frames.
    expect(requests[1]!.wal).toMatch(/^w+$/);
  }, 60_000);

  it('OAUTH_STORE=sqlite:FILE?synchronous=normal writes the same frames and waits for no sync', async () => {
    const host = await start('synchronous=normal&lock_timeout_ms=2000');
    await settleStartup(host);
    const [first, second] = host.ready.codes;
    expect(await host.exchange(first!, REDIRECT_URI)).toBe(200);
    expect(await host.exchange(second!, REDIRECT_URI)).toBe(200);

    const [, ...requests] = await host.stop();
    expect(requests.map((r) => r.status)).toEqual([200, 200]);
    for (const issued of requests) expect(issued.wal).toMatch(/^w{2,}$/);
  }, 60_000);
});

// The SQLite store's syncs as the kernel sees them (strace): a token response is written only after the WAL sync covering it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe.skipIf(!STRACE)('SQLite store: the syncs a token response waits for (strace)', () => {
  let dir: string;
  let child: ChildProcess;
  let ready: SyncOrderReady;
  const logFile = (): string => join(dir, 'strace.log');

  beforeAll(async () => {
    if (!STRACE || !existsSync(STRACE)) throw new Error(`OAUTH_TEST_STRACE=${STRACE ?? ''} is not an strace binary`);
    dir = mkdtempSync(join(tmpdir(), 'oauth-sync-order-'));
    const worker = fileURLToPath(new URL('./sqlite-sync-order-worker.ts', import.meta.url));
    child = spawn(STRACE, [
      // --seccomp-bpf: only the traced calls stop the host, so it runs at nearly its own speed.
      '-f', '--seccomp-bpf', '-qq', '-y', '-s', '48', '-e', 'trace=pwrite64,write,writev,fsync,fdatasync', '-o', logFile(),
      process.execPath, '--import', 'tsx', worker, join(dir, 'oauth.sqlite'),
    ], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
    });
    ready = JSON.parse(line) as SyncOrderReady;
  }, 60_000);

  /** Stops the host (strace then exits, its log complete). */
  async function stopHost(): Promise<void> {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (ready) process.kill(ready.pid, 'SIGTERM');
    else child.kill('SIGKILL');
    await exited;
  }

  afterAll(async () => {
    await stopHost();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function exchange(code: string, redirectUri: string): Promise<number> {
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
  }

  it('a code exchange syncs the WAL once, after both its writes (the consume and the tokens) and before its response; a refused one never', async () => {
    // A response with no store write first: everything the host did while starting ends in this stretch.
    await fetch(`http://127.0.0.1:${ready.port}/.well-known/oauth-authorization-server`).then((r) => r.arrayBuffer());
    const [first, second, third] = ready.codes;
    expect(await exchange(first!, REDIRECT_URI)).toBe(200);
    expect(await exchange(second!, 'https://client.example/elsewhere')).toBe(400);
    expect(await exchange(third!, REDIRECT_URI)).toBe(200);
    await stopHost();

    const [, ...requests] = stretches(readFileSync(logFile(), 'utf8'), join(dir, 'oauth.sqlite-wal'));
    expect(requests.map((r) => r.status)).toEqual([200, 400, 200]);
    for (const issued of [requests[0]!, requests[2]!]) {
      // Frames of the consume, frames of the tokens, then the one sync, and nothing on the WAL after it.
      expect(issued.wal).toMatch(/^w+s$/);
      expect(issued.wal.split('s')[0]!.length).toBeGreaterThanOrEqual(2);
    }
    // The refused exchange used its code up (frames written) and issued nothing, so nothing waited for a sync:
    // the next synced commit (the third exchange's) covers its frames.
    expect(requests[1]!.wal).toMatch(/^w+$/);
  });
});

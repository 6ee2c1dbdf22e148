// The example app's HTTP server ends connections that never finish their headers, well before Node's defaults.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAppProcess, stopAppProcesses } from '../helpers/example-app-processes.js';

const dirs: string[] = [];

afterEach(async () => {
  await stopAppProcesses();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Opens a connection, sends `head` and never the blank line that ends the headers; resolves what came back once the server closed it. */
function halfSentHeaders(port: number, head: string): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.once('error', fail);
    socket.once('close', () => done(answer));
  });
}

describe('example app: connections that never finish their headers (RFC 9110 §15.5.9)', () => {
  // Node's defaults (headersTimeout 60 s, checked every 30 s) would hold such a connection past this test's limit.
  it('is answered 408 and closed by the headers timeout (10 s, checked every 2 s), so idle sockets cannot pile up', { timeout: 40_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-slow-headers-'));
    dirs.push(dir);
    const { port } = await startAppProcess({ OAUTH_STORE: `sqlite:${join(dir, 'oauth.sqlite')}` });
    const answer = await halfSentHeaders(port, 'POST /oauth2/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });
});

// RFC 6749 §5.2: the worker thread that checks imported bcrypt secrets crashing is a server fault (500 server_error,
// logged), never a wrong secret (401 invalid_client, counted by the RFC 6819 §4.3.5 limit); a fresh worker takes over.
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TestClient } from '../helpers/app.js';
import { hostWithBcryptSecret as host, laterBy, SERVER_ERROR, withFakeBcryptjs } from '../helpers/bcrypt-host.js';
import { expectSpecHeaders } from '../helpers/spec-requests.js';
import { until } from '../helpers/until.js';
import { bcryptWorkerForTests as handle } from '../../src/crypto/bcrypt-secret.js';

const SECRET = 'imported-partner-secret-2019';
// Cost 12 (~230 ms a check, the most an import accepts): three checks queue in the worker long enough to crash it.
const HASH = bcrypt.hashSync(SECRET, 12);
const hostWithBcryptSecret = (secret = SECRET, hash = HASH) => host(secret, hash);

afterEach(() => {
  vi.restoreAllMocks();
  handle.loadInsteadOfBcryptjs(null);
});

describe('the bcrypt worker crashes: a server fault, not a wrong secret', () => {
  it('checks under way get 500 server_error, logged once without secret or hash, not counted; the next check starts a fresh worker', async () => {
    const { imported, token, logged, counted } = await hostWithBcryptSecret();
    const wrong = (i: number): TestClient => ({ clientId: imported.clientId, clientSecret: `guess-${i}` });
    // Three sources, so the limit's one-check-at-a-time per source queues none of them outside the worker.
    const inFlight = [token(imported, '198.51.100.1'), token(wrong(1), '198.51.100.2'), token(wrong(2), '198.51.100.3')]
      .map((req) => req.then((res) => res));
    await until('three checks in a started worker', () => handle.ready() && handle.checksUnderWay() === 3);
    const crashed = handle.current()!;
    const startsBefore = handle.starts();
    await crashed.terminate();
    const answers = await Promise.all(inFlight);
    for (const res of answers) {
      expect(res.status).toBe(500);
      expect(res.body).toEqual(SERVER_ERROR);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expectSpecHeaders(res);
    }
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^express-oauth-router: unexpected BcryptWorkerError: the bcrypt worker thread stopped/);
    for (const line of logged) for (const secret of [SECRET, 'guess-1', 'guess-2', HASH, HASH.slice(7)]) expect(line).not.toContain(secret);
    expect(counted(), 'no failed authentication, no rate limit hit').toEqual([]);

    // A fresh worker answers the next checks; the crash was counted for nobody.
    expect((await token(imported, '198.51.100.1')).status).toBe(200);
    expect(handle.current()).not.toBe(crashed);
    expect(handle.starts()).toBe(startsBefore + 1);
    expect((await token(wrong(3), '198.51.100.2')).status).toBe(401);
    expect((await token(wrong(4), '198.51.100.2')).status, 'the limit still counts real failures').toBe(429);
  });

  it('an uncaught error in the worker: the check it reaches gets 500, the one answered before keeps its 200', async () => {
    const { imported, token, logged, counted } = await hostWithBcryptSecret('third-imported-secret', bcrypt.hashSync('third-imported-secret', 12));
    const answered = token(imported, '198.51.100.1').then((res) => res);
    await until('a check in a started worker', () => handle.ready() && handle.checksUnderWay() === 1);
    // A message the worker cannot destructure throws outside its try: an uncaught TypeError ends the thread ('error').
    handle.current()!.postMessage(null);
    const reached = await token({ clientId: imported.clientId, clientSecret: 'guess-1' }, '198.51.100.2');
    expect((await answered).status).toBe(200);
    expect(reached.status).toBe(500);
    expect(reached.body).toEqual(SERVER_ERROR);
    expect(logged).toEqual([
      'express-oauth-router: unexpected BcryptWorkerError: the bcrypt worker thread stopped (TypeError) with client secret '
        + 'checks under way; the next check starts a new one',
    ]);
    expect(counted()).toEqual([]);
    expect((await token({ clientId: imported.clientId, clientSecret: 'guess-2' }, '198.51.100.2')).status).toBe(401);
  });

  it('a worker that cannot start: 500 and logged, no new start until its back-off ends, then a fresh worker', async () => {
    // Another secret: the process remembers the last test's match, and would answer it without a worker.
    const { imported, token, logged, counted } = await hostWithBcryptSecret('another-imported-secret', bcrypt.hashSync('another-imported-secret', 4));
    // The worker the last test left, idle, crashes too: nobody was waiting, so nothing to answer or log.
    await handle.current()?.terminate();
    expect(handle.current()).toBeNull();
    await withFakeBcryptjs({ broken: "throw new Error('a broken install, for a test');" }, async ({ broken }) => {
      handle.loadInsteadOfBcryptjs(broken!);
      const startsBefore = handle.starts();
      const first = await token(imported, '198.51.100.1');
      expect(first.status).toBe(500);
      expect(first.body).toEqual(SERVER_ERROR);
      expect(handle.starts()).toBe(startsBefore + 1);
      expect(logged).toEqual([
        'express-oauth-router: unexpected BcryptWorkerError: the bcrypt worker thread failed to start: Error: a broken install, for a test',
      ]);
      // Within the back-off: answered at once, no worker started, not counted (the limit would answer 429).
      for (let i = 0; i < 3; i++) expect((await token(imported, '198.51.100.1')).status).toBe(500);
      expect(handle.starts()).toBe(startsBefore + 1);
      expect(handle.current()).toBeNull();
      // After 1 s one more try, which fails again: the next wait is longer (2 s).
      laterBy(1_100);
      expect((await token(imported, '198.51.100.1')).status).toBe(500);
      expect(handle.starts()).toBe(startsBefore + 2);
      vi.restoreAllMocks();
      laterBy(2_000);
      expect((await token(imported, '198.51.100.1')).status).toBe(500);
      expect(handle.starts(), 'still backing off').toBe(startsBefore + 2);
      // Repaired: the next try after the back-off starts a worker that answers.
      handle.loadInsteadOfBcryptjs(null);
      vi.restoreAllMocks();
      laterBy(3_500);
      expect((await token(imported, '198.51.100.1')).status).toBe(200);
      expect(handle.starts()).toBe(startsBefore + 3);
      expect(counted()).toEqual([]);
      for (const line of logged) expect(line).not.toContain(imported.clientSecret);
    });
  });
});

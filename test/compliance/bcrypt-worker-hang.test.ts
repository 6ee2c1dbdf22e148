// RFC 6749 §5.2: a bcrypt worker thread that hangs with checks under way (a loop, a blocked thread) is a server fault:
// once it has answered none for the watchdog's bound its checks get 500 server_error, never a request left unanswered,
// and a fresh worker takes over; a worker that keeps failing is restarted only after a back-off.
import bcrypt from 'bcryptjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestClient } from '../helpers/app.js';
import { hostWithBcryptSecret, laterBy, SERVER_ERROR, withFakeBcryptjs } from '../helpers/bcrypt-host.js';
import { expectSpecHeaders } from '../helpers/spec-requests.js';
import { until } from '../helpers/until.js';
import { bcryptWorkerForTests as handle, verifyBcrypt } from '../../src/crypto/bcrypt-secret.js';

/** A host with its own imported secret (the process remembers a match, and would answer it without a worker), at
 * cost 4 (~1 ms a check): the workers' stand-ins for bcryptjs set how long a check takes. */
const hostWithOwnSecret = (name: string) => hostWithBcryptSecret(`imported-${name}-secret`, bcrypt.hashSync(`imported-${name}-secret`, 4));
// The watchdog's bound in these tests (10 s in production): long enough for three requests to queue in the worker.
const SILENCE_MS = 1_000;
const LOG = 'express-oauth-router: unexpected BcryptWorkerError: the bcrypt worker thread';

/** Stand-ins for bcryptjs: a check that never ends (an infinite loop), one that takes 100 ms (a thread that answers
 * slowly but answers), one that ends the thread, and a module that never finishes loading. */
const FAKES = {
  hanging: 'exports.compareSync = () => { for (;;); };',
  slow: `const bcrypt = require(BCRYPTJS);
const pause = new Int32Array(new SharedArrayBuffer(4));
exports.compareSync = (secret, hash) => { Atomics.wait(pause, 0, 0, 100); return bcrypt.compareSync(secret, hash); };`,
  crashing: 'exports.compareSync = () => process.exit(3);',
  stuck: 'for (;;);',
};

const wrong = (client: TestClient, i: number): TestClient => ({ clientId: client.clientId, clientSecret: `guess-${i}` });

beforeEach(async () => {
  handle.endSilentAfter(SILENCE_MS);
  // The worker the last test left, idle, stops: nobody was waiting, so no failure; the next check loads the test's module.
  await handle.current()?.terminate();
});

afterEach(() => {
  vi.restoreAllMocks();
  handle.loadInsteadOfBcryptjs(null);
  handle.endSilentAfter(null);
});

describe('the bcrypt worker hangs: a server fault after a bound on its silence, never a hung request', () => {
  it('checks queued on a hung worker get 500 server_error, logged once without secret or hash, not counted; the next request gets a fresh worker', async () => {
    const { imported, token, logged, counted } = await hostWithOwnSecret('hung');
    await withFakeBcryptjs(FAKES, async ({ hanging }) => {
      handle.loadInsteadOfBcryptjs(hanging!);
      const sent = performance.now();
      const inFlight = [token(imported, '198.51.100.1'), token(wrong(imported, 1), '198.51.100.2'), token(wrong(imported, 2), '198.51.100.3')]
        .map((req) => req.then((res) => res));
      await until('three checks in a started worker', () => handle.ready() && handle.checksUnderWay() === 3);
      const hung = handle.current()!;
      const ended = new Promise((resolve) => hung.once('exit', resolve));
      const startsBefore = handle.starts();
      const watchdog = handle.watchdog();
      expect(watchdog, 'armed while checks are under way').not.toBeNull();
      expect(watchdog!.hasRef(), 'the watchdog never keeps the process alive').toBe(false);

      const answers = await Promise.all(inFlight);
      expect(performance.now() - sent).toBeGreaterThanOrEqual(SILENCE_MS);
      for (const res of answers) {
        expect(res.status).toBe(500);
        expect(res.body).toEqual(SERVER_ERROR);
        expect(res.headers['www-authenticate']).toBeUndefined();
        expectSpecHeaders(res);
      }
      // The thread in its loop was ended, not left spinning a core.
      await ended;
      expect(logged).toEqual([
        `${LOG} hung (no answer within 1 s) and was stopped with client secret checks under way; the next check starts a new one`,
      ]);
      expect(counted(), 'no failed authentication, no rate limit hit').toEqual([]);
      expect(handle.current()).toBeNull();
      expect(handle.watchdog()).toBeNull();

      // A fresh worker answers the next checks at once; idle again, it has no timer.
      handle.loadInsteadOfBcryptjs(null);
      expect((await token(imported, '198.51.100.1')).status).toBe(200);
      expect(handle.starts()).toBe(startsBefore + 1);
      expect(handle.current()).not.toBe(hung);
      expect(handle.watchdog(), 'idle: no timer').toBeNull();
      expect((await token(wrong(imported, 3), '198.51.100.2')).status).toBe(401);
      expect((await token(wrong(imported, 4), '198.51.100.2')).status, 'the limit still counts real failures').toBe(429);
    });
  });

  it('a worker that keeps answering is never ended, however long its queue outlasts the bound', async () => {
    const { imported, token, logged } = await hostWithOwnSecret('slow');
    handle.endSilentAfter(400);
    await withFakeBcryptjs(FAKES, async ({ slow }) => {
      handle.loadInsteadOfBcryptjs(slow!);
      const startsBefore = handle.starts();
      const sent = performance.now();
      // Ten sources, so all ten checks (100 ms each, one at a time) queue in the one worker.
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => token(wrong(imported, i), `198.51.100.${10 + i}`).then((res) => res)));
      expect(performance.now() - sent, 'the queue took more than twice the bound').toBeGreaterThan(2 * 400);
      for (const res of answers) expect(res.body.error).toBe('invalid_client');
      expect(handle.starts(), 'one worker, never replaced').toBe(startsBefore + 1);
      expect(logged).toEqual([]);
      expect(handle.watchdog()).toBeNull();
    });
  });

  it('an event loop held up past the bound does not take a worker that answered meanwhile for hung', async () => {
    const hash = bcrypt.hashSync('held-up', 8);
    expect(await verifyBcrypt(hash, 'held-up')).toBe(true);
    const startsBefore = handle.starts();
    handle.endSilentAfter(200);
    const check = verifyBcrypt(hash, 'held-up');
    // A host's synchronous work holds the event loop past the bound while the worker answers (~20 ms at cost 8): the
    // watchdog's timer then comes due in the same turn as the answer, and must not end the worker that gave it.
    await new Promise<void>((resolve) => setImmediate(() => {
      const end = performance.now() + 600;
      while (performance.now() < end);
      resolve();
    }));
    await expect(check).resolves.toBe(true);
    expect(handle.starts()).toBe(startsBefore);
    expect(handle.watchdog()).toBeNull();
  });

  it('a worker that never finishes loading: 500 after the bound, logged as a failed start, and backed off', async () => {
    const { imported, token, logged, counted } = await hostWithOwnSecret('stuck');
    await withFakeBcryptjs(FAKES, async ({ stuck }) => {
      handle.loadInsteadOfBcryptjs(stuck!);
      const startsBefore = handle.starts();
      const first = await token(imported, '198.51.100.1');
      expect(first.status).toBe(500);
      expect(first.body).toEqual(SERVER_ERROR);
      expect(logged).toEqual([`${LOG} failed to start: no answer within 1 s`]);
      expect((await token(imported, '198.51.100.1')).status, 'within the back-off: at once, no start').toBe(500);
      expect(handle.starts()).toBe(startsBefore + 1);
      handle.loadInsteadOfBcryptjs(null);
      laterBy(1_100);
      expect((await token(imported, '198.51.100.1')).status).toBe(200);
      expect(handle.starts()).toBe(startsBefore + 2);
      expect(counted()).toEqual([]);
    });
  });
});

describe('a bcrypt worker that keeps crashing is restarted after a back-off, not at once each time', () => {
  it('the first crash restarts at once; each next one with no check answered between waits 1 s, doubling; an answer resets it', async () => {
    const { imported, token, logged, counted } = await hostWithOwnSecret('crashing');
    await withFakeBcryptjs(FAKES, async ({ crashing }) => {
      handle.loadInsteadOfBcryptjs(crashing!);
      const startsBefore = handle.starts();
      const stoppedLine = (next: string) => `${LOG} stopped (exit code 3) with client secret checks under way; ${next}`;
      const serverError = async (client = imported) => {
        const res = await token(client, '198.51.100.1');
        expect(res.status).toBe(500);
        expect(res.body).toEqual(SERVER_ERROR);
      };
      await serverError();
      expect(handle.starts()).toBe(startsBefore + 1);
      await serverError();
      expect(handle.starts(), 'the first crash: a new worker at once').toBe(startsBefore + 2);
      await serverError();
      expect(handle.starts(), 'the second in a row: no new worker for 1 s').toBe(startsBefore + 2);
      laterBy(1_100);
      await serverError();
      expect(handle.starts()).toBe(startsBefore + 3);
      vi.restoreAllMocks();
      laterBy(2_000);
      await serverError();
      expect(handle.starts(), 'the third in a row: 2 s').toBe(startsBefore + 3);
      expect(logged).toEqual([
        stoppedLine('the next check starts a new one'),
        stoppedLine('no new one for 1 s'),
        stoppedLine('no new one for 2 s'),
      ]);

      // Repaired: after the back-off a worker answers, and the next crash is again a first one, restarted at once.
      handle.loadInsteadOfBcryptjs(null);
      vi.restoreAllMocks();
      laterBy(3_500);
      expect((await token(imported, '198.51.100.1')).status).toBe(200);
      expect(handle.starts()).toBe(startsBefore + 4);
      await handle.current()!.terminate();
      handle.loadInsteadOfBcryptjs(crashing!);
      // A wrong secret: the right one now matches from the process's memory, without a worker.
      await serverError(wrong(imported, 1));
      handle.loadInsteadOfBcryptjs(null);
      expect((await token(wrong(imported, 2), '198.51.100.1')).status, 'the first crash since an answer: a new worker at once').toBe(401);
      expect(handle.starts()).toBe(startsBefore + 6);
      expect(counted().map((event) => event.type), 'only the wrong secret').toEqual(['client.authentication_failed']);
    });
  });
});

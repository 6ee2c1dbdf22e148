// Two leaked-key replacements at the same moment (two instances, or an instance and oauth-admin) leave exactly one key, their results account for every kid once, and each names the key that signs.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import express from 'express';
import type { SigningKeyStore, Store } from '../../src/stores/contract.js';
import { openSharedInstances, sharedBackends, type SharedBackend } from '../helpers/built-in-stores.js';
import { createTestApp, createTestRouter } from '../helpers/app.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';
import { decodeJwt, fetchJwks } from '../helpers/jwt.js';
import { runCliWith } from '../helpers/run-cli.js';
import { replaceLeakedSigningKeys, type ReplacedSigningKeys } from '../../src/jwt/replace-leaked-keys.js';
import { generateSigningKeyRecord } from '../../src/jwt/generate-signing-key.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';

const ROUNDS = 10;
const RACERS = 3;
const JWT = { accessTokenFormat: 'jwt', accessTokenTtl: 3600 } as const;

// OAUTH_TEST_REDIS_PREFIX: a run that shares its Redis with others keeps its keys under a prefix of its own.
const BACKENDS = sharedBackends('leaked_key_race', { memory: true, redisPrefix: process.env.OAUTH_TEST_REDIS_PREFIX ?? '' });

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!();
});

function openStores(backend: () => Promise<SharedBackend>, count: number): Promise<Store[]> {
  return openSharedInstances(backend, count, cleanup);
}

async function open(backend: () => Promise<SharedBackend>, count: number): Promise<SigningKeyStore[]> {
  return (await openStores(backend, count)).map((store) => store.keys!);
}

/**
 * `keys` whose saves wait for `release()`: a replacement through it lists and picks its key's createdAt, then waits.
 * `saving` resolves once that save is called, with `clockPast` resolving once the clock is past the record's createdAt,
 * so a replacement started after it picks a later one: the order the tests need, whatever the load.
 */
function heldSaves(keys: SigningKeyStore): { readonly keys: SigningKeyStore; readonly saving: Promise<void>; release(): void } {
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  let saved!: (createdAt: Date) => void;
  const picked = new Promise<Date>((resolve) => { saved = resolve; });
  return {
    keys: {
      listSigningKeys: () => keys.listSigningKeys(),
      saveSigningKey: async (record, options) => { saved(record.createdAt); await held; return keys.saveSigningKey(record, options); },
      deleteSigningKey: (kid) => keys.deleteSigningKey!(kid),
    },
    saving: picked.then(clockPast),
    release,
  };
}

/** Resolves once `Date.now()` is past `createdAt`, so a key picked after it is strictly newer (no same-millisecond tie). */
async function clockPast(createdAt: Date): Promise<void> {
  while (Date.now() <= createdAt.getTime()) await new Promise((resolve) => setImmediate(resolve));
}

/** What every replacement's result must say together: each kid deleted by one call at most, and all but the one left. */
async function expectExactlyOneLeft(keys: SigningKeyStore, results: readonly ReplacedSigningKeys[], leaked: readonly string[], where: string): Promise<void> {
  const left = (await keys.listSigningKeys()).map((key) => key.kid);
  expect(left, `${where}: keys left`).toHaveLength(1);
  const made = results.map((result) => result.kid);
  expect(made, `${where}: the key left is one a replacement made`).toContain(left[0]);
  expect(results.find((result) => result.kid === left[0])!.signingKid, `${where}: the call that made the key left names it as signing`).toBe(left[0]);
  const deleted = results.flatMap((result) => result.deleted);
  expect(new Set(deleted).size, `${where}: a kid reported deleted twice`).toBe(deleted.length);
  expect([...deleted].sort(), `${where}: every other kid is reported deleted, once`).toEqual([...leaked, ...made].filter((kid) => kid !== left[0]).sort());
}

describe.each(BACKENDS)('RFC 9700 §4.10: leaked-key replacements at the same moment on the %s store', (_label, available, backend) => {
  it.skipIf(!available)('one that lists before the other saves, the other making the newer key: exactly one key is left, its own', async () => {
    const [a, b] = await open(backend, 2);
    const leaked = generateSigningKeyRecord(new Date(Date.now() - 60_000));
    await a!.saveSigningKey(leaked);
    // A reads the keys and picks its key's createdAt, then its save is held until B has run to its end: B's key is
    // newer, and B listed before A's key was there.
    const slowA = heldSaves(a!);
    const first = replaceLeakedSigningKeys(slowA.keys);
    await slowA.saving;
    const second = await replaceLeakedSigningKeys(b!);
    slowA.release();
    const results = [await first, second];
    await expectExactlyOneLeft(a!, results, [leaked.kid], 'held');
    expect((await a!.listSigningKeys()).map((key) => key.kid)).toEqual([second.kid]);
    expect(results[0]!.deleted, "A deleted its own key: B's newer one signs").toEqual([results[0]!.kid]);
    expect(results.map((result) => result.signingKid), 'both name the key that signs, B\'s').toEqual([second.kid, second.kid]);
  });

  it.skipIf(!available)('one that listed before the other saved, its clock ahead: its newer key replaces the other\'s after that call named it as signing; the key left is named by the call that made it', async () => {
    const [a, b] = await open(backend, 2);
    const leaked = generateSigningKeyRecord(new Date(Date.now() - 60_000));
    await a!.saveSigningKey(leaked);
    // A lists (the leaked key only) and is held; its machine's clock is 10 s ahead, so its key is the newer one.
    const held = heldSaves(a!);
    let saving!: () => void;
    const listed = new Promise<void>((resolve) => { saving = resolve; });
    const ahead: SigningKeyStore = {
      ...held.keys,
      saveSigningKey: (record, options) => {
        saving();
        return held.keys.saveSigningKey({ ...record, createdAt: new Date(record.createdAt.getTime() + 10_000) }, options);
      },
    };
    const first = replaceLeakedSigningKeys(ahead);
    await listed;
    const second = await replaceLeakedSigningKeys(b!);
    // B is done, and its result is true as B found the store: its key signs, the leaked one is gone.
    expect(second).toEqual({ kid: second.kid, signingKid: second.kid, deleted: [leaked.kid] });
    held.release();
    const later = await first;
    // A never saw B's key beside the leaked ones, and B's is the older: A deletes it. B's signingKid is now stale;
    // A's result, the later one, names the key left and lists B's among what it deleted.
    expect(later).toEqual({ kid: later.kid, signingKid: later.kid, deleted: [second.kid] });
    await expectExactlyOneLeft(a!, [later, second], [leaked.kid], 'clock ahead');
    expect((await a!.listSigningKeys()).map((key) => key.kid)).toEqual([later.kid]);
  });

  it.skipIf(!available)('rotateSigningKey({ leaked: true }) that loses the race resolves and reports the key that signs: its tokens\' and the JWKS\'s kid', async () => {
    const [a, b] = await openStores(backend, 2);
    const host = await createTestApp(JWT, a!);
    await clientCredentialsToken(host.app, host.credentialsClient);
    // The instance whose replacement loses: its save is held until the other replacement (an instance or oauth-admin) is done.
    const slow = heldSaves(a!.keys!);
    const oauth = createTestRouter({ ...a!, keys: slow.keys }, JWT);
    const app = express();
    app.use(oauth.router);
    const seen: unknown[] = [];
    oauth.events.on('event', (event) => { seen.push(event); });
    const first = oauth.rotateSigningKey({ leaked: true });
    await slow.saving;
    const winner = await replaceLeakedSigningKeys(b!.keys!);
    slow.release();
    const lost = await first;
    expect(lost.deleted, 'its own key was deleted').toContain(lost.kid);
    expect(lost.signingKid).toBe(winner.kid);
    expect(seen).toEqual([expect.objectContaining({ type: 'signing_keys.replaced', kid: lost.kid, signingKid: winner.kid, deleted: lost.deleted, complete: true })]);
    expect(decodeJwt(await clientCredentialsToken(app, host.credentialsClient)).header.kid, 'a new token is signed with it').toBe(lost.signingKid);
    expect((await fetchJwks(app)).map((jwk) => jwk.kid), 'the JWKS publishes it alone').toEqual([lost.signingKid]);
  });

  it.skipIf(!available)(`${RACERS} replacements through ${RACERS} instances at once leave exactly one key, in each of ${ROUNDS} rounds`, async () => {
    const instances = await open(backend, RACERS);
    await Promise.all(instances.map((keys) => keys.listSigningKeys()));
    const first = generateSigningKeyRecord(new Date(Date.now() - 60_000));
    await instances[0]!.saveSigningKey(first);
    let leaked = [first.kid];
    for (let round = 0; round < ROUNDS; round++) {
      const results = await Promise.all(instances.map((keys) => replaceLeakedSigningKeys(keys)));
      await expectExactlyOneLeft(instances[0]!, results, leaked, `round ${round}`);
      leaked = (await instances[0]!.listSigningKeys()).map((key) => key.kid);
    }
  });
});

// The race the CLI could lose (a newer key saved between its save and its deletes) needs a store without
// keys.replaceSigningKeys, which the CLI never opens: every built-in store replaces in one transaction or script.
describe('RFC 9700 §4.10: oauth-admin keys replace-leaked on a store that replaces in one step (SQLite)', () => {
  it('its --json and audit event name its own key as the one that signs (signing_kid, signingKid), every other key deleted, and tokens and the JWKS carry it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leaked-key-race-cli-'));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const filename = join(dir, 'oauth.sqlite');
    const store = createSqliteStore({ filename, sweepIntervalSeconds: 0 });
    cleanup.push(() => store.close());
    const host = await createTestApp(JWT, store);
    const leakedKid = decodeJwt(await clientCredentialsToken(host.app, host.credentialsClient)).header.kid;
    // A planned rotation still being published, newer than the CLI's clock could make its key: it goes all the same.
    const newer = generateSigningKeyRecord(new Date(Date.now() + 60_000));
    await store.keys.saveSigningKey(newer);
    const audit = join(dir, 'audit.log');
    const result = await runCliWith(['keys', 'replace-leaked', '--yes', '--json'], {
      env: { ...process.env, OAUTH_STORE: `sqlite:${filename}`, OAUTH_AUDIT_LOG: audit },
    });
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as { kid: string; signing_kid: string; deleted: string[] };
    expect(printed.signing_kid).toBe(printed.kid);
    expect(new Set(printed.deleted), 'every key there before').toEqual(new Set([leakedKid, newer.kid]));
    expect((await store.keys.listSigningKeys()).map((key) => key.kid)).toEqual([printed.kid]);
    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([expect.objectContaining({ event: 'signing_keys.replaced', kid: printed.kid, signingKid: printed.kid, complete: true })]);
    const oauth = createTestRouter(store, JWT);
    const app = express();
    app.use(oauth.router);
    expect(decodeJwt(await clientCredentialsToken(app, host.credentialsClient)).header.kid, 'a new token is signed with it').toBe(printed.kid);
    expect((await fetchJwks(app)).map((jwk) => jwk.kid), 'the JWKS publishes it alone').toEqual([printed.kid]);
  });
});

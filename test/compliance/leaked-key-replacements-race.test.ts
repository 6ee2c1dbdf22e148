// Two leaked-key replacements at the same moment (two instances, or an instance and oauth-admin) leave exactly one key, and their results account for every kid once.
import { afterEach, describe, expect, it } from 'vitest';
import type { SigningKeyStore } from '../../src/stores/contract.js';
import { sharedBackends, type SharedBackend } from '../helpers/built-in-stores.js';
import { replaceLeakedSigningKeys, type ReplacedSigningKeys } from '../../src/jwt/replace-leaked-keys.js';
import { generateSigningKeyRecord } from '../../src/jwt/generate-signing-key.js';

const ROUNDS = 10;
const RACERS = 3;

const BACKENDS = sharedBackends('leaked_key_race', { memory: true });

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!();
});

async function open(backend: () => Promise<SharedBackend>, count: number): Promise<SigningKeyStore[]> {
  const shared = await backend();
  cleanup.push(() => shared.dispose());
  const keys: SigningKeyStore[] = [];
  for (let i = 0; i < count; i++) {
    const store = await shared.instance();
    cleanup.push(async () => { await store.close?.(); });
    keys.push(store.keys!);
  }
  return keys;
}

/** What every replacement's result must say together: each kid deleted by one call at most, and all but the one left. */
async function expectExactlyOneLeft(keys: SigningKeyStore, results: readonly ReplacedSigningKeys[], leaked: readonly string[], where: string): Promise<void> {
  const left = (await keys.listSigningKeys()).map((key) => key.kid);
  expect(left, `${where}: keys left`).toHaveLength(1);
  const made = results.map((result) => result.kid);
  expect(made, `${where}: the key left is one a replacement made`).toContain(left[0]);
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
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const slowA: SigningKeyStore = {
      listSigningKeys: () => a!.listSigningKeys(),
      saveSigningKey: async (record, options) => { await held; return a!.saveSigningKey(record, options); },
      deleteSigningKey: (kid) => a!.deleteSigningKey!(kid),
    };
    const first = replaceLeakedSigningKeys(slowA);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await replaceLeakedSigningKeys(b!);
    release();
    const results = [await first, second];
    await expectExactlyOneLeft(a!, results, [leaked.kid], 'held');
    expect((await a!.listSigningKeys()).map((key) => key.kid)).toEqual([second.kid]);
    expect(results[0]!.deleted, "A deleted its own key: B's newer one signs").toEqual([results[0]!.kid]);
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

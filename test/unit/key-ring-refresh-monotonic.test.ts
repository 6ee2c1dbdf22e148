// The key ring re-reads the store after its refresh periods even when the wall clock steps back (NTP) meanwhile.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createStoreKeyRing } from '../../src/jwt/store-key-ring.js';
import { generateSigningKeyRecord } from '../../src/jwt/generate-signing-key.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';

const logger = { warn() {}, error() {} };
const TEN_MINUTES = 600_000;

afterEach(() => {
  vi.useRealTimers();
});

/** A ring loaded from a memory store, with Date and performance under the test's control. */
async function loadedRing() {
  vi.useFakeTimers({ toFake: ['Date', 'performance'], now: Date.now() });
  const store = createMemoryStore();
  const ring = createStoreKeyRing(store.keys!, 3600, logger);
  await ring.publishedKeys();
  /** Another instance (its clock right) rotates: a key created at the true time. */
  const rotateElsewhere = async (trueNow: number) => {
    const record = generateSigningKeyRecord(new Date(trueNow));
    await store.keys!.saveSigningKey(record);
    return record.kid;
  };
  return { ring, rotateElsewhere };
}

describe('RFC 9068 §4, RFC 7517 §5: refresh periods are durations, not wall-clock times', () => {
  it("a minute after loading, the JWKS lists another instance's new key, even if the wall clock stepped back ten minutes", async () => {
    const { ring, rotateElsewhere } = await loadedRing();
    const trueNow = Date.now();
    vi.setSystemTime(trueNow - TEN_MINUTES);
    const kid = await rotateElsewhere(trueNow);
    vi.advanceTimersByTime(61_000);
    expect((await ring.publishedKeys()).map((key) => key.kid)).toContain(kid);
  });

  it('an unknown kid re-reads the store 5 s after the last such read, even if the wall clock stepped back ten minutes', async () => {
    const { ring, rotateElsewhere } = await loadedRing();
    expect(await ring.findKey('no-such-kid')).toBeNull();
    const trueNow = Date.now();
    vi.setSystemTime(trueNow - TEN_MINUTES);
    const kid = await rotateElsewhere(trueNow);
    vi.advanceTimersByTime(6_000);
    expect((await ring.findKey(kid))?.kid).toBe(kid);
  });
});

describe('RFC 9068 §4: a process that only verifies follows another instance\'s rotation', () => {
  it('a key superseded elsewhere stops verifying once it retires, though this ring never signs nor serves the JWKS', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'], now: Date.now() });
    const store = createMemoryStore();
    const ring = createStoreKeyRing(store.keys!, 3600, logger);
    // A first check loads the ring, which makes the store's first key.
    expect(await ring.findKey('some-other-kid')).toBeNull();
    const [old] = await store.keys!.listSigningKeys();
    expect((await ring.findKey(old!.kid))?.kid).toBe(old!.kid);
    // Another instance rotates a minute later (the clock is frozen: a key of the same millisecond would be ordered by
    // kid, by chance); its key signs after the publication delay, and the old one verifies for the tokens' lifetime
    // after that, plus the margin: well within two hours.
    vi.advanceTimersByTime(60_000);
    const rotated = generateSigningKeyRecord(new Date(Date.now()));
    await store.keys!.saveSigningKey(rotated);
    vi.advanceTimersByTime(2 * 3600_000);
    // The check that finds the ring's keys past their refresh period reads the store in the background …
    await ring.findKey(old!.kid);
    // … and from then on (once that read, and the deletion of the retired key's record, are done) the old key is
    // retired, the new one verifies, with no token of the new key having come by.
    await vi.waitFor(async () => { expect(await ring.findKey(old!.kid)).toBeNull(); });
    expect((await store.keys!.listSigningKeys()).map((key) => key.kid)).toEqual([rotated.kid]);
    expect((await ring.findKey(rotated.kid))?.kid).toBe(rotated.kid);
  });

  it('a store that is down delays no verification: the loaded keys answer, and the next period tries again', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'], now: Date.now() });
    const store = createMemoryStore();
    let down = false;
    let reads = 0;
    const keys = {
      ...store.keys!,
      listSigningKeys: () => {
        reads += 1;
        return down ? new Promise<never>(() => {}) : store.keys!.listSigningKeys();
      },
    };
    const ring = createStoreKeyRing(keys, 3600, logger);
    const signing = await ring.signer();
    const readsWhenLoaded = reads;
    down = true;
    vi.advanceTimersByTime(61_000);
    // A store read that never answers: every check still answers at once, from the keys loaded.
    for (let i = 0; i < 5; i += 1) expect((await ring.findKey(signing.kid))?.kid).toBe(signing.kid);
    expect(reads).toBe(readsWhenLoaded + 1);
  });
});

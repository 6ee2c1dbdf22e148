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

// RFC 4647 §3.4's lookup of a long range costs work in proportion to its length, measured without a clock.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lookUpLanguage } from '../../src/http/accept-language-lookup.js';

const AVAILABLE = ['en', 'de', 'zh-Hant-TW'];

afterEach(() => { vi.restoreAllMocks(); });

/** Characters that Array#join produced while `work` ran: the lookup builds each prefix it tries by a join. */
function charactersJoined(work: () => void): number {
  const join = Array.prototype.join;
  let produced = 0;
  Array.prototype.join = function counted(this: unknown[], separator?: string): string {
    const joined = join.call(this, separator);
    produced += joined.length;
    return joined;
  };
  try {
    work();
  } finally {
    Array.prototype.join = join;
  }
  return produced;
}

describe('RFC 4647 §3.4 lookup of a range of thousands of subtags (anybody can send a 16 KB Accept-Language)', () => {
  it('joins no prefix longer than the longest available tag: a 14.7 KB range joins a few hundred characters, not a copy of itself per subtag cut', () => {
    // Before: the rest of the range joined again after each cut, 4,900 joins averaging 7 KB (about 36 million
    // characters, 0.25–0.3 s of a core per page, error pages included).
    const long = `zz-${Array.from({ length: 4900 }, () => 'ab').join('-')}`;
    let found: string | null = null;
    const joined = charactersJoined(() => { found = lookUpLanguage(`${long}, de;q=0.5`, AVAILABLE); });
    expect(found).toBe('de');
    expect(joined).toBeLessThan(long.length);
  });

  it('a range as long as an available tag is still looked up whole, then cut subtag by subtag', () => {
    expect(lookUpLanguage('zh-Hant-TW', AVAILABLE)).toBe('zh-Hant-TW');
    expect(lookUpLanguage('zh-Hant-TW-x-private', AVAILABLE)).toBe('zh-Hant-TW');
    expect(lookUpLanguage('de-CH-1996', AVAILABLE)).toBe('de');
  });

  it('asks Intl to canonicalize no range longer than 64 characters (so none is kept either): a 16 KB range cost Intl about 8 ms a page, and each kept took up to 16 KB', () => {
    const canonicalize = vi.spyOn(Intl, 'getCanonicalLocales');
    // Subtags Intl accepts (a -u- extension's keywords), so only the length can keep it from the long range.
    const long = `en-u-${Array.from({ length: 2000 }, (_, i) => `k${String.fromCharCode(97 + (i % 26))}-${'abcdefgh'.slice(0, 3 + (i % 5))}`).join('-')}`;
    expect(lookUpLanguage(`${long}, de;q=0.5`, AVAILABLE)).toBe('en');
    const asked = canonicalize.mock.calls.map(([tag]) => String(tag).length);
    expect(Math.max(0, ...asked)).toBeLessThanOrEqual(64);
    // Still canonicalized below it: a deprecated tag finds the catalogue of the tag Intl renames it to.
    expect(lookUpLanguage('iw, de;q=0.5', ['en', 'he', 'de'])).toBe('he');
  });
});

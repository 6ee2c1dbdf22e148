// HTML §3.2.6.4: a page in a right-to-left language says dir="rtl"; the language tag's script subtag decides first.
import { describe, expect, it } from 'vitest';
import { textDirection } from '../../src/views/text-direction.js';

describe('textDirection: the <html dir> of a page language', () => {
  it('Arabic, Hebrew, Persian and Urdu, with or without a region, are right to left', () => {
    for (const tag of ['ar', 'ar-EG', 'he', 'he-IL', 'fa', 'fa-IR', 'ur', 'ur-PK', 'yi', 'ps', 'ckb', 'HE']) expect(textDirection(tag), tag).toBe('rtl');
  });

  it('a script subtag decides over the language: az-Arab is right to left, ku-Latn or uz-Latn left to right', () => {
    expect(textDirection('az-Arab')).toBe('rtl');
    expect(textDirection('pa-Arab-PK')).toBe('rtl');
    expect(textDirection('ks-Deva')).toBe('ltr');
    expect(textDirection('uz-Latn')).toBe('ltr');
  });

  it('the languages of the EU are left to right', () => {
    for (const tag of ['en', 'de', 'de-AT', 'fr', 'pl', 'el', 'bg', 'ga', 'mt', 'sr-Cyrl']) expect(textDirection(tag), tag).toBe('ltr');
  });
});

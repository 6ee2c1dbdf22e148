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

  it('an extension or private-use subtag of four letters is not a script: ar-u-nu-latn is right to left, en-u-nu-arab left to right', () => {
    // A script subtag comes right after the language (RFC 5646 §2.1); `-u-nu-latn` (Latin digits) names a numbering system.
    for (const tag of ['ar-u-nu-latn', 'ar-EG-u-nu-latn', 'he-x-test', 'fa-IR-u-nu-latn']) expect(textDirection(tag), tag).toBe('rtl');
    for (const tag of ['en-u-nu-arab', 'de-x-hebr', 'hi-IN-u-nu-arab']) expect(textDirection(tag), tag).toBe('ltr');
  });
});

// The example app's title rule refuses exactly the characters the package refuses in an integration's name.
import { describe, expect, it } from 'vitest';
import { checkClientName } from '../../src/clients/client-fields.js';
import { checkTitle } from '../../example-app/check-title.js';

describe('example app title rule', () => {
  it('refuses each BMP character the package refuses in a name, and only those', () => {
    const differ: string[] = [];
    for (let code = 0; code <= 0xffff; code += 1) {
      if (code >= 0xd800 && code <= 0xdfff) continue; // lone surrogates: refused by the title rule, tested over HTTP
      const text = `a${String.fromCharCode(code)}b`;
      let nameRefused = false;
      try {
        checkClientName(text);
      } catch {
        nameRefused = true;
      }
      if (nameRefused !== 'refused' in checkTitle(text)) differ.push(`U+${code.toString(16).toUpperCase().padStart(4, '0')}`);
    }
    expect(differ).toEqual([]);
  });
});

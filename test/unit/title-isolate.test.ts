// Names in a page's <title> stay isolated (UAX #9) even when they carry isolate controls of their own.
import { describe, expect, it } from 'vitest';
import { isolate } from '../../src/views/isolate.js';
import { renderPage } from '../../src/views/layout.js';

/** One FSI…PDI around text with no isolate control of its own: the name cannot close it early nor leave one open. */
const ISOLATED = /^\u2068[^\u2066-\u2069]*\u2069$/;

describe('UAX #9 §2.7: isolate() in titles', () => {
  it('a name with a PDI of its own cannot end the isolate and carry an override onto the rest of the title', () => {
    // A stored name from before names were checked, or a productName: U+2069 would match the FSI, and the RLO after it
    // would reverse "? – Product" in the tab and in what a screen reader announces first.
    for (const name of ['Acme\u2069\u202E CRM', 'Acme\u2067 CRM', '\u2069\u2069x', '\u2066a\u2069b']) {
      expect(isolate(name)).toMatch(ISOLATED);
    }
    expect(isolate('مرحبا CRM')).toBe('\u2068مرحبا CRM\u2069');
  });

  it('the product name in the title', () => {
    const html = renderPage({ title: 'Sign in', productName: 'Sig\u2069\u202Enature', brandColor: '#000000', nonce: 'n', body: '' });
    const title = /<title>([^<]*)<\/title>/.exec(html)![1]!;
    expect(title.slice('Sign in – '.length)).toMatch(ISOLATED);
  });
});

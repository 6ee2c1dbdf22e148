// RFC 9110 §12.5.4: "The 'Accept-Language' header field can be used by user agents to indicate the set of natural
// languages that are preferred in the response." The router's pages, in the host's catalogues (pageLanguages), chosen
// by Accept-Language or the host's hook, with Content-Language (§8.5) and Vary (§12.5.5); the JSON endpoints untouched.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createTestApp, REDIRECT_URI, USER } from '../helpers/app.js';
import { authorizeQuery, hiddenField, signInAndGetConsent } from '../helpers/browser-flow.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OptionsError } from '../../src/options.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import { ENGLISH_PAGE_MESSAGES, type PageCatalogue } from '../../src/views/page-messages.js';
import { createOAuthRouter } from '../../src/router.js';
import { hostSessionUserAuth } from '../helpers/host-login.js';
import { listen, rawRequest } from '../helpers/raw-http.js';
import express from 'express';

const GERMAN: PageCatalogue = {
  signInTitle: 'Anmelden',
  signInIntroToClient: 'Melden Sie sich mit Ihrem {product}-Konto an, um zu {client} fortzufahren.',
  usernameLabel: 'Benutzername',
  passwordLabel: 'Passwort',
  signInButton: 'Anmelden',
  signInFailed: 'Benutzername oder Passwort ist falsch.',
  signInLockedOut: (minutes) => (minutes === 1 ? 'Zu viele Versuche. In einer Minute erneut.' : 'Zu viele Versuche. In {minutes} Minuten erneut.'),
  consentTitle: '{client} erlauben?',
  allowButton: 'Erlauben',
  denyButton: 'Ablehnen',
  signedInAs: 'Angemeldet als {user}.',
  consentsTitle: 'Verbundene Anwendungen',
  formExpiredReload: 'Das Formular ist abgelaufen. Laden Sie die Seite neu.',
  errorHeading: 'Diese Anfrage kann nicht abgeschlossen werden',
  scopes: { 'envelopes:read': 'Ihre Umschläge lesen' },
};
/** The pages a translated site long showed in English only: each a message of the catalogue too. */
const GERMAN_ERRORS: PageCatalogue = {
  ...GERMAN,
  alreadyAllowedWithdraw: 'Sie haben diese Anfrage bereits erlaubt. Entziehen Sie den Zugriff unter den verbundenen Anwendungen.',
  hostSignInLoop: 'Sie kommen von der Anmeldung zurück, sind für diese Website aber noch abgemeldet.',
  openedByLink: 'Diese Adresse öffnet man mit einem Link, nicht mit einem Formular.',
  formCannotBeOpened: 'Diese Adresse empfängt ein Formular und kann nicht direkt geöffnet werden.',
  formTooSlow: 'Das Formular kam zu langsam an.',
  formTooLarge: 'Das Formular ist zu groß.',
  formEncodingUnsupported: 'Das Formular hat eine Kodierung, die diese Seite nicht liest.',
  requestUnreadable: 'Die Anfrage konnte nicht gelesen werden.',
  consentErrorTitle: 'Fehler: {client} erlauben?',
  consentFormExpired: 'Diese Seite war abgelaufen, daher wurde nichts an {client} gesendet. Wählen Sie erneut.',
};

/** A partial catalogue: only two messages, every other in English. */
const FRENCH: PageCatalogue = { signInTitle: 'Connexion', signInButton: 'Se connecter' };
const ARABIC: PageCatalogue = { signInTitle: 'تسجيل الدخول', signInButton: 'دخول' };

const LANGUAGES: OAuthRouterOptions['pageLanguages'] = { catalogues: { de: GERMAN, fr: FRENCH, ar: ARABIC } };

async function loginPage(options: Partial<OAuthRouterOptions>, acceptLanguage?: string, clientName?: string): Promise<request.Response> {
  const store = createMemoryStore();
  const t = await createTestApp(options, store);
  let client = t.codeClient;
  if (clientName !== undefined) {
    const { client: c, clientSecret } = await registerClient(store, { name: clientName, flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    client = { clientId: c.clientId, clientSecret };
  }
  const get = request(t.app).get(`/oauth2/authorize?${authorizeQuery(client)}`);
  return acceptLanguage === undefined ? get : get.set('Accept-Language', acceptLanguage);
}

/** The page's <html> start tag. */
function htmlTag(page: request.Response): string {
  return /<html[^>]*>/.exec(page.text)![0];
}

describe('RFC 9110 §12.5.4: the pages in the language Accept-Language prefers among the host\'s catalogues', () => {
  it('a German catalogue is chosen by Accept-Language, with lang, Content-Language and Vary', async () => {
    const page = await loginPage({ pageLanguages: LANGUAGES }, 'de-DE,de;q=0.9,en;q=0.5');
    expect(page.status).toBe(200);
    expect(htmlTag(page)).toBe('<html lang="de">');
    expect(page.headers['content-language']).toBe('de');
    expect(page.headers.vary).toMatch(/\bAccept-Language\b/);
    expect(page.text).toContain('<title>Anmelden – ');
    expect(page.text).toContain('<label for="username">Benutzername</label>');
    // The integration's name is still the router's: escaped, in <strong><bdi>.
    expect(page.text).toContain('um zu <strong><bdi>Acme CRM</bdi></strong> fortzufahren.');
  });

  it('a partial catalogue falls back to English message by message', async () => {
    const page = await loginPage({ pageLanguages: LANGUAGES }, 'fr');
    expect(htmlTag(page)).toBe('<html lang="fr">');
    expect(page.text).toContain('<h1>Connexion</h1>');
    expect(page.text).toContain('>Se connecter</button>');
    expect(page.text).toContain('<label for="username">Username</label>');
    expect(page.text).toContain('to continue to <strong><bdi>Acme CRM</bdi></strong>.');
  });

  it('an en catalogue rewords the English that other catalogues fall back to, message by message and scope by scope', async () => {
    // PageLanguagesOptions.catalogues: English "is what every message a catalogue leaves out is shown in; an `en`
    // catalogue rewords it". The French page fell back to the built-in wording instead of the host's.
    const catalogues = {
      fr: { signInTitle: 'Connexion', scopes: { 'envelopes:sign': 'Signer vos enveloppes' } },
      en: { signInButton: 'Log in', scopes: { 'envelopes:read': 'See your envelopes' } },
    };
    const page = await loginPage({ pageLanguages: { catalogues } }, 'fr');
    expect(page.text).toContain('<h1>Connexion</h1>');
    expect(page.text).toContain('class="primary">Log in</button>');
    const store = createMemoryStore();
    const t = await createTestApp({ pageLanguages: { catalogues }, scopes: { 'envelopes:read': 'Read your envelopes', 'envelopes:sign': 'Sign' } }, store);
    const agent = request.agent(t.app);
    const login = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { scope: 'envelopes:read envelopes:sign' })}`).set('Accept-Language', 'fr');
    const posted = await agent.post('/oauth2/login').type('form').send({
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'), username: USER.username, password: USER.password,
    });
    const consent = await agent.get(posted.headers.location!).set('Accept-Language', 'fr');
    expect(consent.text).toContain('<ul><li>See your envelopes</li><li>Signer vos enveloppes</li></ul>');
  });

  it('a right-to-left language sets dir="rtl"', async () => {
    const page = await loginPage({ pageLanguages: LANGUAGES }, 'ar-EG');
    expect(htmlTag(page)).toBe('<html lang="ar" dir="rtl">');
    expect(page.headers['content-language']).toBe('ar');
    expect(page.text).toContain('<h1>تسجيل الدخول</h1>');
  });

  it('a tag without a script subtag runs as the script its language is written in there: Punjabi in Pakistan, Mazanderani and N\'Ko right to left, Sindhi in India left to right', async () => {
    // BCP 47 leaves the script out where it is implied (RFC 5646 §3.1.9 Suppress-Script, §4.1): pa-PK is written in
    // Shahmukhi (Arabic script), sd-IN in Devanagari. A table of languages alone answered pa-PK left to right and sd-IN
    // right to left, and knew neither mzn nor nqo.
    const catalogues = { 'pa-PK': { signInTitle: 'سائن ان' }, mzn: { signInTitle: 'ورود' }, nqo: { signInTitle: 'ߜߊ߲߬ߞߎ߲' }, 'sd-IN': { signInTitle: 'साइन इन' } };
    for (const [tag, dir] of [['pa-PK', ' dir="rtl"'], ['mzn', ' dir="rtl"'], ['nqo', ' dir="rtl"'], ['sd-IN', '']] as const) {
      const page = await loginPage({ pageLanguages: { catalogues } }, tag);
      expect(htmlTag(page), tag).toBe(`<html lang="${tag}"${dir}>`);
    }
  });

  it('a tag naming a right-to-left script that is a variant of an encoded one (Syriac\'s Estrangelo, Western and Eastern forms) or a recent one (Garay) runs right to left', async () => {
    // ISO 15924 codes Syre, Syrj and Syrn for the three forms of Syriac, one Unicode script (Syrc, Bidi_Class AL), and
    // Gara for Garay (Unicode 16, Bidi_Class R): a Western Syriac catalogue tagged syr-Syrj ran left to right.
    const catalogues = { 'syr-Syre': { signInTitle: 'ܥܘܠ' }, 'syr-Syrj': { signInTitle: 'ܥܘܠ' }, 'syr-Syrn': { signInTitle: 'ܥܘܠ' }, 'wo-Gara': { signInTitle: 'Dugg' } };
    for (const tag of Object.keys(catalogues)) {
      const page = await loginPage({ pageLanguages: { catalogues } }, tag);
      expect(htmlTag(page), tag).toBe(`<html lang="${tag}" dir="rtl">`);
    }
  });

  it('q-values decide, not the order of the header', async () => {
    expect(htmlTag(await loginPage({ pageLanguages: LANGUAGES }, 'de;q=0.3, fr;q=0.8, en;q=0.5'))).toBe('<html lang="fr">');
    expect(htmlTag(await loginPage({ pageLanguages: LANGUAGES }, 'en;q=0.9, de'))).toBe('<html lang="de">');
    // q=0: "not acceptable" (RFC 9110 §12.4.2), so English.
    expect(htmlTag(await loginPage({ pageLanguages: LANGUAGES }, 'de;q=0'))).toBe('<html lang="en">');
  });

  it('each range is looked up (RFC 4647 §3.4): a longer range finds the catalogue of its prefix, a script subtag included', async () => {
    const catalogues = { 'zh-Hant': { signInTitle: '登入' }, 'zh-Hans': { signInTitle: '登录' }, 'sr-Latn': FRENCH, 'de-CH': GERMAN };
    const pageLanguages: OAuthRouterOptions['pageLanguages'] = { catalogues };
    expect(htmlTag(await loginPage({ pageLanguages }, 'zh-Hant-TW, en;q=0.5'))).toBe('<html lang="zh-Hant">');
    expect(htmlTag(await loginPage({ pageLanguages }, 'zh-hans-cn'))).toBe('<html lang="zh-Hans">');
    expect(htmlTag(await loginPage({ pageLanguages }, 'sr-Latn-RS-x-private'))).toBe('<html lang="sr-Latn">');
    // No `de` catalogue: a range of the same primary language takes the regional one rather than English.
    expect(htmlTag(await loginPage({ pageLanguages }, 'de, en;q=0.9'))).toBe('<html lang="de-CH">');
    // A better range is served before a worse one's exact match.
    expect(htmlTag(await loginPage({ pageLanguages }, 'zh-Hant-HK, de-CH;q=0.5'))).toBe('<html lang="zh-Hant">');
    // `zh-Hant;q=0` refuses that catalogue even for a range that would look it up.
    expect(htmlTag(await loginPage({ pageLanguages }, 'zh-Hant-TW, zh-Hant;q=0'))).toBe('<html lang="zh-Hans">');
  });

  it('private-use tags (RFC 5646 §2.2.7) are catalogues too: looked up with their singleton cut off with what follows (RFC 4647 §3.4)', async () => {
    const catalogues = { 'X-Klingon': { signInTitle: 'nuqneH' }, 'en-x-corp': { signInTitle: 'Sign in to Corp' }, de: GERMAN };
    const pageLanguages: OAuthRouterOptions['pageLanguages'] = { catalogues };
    const klingon = await loginPage({ pageLanguages }, 'x-klingon, de;q=0.5');
    expect(htmlTag(klingon)).toBe('<html lang="x-klingon">');
    expect(klingon.headers['content-language']).toBe('x-klingon');
    expect(klingon.text).toContain('<h1>nuqneH</h1>');
    expect(htmlTag(await loginPage({ pageLanguages }, 'en-x-corp-london'))).toBe('<html lang="en-x-corp">');
    // `en-x-other` is cut to `en` (the singleton goes with what follows it), not to `en-x`.
    expect(htmlTag(await loginPage({ pageLanguages }, 'en-x-other, de;q=0.5'))).toBe('<html lang="en">');
    // Another private-use range shares no language with it: `x` is no primary language subtag.
    expect(htmlTag(await loginPage({ pageLanguages }, 'x-vulcan, de;q=0.5'))).toBe('<html lang="de">');
    // Ill-formed tags are still refused: a singleton with nothing after it, a subtag longer than 8.
    for (const tag of ['x', 'x-', 'en-x', 'x-klingonese', 'x--a']) {
      await expect(createTestApp({ pageLanguages: { catalogues: { [tag]: FRENCH } } }), tag).rejects.toThrow(/BCP 47/);
    }
  });

  it('grandfathered tags (RFC 5646 §2.2.8) are catalogues and ranges too: as their registry Preferred-Value (§4.5), else matched whole, any case', async () => {
    const catalogues = { 'i-klingon': { signInTitle: 'nuqneH' }, 'I-Default': { signInTitle: 'Sign in (default)' }, 'en-GB-oed': { signInTitle: 'Sign in, Oxford' }, de: GERMAN };
    const pageLanguages: OAuthRouterOptions['pageLanguages'] = { catalogues };
    // `i-klingon` is `tlh`, in the catalogue's tag and in the header's range alike.
    const klingon = await loginPage({ pageLanguages }, 'I-KLINGON, de;q=0.5');
    expect(htmlTag(klingon)).toBe('<html lang="tlh">');
    expect(klingon.headers['content-language']).toBe('tlh');
    expect(klingon.text).toContain('<h1>nuqneH</h1>');
    expect(htmlTag(await loginPage({ pageLanguages }, 'tlh'))).toBe('<html lang="tlh">');
    // No Preferred-Value: the tag itself, in lower case, which only the whole tag finds (`i` is no language).
    expect(htmlTag(await loginPage({ pageLanguages }, 'i-DEFAULT, de;q=0.5'))).toBe('<html lang="i-default">');
    expect(htmlTag(await loginPage({ pageLanguages }, 'i-enochian, de;q=0.5'))).toBe('<html lang="de">');
    // `en-GB-oed` is `en-GB-oxendict`; `en-GB` is looked up as `en`, not as it.
    expect(htmlTag(await loginPage({ pageLanguages }, 'en-gb-oed'))).toBe('<html lang="en-GB-oxendict">');
    expect(htmlTag(await loginPage({ pageLanguages }, 'en-GB, de;q=0.5'))).toBe('<html lang="en">');
    // A catalogue under a grandfathered tag and one under its preferred value are one language.
    await expect(createTestApp({ pageLanguages: { catalogues: { 'i-klingon': FRENCH, tlh: FRENCH } } })).rejects.toThrow(/is tlh again/);
    // Ill-formed tags are still refused: `i-` with an unregistered subtag, a bare singleton, a grandfathered tag extended.
    for (const tag of ['i-foo', 'i', 'i-klingon-x', 'i-default-de']) {
      await expect(createTestApp({ pageLanguages: { catalogues: { [tag]: FRENCH } } }), tag).rejects.toThrow(/BCP 47/);
    }
  });

  it('a grandfathered tag without a Preferred-Value that Intl still reads (cel-gaulish) is matched whole as a range, as its catalogue is keyed', async () => {
    // Intl takes `cel-gaulish` for `cel` with a variant and renames it `xtg`; the registry gives it no Preferred-Value,
    // so its catalogue keeps the tag itself, and the header's range must be looked up as that same tag.
    const pageLanguages: OAuthRouterOptions['pageLanguages'] = { catalogues: { 'cel-gaulish': { signInTitle: 'Gaulish sign-in' }, de: GERMAN } };
    for (const header of ['cel-gaulish, de;q=0.5', 'CEL-Gaulish, de;q=0.5']) {
      const page = await loginPage({ pageLanguages }, header);
      expect(htmlTag(page), header).toBe('<html lang="cel-gaulish">');
      expect(page.text).toContain('<h1>Gaulish sign-in</h1>');
    }
  });

  it('which ranges of a long header are canonicalized depends on the header alone, not on what earlier requests sent', async () => {
    const pageLanguages: OAuthRouterOptions['pageLanguages'] = { catalogues: { iw: { signInTitle: 'כניסה' } } };
    // Sixteen ranges no request sent before, then `iw`: past the header's budget, looked up as it is (no `iw` catalogue).
    const longHeader = (run: string) => `${Array.from({ length: 16 }, (_, i) => `zz-${run}${i}`).join(', ')}, iw`;
    expect((await loginPage({ pageLanguages }, longHeader('a'))).headers['content-language']).toBe('en');
    // Another request sends `iw` alone (canonicalized to `he` and remembered): the same shape of header is answered alike.
    expect((await loginPage({ pageLanguages }, 'iw')).headers['content-language']).toBe('he');
    expect((await loginPage({ pageLanguages }, longHeader('b'))).headers['content-language']).toBe('en');
  });

  it('a deprecated tag Intl canonicalizes (iw, in, ji, mo) finds its catalogue as a range too, in any case, as the catalogue tag it renames', async () => {
    const catalogues = { iw: { signInTitle: 'כניסה' }, in: { signInTitle: 'Masuk' }, yi: { signInTitle: 'אַרײַנגיין' }, mo: { signInTitle: 'Conectare' }, de: GERMAN };
    const pageLanguages: OAuthRouterOptions['pageLanguages'] = { catalogues };
    // A catalogue keyed `iw` is `he`: the browser's `iw` (old Java and Android locales send it) finds it, as `he` does.
    for (const [header, tag] of [['iw', 'he'], ['IW-il', 'he'], ['he', 'he'], ['in-ID', 'id'], ['id', 'id'], ['ji', 'yi'], ['mo', 'ro'], ['ro-RO', 'ro']] as const) {
      const page = await loginPage({ pageLanguages }, `${header}, de;q=0.5`);
      expect(htmlTag(page), header).toBe(`<html lang="${tag}"${tag === 'he' || tag === 'yi' ? ' dir="rtl"' : ''}>`);
      expect(page.headers['content-language'], header).toBe(tag);
    }
    // q=0 refuses the language under either name.
    expect(htmlTag(await loginPage({ pageLanguages }, 'he;q=0, iw, de;q=0.5'))).toBe('<html lang="de">');
    expect(htmlTag(await loginPage({ pageLanguages }, 'iw;q=0, he, de;q=0.5'))).toBe('<html lang="de">');
    // A range Intl refuses (a singleton with nothing after it, an extlang) is looked up as it is, never a 500.
    expect(htmlTag(await loginPage({ pageLanguages }, 'iw-a, de;q=0.5'))).toBe('<html lang="de">');
    expect(htmlTag(await loginPage({ pageLanguages }, 'zh-cmn-Hans-CN, de;q=0.5'))).toBe('<html lang="de">');
  });

  it('the connected-applications page in a language no locale stands for (private use, grandfathered without a preferred value): the day as in English, no 500', async () => {
    for (const tag of ['x-klingon', 'i-default']) {
      const t = await createTestApp({ pageLanguages: { catalogues: { [tag]: { consentsTitle: 'Connected (custom)' } } } });
      const agent = request.agent(t.app);
      const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient));
      await agent.post('/oauth2/consent').type('form')
        .send({ csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'), decision: 'allow' });
      const page = await agent.get('/oauth2/consents').set('Accept-Language', tag);
      expect(page.status, tag).toBe(200);
      expect(htmlTag(page)).toBe(`<html lang="${tag}">`);
      expect(page.text).toMatch(/Allowed on <time datetime="[^"]+">\d{4}-\d{2}-\d{2}<\/time>/);
    }
  });

  it('a malformed or oversized Accept-Language is read for what it holds, never refused', async () => {
    const junk = `${'x'.repeat(3000)}, ;q=, de;q=abc, ${'fr;q=0.1,'.repeat(800)}de;q=0.9`;
    for (const header of ['de;q=2', 'de;q=0.5;q=', '-de', 'de--CH', junk]) {
      const page = await loginPage({ pageLanguages: LANGUAGES }, header);
      expect(page.status, header.slice(0, 40)).toBe(200);
      expect(['<html lang="en">', '<html lang="fr">', '<html lang="de">']).toContain(htmlTag(page));
    }
  });

  it('a range of thousands of subtags (a 16 KB header) still finds the next acceptable language', async () => {
    // What it costs is pinned without a clock in test/unit/accept-language-long-range.test.ts.
    const t = await createTestApp({ pageLanguages: LANGUAGES });
    const long = `zz-${Array.from({ length: 4900 }, () => 'ab').join('-')}`;
    const page = await request(t.app).get('/oauth2/authorize').set('Accept-Language', `${long}, de;q=0.5`);
    expect(page.status).toBe(400);
    expect(htmlTag(page)).toBe('<html lang="de">');
  });

  it('an unsupported language, no header, or * gets English, still with Content-Language and Vary', async () => {
    for (const header of ['pt-BR, ja;q=0.8', undefined, '*']) {
      const page = await loginPage({ pageLanguages: LANGUAGES }, header);
      expect(htmlTag(page), String(header)).toBe('<html lang="en">');
      expect(page.headers['content-language']).toBe('en');
      expect(page.headers.vary).toMatch(/\bAccept-Language\b/);
      expect(page.text).toContain('<h1>Sign in</h1>');
    }
  });

  it('without pageLanguages the page is as before: English, no Content-Language, no Vary on Accept-Language', async () => {
    const plain = await loginPage({}, 'de');
    expect(htmlTag(plain)).toBe('<html lang="en">');
    expect(plain.headers['content-language']).toBeUndefined();
    expect(plain.headers.vary ?? '').not.toMatch(/Accept-Language/);
    // The same English bytes as with catalogues and an English browser, but for the per-response nonce and CSRF token.
    const english = await loginPage({ pageLanguages: LANGUAGES }, 'en');
    const stable = (html: string): string => html.replace(/nonce="[^"]*"/, '').replace(/name="csrf_token" value="[^"]*"/, '').replace(/name="request_id" value="[^"]*"/, '');
    expect(stable(english.text)).toBe(stable(plain.text));
  });

  it('the exported ENGLISH_PAGE_MESSAGES cannot be edited in place: a catalogue built on it by Object.assign throws, and no router\'s English pages change', async () => {
    // The README points hosts to it as the list of messages. Written to (Object.assign(ENGLISH_PAGE_MESSAGES, …) for an
    // `en` catalogue), it reworded every router's English pages, those without pageLanguages too, past the checks a
    // catalogue gets (a consent title without {client}).
    expect(() => Object.assign(ENGLISH_PAGE_MESSAGES, { signInTitle: 'Log in', consentTitle: 'Continue?' })).toThrow(TypeError);
    const plain = await loginPage({}, 'en');
    expect(plain.text).toContain('<h1>Sign in</h1>');
  });

  it('the host\'s choose() wins over Accept-Language; an answer it does not offer is ignored', async () => {
    const choose = (req: { headers: Record<string, unknown> }) => (req.headers.cookie === 'lang=ar' ? 'ar' : req.headers.cookie === 'lang=xx' ? 'xx' : null);
    const options = { pageLanguages: { ...LANGUAGES, choose } };
    const store = createMemoryStore();
    const t = await createTestApp(options, store);
    const url = `/oauth2/authorize?${authorizeQuery(t.codeClient)}`;
    expect(htmlTag(await request(t.app).get(url).set('Accept-Language', 'de').set('Cookie', 'lang=ar'))).toBe('<html lang="ar" dir="rtl">');
    expect(htmlTag(await request(t.app).get(url).set('Accept-Language', 'de').set('Cookie', 'lang=xx'))).toBe('<html lang="de">');
    expect(htmlTag(await request(t.app).get(url).set('Accept-Language', 'de'))).toBe('<html lang="de">');
  });

  it('an async choose() (a profile read from a store) is waited for: its answer picks the page, on a GET and on a form\'s answer', async () => {
    const choose = async (req: { headers: Record<string, unknown> }) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return String(req.headers.cookie).includes('lang=ar') ? 'ar' : null;
    };
    const t = await createTestApp({ pageLanguages: { ...LANGUAGES, choose }, loginRateLimit: false });
    const url = `/oauth2/authorize?${authorizeQuery(t.codeClient)}`;
    const login = await request(t.app).get(url).set('Accept-Language', 'de').set('Cookie', 'lang=ar');
    expect(htmlTag(login)).toBe('<html lang="ar" dir="rtl">');
    expect(login.headers['content-language']).toBe('ar');
    expect(login.text).toContain('<h1>تسجيل الدخول</h1>');
    expect(htmlTag(await request(t.app).get(url).set('Accept-Language', 'de'))).toBe('<html lang="de">');
    // A failed sign-in's page (a POST, its form read first) is in the hook's language too.
    const agent = request.agent(t.app);
    const page = await agent.get(url).set('Cookie', 'lang=ar');
    const failed = await agent.post('/oauth2/login').set('Cookie', 'lang=ar').type('form').send({
      csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), username: USER.username, password: 'wrong',
    });
    expect(failed.status).toBe(400);
    expect(htmlTag(failed)).toBe('<html lang="ar" dir="rtl">');
  });

  it('an async choose() that rejects or never answers: the page from Accept-Language (no 5xx, no hang), logged once; no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };
    process.on('unhandledRejection', onUnhandled);
    try {
      for (const [choose, problem] of [
        [async () => { throw new Error('profile store down'); }, /pageLanguages\.choose rejected \(profile store down\)/],
        // Rejects after the page gave up on it: still handled.
        [() => new Promise<string>((_resolve, reject) => { setTimeout(reject, 1500, new Error('late')); }), /pageLanguages\.choose did not answer within 1000 ms/],
        [() => new Promise<string>(() => {}), /pageLanguages\.choose did not answer within 1000 ms/],
      ] as const) {
        const errors: string[] = [];
        const t = await createTestApp({ pageLanguages: { ...LANGUAGES, choose }, logger: { warn() {}, error: (message: string) => { errors.push(message); } } });
        const url = `/oauth2/authorize?${authorizeQuery(t.codeClient)}`;
        for (let i = 0; i < 2; i++) {
          const started = Date.now();
          const page = await request(t.app).get(url).set('Accept-Language', 'de');
          expect(page.status).toBe(200);
          expect(htmlTag(page)).toBe('<html lang="de">');
          expect(Date.now() - started).toBeLessThan(2500);
        }
        expect(errors).toHaveLength(1);
        expect(errors[0]).toMatch(problem);
      }
      await new Promise((resolve) => setTimeout(resolve, 1600));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  }, 20_000);

  it('an async choose() whose wait fails (the host\'s logger throws on its rejection): the router\'s own 500 page, once, never the host\'s error handler; no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };
    process.on('unhandledRejection', onUnhandled);
    try {
      const choose = async () => { throw new Error('profile store down'); };
      // Only the hook's log line fails: the error page's own log line is written.
      const logger = { warn() {}, error(message: string) { if (message.includes('choose')) throw new Error('log sink full'); } };
      const t = await createTestApp({ pageLanguages: { ...LANGUAGES, choose }, logger });
      const hostSaw: unknown[] = [];
      t.app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
        hostSaw.push(err);
        res.status(500).type('text').send(`host error page: ${String((err as Error).stack)}`);
      });
      const page = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`).set('Accept-Language', 'de');
      expect(page.status).toBe(500);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(htmlTag(page)).toBe('<html lang="de">');
      expect(page.text).not.toContain('log sink full');
      expect(hostSaw).toEqual([]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a page that fails to render after an async choose() answered: the router\'s own 500 page, never the host\'s error handler with the stack', async () => {
    // The failure stands for any throw while the page is written (here the sign-in form's cookie), which the wait moved
    // out of the handler's own call.
    const choose = async (req: express.Request) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      req.res!.cookie = () => { throw new Error('cookie jar broke'); };
      return 'de';
    };
    const t = await createTestApp({ pageLanguages: { ...LANGUAGES, choose } });
    const hostSaw: unknown[] = [];
    t.app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      hostSaw.push(err);
      res.status(500).type('text').send(`host error page: ${String((err as Error).stack)}`);
    });
    const page = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    expect(page.status).toBe(500);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(htmlTag(page)).toBe('<html lang="de">');
    expect(page.text).not.toContain('cookie jar broke');
    expect(hostSaw).toEqual([]);
  });

  it('choose() is asked only for a page: an answer that writes none (a code, an error or a prompt=none redirect, a sign-in\'s redirect) neither runs it nor waits for it', async () => {
    // Never answers for the requests under test (marked); the pages around them get a synchronous null.
    const asked: string[] = [];
    const choose = (req: { headers: Record<string, unknown>; originalUrl: string }) => {
      if (req.headers['x-under-test'] === undefined) return null;
      asked.push(req.originalUrl);
      return new Promise<string>(() => {});
    };
    const t = await createTestApp({ pageLanguages: { ...LANGUAGES, choose }, loginRateLimit: false });
    const agent = request.agent(t.app);
    const url = `/oauth2/authorize?${authorizeQuery(t.codeClient, { state: 'lazy' })}`;
    // Not signed in, prompt=none: login_required, at once.
    const silent = await agent.get(`${url}&prompt=none`).set('X-Under-Test', '1');
    expect(silent.status).toBe(302);
    expect(new URL(silent.headers.location!).searchParams.get('error')).toBe('login_required');
    // A request the integration got wrong (its redirect_uri checked): the error redirect.
    const refused = await agent.get(`${url}&code_challenge_method=plain&code_challenge=x`).set('X-Under-Test', '1');
    expect(new URL(refused.headers.location!).searchParams.has('error')).toBe(true);
    // The sign-in's redirect back to the authorization request, and the consent form's Allow: a code.
    const login = await agent.get(url);
    const signedIn = await agent.post('/oauth2/login').set('X-Under-Test', '1').type('form').send({
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'), username: USER.username, password: USER.password,
    });
    expect(signedIn.status).toBe(303);
    const consent = (await agent.get(signedIn.headers.location!)).text;
    const allowed = await agent.post('/oauth2/consent').set('X-Under-Test', '1').type('form')
      .send({ csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'), decision: 'allow' });
    expect(new URL(allowed.headers.location!).searchParams.get('code')).toBeTruthy();
    // A remembered consent, and prompt=none signed in: a code from the GET itself.
    const remembered = await agent.get(url).set('X-Under-Test', '1');
    expect(remembered.status).toBe(302);
    expect(new URL(remembered.headers.location!).searchParams.get('code')).toBeTruthy();
    expect(new URL((await agent.get(`${url}&prompt=none`).set('X-Under-Test', '1')).headers.location!).searchParams.get('code')).toBeTruthy();
    expect(asked).toEqual([]);
  });

  it('choose() cannot reorder the languages negotiation reads: a page for a browser without Accept-Language stays English', async () => {
    // `available` was the router's own list: sorted in place by a hook, it put `ar` first, the answer to no header.
    const choose = (_req: unknown, available: readonly string[]) => { (available as string[]).sort(); return null; };
    const t = await createTestApp({ pageLanguages: { ...LANGUAGES, choose } });
    const url = `/oauth2/authorize?${authorizeQuery(t.codeClient)}`;
    for (let i = 0; i < 2; i++) expect(htmlTag(await request(t.app).get(url))).toBe('<html lang="en">');
  });

  it('a translation cannot inject HTML, and a name in it is escaped and isolated as in English', async () => {
    const evil: PageCatalogue = {
      signInTitle: '<script>alert(1)</script>',
      signInIntroToClient: '<img src=x onerror=alert(1)> {product} {client} {client}',
      usernameLabel: 'Name</label><input name="stolen">',
    };
    const name = '<b onmouseover=alert(1)>Evil</b> {product} مرحبا';
    const page = await loginPage({ pageLanguages: { catalogues: { de: evil } } }, 'de', name);
    expect(page.text).not.toMatch(/<script|<img|<b |<input name="stolen"/);
    expect(page.text).toContain('<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>');
    expect(page.text).toContain('<title>&lt;script&gt;alert(1)&lt;/script&gt; – ');
    const escapedName = '&lt;b onmouseover=alert(1)&gt;Evil&lt;/b&gt; {product} مرحبا';
    // The name's own "{product}" is not replaced again: values go in in one pass.
    expect(page.text).toContain(`&lt;img src=x onerror=alert(1)&gt; <strong>Signature API</strong> <strong><bdi>${escapedName}</bdi></strong> <strong><bdi>${escapedName}</bdi></strong>`);
  });

  it('a catalogue with a placeholder its message does not take, or an unknown message, is refused at start-up', async () => {
    await expect(createTestApp({ pageLanguages: { catalogues: { de: { signInTitle: 'Hallo {user}' } } } })).rejects.toThrow(OptionsError);
    await expect(createTestApp({ pageLanguages: { catalogues: { de: { signInTitel: 'x' } as PageCatalogue } } })).rejects.toThrow(/signInTitel/);
    await expect(createTestApp({ pageLanguages: { catalogues: { 'not a tag!': {} } } })).rejects.toThrow(/BCP 47/);
    await expect(createTestApp({ languages: {} } as Partial<OAuthRouterOptions>)).rejects.toThrow(/did you mean "pageLanguages"/);
  });

  it('a catalogue translating a scope outside a non-empty scopes option (a typo) is refused at start-up, in any catalogue, en too', async () => {
    const scopes = { 'envelopes:read': 'Read your envelopes', 'envelopes:sign': 'Sign envelopes' };
    for (const tag of ['de', 'en']) {
      await expect(createTestApp({ scopes, pageLanguages: { catalogues: { [tag]: { scopes: { 'envelopes:raed': 'Ihre Umschläge lesen' } } } } }), tag)
        .rejects.toThrow(new OptionsError(`pageLanguages.catalogues.${tag}.scopes.envelopes:raed`,
          'is not a key of the scopes option (envelopes:read, envelopes:sign): the pages would never show its sentence'));
    }
    // Without a vocabulary any scope may be granted, so any may be translated.
    await expect(createTestApp({ pageLanguages: { catalogues: { de: { scopes: { 'reports:read': 'Berichte lesen' } } } } })).resolves.toBeDefined();
    await expect(createTestApp({ scopes, pageLanguages: { catalogues: { de: { scopes: { 'envelopes:sign': 'Umschläge signieren' } } } } })).resolves.toBeDefined();
  });

  it('a consent page translation that leaves out the integration, the return address or the signed-in user is refused at start-up (RFC 6819 §4.2.2)', async () => {
    for (const [message, text, missing] of [
      ['consentTitle', 'Erlauben?', '{client}'],
      // The consent page's title when it is shown again after a click on an expired copy: the same page, still asking.
      ['consentErrorTitle', 'Fehler: Erlauben?', '{client}'],
      ['consentWants', 'Eine Anwendung möchte auf Ihr {product}-Konto zugreifen.', '{client}'],
      ['consentAfterChoice', 'Danach geht es zurück zu {client}.', '{origin}'],
      ['signedInAs', 'Angemeldet.', '{user}'],
    ] as const) {
      await expect(createTestApp({ pageLanguages: { catalogues: { de: { [message]: text } } } }), message)
        .rejects.toThrow(`option "pageLanguages.catalogues.de.${message}" must show ${missing}`);
    }
    await expect(createTestApp({ pageLanguages: { catalogues: { de: GERMAN } } })).resolves.toBeDefined();
  });
});

describe('RFC 9110 §12.5.4: every page follows the language', () => {
  it('a failed sign-in, the consent page, the connected-applications page and an error page in German', async () => {
    const t = await createTestApp({ pageLanguages: LANGUAGES, scopes: { 'envelopes:read': 'Read your envelopes' } });
    const agent = request.agent(t.app);
    const query = authorizeQuery(t.codeClient, { scope: 'envelopes:read' });
    const login = await agent.get(`/oauth2/authorize?${query}`).set('Accept-Language', 'de');
    const form = { csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id') };
    const failed = await agent.post('/oauth2/login').set('Accept-Language', 'de').type('form').send({ ...form, username: USER.username, password: 'wrong' });
    expect(failed.status).toBe(400);
    expect(failed.text).toContain('<p class="error" role="alert" id="login-error">Benutzername oder Passwort ist falsch.</p>');
    expect(failed.headers['content-language']).toBe('de');
    const posted = await agent.post('/oauth2/login').set('Accept-Language', 'de').type('form').send({ ...form, username: USER.username, password: USER.password });
    expect(posted.status).toBe(303);
    const consent = await agent.get(posted.headers.location!).set('Accept-Language', 'de');
    expect(consent.text).toContain('<title>\u2068Acme CRM\u2069 erlauben? – ');
    expect(consent.text).toContain('<h1><bdi>Acme CRM</bdi> erlauben?</h1>');
    expect(consent.text).toContain('<li>Ihre Umschläge lesen</li>');
    expect(consent.text).toContain(`Angemeldet als <bdi>${USER.displayName}</bdi>.`);
    expect(consent.text).toContain('>Verbundene Anwendungen</a>');
    const decided = await agent.post('/oauth2/consent').type('form').send({
      csrf_token: hiddenField(consent.text, 'csrf_token'), request_id: hiddenField(consent.text, 'request_id'), decision: 'allow',
    });
    expect(decided.status).toBe(303);
    const consents = await agent.get('/oauth2/consents').set('Accept-Language', 'de');
    expect(consents.text).toContain('<h1>Verbundene Anwendungen</h1>');
    // The day in German (Intl), the machine-readable date unchanged.
    expect(consents.text).toMatch(/Allowed on <time datetime="[^"]+">\d{1,2}\. \p{L}+ \d{4}<\/time>/u);
    expect(consents.text).toContain('<li>Ihre Umschläge lesen</li>');
    // A withdraw without the form's token: the translated message.
    const expired = await agent.post('/oauth2/consents/withdraw').set('Accept-Language', 'de').type('form').send({ csrf_token: 'x', client_id: 'y' });
    expect(expired.status).toBe(403);
    expect(expired.text).toContain('<h1>Diese Anfrage kann nicht abgeschlossen werden</h1>');
    expect(expired.text).toContain('<p class="error" role="alert">Das Formular ist abgelaufen. Laden Sie die Seite neu.</p>');
  });

  it('a developer\'s English description on a German error page is marked lang="en"', async () => {
    const t = await createTestApp({ pageLanguages: LANGUAGES });
    const page = await request(t.app).get('/oauth2/authorize?response_type=code&client_id=nobody').set('Accept-Language', 'de');
    expect(page.status).toBe(400);
    expect(htmlTag(page)).toBe('<html lang="de">');
    expect(page.text).toMatch(/<code>invalid_client<\/code>: <span lang="en">[^<]+<\/span>/);
  });

  it('a counted message is the host\'s function of the number', async () => {
    const t = await createTestApp({ pageLanguages: LANGUAGES, loginRateLimit: { max: 1, windowSeconds: 600 } });
    const agent = request.agent(t.app);
    const login = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    const form = { csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id') };
    let page: request.Response | undefined;
    for (let i = 0; i < 3; i++) {
      page = await agent.post('/oauth2/login').set('Accept-Language', 'de').type('form').send({ ...form, username: USER.username, password: 'wrong' });
      if (page.status === 429) break;
    }
    expect(page!.status).toBe(429);
    expect(page!.text).toMatch(/Zu viele Versuche\. In (einer Minute|\d+ Minuten) erneut\./);
  });

  it('the JSON endpoints are not affected', async () => {
    const t = await createTestApp({ pageLanguages: LANGUAGES });
    const token = await request(t.app).post('/oauth2/token').set('Accept-Language', 'de').type('form').send({ grant_type: 'client_credentials' });
    expect(token.headers['content-language']).toBeUndefined();
    expect(token.headers.vary ?? '').not.toMatch(/Accept-Language/);
  });
});

describe('RFC 6749 §3.3: a scope is shown by its own sentence, whatever its name', () => {
  // scope-token allows `constructor` or `toString`: a lookup by plain indexing found Object.prototype's function there
  // and the consent page failed (500 behind a redirect), in English for a scope without a sentence, and in another
  // language for one with an English sentence but none in the catalogue.
  it('scopes named like Object.prototype members get their sentence, or their name, on the consent and connected-applications pages', async () => {
    const store = createMemoryStore();
    const t = await createTestApp({
      // No `scopes` option: a server with a vocabulary grants no scope outside it, and every scope in it has a sentence;
      // without one, `toString` is granted with none. `constructor`'s English sentence comes from an `en` catalogue.
      pageLanguages: { catalogues: { de: { scopes: { 'envelopes:read': 'Ihre Umschläge lesen' } }, en: { scopes: { constructor: 'Build things' } } } },
      // Each language's pass sees the consent page, not the first pass's remembered answer.
      rememberConsent: false,
    }, store);
    const { client, clientSecret } = await registerClient(store, {
      name: 'Proto CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI], allowedScopes: ['constructor', 'toString'],
    });
    for (const language of ['de', 'en']) {
      const agent = request.agent(t.app);
      const query = authorizeQuery({ clientId: client.clientId, clientSecret }, { scope: 'constructor toString' });
      const login = await agent.get(`/oauth2/authorize?${query}`).set('Accept-Language', language);
      const posted = await agent.post('/oauth2/login').type('form').send({
        csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'), username: USER.username, password: USER.password,
      });
      const consent = await agent.get(posted.headers.location!).set('Accept-Language', language);
      expect(consent.status, language).toBe(200);
      expect(consent.text).toContain('<ul><li>Build things</li><li>toString</li></ul>');
      const decided = await agent.post('/oauth2/consent').type('form').send({
        csrf_token: hiddenField(consent.text, 'csrf_token'), request_id: hiddenField(consent.text, 'request_id'), decision: 'allow',
      });
      expect(decided.status).toBe(303);
      const consents = await agent.get('/oauth2/consents').set('Accept-Language', language);
      expect(consents.status, language).toBe(200);
      expect(consents.text).toContain('<ul><li>Build things</li><li>toString</li></ul>');
    }
  });
});

describe('RFC 9110 §12.5.4: the 409, sign-in loop, 405 and unreadable-form pages follow the language too', () => {
  /** The error page's message for the user, in German, not marked as English. */
  function expectGermanError(page: { status: number; text: string }, status: number, text: string): void {
    expect(page.status).toBe(status);
    expect(page.text).toContain('<html lang="de">');
    expect(page.text).toContain(`<p class="error" role="alert">${text}</p>`);
    expect(page.text).not.toContain('lang="en"');
  }

  it('a Deny of a request already allowed: the 409 page in German', async () => {
    const t = await createTestApp({ pageLanguages: { catalogues: { de: GERMAN_ERRORS } } });
    const agent = request.agent(t.app);
    const login = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    const form = { csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id') };
    const posted = await agent.post('/oauth2/login').type('form').send({ ...form, username: USER.username, password: USER.password });
    const consent = await agent.get(posted.headers.location!);
    const fields = { csrf_token: hiddenField(consent.text, 'csrf_token'), request_id: hiddenField(consent.text, 'request_id') };
    expect((await agent.post('/oauth2/consent').type('form').send({ ...fields, decision: 'allow' })).status).toBe(303);
    const denied = await agent.post('/oauth2/consent').set('Accept-Language', 'de').type('form').send({ ...fields, decision: 'deny' });
    expectGermanError(denied, 409, GERMAN_ERRORS.alreadyAllowedWithdraw as string);
  });

  it('back from the host\'s login still signed out: the loop page in German (the log line stays English)', async () => {
    const store = createMemoryStore();
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const logged: string[] = [];
    const oauth = createOAuthRouter(store, hostSessionUserAuth(), {
      issuer: 'http://auth.test', pageLanguages: { catalogues: { de: GERMAN_ERRORS } },
      logger: { warn: () => {}, error: (line: string) => { logged.push(line); } },
    });
    const app = express().use(oauth.router);
    const agent = request.agent(app);
    const url = `/oauth2/authorize?${authorizeQuery({ clientId: client.clientId, clientSecret: '' })}`;
    expect((await agent.get(url).set('Accept-Language', 'de')).status).toBe(303);
    expectGermanError(await agent.get(url).set('Accept-Language', 'de'), 403, GERMAN_ERRORS.hostSignInLoop as string);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^express-oauth-router: a browser came back from loginUrl still signed out/);
  });

  it('the authorization endpoint\'s page when the store fails (503 out, 500 broken): in German, and in English as before without pageLanguages', async () => {
    const catalogue: PageCatalogue = {
      ...GERMAN_ERRORS,
      authorizationServerUnavailable: 'Der Dienst ist vorübergehend nicht erreichbar. Versuchen Sie es später erneut.',
      authorizationServerFailed: 'Auf dem Server ist ein unerwarteter Fehler aufgetreten.',
    };
    for (const [thrown, status, german, english] of [
      [new StoreUnavailableError('clients out for the test'), 503, catalogue.authorizationServerUnavailable, 'the authorization server is temporarily unavailable'],
      [new Error('clients table dropped for the test'), 500, catalogue.authorizationServerFailed, 'the server encountered an unexpected condition'],
    ] as const) {
      const failing = (pageLanguages?: OAuthRouterOptions['pageLanguages']) => {
        const memory = createMemoryStore();
        const store = { ...memory, clients: { ...memory.clients, findClient: async () => { throw thrown; } } };
        return createTestApp({ logger: { warn() {}, error() {} }, ...(pageLanguages ? { pageLanguages } : {}) }, store);
      };
      const t = await failing({ catalogues: { de: catalogue } });
      const url = `/oauth2/authorize?${authorizeQuery(t.codeClient)}`;
      expectGermanError(await request(t.app).get(url).set('Accept-Language', 'de'), status, german as string);
      const plain = await failing();
      const page = await request(plain.app).get(`/oauth2/authorize?${authorizeQuery(plain.codeClient)}`).set('Accept-Language', 'de');
      expect(page.status).toBe(status);
      expect(page.text).toContain(`<p class="error" role="alert">${english}</p>`);
      expect(page.headers['content-language']).toBeUndefined();
    }
  });

  it('a wrong method on a page address: both 405 pages in German', async () => {
    const t = await createTestApp({ pageLanguages: { catalogues: { de: GERMAN_ERRORS } } });
    expectGermanError(await request(t.app).get('/oauth2/consent').set('Accept-Language', 'de'), 405, GERMAN_ERRORS.formCannotBeOpened as string);
    expectGermanError(await request(t.app).put('/oauth2/consents').set('Accept-Language', 'de'), 405, GERMAN_ERRORS.openedByLink as string);
  });

  it('a form that cannot be read (408, 413, 415) and a request that cannot be read (400): the pages in German', async () => {
    const t = await createTestApp({ pageLanguages: { catalogues: { de: GERMAN_ERRORS } }, bodyTimeout: 1, loginRateLimit: false });
    const server = await listen(t.app);
    try {
      const de = 'Accept-Language: de';
      const slow = await rawRequest(server.port, ['POST /oauth2/login HTTP/1.1', 'Host: auth.test', de,
        'Content-Type: application/x-www-form-urlencoded', 'Content-Length: 100'].join('\r\n'), 'csrf_token=abc', { keepOpen: true });
      expectGermanError({ status: slow.status, text: slow.body }, 408, GERMAN_ERRORS.formTooSlow as string);
      const large = await request(t.app).post('/oauth2/login').set('Accept-Language', 'de').type('form').send(`username=${'a'.repeat(20 * 1024)}`);
      expectGermanError(large, 413, GERMAN_ERRORS.formTooLarge as string);
      const utf16 = await request(t.app).post('/oauth2/login').set('Accept-Language', 'de')
        .set('Content-Type', 'application/x-www-form-urlencoded; charset=utf-16').send('a=b');
      expectGermanError(utf16, 415, GERMAN_ERRORS.formEncodingUnsupported as string);
    } finally {
      await server.close();
    }
    // Two Host lines where the host picks the issuer (RFC 9112 §3.2): refused as a request the page cannot read.
    const hosts = await createTestApp({ pageLanguages: { catalogues: { de: GERMAN_ERRORS } }, legacy: { issuer: 'http://legacy-auth.test' } });
    const both = await listen(hosts.app);
    try {
      const twoHosts = await rawRequest(both.port, [`GET /oauth2/authorize?${authorizeQuery(hosts.codeClient)} HTTP/1.1`, 'Host: auth.test',
        'Host: legacy-auth.test', 'Accept-Language: de', 'Connection: close'].join('\r\n'));
      expectGermanError({ status: twoHosts.status, text: twoHosts.body }, 400, GERMAN_ERRORS.requestUnreadable as string);
    } finally {
      await both.close();
    }
  });
});

describe('RFC 9110 §12.5.4: the notice of a click on an expired consent page follows the language', () => {
  it('an Allow or a Deny from a page whose session was replaced: the German notice, in an alert, and the German error title', async () => {
    const t = await createTestApp({ pageLanguages: { catalogues: { de: GERMAN_ERRORS } } });
    const consentOf = async (agent: ReturnType<typeof request.agent>, state: string): Promise<string> => {
      const login = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { state })}`);
      const posted = await agent.post('/oauth2/login').type('form').send({
        csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'), username: USER.username, password: USER.password,
      });
      return (await agent.get(posted.headers.location!)).text;
    };
    // A Deny from such a page is answered as its Allow: the same notice, nothing sent.
    for (const decision of ['allow', 'deny']) {
      const old = await consentOf(request.agent(t.app), 'old');
      const browser = request.agent(t.app);
      await consentOf(browser, 'new');
      const late = await browser.post('/oauth2/consent').set('Accept-Language', 'de').type('form').send({
        csrf_token: hiddenField(old, 'csrf_token'), request_id: hiddenField(old, 'request_id'), resume: hiddenField(old, 'resume'), decision,
      });
      const page = await browser.get(late.headers.location!).set('Accept-Language', 'de');
      expect(page.status, decision).toBe(200);
      expect(htmlTag(page)).toBe('<html lang="de">');
      expect(page.text).toContain('<title>Fehler: \u2068Acme CRM\u2069 erlauben? – ');
      expect(page.text).toContain('<p class="error" role="alert">Diese Seite war abgelaufen, daher wurde nichts an <bdi>Acme CRM</bdi> gesendet. Wählen Sie erneut.</p>');
    }
  });
});

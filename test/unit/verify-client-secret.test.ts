// verifyClientSecret: SHA-256 for generated secrets, scrypt for imported ones, and the cache of scrypt matches (RFC 6749 §2.3.1).
import { describe, expect, it } from 'vitest';
import { verifyClientSecret } from '../../src/crypto/verify-client-secret.js';
import { VerificationCache } from '../../src/crypto/verification-cache.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import { hashSecretScrypt, parseScryptHash, SCRYPT_PARAMS } from '../../src/crypto/scrypt-secret.js';
import { secretHashFormat } from '../../src/crypto/secret-hash-format.js';
import bcrypt from 'bcryptjs';

describe('verifyClientSecret', () => {
  it('checks a generated secret against its SHA-256, as before', async () => {
    const hash = hashSecret('generated-256-bit-secret');
    expect(await verifyClientSecret(hash, 'generated-256-bit-secret')).toBe(true);
    expect(await verifyClientSecret(hash, 'generated-256-bit-secreT')).toBe(false);
  });

  it('checks an imported secret against its scrypt hash, right and wrong, every time', async () => {
    const hash = await hashSecretScrypt('weak');
    expect(hash.startsWith(`$scrypt$ln=${SCRYPT_PARAMS.ln},r=${SCRYPT_PARAMS.r},p=${SCRYPT_PARAMS.p}$`)).toBe(true);
    expect(await verifyClientSecret(hash, 'weak')).toBe(true);
    expect(await verifyClientSecret(hash, 'weak')).toBe(true);
    expect(await verifyClientSecret(hash, 'Weak')).toBe(false);
    expect(await verifyClientSecret(hash, 'weak ')).toBe(false);
  });

  it('does not serve a changed stored hash from the cache: after a rotation the old secret fails', async () => {
    const before = await hashSecretScrypt('old secret');
    expect(await verifyClientSecret(before, 'old secret')).toBe(true); // now cached for `before`
    const after = await hashSecretScrypt('new secret');
    expect(await verifyClientSecret(after, 'old secret')).toBe(false);
    expect(await verifyClientSecret(after, 'new secret')).toBe(true);
    // A SHA-256 stored hash for another secret is not answered from the scrypt cache either.
    expect(await verifyClientSecret(hashSecret('new secret'), 'old secret')).toBe(false);
  });

  it('accepts the same secret under a re-made hash (new salt) only by checking it', async () => {
    const first = await hashSecretScrypt('same');
    const second = await hashSecretScrypt('same');
    expect(second).not.toBe(first);
    expect(await Promise.all([verifyClientSecret(first, 'same'), verifyClientSecret(second, 'same')])).toEqual([true, true]);
  });

  it('answers concurrent checks of the same credentials alike', async () => {
    const hash = await hashSecretScrypt('burst');
    const answers = await Promise.all([...Array(6).keys()].map((i) => verifyClientSecret(hash, i % 2 === 0 ? 'burst' : 'bust')));
    expect(answers).toEqual([true, false, true, false, true, false]);
  });

  it('checks an imported bcrypt hash ($2a$, $2b$, $2y$) in the worker, right and wrong, concurrently', async () => {
    const b = bcrypt.hashSync('legacy pass', 10);
    const a = b.replace(/^\$2b\$/, '$2a$');
    const y = bcrypt.hashSync('other pass', 4).replace(/^\$2b\$/, '$2y$');
    expect(await Promise.all([
      verifyClientSecret(b, 'legacy pass'), verifyClientSecret(b, 'legacy pasS'), verifyClientSecret(a, 'legacy pass'),
      verifyClientSecret(y, 'other pass'), verifyClientSecret(y, 'legacy pass'),
    ])).toEqual([true, false, true, true, false]);
    expect(await verifyClientSecret(b, 'legacy pass')).toBe(true);
  });

  it('lets nobody in with a stored hash it cannot read', async () => {
    expect(await verifyClientSecret('$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo', 'x')).toBe(false);
    expect(await verifyClientSecret(bcrypt.hashSync('x', 4).replace('$04$', '$13$'), 'x')).toBe(false);
    expect(await verifyClientSecret('$scrypt$ln=30,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'x')).toBe(false);
    expect(await verifyClientSecret('', '')).toBe(false);
  });
});

describe('VerificationCache', () => {
  it('keys an entry by the stored hash and the secret, so a changed hash or secret is a miss', () => {
    const cache = new VerificationCache(10);
    cache.add(cache.key('hash-A', 'secret'));
    expect(cache.has(cache.key('hash-A', 'secret'))).toBe(true);
    expect(cache.has(cache.key('hash-B', 'secret'))).toBe(false);
    expect(cache.has(cache.key('hash-A', 'secret2'))).toBe(false);
  });

  it('never keeps the secret: the key holds an HMAC under a per-process random key', () => {
    const one = new VerificationCache();
    const two = new VerificationCache();
    const key = one.key('hash-A', 'correct horse battery staple');
    expect(key).not.toContain('correct horse');
    expect(key).not.toContain('hash-A');
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(two.key('hash-A', 'correct horse battery staple')).not.toBe(key);
  });

  it('tells a hash and a secret apart where they meet: ("ab", "c") is not ("a", "bc")', () => {
    const cache = new VerificationCache();
    expect(cache.key('ab', 'c')).not.toBe(cache.key('a', 'bc'));
  });

  it('remembers a match for every integration of a registry past 10,000, so none pays a slow hash again', () => {
    // At 20,000 imported integrations a 10,000-entry cache made half the token requests pay a scrypt (~67 ms each).
    const cache = new VerificationCache();
    const keys = Array.from({ length: 20_000 }, (_, i) => cache.key(`$scrypt$hash-${i}`, `secret-${i}`));
    for (const key of keys) cache.add(key);
    expect(keys.every((key) => cache.has(key))).toBe(true);
  });

  it('is bounded: past maxEntries the oldest entry goes', () => {
    const cache = new VerificationCache(3);
    for (const secret of ['a', 'b', 'c', 'd']) cache.add(cache.key('h', secret));
    expect(cache.size).toBe(3);
    expect(cache.has(cache.key('h', 'a'))).toBe(false);
    expect(cache.has(cache.key('h', 'd'))).toBe(true);
  });
});

describe('stored hash formats', () => {
  it('recognises SHA-256 base64url, scrypt PHC strings and bcrypt up to cost 12, and nothing else', async () => {
    expect(secretHashFormat(hashSecret('x'))).toBe('sha256');
    expect(secretHashFormat(await hashSecretScrypt('x'))).toBe('scrypt');
    expect(secretHashFormat(bcrypt.hashSync('x', 4))).toBe('bcrypt');
    expect(secretHashFormat(bcrypt.hashSync('x', 4).replace('$04$', '$13$'))).toBeNull();
    expect(secretHashFormat('$2x$10$abcdefghijklmnopqrstuuabcdefghijklmnopqrstuvwxyz01234')).toBeNull();
    expect(secretHashFormat('plaintext')).toBeNull();
    expect(secretHashFormat(`${hashSecret('x')}=`)).toBeNull();
  });

  it('refuses scrypt parameters beyond 8 times our cost, or a short salt', () => {
    const salt = 'AAAAAAAAAAAAAAAAAAAAAA';
    const hash = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    expect(parseScryptHash(`$scrypt$ln=17,r=8,p=2$${salt}$${hash}`)).not.toBeNull();
    expect(parseScryptHash(`$scrypt$ln=18,r=8,p=2$${salt}$${hash}`)).toBeNull();
    expect(parseScryptHash(`$scrypt$ln=14,r=8,p=1$AAAAAAAAAA$${hash}`)).toBeNull();
    expect(parseScryptHash(`$scrypt$ln=0,r=8,p=1$${salt}$${hash}`)).toBeNull();
  });
});

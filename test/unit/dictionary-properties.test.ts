// toDictionaryProperties changes how V8 stores an object's properties, never what the object holds.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { toDictionaryProperties } from '../../src/http/dictionary-properties.js';

/** Every own property, in order, with its descriptor: what any code could observe of the object itself. */
function snapshot(object: object): [PropertyKey, PropertyDescriptor][] {
  return Reflect.ownKeys(object).map((key) => [key, Object.getOwnPropertyDescriptor(object, key)!]);
}

const BUILT = resolve(import.meta.dirname, '../../dist/http/dictionary-properties.js');

describe('toDictionaryProperties (the per-request objects Express hands the package)', () => {
  it('leaves every own property, its value, its attributes and the key order as they were, for any object', () => {
    const tag = Symbol('host');
    fc.assert(fc.property(fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'hidden')), fc.jsonValue()), fc.boolean(), (entries, withSymbol) => {
      const proto = { inherited: true };
      const object = Object.create(proto) as Record<PropertyKey, unknown>;
      // Own data properties, defined rather than assigned: a "__proto__" key stays a key, not a prototype change.
      for (const [key, value] of Object.entries(entries)) Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
      if (withSymbol) object[tag] = 'kept';
      Object.defineProperty(object, 'hidden', { value: 1, enumerable: false, writable: false, configurable: true });
      const before = snapshot(object);
      toDictionaryProperties(object);
      expect(snapshot(object)).toEqual(before);
      expect(Object.getPrototypeOf(object)).toBe(proto);
    }));
  });

  it('leaves an object that cannot be extended alone, without throwing', () => {
    const frozen = Object.freeze(Object.assign(Object.create(null) as object, { a: 1 }));
    expect(() => toDictionaryProperties(frozen)).not.toThrow();
    expect(snapshot(frozen)).toEqual([['a', { value: 1, writable: false, enumerable: true, configurable: false }]]);
  });

  it('never reaches through a Proxy: none of its traps runs', () => {
    const calls: string[] = [];
    const record = (name: string) => (...args: unknown[]) => { calls.push(name); return Reflect[name as 'get'](...(args as [object, PropertyKey])); };
    const proxy = new Proxy(Object.create({}), {
      set: record('set'), defineProperty: record('defineProperty'), deleteProperty: record('deleteProperty'), get: record('get'),
      getOwnPropertyDescriptor: record('getOwnPropertyDescriptor'), has: record('has'),
    });
    toDictionaryProperties(proxy as object);
    expect(calls).toEqual([]);
  });

  it('puts an Express request and response in dictionary mode, and leaves objects still on Node\'s prototypes in fast mode (V8 natives, built package)', () => {
    const script = `
      import express from 'express';
      import { toDictionaryProperties } from ${JSON.stringify(BUILT)};
      const app = express();
      const seen = {};
      app.get('/', (req, res) => {
        seen.before = [%HasFastProperties(req), %HasFastProperties(res)];
        toDictionaryProperties(req); toDictionaryProperties(res);
        seen.after = [%HasFastProperties(req), %HasFastProperties(res)];
        res.end('ok');
      });
      const http = await import('node:http');
      const plain = http.createServer((req, res) => {
        toDictionaryProperties(req); toDictionaryProperties(res);
        seen.plain = [%HasFastProperties(req), %HasFastProperties(res)];
        res.end('ok');
      });
      for (const server of [app.listen(0), plain.listen(0)]) {
        if (!server.listening) await new Promise((r) => server.once('listening', r));
        await (await fetch('http://127.0.0.1:' + server.address().port + '/')).text();
        server.close();
        server.closeAllConnections();
      }
      console.log(JSON.stringify(seen));
    `;
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
      cwd: resolve(import.meta.dirname, '../..'), encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ before: [true, true], after: [false, false], plain: [true, true] });
  });
});

// Every named type the public declarations hand a host is exported by an entry point, so a host can name it.
import { describe, expect, it } from 'vitest';
import { ROOT } from './packed-host.js';
import { entryDeclarations, unexportedTypes } from './unexported-types.js';

describe("the built declarations (dist, as npm test builds it first)", () => {
  it('reach no named type that no entry point exports (a host library emitting declarations fails on one: TS2742, TS4023)', () => {
    // Every subpath of the exports map, so a new entry point is walked without a change here.
    expect(entryDeclarations(ROOT).length).toBeGreaterThanOrEqual(8);
    const leaks = unexportedTypes(ROOT).map(({ type, from }) => `${type}, named by ${from.join(', ')}`);
    expect(leaks).toEqual([]);
  }, 60_000);
});

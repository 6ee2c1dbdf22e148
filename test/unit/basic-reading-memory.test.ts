// SPEC §4.2 and RFC 6749 §2.3.1 read a Basic header holding `%` or `+` two ways: the reading that worked is tried first.
import { describe, expect, it } from 'vitest';
import { BasicReadingMemory } from '../../src/checks/basic-reading-memory.js';

describe('which reading of a Basic header authenticated each integration', () => {
  it('tries the as-sent reading first for an integration that last authenticated that way, and stops when it did not', () => {
    const memory = new BasicReadingMemory();
    expect(memory.readAsSent('crm')).toBe(false);
    memory.remember('crm', true);
    expect(memory.readAsSent('crm')).toBe(true);
    memory.remember('crm', false);
    expect(memory.readAsSent('crm')).toBe(false);
  });

  it('remembers every integration of a registry past 10,000, so none pays a failed slow check of the other reading again', () => {
    const memory = new BasicReadingMemory();
    const ids = Array.from({ length: 20_000 }, (_, i) => `imported-${i}`);
    for (const id of ids) memory.remember(id, true);
    expect(ids.every((id) => memory.readAsSent(id))).toBe(true);
  });

  it('is bounded: past maxEntries the integration remembered longest ago goes, not all of them', () => {
    const memory = new BasicReadingMemory(3);
    for (const id of ['a', 'b', 'c', 'd']) memory.remember(id, true);
    expect(['a', 'b', 'c', 'd'].map((id) => memory.readAsSent(id))).toEqual([false, true, true, true]);
  });
});

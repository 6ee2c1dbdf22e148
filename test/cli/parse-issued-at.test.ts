// --issued-at (SPEC §9): a UTC calendar date, not after today.
import { describe, expect, it } from 'vitest';
import { parseIssuedAt } from '../../src/cli/parse-issued-at.js';

const NOW = new Date('2025-03-10T08:30:00Z');

describe('parseIssuedAt', () => {
  it('reads a date as UTC midnight, today included', () => {
    expect(parseIssuedAt('2021-01-14', NOW).toISOString()).toBe('2021-01-14T00:00:00.000Z');
    expect(parseIssuedAt('2025-03-10', NOW).toISOString()).toBe('2025-03-10T00:00:00.000Z');
  });

  it.each(['2025-03-11', '2099-01-01'])('refuses %s, a date in the future, as a usage error (exit 2)', (value) => {
    expect(() => parseIssuedAt(value, NOW)).toThrow(expect.objectContaining({
      exitCode: 2,
      code: 'usage_error',
      message: expect.stringMatching(new RegExp(`^--issued-at ${value} is in the future`)),
    }));
  });

  it('judges "today" in UTC: just after midnight UTC, that day is accepted', () => {
    expect(parseIssuedAt('2025-03-11', new Date('2025-03-11T00:00:00Z')).toISOString()).toBe('2025-03-11T00:00:00.000Z');
  });
});

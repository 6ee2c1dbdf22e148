// Test runner settings: every suite talks to real HTTP servers and real databases, so timeouts are generous.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A shell's NODE_ENV=production would make the router warn and refuse where the cases do not expect it; the
    // production cases set it themselves (vi.stubEnv). Child processes the cases start inherit this too.
    env: { NODE_ENV: 'test' },
  },
});

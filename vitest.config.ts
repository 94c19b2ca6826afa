import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores on CI: PGlite instances are heavy, keep parallelism modest.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    globalSetup: ['test/global-setup.ts'],
  },
});

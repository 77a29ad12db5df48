import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One embedded PostgreSQL cluster per run; each test file clones its own database.
    globalSetup: ['test/global-setup.ts'],
    // Each worker is a new process, so it starts with the NODE_EXTRA_CA_CERTS that global
    // setup names (the test CA); worker threads would share this process's trust store.
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

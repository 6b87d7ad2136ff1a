import { createRequire } from 'node:module'
import { defineConfig } from 'vitest/config'

const require = createRequire(import.meta.url)

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS build for everyone (mercurius requires it; graphql has no
    // "exports" map); Vite would prefer its .mjs build for our imports, and graphql refuses to mix
    // the two ("Duplicate graphql modules"). Resolve it as Node does.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Each file gets its own SQLite file; two cores, so two workers.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
})

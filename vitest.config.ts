import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { defineConfig } from 'vitest/config'
import { registeredFeatures } from './scripts/features.js'
import { postgresUrl } from './test/helpers/services.js'

const require = createRequire(import.meta.url)

/**
 * The tests of behaviour, run a second time on PostgreSQL (each file in schemas of its own): each
 * feature's (test/<feature>/, the features read from src/features.ts), and those of the transports,
 * the CLI and the pages. The others are about one store's internals (SQLite's plans and pragmas),
 * pure functions, or set up PostgreSQL and Redis themselves (test/scale-out).
 */
const BEHAVIOURAL = [...registeredFeatures(import.meta.dirname), 'graphql', 'http', 'seed', 'cli', 'collections', 'operations', 'pages', 'tracing'].map(
  (dir) => `test/${dir}/**/*.test.ts`,
)

/**
 * A test file whose subject the store is not (sockets and timers, the GraphQL protocols, a limit's
 * arithmetic) says so in its header, with the reason, on a line that starts with ONE_STORE. It
 * runs once, in the sqlite project: a second run on PostgreSQL would prove nothing new.
 */
const ONE_STORE = '// Runs once, on SQLite:'
const runsOnce = (path: string) =>
  readFileSync(`${import.meta.dirname}/${path}`, 'utf8')
    .split('\n')
    .some((line) => line.startsWith(ONE_STORE))
const ONE_STORE_FILES = readdirSync(`${import.meta.dirname}/test`, { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.test.ts'))
  .map((path) => `test/${path}`)
  .filter(runsOnce)

/**
 * `npm run test:fast` (THREADLINE_TEST_FAST=1), the inner loop: the sqlite project without the
 * tests that start processes or browsers (the CLI, the pages in Chromium, scale-out, faults), the
 * long model-based parity runs, and those that need PostgreSQL or Redis. A project's own `exclude`
 * replaces the command line's, so the list lives here.
 */
const FAST = process.env.THREADLINE_TEST_FAST === '1'
const SLOW = [
  'test/{cli,scale-out,faults,browser,parity}/**',
  'test/{events/redis-events,limits/redis-rate-limit,db/lazy-drivers,db/postgres,db/pg-named-query,tokens/sign-in-allowance}.test.ts',
]

// Outside CI, without a PostgreSQL server, the second run is left out with a word; under CI=true
// postgresUrl() throws instead, and the run fails.
const withPostgres = (await postgresUrl()) !== undefined

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS build for everyone (mercurius requires it; graphql has no
    // "exports" map); Vite would prefer its .mjs build for our imports, and graphql refuses to mix
    // the two ("Duplicate graphql modules"). Resolve it as Node does.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    // Two cores, so two workers.
    maxWorkers: 2,
    // A worker loads src/ and its libraries once, for every file it runs, instead of once per file
    // (that loading was about as long as the tests themselves). Nothing here depends on a fresh
    // module: each test builds its own app, database and connections, and closes them.
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true as const,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: ['test/structure/**', ...(FAST ? SLOW : [])],
          env: { THREADLINE_TEST_STORE: 'sqlite' },
        },
      },
      // The structure tests load the lint's configuration and a copy of the project: each file in a
      // fresh module graph (in a shared one, ESLint's Linter once saw no configuration for its files).
      // Vitest starts the projects' files in the order of the projects' names, and without timings
      // of an earlier run (a fresh clone) in no other order: named so, this project starts first,
      // and its longest file (the typecheck of a copied project) runs beside the others, not after.
      {
        extends: true as const,
        test: { name: 'architecture', include: ['test/structure/**/*.test.ts'], isolate: true, env: { THREADLINE_TEST_STORE: 'sqlite' } },
      },
      ...(withPostgres
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: BEHAVIOURAL,
                exclude: ['test/cli/progress.test.ts', ...ONE_STORE_FILES],
                env: { THREADLINE_TEST_STORE: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
})

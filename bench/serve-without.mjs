// `threadline serve` with conventions left out, for `npm run bench`'s table of what each costs
// (bench/suite.ts): `node bench/serve-without.mjs <convention>...`, each one of buildApp's
// MEASURABLE_CONVENTIONS (src/app.ts). The same sources and settings as `threadline serve`: tsc's
// build in dist/ (`npm run build`), the config read from the environment, the heap settings; and
// buildApp handed the conventions to leave out, as tests hand it their clock. Its answers break
// those conventions: a benchmark's server only.
import { MEASURABLE_CONVENTIONS } from '../dist/app.js'
import { loadConfig } from '../dist/config.js'
import { withServerV8Settings } from '../dist/v8-settings.js'
import { startServer } from '../dist/server.js'

const measureWithout = new Set(process.argv.slice(2))
for (const name of measureWithout) {
  if (!MEASURABLE_CONVENTIONS.includes(name)) {
    console.error(`serve-without: expected some of ${MEASURABLE_CONVENTIONS.join(', ')}, got "${name}"`)
    process.exit(1)
  }
}
const config = loadConfig()
await withServerV8Settings(config.nodeOptions, () => startServer(config, { measureWithout }))

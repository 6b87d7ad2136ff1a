// What it costs to build the app: the time of buildApp (with its migrations on a fresh SQLite file,
// as every test app and every start pays it) and its close, over --builds builds after a few to warm
// up, and the process's peak RSS (VmHWM) at the end. The routes, the schemas and the GraphQL schema
// are made on each build: a change to how routes are registered shows here first.
//
//   npm run bench:app-build [-- --builds 30]
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { buildTestApp } from '../test/helpers/build-test-app.js'

const { values: args } = parseArgs({ options: { builds: { type: 'string', default: '30' } } })
const builds = Number(args.builds)

const buildAndClose = async (): Promise<number> => {
  const started = performance.now()
  const built = await buildTestApp()
  await built.app.ready()
  await built.close()
  return performance.now() - started
}

for (let i = 0; i < 3; i++) await buildAndClose()
const times: number[] = []
for (let i = 0; i < builds; i++) times.push(await buildAndClose())
times.sort((a, b) => a - b)
const peakKb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1])
const ms = (value: number | undefined) => (value ?? Number.NaN).toFixed(0)
console.log(
  `${builds} builds of the app on SQLite, each with its close: median ${ms(times[Math.floor(builds / 2)])} ms (min ${ms(times[0])}, max ${ms(times.at(-1))}); ` +
    `peak RSS of the process ${(peakKb / 1024).toFixed(0)} MB`,
)

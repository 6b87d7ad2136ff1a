// The `threadline` command as one module and its chunks (dist/main.js, dist/cli-chunks/), part of
// `npm run build`. Each command is a new process, and most of its start was Node loading modules
// one by one: some 750 of them, 373 from typebox and 263 from kysely, for `tokens create`. Bundled
// with those two libraries, the same command takes about half the CPU time (1.3 s to 0.7 s on this
// machine), and `serve` is up in 1.1 s instead of 1.5 (docs/decisions/0016-bundled-command.md). Every other
// dependency stays a package of its own, loaded from node_modules as before: some read files
// beside their own code, and graphql must be the one copy graphql-jit and the subscription
// transports load. dist/app.js and the rest of tsc's output stay what the package exports, for an
// application that builds the app itself.
//
// A file whose content is unchanged is left alone, and a changed one replaced whole (renamed into
// place): a command running from dist/ while the tests build again never reads half a file.
import { readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { build } from 'esbuild'

/** The libraries inlined: pure ESM, made of hundreds of small modules. */
const INLINED = ['typebox', 'kysely']
const CHUNKS = 'cli-chunks'

const root = join(import.meta.dirname, '..')
const dist = join(root, 'dist')
const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const external = Object.keys(dependencies)
  .filter((name) => !INLINED.includes(name))
  .flatMap((name) => [name, `${name}/*`])

const { outputFiles } = await build({
  absWorkingDir: root,
  entryPoints: { main: 'src/main.ts' },
  outdir: dist,
  chunkNames: `${CHUNKS}/[name]-[hash]`,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  logLevel: 'warning',
  write: false,
})

for (const { path, contents } of outputFiles) {
  const before = await readFile(path).catch(() => undefined)
  if (before !== undefined && Buffer.compare(before, contents) === 0) continue
  await mkdir(dirname(path), { recursive: true })
  await writeFile(`${path}.tmp`, contents, { mode: 0o755 })
  await rename(`${path}.tmp`, path)
}

// Chunks of an earlier bundle, and what tsc emitted for src/main.ts before it was bundled.
const made = new Set(outputFiles.map(({ path }) => relative(dist, path)))
const chunks = (await readdir(join(dist, CHUNKS)).catch(() => [])).map((name) => join(CHUNKS, name))
for (const stale of [...chunks, 'main.js.map', 'main.d.ts', 'main.d.ts.map']) {
  if (!made.has(stale)) await rm(join(dist, stale), { force: true })
}

// The compiled code (dist/: what `npm run build` compiles and bundles) for the tests that run it: the
// `threadline` command, the lazily loaded drivers, the packaged assets. Importing this module brings
// dist/ up to date first, so a run of tests that never touch dist/ compiles nothing, and a test that
// runs it never sees a stale one. `tsc -b` decides: its build info records every input and the
// compiler's version, so an unchanged tree costs a check of the files' times, and an edit is compiled.
// Two workers may import this at once; the lock makes the second wait for the first build.
import { execFile } from 'node:child_process'
import { mkdir, open, readFile, rm } from 'node:fs/promises'
import { promisify } from 'node:util'
import { isAlive } from './process-alive.js'

export const DIST = 'dist'

/** The `threadline` command. */
export const BIN = `${DIST}/main.js`

const LOCK = `${DIST}/.build-lock`

/** How long to wait for another worker's build before giving up (a cold build takes about 10 s). */
const LOCK_TIMEOUT_MS = 120_000

const run = promisify(execFile)

let built: Promise<void> | undefined

/** Compiles what changed in src/ since the last build (nothing, usually), and bundles the command again (half a second); once per worker. */
export function ensureBuilt(): Promise<void> {
  built ??= underLock(async () => {
    await run(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'tsconfig.build.json']).catch(compileFailed)
    await run(process.execPath, ['scripts/bundle-cli.js'])
  })
  return built
}

function compileFailed(error: { stdout?: string; stderr?: string }): never {
  // tsc reports type errors on stdout.
  throw new Error(`tsc -b tsconfig.build.json failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`)
}

async function underLock(work: () => Promise<unknown>): Promise<void> {
  await mkdir(DIST, { recursive: true })
  const deadline = Date.now() + LOCK_TIMEOUT_MS
  while (!(await takeLock())) {
    if (Date.now() > deadline) throw new Error(`${LOCK} held for ${LOCK_TIMEOUT_MS} ms: remove it if no test run is building`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  try {
    await work()
  } finally {
    await rm(LOCK, { force: true })
  }
}

/** Creates the lock file with this process's id; false while another live process holds it. */
async function takeLock(): Promise<boolean> {
  try {
    const handle = await open(LOCK, 'wx')
    await handle.writeFile(String(process.pid))
    await handle.close()
    return true
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error
  }
  // A run that was killed while building leaves its lock behind. (An empty file is a holder that
  // has not written its id yet.)
  const holder = Number(await readFile(LOCK, 'utf8').catch(() => ''))
  if (holder > 0 && !isAlive(holder)) await rm(LOCK, { force: true })
  return false
}

await ensureBuilt()

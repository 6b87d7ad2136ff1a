// `threadline serve` as a child process, exactly as a user runs it (dist/main.js, brought up to date
// by dist.ts), on a free port.
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { BIN } from './dist.js'

export { BIN }

const run = promisify(execFile)

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams
  /** http://127.0.0.1:PORT */
  address: string
  /** Everything it printed so far, stdout and stderr. */
  output: () => string
  /** SIGTERM, and resolves with the exit code. */
  stop: () => Promise<number | null>
}

/** Servers still running, killed if the test process ends without stopping them (a failed hook). */
const running = new Set<ChildProcessWithoutNullStreams>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** How long a server may take to say it listens before the start counts as failed. */
const START_TIMEOUT_MS = 30_000

/** Starts `threadline serve [flags]`; resolves with its address once it logged it (killing it if it never does). */
export async function startServe(env: Record<string, string>, flags: readonly string[] = []): Promise<ServeProcess> {
  // No shedding by the loop's delay unless a test asks: the server shares two cores with the test
  // workers, and its loop runs late for their work, not its own (as in build-test-app.ts).
  const child = spawn(process.execPath, [BIN, 'serve', ...flags], {
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', HTTP_SHED_LOOP_DELAY_MS: '0', ...env },
  })
  running.add(child)
  child.on('exit', () => running.delete(child))
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match?.[1]) resolve(match[1])
    })
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${output}`)))
    setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`serve did not say it listens within ${START_TIMEOUT_MS} ms: ${output}`))
    }, START_TIMEOUT_MS).unref()
  })
  return {
    child,
    address,
    output: () => output,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

/** A token for user `userId` of the database at `databaseUrl`, made with `threadline tokens create`. */
export async function tokenFromCli(databaseUrl: string, userId: number): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN, 'tokens', 'create', '--user', String(userId)], {
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
  })
  return stdout.trim()
}

/**
 * commentsOnFirstPost as an app opening the database at `databaseUrl` finds it (what a server
 * started again there would serve), in this process: a second `threadline serve` would prove no
 * more, at the cost of a start.
 */
export async function storedCommentsOnFirstPost(databaseUrl: string): Promise<Set<string>> {
  const reader = await buildApp(loadConfig({ HTTP_SHED_LOOP_DELAY_MS: '0', DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0' }))
  try {
    return await commentsOnFirstPost(await reader.listen({ host: '127.0.0.1', port: 0 }))
  } finally {
    await reader.close()
  }
}

/** The content of every comment on the demo data's post 1 (of user 1), read page by page (v2 cursors). */
export async function commentsOnFirstPost(address: string): Promise<Set<string>> {
  const contents = new Set<string>()
  for (let cursor: string | null = null; ;) {
    const page = await fetch(`${address}/api/v2/users/1/posts/1/comments?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)
    const body = (await page.json()) as { data: { content: string }[]; meta: { pagination: { nextCursor: string | null } } }
    for (const comment of body.data) contents.add(comment.content)
    cursor = body.meta.pagination.nextCursor
    if (cursor === null) return contents
  }
}

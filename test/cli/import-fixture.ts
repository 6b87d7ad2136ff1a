// What the import tests share: the real `threadline` command (dist/main.js) run as a child process on
// a test database, files to give it, and an app on the same database to read back what it wrote.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { threadline } from './export-fixture.js'

export { threadline }

/** A writer of files into a new temporary folder: content that is not a string is written as JSON. */
export function dataFiles(prefix: string): (name: string, content: unknown) => string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return (name, content) => {
    const path = join(dir, name)
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 1))
    return path
  }
}

/** The failure of a command that must fail: its exit code and what it printed. */
export async function threadlineFails(url: string, args: string[]) {
  try {
    await threadline(url, args)
  } catch (error) {
    return error as { code: number; stdout: string; stderr: string }
  }
  throw new Error(`threadline ${args.join(' ')} succeeded`)
}

export async function withApp<T>(url: string, use: (app: Awaited<ReturnType<typeof buildApp>>) => Promise<T>): Promise<T> {
  const app = await buildApp(loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' }))
  try {
    return await use(app)
  } finally {
    await app.close()
  }
}

/** A GET's body, parsed. */
export async function get(url: string, path: string) {
  return withApp(url, async (app) => (await app.inject({ method: 'GET', url: path })).json())
}

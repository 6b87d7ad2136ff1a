// What the import tests share: the real `threadline` command (dist/main.js) run as a child process on
// a test database, files to give it, and an app on the same database to read back what it wrote.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll } from 'vitest'
import { buildApp } from '../../src/app.js'
import { DATA_SECTIONS } from '../../src/cli/data-sections.js'
import type { ExportFormat } from '../../src/cli/export-format.js'
import { count, listed } from '../../src/cli/words.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/create-database.js'
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

/** The rows of each section of a data file (its arrays), as importedCounts takes them. */
export const rowsOf = (file: Readonly<Record<string, unknown>>): Record<string, number> =>
  Object.fromEntries(Object.entries(file).flatMap(([name, rows]) => (Array.isArray(rows) ? [[name, rows.length]] : [])))

/**
 * What an import of a file in `format` reports it loaded, as a pattern: every section that format
 * carries, in the registry's order, with its count from `counts` (0 for those not named).
 */
export function importedCounts(format: ExportFormat, counts: Readonly<Record<string, number>>): string {
  const sections = DATA_SECTIONS.filter(({ formats }) => formats?.[format] !== undefined)
  return listed(sections.map(({ name, noun }) => count(counts[name] ?? 0, noun, name)))
}

/** Every row of every table a data section holds, by table, in id order: what "unchanged" compares. */
export async function everyRow(url: string): Promise<Record<string, unknown[]>> {
  const database = openDatabase(loadConfig({ DATABASE_URL: url }).database)
  try {
    const tables: Record<string, unknown[]> = {}
    for (const { name } of DATA_SECTIONS) tables[name] = (await sql`select * from ${sql.table(name)} order by id`.execute(database.db)).rows
    return tables
  } finally {
    await database.close()
  }
}

type App = Awaited<ReturnType<typeof buildApp>>

/**
 * Apps that read back what the command wrote: one per database, built on first use and closed
 * when the calling file's tests end (call it at the top of the file). An app sees at once what
 * another process writes, as a server beside the command would; it is a reader here, not a client
 * under test, so it counts no rate limit.
 */
export function readers() {
  const apps = new Map<string, Promise<App>>()
  afterAll(async () => {
    await Promise.all([...apps.values()].map(async (app) => (await app).close()))
    apps.clear()
  })
  const appOn = (url: string): Promise<App> => {
    let app = apps.get(url)
    if (app === undefined) {
      app = buildApp(loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0' }))
      apps.set(url, app)
    }
    return app
  }
  return {
    withApp: async <T>(url: string, use: (app: App) => Promise<T>): Promise<T> => use(await appOn(url)),
    /** A GET's body, parsed. */
    get: async (url: string, path: string) => (await (await appOn(url)).inject({ method: 'GET', url: path })).json(),
  }
}

// Adding a resource takes what docs/architecture.md says it takes, and nothing else: in a copy of
// the project, a throwaway `bookmarks` feature is added as a newcomer would — its folder (table,
// service, routes, its relation in a user's answers, its landing-page count), three lines of
// src/features.ts (the import, its entry in FEATURES, its service in createServices) and a
// migration (its file and its line in src/db/migrate.ts). Then, with no other file touched: the
// project typechecks (its table is typed where the store is), the app serves the bookmarks, embeds
// them in a user (`include=bookmarks`), describes them in the OpenAPI document and counts them on
// the landing page; the lint's structure rules cover the new folder; the PostgreSQL test project
// takes its tests.
import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { Linter } from 'eslint'
import tseslint from 'typescript-eslint'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '../..')

const FILES: Record<string, string> = {
  'src/bookmarks/bookmarks.table.ts': `
import type { Generated, Selectable } from 'kysely'

export interface BookmarksTable {
  id: Generated<number>
  user_id: number
  url: string
}

declare module '../db/tables.js' {
  interface Tables {
    bookmarks: BookmarksTable
  }
}

export type BookmarkRow = Selectable<BookmarksTable>
`,
  'src/bookmarks/bookmarks.service.ts': `
import type { Caller } from '../core/caller.js'
import type { ListWindow } from '../collections/pagination.js'
import type { Db } from '../db/create-database.js'
import type { BookmarkRow } from './bookmarks.table.js'

const toBookmark = (row: BookmarkRow) => ({ id: row.id, userId: row.user_id, url: row.url })
export type Bookmark = ReturnType<typeof toBookmark>

export function createBookmarksService({ db }: { db: Db }) {
  return {
    async listOfUser(userId: number): Promise<Bookmark[]> {
      return (await db.selectFrom('bookmarks').selectAll().where('user_id', '=', userId).orderBy('id').execute()).map(toBookmark)
    },
    async listOfUsers(_caller: Caller | null, userIds: readonly number[], window: ListWindow): Promise<Map<number, Bookmark[]>> {
      const rows = userIds.length === 0 ? [] : await db.selectFrom('bookmarks').selectAll().where('user_id', 'in', userIds).orderBy('id', 'desc').execute()
      const byUser = new Map<number, Bookmark[]>(userIds.map((id) => [id, []]))
      for (const row of rows) {
        const list = byUser.get(row.user_id)
        if (list !== undefined && list.length < window.limit) list.push(toBookmark(row))
      }
      return byUser
    },
  }
}
export type BookmarksService = ReturnType<typeof createBookmarksService>
`,
  'src/bookmarks/bookmarks.feature.ts': `
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { embedList } from '../collections/embedding.js'
import type { Feature } from '../feature.js'
import { IdParam } from '../core/schema-types.js'
import { countRows } from '../db/list-page.js'
import type { ResourceOpenApi } from '../http/openapi/route-openapi.js'
import { createBookmarksService, type BookmarksService } from './bookmarks.service.js'

const Bookmark = Type.Object({ id: Type.Integer(), userId: Type.Integer(), url: Type.String() })
const bookmarksOpenApi: ResourceOpenApi = {
  tag: { name: 'Bookmarks', description: "A user's bookmarks." },
  noun: 'bookmark',
  example: { id: 1, userId: 1, url: 'https://example.com/a' },
}

const bookmarksRoutes: FastifyPluginAsyncTypebox<{ bookmarks: BookmarksService }> = async (app, { bookmarks }) => {
  app.get(
    '/users/:userId/bookmarks',
    {
      config: { access: 'public', openapi: { resource: bookmarksOpenApi } },
      schema: {
        operationId: 'listBookmarks',
        summary: "List a user's bookmarks",
        description: 'Anyone.',
        tags: [bookmarksOpenApi.tag.name],
        params: Type.Object({ userId: IdParam }),
        response: { 200: Type.Object({ data: Type.Array(Bookmark) }) },
      },
    },
    async (request) => ({ data: await bookmarks.listOfUser(Number(request.params.userId)) }),
  )
}

export const bookmarksFeature = {
  name: 'bookmarks',
  createService: createBookmarksService,
  routes: bookmarksRoutes,
  embeds: [
    {
      in: 'users',
      name: 'bookmarks',
      schema: Type.Array(Bookmark, { description: 'With \`include=bookmarks\`: their bookmarks.' }),
      relation: ({ bookmarks }: { bookmarks: BookmarksService }) =>
        embedList<{ readonly id: number }>(
          (user) => user.id,
          (caller, ids, window) => bookmarks.listOfUsers(caller, ids, window),
        ),
    },
  ],
  landingCount: { label: 'Bookmarks', count: (db) => countRows(db, db.selectFrom('bookmarks')) },
} satisfies Feature<{ bookmarks: BookmarksService }>
`,
  'src/db/migrations/0007-bookmarks.ts': `
import type { Kysely, Migration } from 'kysely'
import type { DialectFacts } from '../dialect-facts.js'

export const bookmarksMigration = (facts: DialectFacts): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('bookmarks')
      .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('url', facts.textType, (c) => c.notNull())
      .execute()
  },
})
`,
  // What the test runs in the copy, with tsx: the app over a fresh SQLite file, answering as JSON.
  'try-bookmarks.ts': `
import { buildApp } from './src/app.js'
import { loadConfig } from './src/config.js'
import { openDatabase } from './src/db/create-database.js'
import { prepareDatabase } from './src/server.js'

const config = loadConfig({ DATABASE_URL: 'sqlite:' + process.argv[2], LOG_LEVEL: 'silent', SEED_DEMO_DATA: 'false' })
const database = openDatabase(config.database)
await prepareDatabase(database, config)
const now = new Date().toISOString()
await database.db.insertInto('users').values({ name: 'Ada', email: 'ada@example.com', role: 'user', created_at: now, updated_at: now }).execute()
await database.db.insertInto('bookmarks').values([{ user_id: 1, url: 'https://example.com/a' }, { user_id: 1, url: 'https://example.com/b' }]).execute()
const app = await buildApp(config, { database })
const get = async (url: string, accept = 'application/json') => {
  const response = await app.inject({ url, headers: { accept } })
  return { status: response.statusCode, body: response.body }
}
const answers = {
  list: await get('/api/v1/users/1/bookmarks'),
  embedded: await get('/api/v1/users/1?include=bookmarks'),
  openapi: await get('/openapi.json'),
  landing: await get('/', 'text/html'),
}
await app.close()
console.log(JSON.stringify(answers))
`,
}

/** Adds `line` after the first line of `path` (in the copy) that contains `after`. */
function insertAfter(dir: string, path: string, after: string, line: string): void {
  const text = readFileSync(join(dir, path), 'utf8')
  const at = text.indexOf('\n', text.indexOf(after))
  if (text.indexOf(after) < 0) throw new Error(`${path} has no "${after}"`)
  writeFileSync(join(dir, path), `${text.slice(0, at + 1)}${line}\n${text.slice(at + 1)}`)
}

let dir: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'threadline-feature-'))
  for (const entry of ['src', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'eslint.config.js']) {
    cpSync(join(ROOT, entry), join(dir, entry), { recursive: true })
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  mkdirSync(join(dir, 'src/bookmarks'))
  for (const [path, text] of Object.entries(FILES)) writeFileSync(join(dir, path), text.trimStart())

  // The three lines of src/features.ts, and the migration's line.
  insertAfter(dir, 'src/features.ts', "from './users/users.feature.js'", "import { bookmarksFeature } from './bookmarks/bookmarks.feature.js'")
  const features = readFileSync(join(dir, 'src/features.ts'), 'utf8')
  writeFileSync(
    join(dir, 'src/features.ts'),
    features
      .replace(/(export const FEATURES[^=]*= \[[^\]]*)\]/, '$1, bookmarksFeature]')
      .replace(/(\n\s+tokens: tokensFeature\.createService)/, '\n    bookmarks: bookmarksFeature.createService({ db }),$1'),
  )
  insertAfter(
    dir,
    'src/db/migrate.ts',
    "from './migrations/0006-scopes-and-identities.js'",
    "import { bookmarksMigration } from './migrations/0007-bookmarks.js'",
  )
  insertAfter(dir, 'src/db/migrate.ts', "'0006-scopes-and-identities': ", "    '0007-bookmarks': bookmarksMigration(database.facts),")
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('a throwaway feature', () => {
  it('changed only its folder, src/features.ts and the migration', async () => {
    const { stdout } = await run('git', ['diff', '--no-index', '--name-status', join(ROOT, 'src'), join(dir, 'src')]).catch(
      (error: { stdout: string }) => error,
    )
    const changed = stdout
      .trim()
      .split('\n')
      .map((line) => line.replace(`${ROOT}/`, '').replace(`${dir}/`, '').replace(/\s+/g, ' '))
    expect(changed.sort()).toEqual(
      [
        'A src/bookmarks/bookmarks.feature.ts',
        'A src/bookmarks/bookmarks.service.ts',
        'A src/bookmarks/bookmarks.table.ts',
        'A src/db/migrations/0007-bookmarks.ts',
        'M src/db/migrate.ts',
        'M src/features.ts',
      ].sort(),
    )
  })

  it('typechecks: its table is typed wherever the store is', async () => {
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', join(dir, 'tsconfig.build.json')])
  }, 120_000)

  it('is served, embedded in a user, described and counted', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(dir, 'try-bookmarks.ts'), join(dir, 'store.db')], { cwd: dir })
    const { list, embedded, openapi, landing } = JSON.parse(stdout) as Record<string, { status: number; body: string }>

    expect(list?.status).toBe(200)
    expect(JSON.parse(list!.body).data.map((b: { url: string }) => b.url)).toEqual(['https://example.com/a', 'https://example.com/b'])

    expect(embedded?.status).toBe(200)
    expect(JSON.parse(embedded!.body).data.bookmarks.map((b: { url: string }) => b.url)).toEqual(['https://example.com/b', 'https://example.com/a'])

    const document = JSON.parse(openapi!.body)
    expect(document.paths['/api/v1/users/{userId}/bookmarks'].get.operationId).toBe('listBookmarksV1')
    expect(document.paths['/api/v1/users/{id}'].get.responses['200'].content['application/json'].schema.properties.data).toEqual({
      $ref: '#/components/schemas/UserRepresentation',
    })
    expect(document.components.schemas.UserRepresentation.properties.bookmarks.items).toEqual({ $ref: '#/components/schemas/Bookmark' })

    expect(landing?.status).toBe(200)
    expect(landing?.body).toMatch(/<dt>Bookmarks<\/dt><dd id="count-bookmarks" data-count="2">2<\/dd>/)
  }, 60_000)

  it("is under the lint's structure rules, and in the PostgreSQL test project", async () => {
    const { boundaries } = (await import(join(dir, 'eslint.config.js'))) as { boundaries: Linter.Config[] }
    const { registeredFeatures } = (await import(join(dir, 'scripts/features.js'))) as { registeredFeatures: (root: string) => string[] }
    const linter = new Linter({ configType: 'flat', cwd: dir })
    const config = [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...boundaries]
    const errorsOf = (filename: string, code: string) => linter.verify(code, config, { filename: join(dir, filename) }).map(({ message }) => message)

    expect(errorsOf('src/bookmarks/bookmarks.feature.ts', readFileSync(join(dir, 'src/bookmarks/bookmarks.feature.ts'), 'utf8'))).toEqual([])
    expect(errorsOf('src/bookmarks/planted.ts', "import { loadUser } from '../users/users.service.js'")).toEqual([expect.stringContaining('public module')])
    expect(errorsOf('src/http/planted.ts', "import { bookmarksFeature } from '../bookmarks/bookmarks.feature.js'")).toEqual([
      expect.stringContaining('shared layer'),
    ])
    expect(registeredFeatures(dir)).toEqual([...registeredFeatures(ROOT), 'bookmarks'])
  })
})

// Adding a resource takes what docs/architecture.md says it takes, and nothing else: in a copy of
// the project, a throwaway `bookmarks` feature (a user's saved posts) is added as a newcomer would —
// its folder (table, service, routes, GraphQL type with a field on User and a mutation, its
// relation in a user's answers, its landing-page count and index address, its data section, its
// seed section), three lines of src/features.ts (the import, its entry in FEATURES, its service in
// createServices), a migration (its file and its line in src/db/migrate.ts), and the files
// `npm run generate` writes. Then, with no other file touched: the project typechecks (its table is
// typed where the store is) and lints; the app serves the bookmarks over REST and GraphQL, embeds
// them in a user, describes them in the OpenAPI document, counts and indexes them on the landing
// page, and the client lists them, typed, from its regenerated files (a test of its own, in the
// copy, typechecked too), seeds them, and the existing tests a new resource could
// break pass in the copy, the authorization matrix failing only where it must (it asks who may call
// the new mutation, by name); the export writes the bookmarks and the import loads them back (the
// functions `threadline export` and `import` run, in the copy's test run: two more processes would
// each compile the whole command); the lint's structure rules cover the new folder.
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { Linter } from 'eslint'
import tseslint from 'typescript-eslint'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MIGRATION_NAMES } from '../../src/db/migrate.js'

const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '../..')

/** The bookmarks' migration: the next after the last there is. */
const LAST_MIGRATION = MIGRATION_NAMES.at(-1) as string
const MIGRATION = `${String(Number(LAST_MIGRATION.slice(0, 4)) + 1).padStart(4, '0')}-bookmarks`

const FILES: Record<string, string> = {
  'src/bookmarks/bookmarks.table.ts': `
// The bookmarks table as Kysely sees it, added to the store's Tables (src/db/tables.ts) from here.
import type { Generated, Selectable } from 'kysely'

export interface BookmarksTable {
  id: Generated<number>
  user_id: number
  post_id: number
}

declare module '../db/tables.js' {
  interface Tables {
    bookmarks: BookmarksTable
  }
}

export type BookmarkRow = Selectable<BookmarksTable>
`,
  'src/bookmarks/bookmarks.service.ts': `
// The bookmarks: the posts a user saved.
import type { ListWindow } from '../collections/pagination.js'
import { type Caller, requireSignedIn } from '../core/caller.js'
import type { Db } from '../db/create-database.js'
import type { BookmarkRow } from './bookmarks.table.js'

export const toBookmark = (row: BookmarkRow) => ({ id: row.id, userId: row.user_id, postId: row.post_id })
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
    async save(caller: Caller | null, postId: number): Promise<Bookmark> {
      const { userId } = requireSignedIn(caller)
      return toBookmark(await db.insertInto('bookmarks').values({ user_id: userId, post_id: postId }).returningAll().executeTakeFirstOrThrow())
    },
  }
}
export type BookmarksService = ReturnType<typeof createBookmarksService>
`,
  'src/bookmarks/bookmarks.graphql.ts': `
// GraphQL adapter for bookmarks: the Bookmark type, a user's bookmarks and saveBookmark.
import { WINDOW_ARGS_SDL } from '../graphql/collection-args.js'
import type { GraphQLContext, WindowArgs } from '../graphql/context.js'
import { fieldDescription } from '../graphql/error-codes.js'
import { mutationWithoutInput } from '../graphql/validated.js'
import type { BookmarksService } from './bookmarks.service.js'

export const bookmarksTypeDefs = /* GraphQL */ \`
"A post a user saved."
type Bookmark {
  id: ID!
  userId: ID!
  postId: ID!
}

extend type User {
  \${fieldDescription('Their bookmarks, newest first.', { BAD_REQUEST: 'limit below 1, or a page past the offset window' })}
  bookmarks\${WINDOW_ARGS_SDL}: [Bookmark!]!
}

extend type Mutation {
  \${fieldDescription('Saves a post for the caller.', { UNAUTHENTICATED: 'anonymous caller' })}
  saveBookmark(postId: ID!): Bookmark!
}
\`

export const bookmarksResolvers = (bookmarks: BookmarksService) => ({
  User: {
    bookmarks: (user: { id: number }, args: WindowArgs, context: GraphQLContext) =>
      context.loaders.list('User.bookmarks', args, user.id, (caller, ids, window) => bookmarks.listOfUsers(caller, ids, window)),
  },
  Mutation: {
    saveBookmark: mutationWithoutInput((args: { postId: string }, context) => bookmarks.save(context.caller, Number(args.postId))),
  },
})
`,
  'src/bookmarks/bookmarks.data.ts': `
// The bookmarks' section of the data files (src/data-section.ts), in Threadline's format.
import { Type } from 'typebox'
import { type DataSection, StoredId } from '../data-section.js'
import { toBookmark } from './bookmarks.service.js'
import type { BookmarkRow } from './bookmarks.table.js'

export const bookmarksData: DataSection<BookmarkRow> = {
  name: 'bookmarks',
  noun: 'bookmark',
  references: ['users', 'posts'],
  formats: {
    threadline: {
      write: toBookmark,
      schema: Type.Object({ id: StoredId, userId: StoredId, postId: StoredId }, { additionalProperties: false }),
      references: [
        { field: 'userId', section: 'users' },
        { field: 'postId', section: 'posts' },
      ],
      toColumns: (row) => ({ id: row.id, user_id: row.userId, post_id: row.postId }),
    },
  },
}
`,
  'src/bookmarks/bookmarks.seed.ts': `
// The generated bookmarks: each a new user's saved post, among the new posts.
import type { SeedSection } from '../seed-section.js'

export const bookmarksSeed: SeedSection = {
  demo: 30,
  help: 'bookmarks to add, of the new posts by the new users',
  async write(count, { db, random, inBatches, written }) {
    const [users, posts] = [written('users'), written('posts')]
    await inBatches(
      count,
      () => ({ user_id: random.pick(users), post_id: random.pick(posts) }),
      async (rows) => {
        await db.insertInto('bookmarks').values(rows).execute()
      },
    )
    return []
  },
}
`,
  'src/bookmarks/bookmarks.feature.ts': `
// The bookmarks feature: the posts a user saved.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { embedList } from '../collections/embedding.js'
import type { Feature } from '../feature.js'
import { IdParam } from '../core/schema-types.js'
import { countRows } from '../db/list-page.js'
import type { ResourceOpenApi } from '../http/openapi/route-openapi.js'
import { bookmarksData } from './bookmarks.data.js'
import { bookmarksSeed } from './bookmarks.seed.js'
import { bookmarksResolvers, bookmarksTypeDefs } from './bookmarks.graphql.js'
import { createBookmarksService, type BookmarksService } from './bookmarks.service.js'

const Bookmark = Type.Object({ id: Type.Integer(), userId: Type.Integer(), postId: Type.Integer() })
const bookmarksOpenApi: ResourceOpenApi = {
  tag: { name: 'Bookmarks', description: "A user's bookmarks." },
  noun: 'bookmark',
  example: { id: 1, userId: 1, postId: 1 },
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
  graphql: { typeDefs: bookmarksTypeDefs, resolvers: ({ bookmarks }) => bookmarksResolvers(bookmarks) },
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
  apiIndex: { user_bookmarks_url: { path: '/users/{user_id}/bookmarks' } },
  landingCount: { label: 'Bookmarks', count: (db) => countRows(db, db.selectFrom('bookmarks')) },
  data: bookmarksData,
  seed: bookmarksSeed,
} satisfies Feature<{ bookmarks: BookmarksService }>
`,
  [`src/db/migrations/${MIGRATION}.ts`]: `
// The bookmarks table: a user's saved posts, gone with the user or the post.
import type { Kysely, Migration } from 'kysely'
import type { DialectFacts } from '../dialect-facts.js'

export function bookmarksMigration(facts: DialectFacts): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('bookmarks')
        .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('post_id', 'integer', (c) => c.notNull().references('posts.id').onDelete('cascade'))
        .execute()
    },
  }
}
`,
  // The feature's own test, as its author would write it, run in the copy beside the existing ones.
  'test/bookmarks/bookmarks.test.ts': `
import { once } from 'node:events'
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, expectTypeOf, it } from 'vitest'
import { DATA_SECTIONS } from '../../src/cli/data-sections.js'
import { writeExport } from '../../src/cli/export-data.js'
import { describeImport, importFile } from '../../src/cli/import-data.js'
import { createClient } from '../../src/client/index.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { freshSqliteFile } from '../helpers/test-store.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

const graphql = (query: string, token?: string) => t.request({ method: 'POST', url: '/graphql', json: { query }, ...(token === undefined ? {} : { token }) })

it('saves a post over GraphQL, serves it over REST and GraphQL, embeds it in a user, describes, counts and indexes it', async () => {
  const post = await t.request({ method: 'POST', url: \`/api/v1/users/\${t.alice.id}/posts\`, token: t.tokens.alice, json: { title: 'Keep', content: 'this' } })
  const postId = String(post.json().data.id)
  const save = \`mutation { saveBookmark(postId: "\${postId}") { postId userId } }\`
  expect((await graphql(save)).json().errors[0].extensions.code).toBe('UNAUTHENTICATED')
  expect((await graphql(save, t.tokens.bob)).json()).toEqual({ data: { saveBookmark: { postId, userId: String(t.bob.id) } } })

  const list = await t.request({ method: 'GET', url: \`/api/v1/users/\${t.bob.id}/bookmarks\` })
  expect(list.json().data.map((bookmark: { postId: number }) => String(bookmark.postId))).toEqual([postId])
  const embedded = await t.request({ method: 'GET', url: \`/api/v1/users/\${t.bob.id}?include=bookmarks\` })
  expect(embedded.json().data.bookmarks.map((bookmark: { postId: number }) => String(bookmark.postId))).toEqual([postId])
  const field = await graphql(\`{ user(id: "\${t.bob.id}") { bookmarks { postId } } }\`)
  expect(field.json()).toEqual({ data: { user: { bookmarks: [{ postId }] } } })

  const document = (await t.request({ method: 'GET', url: '/openapi.json' })).json()
  expect(document.paths['/api/v1/users/{userId}/bookmarks'].get.operationId).toBe('listBookmarksV1')
  expect(document.paths['/api/v1/users/{id}'].get.responses['200'].content['application/json'].schema.properties.data).toEqual({
    $ref: '#/components/schemas/UserRepresentation',
  })
  expect(document.components.schemas.UserRepresentation.properties.bookmarks.items).toEqual({ $ref: '#/components/schemas/Bookmark' })
  const page = await t.request({ method: 'GET', url: '/', headers: { accept: 'text/html' } })
  expect(page.body).toMatch(/<dt>Bookmarks<\\/dt><dd id="count-bookmarks" data-count="1">1<\\/dd>/)
  const index = (await t.request({ method: 'GET', url: '/' })).json()
  expect(index.user_bookmarks_url).toBe('http://localhost:80/api/v1/users/{user_id}/bookmarks')
})

it('has client helpers, made from the regenerated table: list and all, typed, and its place in a user', async () => {
  const post = await t.request({ method: 'POST', url: \`/api/v1/users/\${t.alice.id}/posts\`, token: t.tokens.alice, json: { title: 'Also', content: 'this' } })
  const postId = post.json().data.id as number
  await graphql(\`mutation { saveBookmark(postId: "\${postId}") { postId } }\`, t.tokens.alice)
  const client = createClient({ baseUrl: await t.app.listen({ host: '127.0.0.1', port: 0 }) })

  expect(Object.keys(client.bookmarks)).toEqual(['list', 'all'])
  const page = await client.bookmarks.list(t.alice.id)
  expectTypeOf<(typeof page.data)[number]['postId']>().toEqualTypeOf<number>()
  expect(page.data.map((bookmark) => bookmark.postId)).toEqual([postId])
  const alice = await client.users.get(t.alice.id, { include: ['bookmarks'] })
  expectTypeOf<(typeof alice.bookmarks)[number]['postId']>().toEqualTypeOf<number>()
  expect(alice.bookmarks.map((bookmark) => bookmark.postId)).toEqual([postId])
  // @ts-expect-error: bookmarks are only listed
  expect(client.bookmarks.get).toBeUndefined()
})

it('is loaded by import and written back by export, as threadline import and export do', async () => {
  const at = '2026-01-02T03:04:05.006Z'
  const data = {
    threadline: { version: 1 },
    users: [{ id: 1, name: 'Ada', email: 'ada@example.com', age: null, avatar: null, role: 'user', createdAt: at, updatedAt: at, passwordHash: null }],
    posts: [{ id: 1, userId: 1, title: 'Kept', content: 'Twice', status: 'published', publishedAt: at, createdAt: at, updatedAt: at }],
    bookmarks: [
      { id: 1, userId: 1, postId: 1 },
      { id: 2, userId: 1, postId: 1 },
    ],
  }
  const store = freshSqliteFile()
  const database = openDatabase(loadConfig({ DATABASE_URL: store.url }).database)
  try {
    await migrateToLatest(database)
    const [file, again] = ['import.json', 'export.json'].map((name) => join(store.url.slice('sqlite:'.length), '..', name)) as [string, string]
    writeFileSync(file, JSON.stringify(data))
    // The other sections of the file's format, empty in the file, are counted as 0.
    expect(describeImport(await importFile(database.db, file, { replace: false }), 0)).toMatch(/^Imported 1 user, 1 post, (0 \\w+, )*0 \\w+ and 2 bookmarks in /)
    const stream = createWriteStream(again)
    await writeExport(database.db, stream, 'threadline')
    stream.end()
    await once(stream, 'close')
    const exported = JSON.parse(readFileSync(again, 'utf8')) as Record<string, unknown[]>
    const inFormat = DATA_SECTIONS.filter(({ formats }) => formats?.threadline !== undefined).map(({ name }) => name)
    expect(Object.keys(exported)).toEqual(['threadline', ...inFormat])
    expect(inFormat.at(-1)).toBe('bookmarks')
    expect(exported.bookmarks).toEqual(data.bookmarks)
  } finally {
    await database.close()
    await store.drop()
  }
})
`,
  // The copy's typecheck and lint in one child process: ESLint's type-aware rules read the program
  // the typecheck built, instead of building their own (half this test's time otherwise).
  'check-copy.mjs': `
import { ESLint } from 'eslint'
import ts from 'typescript'

const { config } = ts.readConfigFile('tsconfig.build.json', ts.sys.readFile)
const { fileNames, options } = ts.parseJsonConfigFileContent(config, ts.sys, process.cwd())
// The feature's own test too: it uses the client, whose types the regenerated files give.
const roots = [...fileNames, 'test/bookmarks/bookmarks.test.ts']
const program = ts.createProgram(roots, { ...options, rootDir: '.', noEmit: true, incremental: false })
const typeErrors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\\n'))
const eslint = new ESLint({ overrideConfig: { languageOptions: { parserOptions: { programs: [program], projectService: false } } } })
const results = await eslint.lintFiles(process.argv.slice(2))
const lintErrors = results.flatMap(({ filePath, messages }) => messages.map(({ message }) => filePath + ': ' + message))
console.log(JSON.stringify({ typeErrors, lintErrors }))
`,
}

/**
 * The existing tests a new resource could break (they read the registry, the schema or the
 * landing page), run in the copy; a small part of the suite, so that this test stays short.
 */
const EXISTING_TESTS = [
  'test/pages/landing-page.test.ts',
  'test/collections/embedding.test.ts',
  'test/http/mass-assignment.test.ts',
  'test/http/authorization-matrix.test.ts',
  'test/seed/seed-database.test.ts',
]

/** Adds `line` after the first line of `path` (in the copy) that contains `after`. */
function insertAfter(dir: string, path: string, after: string, line: string): void {
  const text = readFileSync(join(dir, path), 'utf8')
  const at = text.indexOf('\n', text.indexOf(after))
  if (text.indexOf(after) < 0) throw new Error(`${path} has no "${after}"`)
  writeFileSync(join(dir, path), `${text.slice(0, at + 1)}${line}\n${text.slice(at + 1)}`)
}

let dir: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'threadline-feature-'))
  for (const entry of [
    'src',
    'scripts',
    'test',
    'docs',
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'eslint.config.js',
    'vitest.config.ts',
    '.prettierrc.json',
  ]) {
    cpSync(join(ROOT, entry), join(dir, entry), { recursive: true })
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  mkdirSync(join(dir, 'src/bookmarks'))
  mkdirSync(join(dir, 'test/bookmarks'))
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
  insertAfter(dir, 'src/db/migrate.ts', `from './migrations/${LAST_MIGRATION}.js'`, `import { bookmarksMigration } from './migrations/${MIGRATION}.js'`)
  insertAfter(dir, 'src/db/migrate.ts', `'${LAST_MIGRATION}': `, `  '${MIGRATION}': bookmarksMigration,`)
  // And the generated files, as the tests that check them say to.
  await run('npm', ['run', '--silent', 'generate'], { cwd: dir })
}, 120_000)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('a throwaway feature', () => {
  it('changed only its folder, src/features.ts, the migration and generated files', async () => {
    const { stdout } = await run('git', ['diff', '--no-index', '--name-status', join(ROOT, 'src'), join(dir, 'src')]).catch(
      (error: { stdout: string }) => error,
    )
    const changed = stdout
      .trim()
      .split('\n')
      .map((line) => line.replace(`${ROOT}/`, '').replace(`${dir}/`, '').replace(/\s+/g, ' '))
    expect(changed.sort()).toEqual(
      [
        'A src/bookmarks/bookmarks.data.ts',
        'A src/bookmarks/bookmarks.feature.ts',
        'A src/bookmarks/bookmarks.graphql.ts',
        'A src/bookmarks/bookmarks.seed.ts',
        'A src/bookmarks/bookmarks.service.ts',
        'A src/bookmarks/bookmarks.table.ts',
        `A src/db/migrations/${MIGRATION}.ts`,
        'M src/db/migrate.ts',
        'M src/features.ts',
        'M src/client/openapi.ts',
        'M src/client/resources.ts',
        'M src/seed/seed-flags.ts',
      ].sort(),
    )
  })

  it('typechecks (its table is typed wherever the store is) and lints', async () => {
    const files = ['src/bookmarks/*.ts', 'src/features.ts', 'src/db/migrate.ts', `src/db/migrations/${MIGRATION}.ts`, 'src/client/resources.ts']
    const { stdout } = await run(process.execPath, [join(dir, 'check-copy.mjs'), ...files], { cwd: dir, maxBuffer: 16 * 1024 * 1024 })
    expect(JSON.parse(stdout)).toEqual({ typeErrors: [], lintErrors: [] })
  }, 180_000)

  it('is served, embedded, described, counted, indexed, imported and exported, and the tests it could break pass, the authorization matrix asking for its mutation', async () => {
    const report = join(dir, 'report.json')
    await run(
      process.execPath,
      [
        join(ROOT, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--project',
        'sqlite',
        '--reporter=json',
        `--outputFile=${report}`,
        'test/bookmarks',
        ...EXISTING_TESTS,
      ],
      // The parent's run set up its databases already; its workers' variables stay out.
      { cwd: dir, env: { PATH: process.env.PATH, THREADLINE_GLOBAL_SETUP_DONE: '1' } },
    ).catch((error: unknown) => error)
    const { testResults } = JSON.parse(readFileSync(report, 'utf8')) as {
      testResults: { name: string; assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[]
    }
    const files = testResults.map(({ name }) => name.replace(`${dir}/`, '')).sort()
    expect(files).toEqual(['test/bookmarks/bookmarks.test.ts', ...EXISTING_TESTS].sort())
    const failed = testResults.flatMap(({ assertionResults }) => assertionResults.filter(({ status }) => status === 'failed'))
    expect(
      failed.map(({ fullName, failureMessages }) =>
        fullName.startsWith('the authorization matrix') ? fullName : `${fullName}: ${failureMessages.join('\n')}`,
      ),
    ).toEqual(['the authorization matrix has an entry for every GraphQL mutation, and none for a mutation that is gone'])
    expect(failed[0]?.failureMessages.join('\n')).toMatch(/mutations without a row in GRAPHQL[^]*saveBookmark/)
  }, 180_000)

  it("is under the lint's structure rules, and in the PostgreSQL test project", async () => {
    const { boundaries } = (await import(join(dir, 'eslint.config.js'))) as { boundaries: Linter.Config[] }
    const { registeredFeatures } = (await import(join(dir, 'scripts/features.js'))) as { registeredFeatures: (root: string) => string[] }
    const linter = new Linter({ configType: 'flat', cwd: dir })
    const config = [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...boundaries]
    const errorsOf = (filename: string, code: string) => linter.verify(code, config, { filename: join(dir, filename) }).map(({ message }) => message)

    expect(errorsOf('src/bookmarks/planted.ts', "import { loadUser } from '../users/users.service.js'")).toEqual([expect.stringContaining('public module')])
    expect(errorsOf('src/http/planted.ts', "import { bookmarksFeature } from '../bookmarks/bookmarks.feature.js'")).toEqual([
      expect.stringContaining('shared layer'),
    ])
    expect(registeredFeatures(dir)).toEqual([...registeredFeatures(ROOT), 'bookmarks'])
  })
})

// `threadline export`, run as a child process (dist/main.js) on a database of the run's store
// holding the demo data and the edge rows of export-fixture.ts; its output is compared with what
// the store holds, row by row.
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATA_SECTIONS } from '../../src/cli/data-sections.js'
import { listed } from '../../src/cli/words.js'
import { loadConfig } from '../../src/config.js'
import { type Database, openDatabase } from '../../src/db/create-database.js'
import { type Tables, toIsoTimestamp } from '../../src/db/tables.js'
import { freshDatabase, SECOND_STORE_RUN, type TestDatabase } from '../helpers/test-store.js'
import { AWKWARD_TEXT, type EdgeRows, PROFILE, seedWithEdgeRows, threadline } from './export-fixture.js'

type Row = Record<string, unknown>
type Document = Record<string, unknown> & { users: Row[]; posts: Row[]; comments: Row[]; todos: Row[] }

/** The sections a format writes: every data section that has it (src/features.ts), parents first. */
const sectionsIn = (format: 'threadline' | 'jsonplaceholder') => DATA_SECTIONS.filter(({ formats }) => formats?.[format] !== undefined).map(({ name }) => name)

let store: TestDatabase
let database: Database
let edge: EdgeRows
let threadlineText: string
let placeholderText: string
const dir = mkdtempSync(join(tmpdir(), 'threadline-export-'))

beforeAll(async () => {
  store = await freshDatabase()
  edge = await seedWithEdgeRows(store.url)
  database = openDatabase(loadConfig({ DATABASE_URL: store.url }).database)
  threadlineText = (await threadline(store.url, ['export'])).stdout
  placeholderText = (await threadline(store.url, ['export', '--format', 'jsonplaceholder'])).stdout
}, 60_000)
afterAll(async () => {
  await database?.close()
  await store?.drop()
})

const byId = (rows: Row[], id: number) => rows.find((row) => row.id === id)
const iso = (value: string | Date | null) => (value === null ? null : toIsoTimestamp(value))

describe('threadline export (threadline format)', () => {
  it('is one JSON document: the marker, then each data section (users, posts, comments, todos), one row per line', () => {
    const document = JSON.parse(threadlineText) as Document
    expect(Object.keys(document)).toEqual(['threadline', ...sectionsIn('threadline')])
    expect(document.threadline).toEqual({ version: 1, exportedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) })
    const rowLines = threadlineText.split('\n').filter((line) => line.startsWith('  {'))
    expect(rowLines).toHaveLength(sectionsIn('threadline').reduce((rows, name) => rows + (document[name] as Row[]).length, 0))
  })

  it('holds every row of every table, in id order', async () => {
    const document = JSON.parse(threadlineText) as Document
    for (const table of sectionsIn('threadline') as (keyof Tables)[]) {
      const ids = (await database.db.selectFrom(table).select('id').orderBy('id').execute()).map((row) => row.id)
      expect(
        (document[table] as Row[]).map((row) => row.id),
        table,
      ).toEqual(ids)
    }
    // The demo data (10/100/500/200) and the edge rows.
    expect(document.users.length).toBeGreaterThan(10)
    expect(document.comments.length).toBeGreaterThan(500)
  })

  it('writes a user with a password field by field, the stored hash as passwordHash', async () => {
    const { users } = JSON.parse(threadlineText) as Document
    const stored = await database.db.selectFrom('users').selectAll().where('id', '=', edge.user.id).executeTakeFirstOrThrow()
    expect(stored.password_hash).toEqual(expect.any(String))
    expect(byId(users, edge.user.id)).toStrictEqual({
      id: stored.id,
      name: 'Zoë Ünïcode 🧵',
      email: 'zoe@example.com',
      age: null,
      avatar: null,
      role: 'user',
      username: null,
      phone: null,
      website: null,
      address: null,
      company: null,
      passwordHash: stored.password_hash,
      createdAt: iso(stored.created_at),
      updatedAt: iso(stored.updated_at),
    })
    // A user without one has null.
    expect(users.find((user) => user.id !== edge.user.id)).toHaveProperty('passwordHash', null)
    // A profile as the API shows it.
    expect(byId(users, edge.profiledUserId)).toMatchObject(PROFILE)
  })

  it('writes a draft post, a comment and a completed todo field by field', async () => {
    const { posts, comments, todos } = JSON.parse(threadlineText) as Document
    const post = await database.db.selectFrom('posts').selectAll().where('id', '=', edge.draftPostId).executeTakeFirstOrThrow()
    expect(byId(posts, edge.draftPostId)).toStrictEqual({
      id: post.id,
      userId: edge.user.id,
      title: 'A draft: "not yet" 🚧',
      content: AWKWARD_TEXT,
      status: 'draft',
      publishedAt: null,
      createdAt: '2026-11-01T10:20:30.456Z',
      updatedAt: '2026-11-01T10:20:30.456Z',
    })
    const published = await database.db.selectFrom('posts').selectAll().where('id', '=', 1).executeTakeFirstOrThrow()
    expect(byId(posts, 1)).toMatchObject({ status: published.status, publishedAt: iso(published.published_at), title: published.title })

    const comment = await database.db.selectFrom('comments').selectAll().where('id', '=', edge.commentId).executeTakeFirstOrThrow()
    expect(byId(comments, edge.commentId)).toStrictEqual({
      id: comment.id,
      postId: 1,
      authorId: edge.user.id,
      email: null,
      content: comment.content,
      createdAt: '2026-11-01T10:20:30.456Z',
      updatedAt: '2026-11-01T10:20:30.456Z',
    })
    expect(byId(comments, edge.guestCommentId)).toMatchObject({ authorId: null, email: 'Eliseo@gardner.example' })
    expect(byId(todos, edge.todoId)).toStrictEqual({
      id: edge.todoId,
      userId: edge.user.id,
      text: 'Ship the export ✅',
      completed: true,
      createdAt: '2026-11-01T10:20:30.456Z',
      updatedAt: '2026-11-01T10:20:30.456Z',
    })
    expect(todos.some((todo) => todo.completed === false)).toBe(true)
  })

  it('never writes a token, nor its hash', async () => {
    const tokenHash = createHash('sha256').update(edge.token).digest('hex')
    // The fixture's token is real: the store holds its hash.
    const stored = await database.db.selectFrom('tokens').select('token_hash').where('user_id', '=', edge.user.id).execute()
    expect(stored.map((row) => row.token_hash)).toContain(tokenHash)
    for (const text of [threadlineText, placeholderText]) {
      expect(text).not.toContain(edge.token)
      expect(text).not.toContain(tokenHash)
      expect(text).not.toMatch(/token/i)
    }
  })
})

describe('threadline export --format jsonplaceholder', () => {
  it("maps each table to JSONPlaceholder's fields, drafts included, no password", async () => {
    const document = JSON.parse(placeholderText) as Document
    expect(Object.keys(document)).toEqual(sectionsIn('jsonplaceholder'))
    expect(byId(document.users, edge.user.id)).toStrictEqual({ id: edge.user.id, name: 'Zoë Ünïcode 🧵', username: 'zoe', email: 'zoe@example.com' })
    expect(byId(document.posts, edge.draftPostId)).toStrictEqual({
      userId: edge.user.id,
      id: edge.draftPostId,
      title: 'A draft: "not yet" 🚧',
      body: AWKWARD_TEXT,
    })
    const comment = byId(document.comments, edge.commentId)
    expect(comment).toStrictEqual({
      postId: 1,
      id: edge.commentId,
      name: Array.from(AWKWARD_TEXT + ' — and more')
        .slice(0, 60)
        .join(''),
      email: 'zoe@example.com',
      body: expect.stringContaining(AWKWARD_TEXT),
    })
    expect(Array.from(comment?.name as string)).toHaveLength(60)
    expect(byId(document.todos, edge.todoId)).toStrictEqual({ userId: edge.user.id, id: edge.todoId, title: 'Ship the export ✅', completed: true })
    // A whole profile, in JSONPlaceholder's order; a guest comment's own e-mail, its name split off.
    const profiled = byId(document.users, edge.profiledUserId)
    expect(profiled).toStrictEqual({ id: edge.profiledUserId, name: 'Leanne Profile', email: 'sincere@april.example', ...PROFILE })
    expect(Object.keys(profiled ?? {})).toEqual(['id', 'name', 'username', 'email', 'address', 'phone', 'website', 'company'])
    expect(byId(document.comments, edge.guestCommentId)).toStrictEqual({
      postId: 1,
      id: edge.guestCommentId,
      name: 'id labore ex et quam laborum',
      email: 'Eliseo@gardner.example',
      body: 'laudantium enim',
    })
    // Another author's e-mail, from the users table.
    const other = await database.db
      .selectFrom('comments')
      .innerJoin('users', 'users.id', 'comments.author_id')
      .select('users.email')
      .where('comments.id', '=', 1)
      .executeTakeFirstOrThrow()
    expect(byId(document.comments, 1)?.email).toBe(other.email)
    const { password_hash: hash } = await database.db.selectFrom('users').select('password_hash').where('id', '=', edge.user.id).executeTakeFirstOrThrow()
    expect(threadlineText).toContain(JSON.stringify(hash))
    expect(placeholderText).not.toContain(hash)
    expect(placeholderText).not.toMatch(/passwordHash|scrypt\$/)
    expect(document.users).toHaveLength(JSON.parse(threadlineText).users.length)
  })
})

describe('threadline export --output', () => {
  it('writes the file and nothing on stdout, leaving no temporary file', async () => {
    const path = join(dir, 'out.json')
    const { stdout, stderr } = await threadline(store.url, ['export', '--output', path])
    expect(stdout).toBe('')
    expect(stderr).toMatch(new RegExp(`^Exported ${listed(sectionsIn('threadline').map((name) => `\\d+ ${name}`))} to `))
    const fromFile = JSON.parse(readFileSync(path, 'utf8')) as Document
    const fromStdout = JSON.parse(threadlineText) as Document
    expect({ ...fromFile, threadline: undefined }).toEqual({ ...fromStdout, threadline: undefined })
    // It holds password hashes: its owner's alone.
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(readdirSync(dir)).toEqual(['out.json'])
  })

  it.skipIf(SECOND_STORE_RUN)('fails with the reason, writing nothing, when the file cannot be made', async () => {
    const missingFolder = join(dir, 'no-such-folder', 'x.json')
    await expect(threadline(store.url, ['export', '--output', missingFolder])).rejects.toMatchObject({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(/^threadline: ENOENT/),
    })
    expect(existsSync(missingFolder)).toBe(false)
  })

  it('replaces an older export whole', async () => {
    const path = join(dir, 'kept.json')
    writeFileSync(path, 'the older export')
    await threadline(store.url, ['export', '--format', 'jsonplaceholder', '--output', path])
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(JSON.parse(placeholderText))
  })

  it.skipIf(SECOND_STORE_RUN)('refuses an unknown format', async () => {
    await expect(threadline(store.url, ['export', '--format', 'csv'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Allowed choices are threadline, jsonplaceholder'),
    })
  })
})

// The statements of a PATCH. Where the caller's right to the row can be a condition of the write
// (their own row, or an admin's), and nothing is to be checked before it (an If-Match, a user's
// role or password, a post's status), the PATCH is one UPDATE made only if a field changes; the
// row is read only when it wrote nothing, to answer it as it is, or 404, or 403. Anything else
// reads the row first, as before. The answers are the same either way; on the run's store, each
// statement counted as the app sends it (a token's lookup left out: PostgreSQL looks it up on
// every request).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'

const statements: string[] = []
let t: TestApp
let todo: number
let post: number
let draft: number
let album: number
beforeAll(async () => {
  t = await buildTestApp({}, { onQuery: (sql) => statements.push(sql) })
  const make = createFactories(t)
  todo = (await make.todo(t.bob)).id
  post = (await make.post(t.bob)).id
  draft = (await make.draft(t.bob)).id
  album = (await make.album(t.bob)).id
})
afterAll(() => t.close())

type Patch = { url: string; token: 'admin' | 'alice' | 'bob'; json: unknown; ifMatch?: true }
let age = 20
const user =
  (id: () => number, token: Patch['token'], json: unknown = { age: ++age }): (() => Patch) =>
  () => ({ url: `/api/v1/users/${id()}`, token, json })
const bob = () => t.bob.id

const table: [string, () => Patch, number, string[]][] = [
  ['a user, by an admin', () => user(bob, 'admin')(), 200, ['update']],
  ['a user, by themself', () => user(bob, 'bob')(), 200, ['update']],
  ['a user, nothing to change (the row read to answer it)', user(bob, 'admin', { name: 'Bob' }), 200, ['update', 'select']],
  ['a user who does not exist', user(() => 999_999, 'admin'), 404, ['update', 'select']],
  ['a user, by someone else (read first: 403)', user(bob, 'alice'), 403, ['select']],
  ['a user, with If-Match (read first, the tag checked)', () => ({ ...user(bob, 'admin')(), ifMatch: true }), 200, ['select', 'update']],
  ['a todo, by its owner', () => ({ url: `/api/v1/todos/${todo}`, token: 'bob', json: { text: `Todo ${++age}` } }), 200, ['update']],
  [
    "a todo, by an admin, under its owner's path",
    () => ({ url: `/api/v1/users/${t.bob.id}/todos/${todo}`, token: 'admin', json: { text: `Todo ${++age}` } }),
    200,
    ['update'],
  ],
  [
    'a todo, by someone else (no row written, then read: 403)',
    () => ({ url: `/api/v1/todos/${todo}`, token: 'alice', json: { completed: true } }),
    403,
    ['update', 'select'],
  ],
  [
    "a todo, under another user's path (read first: 404)",
    () => ({ url: `/api/v1/users/${t.alice.id}/todos/${todo}`, token: 'bob', json: { text: 'x' } }),
    404,
    ['select'],
  ],
  ['a post, by its author', () => ({ url: `/api/v1/posts/${post}`, token: 'bob', json: { title: `Post ${++age}` } }), 200, ['update']],
  [
    'a post, its status (read first)',
    () => ({ url: `/api/v1/posts/${post}`, token: 'bob', json: { status: ++age % 2 === 0 ? 'draft' : 'published' } }),
    200,
    ['select', 'update'],
  ],
  [
    "someone else's draft (no row written, then read: 404)",
    () => ({ url: `/api/v1/posts/${draft}`, token: 'alice', json: { title: 'Mine now' } }),
    404,
    ['update', 'select'],
  ],
  ['an album, by its owner', () => ({ url: `/api/v1/albums/${album}`, token: 'bob', json: { title: `Album ${++age}` } }), 200, ['update']],
  [
    'an album, by someone else (no row written, then read: 403)',
    () => ({ url: `/api/v1/albums/${album}`, token: 'alice', json: { title: 'Mine' } }),
    403,
    ['update', 'select'],
  ],
]

describe('the statements of a PATCH', () => {
  it.each(table)('%s', async (_name, patch, status, expected) => {
    const { url, token, json, ifMatch } = patch()
    const headers: Record<string, string> = {}
    // Twice when it succeeds, with another value the second time: the first may find its caller or shape new.
    if (status === 200) await t.request({ method: 'PATCH', url, token: t.tokens[token], json: patch().json })
    // The tag of the row as that left it.
    if (ifMatch === true) headers['if-match'] = (await t.request({ url, token: t.tokens[token] })).headers.etag as string
    statements.length = 0
    const answer = await t.request({ method: 'PATCH', url, token: t.tokens[token], json, headers })
    expect(answer.statusCode).toBe(status)
    const sent = statements.filter((text) => !text.includes('"tokens"')).map((text) => text.split(' ')[0]!.toLowerCase())
    expect(sent).toEqual(expected)
    if (status === 200) {
      // What it answered is what is stored now.
      const stored = (await t.request({ url, token: t.tokens[token] })).json().data
      expect(answer.json().data).toEqual(stored)
    }
  })

  it('writes nothing, updatedAt included, when nothing changes', async () => {
    const before = (await t.request({ url: `/api/v1/todos/${todo}` })).json().data
    const again = await t.request({
      method: 'PATCH',
      url: `/api/v1/todos/${todo}`,
      token: t.tokens.bob,
      json: { text: before.text, completed: before.completed },
    })
    expect(again.json().data).toEqual(before)
  })
})

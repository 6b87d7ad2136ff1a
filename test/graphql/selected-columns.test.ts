// A GraphQL read takes only the columns of the fields the operation selects (src/db/projection.ts):
// a list of titles never reads a post's content. The answers are those of a whole read, whatever
// the document's shape: fragments, merged fields, aliases with different selections, @include, a
// draft's visibility, a cursor over a sort key nobody selected, and a document sent again (run
// compiled).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { graphql } from '../helpers/graphql-client.js'

describe('GraphQL reads only the selected columns', () => {
  let t: TestApp
  const statements: string[] = []
  let recording = false

  beforeAll(async () => {
    t = await buildTestApp({}, { onQuery: (sql) => recording && statements.push(sql) })
    const make = createFactories(t)
    await make.post(t.alice, { title: 'First', content: 'The first post, at length.' })
    await make.post(t.alice, { title: 'Second', content: 'The second post.' })
    await make.draft(t.alice, { title: 'Unfinished', content: 'A draft.' })
    await make.post(t.bob, { title: "Bob's", content: 'By Bob.' })
  })
  afterAll(() => t.close())

  /** The answer's data, and the statements it ran; the same data three times (the third run is compiled). */
  async function read(query: string, options: { variables?: Record<string, unknown>; token?: string } = {}) {
    const runs = []
    for (let run = 0; run < 3; run++) {
      statements.length = 0
      recording = true
      const answer = await graphql(t, query, options)
      recording = false
      expect(answer.body.errors, query).toBeUndefined()
      runs.push({ data: answer.body.data, statements: [...statements] })
    }
    expect(runs[1]?.data).toEqual(runs[0]?.data)
    expect(runs[2]?.data).toEqual(runs[0]?.data)
    return runs[2] as { data: Record<string, unknown>; statements: string[] }
  }

  const reading = (statements: string[], table: string) => statements.filter((sql) => new RegExp(`^select .* from "${table}"`).test(sql))

  it('reads a window of titles without the posts’ content, and users without their other columns', async () => {
    const { data, statements } = await read('{ users { id name posts { id title } } }')
    const alice = (data.users as { id: string; name: string; posts: { title: string }[] }[]).find((user) => user.id === String(t.alice.id))
    expect(alice).toEqual({
      id: String(t.alice.id),
      name: 'Alice',
      posts: [expect.objectContaining({ title: 'First' }), expect.objectContaining({ title: 'Second' })],
    })
    expect(statements).toHaveLength(2)
    for (const sql of statements) {
      // On PostgreSQL the window of each user's posts is a LATERAL subquery of whole rows; the
      // planner reads of it only the columns the statement uses (EXPLAIN VERBOSE: the others NULL).
      expect(sql.replace(/\(select "child"\.\* from "posts" as "child" /, '(')).not.toMatch(/\*/)
      expect(sql).not.toMatch(/"content"|"email"|"created_at"/)
    }
    expect(statements.join('\n')).toMatch(/"posts"\."title"/)
  })

  it('reads every column a selection names through fragments and inline fragments', async () => {
    const query = `{ user(id: "${t.alice.id}") { ...Who posts { ... on Post { title content } } } } fragment Who on User { name email createdAt }`
    const { data, statements } = await read(query)
    expect(data.user).toEqual({
      name: 'Alice',
      email: 'alice@example.com',
      createdAt: t.alice.createdAt,
      posts: [
        { title: 'First', content: 'The first post, at length.' },
        { title: 'Second', content: 'The second post.' },
      ],
    })
    expect(statements.join('\n')).toMatch(/"content"/)
  })

  it('answers fields merged from two selections of the same field, and aliases that select differently', async () => {
    const merged = await read(`{ user(id: "${t.bob.id}") { name } user(id: "${t.bob.id}") { email age } }`)
    expect(merged.data.user).toEqual({ name: 'Bob', email: 'bob@example.com', age: 41 })
    const aliased = await read(`{ a: user(id: "${t.bob.id}") { posts { one: author { name } two: author { email } } } }`)
    expect(aliased.data.a).toEqual({ posts: [{ one: { name: 'Bob' }, two: { email: 'bob@example.com' } }] })
  })

  it('reads a field under @include whichever way its variable goes', async () => {
    const query = `query($full: Boolean!) { user(id: "${t.bob.id}") { name email @include(if: $full) } }`
    expect((await read(query, { variables: { full: true } })).data.user).toEqual({ name: 'Bob', email: 'bob@example.com' })
    expect((await read(query, { variables: { full: false } })).data.user).toEqual({ name: 'Bob' })
  })

  it('keeps a draft to its author when only titles are asked', async () => {
    const query = `{ user(id: "${t.alice.id}") { posts { title } } }`
    const titles = async (token?: string) => ((await read(query, { token })).data.user as { posts: { title: string }[] }).posts.map((post) => post.title)
    expect(await titles()).toEqual(['First', 'Second'])
    expect(await titles(t.tokens.alice)).toEqual(['First', 'Second', 'Unfinished'])
    expect(await titles(t.tokens.bob)).toEqual(['First', 'Second'])
  })

  it("reads every post's titles without their content, a draft only for its author, in posts and postsPage alike", async () => {
    const query = '{ posts { title } postsPage(sort: "-updatedAt") { items { title } } }'
    const titles = async (token?: string) => {
      const { data, statements } = await read(query, { token })
      const posts = reading(statements, 'posts')
      expect(posts).toHaveLength(2)
      for (const sql of posts) expect(sql).not.toMatch(/"content"|\*/)
      const page = (data.postsPage as { items: { title: string }[] }).items.map((post) => post.title)
      return { list: (data.posts as { title: string }[]).map((post) => post.title), page }
    }
    expect(await titles()).toEqual({ list: ['First', 'Second', "Bob's"], page: ["Bob's", 'Second', 'First'] })
    expect(await titles(t.tokens.alice)).toEqual({ list: ['First', 'Second', 'Unfinished', "Bob's"], page: ["Bob's", 'Unfinished', 'Second', 'First'] })
  })

  it("reads a whole user by its fields' columns, never the password hash, on REST and GraphQL alike", async () => {
    statements.length = 0
    recording = true
    const rest = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}` })
    const list = await t.request({ method: 'GET', url: '/api/v2/users?limit=5' })
    recording = false
    expect(rest.statusCode).toBe(200)
    expect(list.statusCode).toBe(200)
    const user = rest.json<{ data: Record<string, unknown> }>().data
    expect(user).toMatchObject({ id: t.alice.id, name: 'Alice', createdAt: expect.any(String), updatedAt: expect.any(String) })
    expect(Object.keys(user)).not.toContain('passwordHash')
    const read = reading(statements, 'users')
    expect(read.length).toBeGreaterThanOrEqual(2)
    for (const sql of read) {
      expect(sql).not.toMatch(/password_hash|\*/)
      expect(sql).toMatch(/"created_at"/)
    }
  })

  it('pages by a cursor on a sort key the selection does not name', async () => {
    const page = (cursor?: string) =>
      graphql(t, 'query($cursor: String) { usersPage(sort: "-email", limit: 2, cursor: $cursor) { items { id } pageInfo { nextCursor } } }', {
        variables: { cursor },
      })
    const ids: string[] = []
    let cursor: string | undefined
    statements.length = 0
    recording = true
    for (let pages = 0; pages < 5; pages++) {
      const answer = await page(cursor)
      expect(answer.body.errors).toBeUndefined()
      const { items, pageInfo } = (answer.body.data as { usersPage: { items: { id: string }[]; pageInfo: { nextCursor: string | null } } }).usersPage
      ids.push(...items.map((item) => item.id))
      if (pageInfo.nextCursor === null) break
      cursor = pageInfo.nextCursor
    }
    recording = false
    const everyone = await t.request({ method: 'GET', url: '/api/v1/users?sort=-email&limit=100' })
    expect(ids).toEqual(everyone.json<{ data: { id: number }[] }>().data.map((user) => String(user.id)))
    const read = reading(statements, 'users').join('\n')
    expect(read).toMatch(/"email"/)
    expect(read).not.toMatch(/"name"|\*/)
  })
})

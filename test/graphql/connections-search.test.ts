// A connection over a search the index cannot narrow (a term of 2 characters): each page reads a
// bounded window of rows past its cursor, so a page may hold no edge while more rows remain. Its
// endCursor then says where to read on, and following endCursor reaches every match.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { MAX_SEARCHED_ROWS } from '../../src/db/list-page.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { graphql } from '../helpers/graphql-client.js'

let t: TestApp
const USERS = MAX_SEARCHED_ROWS + 50

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_MAX: '100000' })
  const now = new Date().toISOString()
  const rows = Array.from({ length: USERS }, (_, i) => ({
    // Only the newest holds the term: the first window (the oldest rows) finds nothing.
    name: i === USERS - 1 ? 'Newest Qz' : `Reader ${i}`,
    email: `reader${i}@example.org`,
    age: null,
    avatar: null,
    role: 'user' as const,
    password_hash: null,
    created_at: now,
    updated_at: now,
  }))
  for (let i = 0; i < rows.length; i += 2000) {
    await t.database.db
      .insertInto('users')
      .values(rows.slice(i, i + 2000))
      .execute()
  }
}, 120_000)
afterAll(() => t.close())

it('gives an empty page the cursor to read on from, and reaches every match by endCursor', async () => {
  const names: string[] = []
  const pages: number[] = []
  let after: string | null = null
  for (let page = 0; page < 10; page++) {
    const answer = await graphql(
      t,
      'query($after: String) { usersConnection(q: "qz", fields: ["name"], first: 5, after: $after) { edges { node { name } } pageInfo { hasNextPage endCursor } } }',
      { variables: { after } },
    )
    expect(answer.body.errors).toBeUndefined()
    const connection = (
      answer.body.data as { usersConnection: { edges: { node: { name: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } }
    ).usersConnection
    pages.push(connection.edges.length)
    names.push(...connection.edges.map((edge) => edge.node.name))
    if (!connection.pageInfo.hasNextPage) break
    expect(connection.pageInfo.endCursor).not.toBeNull()
    after = connection.pageInfo.endCursor
  }
  expect(pages[0]).toBe(0)
  expect(names).toEqual(['Newest Qz'])
})

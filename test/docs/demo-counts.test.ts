// Runs once, on SQLite: the demo data is the same on both stores, and this reads the README against it.
// The demo data as the README tells it: what the seed makes (each feature's seed section), and what
// anyone may read of it, which is what the landing page counts (drafts and their comments are
// their authors' and admins'). A new database served as `npm start` serves it.
import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/create-database.js'
import { DEMO_COUNTS } from '../../src/seed/seed-database.js'
import { prepareDatabase } from '../../src/server.js'
import { freshSqliteFile, type TestDatabase } from '../helpers/test-store.js'

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ')

let store: TestDatabase
let app: FastifyInstance
beforeAll(async () => {
  store = freshSqliteFile()
  const config = loadConfig({ DATABASE_URL: store.url, LOG_LEVEL: 'silent' })
  const database = openDatabase(config.database)
  expect((await prepareDatabase(database, config)).seeded).toBe(true)
  app = await buildApp(config, { database })
})
afterAll(async () => {
  await app?.close()
  await store?.drop()
})

describe("the README's demo data", () => {
  it('counts what the seed makes, and says why the landing page shows fewer posts and comments', async () => {
    // "demo data (10 users, 100 posts, …)": every seeded feature's count, in the order of the features.
    const made = /demo data \(([^)]*)\)/.exec(README)?.[1] ?? ''
    const told = [...made.matchAll(/(\d[\d,]*) (\w+)/g)].map(([, rows, name]) => [name, Number(rows!.replaceAll(',', ''))])
    expect(told).toEqual(Object.entries(DEMO_COUNTS))
    const page = await app.inject({ url: '/', headers: { accept: 'text/html' } })
    const shown = Object.fromEntries([...page.body.matchAll(/id="count-(\w+)" data-count="(\d+)"/g)].map((m) => [m[1], Number(m[2])]))
    const readable =
      /Fourteen of the posts are drafts.*?with the (\d+) comments on them: anonymous readers, and the landing page's counts, find (\d+) posts and (\d+) comments/.exec(
        README,
      )
    expect(readable?.slice(1).map(Number)).toEqual([DEMO_COUNTS.comments - (shown.comments ?? 0), shown.posts, shown.comments])
    expect(shown).toEqual({ ...DEMO_COUNTS, posts: DEMO_COUNTS.posts - 14, comments: expect.any(Number) })
    expect(page.body).toContain('drafts, and the comments on them, are seen only by their authors and admins, and are not counted here')
  })
})

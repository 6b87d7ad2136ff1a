// The list queries the API runs, as SQLite plans them: every filter and sort offered on users, on a
// user's posts, on every post, comment, todo, album and photo (as anyone, a signed-in user and an
// admin see them), and a post's comments, a user's albums and an album's photos, are served by an index (no table scan, no sort of the whole result), on
// the first page and on pages reached by cursor; an aggregate reads its rows as the list does.
import { DATA_SECTIONS } from '../../src/cli/data-sections.js'
import SqliteDatabase from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseAggregateQuery } from '../../src/collections/aggregation.js'
import { type CollectionQuery, parseCollectionQuery } from '../../src/collections/collection-query.js'
import type { CollectionSpec } from '../../src/collections/collection-spec.js'
import { listAlbums, listAlbumsOfUser } from '../../src/albums/albums.repository.js'
import { AlbumsCollection } from '../../src/albums/albums.schemas.js'
import { aggregateComments, listComments, listCommentsOfPost } from '../../src/comments/comments.repository.js'
import { CommentsCollection } from '../../src/comments/comments.schemas.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/create-database.js'
import type { RowPage } from '../../src/collections/collection-page.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Tables } from '../../src/db/tables.js'
import { listPhotos, listPhotosOfAlbum } from '../../src/photos/photos.repository.js'
import { PhotosCollection } from '../../src/photos/photos.schemas.js'
import { ANONYMOUS_VISIBILITY, type DraftVisibility } from '../../src/posts/post-visibility.js'
import { listPosts, listPostsOfUser } from '../../src/posts/posts.repository.js'
import { PostsCollection } from '../../src/posts/posts.schemas.js'
import { DEMO_COUNTS, seedDatabase } from '../../src/seed/seed-database.js'
import { listTodos } from '../../src/todos/todos.repository.js'
import { TodosCollection } from '../../src/todos/todos.schemas.js'
import { listUsers } from '../../src/users/users.repository.js'
import { UsersCollection } from '../../src/users/users.schemas.js'
import { freshSqliteFile, sqlitePath, type TestDatabase } from '../helpers/test-store.js'

let temp: TestDatabase
let connection: SqliteDatabase.Database
let db: Kysely<Tables>
const ran: { sql: string; parameters: readonly unknown[] }[] = []

beforeAll(async () => {
  temp = freshSqliteFile()
  const config = loadConfig({ DATABASE_URL: temp.url })
  const setup = openDatabase(config.database)
  await migrateToLatest(setup)
  await seedDatabase(setup.db, DEMO_COUNTS)
  await setup.close()
  connection = new SqliteDatabase(sqlitePath(config.database))
  db = new Kysely<Tables>({
    dialect: new SqliteDialect({ database: connection }),
    log: (event) => {
      if (event.level === 'query' && event.query.sql.startsWith('select')) ran.push({ sql: event.query.sql, parameters: event.query.parameters })
    },
  })
})
afterAll(async () => {
  await db.destroy()
  await temp.drop()
})

function plan(statement: { sql: string; parameters: readonly unknown[] }): string {
  const rows = connection.prepare(`explain query plan ${statement.sql}`).all(...statement.parameters) as { detail: string }[]
  return rows.map((row) => row.detail).join('; ')
}

/** Runs a list on the first page and on the page after it (by cursor); returns each query's plan. */
async function plans(spec: CollectionSpec, raw: Record<string, string>, list: (query: CollectionQuery) => Promise<RowPage<object>>): Promise<string[]> {
  const options = { defaultMode: 'cursor' as const, withTotal: false, scope: 'plans' }
  ran.length = 0
  const first = await list(parseCollectionQuery(spec, { ...raw, limit: '3' }, options))
  if (first.nextCursor !== null) await list(parseCollectionQuery(spec, { ...raw, limit: '3', cursor: first.nextCursor }, options))
  return ran.map(plan)
}

/** The resources' tables, as the features' data sections name them. */
const TABLES = new Set(DATA_SECTIONS.map(({ name }) => name))

/**
 * No sort of the whole result, and every step of every read through an index (a join's too). In id
 * order, the first page may walk the table itself: its rows are stored in id order, so the walk
 * stops after `limit` rows (those the reader sees).
 */
function expectIndexed(plansRun: string[], { idOrder = false } = {}) {
  expect(plansRun.length).toBeGreaterThan(0)
  for (const detail of plansRun) {
    expect(detail).not.toMatch(/TEMP B-TREE/)
    for (const [i, step] of detail.split('; ').entries()) {
      if (idOrder && i === 0 && step.startsWith('SCAN ') && TABLES.has(step.slice('SCAN '.length))) continue
      expect(step, detail).toMatch(/USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY/)
    }
  }
}

const usersList = (query: CollectionQuery) => listUsers(db, query)
const postsOfUser1 = (includeDrafts: boolean) => (query: CollectionQuery) => listPostsOfUser(db, 1, query, { includeDrafts })

describe('list query plans', () => {
  it("a user's posts sorted by -publishedAt, as the owner and as anyone", async () => {
    expectIndexed(await plans(PostsCollection, { sort: '-publishedAt' }, postsOfUser1(true)))
    expectIndexed(await plans(PostsCollection, { sort: '-publishedAt' }, postsOfUser1(false)))
  })

  it('users filtered by role sorted by name', async () => {
    expectIndexed(await plans(UsersCollection, { role: 'user', sort: 'name' }, usersList))
  })

  it("a post's comments", async () => {
    expectIndexed(await plans(CommentsCollection, {}, (query) => listCommentsOfPost(db, 1, query)))
    expectIndexed(await plans(CommentsCollection, { sort: '-id' }, (query) => listCommentsOfPost(db, 1, query)))
  })

  const userFilters: Record<string, string> = {
    id: '3',
    name: 'Leanne Graham',
    email: 'LEANNE.graham@example.com',
    age: '30',
    role: 'admin',
    createdAt: '2024-01-21T00:00:00.000Z',
    updatedAt: '2024-01-21T00:00:00.000Z',
  }
  it.each(Object.entries(userFilters))('users filtered by %s', async (field, value) => {
    expectIndexed(await plans(UsersCollection, { [field]: value }, usersList))
  })

  it.each(['id', 'name', 'email', 'age', 'createdAt', 'updatedAt'].flatMap((f) => [f, `-${f}`]))('users sorted by %s', async (sort) => {
    expectIndexed(await plans(UsersCollection, { sort }, usersList), { idOrder: sort.endsWith('id') })
  })

  const postFilters: Record<string, string> = {
    id: '3',
    userId: '1',
    title: 'x',
    status: 'draft',
    publishedAt: '2025-01-01T00:00:00.000Z',
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
  }
  it.each(Object.entries(postFilters))("a user's posts filtered by %s", async (field, value) => {
    expectIndexed(await plans(PostsCollection, { [field]: value }, postsOfUser1(true)))
  })

  it.each(['id', 'title', 'status', 'publishedAt', 'createdAt', 'updatedAt'].flatMap((f) => [f, `-${f}`]))("a user's posts sorted by %s", async (sort) => {
    expectIndexed(await plans(PostsCollection, { sort }, postsOfUser1(true)))
  })

  /** The readers of every post: what anyone, a signed-in user (whose drafts show too) and an admin see. */
  const readers: [string, DraftVisibility][] = [
    ['anyone', ANONYMOUS_VISIBILITY],
    ['a signed-in user', { allDrafts: false, ownerId: 2 }],
    ['an admin', { allDrafts: true, ownerId: null }],
  ]
  const sorts = (fields: string[]) => fields.flatMap((f) => [f, `-${f}`])

  describe.each(readers)('as %s', (_reader, visibility) => {
    const everyPost = (query: CollectionQuery) => listPosts(db, query, visibility)
    const everyComment = (query: CollectionQuery) => listComments(db, query, visibility)

    it.each(Object.entries(postFilters))('every post filtered by %s', async (field, value) => {
      expectIndexed(await plans(PostsCollection, { [field]: value }, everyPost))
    })

    it.each(sorts(['id', 'title', 'status', 'publishedAt', 'createdAt', 'updatedAt']))('every post sorted by %s', async (sort) => {
      expectIndexed(await plans(PostsCollection, { sort }, everyPost), { idOrder: sort.endsWith('id') })
    })

    const commentFilters: Record<string, string> = {
      id: '3',
      postId: '1',
      authorId: '1',
      createdAt: '2025-01-01T00:00:00.000Z',
      updatedAt: '2025-01-01T00:00:00.000Z',
    }
    it.each(Object.entries(commentFilters))('every comment filtered by %s', async (field, value) => {
      expectIndexed(await plans(CommentsCollection, { [field]: value }, everyComment))
    })

    it.each(sorts(['id', 'authorId', 'createdAt', 'updatedAt']))('every comment sorted by %s', async (sort) => {
      expectIndexed(await plans(CommentsCollection, { sort }, everyComment), { idOrder: sort.endsWith('id') })
    })
  })

  const everyTodo = (query: CollectionQuery) => listTodos(db, query)
  const todoFilters: Record<string, string> = {
    id: '3',
    userId: '1',
    text: 'x',
    completed: 'true',
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
  }
  it.each(Object.entries(todoFilters))('every todo filtered by %s', async (field, value) => {
    expectIndexed(await plans(TodosCollection, { [field]: value }, everyTodo))
  })

  it.each(sorts(['id', 'text', 'completed', 'createdAt', 'updatedAt']))('every todo sorted by %s', async (sort) => {
    expectIndexed(await plans(TodosCollection, { sort }, everyTodo), { idOrder: sort.endsWith('id') })
  })

  const everyAlbum = (query: CollectionQuery) => listAlbums(db, query)
  const albumsOfUser1 = (query: CollectionQuery) => listAlbumsOfUser(db, 1, query)
  const albumFilters: Record<string, string> = {
    id: '3',
    userId: '1',
    title: 'x',
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
  }
  it.each(Object.entries(albumFilters))("every album filtered by %s, and a user's", async (field, value) => {
    expectIndexed(await plans(AlbumsCollection, { [field]: value }, everyAlbum))
    expectIndexed(await plans(AlbumsCollection, { [field]: value }, albumsOfUser1))
  })

  it.each(sorts(['id', 'title', 'createdAt', 'updatedAt']))('every album sorted by %s', async (sort) => {
    expectIndexed(await plans(AlbumsCollection, { sort }, everyAlbum), { idOrder: sort.endsWith('id') })
  })

  it.each(sorts(['id', 'title', 'createdAt', 'updatedAt']))("a user's albums sorted by %s", async (sort) => {
    expectIndexed(await plans(AlbumsCollection, { sort }, albumsOfUser1))
  })

  const everyPhoto = (query: CollectionQuery) => listPhotos(db, query)
  const photosOfAlbum1 = (query: CollectionQuery) => listPhotosOfAlbum(db, 1, query)
  const photoFilters: Record<string, string> = {
    id: '3',
    albumId: '1',
    title: 'x',
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
  }
  it.each(Object.entries(photoFilters))("every photo filtered by %s, and an album's", async (field, value) => {
    expectIndexed(await plans(PhotosCollection, { [field]: value }, everyPhoto))
    expectIndexed(await plans(PhotosCollection, { [field]: value }, photosOfAlbum1))
  })

  it.each(sorts(['id', 'title', 'createdAt', 'updatedAt']))('every photo sorted by %s', async (sort) => {
    expectIndexed(await plans(PhotosCollection, { sort }, everyPhoto), { idOrder: sort.endsWith('id') })
  })

  it.each(sorts(['id', 'title', 'createdAt', 'updatedAt']))("an album's photos sorted by %s", async (sort) => {
    expectIndexed(await plans(PhotosCollection, { sort }, photosOfAlbum1))
  })
})

describe('aggregate query plans', () => {
  /** The plan of the aggregate `raw` asks of every comment an anonymous caller sees. */
  async function aggregatePlan(raw: Record<string, string>): Promise<string> {
    ran.length = 0
    await aggregateComments(db, undefined, parseAggregateQuery(CommentsCollection, raw, ''), ANONYMOUS_VISIBILITY)
    return plan(ran.at(-1) as (typeof ran)[number])
  }

  it("reads a post's comments grouped by post by the (post_id, id) index, and each post by its key", async () => {
    const found = await aggregatePlan({ select: 'postId,count()', 'postId[lte]': '10' })
    expect(found).toMatch(/SEARCH comments USING (COVERING )?INDEX \S*post_id/)
    expect(found).toMatch(/SEARCH posts USING INTEGER PRIMARY KEY/)
    expect(found).not.toMatch(/SCAN (comments|posts)\b(?! USING)/)
  })
})

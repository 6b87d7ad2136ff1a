// `threadline import`, run as a child process (dist/main.js) on a fresh database of the run's store,
// then read back over the REST API of an app on the same database.
import { readFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATA_SECTIONS } from '../../src/cli/data-sections.js'
import { freshDatabase, SECOND_STORE_RUN, type TestDatabase } from '../helpers/test-store.js'
import { dataFiles, everyRow, importedCounts, readers, rowsOf, threadline, threadlineFails } from './import-fixture.js'

const fileOf = dataFiles('threadline-import-')

/** JSONPlaceholder's /db shape, small: a few rows of each section, users with a whole profile, a part of one and none. */
const placeholder = {
  users: [
    {
      id: 1,
      name: 'Leanne Graham',
      username: 'Bret',
      email: 'Sincere@april.biz',
      address: { street: 'Kulas Light', suite: 'Apt. 556', city: 'Gwenborough', zipcode: '92998-3874', geo: { lat: '-37.3159', lng: '81.1496' } },
      phone: '1-770-736-8031 x56442',
      website: 'hildegard.org',
      company: { name: 'Romaguera-Crona', catchPhrase: 'Multi-layered', bs: 'harness' },
    },
    { id: 2, name: 'Ervin Howell', username: 'Antonette', email: 'Shanna@melissa.tv', phone: '010-692-6593' },
    { id: 3, name: 'Clementine Bauch', username: 'Samantha', email: 'Nathan@yesenia.net' },
  ],
  posts: [
    { userId: 1, id: 1, title: 'sunt aut facere', body: 'quia et suscipit\nsuscipit recusandae' },
    { userId: 1, id: 2, title: 'qui est esse', body: 'est rerum tempore vitae' },
    { userId: 2, id: 11, title: 'et ea vero quia', body: 'delectus reiciendis' },
    { userId: 3, id: 21, title: 'asperiores ea ipsam', body: 'voluptatem' },
    { userId: 3, id: 22, title: 'dolor sint quo', body: 'similique fugit' },
  ],
  comments: [
    { postId: 1, id: 1, name: 'id labore ex et quam laborum', email: 'sincere@APRIL.biz', body: 'laudantium enim' },
    { postId: 1, id: 2, name: 'quo vero', email: 'Shanna@melissa.tv', body: 'est natus enim' },
    { postId: 2, id: 3, name: 'odio adipisci', email: 'Nathan@yesenia.net', body: 'quia molestiae' },
    { postId: 11, id: 4, name: 'alias odio', email: 'Nathan@yesenia.net', body: 'non et atque' },
    { postId: 21, id: 5, name: 'vero eaque', email: 'Sincere@april.biz', body: 'harum non quasi' },
    { postId: 22, id: 6, name: 'et fugit', email: 'Eliseo@gardner.biz', body: 'doloribus at sed' },
  ],
  todos: [
    { userId: 1, id: 1, title: 'delectus aut autem', completed: false },
    { userId: 1, id: 2, title: 'quis ut nam', completed: true },
    { userId: 2, id: 3, title: 'fugiat veniam minus', completed: false },
    { userId: 3, id: 4, title: 'et porro tempora', completed: true },
  ],
}

const at = '2026-01-02T03:04:05.006Z'
const threadlineUser = (id: number, email: string) => ({
  id,
  name: `User ${id}`,
  email,
  age: 30,
  avatar: null,
  role: 'user',
  passwordHash: null,
  createdAt: at,
  updatedAt: at,
})
const threadlinePost = (id: number, userId: number) => ({
  id,
  userId,
  title: `Post ${id}`,
  content: 'Body',
  status: 'published',
  publishedAt: at,
  createdAt: at,
  updatedAt: at,
})

let db: TestDatabase
beforeAll(async () => {
  db = await freshDatabase()
})
afterAll(() => db.drop())
// Registered after the drop, so closed before it (after-hooks run in reverse order).
const { get, withApp } = readers()

describe('threadline import', { timeout: 120_000 }, () => {
  it('imports a JSONPlaceholder file: ids kept, fields mapped, profiles kept, guest comments made by no user, and a new post gets max+1', async () => {
    const { stdout } = await threadline(db.url, ['import', fileOf('placeholder.json', placeholder)])
    const counts = importedCounts('jsonplaceholder', rowsOf(placeholder))
    // Nothing dropped, no user made: the summary has nothing to add.
    expect(stdout).toMatch(new RegExp(`Imported ${counts} in [\\d.]+ s \\(jsonplaceholder\\)\\n$`))
    // Not a terminal: plain lines, no escape codes or carriage returns.
    expect(stdout).toMatch(/^checking \d+% /m)
    expect(stdout).not.toContain('\r')
    expect(stdout).not.toContain(String.fromCharCode(27))

    const [leanne, ervin, clementine] = placeholder.users
    expect((await get(db.url, '/api/v1/users/1')).data).toMatchObject({
      ...leanne,
      age: null,
      avatar: null,
      role: 'user',
    })
    // A profile's fields left out are null.
    expect((await get(db.url, '/api/v1/users/2')).data).toMatchObject({ ...ervin, website: null, address: null, company: null })
    expect((await get(db.url, '/api/v1/users/3')).data).toMatchObject({ ...clementine, phone: null, website: null, address: null, company: null })
    // username filters, as name does.
    expect((await get(db.url, '/api/v1/users?username=Antonette')).data.map((u: { id: number }) => u.id)).toEqual([2])
    const post = (await get(db.url, '/api/v1/users/2/posts/11')).data
    expect(post).toMatchObject({ id: 11, userId: 2, title: 'et ea vero quia', content: 'delectus reiciendis', status: 'published' })
    expect(post.publishedAt).toBe(post.createdAt)
    const comments = (await get(db.url, '/api/v1/users/1/posts/1/comments')).data
    // A comment's subject line, `name`, is its content's first paragraph; its e-mail is its commenter's,
    // even one a user has (case aside): a comment of a file is nobody's account's.
    expect(
      comments.map((c: { id: number; authorId: number | null; author: unknown; email: string; content: string }) => [
        c.id,
        c.authorId,
        c.author,
        c.email,
        c.content,
      ]),
    ).toEqual([
      [1, null, null, 'sincere@APRIL.biz', 'id labore ex et quam laborum\n\nlaudantium enim'],
      [2, null, null, 'Shanna@melissa.tv', 'quo vero\n\nest natus enim'],
    ])
    // No user was made for an e-mail no user has.
    expect((await get(db.url, '/api/v1/users/4')).error.code).toBe('NOT_FOUND')
    expect((await get(db.url, '/api/v1/users/3/posts/22/comments?include=author')).data[0]).toMatchObject({
      id: 6,
      authorId: null,
      author: null,
      email: 'Eliseo@gardner.biz',
    })
    const todos = (await get(db.url, '/api/v1/users/1/todos')).data
    expect(todos.map((t: { text: string; completed: boolean }) => [t.text, t.completed])).toEqual([
      ['delectus aut autem', false],
      ['quis ut nam', true],
    ])
    // Search finds imported users (SQLite's FTS index, PostgreSQL's trigrams).
    expect((await get(db.url, '/api/v1/users?q=howell')).data.map((u: { id: number }) => u.id)).toEqual([2])

    const token = (await threadline(db.url, ['tokens', 'create', '--user', '1'])).stdout.trim()
    await withApp(db.url, async (app) => {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/users/1/posts',
        headers: { authorization: `Bearer ${token}` },
        payload: { title: 'New', content: 'x' },
      })
      expect(res.statusCode).toBe(201)
      expect(res.json().data.id).toBe(23)
    })
  })

  it('refuses ids and e-mails the database holds without --replace, and changes nothing', async () => {
    const before = await everyRow(db.url)
    const failed = await threadlineFails(db.url, ['import', fileOf('again.json', placeholder)])
    expect(failed.code).not.toBe(0)
    expect(failed.stderr).toContain('users[0].id: 1 exists')
    expect(failed.stderr).toContain('posts[2].id: 11 exists')
    expect(failed.stderr).toMatch(/users\[1\]\.email: shanna@melissa\.tv is taken in the database/)
    expect(await everyRow(db.url)).toEqual(before)
  })

  it('--replace empties the tables first and loads a Threadline file, keys in any order', async () => {
    // Posts before users, the marker last: the object's keys have no order.
    const data = {
      posts: [threadlinePost(40, 7), { ...threadlinePost(41, 8), status: 'draft', publishedAt: null }],
      comments: [
        { id: 9, postId: 40, authorId: 8, email: null, content: 'Nice', createdAt: at, updatedAt: at },
        // A guest comment; and one of an export made before there were any, without `email`.
        { id: 10, postId: 40, authorId: null, email: 'guest@example.com', content: 'Hello', createdAt: at, updatedAt: at },
        { id: 11, postId: 40, authorId: 7, content: 'Old', createdAt: at, updatedAt: at },
      ],
      users: [
        { ...threadlineUser(7, 'seven@example.com'), username: 'seven', phone: null, website: 'seven.example', address: null, company: null },
        { ...threadlineUser(8, 'eight@example.com'), role: 'admin' },
      ],
      todos: [{ id: 3, userId: 7, text: 'Write', completed: true, createdAt: at, updatedAt: at }],
      threadline: { version: 1, exportedAt: at },
    }
    const file = fileOf('threadline.json', data)
    const { stdout } = await threadline(db.url, ['import', '--replace', file])
    expect(stdout).toMatch(new RegExp(`Imported ${importedCounts('threadline', rowsOf(data))} in [\\d.]+ s\\n$`))
    expect((await get(db.url, '/api/v1/users')).data.map((u: { id: number }) => u.id)).toEqual([7, 8])
    expect((await get(db.url, '/api/v1/users/7')).data).toEqual({
      id: 7,
      name: 'User 7',
      email: 'seven@example.com',
      age: 30,
      avatar: null,
      role: 'user',
      username: 'seven',
      phone: null,
      website: 'seven.example',
      address: null,
      company: null,
      createdAt: at,
      updatedAt: at,
    })
    // A user of an export made before profiles has none.
    expect((await get(db.url, '/api/v1/users/8')).data).toMatchObject({ username: null, phone: null, website: null, address: null, company: null })
    expect((await get(db.url, '/api/v1/users/7/posts/40')).data).toMatchObject({ id: 40, status: 'published', publishedAt: at })
    expect((await get(db.url, '/api/v1/users/7/posts/40/comments')).data).toMatchObject([
      { id: 9, authorId: 8, email: null, content: 'Nice' },
      { id: 10, authorId: null, author: null, email: 'guest@example.com', content: 'Hello' },
      { id: 11, authorId: 7, email: null, content: 'Old' },
    ])
    expect((await get(db.url, '/api/v1/users/1')).error.code).toBe('NOT_FOUND')
  })

  it('lists every bad row with its path, exits non-zero and writes nothing', async () => {
    const before = await everyRow(db.url)
    const file = fileOf('bad.json', {
      threadline: { version: 1, exportedAt: at },
      users: [
        threadlineUser(20, 'twenty@example.com'),
        { ...threadlineUser(21, 'TWENTY@example.com'), age: 'old' },
        { ...threadlineUser(20, 'x@example.com'), nickname: 'x' },
        { id: 22, name: 'No e-mail' },
      ],
      posts: [threadlinePost(50, 99), { ...threadlinePost(51, 20), title: '', status: 'gone' }],
      comments: [
        { id: 5, authorId: 20, content: 'Hi', createdAt: at, updatedAt: at },
        { id: 6, postId: 51, authorId: null, content: 'By nobody', createdAt: at, updatedAt: at },
        { id: 7, postId: 51, authorId: 20, email: 'both@example.com', content: 'By two', createdAt: at, updatedAt: at },
      ],
      todos: [{ id: 1, userId: 20, text: 'x', completed: 'yes', createdAt: 'yesterday', updatedAt: at }],
      extra: [],
    })
    const failed = await threadlineFails(db.url, ['import', file])
    expect(failed.code).not.toBe(0)
    for (const problem of [
      'users[1].email: taken by users[0]',
      'users[1].age: must be',
      'users[2].id: 20 is also the id of users[0]',
      'users[2].nickname: is not a known field',
      'users[3].email: is required',
      'posts[0].userId: no user 99',
      'posts[1].title: must not be empty',
      'posts[1].status: must be one of: draft, published',
      'comments[0].postId: is required',
      'comments[1].email: is required for a comment without an author',
      "comments[2].email: must be null for a user's comment",
      'todos[0].completed: must be',
      'todos[0].createdAt: must be',
      'extra: is not a known key',
    ]) {
      expect(failed.stderr).toContain(problem)
    }
    expect(failed.stderr).toMatch(/nothing was imported/)
    expect(await everyRow(db.url)).toEqual(before)
  })

  it.skipIf(SECOND_STORE_RUN)('caps the list of problems and says how many more', async () => {
    const users = Array.from({ length: 150 }, (_, i) => ({ id: i + 100, name: '', email: `u${i}@example.com` }))
    const failed = await threadlineFails(db.url, ['import', fileOf('many.json', { users })])
    expect(failed.stderr).toContain('users[0].name: must not be empty')
    expect(failed.stderr).toContain('and 50 more')
    expect(failed.stderr).not.toContain('users[149]')
  })

  it.skipIf(SECOND_STORE_RUN)('says where a file is not JSON, and writes nothing', async () => {
    const before = await everyRow(db.url)
    const failed = await threadlineFails(db.url, ['import', fileOf('broken.json', '{"users": [\n  {"id": 1, "name": "A",}\n]}')])
    expect(failed.code).not.toBe(0)
    expect(failed.stderr).toMatch(/not valid JSON at line 2, column \d+/)
    expect(await everyRow(db.url)).toEqual(before)
  })

  it.skipIf(SECOND_STORE_RUN)("checks a JSONPlaceholder user's profile by the API's rules, naming each field's path", async () => {
    const before = await everyRow(db.url)
    const file = fileOf('bad-profile.json', {
      users: [
        { id: 31, name: 'No geo', email: 'no-geo@example.com', address: { street: 'A', suite: 'B', city: 'C', zipcode: 'D' } },
        { id: 32, name: 'Long handle', username: 'x'.repeat(101), email: 'long@example.com', company: { name: 'Co', catchPhrase: 'Go', bs: 7 } },
      ],
    })
    const failed = await threadlineFails(db.url, ['import', file])
    for (const problem of ['users[0].address.geo: is required', 'users[1].username: must be at most 100', 'users[1].company.bs: must be']) {
      expect(failed.stderr).toContain(problem)
    }
    expect(await everyRow(db.url)).toEqual(before)
  })
})

/** JSONPlaceholder's /db as it is served: its sections in its own order, shapes and counts. */
function jsonPlaceholderDb() {
  const words = ['quia', 'et', 'suscipit', 'recusandae', 'consequuntur', 'expedita', 'reprehenderit', 'molestiae', 'ut', 'quas']
  const text = (n: number, seed: number) => Array.from({ length: n }, (_, i) => words[(seed * 7 + i * 3) % words.length]).join(' ')
  const body = (seed: number) => [text(9, seed), text(7, seed + 1), text(8, seed + 2), text(6, seed + 3)].join('\n')
  return {
    posts: Array.from({ length: 100 }, (_, i) => ({ userId: Math.floor(i / 10) + 1, id: i + 1, title: text(6, i), body: body(i) })),
    comments: Array.from({ length: 500 }, (_, i) => ({
      postId: Math.floor(i / 5) + 1,
      id: i + 1,
      name: text(5, i + 3),
      email: `Commenter${i + 1}@example.biz`,
      body: body(i + 5),
    })),
    albums: Array.from({ length: 100 }, (_, i) => ({ userId: Math.floor(i / 10) + 1, id: i + 1, title: text(4, i) })),
    photos: Array.from({ length: 5000 }, (_, i) => ({
      albumId: Math.floor(i / 50) + 1,
      id: i + 1,
      title: text(5, i),
      url: `https://via.placeholder.com/600/${(i * 4099).toString(16).slice(-6)}`,
      thumbnailUrl: `https://via.placeholder.com/150/${(i * 4099).toString(16).slice(-6)}`,
    })),
    users: Array.from({ length: 10 }, (_, i) => ({
      id: i + 1,
      name: `Person ${i + 1}`,
      username: `person${i + 1}`,
      email: `Person${i + 1}@april.biz`,
      address: { street: 'Kulas Light', suite: 'Apt. 556', city: 'Gwenborough', zipcode: '92998-3874', geo: { lat: '-37.3159', lng: '81.1496' } },
      phone: '1-770-736-8031 x56442',
      website: 'hildegard.org',
      company: { name: 'Romaguera-Crona', catchPhrase: 'Multi-layered client-server neural-net', bs: 'harness real-time e-markets' },
    })),
    todos: Array.from({ length: 200 }, (_, i) => ({ userId: Math.floor(i / 20) + 1, id: i + 1, title: text(4, i), completed: i % 3 === 0 })),
  }
}

describe('threadline import of the JSONPlaceholder /db document', { timeout: 120_000 }, () => {
  let store: TestDatabase
  beforeAll(async () => {
    store = await freshDatabase()
  })
  afterAll(() => store.drop())
  const { get } = readers()

  it("imports the sections Threadline has, says it skipped any other, and keeps each comment's name where an export finds it", async () => {
    const db = jsonPlaceholderDb()
    const { stdout } = await threadline(store.url, ['import', fileOf('db.json', db)])
    // What the file holds of each resource; those no data section names are skipped, with their count.
    const held = rowsOf(db)
    const known = new Set(DATA_SECTIONS.map(({ name }) => name))
    const skipped = Object.entries(held)
      .filter(([name]) => !known.has(name))
      .map(([name, n]) => `${name} \\(${n.toLocaleString('en-US')}\\)`)
    const skips = skipped.length === 0 ? '' : `: skipped ${skipped.join(', ')}: Threadline has no such resources`
    expect(stdout).toMatch(new RegExp(`Imported ${importedCounts('jsonplaceholder', held)} in [\\d.]+ s \\(jsonplaceholder${skips}\\)\\n$`))
    const comment = db.comments[41]!
    const post = db.posts[comment.postId - 1]!
    const read = (await get(store.url, `/api/v1/users/${post.userId}/posts/${post.id}/comments/${comment.id}`)).data
    expect(read.content).toBe(`${comment.name}\n\n${comment.body}`)

    // Exported again in JSONPlaceholder's format, every comment has its own name and body back.
    const exported = JSON.parse((await threadline(store.url, ['export', '--format', 'jsonplaceholder'])).stdout) as typeof db
    expect(exported.comments.map(({ id, name, body }) => ({ id, name, body }))).toEqual(db.comments.map(({ id, name, body }) => ({ id, name, body })))
  })
})

describe("threadline import of JSONPlaceholder's own data set (test/fixtures/jsonplaceholder)", { timeout: 120_000 }, () => {
  let store: TestDatabase
  beforeAll(async () => {
    store = await freshDatabase()
  })
  afterAll(() => store.drop())

  it('loads every section of the file Threadline has, and an export in its format gives their rows back as they were', async () => {
    const text = gunzipSync(readFileSync(new URL('../fixtures/jsonplaceholder/db.json.gz', import.meta.url))).toString('utf8')
    const file = JSON.parse(text) as Record<string, unknown[]>
    const { stdout } = await threadline(store.url, ['import', fileOf('jsonplaceholder-db.json', text)])
    // What the sections hold is counted as the file's; notes about their fields are other tests' (above).
    expect(stdout).toMatch(new RegExp(`Imported ${importedCounts('jsonplaceholder', rowsOf(file))} in [\\d.]+ s`))
    expect(stdout).not.toMatch(/skipped/)
    const exported = JSON.parse((await threadline(store.url, ['export', '--format', 'jsonplaceholder'])).stdout) as Record<string, unknown[]>
    // The sections whose rows JSONPlaceholder's format carries whole: its albums and photos, key for key and in order.
    for (const name of ['albums', 'photos']) {
      expect(exported[name], name).toHaveLength(file[name]!.length)
      expect(JSON.stringify(exported[name]), name).toBe(JSON.stringify(file[name]))
    }
  })
})

describe('threadline import into a database that holds data already', { timeout: 120_000 }, () => {
  let store: TestDatabase
  beforeAll(async () => {
    store = await freshDatabase()
    await threadline(store.url, ['seed'])
  })
  afterAll(() => store.drop())

  it('says how many problems it did not list, and that --replace replaces the data', async () => {
    const file = fileOf('demo-export.json', '')
    await threadline(store.url, ['export', '--output', file])
    const failed = await threadlineFails(store.url, ['import', file])
    const total = Number(/: (\d+) problems; nothing was imported/.exec(failed.stderr)?.[1])
    expect(total).toBeGreaterThan(100)
    const lines = failed.stderr.trimEnd().split('\n')
    expect(lines).toContain(`  and ${total - 100} more problems (the first 100 are listed)`)
    // Every line says something: no "field: " with nothing after it.
    for (const line of lines) expect(line).not.toMatch(/:\s*$/)
    expect(lines.at(-1)).toMatch(/^ {2}\d+ of the problems are ids or e-mails the database holds already: --replace replaces the database's data/)
  })
})

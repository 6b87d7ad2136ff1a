// The data set of bench/abuse.ts: a large SQLite database written straight with better-sqlite3
// (one transaction, prepared statements) into a file the server under test has migrated, so that
// seeding 200,000 users and 1,000,000 posts takes seconds, not the minutes of `threadline seed`.
// Kept under bench/.data/ keyed by size and by the schema the server's migrations make (a baseline
// build has other migrations than this one): the first run seeds, later runs copy.
//
// Besides the bulk it holds what the attacks need:
// - the named accounts below, with real scrypt hashes (the app's own hashPassword);
// - a "hot" cluster: users HOT_FIRST.. each with POSTS_PER_HOT_USER posts, each post with
//   COMMENTS_PER_HOT_POST comments by hot users, so that a comment on post 1 selected as
//   `post { author { posts(limit: 45) { comments(limit: 45) { author { posts(limit: 45) { content } } } } } }`
//   resolves 45 × 3 × 45 = 6,075 posts (about 0.7 MB of JSON per delivery);
// - random comments on the bulk posts;
// - LARGE_POSTS published posts of LARGE_POST_BYTES each by the large author (and no other posts
//   of theirs), for the attacks on the bytes of an answer: `posts(limit: 100) { content }` of that
//   user is about 5 MB.
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { createRandom, type Random, sentence, words } from '../src/fake-data.js'
import { hashPassword } from '../src/users/passwords.js'

export interface Account {
  id: number
  name: string
  email: string
  /** Null: no password, cannot sign in. */
  password: string | null
}

/** User 1 is the admin; the others sign in or get tokens from the CLI. Hot users follow them. */
export const ACCOUNTS = {
  admin: { id: 1, name: 'Bench Admin', email: 'admin@example.com', password: null },
  attacker: { id: 2, name: 'Mallory Attacker', email: 'mallory@example.com', password: 'mallory password 1' },
  victim: { id: 3, name: 'Victor Victim', email: 'victor@example.com', password: 'victor password 1' },
  bystander: { id: 4, name: 'Bea Bystander', email: 'bea@example.com', password: 'bea password 1' },
  commenter: { id: 5, name: 'Carl Commenter', email: 'carl@example.com', password: null },
  largeAuthor: { id: 6, name: 'Lena Longform', email: 'lena@example.com', password: null },
} as const satisfies Record<string, Account>

/** The large author's posts: their number and the bytes of each one's content. */
export const LARGE_POSTS = 50
export const LARGE_POST_BYTES = 100_000
/** Named in the seeded file's name: a change of what is seeded besides the sizes seeds anew. */
const DATA_VERSION = 2

export const HOT_FIRST = 11
export const HOT_USERS = 50
export const POSTS_PER_HOT_USER = 45
export const COMMENTS_PER_HOT_POST = 3
/** A published post of the first hot user: its comments are the fan-out's events. */
export const HOT_POST_ID = 1

export interface DataSize {
  users: number
  posts: number
  comments: number
}

const EPOCH = Date.parse('2026-01-01T00:00:00.000Z')
const DAY_MS = 86_400_000
const FIRST_NAMES = [
  'Ada',
  'Alan',
  'Barbara',
  'Brian',
  'Carla',
  'Dennis',
  'Edsger',
  'Frances',
  'Grace',
  'Guido',
  'Hedy',
  'Ivan',
  'Jean',
  'Ken',
  'Linus',
  'Margaret',
]
const LAST_NAMES = [
  'Lovelace',
  'Turing',
  'Liskov',
  'Kernighan',
  'Ritchie',
  'Dijkstra',
  'Allen',
  'Hopper',
  'Rossum',
  'Lamarr',
  'Hamilton',
  'Wirth',
  'Dahl',
  'Perlman',
]

/** The schema `migrate` makes, as text: a database migrated by one build is not served by another. */
function schemaOf(file: string): string {
  const db = new Database(file, { readonly: true })
  try {
    const objects = db.prepare('select type, name, sql from sqlite_master order by type, name').all()
    const migrations = db.prepare('select name from kysely_migration order by name').pluck().all()
    return JSON.stringify({ objects, migrations })
  } finally {
    db.close()
  }
}

/**
 * The seeded database for `size` and the server in `serverDir` (its dist/ built): made once, under
 * `dataDir`, and returned from there afterwards. The caller copies it before writing to it.
 */
export async function abuseDatabase(serverDir: string, dataDir: string, size: DataSize): Promise<string> {
  mkdirSync(dataDir, { recursive: true })
  const tmp = join(dataDir, 'abuse-seeding.db')
  const removeTmp = () => {
    for (const part of ['', '-wal', '-shm', '-journal']) rmSync(`${tmp}${part}`, { force: true })
  }
  removeTmp()
  execFileSync(process.execPath, [join(serverDir, 'dist', 'main.js'), 'migrate'], {
    env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${tmp}`, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const schema = createHash('sha256').update(schemaOf(tmp)).digest('hex').slice(0, 10)
  const file = join(dataDir, `abuse-v${DATA_VERSION}-${size.users}-${size.posts}-${size.comments}-${schema}.db`)
  if (existsSync(file)) {
    removeTmp()
    return file
  }
  const started = Date.now()
  console.log(
    `Seeding ${size.users.toLocaleString('en')} users, ${size.posts.toLocaleString('en')} posts and ${size.comments.toLocaleString('en')} comments into ${file} ...`,
  )
  const hashes = new Map<number, string>()
  for (const account of Object.values(ACCOUNTS) as Account[]) {
    if (account.password !== null) hashes.set(account.id, await hashPassword(account.password))
  }
  const db = new Database(tmp)
  db.pragma('journal_mode = DELETE')
  db.pragma('synchronous = OFF')
  db.pragma('cache_size = -262144')
  try {
    // Full-text indexes kept by triggers (a newer schema's) would index row by row: the triggers
    // are set aside, each index rebuilt once at the end and the triggers put back (as
    // bench/large-data.ts does). A schema without them seeds the same way.
    const triggers = db.prepare("select name, sql from sqlite_master where type = 'trigger'").all() as { name: string; sql: string }[]
    const indexes = db.prepare("select name from sqlite_master where type = 'table' and sql like 'create virtual table%fts5%'").pluck().all() as string[]
    db.transaction(() => {
      for (const trigger of triggers) db.exec(`drop trigger "${trigger.name}"`)
      fill(db, size, hashes, createRandom(18))
      for (const index of indexes) db.exec(`insert into "${index}" ("${index}") values ('rebuild')`)
      for (const trigger of triggers) db.exec(trigger.sql)
    })()
    db.exec('analyze')
  } finally {
    db.close()
  }
  copyFileSync(tmp, file)
  removeTmp()
  console.log(`Seeded in ${Math.round((Date.now() - started) / 1000)} s.`)
  return file
}

function fill(db: Database.Database, size: DataSize, hashes: Map<number, string>, random: Random): void {
  const insertUser = db.prepare(
    'insert into users (id, name, email, age, avatar, role, password_hash, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const named = new Map<number, Account>((Object.values(ACCOUNTS) as Account[]).map((a) => [a.id, a]))
  for (let id = 1; id <= size.users; id++) {
    const account = named.get(id)
    const name = account?.name ?? `${random.pick(FIRST_NAMES)} ${random.pick(LAST_NAMES)}`
    const email = account?.email ?? `${name.toLowerCase().replace(/[^a-z]+/g, '.')}.${id}@example.org`
    const at = new Date(EPOCH - 2 * 365 * DAY_MS + random.int(0, 30) * DAY_MS).toISOString()
    insertUser.run(id, name, email, random.int(18, 80), null, id === 1 ? 'admin' : 'user', hashes.get(id) ?? null, at, at)
  }

  const insertPost = db.prepare('insert into posts (id, user_id, title, content, status, published_at, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?)')
  let postId = 0
  const post = (userId: number, published: boolean) => {
    const at = new Date(EPOCH - 365 * DAY_MS + random.int(0, 300 * DAY_MS)).toISOString()
    insertPost.run(++postId, userId, sentence(random).slice(0, 60), words(random, 12, 20), published ? 'published' : 'draft', published ? at : null, at, at)
  }
  // The hot cluster first: post 1 is the first hot user's, and a hot user's first 45 posts are all hot.
  for (let u = 0; u < HOT_USERS; u++) for (let p = 0; p < POSTS_PER_HOT_USER; p++) post(HOT_FIRST + u, true)
  const hotPosts = postId
  const firstBulkUser = HOT_FIRST + HOT_USERS
  while (postId < size.posts) post(random.int(firstBulkUser, size.users), random.next() < 0.9)
  // The large author's, after the bulk: the other posts keep their ids.
  for (let p = 0; p < LARGE_POSTS; p++) {
    const at = new Date(EPOCH - 30 * DAY_MS + p * 60_000).toISOString()
    const content = `${words(random, 20, 40)} `.repeat(Math.ceil(LARGE_POST_BYTES / 100)).slice(0, LARGE_POST_BYTES)
    insertPost.run(++postId, ACCOUNTS.largeAuthor.id, sentence(random).slice(0, 60), content, 'published', at, at, at)
  }

  const insertComment = db.prepare('insert into comments (post_id, author_id, content, created_at, updated_at) values (?, ?, ?, ?, ?)')
  const comment = (onPost: number, author: number) => {
    const at = new Date(EPOCH - 300 * DAY_MS + random.int(0, 290 * DAY_MS)).toISOString()
    insertComment.run(onPost, author, words(random, 5, 15), at, at)
  }
  for (let p = 1; p <= hotPosts; p++) for (let c = 0; c < COMMENTS_PER_HOT_POST; c++) comment(p, random.int(HOT_FIRST, firstBulkUser - 1))
  for (let c = 0; c < size.comments; c++) comment(random.int(hotPosts + 1, size.posts), random.int(firstBulkUser, size.users))
}

// `threadline export`: the database out as one JSON document, in Threadline's own format (what
// `threadline import` loads back, password hashes included) or in JSONPlaceholder's. Streamed: each
// table is read in id order, a batch at a time, and each batch written before the next is read, so
// memory stays flat whatever the size. All of it is read in one transaction, so the file is one
// moment's data even while a server writes.
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { rename, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { Writable } from 'node:stream'
import type { Config } from '../config.js'
import { type Db, openDatabase } from '../db/create-database.js'
import { migrateToLatest } from '../db/migrate.js'
import { toIsoTimestamp } from '../db/tables.js'
import { toPost } from '../posts/posts.service.js'
import { toTodo } from '../todos/todos.service.js'
import { toUser } from '../users/users.service.js'
import { toNameAndBody } from './comment-subject.js'
import type { ExportFormat, ExportOptions } from './export-format.js'
import { createProgressBar } from './progress.js'

export { EXPORT_FORMATS, type ExportFormat, type ExportOptions } from './export-format.js'

/** Rows read per query: enough to keep round trips few, few enough that memory stays flat. */
const BATCH_SIZE = 1_000

const TABLES = ['users', 'posts', 'comments', 'todos'] as const
type Table = (typeof TABLES)[number]
type Row = Record<string, unknown>

const iso = (value: string | Date) => toIsoTimestamp(value)

/** The part of an e-mail before the @: JSONPlaceholder's `username`. */
const localPart = (email: string) => email.slice(0, email.lastIndexOf('@'))

// Keyset batches: `id > last` in id order uses the primary key, so the thousandth batch costs what the first does.
const selectUsers = (db: Db, afterId: number) => db.selectFrom('users').selectAll().where('id', '>', afterId).orderBy('id').limit(BATCH_SIZE).execute()
const selectPosts = (db: Db, afterId: number) => db.selectFrom('posts').selectAll().where('id', '>', afterId).orderBy('id').limit(BATCH_SIZE).execute()
const selectComments = (db: Db, afterId: number) =>
  db
    .selectFrom('comments')
    .innerJoin('users', 'users.id', 'comments.author_id')
    .select([
      'comments.id',
      'comments.post_id',
      'comments.author_id',
      'comments.content',
      'comments.created_at',
      'comments.updated_at',
      'users.email as author_email',
    ])
    .where('comments.id', '>', afterId)
    .orderBy('comments.id')
    .limit(BATCH_SIZE)
    .execute()
const selectTodos = (db: Db, afterId: number) => db.selectFrom('todos').selectAll().where('id', '>', afterId).orderBy('id').limit(BATCH_SIZE).execute()

type RowOf<S extends (db: Db, afterId: number) => Promise<unknown[]>> = Awaited<ReturnType<S>>[number]

/** A table's batches, and its rows as each format writes them (keys in the order the file shows them). */
interface Source<R extends { id: number }> {
  select(db: Db, afterId: number): Promise<R[]>
  threadline(row: R): Row
  jsonplaceholder(row: R): Row
}
const source = <R extends { id: number }>(s: Source<R>) => s as unknown as Source<{ id: number }>

/**
 * Threadline's format is the API's items, as the features write them (toUser, toPost, toTodo; a
 * comment without the author object GET embeds), plus each user's stored password hash;
 * JSONPlaceholder's has the fields of its /db document, and never a password.
 */
const SOURCES: Record<Table, Source<{ id: number }>> = {
  users: source<RowOf<typeof selectUsers>>({
    select: selectUsers,
    threadline: (r) => ({ ...toUser(r), passwordHash: r.password_hash }),
    jsonplaceholder: (r) => ({ id: r.id, name: r.name, username: localPart(r.email), email: r.email }),
  }),
  posts: source<RowOf<typeof selectPosts>>({
    select: selectPosts,
    threadline: toPost,
    jsonplaceholder: (r) => ({ userId: r.user_id, id: r.id, title: r.title, body: r.content }),
  }),
  comments: source<RowOf<typeof selectComments>>({
    select: selectComments,
    threadline: (r) => ({ id: r.id, postId: r.post_id, authorId: r.author_id, content: r.content, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) }),
    jsonplaceholder: (r) => {
      const { name, body } = toNameAndBody(r.content)
      return { postId: r.post_id, id: r.id, name, email: r.author_email, body }
    },
  }),
  todos: source<RowOf<typeof selectTodos>>({
    select: selectTodos,
    threadline: toTodo,
    jsonplaceholder: (r) => ({ userId: r.user_id, id: r.id, title: r.text, completed: Boolean(r.completed) }),
  }),
}

/** Writes text, waiting for the stream to drain when its buffer is full; a stream error ends the export. */
async function write(stream: Writable, text: string): Promise<void> {
  if (stream.write(text)) return
  await Promise.race([once(stream, 'drain'), once(stream, 'error').then(([error]) => Promise.reject(error as Error))])
}

/**
 * Writes the whole document to `stream`: the top-level keys in the agreed order (marker, users,
 * posts, comments, todos), one row per line. Returns the rows written per table.
 */
export async function writeExport(
  db: Db,
  stream: Writable,
  format: ExportFormat,
  onProgress: (done: number, total: number) => void = () => {},
): Promise<Record<Table, number>> {
  const written = { users: 0, posts: 0, comments: 0, todos: 0 }
  const totals = await Promise.all(
    TABLES.map((table) =>
      db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow(),
    ),
  )
  const total = totals.reduce((sum, { n }) => sum + Number(n), 0)
  let done = 0
  onProgress(done, total)
  await write(stream, format === 'threadline' ? `{\n"threadline": ${JSON.stringify({ version: 1, exportedAt: new Date().toISOString() })},\n` : '{\n')
  for (const [i, table] of TABLES.entries()) {
    await write(stream, `${JSON.stringify(table)}: [`)
    let afterId = 0
    for (;;) {
      const rows = await SOURCES[table].select(db, afterId)
      if (rows.length === 0) break
      const lines = rows.map((row, j) => `${written[table] === 0 && j === 0 ? '' : ','}\n  ${JSON.stringify(SOURCES[table][format](row))}`)
      written[table] += rows.length
      await write(stream, lines.join(''))
      done += rows.length
      onProgress(done, total)
      afterId = rows[rows.length - 1]!.id
      if (rows.length < BATCH_SIZE) break
    }
    await write(stream, `${written[table] === 0 ? '' : '\n'}]${i < TABLES.length - 1 ? ',' : ''}\n`)
  }
  await write(stream, '}\n')
  return written
}

/**
 * Runs `work` in one read-only transaction that sees one moment's data: PostgreSQL's REPEATABLE
 * READ (a snapshot taken at the first read, kept to the end); on SQLite any transaction is
 * that, and in WAL mode a server writing meanwhile is neither blocked nor seen.
 */
function inSnapshot<T>(db: Db, dialect: 'sqlite' | 'postgres', work: (trx: Db) => Promise<T>): Promise<T> {
  const transaction = dialect === 'postgres' ? db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only') : db.transaction()
  return transaction.execute(work)
}

export async function exportCommand(config: Config, options: ExportOptions): Promise<void> {
  const database = openDatabase(config.database)
  try {
    await migrateToLatest(database)
    const bar = createProgressBar(process.stderr, 'exporting')
    const run = (stream: Writable) =>
      inSnapshot(database.db, database.facts.dialect, (trx) => writeExport(trx, stream, options.format, (done, total) => bar.update(done, total)))
    const written = options.output === undefined ? await run(process.stdout) : await toFile(options.output, options.format, run)
    bar.done()
    if (options.output !== undefined) {
      console.error(`Exported ${written.users} users, ${written.posts} posts, ${written.comments} comments and ${written.todos} todos to ${options.output}.`)
    }
  } finally {
    await database.close()
  }
}

/**
 * Writes to a temporary file beside `path`, flushed to disk, then renamed over it: the file is
 * there whole or not at all (a failed export removes its temporary file and leaves an older export as it was).
 * Threadline's format carries password hashes, so that file is readable by its owner only.
 */
async function toFile<T>(path: string, format: ExportFormat, run: (stream: Writable) => Promise<T>): Promise<T> {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`)
  // flush: the data reaches the disk before the file is closed, so the rename never names a file still in memory.
  const stream = createWriteStream(temporary, { flags: 'wx', mode: format === 'threadline' ? 0o600 : 0o666, flush: true })
  const failed = once(stream, 'error').then(([error]) => Promise.reject(error as Error))
  failed.catch(() => {})
  try {
    await Promise.race([once(stream, 'open'), failed])
    const result = await run(stream)
    stream.end()
    await Promise.race([once(stream, 'close'), failed])
    await rename(temporary, path)
    return result
  } catch (error) {
    stream.destroy()
    await unlink(temporary).catch(() => {})
    throw error
  }
}

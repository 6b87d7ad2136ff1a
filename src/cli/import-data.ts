// `threadline import FILE`: loads a Threadline export or a JSONPlaceholder /db file, keeping ids.
// Two streaming passes, because a JSON object's keys have no order (posts may precede users): the
// first checks every row and gathers the ids that references need, the second checks each row again
// as it writes it (the file may have changed), in one transaction and batched inserts. A file with
// any problem writes nothing.
import { sql } from 'kysely'
import type { Config } from '../config.js'
import { parseId } from '../core/ids.js'
import { type Db, openDatabase } from '../db/create-database.js'
import { dialectFactsOf } from '../db/dialect-facts.js'
import { migrateToLatest } from '../db/migrate.js'
import { AppError } from '../errors.js'
import { MAX_BATCH_SIZE } from '../seed/seed-database.js'
import { rerunWithBoundedHeap } from './bounded-heap.js'
import { type Progress, createImportProgress } from './import-progress.js'
import { type Format, LONGEST_VALUE, type Row, checkMarker, checkRow, joinPath, toColumns } from './import-rows.js'
import { BadJsonError, MARKER, SECTIONS, type Section, type SectionVisitor, walkSections } from './json-sections.js'
import { withRereadableFile } from './spool.js'

/** Problems listed before "and N more": enough to fix a file by, few enough to read. */
const PROBLEM_CAP = 100
/** Rows per INSERT: well under SQLite's bound parameters (MAX_BATCH_SIZE is for 8-column users). */
const BATCH_SIZE = Math.min(500, MAX_BATCH_SIZE)
/** From this many rows, SQLite's search index is rebuilt once at the end (as a large seed does). */
const BULK_LOAD_ROWS = 10_000
/** Ids per `in (...)` when asking the database what it already holds. */
const LOOKUP_BATCH = 500

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`

/** Problems, each with its JSON path, the first PROBLEM_CAP of them kept. */
class Problems {
  readonly list: { field: string; message: string }[] = []
  count = 0
  /** Of them, ids and e-mails the database holds already. */
  inDatabase = 0
  add(path: string, message: string) {
    this.count++
    if (this.list.length < PROBLEM_CAP) this.list.push({ field: path, message })
  }
}

export interface ImportOptions {
  /** Empty comments, todos, posts, tokens and users first (in the same transaction). */
  replace: boolean
  /** Where progress goes: a bar on a terminal, plain lines otherwise. */
  progress?: Progress
  /** The file's name in messages, when the path read is a copy of it (spool.ts). @default the path */
  name?: string
}

export interface ImportSummary {
  format: Format
  users: number
  posts: number
  comments: number
  todos: number
  /** JSONPlaceholder: users made for comment e-mails no user has. */
  addedAuthors: number
  /** JSONPlaceholder: users whose username, address, phone, website or company were dropped. */
  droppedUserFields: number
  /** Sections of resources Threadline has not (FOREIGN_SECTIONS), with their lengths, in file order. */
  skipped: [string, number][]
}

/** What pass 1 learns: the format, the ids and references, and every problem. */
interface Scan {
  marker: boolean
  problems: Record<Format, Problems>
  /** Per section: id → the index of its row. */
  ids: Record<Section, Map<number, number>>
  emails: Map<string, number>
  /** Per section, in file order: the referenced ids of each row ([] if it had none). */
  refs: { postsUser: number[]; commentsPost: number[]; commentsAuthor: number[]; todosUser: number[] }
  /** JSONPlaceholder comments' e-mails by row index. */
  commentEmails: Map<number, string>
  order: Section[]
  droppedUserFields: number
  skipped: [string, number][]
}

const DROPPED_USER_FIELDS = ['username', 'address', 'phone', 'website', 'company']

async function scan(file: string, progress: Progress): Promise<Scan> {
  const result: Scan = {
    marker: false,
    problems: { threadline: new Problems(), jsonplaceholder: new Problems() },
    ids: { users: new Map(), posts: new Map(), comments: new Map(), todos: new Map() },
    emails: new Map(),
    refs: { postsUser: [], commentsPost: [], commentsAuthor: [], todosUser: [] },
    commentEmails: new Map(),
    order: [],
    droppedUserFields: 0,
    skipped: [],
  }
  // Until the marker is seen, a row is checked as either format; after, as the one it names.
  const formats = (): Format[] => (result.marker ? ['threadline'] : ['threadline', 'jsonplaceholder'])
  const both = (path: string, message: string) => {
    result.problems.threadline.add(path, message)
    result.problems.jsonplaceholder.add(path, message)
  }
  await walk(file, {
    onShapeProblem: both,
    onSkipped: (key, items) => result.skipped.push([key, items]),
    onMarker(value) {
      result.marker = true
      checkMarker(value, (field, message) => result.problems.threadline.add(joinPath(MARKER, field), message))
    },
    onSection(section) {
      if (result.order.includes(section)) both(section, 'appears twice')
      else result.order.push(section)
    },
    onBytes: (read, total) => progress.update('checking', read, total),
    onRow(section, index, value) {
      const path = `${section}[${index}]`
      for (const format of formats()) checkRow(format, section, value, (field, message) => result.problems[format].add(joinPath(path, field), message))
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return
      const row = value as Row
      // Only ids the API can name are looked up (the others are problems already), in the file and the database.
      const id = typeof row.id === 'number' ? parseId(row.id) : undefined
      if (id !== undefined) {
        const first = result.ids[section].get(id)
        if (first !== undefined) both(`${path}.id`, `${id} is also the id of ${section}[${first}]`)
        else result.ids[section].set(id, index)
      }
      const numberOr0 = (v: unknown) => (typeof v === 'number' ? (parseId(v) ?? 0) : 0)
      if (section === 'users') {
        if (typeof row.email === 'string') {
          const email = row.email.toLowerCase()
          const taken = result.emails.get(email)
          if (taken !== undefined) both(`${path}.email`, `taken by users[${taken}]`)
          else result.emails.set(email, index)
        }
        if (DROPPED_USER_FIELDS.some((field) => field in row)) result.droppedUserFields++
      } else if (section === 'posts') result.refs.postsUser[index] = numberOr0(row.userId)
      else if (section === 'todos') result.refs.todosUser[index] = numberOr0(row.userId)
      else {
        result.refs.commentsPost[index] = numberOr0(row.postId)
        result.refs.commentsAuthor[index] = numberOr0(row.authorId)
        if (!result.marker && typeof row.email === 'string') result.commentEmails.set(index, row.email)
      }
    },
  })
  return result
}

/** Of `ids`, those the table already holds. */
async function existing(db: Db, table: Section, ids: Iterable<number>): Promise<Set<number>> {
  const found = new Set<number>()
  let batch: number[] = []
  const flush = async () => {
    if (batch.length === 0) return
    for (const row of await db.selectFrom(table).select('id').where('id', 'in', batch).execute()) found.add(row.id)
    batch = []
  }
  for (const id of ids) {
    batch.push(id)
    if (batch.length === LOOKUP_BATCH) await flush()
  }
  await flush()
  return found
}

/** Of the lowercased `emails`, the users that hold them in the database: e-mail → id. */
async function existingEmails(db: Db, emails: Iterable<string>): Promise<Map<string, number>> {
  const found = new Map<string, number>()
  let batch: string[] = []
  const flush = async () => {
    if (batch.length === 0) return
    const rows = await db
      .selectFrom('users')
      .select(['id', 'email'])
      .where(sql<string>`lower(email)`, 'in', batch)
      .execute()
    for (const row of rows) found.set(row.email.toLowerCase(), row.id)
    batch = []
  }
  for (const email of emails) {
    batch.push(email)
    if (batch.length === LOOKUP_BATCH) await flush()
  }
  await flush()
  return found
}

/** The plan pass 2 follows: the checked scan plus the users to add for unknown comment e-mails. */
interface Plan {
  format: Format
  /** Comment e-mail (lowercased) → author id, for JSONPlaceholder. */
  authors: Map<string, number>
  addedAuthors: { id: number; email: string }[]
}

/** Checks what needs the whole file and the database: references, ids and e-mails already taken. */
async function checkAgainst(db: Db, found: Scan, replace: boolean): Promise<{ problems: Problems; plan: Plan }> {
  const format: Format = found.marker ? 'threadline' : 'jsonplaceholder'
  const problems = found.problems[format]
  const inDb = async (table: Section, ids: Iterable<number>) => (replace ? new Set<number>() : existing(db, table, ids))
  // An id the database holds already: refused without --replace.
  for (const section of SECTIONS) {
    const taken = await inDb(section, found.ids[section].keys())
    for (const id of taken) problems.add(`${section}[${found.ids[section].get(id)}].id`, `${id} exists`)
    problems.inDatabase += taken.size
  }
  if (!replace) {
    const taken = await existingEmails(db, found.emails.keys())
    for (const [email] of taken) problems.add(`users[${found.emails.get(email)}].email`, `${email} is taken in the database`)
    problems.inDatabase += taken.size
  }
  // References: to a row of the file, or (without --replace) of the database.
  const missing = async (table: 'users' | 'posts', refs: number[]) => {
    const absent = new Set<number>()
    for (const id of refs) if (id !== 0 && !found.ids[table].has(id)) absent.add(id)
    if (absent.size === 0) return absent
    for (const id of await inDb(table, absent)) absent.delete(id)
    return absent
  }
  const report = async (section: Section, field: string, table: 'users' | 'posts', refs: number[]) => {
    const absent = await missing(table, refs)
    refs.forEach((id, index) => {
      if (absent.has(id)) problems.add(`${section}[${index}].${field}`, `no ${table === 'users' ? 'user' : 'post'} ${id}`)
    })
  }
  await report('posts', 'userId', 'users', found.refs.postsUser)
  await report('todos', 'userId', 'users', found.refs.todosUser)
  await report('comments', 'postId', 'posts', found.refs.commentsPost)
  const plan: Plan = { format, authors: new Map(), addedAuthors: [] }
  if (format === 'threadline') await report('comments', 'authorId', 'users', found.refs.commentsAuthor)
  else {
    // Authors by e-mail: a user of the file, else of the database, else one made for it.
    const fileIds = new Map<number, number>()
    for (const [id, index] of found.ids.users) fileIds.set(index, id)
    for (const [email, index] of found.emails) plan.authors.set(email, fileIds.get(index) ?? 0)
    // Lowercased → as first written (the made user keeps the file's spelling).
    const unknown = new Map<string, string>()
    for (const email of found.commentEmails.values()) {
      const key = email.toLowerCase()
      if (!plan.authors.has(key) && !unknown.has(key)) unknown.set(key, email)
    }
    if (!replace) {
      for (const [email, id] of await existingEmails(db, unknown.keys())) {
        plan.authors.set(email, id)
        unknown.delete(email)
      }
    }
    let next = 0
    for (const id of found.ids.users.keys()) next = Math.max(next, id)
    if (!replace) {
      const row = await db
        .selectFrom('users')
        .select((eb) => eb.fn.max<number | null>('id').as('max'))
        .executeTakeFirst()
      next = Math.max(next, Number(row?.max ?? 0))
    }
    for (const [key, email] of unknown) {
      next++
      plan.authors.set(key, next)
      plan.addedAuthors.push({ id: next, email })
    }
  }
  return { problems, plan }
}

/** The walk both passes make: the file's sections, strings longer than any field refused unread. */
const walk = (file: string, visitor: SectionVisitor) => walkSections(file, visitor, { longestValue: LONGEST_VALUE })

/** A file that no longer says what pass 1 checked: nothing of it is written (the transaction rolls back). */
class FileChangedError extends Error {}
const changed = (path: string, message: string): never => {
  throw new FileChangedError(`${path}: ${message}`)
}

/**
 * Checks a row pass 2 is about to write as pass 1 did, and that it is the row pass 1 saw there (its
 * id, e-mail and references, which the database's constraints rely on).
 */
function recheck(found: Scan, format: Format, section: Section, index: number, value: unknown): Row {
  const path = `${section}[${index}]`
  checkRow(format, section, value, (field, message) => changed(joinPath(path, field), message))
  const row = value as Row
  const same = (field: string, seen: unknown, now: unknown) => {
    if (seen !== now) changed(joinPath(path, field), `was ${String(seen)} when the file was checked, is ${String(now)}`)
  }
  same('id', index, found.ids[section].get(row.id as number))
  if (section === 'users') same('email', index, found.emails.get(String(row.email).toLowerCase()))
  else if (section === 'posts') same('userId', found.refs.postsUser[index], row.userId)
  else if (section === 'todos') same('userId', found.refs.todosUser[index], row.userId)
  else {
    same('postId', found.refs.commentsPost[index], row.postId)
    if (format === 'threadline') same('authorId', found.refs.commentsAuthor[index], row.authorId)
    else same('email', found.commentEmails.get(index)?.toLowerCase(), String(row.email).toLowerCase())
  }
  return row
}

/** Writes the file's rows: in dependency order, walking the file again for a section it met too early. */
async function write(db: Db, file: string, found: Scan, plan: Plan, progress: Progress, now: string): Promise<void> {
  const written = new Set<Section>()
  const needs: Record<Section, Section[]> = { users: [], posts: ['users'], todos: ['users'], comments: ['users', 'posts'] }
  if (plan.addedAuthors.length > 0) {
    for (let i = 0; i < plan.addedAuthors.length; i += BATCH_SIZE) {
      const rows = plan.addedAuthors.slice(i, i + BATCH_SIZE).map(({ id, email }) => ({
        id,
        name: email.split('@')[0] || email,
        email,
        age: null,
        avatar: null,
        role: 'user' as const,
        password_hash: null,
        created_at: now,
        updated_at: now,
      }))
      await db.insertInto('users').values(rows).execute()
    }
  }
  const authorOf = (email: string) => plan.authors.get(email)
  const present = found.order
  while (present.some((s) => !written.has(s))) {
    // This walk writes every section, in file order, whose dependencies are written before it.
    const thisWalk = new Set<Section>()
    for (const section of present) {
      if (written.has(section)) continue
      if (needs[section].every((s) => written.has(s) || thisWalk.has(s) || !present.includes(s))) thisWalk.add(section)
    }
    let batch: Row[] = []
    let batchSection: Section | undefined
    const flush = async () => {
      if (batch.length === 0 || batchSection === undefined) return
      await db
        .insertInto(batchSection)
        .values(batch as never)
        .execute()
      batch = []
    }
    const seen = new Set<Section>()
    await walk(file, {
      onShapeProblem: changed,
      wants: (section) => thisWalk.has(section),
      onBytes: (read, total) => progress.update('writing', read, total),
      onSection: (section) => {
        if (seen.has(section) || !present.includes(section)) changed(section, 'was not in the file, or not once, when it was checked')
        seen.add(section)
        batchSection = section
      },
      async onRow(section, index, value) {
        batch.push(toColumns(plan.format, section, recheck(found, plan.format, section, index, value), authorOf, now))
        if (batch.length === BATCH_SIZE) await flush()
      },
      async onSectionEnd(section, rows) {
        if (!thisWalk.has(section)) return
        if (rows !== found.ids[section].size) changed(section, `had ${found.ids[section].size} rows when the file was checked, has ${rows}`)
        await flush()
      },
    })
    for (const section of thisWalk) {
      if (!seen.has(section)) changed(section, 'is no longer in the file')
      written.add(section)
    }
  }
}

/** A file with problems: every one listed (to PROBLEM_CAP) in the error's details, and how to go on. */
export class ImportProblemsError extends AppError {
  constructor(file: string, problems: Problems) {
    const more = problems.count - problems.list.length
    const also = [
      ...(more > 0 ? [`and ${count(more, 'more problem')} (the first ${problems.list.length} are listed)`] : []),
      ...(problems.inDatabase > 0
        ? [
            `${problems.inDatabase} of the problems are ids or e-mails the database holds already: --replace replaces the database's data (users, posts, comments, todos and tokens) with the file's`,
          ]
        : []),
    ]
    super('VALIDATION_ERROR', `${file}: ${count(problems.count, 'problem')}; nothing was imported`, [
      ...problems.list,
      ...also.map((message) => ({ field: '', message })),
    ])
  }
}

/**
 * Imports `file` into the database (migrated already): checks it whole, then writes it in one
 * transaction. Throws ImportProblemsError, or AppError for a file that is not JSON or changed.
 */
export async function importFile(db: Db, file: string, options: ImportOptions): Promise<ImportSummary> {
  const progress = options.progress ?? createImportProgress(undefined)
  const name = options.name ?? file
  let found: Scan
  try {
    found = await scan(file, progress)
  } catch (error) {
    if (error instanceof BadJsonError) throw new AppError('BAD_REQUEST', `${name}: ${error.message}; nothing was imported`)
    throw error
  }
  const now = new Date().toISOString()
  const summary = await db
    .transaction()
    .execute(async (trx) => {
      const { problems, plan } = await checkAgainst(trx, found, options.replace)
      if (problems.count > 0) throw new ImportProblemsError(name, problems)
      const rows = SECTIONS.reduce((sum, s) => sum + found.ids[s].size, 0)
      const load = async () => {
        if (options.replace) await emptyTables(trx)
        await write(trx, file, found, plan, progress, now)
      }
      await (rows >= BULK_LOAD_ROWS || options.replace ? dialectFactsOf(trx).bulkLoad(trx, load) : load())
      await moveSequences(trx)
      return {
        format: plan.format,
        users: found.ids.users.size,
        posts: found.ids.posts.size,
        comments: found.ids.comments.size,
        todos: found.ids.todos.size,
        addedAuthors: plan.addedAuthors.length,
        droppedUserFields: plan.format === 'jsonplaceholder' ? found.droppedUserFields : 0,
        skipped: found.skipped,
      }
    })
    .catch((error: unknown) => {
      if (error instanceof FileChangedError || error instanceof BadJsonError) {
        throw new AppError('CONFLICT', `${name} changed while it was read (${error.message}); nothing was imported`)
      }
      throw error
    })
  progress.done()
  return summary
}

/** Empties every table of data, children first (tokens belong to users). */
export async function emptyTables(db: Db): Promise<void> {
  for (const table of ['comments', 'todos', 'posts', 'tokens', 'users'] as const) await db.deleteFrom(table).execute()
}

/**
 * The next id of each table is the highest one's successor: PostgreSQL's sequences are not moved
 * by explicit ids at all, and SQLite's AUTOINCREMENT remembers ids of rows a --replace deleted.
 */
export async function moveSequences(db: Db): Promise<void> {
  for (const table of ['users', 'posts', 'comments', 'todos', 'tokens'] as const) {
    const highest = sql`coalesce((select max(id) from ${sql.table(table)}), 0)`
    if (dialectFactsOf(db).dialect === 'postgres') await sql`select setval(pg_get_serial_sequence(${table}, 'id'), ${highest} + 1, false)`.execute(db)
    else await sql`update sqlite_sequence set seq = ${highest} where name = ${table}`.execute(db)
  }
}

/** The summary line's words. */
export function describeImport(summary: ImportSummary, seconds: number): string {
  const counts = `${count(summary.users, 'user')}, ${count(summary.posts, 'post')}, ${count(summary.comments, 'comment')} and ${count(summary.todos, 'todo')}`
  const notes: string[] = []
  if (summary.format === 'jsonplaceholder') {
    if (summary.droppedUserFields > 0) notes.push(`dropped username, address, phone, website, company of ${count(summary.droppedUserFields, 'user')}`)
    if (summary.addedAuthors > 0) notes.push(`added ${count(summary.addedAuthors, 'user')} for comment e-mails no user had`)
  }
  if (summary.skipped.length > 0) {
    const sections = summary.skipped.map(([key, items]) => `${key} (${items.toLocaleString('en-US')})`).join(', ')
    notes.push(`skipped ${sections}: Threadline has no such resources`)
  }
  const format = summary.format === 'jsonplaceholder' ? 'jsonplaceholder' : ''
  const said = [format, notes.join('; ')].filter((part) => part !== '').join(': ')
  return `Imported ${counts} in ${seconds.toFixed(1)} s${said === '' ? '' : ` (${said})`}`
}

export interface ImportCommandOptions {
  replace?: boolean
  /** The copy of FILE to read, made by the process that started this one (spool.ts). */
  spool?: string
}

export async function importCommand(config: Config, file: string, options: ImportCommandOptions): Promise<void> {
  await withRereadableFile(file, options.spool, async (path, handOn) => {
    const exitCode = await rerunWithBoundedHeap(path, handOn)
    if (exitCode !== undefined) {
      process.exitCode = exitCode
      return
    }
    const database = openDatabase(config.database)
    try {
      await migrateToLatest(database)
      const started = performance.now()
      const progress = createImportProgress(process.stdout)
      const summary = await importFile(database.db, path, { replace: options.replace === true, progress, name: file })
      console.log(describeImport(summary, (performance.now() - started) / 1000))
    } finally {
      await database.close()
    }
  })
}

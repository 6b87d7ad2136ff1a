// What differs between the SQL dialects, as named facts: one object per dialect, and nowhere else.
// Migrations and queries ask these instead of branching on the dialect's name.
import {
  type ColumnDataType,
  type ColumnDefinitionBuilder,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  PostgresAdapter,
  type QueryExecutorProvider,
  type RawBuilder,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tables and aliases of a joined window vary by caller
type AnySelect = SelectQueryBuilder<any, any, any>
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export type WindowBuilder = ExpressionBuilder<any, any>

/** A column type: a name Kysely knows, or raw SQL (`text collate "C"`). */
type DataTypeExpression = ColumnDataType | Expression<unknown>

export interface DialectFacts {
  readonly dialect: 'sqlite' | 'postgres'
  /**
   * Whether a write of one statement may commit on its own, what it changed told as it commits
   * (SQLite: to this process; another process sees the file's version move). On PostgreSQL the
   * other instances hear of a write by a NOTIFY sent in its transaction, so one statement still
   * runs in a transaction.
   */
  readonly writesAlone: boolean
  /** Column type for instants. */
  readonly timestampType: DataTypeExpression
  /** Column type for text: compared and sorted by code point on every dialect. */
  readonly textType: DataTypeExpression
  /** Makes an integer column the primary key, with ids that are never reused after a delete. */
  autoIncrementPrimaryKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder
  /**
   * `column` contains `pattern` regardless of (ASCII) case: a LIKE pattern, `\` escaping `%` and `_`.
   * The one piece of search SQL, and the one that decides; PostgreSQL's ILIKE can use a trigram
   * index on its own, SQLite's LIKE scans unless `searchCandidates` narrows the rows first.
   */
  matches(column: Expression<unknown>, pattern: string): Expression<SqlBool>
  /**
   * The ids of at most `limit` rows whose `columns` contain `term` by the dialect's full-text
   * index (at least every row `matches` would keep, maybe more), or undefined where `matches`
   * uses its index itself. For a term of at least MIN_INDEXED_SEARCH characters: a trigram index
   * has nothing to look up for a shorter one.
   */
  searchCandidates(search: IndexedSearch, limit: number): RawBuilder<{ id: number }> | undefined
  /** Creates the indexes that help `matches` on these columns, where the dialect has them. */
  createSearchIndexes(db: Kysely<unknown>, columns: readonly SearchedColumn[]): Promise<void>
  dropSearchIndexes(db: Kysely<unknown>, columns: readonly SearchedColumn[]): Promise<void>
  /** Creates, fills and keeps in sync the full-text index `searchCandidates` reads, where the dialect needs one. */
  createTextSearch(db: Kysely<unknown>, tables: readonly SearchedTable[]): Promise<void>
  dropTextSearch(db: Kysely<unknown>, tables: readonly SearchedTable[]): Promise<void>
  /**
   * Where the dialect keeps its full-text indexes in pieces that later writes merge (FTS5's
   * segments): sets how each index merges them (TEXT_SEARCH_AUTOMERGE) and merges it into one
   * piece. What a bulk fill leaves in pieces, each write after it pays for in merges of that size.
   */
  compactTextSearch(db: Kysely<unknown>): Promise<void>
  /**
   * Runs `work` (bulk inserts, in the caller's transaction) with that index's upkeep set aside,
   * then indexes every row at once: several times faster than row by row (20,000 users and
   * 100,000 posts: 23 s instead of 88 s), but it costs what the whole table costs, so only for
   * writes that are large beside it. Then, where the planner keeps statistics apart from the
   * tables (PostgreSQL), they are gathered again for what the load wrote.
   */
  bulkLoad<T>(db: QueryExecutorProvider, work: () => Promise<T>): Promise<T>
  /**
   * Joins to each row of `parents` the rows of `table` whose ids `windowIds` selects for that
   * parent (a correlated query of `table as child`: ordered, limited): a window of every parent's
   * list in one statement, costing what the windows hold, never the size of a parent's whole list.
   * The rows are named `table` in the query it returns.
   */
  joinWindow(parents: AnySelect, table: string, windowIds: (eb: WindowBuilder) => AnySelect): AnySelect
  /** Locks the rows the query reads (of `table` only, if given) until the transaction ends. */
  lockRows<Q extends AnySelect>(query: Q, table?: string): Q
}

export interface SearchedColumn {
  readonly table: string
  readonly column: string
}

/** A table's searchable text columns, indexed together; `id` is its integer primary key. */
export interface SearchedTable {
  readonly table: string
  readonly columns: readonly string[]
}

/** A search term (the text itself, not a LIKE pattern) in some columns of a table. */
export interface IndexedSearch {
  readonly table: string
  /** Unqualified column names. */
  readonly columns: readonly string[]
  readonly term: string
}

/** Trigram indexes look up runs of 3 characters (code points): shorter terms cannot use them. */
export const MIN_INDEXED_SEARCH = 3

export const sqliteFacts: DialectFacts = {
  dialect: 'sqlite',
  writesAlone: true,
  // SQLite has no instant type: ISO 8601 text in UTC sorts and compares correctly.
  timestampType: 'text',
  // SQLite's BINARY collation compares UTF-8 bytes, which is code point order.
  textType: 'text',
  autoIncrementPrimaryKey: (column) => column.primaryKey().autoIncrement(),
  matches: (column, pattern) => sql<SqlBool>`lower(${column}) like lower(${pattern}) escape ${'\\'}`,
  // FTS5's trigram tokenizer: the rows whose columns hold every trigram of the term in a row. It
  // folds case beyond ASCII (É matches é), which lower() does not: it names more rows than
  // `matches` keeps, never fewer, and `matches` decides.
  searchCandidates: ({ table, columns, term }, limit) => {
    const index = sql.table(textSearchTable(table))
    const query = `{${columns.join(' ')}} : "${term.replaceAll('"', '""')}"`
    return sql<{ id: number }>`select rowid as id from ${index} where ${index} match ${query} limit ${limit}`
  },
  createSearchIndexes: async () => {},
  dropSearchIndexes: async () => {},
  async createTextSearch(db, tables) {
    for (const { table, columns } of tables) {
      const index = sql.table(textSearchTable(table))
      const names = sql.join(columns.map((c) => sql.ref(c)))
      const values = (row: 'new' | 'old') => sql.join(columns.map((c) => sql.ref(`${row}.${c}`)))
      // External content: the index holds trigrams only, the text stays in the table. case_sensitive 0
      // folds case; remove_diacritics stays 0 (its default for trigram), so é is not e, as in LIKE.
      await sql`create virtual table ${index} using fts5(${names}, content=${sql.lit(table)}, content_rowid='id', tokenize='trigram case_sensitive 0')`.execute(
        db,
      )
      await setAutomerge(db, textSearchTable(table))
      const trigger = (suffix: string) => sql.id(`${textSearchTable(table)}_${suffix}`)
      const remove = sql`insert into ${index} (${index}, rowid, ${names}) values ('delete', old.id, ${values('old')});`
      const add = sql`insert into ${index} (rowid, ${names}) values (new.id, ${values('new')});`
      await sql`create trigger ${trigger('insert')} after insert on ${sql.table(table)} begin ${add} end`.execute(db)
      await sql`create trigger ${trigger('delete')} after delete on ${sql.table(table)} begin ${remove} end`.execute(db)
      await sql`create trigger ${trigger('update')} after update of ${names} on ${sql.table(table)} begin ${remove} ${add} end`.execute(db)
      // The rows already there (a database made before this migration).
      await fillTextSearch(db, textSearchTable(table))
    }
  },
  async compactTextSearch(db) {
    for (const name of await textSearchIndexes(db)) {
      await setAutomerge(db, name)
      await textSearchCommand(db, name, 'optimize')
    }
  },
  async bulkLoad(db, work) {
    const triggers = (
      await sql<{
        name: string
        sql: string
      }>`select name, sql from sqlite_master where type = 'trigger' and name like ${'%\\_search\\_%'} escape ${'\\'}`.execute(db)
    ).rows
    const indexes = await textSearchIndexes(db)
    for (const { name } of triggers) await sql`drop trigger ${sql.id(name)}`.execute(db)
    const result = await work()
    for (const name of indexes) await fillTextSearch(db, name)
    for (const trigger of triggers) await sql.raw(trigger.sql).execute(db)
    return result
  },
  async dropTextSearch(db, tables) {
    for (const { table } of tables) {
      // The triggers belong to the table, not to the index: they would write to a table gone.
      for (const suffix of ['insert', 'delete', 'update']) await sql`drop trigger if exists ${sql.id(`${textSearchTable(table)}_${suffix}`)}`.execute(db)
      await sql`drop table if exists ${sql.table(textSearchTable(table))}`.execute(db)
    }
  },
  // SQLite has no LATERAL; it runs `id IN (correlated query)` once per parent, by the index.
  joinWindow: (parents, table, windowIds) => parents.innerJoin(table, (join) => join.on((eb) => eb(`${table}.id`, 'in', windowIds(eb)))),
  // One writer at a time: nothing to lock (and no FOR UPDATE in its grammar).
  lockRows: (query) => query,
}

export const postgresFacts: DialectFacts = {
  dialect: 'postgres',
  writesAlone: false,
  timestampType: 'timestamptz',
  // "C": code point order and ASCII-only lower(), as on SQLite, whatever the server's locale.
  textType: sql`text collate "C"`,
  // An identity's sequence never hands out a number twice, deleted rows included.
  autoIncrementPrimaryKey: (column) => column.primaryKey().generatedByDefaultAsIdentity(),
  matches: (column, pattern) => sql<SqlBool>`${column} ilike ${pattern} escape ${'\\'}`,
  // The trigram GIN indexes of createSearchIndexes serve the ILIKE of `matches` directly.
  searchCandidates: () => undefined,
  // The trigram indexes are the columns' own (createSearchIndexes): nothing to keep in sync.
  createTextSearch: async () => {},
  dropTextSearch: async () => {},
  compactTextSearch: async () => {},
  // Without statistics of what was loaded, the planner plans for the tables it last saw, empty:
  // a page of 20 of 10,000 users, by name, read every user's row and sorted them (3.3 ms, against
  // 0.23 ms by the index once analyzed), for the minute or more until autovacuum came by. ANALYZE
  // runs in the load's transaction, samples the rows it wrote, and its statistics commit with them.
  async bulkLoad(db, work) {
    const result = await work()
    const { rows } = await sql<{ name: string }>`select c.relname as name from pg_class c join pg_namespace ns on ns.oid = c.relnamespace
      where ns.nspname = current_schema() and c.relkind = 'r' order by c.relname`.execute(db)
    if (rows.length > 0) await sql`analyze ${sql.join(rows.map(({ name }) => sql.table(name)))}`.execute(db)
    return result
  },
  async createSearchIndexes(db, columns) {
    const schema = await trigramSchema(db)
    if (schema === undefined) return
    for (const { table, column } of columns) {
      const index = sql.id(trigramIndexName(table, column))
      await sql`create index ${index} on ${sql.table(table)} using gin (${sql.ref(column)} ${sql.id(schema, 'gin_trgm_ops')})`.execute(db)
    }
  },
  // PostgreSQL would test that IN against every (parent, row) pair; LATERAL runs the window once
  // per parent. The window reads the rows it finds (under the table's name), not only their ids:
  // its index scan visits each row anyway, and a join by id would look each up again (the nested
  // users { posts } window of 20 users: 0.46 ms, 0.19 ms so).
  joinWindow: (parents, table, windowIds) =>
    parents.innerJoinLateral(
      (eb) => windowIds(eb).clearSelect().selectAll('child').as(table),
      (join) => join.onTrue(),
    ),
  lockRows: (query, table) => query.forUpdate(table) as typeof query,
  async dropSearchIndexes(db, columns) {
    for (const { table, column } of columns) {
      await sql`drop index if exists ${sql.id(trigramIndexName(table, column))}`.execute(db)
    }
  },
}

const trigramIndexName = (table: string, column: string) => `${table}_${column}_trgm_idx`
const textSearchTable = (table: string) => `${table}_search`

/** The FTS5 indexes of a SQLite database, by name. */
async function textSearchIndexes(db: QueryExecutorProvider): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and sql like ${'create virtual table%fts5%'}`.execute(db)
  return rows.map(({ name }) => name)
}

/**
 * How many segments of one level an FTS5 index's writes merge into one (FTS5's default: 4). Each
 * write (a transaction) adds a segment, and the merges of the levels above run in steps of 64
 * writes: with 4, from 25,000 posts written after a compaction every 64th insert took 30-51 ms
 * (79 of 60,000 over 10 ms); with 8, 6 of 40,000 did, none over 23 ms, and the writes took a fifth
 * less time in all. A search reads more segments (16 instead of 9 after 30,000 inserts) at the same
 * speed: 23-350 µs either way.
 */
const TEXT_SEARCH_AUTOMERGE = 8

/** The count as a literal: bound, better-sqlite3 gives a number as a float, and FTS5 refuses it. */
async function setAutomerge(db: QueryExecutorProvider, name: string): Promise<void> {
  const index = sql.table(name)
  await sql`insert into ${index} (${sql.ref(name)}, rank) values ('automerge', ${sql.lit(TEXT_SEARCH_AUTOMERGE)})`.execute(db)
}

/**
 * Indexes every row of an FTS5 index's table, in one segment. The rebuild alone writes a segment
 * for each megabyte or so of trigrams (9 for 100,000 posts), which FTS5's merges then take as
 * small ones: every 64th insert after it merged some of them (14 ms each, 50 ms and more now and
 * then), where after the optimize the slowest of 20,000 inserts took 21 ms and the 99th
 * percentile 1 ms.
 */
async function fillTextSearch(db: QueryExecutorProvider, name: string): Promise<void> {
  await textSearchCommand(db, name, 'rebuild')
  await textSearchCommand(db, name, 'optimize')
}

/** One of FTS5's commands on an index: an insert into the column named as the index. */
async function textSearchCommand(db: QueryExecutorProvider, name: string, command: 'rebuild' | 'optimize'): Promise<void> {
  await sql`insert into ${sql.table(name)} (${sql.ref(name)}) values (${sql.lit(command)})`.execute(db)
}

/**
 * The schema pg_trgm lives in, installing it first when it is not: it ships with PostgreSQL's
 * contrib and is trusted (a database owner may create it). Undefined when the server lacks it or
 * this user may not create it: then a search scans, as on SQLite. The migration runs in a
 * transaction, so a refused CREATE is undone to a savepoint rather than failing it.
 */
async function trigramSchema(db: Kysely<unknown>): Promise<string | undefined> {
  const installed = async () =>
    (
      await sql<{
        schema: string
      }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db)
    ).rows[0]?.schema
  const before = await installed()
  if (before !== undefined) return before
  const { rows } = await sql`select 1 from pg_available_extensions where name = 'pg_trgm'`.execute(db)
  if (rows.length === 0) return undefined
  await sql`savepoint install_pg_trgm`.execute(db)
  try {
    await sql`create extension if not exists pg_trgm`.execute(db)
    await sql`release savepoint install_pg_trgm`.execute(db)
  } catch {
    // Not allowed, or another migration (of another schema) installed it at the same moment.
    await sql`rollback to savepoint install_pg_trgm`.execute(db)
  }
  return installed()
}

/** The DialectFacts of the dialect a Kysely instance speaks (for queries, which get the instance alone). */
export function dialectFactsOf(db: Pick<Kysely<never>, 'getExecutor'>): DialectFacts {
  return db.getExecutor().adapter instanceof PostgresAdapter ? postgresFacts : sqliteFacts
}

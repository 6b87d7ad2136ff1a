// What differs between the SQL dialects, as named facts: one object per dialect, and nowhere else.
// Migrations and queries ask these instead of branching on the dialect's name.
import {
  type ColumnDataType,
  type ColumnDefinitionBuilder,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  PostgresAdapter,
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
  /** Column type for instants. */
  readonly timestampType: DataTypeExpression
  /** Column type for text: compared and sorted by code point on every dialect. */
  readonly textType: DataTypeExpression
  /** Makes an integer column the primary key, with ids that are never reused after a delete. */
  autoIncrementPrimaryKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder
  /**
   * `column` contains `pattern` regardless of (ASCII) case: a LIKE pattern, `\` escaping `%` and `_`.
   * The one piece of search SQL; PostgreSQL's ILIKE can use a trigram index, SQLite scans.
   */
  matches(column: Expression<unknown>, pattern: string): Expression<SqlBool>
  /** Creates the indexes that help `matches` on these columns, where the dialect has them. */
  createSearchIndexes(db: Kysely<unknown>, columns: readonly SearchedColumn[]): Promise<void>
  dropSearchIndexes(db: Kysely<unknown>, columns: readonly SearchedColumn[]): Promise<void>
  /**
   * Joins to each row of `parents` the rows of `table` whose ids `windowIds` selects for that
   * parent (a correlated query: ordered, limited): a window of every parent's list in one
   * statement, costing what the windows hold, never the size of a parent's whole list.
   */
  joinWindow(parents: AnySelect, table: string, windowIds: (eb: WindowBuilder) => AnySelect): AnySelect
  /** Locks the rows the query reads (of `table` only, if given) until the transaction ends. */
  lockRows<Q extends AnySelect>(query: Q, table?: string): Q
}

export interface SearchedColumn {
  readonly table: string
  readonly column: string
}

export const sqliteFacts: DialectFacts = {
  dialect: 'sqlite',
  // SQLite has no instant type: ISO 8601 text in UTC sorts and compares correctly.
  timestampType: 'text',
  // SQLite's BINARY collation compares UTF-8 bytes, which is code point order.
  textType: 'text',
  autoIncrementPrimaryKey: (column) => column.primaryKey().autoIncrement(),
  // LIKE needs no index here: the search is a scan, bounded by the page's limit.
  matches: (column, pattern) => sql<SqlBool>`lower(${column}) like lower(${pattern}) escape ${'\\'}`,
  createSearchIndexes: async () => {},
  dropSearchIndexes: async () => {},
  // SQLite has no LATERAL; it runs `id IN (correlated query)` once per parent, by the index.
  joinWindow: (parents, table, windowIds) => parents.innerJoin(table, (join) => join.on((eb) => eb(`${table}.id`, 'in', windowIds(eb)))),
  // One writer at a time: nothing to lock (and no FOR UPDATE in its grammar).
  lockRows: (query) => query,
}

export const postgresFacts: DialectFacts = {
  dialect: 'postgres',
  timestampType: 'timestamptz',
  // "C": code point order and ASCII-only lower(), as on SQLite, whatever the server's locale.
  textType: sql`text collate "C"`,
  // An identity's sequence never hands out a number twice, deleted rows included.
  autoIncrementPrimaryKey: (column) => column.primaryKey().generatedByDefaultAsIdentity(),
  matches: (column, pattern) => sql<SqlBool>`${column} ilike ${pattern} escape ${'\\'}`,
  async createSearchIndexes(db, columns) {
    const schema = await trigramSchema(db)
    if (schema === undefined) return
    for (const { table, column } of columns) {
      const index = sql.id(trigramIndexName(table, column))
      await sql`create index ${index} on ${sql.table(table)} using gin (${sql.ref(column)} ${sql.id(schema, 'gin_trgm_ops')})`.execute(db)
    }
  },
  // PostgreSQL would test that IN against every (parent, row) pair; LATERAL runs the window once per parent.
  joinWindow: (parents, table, windowIds) =>
    parents.innerJoinLateral((eb) => windowIds(eb).as('window'), (join) => join.onTrue()).innerJoin(table, `${table}.id`, 'window.id'),
  lockRows: (query, table) => query.forUpdate(table) as typeof query,
  async dropSearchIndexes(db, columns) {
    for (const { table, column } of columns) {
      await sql`drop index if exists ${sql.id(trigramIndexName(table, column))}`.execute(db)
    }
  },
}

const trigramIndexName = (table: string, column: string) => `${table}_${column}_trgm_idx`

/**
 * The schema pg_trgm lives in, installing it first when it is not: it ships with PostgreSQL's
 * contrib and is trusted (a database owner may create it). Undefined when the server lacks it or
 * this user may not create it: then a search scans, as on SQLite. The migration runs in a
 * transaction, so a refused CREATE is undone to a savepoint rather than failing it.
 */
async function trigramSchema(db: Kysely<unknown>): Promise<string | undefined> {
  const installed = async () =>
    (await sql<{ schema: string }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db))
      .rows[0]?.schema
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

/** The facts of the dialect a Kysely instance speaks (for queries, which get the instance alone). */
export function factsOf(db: Pick<Kysely<never>, 'getExecutor'>): DialectFacts {
  return db.getExecutor().adapter instanceof PostgresAdapter ? postgresFacts : sqliteFacts
}

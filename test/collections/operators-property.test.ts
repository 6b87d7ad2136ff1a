// The operators of the collection query language against a model: random rows (ties, missing
// values, text beyond ASCII and beyond the BMP, e-mail in mixed case, instants), random conditions
// written as a client would (`age[gte]=1`, `name[in]=a,b`, repeated `ne`, instants with offsets),
// a random sort and page size; every page read by cursor (forward, then back by rel="prev") or by
// offset must give the rows an in-memory filter and sort of the same rows gives, and v1's total
// must count them. And whatever `field[op]=value` a client sends, the answer is 200 or 400, never 500.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { fuzzRuns } from '../helpers/fuzz.js'

type Value = string | number | boolean | null
type Row = Record<string, Value>
type Kind = 'integer' | 'text' | 'email' | 'enum' | 'instant' | 'boolean'

interface FieldModel {
  readonly kind: Kind
  readonly nullable?: boolean
  /** A value of a row (null where the field may be missing). */
  readonly stored: fc.Arbitrary<Value>
  /** A value a condition compares with, never null. */
  readonly asked: fc.Arbitrary<Value>
}

interface CollectionModel {
  readonly table: 'users' | 'posts' | 'todos'
  readonly fields: Record<string, FieldModel>
  /** Inserts the rows, answering their ids in order. */
  insert(t: TestApp, rows: Row[]): Promise<number[]>
  /** The list's path and the token that sees every row of it. */
  list(t: TestApp, version: 1 | 2): { path: string; token: string }
}

const INSTANTS = ['1999-12-31T23:59:59.999Z', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.001Z', '2024-01-01T12:00:00.000Z', '2024-01-02T00:00:00.000Z']
/** Capitals sort before small letters, é after them, Ａ (U+FF21) before 😀 (U+1F600) by code point though not by UTF-16 unit. */
const TEXT = fc.string({ unit: fc.constantFrom('a', 'b', 'B', 'Z', 'é', 'Ａ', '😀', ' ', ','), minLength: 1, maxLength: 3 })
const instant: FieldModel = { kind: 'instant', stored: fc.constantFrom(...INSTANTS), asked: fc.constantFrom(...INSTANTS) }
/** e-mail addresses stay ASCII (SQLite's lower() folds nothing else): `<local>.<row number>@x.io`, unique within a run. */
const LOCAL = fc.string({ unit: fc.constantFrom('a', 'A', 'b', 'B', 'z'), minLength: 1, maxLength: 2 })
const ADDRESS = fc.tuple(LOCAL, fc.integer({ min: 0, max: 3 })).map(([local, i]) => `${local}.${i}@x.io`)

const USERS: CollectionModel = {
  table: 'users',
  fields: {
    age: { kind: 'integer', nullable: true, stored: fc.option(fc.integer({ min: -2, max: 2 }), { nil: null }), asked: fc.integer({ min: -3, max: 3 }) },
    name: { kind: 'text', stored: TEXT, asked: TEXT },
    email: { kind: 'email', stored: LOCAL, asked: fc.oneof(LOCAL, ADDRESS) },
    role: { kind: 'enum', stored: fc.constantFrom('user', 'admin'), asked: fc.constantFrom('user', 'admin') },
    createdAt: instant,
  },
  async insert(t, rows) {
    const values = rows.map((row, i) => ({
      name: row.name as string,
      email: `${row.email as string}.${i}@x.io`,
      age: row.age as number | null,
      role: row.role as 'user' | 'admin',
      created_at: row.createdAt as string,
      updated_at: row.createdAt as string,
    }))
    rows.forEach((row, i) => (row.email = values[i]!.email))
    return (await t.database.db.insertInto('users').values(values).returning('id').execute()).map((row) => row.id)
  },
  list: (_t, version) => ({ path: `/api/v${version}/users`, token: '' }),
}

const POSTS: CollectionModel = {
  table: 'posts',
  fields: {
    title: { kind: 'text', stored: TEXT, asked: TEXT },
    status: { kind: 'enum', stored: fc.constantFrom('draft', 'published'), asked: fc.constantFrom('draft', 'published') },
    publishedAt: { ...instant, nullable: true, stored: fc.option(fc.constantFrom(...INSTANTS), { nil: null }) },
    createdAt: instant,
  },
  async insert(t, rows) {
    const values = rows.map((row) => ({
      user_id: t.alice.id,
      title: row.title as string,
      content: '.',
      status: row.status as 'draft' | 'published',
      published_at: row.publishedAt as string | null,
      created_at: row.createdAt as string,
      updated_at: row.createdAt as string,
    }))
    return (await t.database.db.insertInto('posts').values(values).returning('id').execute()).map((row) => row.id)
  },
  list: (t, version) => ({ path: `/api/v${version}/users/${t.alice.id}/posts`, token: t.tokens.alice }),
}

const TODOS: CollectionModel = {
  table: 'todos',
  fields: {
    text: { kind: 'text', stored: TEXT, asked: TEXT },
    completed: { kind: 'boolean', stored: fc.boolean(), asked: fc.boolean() },
    createdAt: instant,
  },
  async insert(t, rows) {
    const values = rows.map((row) => ({
      user_id: t.bob.id,
      text: row.text as string,
      completed: row.completed === true ? 1 : 0,
      created_at: row.createdAt as string,
      updated_at: row.createdAt as string,
    }))
    return (await t.database.db.insertInto('todos').values(values).returning('id').execute()).map((row) => row.id)
  },
  list: (t, version) => ({ path: `/api/v${version}/users/${t.bob.id}/todos`, token: t.tokens.bob }),
}

type Operator = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'null'
interface Condition {
  readonly field: string
  readonly operator: Operator
  /** eq, ne, in: one or more (null: a missing value); a range: one; null: true or false. */
  readonly values: readonly Value[]
  /** eq only: written `field=v` rather than `field[eq]=v`. */
  readonly plain: boolean
}

function operatorsFor(model: FieldModel): Operator[] {
  const ranges: Operator[] = model.kind === 'enum' || model.kind === 'boolean' ? [] : ['gt', 'gte', 'lt', 'lte']
  return ['eq', 'ne', 'in', ...ranges, ...(model.nullable ? (['null'] as const) : [])]
}

function conditionOf(fields: Record<string, FieldModel>): fc.Arbitrary<Condition> {
  return fc.constantFrom(...Object.keys(fields)).chain((field) => {
    const model = fields[field] as FieldModel
    const value = model.nullable ? fc.oneof({ weight: 4, arbitrary: model.asked }, { weight: 1, arbitrary: fc.constant(null) }) : model.asked
    return fc.constantFrom(...operatorsFor(model)).chain((operator) => {
      const values =
        operator === 'null'
          ? fc.boolean().map((b) => [b])
          : ['eq', 'ne', 'in'].includes(operator)
            ? fc.array(value, { minLength: 1, maxLength: 3 })
            : model.asked.map((v) => [v])
      return fc.record({ field: fc.constant(field), operator: fc.constant(operator), values, plain: fc.boolean() })
    })
  })
}

/** An instant written with another offset (or none shorter), naming the same moment. */
function written(value: Value, offsetMinutes: number): string {
  if (offsetMinutes === 0) return String(value)
  const shifted = new Date(Date.parse(String(value)) + offsetMinutes * 60_000).toISOString().slice(0, -1)
  const sign = offsetMinutes < 0 ? '-' : '+'
  const abs = Math.abs(offsetMinutes)
  return `${shifted}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
}

/**
 * The conditions as a query string. A second condition with the key of an earlier one is left out
 * (a range or null given twice is refused; two eq or in lists would read as one), but for ne,
 * whose repeated values mean what two conditions mean.
 */
function queryOf(conditions: readonly Condition[], fields: Record<string, FieldModel>, offset: number): [URLSearchParams, Condition[]] {
  const params = new URLSearchParams()
  const kept: Condition[] = []
  const once = new Set<string>()
  for (const condition of conditions) {
    const key = `${condition.field}[${condition.operator}]`
    const text = (v: Value) => (v === null ? 'null' : fields[condition.field]?.kind === 'instant' ? written(v, offset) : String(v))
    const sent = condition.plain && condition.operator === 'eq' ? condition.field : key
    if (condition.operator !== 'ne') {
      if (once.has(sent)) continue
      once.add(sent)
    }
    kept.push(condition)
    if (condition.operator === 'null') params.append(key, String(condition.values[0]))
    else if (condition.operator === 'in') {
      const texts = condition.values.map(text)
      // A value holding a comma goes as a list of its own parameters (each one value); a list needs two.
      if (texts.some((v) => v.includes(','))) for (const v of texts.length === 1 ? [...texts, ...texts] : texts) params.append(key, v)
      else params.append(key, texts.join(','))
    } else for (const v of condition.values) params.append(sent, text(v))
  }
  return [params, kept]
}

/** Code-point order, as SQLite's BINARY and PostgreSQL's "C" collation compare UTF-8. */
function compareText(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0) as number)
  const y = [...b].map((c) => c.codePointAt(0) as number)
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  return x.length - y.length
}

function compare(kind: Kind, a: Value, b: Value): number {
  switch (kind) {
    case 'integer':
      return (a as number) - (b as number)
    case 'boolean':
      return Number(a) - Number(b)
    case 'instant':
      return Date.parse(a as string) - Date.parse(b as string)
    case 'email':
      return compareText((a as string).toLowerCase(), (b as string).toLowerCase())
    default:
      return compareText(a as string, b as string)
  }
}

function holds(row: Row, condition: Condition, fields: Record<string, FieldModel>): boolean {
  const { kind } = fields[condition.field] as FieldModel
  const value = row[condition.field] as Value
  const equal = (asked: Value) => (asked === null ? value === null : value !== null && compare(kind, value, asked) === 0)
  const asked = condition.values[0] as Value
  switch (condition.operator) {
    case 'eq':
    case 'in':
      return condition.values.some(equal)
    case 'ne':
      return !condition.values.some(equal)
    case 'null':
      return (value === null) === asked
    case 'gt':
      return value !== null && compare(kind, value, asked) > 0
    case 'gte':
      return value !== null && compare(kind, value, asked) >= 0
    case 'lt':
      return value !== null && compare(kind, value, asked) < 0
    case 'lte':
      return value !== null && compare(kind, value, asked) <= 0
  }
}

/** The rows' ids in the order of the sort (missing values smallest), the id last in the direction of the key before it. */
function expectedIds(rows: (Row & { id: number })[], sort: { field: string; descending: boolean } | null, fields: Record<string, FieldModel>): number[] {
  const descending = sort?.descending ?? false
  const sign = descending ? -1 : 1
  return [...rows]
    .sort((a, b) => {
      if (sort !== null) {
        const x = a[sort.field] as Value
        const y = b[sort.field] as Value
        const byKey = x === null || y === null ? Number(x !== null) - Number(y !== null) : compare((fields[sort.field] as FieldModel).kind, x, y)
        if (byKey !== 0) return sign * byKey
      }
      return sign * (a.id - b.id)
    })
    .map((row) => row.id)
}

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

describe.each([
  ['users (nullable integer, text, e-mail, enumeration, instant)', USERS],
  ['posts (an instant that may be missing, enumeration, text)', POSTS],
  ['todos (boolean, text, instant)', TODOS],
])('operators on %s', (_name, model) => {
  it('answers, page after page, the rows an in-memory filter and sort of the same rows gives', async () => {
    const sorts = fc.option(fc.record({ field: fc.constantFrom(...Object.keys(model.fields)), descending: fc.boolean() }), { nil: null })
    const rowOf = fc.record(Object.fromEntries(Object.entries(model.fields).map(([name, field]) => [name, field.stored])))
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowOf, { minLength: 1, maxLength: 12 }),
        fc.array(conditionOf(model.fields), { maxLength: 4 }),
        sorts,
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom<1 | 2>(1, 2),
        fc.constantFrom(0, 60, -90, 330),
        async (generated, conditions, sort, limit, version, offset) => {
          const rows = generated.map((row) => ({ ...row }))
          const ids = await model.insert(t, rows)
          try {
            const mine = rows.map((row, i) => ({ ...row, id: ids[i] as number }))
            const [params, kept] = queryOf(conditions, model.fields, offset)
            // Only this run's rows: the earlier runs' have smaller ids.
            params.set('id[gte]', String(ids[0]))
            if (sort !== null) params.set('sort', `${sort.descending ? '-' : ''}${sort.field}`)
            params.set('limit', String(limit))
            const expected = expectedIds(
              mine.filter((row) => kept.every((condition) => holds(row, condition, model.fields))),
              sort,
              model.fields,
            )
            const { path, token } = model.list(t, version)
            const read = async (url: string) => {
              const res = await t.request({ method: 'GET', url, ...(token === '' ? {} : { token }) })
              expect(res.statusCode, `${url}: ${res.body}`).toBe(200)
              return { body: res.json(), link: (res.headers.link as string | undefined) ?? '' }
            }
            const first = `${path}?${params.toString()}`
            const seen: number[][] = []
            let url: string | undefined = first
            let last = { link: '' }
            while (url !== undefined && seen.length <= expected.length) {
              const page = await read(url)
              seen.push(page.body.data.map((item: { id: number }) => item.id))
              if (version === 1 && url === first) expect(page.body.meta.pagination.total, first).toBe(expected.length)
              last = page
              url = /<([^>]+)>; rel="next"/.exec(page.link)?.[1]
            }
            expect(seen.flat(), first).toEqual(expected)
            if (version === 2 && seen.length > 1) {
              const back = [seen.at(-1) as number[]]
              url = /<([^>]+)>; rel="prev"/.exec(last.link)?.[1]
              while (url !== undefined && back.length <= seen.length) {
                const page = await read(url)
                back.unshift(page.body.data.map((item: { id: number }) => item.id))
                url = /<([^>]+)>; rel="prev"/.exec(page.link)?.[1]
              }
              expect(back, `${first}, back`).toEqual(seen)
            }
          } finally {
            await t.database.db.deleteFrom(model.table).where('id', 'in', ids).execute()
          }
        },
      ),
      fuzzRuns(40),
    )
  })
})

describe('any field[op]=value', () => {
  it('is answered 200 or 400 BAD_REQUEST naming the parameter, never 500', async () => {
    const names = fc.constantFrom('age', 'name', 'email', 'role', 'createdAt', 'publishedAt', 'status', 'completed', 'id', 'avatar', 'nope', '__proto__', '')
    const operators = fc.constantFrom('eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'null', '', 'GT', 'like', '0', '[gt]')
    const values = fc.oneof(
      fc.constantFrom(
        'null',
        'true',
        'false',
        '',
        ',',
        '1,,2',
        '2147483648',
        '-0',
        '1e3',
        'admin',
        'draft',
        '2024-02-30T00:00Z',
        '0001-01-01T00:00Z',
        '\u0000',
      ),
      fc.integer().map(String),
      fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
      fc.string({ maxLength: 8 }),
    )
    const pair = fc.tuple(names, operators, values, fc.boolean()).map(([name, op, value, bracketed]) => [bracketed ? `${name}[${op}]` : name, value] as const)
    const paths = fc.constantFrom('/api/v1/users', `/api/v2/users/${t.alice.id}/posts`, `/api/v2/users/${t.bob.id}/todos`)
    await fc.assert(
      fc.asyncProperty(fc.array(pair, { minLength: 1, maxLength: 4 }), paths, async (pairs, path) => {
        const url = `${path}?${new URLSearchParams(pairs.map(([key, value]) => [key, value])).toString()}`
        const res = await t.request({ method: 'GET', url, token: t.tokens.admin })
        expect([200, 400], `${url}: ${res.body}`).toContain(res.statusCode)
        if (res.statusCode === 400) {
          const { error } = res.json()
          expect(error.code).toBe('BAD_REQUEST')
          for (const detail of error.details)
            expect(
              pairs.map(([key]) => key),
              url,
            ).toContain(detail.field)
        }
      }),
      fuzzRuns(150),
    )
  })
})

// Runs once, on SQLite: a projection maps rows it is given; no store is involved.
// Reads of only the columns a caller will show (src/db/projection.ts): a row read with some
// columns becomes an entity of exactly the fields they give, each read as the feature declares,
// whether the projection keeps the column set (a function made for it) or not (past its bound).
import { describe, expect, it } from 'vitest'
import { Projection } from '../../src/db/projection.js'

interface Row {
  id: number
  user_id: number
  title: string
  'odd "column"': string | null
  published_at: string | Date | null
}
interface Entity {
  id: number
  userId: number
  title: string
  'odd "field"': string | null
  publishedAt: string | null
}

const iso = (value: string | Date) => (typeof value === 'string' ? value : value.toISOString())
const projection = () =>
  new Projection<Row, Entity>(
    {
      id: { column: 'id' },
      userId: { column: 'user_id' },
      title: { column: 'title' },
      'odd "field"': { column: 'odd "column"' },
      publishedAt: { column: 'published_at', read: iso },
    },
    ['id'],
    (row) => ({
      id: row.id,
      userId: row.user_id,
      title: row.title,
      'odd "field"': row['odd "column"'],
      publishedAt: row.published_at === null ? null : iso(row.published_at),
    }),
  )

const row: Row = { id: 7, user_id: 3, title: 'Seven', 'odd "column"': 'quoted', published_at: new Date('2026-12-01T10:00:00.000Z') }

describe('a projection', () => {
  it('makes the entity of the fields asked for, with the id always, each read as declared', () => {
    const fields = projection()
    const columns = fields.columnsFor(['title', 'publishedAt'])
    expect(columns.names).toEqual(['id', 'title', 'published_at'])
    expect(fields.read(row, columns)).toStrictEqual({ id: 7, title: 'Seven', publishedAt: '2026-12-01T10:00:00.000Z' })
    expect(fields.read({ ...row, published_at: null }, columns)).toStrictEqual({ id: 7, title: 'Seven', publishedAt: null })
    // Names a function's text must quote.
    expect(fields.read(row, fields.columnsFor(['odd "field"']))).toStrictEqual({ id: 7, 'odd "field"': 'quoted' })
  })

  it('makes the whole entity when every column is read', () => {
    const fields = projection()
    expect(fields.read(row, fields.all)).toStrictEqual({ id: 7, userId: 3, title: 'Seven', 'odd "field"': 'quoted', publishedAt: '2026-12-01T10:00:00.000Z' })
  })

  it('reads a set past the ones it keeps (a function each) the same way', () => {
    // Ten columns: more sets of them than a projection keeps.
    const names = Array.from({ length: 10 }, (_, n) => `c${n}`)
    type Wide = Record<string, number | null>
    const wide = new Projection<Wide, Wide>(
      Object.fromEntries(names.map((name) => [name.toUpperCase(), { column: name, read: (value: number) => value * 10 }])),
      ['c0'],
      (all) => all,
    )
    const whole: Wide = Object.fromEntries(names.map((name, n) => [name, n === 3 ? null : n]))
    for (let subset = 1; subset < 2 ** names.length; subset++) {
      const fields = names.filter((_, n) => (subset & (2 ** n)) !== 0).map((name) => name.toUpperCase())
      const columns = wide.columnsFor(fields)
      if (columns.all) continue
      const expected = Object.fromEntries(
        ['C0', ...fields.filter((field) => field !== 'C0')].map((field) => [field, field === 'C3' ? null : Number(field.slice(1)) * 10]),
      )
      expect(wide.read(whole, columns)).toStrictEqual(expected)
    }
  })
})

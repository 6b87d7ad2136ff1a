// A named statement's run on `pg` (src/db/pg-named-query.ts): the second run of a name reuses what
// the first derived from the columns' description, and a name whose columns are not the same any
// more (another text, another type) gets its own, so every value is parsed by its column's type.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { namedQueryOf } from '../../src/db/pg-named-query.js'
import { postgresUrl } from '../helpers/services.js'

const server = await postgresUrl()

describe.runIf(server)('a named query on pg', () => {
  const Named = namedQueryOf(pg)
  const clients: pg.Client[] = []
  const connect = async () => {
    const client = new pg.Client({ connectionString: server })
    await client.connect()
    clients.push(client)
    return client
  }
  const run = (client: pg.Client, name: string, text: string, values: unknown[]) =>
    new Promise<pg.QueryResult>((resolve, reject) => {
      client.query(new Named(name, text, values, (error, result) => (error === null ? resolve(result) : reject(error))))
    })
  /** Result.addFields's products: what a run with kept columns takes from the run before. */
  const derived = (result: pg.QueryResult) => (result as unknown as { _parsers: unknown[] })._parsers

  let first: pg.Client
  let second: pg.Client
  beforeAll(async () => {
    first = await connect()
    second = await connect()
  })
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()))
  })

  it('runs as a prepared statement, and parses every run by its columns’ types', async () => {
    const text = 'select $1::int as n, $2::text as label, $3::bool as flag, null::int as nothing'
    const one = await run(first, 'tl_test_kept', text, [7, 'seven', true])
    const two = await run(first, 'tl_test_kept', text, [8, 'eight', false])
    expect(one.rows).toEqual([{ n: 7, label: 'seven', flag: true, nothing: null }])
    expect(two.rows).toEqual([{ n: 8, label: 'eight', flag: false, nothing: null }])
    expect(two.fields.map((field) => field.name)).toEqual(['n', 'label', 'flag', 'nothing'])
    expect(derived(two)).toBe(derived(one))
    const prepared = await first.query<{ name: string }>(`select name from pg_prepared_statements where name = 'tl_test_kept'`)
    expect(prepared.rows).toEqual([{ name: 'tl_test_kept' }])
    // And on another connection, where the name is prepared anew: the same columns, the same parsers.
    const elsewhere = await run(second, 'tl_test_kept', text, [9, 'nine', true])
    expect(elsewhere.rows).toEqual([{ n: 9, label: 'nine', flag: true, nothing: null }])
    expect(derived(elsewhere)).toBe(derived(one))
  })

  it('parses afresh when the same name describes other columns: another type, another name, another count', async () => {
    expect((await run(first, 'tl_test_shape', 'select $1::int as value', [5])).rows).toEqual([{ value: 5 }])
    // The same name prepared with another text on another connection (as after a table changed shape).
    const text = await run(second, 'tl_test_shape', 'select $1::text as value', ['5'])
    expect(text.rows).toEqual([{ value: '5' }])
    const third = await connect()
    expect((await run(third, 'tl_test_shape', 'select $1::int as other', [6])).rows).toEqual([{ other: 6 }])
    const fourth = await connect()
    expect((await run(fourth, 'tl_test_shape', 'select $1::int as value, 2 as more', [7])).rows).toEqual([{ value: 7, more: 2 }])
  })

  it('answers an error as pg does, and runs the name again after it', async () => {
    await expect(run(first, 'tl_test_error', 'select 1 / $1::int as quotient', [0])).rejects.toMatchObject({ code: '22012' })
    expect((await run(first, 'tl_test_error', 'select 1 / $1::int as quotient', [1])).rows).toEqual([{ quotient: 1 }])
  })
})

// JSONPlaceholder's own /db document (test/fixtures/jsonplaceholder) in and out again: `threadline
// import` into an empty database of the run's store, `threadline export --format jsonplaceholder`,
// and every section Threadline has a data section for comes back as the file has it — each row
// equal field by field (the order of an object's keys aside), and as many rows, no more: its 10
// users, not a user per comment e-mail. The sections compared are the registry's, never named here,
// so a resource that gains a data section joins the comparison.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATA_SECTIONS } from '../../src/cli/data-sections.js'
import { freshDatabase, type TestDatabase } from '../helpers/test-store.js'
import { dataFiles, everyRow, threadline } from './import-fixture.js'

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'jsonplaceholder', 'db.json.gz')

type Document = Record<string, unknown[]>

const fileOf = dataFiles('threadline-jsonplaceholder-')
/** The sections JSONPlaceholder's format has, as the features declare them. */
const SECTIONS = DATA_SECTIONS.filter(({ formats }) => formats?.jsonplaceholder !== undefined).map(({ name }) => name)

let db: TestDatabase
beforeAll(async () => {
  db = await freshDatabase()
})
afterAll(() => db.drop())

describe("JSONPlaceholder's /db document, imported and exported", { timeout: 120_000 }, () => {
  it('comes back as it went in, section by section, row by row, with as many rows', async () => {
    const text = gunzipSync(readFileSync(FIXTURE)).toString('utf8')
    const original = JSON.parse(text) as Document
    const file = fileOf('db.json', '')
    writeFileSync(file, text)

    await threadline(db.url, ['import', file])
    const output = fileOf('exported.json', '')
    await threadline(db.url, ['export', '--format', 'jsonplaceholder', '--output', output])
    const exported = JSON.parse(readFileSync(output, 'utf8')) as Document

    // Every section the format has, and no other: the file's own, all of them (none skipped).
    expect(Object.keys(exported).sort()).toEqual([...SECTIONS].sort())
    expect(Object.keys(original).sort()).toEqual([...SECTIONS].sort())
    for (const name of SECTIONS) {
      expect(original, `the fixture has ${name}`).toHaveProperty(name)
      expect(exported[name]!.length, name).toBe(original[name]!.length)
      expect(exported[name], name).toEqual(original[name])
    }
    // The tables hold the file's rows and nothing besides: no user was made for a comment's e-mail.
    const rows = await everyRow(db.url)
    for (const name of SECTIONS) expect(rows[name]!.length, name).toBe(original[name]!.length)
  })
})

// `threadline export`: the database out as one JSON document, a section per feature
// (src/data-section.ts), in Threadline's own format (what `threadline import` loads back,
// password hashes included) or in JSONPlaceholder's. Streamed: each section's table is read in id order, a batch at a time, and each batch written before the next is read, so
// memory stays flat whatever the size. All of it is read in one transaction, so the file is one
// moment's data even while a server writes.
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { rename, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { Writable } from 'node:stream'
import type { Config } from '../config.js'
import type { DataSection } from '../data-section.js'
import { type Db, openDatabase } from '../db/create-database.js'
import { migrateToLatest } from '../db/migrate.js'
import { DATA_SECTIONS } from './data-sections.js'
import { countRows, readBatch } from './data-tables.js'
import type { ExportFormat, ExportOptions } from './export-format.js'
import { createProgressBar } from './progress.js'
import { listed } from './words.js'

export { EXPORT_FORMATS, type ExportFormat, type ExportOptions } from './export-format.js'

/** Rows read per query: enough to keep round trips few, few enough that memory stays flat. */
const BATCH_SIZE = 1_000

/** Writes text, waiting for the stream to drain when its buffer is full; a stream error ends the export. */
async function write(stream: Writable, text: string): Promise<void> {
  if (stream.write(text)) return
  await Promise.race([once(stream, 'drain'), once(stream, 'error').then(([error]) => Promise.reject(error as Error))])
}

/** A section as the export writes it, and the rows it wrote. */
export interface Written {
  readonly section: DataSection
  rows: number
}

/**
 * Writes the whole document to `stream`: in Threadline's format the marker first, then each of
 * `sections` (parents first) that the format has, one row per line. Threadline's format is the
 * API's items as the features write them, plus what an import needs to give them back whole (a
 * user's password hash); JSONPlaceholder's has the fields of its /db document, and never a password.
 * Returns the rows written per section.
 */
export async function writeExport(
  db: Db,
  stream: Writable,
  format: ExportFormat,
  onProgress: (done: number, total: number) => void = () => {},
  sections: readonly DataSection[] = DATA_SECTIONS,
): Promise<Written[]> {
  const inFile = sections.flatMap((section) => {
    const rows = section.formats?.[format]
    return rows === undefined ? [] : [{ section, format: rows }]
  })
  const totals = await Promise.all(inFile.map(({ section }) => countRows(db, section.name)))
  const total = totals.reduce((sum, n) => sum + n, 0)
  let done = 0
  onProgress(done, total)
  await write(stream, format === 'threadline' ? `{\n"threadline": ${JSON.stringify({ version: 1, exportedAt: new Date().toISOString() })},\n` : '{\n')
  const written: Written[] = []
  for (const [i, { section, format: rows }] of inFile.entries()) {
    const wrote: Written = { section, rows: 0 }
    written.push(wrote)
    await write(stream, `${JSON.stringify(section.name)}: [`)
    let afterId = 0
    for (;;) {
      const batch = await readBatch(db, section, afterId, BATCH_SIZE)
      if (batch.length === 0) break
      const lines = batch.map((row, j) => `${wrote.rows === 0 && j === 0 ? '' : ','}\n  ${JSON.stringify(rows.write(row))}`)
      wrote.rows += batch.length
      await write(stream, lines.join(''))
      done += batch.length
      onProgress(done, total)
      afterId = batch[batch.length - 1]!.id
      if (batch.length < BATCH_SIZE) break
    }
    await write(stream, `${wrote.rows === 0 ? '' : '\n'}]${i < inFile.length - 1 ? ',' : ''}\n`)
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
      console.error(`Exported ${listed(written.map(({ section, rows }) => `${rows} ${section.name}`))} to ${options.output}.`)
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

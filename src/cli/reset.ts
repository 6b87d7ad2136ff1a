// `threadline reset`: back to a known state, the demo data of a fresh `serve` or a file's rows.
// It destroys every row, so it asks first on a terminal and refuses unasked anywhere else.
import { createInterface } from 'node:readline/promises'
import type { Config } from '../config.js'
import { openDatabase } from '../db/create-database.js'
import { migrateToLatest } from '../db/migrate.js'
import { AppError } from '../errors.js'
import { DEMO_COUNTS, seedDatabase } from '../seed/seed-database.js'
import { rerunWithBoundedHeap } from './bounded-heap.js'
import { DATA_SECTIONS } from './data-sections.js'
import { emptyTables, moveSequences } from './data-tables.js'
import { withRereadableFile } from './spool.js'
import { createImportProgress } from './import-progress.js'
import { describeImport, importFile } from './import-data.js'
import { listed } from './words.js'

export interface ResetOptions {
  from?: string
  yes?: boolean
  /** The copy of --from's file to read, made by the process that started this one (spool.ts). */
  spool?: string
  /** The most --from's file may give when it is a pipe, a FIFO or a device, in MiB. @default MAX_PIPE_MB (spool.ts) */
  maxPipeMb?: number
}

/** The database's name as the prompt shows it: a file's path, or a server and database (no password). */
function describeDatabase(config: Config): string {
  const location = config.database
  if (location.dialect === 'sqlite') return location.path
  const url = new URL(location.url)
  return `${url.host}${url.pathname}`
}

async function confirmed(config: Config, options: ResetOptions): Promise<boolean> {
  if (options.yes === true) return true
  if (!process.stdin.isTTY) {
    throw new AppError('BAD_REQUEST', 'reset replaces all data and stdin is not a terminal to ask on: pass --yes to go on')
  }
  const prompt = createInterface({ input: process.stdin, output: process.stdout })
  try {
    const every = listed(DATA_SECTIONS.map(({ noun }) => noun))
    const answer = await prompt.question(`This replaces every ${every} in ${describeDatabase(config)}. Type yes to go on: `)
    return answer.trim().toLowerCase() === 'yes'
  } finally {
    prompt.close()
  }
}

export async function resetCommand(config: Config, options: ResetOptions): Promise<void> {
  const from = options.from
  if (from === undefined) return reset(config, options)
  await withRereadableFile(from, { spooled: options.spool, maxPipeMb: options.maxPipeMb }, async (path, handOn) => {
    // The question is asked in the Node that reads the file.
    const exitCode = await rerunWithBoundedHeap(path, handOn)
    if (exitCode !== undefined) process.exitCode = exitCode
    else await reset(config, options, { path, name: from })
  })
}

async function reset(config: Config, options: ResetOptions, file?: { path: string; name: string }): Promise<void> {
  if (!(await confirmed(config, options))) {
    console.log('Nothing changed.')
    return
  }
  const database = openDatabase(config.database)
  try {
    await migrateToLatest(database)
    const started = performance.now()
    if (file !== undefined) {
      const summary = await importFile(database.db, file.path, { replace: true, progress: createImportProgress(process.stdout), name: file.name })
      console.log(describeImport(summary, (performance.now() - started) / 1000))
      return
    }
    // The seed runs its own transaction: emptying is one before it. The ids start at 1 again, so
    // the data is a fresh serve's, row for row.
    await database.db.transaction().execute(async (trx) => {
      await emptyTables(trx, DATA_SECTIONS)
      await moveSequences(trx, DATA_SECTIONS)
    })
    await seedDatabase(database.db, DEMO_COUNTS)
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    const counts = listed(Object.entries(DEMO_COUNTS).map(([name, n]) => `${n} ${name}`))
    console.log(`Reset to the demo data: ${counts} in ${seconds} s.`)
  } finally {
    await database.close()
  }
}

// `threadline import FILE`'s work: loads a Threadline export or a JSONPlaceholder /db file, keeping
// ids. Two streaming passes, because a JSON object's keys have no order (posts may precede users):
// the first checks every row and gathers the ids that references need (import-scan.ts), the
// database is asked about them (import-checks.ts), and the second checks each row again as it
// writes it (import-write.ts), in one transaction and batched inserts. A file with any problem
// writes nothing. The sections are the features' (src/data-section.ts).
import type { DataSection } from '../data-section.js'
import type { Db } from '../db/create-database.js'
import { dialectFactsOf } from '../db/dialect-facts.js'
import { AppError } from '../errors.js'
import { DATA_SECTIONS } from './data-sections.js'
import { emptyTables, moveSequences } from './data-tables.js'
import { checkAgainst } from './import-checks.js'
import { type Progress, createImportProgress } from './import-progress.js'
import { ImportProblemsError, type ImportSummary, notJsonError } from './import-report.js'
import { importRules } from './import-rows.js'
import { type Scan, scan } from './import-scan.js'
import { FileChangedError, writeRows } from './import-write.js'
import { BadJsonError } from './json-sections.js'

export { ImportProblemsError, type ImportSummary, describeImport } from './import-report.js'

/** From this many rows, SQLite's search index is rebuilt once at the end (as a large seed does). */
const BULK_LOAD_ROWS = 10_000

export interface ImportOptions {
  /** Empty every section's table first, children first (in the same transaction). */
  replace: boolean
  /** Where progress goes: a bar on a terminal, plain lines otherwise. */
  progress?: Progress
  /** The file's name in messages, when the path read is a copy of it (spool.ts). @default the path */
  name?: string
  /** The sections a file may have, and the tables --replace empties. @default every feature's */
  sections?: readonly DataSection[]
}

/**
 * Imports `file` into the database (migrated already): checks it whole, then writes it in one
 * transaction. Throws ImportProblemsError, or AppError for a file that is not JSON or changed.
 */
export async function importFile(db: Db, file: string, options: ImportOptions): Promise<ImportSummary> {
  const progress = options.progress ?? createImportProgress(undefined)
  const name = options.name ?? file
  const rules = importRules(options.sections ?? DATA_SECTIONS)
  let found: Scan
  try {
    found = await scan(file, rules, progress)
  } catch (error) {
    if (error instanceof BadJsonError) throw notJsonError(name, error)
    throw error
  }
  const now = new Date().toISOString()
  const summary = await db
    .transaction()
    .execute(async (trx): Promise<ImportSummary> => {
      const { problems, plan } = await checkAgainst(trx, found, options.replace)
      if (problems.count > 0) throw new ImportProblemsError(name, problems, rules.all)
      const rows = found.sections.reduce((sum, section) => sum + section.ids.size, 0)
      const load = async () => {
        if (options.replace) await emptyTables(trx, rules.all)
        await writeRows(trx, file, rules, found, plan, progress, now)
      }
      await (rows >= BULK_LOAD_ROWS || options.replace ? dialectFactsOf(trx).bulkLoad(trx, load) : load())
      await moveSequences(trx, rules.all)
      const { format } = plan
      const inFormat = found.sections.filter(({ rules }) => rules.formats[format] !== undefined)
      return {
        format,
        rows: inFormat.map(({ rules, ids }) => ({ section: rules.section, count: ids.size })),
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

// `threadline import FILE`, the command: a file that is read once (a pipe) is copied aside first,
// the import runs in a Node whose heap is bounded by the file, and its summary is printed. The
// importer's code (the database's, import-data.ts and the features' sections) is loaded only by the
// process that imports, not by the one that waits for it.
import type { Config } from '../config.js'
import { rerunWithBoundedHeap } from './bounded-heap.js'
import { createImportProgress } from './import-progress.js'
import { withRereadableFile } from './spool.js'

export interface ImportCommandOptions {
  replace?: boolean
  /** The copy of FILE to read, made by the process that started this one (spool.ts). */
  spool?: string
  /** The most FILE may give when it is a pipe, a FIFO or a device, in MiB. @default MAX_PIPE_MB (spool.ts) */
  maxPipeMb?: number
}

export async function importCommand(config: Config, file: string, options: ImportCommandOptions): Promise<void> {
  await withRereadableFile(file, { spooled: options.spool, maxPipeMb: options.maxPipeMb }, async (path, handOn) => {
    const exitCode = await rerunWithBoundedHeap(path, handOn)
    if (exitCode !== undefined) {
      process.exitCode = exitCode
      return
    }
    const [{ openDatabase }, { migrateToLatest }, { describeImport, importFile }] = await Promise.all([
      import('../db/create-database.js'),
      import('../db/migrate.js'),
      import('./import-data.js'),
    ])
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

// Import's second pass: the file walked again and every row written, in batches, a section only
// after those it references (walking the file again for one met too early). Each row is checked
// again as it is written, and must be the row pass 1 saw there (its id, unique values and
// references, which the database's constraints rely on): a file changed between the passes
// throws FileChangedError, and the transaction it runs in writes nothing.
import type { ColumnsContext, Fields } from '../data-section.js'
import type { Db } from '../db/create-database.js'
import { MAX_BATCH_SIZE } from '../seed-section.js'
import { insertRows } from './data-tables.js'
import type { Plan } from './import-checks.js'
import type { Progress } from './import-progress.js'
import { type FormatRules, type ImportRules, type Report, type SectionRules, checkRow, joinPath } from './import-rows.js'
import { type Scan, type SectionScan, uniqueKey, walk } from './import-scan.js'

/** Rows per INSERT: well under SQLite's bound parameters (MAX_BATCH_SIZE is for 8-column users). */
const BATCH_SIZE = Math.min(500, MAX_BATCH_SIZE)

/** A file that no longer says what pass 1 checked: nothing of it is written (the transaction rolls back). */
export class FileChangedError extends Error {}
const changed = (path: string, message: string): never => {
  throw new FileChangedError(`${path}: ${message}`)
}

/** A section as pass 2 writes it: everything a row needs, looked up once. */
class SectionWriter {
  readonly name: string
  readonly rules: SectionRules
  readonly format: FormatRules
  readonly context: ColumnsContext
  /** The row being written, for the paths of its problems. */
  index = 0
  readonly report: Report = (field, message) => changed(joinPath(`${this.name}[${this.index}]`, field), message)

  constructor(
    readonly scan: SectionScan,
    plan: Plan,
    now: string,
  ) {
    this.name = scan.name
    this.rules = scan.rules
    // A section the file's format has not is a problem of pass 1: it is never written.
    this.format = scan.rules.formats[plan.format]!
    this.context = { now }
  }

  private same(field: string, seen: unknown, now: unknown) {
    if (seen !== now) this.report(field, `was ${String(seen)} when the file was checked, is ${String(now)}`)
  }

  /** A row checked as pass 1 did, the same row pass 1 saw at `index`, as its table's columns. */
  toColumns(index: number, value: unknown): Fields {
    this.index = index
    checkRow(this.format, value, this.report)
    const row = value as Fields
    const { scan, rules } = this
    this.same('id', index, scan.ids.get(row.id as number))
    for (let i = 0; i < rules.unique.length; i++) {
      const { field, ignoreCase } = rules.unique[i]!
      this.same(field, index, scan.unique[i]!.get(uniqueKey(ignoreCase, row[field])))
    }
    for (const at of this.format.references) {
      const { field } = rules.idReferences[at]!
      // A reference to none (null) was seen as 0.
      this.same(field, scan.idReferences[at]![index], row[field] ?? 0)
    }
    return this.format.toColumns(row, this.context)
  }
}

/** Writes the file's rows: in dependency order, walking the file again for a section it met too early. */
export async function writeRows(db: Db, file: string, rules: ImportRules, found: Scan, plan: Plan, progress: Progress, now: string): Promise<void> {
  const writers = found.sections.map((scan) => new SectionWriter(scan, plan, now))
  const present = new Set(found.order.map((scan) => writers[scan.rules.position]!))
  const written = new Set<SectionWriter>()
  while (written.size < present.size) {
    // This walk writes every section, in file order, whose parents are written before it.
    const thisWalk = new Set<SectionWriter>()
    for (const writer of present) {
      if (written.has(writer)) continue
      const parents = writer.rules.parents.map(({ position }) => writers[position]!)
      if (parents.every((parent) => written.has(parent) || thisWalk.has(parent) || !present.has(parent))) thisWalk.add(writer)
    }
    let batch: Fields[] = []
    let batchSection: SectionWriter | undefined
    const flush = async () => {
      if (batch.length === 0 || batchSection === undefined) return
      await insertRows(db, batchSection.name, batch)
      batch = []
    }
    const seen = new Set<SectionWriter>()
    await walk(file, rules, writers, {
      onShapeProblem: changed,
      wants: (writer) => thisWalk.has(writer),
      onBytes: (read, total) => progress.update('writing', read, total),
      onSection: (writer) => {
        if (seen.has(writer) || !present.has(writer)) changed(writer.name, 'was not in the file, or not once, when it was checked')
        seen.add(writer)
        batchSection = writer
      },
      async onRow(writer, index, value) {
        batch.push(writer.toColumns(index, value))
        if (batch.length === BATCH_SIZE) await flush()
      },
      async onSectionEnd(writer, rows) {
        if (!thisWalk.has(writer)) return
        if (rows !== writer.scan.ids.size) changed(writer.name, `had ${writer.scan.ids.size} rows when the file was checked, has ${rows}`)
        await flush()
      },
    })
    for (const writer of thisWalk) {
      if (!seen.has(writer)) changed(writer.name, 'is no longer in the file')
      written.add(writer)
    }
  }
}

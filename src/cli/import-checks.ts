// What import checks between its passes, against the whole file and the database: ids the database
// holds already, unique values it holds, references to rows neither has, and the rows a reference
// by a unique field names (a JSONPlaceholder comment's author, by e-mail: a user of the file, else
// of the database, else one added for it). The result is the plan the second pass writes by.
import type { Db } from '../db/create-database.js'
import { existingIds, existingValues, highestId } from './data-tables.js'
import type { Problems } from './import-report.js'
import type { Format, ValueReference } from './import-rows.js'
import { type Scan, type SectionScan, uniqueKey } from './import-scan.js'

/** Rows to add to a section for values a reference by its unique field names and no row has. */
export interface Additions {
  readonly section: SectionScan
  readonly by: SectionScan
  readonly reference: ValueReference
  /** Each with the id it gets, and the value as first written (the added row keeps the file's spelling). */
  readonly rows: { id: number; value: string }[]
}

/** The plan pass 2 follows. */
export interface Plan {
  format: Format
  /** Per section, per reference by value (rules.valueReferences) of the format: value (as compared) → the id it names. */
  named: Map<string, number>[][]
  additions: Additions[]
}

/** Checks what needs the whole file and the database; the problems are the file's format's. */
export async function checkAgainst(db: Db, found: Scan, replace: boolean): Promise<{ problems: Problems; plan: Plan }> {
  const format: Format = found.marker ? 'threadline' : 'jsonplaceholder'
  const problems = found.problems[format]
  const inDb = async (table: string, ids: Iterable<number>) => (replace ? new Set<number>() : existingIds(db, table, ids))
  // An id the database holds already: refused without --replace.
  for (const section of found.sections) {
    const taken = await inDb(section.name, section.ids.keys())
    for (const id of taken) problems.add(`${section.name}[${section.ids.get(id)}].id`, `${id} exists`)
    problems.inDatabase += taken.size
  }
  if (!replace) {
    for (const section of found.sections) {
      for (const [i, unique] of section.rules.unique.entries()) {
        const values = section.unique[i]!
        const taken = await existingValues(db, section.name, unique, values.keys())
        for (const [value] of taken) problems.add(`${section.name}[${values.get(value)}].${unique.field}`, `${value} is taken in the database`)
        problems.inDatabase += taken.size
      }
    }
  }
  // References by id: to a row of the file, or (without --replace) of the database.
  for (const section of found.sections) {
    for (const { by, at } of section.rules.formats[format]?.references ?? []) {
      if (by !== 'id') continue
      const { field, target } = section.rules.idReferences[at]!
      const ids = section.idReferences[at]!
      const referred = found.sections[target.position]!
      const absent = new Set<number>()
      for (const id of ids) if (id !== 0 && !referred.ids.has(id)) absent.add(id)
      if (absent.size === 0) continue
      for (const id of await inDb(target.name, absent)) absent.delete(id)
      ids.forEach((id, index) => {
        if (absent.has(id)) problems.add(`${section.name}[${index}].${field}`, `no ${target.section.noun} ${id}`)
      })
    }
  }
  const plan: Plan = { format, named: found.sections.map(() => []), additions: [] }
  // Ids added rows take, per section: the next after the highest of the file's and (without --replace) the database's.
  const highest = new Map<SectionScan, number>()
  for (const section of found.sections) {
    for (const { by, at } of section.rules.formats[format]?.references ?? []) {
      if (by !== 'value') continue
      const reference = section.rules.valueReferences[at]!
      const referred = found.sections[reference.target.position]!
      const unique = referred.rules.unique[reference.unique]!
      // A value of a row of the file names that row (0: a row whose id is a problem already).
      const idOfRow = new Map<number, number>()
      for (const [id, index] of referred.ids) idOfRow.set(index, id)
      const named = new Map<string, number>()
      for (const [value, index] of referred.unique[reference.unique]!) named.set(value, idOfRow.get(index) ?? 0)
      plan.named[section.rules.position]![at] = named
      // As compared → as first written.
      const unknown = new Map<string, string>()
      for (const value of section.valueReferences[at]!.values()) {
        const key = uniqueKey(unique.ignoreCase, value)
        if (!named.has(key) && !unknown.has(key)) unknown.set(key, value)
      }
      if (!replace) {
        for (const [key, id] of await existingValues(db, referred.name, unique, unknown.keys())) {
          named.set(key, id)
          unknown.delete(key)
        }
      }
      if (unknown.size === 0) continue
      if (unique.rowFor === undefined) {
        for (const [index, value] of section.valueReferences[at]!) {
          if (unknown.has(uniqueKey(unique.ignoreCase, value)))
            problems.add(`${section.name}[${index}].${reference.field}`, `no ${referred.rules.section.noun} ${value}`)
        }
        continue
      }
      let next = highest.get(referred)
      if (next === undefined) {
        next = 0
        for (const id of referred.ids.keys()) next = Math.max(next, id)
        if (!replace) next = Math.max(next, await highestId(db, referred.name))
      }
      const additions: Additions = { section: referred, by: section, reference, rows: [] }
      for (const [key, value] of unknown) {
        next++
        named.set(key, next)
        additions.rows.push({ id: next, value })
      }
      highest.set(referred, next)
      plan.additions.push(additions)
    }
  }
  return { problems, plan }
}

// What import checks between its passes, against the whole file and the database: ids the database
// holds already, unique values it holds, and references to rows neither has. The result is the plan
// the second pass writes by.
import type { Db } from '../db/create-database.js'
import { existingIds, existingValues } from './data-tables.js'
import type { Problems } from './import-report.js'
import type { Format } from './import-rows.js'
import type { Scan } from './import-scan.js'

/** The plan pass 2 follows. */
export interface Plan {
  format: Format
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
    for (const at of section.rules.formats[format]?.references ?? []) {
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
  return { problems, plan: { format } }
}

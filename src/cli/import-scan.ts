// Import's first pass: every row checked by its section's rules, in each format the file may be in
// (either, until the marker says Threadline's), and what the later stages need of it kept, which is
// small: each row's id, its unique values and the ids of the rows it references. A JSON object's
// keys have no order, so nothing can be decided about references before the whole file is read.
import { parseId } from '../core/ids.js'
import type { Fields } from '../data-section.js'
import type { Progress } from './import-progress.js'
import { Problems } from './import-report.js'
import { FORMATS, type Format, type ImportRules, type SectionRules, checkMarker, checkRow, joinPath } from './import-rows.js'
import { MARKER, type NamedSection, type SectionVisitor, walkSections } from './json-sections.js'

/** What pass 1 learns of a section. */
export class SectionScan {
  readonly name: string
  /** Whether the file has it (and not twice). */
  seen = false
  /** id → the index of its row. */
  readonly ids = new Map<number, number>()
  /** Per unique field (rules.unique): its value (lowercased, if its case is ignored) → the index of its row. */
  readonly unique: Map<string, number>[]
  /** Per reference by id (rules.idReferences), by row index: the id it names, 0 when it names none. */
  readonly idReferences: number[][]

  constructor(readonly rules: SectionRules) {
    this.name = rules.name
    this.unique = rules.unique.map(() => new Map<string, number>())
    this.idReferences = rules.idReferences.map(() => [])
  }
}

/** What pass 1 learns: the format, the ids and references, and every problem. */
export interface Scan {
  marker: boolean
  problems: Record<Format, Problems>
  /** Per section (rules.sections). */
  sections: SectionScan[]
  /** The sections the file has, in file order. */
  order: SectionScan[]
  skipped: [string, number][]
}

/** A unique value as it is compared: lowercased, if its case is ignored. */
export const uniqueKey = (ignoreCase: boolean, value: unknown): string => (ignoreCase ? String(value).toLowerCase() : String(value))

/** The walk both passes make: the file's sections, strings longer than any field refused unread. */
export const walk = <S extends NamedSection>(file: string, rules: ImportRules, sections: readonly S[], visitor: SectionVisitor<S>) =>
  walkSections(file, sections, visitor, { longestValue: rules.longestValue })

/** An id of a row, if the API can name it (the others are problems already). */
const idOr0 = (value: unknown) => (typeof value === 'number' ? (parseId(value) ?? 0) : 0)

export async function scan(file: string, rules: ImportRules, progress: Progress): Promise<Scan> {
  const result: Scan = {
    marker: false,
    problems: { threadline: new Problems(), jsonplaceholder: new Problems() },
    sections: rules.sections.map((section) => new SectionScan(section)),
    order: [],
    skipped: [],
  }
  // Until the marker is seen, a row is checked as either format; after, as the one it names.
  const possible = (format: Format) => format === 'threadline' || !result.marker
  const both = (path: string, message: string) => {
    result.problems.threadline.add(path, message)
    result.problems.jsonplaceholder.add(path, message)
  }
  await walk(file, rules, result.sections, {
    onShapeProblem: both,
    onSkipped: (key, items) => result.skipped.push([key, items]),
    onMarker(value) {
      result.marker = true
      checkMarker(value, (field, message) => result.problems.threadline.add(joinPath(MARKER, field), message))
    },
    onSection(section) {
      if (section.seen) both(section.name, 'appears twice')
      else {
        section.seen = true
        result.order.push(section)
      }
      if (possible('jsonplaceholder') && section.rules.formats.jsonplaceholder === undefined) {
        result.problems.jsonplaceholder.add(section.name, "is not in JSONPlaceholder's format (a Threadline export carries the threadline marker)")
      }
    },
    onBytes: (read, total) => progress.update('checking', read, total),
    onRow(section, index, value) {
      const { rules } = section
      const path = `${section.name}[${index}]`
      for (const format of FORMATS) {
        const rows = rules.formats[format]
        if (rows !== undefined && possible(format)) checkRow(rows, value, (field, message) => result.problems[format].add(joinPath(path, field), message))
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return
      const row = value as Fields
      // Only ids the API can name are looked up (the others are problems already), in the file and the database.
      const id = idOr0(row.id)
      if (id !== 0) {
        const first = section.ids.get(id)
        if (first !== undefined) both(`${path}.id`, `${id} is also the id of ${section.name}[${first}]`)
        else section.ids.set(id, index)
      }
      for (const [i, { field, ignoreCase }] of rules.unique.entries()) {
        if (typeof row[field] !== 'string') continue
        const key = uniqueKey(ignoreCase, row[field])
        const taken = section.unique[i]!.get(key)
        if (taken !== undefined) both(`${path}.${field}`, `taken by ${section.name}[${taken}]`)
        else section.unique[i]!.set(key, index)
      }
      for (const [i, { field }] of rules.idReferences.entries()) section.idReferences[i]![index] = idOr0(row[field])
    },
  })
  return result
}

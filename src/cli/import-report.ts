// What import says: the problems of a file, listed with their JSON paths, and the summary of a
// file loaded. The words come from the sections (their names and nouns, their unique fields').
import { withThousands } from '../core/digits.js'
import type { DataSection } from '../data-section.js'
import { AppError } from '../errors.js'
import type { Format } from './import-rows.js'
import type { BadJsonError } from './json-sections.js'
import { count, listed } from './words.js'

/** Problems listed before "and N more": enough to fix a file by, few enough to read. */
const PROBLEM_CAP = 100

/** Problems, each with its JSON path, the first PROBLEM_CAP of them kept. */
export class Problems {
  readonly list: { field: string; message: string }[] = []
  count = 0
  /** Of them, ids and unique values the database holds already. */
  inDatabase = 0
  add(path: string, message: string) {
    this.count++
    if (this.list.length < PROBLEM_CAP) this.list.push({ field: path, message })
  }
}

/** A file that is not JSON: where, in the parser's words. */
export const notJsonError = (file: string, error: BadJsonError): AppError => new AppError('BAD_REQUEST', `${file}: ${error.message}; nothing was imported`)

/** A file with problems: every one listed (to PROBLEM_CAP) in the error's details, and how to go on. */
export class ImportProblemsError extends AppError {
  /** `sections`: every data section, parents first. */
  constructor(file: string, problems: Problems, sections: readonly DataSection[]) {
    const more = problems.count - problems.list.length
    const held = new Set(['ids', ...sections.flatMap(({ formats, unique = [] }) => (formats === undefined ? [] : unique.map(({ noun }) => `${noun}s`)))])
    const also = [
      ...(more > 0 ? [`and ${count(more, 'more problem')} (the first ${problems.list.length} are listed)`] : []),
      ...(problems.inDatabase > 0
        ? [
            `${problems.inDatabase} of the problems are ${listed([...held], 'or')} the database holds already: --replace replaces the database's data (${listed(sections.map(({ name }) => name))}) with the file's`,
          ]
        : []),
    ]
    super('VALIDATION_ERROR', `${file}: ${count(problems.count, 'problem')}; nothing was imported`, [
      ...problems.list,
      ...also.map((message) => ({ field: '', message })),
    ])
  }
}

export interface ImportSummary {
  format: Format
  /** Rows loaded per section the format has, parents first. */
  rows: { section: DataSection; count: number }[]
  /** Sections of resources Threadline has not (foreignSections), with their lengths, in file order. */
  skipped: [string, number][]
}

/** The summary line's words. */
export function describeImport(summary: ImportSummary, seconds: number): string {
  const counts = listed(summary.rows.map(({ section, count: n }) => count(n, section.noun, section.name)))
  const notes: string[] = []
  if (summary.skipped.length > 0) {
    const sections = summary.skipped.map(([key, items]) => `${key} (${withThousands(items)})`).join(', ')
    notes.push(`skipped ${sections}: Threadline has no such resources`)
  }
  // A file in Threadline's own format goes without saying.
  const format = summary.format === 'threadline' ? '' : summary.format
  const said = [format, notes.join('; ')].filter((part) => part !== '').join(': ')
  return `Imported ${counts} in ${seconds.toFixed(1)} s${said === '' ? '' : ` (${said})`}`
}

// The rules a data file's rows are checked by, in both of import's passes, compiled once from the
// sections (src/data-section.ts). The rules are the API's: the features' item schemas, ids
// bounded as src/core/ids.ts bounds them (what both stores and every transport accept), and instants
// read as src/core/instant.ts reads them (and stored as it writes them, so sorting and cursors work).
import { type TSchema, Type } from 'typebox'
import type { DataFormat, DataFormatName, DataSection, Fields, UniqueField } from '../data-section.js'
import { INSTANT_DESCRIPTION, parseInstant } from '../core/instant.js'
import { Timestamp } from '../core/schema-types.js'
import { bodyAjv, toErrorDetails } from '../core/validation.js'
import { parentsFirst } from './data-sections.js'
import { MARKER } from './json-sections.js'

export type Format = DataFormatName
export const FORMATS: readonly Format[] = ['threadline', 'jsonplaceholder']

type Validator = ReturnType<typeof bodyAjv.compile>
interface RowRule {
  validate: Validator
  /** The fields that hold an instant. */
  instants: string[]
}

/** A reference by id that some format has: pass 1 keeps the id of each row's, 0 for none. */
export interface IdReference {
  readonly field: string
  /** The referred section. */
  readonly target: SectionRules
}

/** A section's rows in one format, compiled. */
export interface FormatRules {
  readonly rule: RowRule
  readonly problems: DataFormat<unknown>['problems']
  readonly toColumns: DataFormat<unknown>['toColumns']
  /** Its references, as their places in the section's idReferences, in the order declared. */
  readonly references: readonly number[]
}

/** A section a file may have, compiled; `position` is its place in ImportRules.sections. */
export interface SectionRules {
  readonly section: DataSection
  readonly name: string
  readonly position: number
  /** The sections of the file it references. */
  readonly parents: readonly SectionRules[]
  readonly unique: readonly UniqueField[]
  readonly formats: Readonly<Partial<Record<Format, FormatRules>>>
  /** Every format's references by id, one per field. */
  readonly idReferences: readonly IdReference[]
}

export interface ImportRules {
  /** Every section, parents first: --replace empties them all, those in no file too. */
  readonly all: readonly DataSection[]
  /** The sections a file may have, parents first. */
  readonly sections: readonly SectionRules[]
  /** The longest string any field of any row accepts, in characters: anything longer is refused unread. */
  readonly longestValue: number
}

const ruleOf = (schema: TSchema): RowRule => ({
  validate: bodyAjv.compile(schema),
  instants: Object.entries((schema as { properties: Record<string, { format?: string }> }).properties)
    .filter(([, field]) => field.format === 'date-time')
    .map(([name]) => name),
})

const compiled = new WeakMap<readonly DataSection[], ImportRules>()

/** The rules of `sections`' rows, compiled once per list. Throws for a section that is not one a file can carry. */
export function importRules(sections: readonly DataSection[]): ImportRules {
  let rules = compiled.get(sections)
  if (rules === undefined) {
    rules = compile(sections)
    compiled.set(sections, rules)
  }
  return rules
}

function compile(given: readonly DataSection[]): ImportRules {
  const all = parentsFirst(given)
  const inFiles = all.filter((section) => section.formats !== undefined)
  const byName = new Map<string, SectionRules>()
  const sections: SectionRules[] = []
  for (const [position, section] of inFiles.entries()) {
    if (section.name === MARKER) {
      throw new Error(`data section ${section.name} has the name of a data file's marker`)
    }
    const target = (name: string) => {
      const found = byName.get(name)
      if (found === undefined || !(section.references ?? []).includes(name)) {
        throw new Error(`data section ${section.name} refers to ${name}, which is not among its references or in no file`)
      }
      return found
    }
    const idReferences: IdReference[] = []
    const formats: Partial<Record<Format, FormatRules>> = {}
    for (const format of FORMATS) {
      const rows = section.formats?.[format]
      if (rows === undefined) continue
      const references = (rows.references ?? []).map(({ field, section: name }) => {
        const at = idReferences.findIndex((reference) => reference.field === field)
        return at >= 0 ? at : idReferences.push({ field, target: target(name) }) - 1
      })
      formats[format] = { rule: ruleOf(rows.schema), problems: rows.problems, toColumns: rows.toColumns, references }
    }
    const rules: SectionRules = {
      section,
      name: section.name,
      position,
      parents: (section.references ?? []).flatMap((name) => byName.get(name) ?? []),
      unique: section.unique ?? [],
      formats,
      idReferences,
    }
    byName.set(section.name, rules)
    sections.push(rules)
  }
  const schemas = inFiles.flatMap((section) => FORMATS.flatMap((format) => section.formats?.[format]?.schema ?? []))
  return { all, sections, longestValue: Math.max(...schemas.map(longestString)) }
}

function longestString(schema: unknown): number {
  if (typeof schema !== 'object' || schema === null) return 0
  const own = (schema as { maxLength?: unknown }).maxLength
  return Math.max(typeof own === 'number' ? own : 0, ...Object.values(schema).map(longestString))
}

/** A problem of a value, at `field` (a path inside it, '' for the value itself). */
export type Report = (field: string, message: string) => void

/** Checks `value` by `rule`, reporting each problem; whether it passed. */
function check(rule: RowRule, value: unknown, report: Report): boolean {
  let ok = true
  const failed = new Set<string>()
  if (!rule.validate(value)) {
    ok = false
    for (const { field, message } of toErrorDetails(rule.validate.errors ?? [])) {
      failed.add(field)
      report(field, message)
    }
  }
  if (typeof value !== 'object' || value === null) return ok
  for (const field of rule.instants) {
    const text = (value as Fields)[field]
    if (typeof text === 'string' && !failed.has(field) && parseInstant(text) === undefined) {
      ok = false
      report(field, `must be ${INSTANT_DESCRIPTION}`)
    }
  }
  return ok
}

const MARKER_RULE = ruleOf(Type.Object({ version: Type.Literal(1), exportedAt: Type.Optional(Timestamp) }))

export const checkMarker = (value: unknown, report: Report): boolean => check(MARKER_RULE, value, report)

/** Checks a row by its section's rules in one format, reporting each problem; whether it may be written. */
export function checkRow(rules: FormatRules, value: unknown, report: Report): boolean {
  let ok = check(rules.rule, value, report)
  if (ok && rules.problems !== undefined) {
    for (const [field, message] of rules.problems(value as Fields)) {
      ok = false
      report(field, message)
    }
  }
  return ok
}

/** A field of a JSON path: `users[0]` and `id` make `users[0].id`, and `[2]` makes `users[0][2]`. */
export const joinPath = (path: string, field: string): string => (field === '' ? path : `${path}${field.startsWith('[') ? '' : '.'}${field}`)

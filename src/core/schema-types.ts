// Building blocks for the TypeBox schemas every feature shares: ids, timestamps, nullable fields
// and text a person can see. One definition gives TS types, validation and OpenAPI.
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox'
import { MESSAGE_KEYWORD } from './validation.js'

/** A value of `schema`'s type or null; written as a type list, so errors read "must be an integer or null". */
export function Nullable<T extends TSchema & { type: string }>(schema: T): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] })
}

export function StringEnum<const T extends readonly string[]>(values: T, options: object = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}

// What text may hold, as patterns (so OpenAPI shows the rule and every transport validates with it).
// A person must be able to see a field: a name made only of zero-width spaces, soft hyphens,
// Hangul fillers or braille blanks looks empty, and one with U+202E shows other text than it holds.

/**
 * A character that draws something: not white space, not default-ignorable (U+200B, U+00AD, the
 * joiners, variation selectors, the Hangul fillers U+3164 and U+FFA0, tags…), not a control or
 * format character, not a combining mark on its own, and not U+2800, the braille blank, a symbol
 * that draws nothing. Letters of every script, digits, punctuation, symbols and emoji are.
 */
const VISIBLE = '[^\\p{White_Space}\\p{Default_Ignorable_Code_Point}\\p{Cc}\\p{Cf}\\p{Cs}\\p{M}\\u2800]'
const HOLDS_A_VISIBLE = `(?=[\\s\\S]*?${VISIBLE})`

/**
 * Never in one line: controls (tab and newline among them), the line and paragraph separators
 * U+2028 and U+2029, and the bidirectional embeddings, overrides and isolates U+202A–U+202E and
 * U+2066–U+2069, which reorder the text shown after them ("Trojan Source", CVE-2021-42574). The
 * marks U+200E, U+200F and U+061C stay: mixed-direction names need them, and they reorder nothing
 * outside their own neighbours.
 */
const NOT_IN_A_LINE = '\\p{Cc}\\p{Zl}\\p{Zp}\\u202A-\\u202E\\u2066-\\u2069'

/**
 * Never in any text: NUL (PostgreSQL cannot store it) and unpaired surrogates (the store would
 * turn them into U+FFFD, and a value read back would no longer fit its own limits).
 */
const NOT_IN_TEXT = '\\u0000\\p{Cs}'

/**
 * One line of text (a name, a title, a todo): at least one visible character, nothing that breaks
 * or reorders the line, well-formed.
 */
export function Line(options: { minLength?: number; maxLength: number; description?: string }) {
  return Type.String({
    minLength: options.minLength ?? 1,
    maxLength: options.maxLength,
    pattern: `^${HOLDS_A_VISIBLE}[^${NOT_IN_A_LINE}${NOT_IN_TEXT}]*$`,
    [MESSAGE_KEYWORD]: 'must not be blank or contain control or invalid characters',
    ...(options.description === undefined ? {} : { description: options.description }),
  })
}

/**
 * Text of many lines (a post's or a comment's content): line breaks, tabs and bidirectional
 * controls stay (prose in two directions uses them, and the UBA ends their effect at the end of the
 * paragraph), but the whole must hold a visible character — or, where `mayBeEmpty`, be empty.
 */
export function Prose(options: { minLength?: number; maxLength: number; mayBeEmpty: boolean }) {
  const visibleText = `${HOLDS_A_VISIBLE}[^${NOT_IN_TEXT}]*`
  return Type.String({
    ...(options.minLength === undefined ? {} : { minLength: options.minLength }),
    maxLength: options.maxLength,
    pattern: options.mayBeEmpty ? `^(?:${visibleText})?$` : `^${visibleText}$`,
    [MESSAGE_KEYWORD]: options.mayBeEmpty
      ? 'must be empty or hold a visible character, and not contain NUL or invalid characters'
      : 'must not be blank or contain NUL or invalid characters',
  })
}

export const Id = Type.Integer({ minimum: 1, description: 'Assigned by the service; never reused.' })

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC.' })

/** The id in a path, as text. The services parse it (ids.ts): text that names no row is NOT_FOUND. */
export const IdParam = Type.String({ description: 'A positive integer id.', examples: ['1'] })

// Building blocks for the TypeBox schemas every feature shares: ids, timestamps, nullable fields
// and text without control characters. One definition gives TS types, validation and OpenAPI.
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox'
import { MESSAGE_KEYWORD } from './validation.js'

/** A value of `schema`'s type or null; written as a type list, so errors read "must be an integer or null". */
export function Nullable<T extends TSchema & { type: string }>(schema: T): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] })
}

export function StringEnum<const T extends readonly string[]>(values: T, options: object = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}

/**
 * One line of text: at least one visible character, no control characters, and well-formed
 * (no unpaired surrogate, which the store would turn into U+FFFD).
 */
export function Line(options: { minLength?: number; maxLength: number; description?: string }) {
  return Type.String({
    minLength: options.minLength ?? 1,
    maxLength: options.maxLength,
    pattern: '^(?!\\s*$)[^\\p{Cc}\\p{Cs}]*$',
    [MESSAGE_KEYWORD]: 'must not be blank or contain control or invalid characters',
    ...(options.description === undefined ? {} : { description: options.description }),
  })
}

export const Id = Type.Integer({ minimum: 1, description: 'Assigned by the service; never reused.' })

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC.' })

/** The id in a path, as text. The services parse it (ids.ts): text that names no row is NOT_FOUND. */
export const IdParam = Type.String({ description: 'A positive integer id.', examples: ['1'] })

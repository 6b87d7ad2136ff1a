// Request bodies made from a route's own JSON schema (the TypeBox schema it validates with): values
// that fit it, and then the same values broken in the ways a hostile or careless client breaks them.
// Only the schema keywords the routes use are understood; an unknown one stops the test rather than
// quietly generating something else.
import fc from 'fast-check'

export interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean
  enum?: unknown[]
  format?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  pattern?: string
}

/** A body as it goes on the wire, with what was done to it (shown when a case fails). */
export interface BodyCase {
  payload: string | Buffer
  breakage: string
}

const word = fc.stringMatching(/^[A-Za-z][a-z0-9]{0,11}$/)

/** Text a person might write: words, some beyond ASCII, now and then with spaces around. */
const prose = fc.oneof(
  { weight: 4, arbitrary: fc.array(word, { minLength: 1, maxLength: 4 }).map((words) => words.join(' ')) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom('Zoë', '東京', '🙂 ok', ' padded ', "O'Brien; DROP TABLE users", '%_\\') },
)

function fitted(text: fc.Arbitrary<string>, schema: JsonSchema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0
  const max = schema.maxLength ?? 1000
  return text.map((value) => [...value].slice(0, max).join('').padEnd(min, 'x'))
}

function stringOf(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.enum !== undefined) return fc.constantFrom(...(schema.enum as string[]))
  switch (schema.format) {
    case 'email':
      return fc.tuple(word, fc.nat({ max: 1_000_000 })).map(([local, n]) => `${local.toLowerCase()}.${n}@example.com`)
    case 'uri':
      return word.map((path) => `https://example.com/${path}.png`)
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString())
    case undefined: {
      // Valid means valid: text the schema's own pattern refuses is left out.
      const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, 'u')
      return fitted(prose, schema).filter((text) => pattern === undefined || pattern.test(text))
    }
    default:
      throw new Error(`schema-arbitrary: no generator for format ${schema.format}`)
  }
}

/** Values that fit `schema`; `rarely` keys are left out nineteen times in twenty (a password costs a scrypt). */
export function valueOf(schema: JsonSchema, rarely: readonly string[] = []): fc.Arbitrary<unknown> {
  const types = schema.type === undefined ? [] : ([] as string[]).concat(schema.type)
  if (types.length > 1) return fc.oneof(...types.map((type) => valueOf({ ...schema, type }, rarely)))
  switch (types[0]) {
    case 'object': {
      const required = new Set(schema.required ?? [])
      const entries = Object.entries(schema.properties ?? {}).map(([key, property]) => {
        const value = valueOf(property, rarely)
        if (required.has(key)) return value.map((v) => [[key, v]] as [string, unknown][])
        const presence = rarely.includes(key) ? { withoutWeight: 19, withWeight: 1 } : { withoutWeight: 1, withWeight: 1 }
        return fc.oneof(
          { weight: presence.withoutWeight, arbitrary: fc.constant([] as [string, unknown][]) },
          { weight: presence.withWeight, arbitrary: value.map((v) => [[key, v]] as [string, unknown][]) },
        )
      })
      return fc.tuple(...entries).map((parts) => Object.fromEntries(parts.flat()))
    }
    case 'string':
      return stringOf(schema)
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -(2 ** 31), max: schema.maximum ?? 2 ** 31 - 1 })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    default:
      throw new Error(`schema-arbitrary: no generator for type ${String(schema.type)}`)
  }
}

/** A value of another JSON type than the schema's. */
function wrongTypeFor(schema: JsonSchema): fc.Arbitrary<unknown> {
  const types = new Set(([] as string[]).concat(schema.type ?? []))
  const others: fc.Arbitrary<unknown>[] = []
  if (!types.has('string')) others.push(fc.constantFrom('1', 'true', '', 'null'))
  if (!types.has('integer')) others.push(fc.constantFrom(0, 1, -1, 1.5))
  if (!types.has('boolean')) others.push(fc.boolean())
  if (!types.has('null')) others.push(fc.constant(null))
  others.push(fc.constant([]), fc.constant({}), fc.constant([1, 'a']), fc.constant({ value: 1 }))
  return fc.oneof(...others)
}

const hugeString = fc.constantFrom(10_000, 200_000, 1_500_000).map((n) => 'x'.repeat(n))
const hugeNumber = fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, -(2 ** 63), 2 ** 31, 1e-320, 1.2345678901234568e29)
/** As JSON text: JSON.stringify itself would run out of stack on the deepest. */
const deeplyNested = fc
  .tuple(fc.constantFrom(10, 1000, 20_000, 200_000), fc.boolean())
  .map(([depth, asArray]) => (asArray ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)))
/** Text the store could mishandle: NUL, lone surrogates, direction overrides, blanks, controls. */
const nastyText = fc.constantFrom('a\u0000b', '\u0000', '\ud800', 'x\udfff', '\u202eevil', '   ', '\t', 'a\u0007b', '\r\n', '\ufeff')
const massAssigned = fc.constantFrom(
  'id',
  'userId',
  'authorId',
  'postId',
  'role',
  'createdAt',
  'updatedAt',
  'publishedAt',
  'passwordHash',
  'password_hash',
  'tokenHash',
)

/** `valid` with one field made wrong, left out, or joined by one the schema does not have. */
export function brokenBodyOf(schema: JsonSchema, rarely: readonly string[] = []): fc.Arbitrary<BodyCase> {
  const fields = Object.keys(schema.properties ?? {})
  const field = fc.constantFrom(...fields)
  const valid = valueOf(schema, rarely) as fc.Arbitrary<Record<string, unknown>>
  const set = (name: string, value: fc.Arbitrary<unknown>) =>
    fc.tuple(valid, field, value).map(([body, key, v]) => ({ payload: JSON.stringify({ ...body, [key]: v }), breakage: `${name} at ${key}` }))
  return fc.oneof(
    { weight: 10, arbitrary: valid.map((body) => ({ payload: JSON.stringify(body), breakage: 'none' })) },
    fc
      .tuple(valid, field)
      .chain(([body, key]) =>
        wrongTypeFor(schema.properties?.[key] ?? {}).map((v) => ({ payload: JSON.stringify({ ...body, [key]: v }), breakage: `wrong type at ${key}` })),
      ),
    fc.tuple(valid, field).map(([body, key]) => {
      const rest = { ...body }
      delete rest[key]
      return { payload: JSON.stringify(rest), breakage: `without ${key}` }
    }),
    fc.tuple(valid, fc.oneof(massAssigned, word), fc.oneof(fc.integer(), word, fc.constant('admin'))).map(([body, key, v]) => ({
      payload: JSON.stringify({ ...body, [key]: v }),
      breakage: `extra field ${key}`,
    })),
    set('huge string', hugeString),
    set('huge number', hugeNumber),
    fc.tuple(valid, field, deeplyNested).map(([body, key, nested]) => ({
      payload: JSON.stringify({ ...body, [key]: '@@' }).replace('"@@"', nested),
      breakage: `deep nesting at ${key}`,
    })),
    set('nasty text', nastyText),
    // JSON.stringify drops a __proto__ key, so these are written into the text.
    fc.tuple(valid, fc.constantFrom('"__proto__":{"role":"admin"}', '"constructor":{"prototype":{"role":"admin"}}', '"__proto__":null')).map(([body, key]) => ({
      payload: JSON.stringify(body).replace(/^\{/, `{${key}${Object.keys(body).length > 0 ? ',' : ''}`),
      breakage: `key ${key}`,
    })),
    // Bytes that are not UTF-8 inside a string value (one the schema has, when the body holds one).
    fc.tuple(valid, fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82])).map(([body, bytes]) => {
      const key = Object.keys(body).find((k) => typeof body[k] === 'string' && body[k] !== '') ?? 'zzz'
      const text = JSON.stringify(key === 'zzz' ? { ...body, zzz: 'a' } : body)
      const at = text.indexOf(`${JSON.stringify(key)}:"`) + JSON.stringify(key).length + 2
      return {
        payload: Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at))]),
        breakage: `invalid UTF-8 ${bytes.join(',')} in ${key}`,
      }
    }),
    fc.constantFrom('', 'null', '[]', '"text"', '1', '{', '{"a":1,}', '{"a":1}{"b":2}').map((payload) => ({ payload, breakage: 'not an object' })),
  )
}

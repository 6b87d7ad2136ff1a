// Validation of input against the TypeBox schemas, for every transport: two Ajv instances (bodies
// are checked strictly; query strings and path parameters arrive as text and are coerced) and one
// translation of Ajv's errors into the error body's details.
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats'
import { AppError, type ErrorDetail } from '../errors.js'

/** A schema may carry its own message for a failed `pattern` or `format`. */
export const MESSAGE_KEYWORD = 'x-message'

// ajv-formats is CommonJS: at run time the default import is the plugin itself, which its types
// (written for CommonJS consumers) do not say under NodeNext.
const addFormats = addFormatsModule as unknown as FormatsPlugin

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    allowUnionTypes: true,
    removeAdditional: false,
    verbose: true,
    ...options,
  })
  addFormats(ajv)
  ajv.addKeyword({ keyword: MESSAGE_KEYWORD, schemaType: 'string' })
  return ajv
}

/** JSON bodies: no coercion ("30" is not an integer), no defaults filled in, unknown fields refused by the schemas. */
export const bodyAjv = createAjv({ coerceTypes: false, useDefaults: false })

/** Query strings and path parameters: text coerced to the declared type, defaults filled in. */
export const textAjv = createAjv({ coerceTypes: 'array', useDefaults: true })

/** What each Ajv compiled, by the schema's JSON. */
const compiledBy = new Map<Ajv, Map<string, ValidateFunction>>()

/**
 * `schema` compiled by `ajv`, once per process for every schema alike: Ajv keeps what it compiled
 * by the schema object, and routes build their schemas anew in every app (a create's body, the
 * item or an array of them), so every app built in a process (the test suite builds hundreds)
 * compiled each again. A compiled validator depends on nothing but the schema and the Ajv's options.
 */
export function compileOnce(ajv: Ajv, schema: object): ValidateFunction {
  let compiled = compiledBy.get(ajv)
  if (compiled === undefined) compiledBy.set(ajv, (compiled = new Map<string, ValidateFunction>()))
  const key = JSON.stringify(schema)
  let validate = compiled.get(key)
  if (validate === undefined) compiled.set(key, (validate = ajv.compile(schema)))
  return validate
}

/** Ajv's errors as error-body details: one per field, the first problem found, in plain words. */
export function toErrorDetails(errors: readonly ErrorObject[], unknownField = 'is not a known field'): ErrorDetail[] {
  const byField = new Map<string, string>()
  for (const error of ofTheValuesOwnBranches(errors)) {
    const { field, message } = describe(error, unknownField)
    if (message !== undefined && !byField.has(field)) byField.set(field, message)
  }
  return [...byField].map(([field, message]) => ({ field, message }))
}

/**
 * A value that matches none of a union's branches (`anyOf`) fails each of them: a body that may be
 * one item or an array of items, sent as an array, fails the item's schema for being no object.
 * Where exactly one branch is of the value's own JSON type, only that branch's errors say what is
 * wrong (`[17].title`, not "must be an object"); elsewhere every branch's errors are kept.
 */
function ofTheValuesOwnBranches(errors: readonly ErrorObject[]): readonly ErrorObject[] {
  const passedOver: string[] = []
  const unions = new Set<ErrorObject>()
  for (const error of errors) {
    if (error.keyword !== 'anyOf' || !Array.isArray(error.schema)) continue
    const types = jsonTypesOf(error.data)
    const branches = (error.schema as unknown[]).map((branch) => (branch as { type?: unknown }).type)
    const own = branches.flatMap((type, i) => (typeof type === 'string' && types.includes(type) ? [i] : []))
    if (own.length !== 1) continue
    unions.add(error)
    passedOver.push(...branches.flatMap((_, i) => (i === own[0] ? [] : [`${error.schemaPath}/${i}/`])))
  }
  if (unions.size === 0) return errors
  return errors.filter((error) => !unions.has(error) && !passedOver.some((prefix) => `${error.schemaPath}/`.startsWith(prefix)))
}

/** The JSON Schema types a value is of (an integer is a number too). */
function jsonTypesOf(value: unknown): readonly string[] {
  if (value === null) return ['null']
  if (Array.isArray(value)) return ['array']
  if (typeof value === 'number') return Number.isInteger(value) ? ['integer', 'number'] : ['number']
  return [typeof value]
}

function describe(error: ErrorObject, unknownField: string): { field: string; message: string | undefined } {
  const path = toFieldPath(error.instancePath)
  const params: Record<string, unknown> = error.params
  const custom: unknown = error.parentSchema?.[MESSAGE_KEYWORD]
  switch (error.keyword) {
    case 'required':
      return { field: joinField(path, String(params.missingProperty)), message: 'is required' }
    case 'additionalProperties':
      return { field: joinField(path, String(params.additionalProperty)), message: unknownField }
    case 'type':
      return { field: path, message: `must be ${describeTypes(params.type)}` }
    case 'minLength':
      return { field: path, message: params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters long` }
    case 'maxLength':
      return { field: path, message: `must be at most ${String(params.limit)} characters long` }
    case 'minimum':
      return { field: path, message: `must be at least ${String(params.limit)}` }
    case 'maximum':
      return { field: path, message: `must be at most ${String(params.limit)}` }
    case 'enum':
      return { field: path, message: `must be one of: ${(params.allowedValues as unknown[]).join(', ')}` }
    case 'format':
      return { field: path, message: typeof custom === 'string' ? custom : describeFormat(String(params.format)) }
    case 'pattern':
      return { field: path, message: typeof custom === 'string' ? custom : 'has an invalid format' }
    case 'minProperties':
      return { field: path, message: `must have at least ${String(params.limit)} field(s)` }
    default:
      return { field: path, message: error.message ?? 'is invalid' }
  }
}

/** `/tags/2/name` becomes `tags[2].name`; the root is the empty string. */
function toFieldPath(instancePath: string): string {
  let field = ''
  for (const part of instancePath.split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~')
    field += /^\d+$/.test(key) ? `[${key}]` : field === '' ? key : `.${key}`
  }
  return field
}

function joinField(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
}

function describeTypes(type: unknown): string {
  const types = String(type).split(',')
  return types.map((t) => TYPE_WORDS[t] ?? t).join(' or ')
}

function describeFormat(format: string): string {
  if (format === 'email') return 'must be a valid e-mail address'
  if (format === 'uri') return 'must be an absolute URL'
  if (format === 'date-time') return 'must be an ISO 8601 date-time'
  return `must be a valid ${format}`
}

/** Checks a value against a body schema outside HTTP (CLI, GraphQL); throws VALIDATION_ERROR with details. */
export function assertValid<T>(schema: object, value: unknown): asserts value is T {
  const validate = bodyAjv.compile(schema)
  if (!validate(value)) {
    throw new AppError('VALIDATION_ERROR', 'The input is not valid', toErrorDetails(validate.errors ?? []))
  }
}

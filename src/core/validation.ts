// Validation of input against the TypeBox schemas, for every transport: two Ajv instances (bodies
// are checked strictly; query strings and path parameters arrive as text and are coerced) and one
// translation of Ajv's errors into the error body's details.
import { Ajv, type ErrorObject, type Options } from 'ajv'
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

/** Ajv's errors as error-body details: one per field, the first problem found, in plain words. */
export function toErrorDetails(errors: readonly ErrorObject[], unknownField = 'is not a known field'): ErrorDetail[] {
  const byField = new Map<string, string>()
  for (const error of errors) {
    const { field, message } = describe(error, unknownField)
    if (message !== undefined && !byField.has(field)) byField.set(field, message)
  }
  return [...byField].map(([field, message]) => ({ field, message }))
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

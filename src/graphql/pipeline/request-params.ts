// The parameters of a GraphQL request (GraphQL over HTTP §6): `query`, `variables`,
// `operationName` and `extensions`, from a JSON body or a query string, checked once for every
// transport that takes them over HTTP (POST and GET /graphql, and /graphql/stream). POST and GET
// /graphql also take a persisted query's hash in place of the query (persisted-queries.ts).
import { type DocumentNode, getOperationAST, GraphQLError, type OperationDefinitionNode } from 'graphql'
import { AppError, type ErrorDetail } from '../../errors.js'

export interface OperationParams {
  query: string
  variables: Record<string, unknown> | undefined
  operationName: string | undefined
}

/** A request to POST or GET /graphql: its query, or the hash of one (`extensions.persistedQuery`), or both. */
export interface RequestParams extends Omit<OperationParams, 'query'> {
  /** undefined only when persistedHash is given. */
  query: string | undefined
  /** `extensions.persistedQuery.sha256Hash`, in lower case. */
  persistedHash: string | undefined
}

/** The operation's parameters from a JSON body or a query string; anything else is 400. */
export function readParams(source: unknown, where: 'body' | 'query' | `body[${number}]`): OperationParams {
  const params = readRequestParams(source, where, { persisted: false })
  return { query: params.query as string, variables: params.variables, operationName: params.operationName }
}

/** As readParams, and a persisted query's hash, which may stand in for the query when `persisted`. */
export function readRequestParams(source: unknown, where: 'body' | 'query' | `body[${number}]`, options = { persisted: true }): RequestParams {
  const problems: ErrorDetail[] = []
  const fromQueryString = where === 'query'
  if (typeof source !== 'object' || source === null || Array.isArray(source)) {
    throw new AppError('BAD_REQUEST', `The ${where === 'query' ? 'query string' : where} must be an object with a query`)
  }
  const raw = source as Record<string, unknown>
  const operationName = raw.operationName ?? undefined
  if (operationName !== undefined && typeof operationName !== 'string') problems.push({ field: 'operationName', message: 'must be a string or null' })
  const variables = fromQueryString ? parseJsonParam(raw.variables, 'variables', problems) : (raw.variables ?? undefined)
  if (variables !== undefined && !isPlainObject(variables)) problems.push({ field: 'variables', message: 'must be an object or null' })
  const extensions = fromQueryString ? parseJsonParam(raw.extensions, 'extensions', problems) : (raw.extensions ?? undefined)
  if (extensions !== undefined && !isPlainObject(extensions)) problems.push({ field: 'extensions', message: 'must be an object or null' })
  const persistedHash =
    options.persisted && isPlainObject(extensions) ? readPersistedHash((extensions as { persistedQuery?: unknown }).persistedQuery, problems) : undefined
  const query = raw.query ?? undefined
  if (!(query === undefined && persistedHash !== undefined) && (typeof query !== 'string' || query.trim() === '')) {
    problems.unshift({ field: 'query', message: 'must be a GraphQL document (a string)' })
  }
  if (problems.length > 0) throw new AppError('BAD_REQUEST', 'The GraphQL request is not valid', problems)
  return {
    query: query as string | undefined,
    variables: variables as Record<string, unknown> | undefined,
    operationName: operationName as string | undefined,
    persistedHash,
  }
}

/** `{ version: 1, sha256Hash }`: the hash, lower-cased; undefined when there is no persistedQuery. */
function readPersistedHash(persisted: unknown, problems: ErrorDetail[]): string | undefined {
  if (persisted === undefined || persisted === null) return undefined
  const { version, sha256Hash } = (isPlainObject(persisted) ? persisted : {}) as { version?: unknown; sha256Hash?: unknown }
  if (version !== 1) problems.push({ field: 'extensions.persistedQuery.version', message: 'must be 1' })
  if (typeof sha256Hash !== 'string' || !/^[0-9a-f]{64}$/i.test(sha256Hash)) {
    problems.push({ field: 'extensions.persistedQuery.sha256Hash', message: 'must be a SHA-256 in hexadecimal (64 characters)' })
    return undefined
  }
  return sha256Hash.toLowerCase()
}

function parseJsonParam(value: unknown, field: string, problems: ErrorDetail[]): unknown {
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string') {
    problems.push({ field, message: 'may be given only once' })
    return undefined
  }
  try {
    return JSON.parse(value) ?? undefined
  } catch {
    problems.push({ field, message: 'must be URL-encoded JSON' })
    return undefined
  }
}

const isPlainObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The operation of the document that the request names, or why none can be chosen (in graphql-js's words). */
export function chooseOperation(document: DocumentNode, operationName: string | undefined): OperationDefinitionNode | GraphQLError {
  return (
    getOperationAST(document, operationName) ??
    new GraphQLError(
      operationName === undefined ? 'Must provide operation name if query contains multiple operations.' : `Unknown operation named "${operationName}".`,
    )
  )
}
